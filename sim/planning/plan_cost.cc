#include "sim/planning/plan_cost.h"

#include <cmath>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "hived/config.h"
#include "sim/cluster/spec_edit.h"
#include "sim/cluster/spec_info.h"
#include "sim/common/csv.h"
#include "sim/trace/trace_speed.h"

namespace hived::sim {
namespace {

// The one leaf type of every virtual cell of `vc`; kInvalidArgument when there are several,
// kNotFound for an unknown VC.
absl::StatusOr<std::string> OnlyLeafType(const ClusterSpec& spec, const std::string& vc) {
  const SpecInfo info(spec);
  for (const VirtualClusterSpec& v : spec.virtual_clusters) {
    if (v.name != vc) continue;
    std::string leaf;
    for (const VirtualCellSpec& c : v.virtual_cells) {
      const std::string l = VcLeafType(spec, c.cell_type);
      if (!leaf.empty() && l != leaf) {
        return absl::InvalidArgumentError(
            absl::StrCat("VC ", vc, " reserves GPUs of two types (", leaf, ", ", l,
                         "): a speed-up for moving it is not one number; move it from one type"));
      }
      leaf = l;
    }
    return leaf;
  }
  return absl::NotFoundError(absl::StrCat("no VC '", vc, "' in the config"));
}

}  // namespace

std::optional<double> CostModel::UsdPerHour(const std::string& leaf, int64_t gpus) const {
  for (const auto& [type, usd] : prices) {
    if (type == leaf) return usd * static_cast<double>(gpus);
  }
  return std::nullopt;
}

absl::StatusOr<std::vector<std::pair<std::string, double>>> ParsePrices(const std::string& text) {
  std::vector<std::pair<std::string, double>> out;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    const std::string item(absl::StripAsciiWhitespace(part));
    const size_t eq = item.find('=');
    std::optional<double> usd;
    if (eq != std::string::npos && eq > 0) usd = ParseDouble(item.substr(eq + 1));
    if (!usd || !std::isfinite(*usd) || *usd < 0 || *usd > 1e6) {
      return absl::InvalidArgumentError(
          absl::StrCat("--price: '", item,
                       "' is not TYPE=USD (a GPU leaf type and its price per GPU-hour, "
                       ">= 0, e.g. A100=3.1)"));
    }
    const std::string type = item.substr(0, eq);
    for (const auto& [other, x] : out) {
      if (other == type) {
        return absl::InvalidArgumentError(
            absl::StrCat("--price: '", type, "' is given twice; give it once"));
      }
    }
    out.emplace_back(type, *usd);
  }
  return out;
}

std::string VcLeafType(const ClusterSpec& spec, const std::string& unit_type) {
  const size_t dot = unit_type.rfind('.');
  return SpecInfo(spec).LeafType(dot == std::string::npos ? unit_type : unit_type.substr(dot + 1));
}

absl::StatusOr<std::vector<std::string>> MovedVcSpeeds(
    const CostModel& cost, const ClusterSpec& before, const ClusterSpec& after,
    const std::vector<std::pair<std::string, std::string>>& moves) {
  std::vector<std::string> out;
  for (const auto& [vc, target] : moves) {
    absl::StatusOr<std::string> from = OnlyLeafType(before, vc);
    if (!from.ok()) return from.status();
    absl::StatusOr<std::string> to = OnlyLeafType(after, vc);
    if (!to.ok()) return to.status();
    const double f = SpeedRatio(cost.speeds, *from, *to);
    if (f != 1) out.push_back(absl::StrFormat("%s=%.17g", vc, f));
  }
  return out;
}

absl::StatusOr<TypeChoice> PlanAcrossTypes(const PlanContext& ctx, const CostModel& cost,
                                           const std::string& vc,
                                           const std::vector<std::string>& paths, int64_t min_size,
                                           int64_t max_size) {
  absl::StatusOr<std::string> from = OnlyLeafType(ctx.base, vc);
  if (!from.ok()) return from.status();
  TypeChoice choice;
  for (const std::string& path : paths) {
    TypeOption o;
    o.path = path;
    o.ctx = ctx;
    o.ctx.out = ctx.out / absl::StrCat("type-", path);
    o.ctx.resolved_metric.clear();
    absl::StatusOr<std::string> leaf = MoveVc(&o.ctx.base, vc, path);
    if (!leaf.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--try-types '", path, "': ", leaf.status().message()));
    }
    o.leaf = *leaf;
    o.speed = SpeedRatio(cost.speeds, *from, o.leaf);
    o.ctx.fixed_args.push_back(absl::StrCat("--move-vc=", vc, "=", path));
    if (o.speed != 1) {
      o.ctx.fixed_args.push_back(absl::StrFormat("--vc-speed=%s=%.17g", vc, o.speed));
    }
    absl::StatusOr<VcPlan> plan = PlanOneVc(&o.ctx, vc, path, min_size, max_size);
    if (!plan.ok()) return plan.status();
    o.plan = std::move(*plan);
    if (o.plan.chosen) {
      o.usd_per_hour = cost.UsdPerHour(o.leaf, *o.plan.chosen * o.plan.leaves_per_unit);
    }
    choice.options.push_back(std::move(o));
  }
  // Cheapest meeting: by money when every option has a price, else by GPUs.
  auto key = [&](const TypeOption& o) {
    return o.usd_per_hour ? *o.usd_per_hour
                          : static_cast<double>(*o.plan.chosen * o.plan.leaves_per_unit);
  };
  for (size_t i = 0; i < choice.options.size(); ++i) {
    const TypeOption& o = choice.options[i];
    if (!o.plan.chosen || !o.plan.skipped.empty()) continue;
    if (choice.best < 0 || key(o) < key(choice.options[static_cast<size_t>(choice.best)])) {
      choice.best = static_cast<int>(i);
    }
  }
  return choice;
}

std::string TypeChoiceReport(const PlanContext& ctx, const std::string& vc,
                             const TypeChoice& choice) {
  std::string out = absl::StrFormat("VC %s on each --try-types type, target %s, cheapest first:\n",
                                    vc, ctx.target.text);
  out += absl::StrFormat("  %-28s %6s %6s %6s %12s %14s\n", "type", "speed", "size", "GPUs",
                         "USD/h", "metric");
  std::vector<size_t> order;
  for (size_t i = 0; i < choice.options.size(); ++i) order.push_back(i);
  auto cost_of = [&](size_t i) {
    const TypeOption& o = choice.options[i];
    if (!o.plan.chosen) return 1e300;
    return o.usd_per_hour ? *o.usd_per_hour
                          : static_cast<double>(*o.plan.chosen * o.plan.leaves_per_unit);
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return cost_of(a) < cost_of(b); });
  for (size_t i : order) {
    const TypeOption& o = choice.options[i];
    const std::string metric = o.ctx.resolved_metric;
    if (!o.plan.chosen) {
      out += absl::StrFormat("  %-28s %6.3g %6s %6s %12s %14s\n", o.path, o.speed, "-", "-", "-",
                             o.plan.skipped.empty() ? "no size meets" : "skipped");
      continue;
    }
    const PlanProbe& p = o.plan.probes.at(*o.plan.chosen);
    out += absl::StrFormat(
        "  %-28s %6.3g %6d %6d %12s %14s%s\n", o.path, o.speed, *o.plan.chosen,
        *o.plan.chosen * o.plan.leaves_per_unit,
        o.usd_per_hour ? absl::StrFormat("%.2f", *o.usd_per_hour) : std::string("-"),
        p.value ? ShowValue(metric, *p.value) : "-",
        static_cast<int>(i) == choice.best ? "  <- cheapest meeting" : "");
  }
  if (choice.best < 0) out += "  no type meets the target\n";
  return out;
}

std::string CostLine(const CostModel& cost, const std::string& leaf, int64_t gpus,
                     int64_t now_gpus) {
  if (cost.prices.empty()) return "";
  const std::optional<double> price = cost.UsdPerHour(leaf, 1);
  if (!price) return absl::StrFormat("  cost: no --price for GPU type %s\n", leaf);
  const double usd = *price * static_cast<double>(gpus);
  const double now = *price * static_cast<double>(now_gpus);
  return absl::StrFormat(
      "  cost: %d %s GPUs x $%.2f/GPU-h = $%.2f/h, $%.0f/month of 730 h (now %d GPUs: "
      "$%.2f/h; change %+.2f/h)\n",
      gpus, leaf, *price, usd, usd * 730, now_gpus, now, usd - now);
}

namespace {

bool HoldsPin(const PhysicalCellSpec& cell, const std::string& id) {
  if (cell.pinned_cell_id == id) return true;
  for (const PhysicalCellSpec& c : cell.cell_children) {
    if (HoldsPin(c, id)) return true;
  }
  return false;
}

}  // namespace

// --price: each VC's reserved GPUs by leaf type in `config` (virtual cells, and pinned
// cells by the chain holding them), or an error naming the config.
absl::StatusOr<std::map<std::string, std::map<std::string, int64_t>>> VcGpusByType(
    const std::string& config) {
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecFile(config);
  if (!spec.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--price needs the config each run used, and ",
                                                   config,
                                                   " does not load: ", spec.status().message()));
  }
  const SpecInfo info(*spec);
  std::map<std::string, std::map<std::string, int64_t>> out;
  for (const VirtualClusterSpec& v : spec->virtual_clusters) {
    std::map<std::string, int64_t>& by_type = out[v.name];
    for (const VirtualCellSpec& c : v.virtual_cells) {
      const size_t dot = c.cell_type.rfind('.');
      by_type[VcLeafType(*spec, c.cell_type)] +=
          info.LeafCount(dot == std::string::npos ? c.cell_type : c.cell_type.substr(dot + 1)) *
          c.cell_number;
    }
    for (const PinnedCellSpec& pin : v.pinned_cells) {
      for (const PhysicalCellSpec& top : spec->physical_cells) {
        if (HoldsPin(top, pin.pinned_cell_id)) {
          by_type[info.LeafType(top.cell_type)] += info.PinnedGpus(pin.pinned_cell_id);
          break;
        }
      }
    }
  }
  return out;
}

}  // namespace hived::sim

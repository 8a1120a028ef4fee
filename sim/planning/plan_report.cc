// sim/planning/plan_report.cc: the report, the CSV rows and the chart of one VC's plan.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/common/csv.h"
#include "sim/planning/plan_search.h"
#include "sim/planning/sweep.h"
#include "sim/planning/sweep_runner.h"

namespace hived::sim {
namespace {

bool IsTimeMetric(const std::string& m) {
  for (const char* word : {"delay", "wait", "jct", "anomaly"}) {
    if (m.find(word) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

std::string ShowValue(const std::string& metric, double v) {
  if (IsTimeMetric(metric)) return absl::StrFormat("%.3f h", v / 3600);
  return absl::StrFormat("%.4g", v);
}

std::string PlanReport(const PlanContext& ctx, const VcPlan& plan) {
  const std::string& m = ctx.resolved_metric;
  std::string out = absl::StrFormat(
      "VC %s: target %s (metric %s), size in '%s' cells (%d GPUs each), now %d\n", plan.vc,
      ctx.target.text, m, plan.current.unit_type, plan.leaves_per_unit, plan.current.units);
  const int width = static_cast<int>(std::max<size_t>(m.size(), 12));
  out += absl::StrFormat("  %6s %7s %*s %9s %6s\n", "size", "GPUs", width, m, "rejected", "meets");
  for (const auto& [size, p] : plan.probes) {
    out +=
        absl::StrFormat("  %6d %7d %14s %9d %6s%s\n", size, size * plan.leaves_per_unit,
                        p.value ? ShowValue(m, *p.value) : "-", p.rejected, p.meets ? "yes" : "no",
                        plan.chosen && *plan.chosen == size ? "  <- chosen" : "");
  }
  if (plan.chosen) {
    const PlanProbe& p = plan.probes.at(*plan.chosen);
    const double margin = p.value ? std::abs(ctx.target.value - *p.value) : 0;
    out += absl::StrFormat("  chosen: %d cells (%d GPUs; now %d): %s = %s, margin %s\n",
                           *plan.chosen, *plan.chosen * plan.leaves_per_unit, plan.current.units, m,
                           p.value ? ShowValue(m, *p.value) : "-", ShowValue(m, margin));
  } else {
    const PlanProbe* best = nullptr;
    for (const auto& [size, p] : plan.probes) {
      if (!p.value) continue;
      const bool better = best == nullptr || (ctx.target.op == PlanTarget::Op::kLe ||
                                                      ctx.target.op == PlanTarget::Op::kLt
                                                  ? *p.value < *best->value
                                                  : *p.value > *best->value);
      if (better) best = &p;
    }
    out += absl::StrFormat("  NO size in [%d, %d] meets %s for VC %s", plan.probes.begin()->first,
                           plan.probes.rbegin()->first, ctx.target.text, plan.vc);
    if (plan.cap > 0) {
      out += absl::StrFormat(" (the range widened by doubling; cap %d cells = 4 x the cluster)",
                             plan.cap);
    }
    if (best) {
      out += absl::StrFormat("; the best reachable is %s = %s at %d cells", m,
                             ShowValue(m, *best->value), best->size);
    }
    out += "\n";
    const PlanProbe& top = plan.probes.rbegin()->second;
    if (top.rejected > 0) {
      out += absl::StrFormat(
          "  %d job(s) of %s are rejected even at %d cells (larger than the VC can hold); "
          "see %s/out/summary.json (rejection_reasons)\n",
          top.rejected, plan.vc, top.size, top.dir);
    }
  }
  out += plan.notes;
  return out;
}

// The metric against size, with the target as a line; a warning when gnuplot is missing.
void PlanChart(const PlanContext& ctx, const VcPlan& plan) {
  const bool hours = IsTimeMetric(ctx.resolved_metric);
  const double k = hours ? 1 / 3600.0 : 1;
  const std::string name = absl::StrCat("plan-", plan.vc);
  // Values spanning more than 50x the target go on a log axis, floored at target / 100
  // (a zero wait has no logarithm).
  double top = 0;
  for (const auto& [size, p] : plan.probes) top = std::max(top, p.value.value_or(0));
  const double floor = ctx.target.value / 100;
  const bool log_axis = ctx.target.value > 0 && top > 50 * ctx.target.value;
  std::string data = "# size value meets\n";
  for (const auto& [size, p] : plan.probes) {
    if (!p.value) continue;
    const double v = log_axis ? std::max(*p.value, floor) : *p.value;
    absl::StrAppend(&data, size, " ", v * k, " ", p.meets ? 1 : 0, "\n");
  }
  std::string script = absl::StrCat(
      "set terminal pngcairo size 800,500\nset output ", GnuplotQuote(name + ".png"), "\n",
      // The log axis's note goes in a second title line: inside the plot it ran into the
      // points at the floor.
      "set title ",
      GnuplotQuote(absl::StrCat("VC ", plan.vc, ": ", ctx.target.text,
                                log_axis ? "\\nlog scale; values below target/100 drawn at "
                                           "target/100"
                                         : "")),
      "\n", "set xlabel ", GnuplotQuote(absl::StrCat("size (", plan.current.unit_type, " cells)")),
      "\n", "set ylabel ", GnuplotQuote(absl::StrCat(ctx.resolved_metric, hours ? " (hours)" : "")),
      "\n", "set termoption noenhanced\nset key top right\nset grid\n",
      // The floor a third of the way up the lowest decade, so points on it are not cut by
      // the axis.
      log_axis
          ? absl::StrCat("set logscale y\nset format y '%g'\nset yrange [", floor * k / 3, ":*]\n")
          : std::string("set yrange [0:*]\n"),
      "set offsets graph 0.03, graph 0.03, graph 0.08, 0\n",
      plan.probes.rbegin()->first - plan.probes.begin()->first <= 20 ? "set xtics 1\n" : "");
  if (plan.chosen) {
    absl::StrAppend(&script, "set arrow from ", *plan.chosen, ", graph 0 to ", *plan.chosen,
                    ", graph 1 nohead dt 3 lc rgb 'dark-green'\n");
  }
  // The chosen size's line (an arrow) gets its legend entry from an empty line of its style.
  absl::StrAppend(&script, "plot ", GnuplotQuote(name + ".dat"),
                  " using 1:2 with linespoints pt 7 title 'probes', ", ctx.target.value * k,
                  " with lines dt 2 lc rgb 'red' title 'target'",
                  plan.chosen ? absl::StrCat(", NaN with lines dt 3 lc rgb 'dark-green' title "
                                             "'chosen size (",
                                             *plan.chosen, ")'")
                              : std::string(),
                  "\n");
  if (absl::Status s = RenderGnuplot(ctx.out.string(), name, data, script); !s.ok()) {
    std::fprintf(stderr, "hived-sim plan: no chart: %s\n", std::string(s.message()).c_str());
  }
}

std::string ReportCsvRows(const PlanContext& ctx, const VcPlan& plan) {
  std::string out;
  for (const auto& [size, p] : plan.probes) {
    absl::StrAppend(&out, CsvQuote(plan.vc), ",", size, ",", size * plan.leaves_per_unit, ",",
                    CsvQuote(ctx.resolved_metric), ",",
                    p.value ? absl::StrFormat("%.10g", *p.value) : "", ",", p.rejected, ",",
                    p.meets ? 1 : 0, ",", plan.chosen && *plan.chosen == size ? 1 : 0, "\n");
  }
  return out;
}

}  // namespace hived::sim

#include "sim/planning/plan_search.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "hived/config.h"
#include "sim/cluster/spec_edit.h"
#include "sim/cluster/spec_info.h"
#include "sim/common/csv.h"
#include "sim/planning/sweep.h"
#include "sim/planning/sweep_runner.h"
#include "sim/trace/trace_reader.h"

namespace hived::sim {
namespace {

namespace fs = std::filesystem;

absl::StatusOr<ClusterSpec> SizedSpec(const ClusterSpec& base, const std::string& vc,
                                      const std::string& unit_type, int64_t size) {
  ClusterSpec spec = base;
  if (absl::Status s = SetVcUnits(&spec, vc, unit_type, size); !s.ok()) return s;
  if (absl::Status s = FitPhysicalCluster(&spec); !s.ok()) return s;
  return spec;
}

}  // namespace

// A plan killed while it ran leaves no summary.json, or one a later check rejects.
std::string SkippedText(const PlanContext& ctx, const VcPlan& plan) {
  return absl::StrFormat(
      "  SKIPPED: %s of VC %s rests on %d job(s), fewer than --min-jobs %d (a percentile over "
      "so few jobs is nearly their maximum); the VC keeps its size. Lower --min-jobs to size "
      "it anyway.\n",
      ctx.resolved_metric, plan.vc, plan.jobs, ctx.min_jobs);
}

bool WidenedToPlateau(VcPlan* plan, int64_t from, int64_t to) {
  const PlanProbe& was = plan->probes.at(from);
  const PlanProbe& now = plan->probes.at(to);
  if (now.meets || now.value != was.value || now.rejected != was.rejected) return false;
  plan->notes += absl::StrFormat(
      "note: doubling the size from %d to %d changed nothing (%s); the search stopped "
      "widening there\n",
      was.size, now.size,
      now.value ? absl::StrFormat("%.6g", *now.value) : std::string("no value"));
  return true;
}

void NoteNonMonotone(VcPlan* plan) {
  std::vector<std::string> odd;
  for (const auto& [size, p] : plan->probes) {
    if (plan->chosen && ((size > *plan->chosen && !p.meets) || (size < *plan->chosen && p.meets))) {
      odd.push_back(absl::StrCat(size));
    }
  }
  if (!odd.empty()) {
    plan->notes += absl::StrCat("note: the target is not monotone in size here (probes at ",
                                absl::StrJoin(odd, ", "),
                                " disagree with the answer); the answer is the smallest "
                                "meeting size the search reached\n");
  }
}

void NarrowBracket(const std::map<int64_t, PlanProbe>& probes, const std::vector<int64_t>& sizes,
                   int64_t* lo, int64_t* hi) {
  int64_t new_hi = *hi;
  for (int64_t s : sizes) {
    if (probes.at(s).meets) {
      new_hi = s;
      break;
    }
  }
  int64_t new_lo = *lo;
  for (int64_t s : sizes) {
    if (s < new_hi && !probes.at(s).meets) new_lo = s;
  }
  *lo = new_lo;
  *hi = new_hi;
}

absl::StatusOr<ChildRun> PrepareProbe(const PlanContext& ctx, const fs::path& dir,
                                      const std::string& config, const std::string& label,
                                      bool* reused) {
  ChildRun c;
  c.args = {"run", "--trace", ctx.trace, "--format", ctx.format, "--quiet"};
  c.args.insert(c.args.end(), ctx.fixed_args.begin(), ctx.fixed_args.end());
  c.args.insert(c.args.end(),
                {"--config", (dir / "config.yaml").string(), "--out", (dir / "out").string()});
  c.dir = dir.string();
  c.label = label;
  const std::string args = absl::StrCat(absl::StrJoin(c.args, "\n"), "\n");
  if (reused != nullptr) {
    *reused = ctx.resume && ReusableProbe(dir, config, args);
    if (*reused) return c;
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir, ec);
  if (absl::Status s = WriteFileAtomically((dir / "config.yaml").string(), config); !s.ok()) {
    return s;
  }
  if (absl::Status s = WriteFileAtomically((dir / "args.txt").string(), args); !s.ok()) return s;
  return c;
}

bool ReusableProbe(const fs::path& dir, const std::string& config, const std::string& args) {
  std::string have_config, have_args, summary;
  return ReadFileToString((dir / "config.yaml").string(), &have_config).ok() &&
         have_config == config && ReadFileToString((dir / "args.txt").string(), &have_args).ok() &&
         have_args == args &&
         ReadFileToString((dir / "out" / "summary.json").string(), &summary).ok() &&
         !summary.empty();
}

namespace {

// Runs the probes of `sizes` (in parallel) and adds them to `probes`.
absl::Status RunProbes(PlanContext* ctx, const std::string& vc, const std::string& unit_type,
                       const std::vector<int64_t>& sizes, std::map<int64_t, PlanProbe>* probes) {
  std::vector<ChildRun> children;
  std::vector<int64_t> todo;
  for (int64_t size : sizes) {
    if (probes->count(size)) continue;
    absl::StatusOr<ClusterSpec> spec = SizedSpec(ctx->base, vc, unit_type, size);
    if (!spec.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("VC ", vc, " at ", size, ": ", spec.status().message()));
    }
    const fs::path dir = ctx->out / "probes" / vc / absl::StrCat(size);
    const std::string config = ClusterSpecToYaml(*spec);
    const std::string label = absl::StrCat("probe of VC ", vc, " at ", size);
    bool reused = false;
    absl::StatusOr<ChildRun> c = PrepareProbe(*ctx, dir, config, label, &reused);
    if (!c.ok()) return c.status();
    if (reused) {
      PlanProbe p;
      p.size = size;
      p.dir = dir.string();
      if (ReadProbe(ctx, vc, &p).ok()) {
        (*probes)[size] = p;
        ++ctx->reused;
        continue;
      }
      // Finished but unreadable for this VC: run it again.
      if (c = PrepareProbe(*ctx, dir, config, label, nullptr); !c.ok()) return c.status();
    }
    children.push_back(std::move(*c));
    todo.push_back(size);
  }
  absl::Status ran = RunChildren(ctx->exe, children, ctx->jobs, absl::StrCat("plan ", vc));
  if (!ran.ok()) return ran;
  for (size_t i = 0; i < todo.size(); ++i) {
    PlanProbe p;
    p.size = todo[i];
    p.dir = children[i].dir;
    if (absl::Status s = ReadProbe(ctx, vc, &p); !s.ok()) return s;
    // The bulky per-job files are not needed (plan removes the probes' jobs.csv but the
    // chosen one's, which its heatmap reads, at the end).
    std::error_code ec;
    fs::remove(fs::path(p.dir) / "out" / "baseline-private" / "jobs.csv", ec);
    for (const char* f : {"timeline.csv"}) {
      fs::remove(fs::path(p.dir) / "out" / f, ec);
      fs::remove(fs::path(p.dir) / "out" / "baseline-private" / f, ec);
    }
    (*probes)[p.size] = p;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ReadProbe(PlanContext* ctx, const std::string& vc, PlanProbe* p) {
  const std::string file = (fs::path(p->dir) / "out" / "summary.json").string();
  std::string text;
  if (absl::Status s = ReadFileToString(file, &text); !s.ok()) return s;
  absl::StatusOr<std::vector<SweepRow>> rows = RowsFromSummary(text, file, 0, {});
  if (!rows.ok()) return rows.status();
  const SweepRow* row = nullptr;
  for (size_t i = 1; i < rows->size() && row == nullptr; ++i) {  // row 0 is "all"
    if ((*rows)[i].vc == vc) row = &(*rows)[i];
  }
  if (row == nullptr) return absl::InternalError(absl::StrCat(file, ": no row for VC ", vc));
  if (ctx->resolved_metric.empty()) {
    std::vector<std::string> names;
    for (const auto& [k, v] : row->metrics) names.push_back(k);
    const std::optional<std::string> m = ResolveMetric(ctx->target.metric, names);
    if (!m && ctx->target.metric == "slo_attainment") {
      std::vector<int64_t> seconds;
      for (const std::string& n : names) {
        if (absl::StartsWith(n, "slo[") && absl::EndsWith(n, "].share")) {
          if (std::optional<int64_t> s = ParseInt(n.substr(4, n.size() - 11)))
            seconds.push_back(*s);
        }
      }
      std::sort(seconds.begin(), seconds.end());
      std::vector<std::string> thresholds;
      for (int64_t s : seconds) thresholds.push_back(absl::StrCat(s, " s"));
      return absl::InvalidArgumentError(absl::StrCat(
          "--target '", ctx->target.text,
          "': slo_attainment needs one wait threshold, and the "
          "probes measure ",
          thresholds.empty() ? "none" : absl::StrJoin(thresholds, ", "),
          "; name it, e.g. slo_attainment@1h>=95% (the share of the VC's jobs waiting at most "
          "1 h)"));
    }
    if (!m) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--target '", ctx->target.text, "': no per-VC metric '", ctx->target.metric,
          "' in the summary; available: p95_wait, mean_wait, anomaly, slo_attainment@T (the share "
          "of jobs waiting at most T), ",
          absl::StrJoin(names, ", ")));
    }
    ctx->resolved_metric = *m;
  }
  auto it = row->metrics.find(ctx->resolved_metric);
  if (it != row->metrics.end()) p->value = ParseDouble(it->second);
  // The jobs behind the metric: its group's count (queuing_delay.p95 -> queuing_delay.count,
  // slo[T].share -> slo[T].jobs), else the VC's measured jobs.
  const std::string& m = ctx->resolved_metric;
  const size_t dot = m.find_last_of('.');
  for (const std::string& key :
       {dot == std::string::npos ? std::string() : m.substr(0, dot) + ".count",
        dot == std::string::npos ? std::string() : m.substr(0, dot) + ".jobs",
        std::string("queuing_delay.count"), std::string("measured")}) {
    auto c = row->metrics.find(key);
    if (c == row->metrics.end()) continue;
    if (std::optional<int64_t> n = ParseInt(c->second)) {
      p->jobs = *n;
      break;
    }
  }
  auto rej = row->metrics.find("rejected");
  if (rej != row->metrics.end()) p->rejected = ParseInt(rej->second).value_or(0);
  p->meets = p->value.has_value() && ctx->target.Meets(*p->value) && p->rejected == 0;
  return absl::OkStatus();
}

absl::StatusOr<VcPlan> PlanOneVc(PlanContext* ctx, const std::string& vc,
                                 const std::string& cell_type, int64_t min_size, int64_t max_size) {
  VcPlan plan;
  plan.vc = vc;
  absl::StatusOr<VcUnits> current = GetVcUnits(ctx->base, vc, cell_type);
  if (!current.ok()) return current.status();
  plan.current = *current;
  if (ctx->new_vcs.count(vc) > 0) plan.current.units = 0;
  const std::vector<std::string> path = absl::StrSplit(current->unit_type, '.');
  plan.leaves_per_unit = SpecInfo(ctx->base).LeafCount(path.back());
  const int64_t lo_bound = std::max<int64_t>(min_size, 1);
  int64_t hi_bound = max_size > 0
                         ? max_size
                         : std::max<int64_t>({4 * current->units, current->units + 4, 4, lo_bound});
  if (hi_bound < lo_bound) {
    return absl::InvalidArgumentError(absl::StrCat("--max ", hi_bound, " < --min ", lo_bound));
  }
  std::vector<int64_t> first{lo_bound};
  if (hi_bound != lo_bound) first.push_back(hi_bound);
  if (absl::Status s = RunProbes(ctx, vc, current->unit_type, first, &plan.probes); !s.ok()) {
    return s;
  }
  // Too few jobs behind the metric: report and skip (a p95 over 8 jobs is their maximum).
  plan.jobs = plan.probes[lo_bound].jobs;
  if (plan.jobs < ctx->min_jobs) {
    plan.skipped = SkippedText(*ctx, plan);
    return plan;
  }
  // No --max: widen by doubling while the top fails, up to the cap (the whole cluster x4 in
  // this unit), stopping early when doubling changes nothing (a plateau no size passes).
  if (max_size == 0 && !plan.probes[lo_bound].meets) {
    plan.cap = std::max<int64_t>(hi_bound,
                                 (4 * SpecInfo(ctx->base).TotalGpus() + plan.leaves_per_unit - 1) /
                                     std::max<int64_t>(plan.leaves_per_unit, 1));
    while (!plan.probes[hi_bound].meets && hi_bound < plan.cap) {
      const int64_t next = std::min(2 * hi_bound, plan.cap);
      if (absl::Status s = RunProbes(ctx, vc, current->unit_type, {next}, &plan.probes); !s.ok()) {
        return s;
      }
      const bool plateau = WidenedToPlateau(&plan, hi_bound, next);
      hi_bound = next;
      if (plateau) break;
    }
  }
  if (plan.probes[lo_bound].meets) {
    plan.chosen = lo_bound;
  } else if (plan.probes[hi_bound].meets) {
    int64_t lo = lo_bound, hi = hi_bound;
    while (hi - lo > 1) {
      const std::vector<int64_t> sizes = NextProbeSizes(lo, hi, ctx->jobs);
      if (absl::Status s = RunProbes(ctx, vc, current->unit_type, sizes, &plan.probes); !s.ok()) {
        return s;
      }
      NarrowBracket(plan.probes, sizes, &lo, &hi);
    }
    plan.chosen = hi;
  }
  NoteNonMonotone(&plan);
  return plan;
}

}  // namespace hived::sim

// Checks of a plan's answer: the confirmation replay of `plan --all-vcs`'s sized config, and
// `plan --resamples N`, how sure the sizes are: the sized config replayed on N resampled
// traces (a block bootstrap, sim/trace/trace_growth.h), each VC's metric at its chosen size
// read from every resample.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "hived/config.h"
#include "sim/planning/plan_output.h"
#include "sim/planning/plan_search.h"
#include "sim/planning/sweep_runner.h"

namespace hived::sim {

namespace fs = std::filesystem;

absl::StatusOr<std::string> ConfirmSized(PlanContext* ctx, const std::string& sized_path,
                                         const std::vector<std::string>& vcs,
                                         const std::vector<std::string>& skipped,
                                         const std::map<std::string, VcPlan>& joint_plans,
                                         bool* all_met) {
  // One replay of the whole sized config: each VC was sized with the others unchanged.
  const fs::path dir = ctx->out / "confirm";
  ChildRun c;
  c.args = {"run", "--trace", ctx->trace, "--format", ctx->format, "--quiet"};
  c.args.insert(c.args.end(), ctx->fixed_args.begin(), ctx->fixed_args.end());
  c.args.insert(c.args.end(), {"--config", sized_path, "--out", (dir / "out").string()});
  c.dir = dir.string();
  c.label = "the confirmation replay of the sized config";
  std::string confirm = "confirmation replay of the sized config (every VC at its size):\n";
  bool dependent = false;
  if (absl::Status s = RunChildren(ctx->exe, {c}, 1, "confirm"); !s.ok()) return s;
  for (const std::string& name : vcs) {
    if (std::find(skipped.begin(), skipped.end(), name) != skipped.end()) continue;
    PlanProbe probe;
    probe.dir = dir.string();
    if (absl::Status s = ReadProbe(ctx, name, &probe); !s.ok()) return s;
    absl::StrAppend(&confirm, "  ", name, ": ", ctx->resolved_metric, " = ",
                    probe.value ? ShowValue(ctx->resolved_metric, *probe.value) : "-",
                    probe.meets ? " (meets)" : " (MISSES the target)");
    if (auto it = joint_plans.find(name);
        it != joint_plans.end() && it->second.chosen &&
        it->second.probes.count(*it->second.chosen) > 0 &&
        it->second.probes.at(*it->second.chosen).value != probe.value) {
      absl::StrAppend(&confirm, " (differs from its probe)");
      dependent = true;
    }
    absl::StrAppend(&confirm, "\n");
    *all_met &= probe.meets;
  }
  if (dependent) {
    absl::StrAppend(&confirm,
                    "warning: the VCs were sized in joint rounds, which assumes a VC's metric "
                    "depends only on its own size; here it does not: rerun with --one-by-one\n");
  }
  return confirm;
}

std::vector<std::string> ResampleArgs(const std::vector<std::string>& fixed_args,
                                      const std::string& unit, int64_t seed) {
  std::vector<std::string> out;
  bool has_bootstrap = false;
  for (const std::string& a : fixed_args) {
    if (absl::StartsWith(a, "--seed=")) continue;
    has_bootstrap |= absl::StartsWith(a, "--bootstrap=");
    out.push_back(a);
  }
  if (!has_bootstrap) out.push_back(absl::StrCat("--bootstrap=", unit));
  out.push_back(absl::StrCat("--seed=", seed));
  return out;
}

absl::StatusOr<std::vector<VcSureness>> ReplayResamples(PlanContext* ctx,
                                                        const std::string& sized_config,
                                                        const std::vector<std::string>& vcs,
                                                        int64_t resamples, const std::string& unit,
                                                        int64_t seed) {
  std::vector<ChildRun> children;
  std::vector<bool> reused;
  PlanContext resample_ctx = *ctx;
  for (int64_t i = 1; i <= resamples; ++i) {
    resample_ctx.fixed_args = ResampleArgs(ctx->fixed_args, unit, seed + i);
    const fs::path dir = ctx->out / "resamples" / absl::StrFormat("%04d", i);
    bool was_reused = false;
    absl::StatusOr<ChildRun> c = PrepareProbe(
        resample_ctx, dir, sized_config,
        absl::StrCat("the sized config on resampled trace ", i, " (seed ", seed + i, ")"),
        &was_reused);
    if (!c.ok()) return c.status();
    children.push_back(std::move(*c));
    reused.push_back(was_reused);
  }
  std::vector<ChildRun> todo;
  for (size_t i = 0; i < children.size(); ++i) {
    if (!reused[i]) todo.push_back(children[i]);
  }
  ctx->reused += static_cast<int64_t>(children.size() - todo.size());
  if (absl::Status s = RunChildren(ctx->exe, todo, ctx->jobs, "plan resamples"); !s.ok()) return s;
  std::vector<VcSureness> out;
  for (const std::string& vc : vcs) {
    VcSureness s;
    s.vc = vc;
    for (size_t i = 0; i < children.size(); ++i) {
      PlanProbe p;
      p.dir = children[i].dir;
      if (absl::Status st = ReadProbe(ctx, vc, &p); !st.ok()) return st;
      s.values.push_back(p.value);
      s.met += p.meets ? 1 : 0;
      if (!p.meets) s.missed_seeds.push_back(seed + 1 + static_cast<int64_t>(i));
      ++s.n;
    }
    out.push_back(std::move(s));
  }
  for (const ChildRun& c : children) {  // the bulky per-job files are not needed
    std::error_code ec;
    for (const char* f : {"jobs.csv", "timeline.csv"}) fs::remove(fs::path(c.dir) / "out" / f, ec);
  }
  return out;
}

std::optional<double> SurenessLevel(const PlanTarget& target, const VcSureness& s) {
  std::vector<double> v;
  for (const std::optional<double>& x : s.values) {
    if (!x) return std::nullopt;  // a resample without the metric: no level
    v.push_back(*x);
  }
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  // Nearest rank: the value 95% of the resamples do at least as well as.
  const size_t rank = static_cast<size_t>(std::ceil(0.95 * static_cast<double>(v.size())));
  const bool upper = target.op == PlanTarget::Op::kLe || target.op == PlanTarget::Op::kLt;
  return upper ? v[rank - 1] : v[v.size() - rank];
}

std::string SurenessShare(const VcSureness& s) {
  return absl::StrFormat(
      "%d of %d (%.0f%%)", s.met, s.n,
      s.n > 0 ? 100.0 * static_cast<double>(s.met) / static_cast<double>(s.n) : 0.0);
}

std::string SurenessReport(const PlanContext& ctx, const std::vector<VcSureness>& sure,
                           const std::string& unit, int64_t seed) {
  if (sure.empty()) return "";
  const int64_t n = sure.front().n;
  std::string out = absl::StrFormat(
      "how sure: the sized config replayed on %d resampled traces (--bootstrap %s, seeds "
      "%d-%d); per VC, at its size in sized.yaml, the resamples meeting %s and the %s\n",
      n, unit, seed + 1, seed + n, ctx.target.text,
      ctx.target.op == PlanTarget::Op::kLe || ctx.target.op == PlanTarget::Op::kLt
          ? "95th percentile of the metric over them (95% of resamples are at or below it)"
          : "5th percentile of the metric over them (95% of resamples are at or above it)");
  absl::StrAppendFormat(&out, "  %-12s %-18s %16s  %s\n", "VC", "meets in", "95% level", "verdict");
  bool any_unsure = false;
  for (const VcSureness& s : sure) {
    const std::optional<double> level = SurenessLevel(ctx.target, s);
    const bool all = s.met == s.n;
    any_unsure |= !all;
    absl::StrAppendFormat(&out, "  %-12s %-18s %16s  %s\n", s.vc, SurenessShare(s),
                          level ? ShowValue(ctx.resolved_metric, *level) : "-",
                          all                      ? "meets in every resample"
                          : s.met * 20 >= s.n * 19 ? "95% sure"
                                                   : "NOT 95% sure");
  }
  for (const VcSureness& s : sure) {
    if (s.missed_seeds.empty()) continue;
    absl::StrAppend(&out, "  ", s.vc, " misses with seed(s) ", absl::StrJoin(s.missed_seeds, ", "),
                    "\n");
  }
  if (any_unsure) {
    absl::StrAppend(&out,
                    "  a VC that misses in some resamples needs more to be sure: plan it on one "
                    "of them (--bootstrap ",
                    unit, " --seed S) or aim lower\n");
  }
  return out;
}

absl::StatusOr<std::string> ResampleSection(PlanContext* ctx, const ClusterSpec& sized,
                                            const std::vector<std::string>& vcs, int64_t resamples,
                                            const std::string& unit, int64_t seed,
                                            std::vector<PlanMdRow>* rows) {
  if (resamples <= 0 || vcs.empty()) return std::string();
  absl::StatusOr<std::vector<VcSureness>> sure =
      ReplayResamples(ctx, ClusterSpecToYaml(sized), vcs, resamples, unit, seed);
  if (!sure.ok()) return sure.status();
  for (const VcSureness& s : *sure) {
    for (PlanMdRow& row : *rows) {
      if (row.vc != s.vc) continue;
      const std::optional<double> level = SurenessLevel(ctx->target, s);
      row.sure = absl::StrCat(SurenessShare(s),
                              "; 95%: ", level ? ShowValue(ctx->resolved_metric, *level) : "-");
    }
  }
  return SurenessReport(*ctx, *sure, unit, seed);
}

}  // namespace hived::sim

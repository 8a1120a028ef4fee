// sim/planning/plan_joint.cc: `plan --all-vcs` in joint rounds (sim/planning/plan_search.h,
// PlanVcsJointly): each replay carries one candidate size of every VC still searching.
#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "hived/config.h"
#include "sim/cluster/spec_edit.h"
#include "sim/cluster/spec_info.h"
#include "sim/common/csv.h"
#include "sim/planning/plan_search.h"
#include "sim/planning/sweep_runner.h"
#include "sim/trace/trace_reader.h"

namespace hived::sim {
namespace {

namespace fs = std::filesystem;

// One VC's search as a state machine: Advance() moves it as far as its probes allow and
// returns the sizes it needs probed next (empty when done). The steps, and so the probes and
// the answer, are exactly PlanOneVc's.
struct Search {
  enum class Phase { kFirst, kWiden, kSectionStart, kSection, kDone };
  VcPlan plan;
  int64_t lo_bound = 0, hi_bound = 0, lo = 0, hi = 0;
  bool fixed_max = false;
  Phase phase = Phase::kFirst;

  std::vector<int64_t> Missing(const std::vector<int64_t>& sizes) const {
    std::vector<int64_t> out;
    for (int64_t s : sizes) {
      if (plan.probes.count(s) == 0) out.push_back(s);
    }
    return out;
  }

  std::vector<int64_t> Advance(const PlanContext& ctx, int64_t total_gpus) {
    while (true) {
      switch (phase) {
        case Phase::kFirst: {
          std::vector<int64_t> first{lo_bound};
          if (hi_bound != lo_bound) first.push_back(hi_bound);
          if (std::vector<int64_t> m = Missing(first); !m.empty()) return m;
          plan.jobs = plan.probes[lo_bound].jobs;
          if (plan.jobs < ctx.min_jobs) {
            plan.skipped = SkippedText(ctx, plan);
            phase = Phase::kDone;
            return {};
          }
          phase = Phase::kSectionStart;
          if (!fixed_max && !plan.probes[lo_bound].meets) {
            plan.cap = std::max<int64_t>(hi_bound, (4 * total_gpus + plan.leaves_per_unit - 1) /
                                                       std::max<int64_t>(plan.leaves_per_unit, 1));
            phase = Phase::kWiden;
          }
          break;
        }
        case Phase::kWiden: {
          if (plan.probes[hi_bound].meets || hi_bound >= plan.cap) {
            phase = Phase::kSectionStart;
            break;
          }
          const int64_t next = std::min(2 * hi_bound, plan.cap);
          if (plan.probes.count(next) == 0) return {next};
          const bool plateau = WidenedToPlateau(&plan, hi_bound, next);
          hi_bound = next;
          if (plateau) phase = Phase::kSectionStart;
          break;
        }
        case Phase::kSectionStart:
          if (plan.probes[lo_bound].meets) {
            plan.chosen = lo_bound;
            phase = Phase::kDone;
          } else if (plan.probes[hi_bound].meets) {
            lo = lo_bound;
            hi = hi_bound;
            phase = Phase::kSection;
          } else {
            phase = Phase::kDone;
          }
          break;
        case Phase::kSection: {
          if (hi - lo <= 1) {
            plan.chosen = hi;
            phase = Phase::kDone;
            break;
          }
          const std::vector<int64_t> sizes = NextProbeSizes(lo, hi, ctx.jobs);
          if (std::vector<int64_t> m = Missing(sizes); !m.empty()) return m;
          NarrowBracket(plan.probes, sizes, &lo, &hi);
          break;
        }
        case Phase::kDone:
          return {};
      }
    }
  }
};

}  // namespace

absl::StatusOr<std::vector<VcPlan>> PlanVcsJointly(PlanContext* ctx,
                                                   const std::vector<std::string>& vcs,
                                                   const std::vector<std::string>& unit_types,
                                                   int64_t min_size, int64_t max_size) {
  std::vector<Search> searches(vcs.size());
  const int64_t total_gpus = SpecInfo(ctx->base).TotalGpus();
  for (size_t i = 0; i < vcs.size(); ++i) {
    Search& s = searches[i];
    s.plan.vc = vcs[i];
    absl::StatusOr<VcUnits> current = GetVcUnits(ctx->base, vcs[i], unit_types[i]);
    if (!current.ok()) return current.status();
    s.plan.current = *current;
    if (ctx->new_vcs.count(vcs[i]) > 0) s.plan.current.units = 0;
    const std::vector<std::string> path = absl::StrSplit(current->unit_type, '.');
    s.plan.leaves_per_unit = SpecInfo(ctx->base).LeafCount(path.back());
    s.lo_bound = std::max<int64_t>(min_size, 1);
    s.hi_bound = max_size > 0
                     ? max_size
                     : std::max<int64_t>({4 * current->units, current->units + 4, 4, s.lo_bound});
    s.fixed_max = max_size > 0;
    if (s.hi_bound < s.lo_bound) {
      return absl::InvalidArgumentError(
          absl::StrCat("--max ", s.hi_bound, " < --min ", s.lo_bound));
    }
  }
  for (int round = 0;; ++round) {
    std::vector<std::vector<int64_t>> need(vcs.size());
    size_t replays = 0;
    for (size_t i = 0; i < vcs.size(); ++i) {
      need[i] = searches[i].Advance(*ctx, total_gpus);
      replays = std::max(replays, need[i].size());
    }
    if (replays == 0) break;
    // Replay r: every VC needing sizes at its r-th (or its last) one; the others as they are.
    std::vector<ChildRun> children;
    for (size_t r = 0; r < replays; ++r) {
      ClusterSpec spec = ctx->base;
      for (size_t i = 0; i < vcs.size(); ++i) {
        if (need[i].empty()) continue;
        const int64_t size = need[i][std::min(r, need[i].size() - 1)];
        if (absl::Status s = SetVcUnits(&spec, vcs[i], searches[i].plan.current.unit_type, size);
            !s.ok()) {
          return absl::InvalidArgumentError(
              absl::StrCat("VC ", vcs[i], " at ", size, ": ", s.message()));
        }
      }
      if (absl::Status s = FitPhysicalCluster(&spec); !s.ok()) return s;
      const fs::path dir = ctx->out / "probes" / absl::StrCat("round", round, "-", r);
      bool reused = false;
      absl::StatusOr<ChildRun> c = PrepareProbe(
          *ctx, dir, ClusterSpecToYaml(spec), absl::StrCat("joint probe ", round, "-", r), &reused);
      if (!c.ok()) return c.status();
      ctx->reused += reused ? 1 : 0;
      children.push_back(std::move(*c));
    }
    std::vector<ChildRun> to_run;
    for (const ChildRun& c : children) {
      std::string summary;
      if (!(ctx->resume &&
            ReadFileToString((fs::path(c.dir) / "out" / "summary.json").string(), &summary).ok() &&
            !summary.empty())) {
        to_run.push_back(c);
      }
    }
    if (absl::Status s = RunChildren(ctx->exe, to_run, ctx->jobs, "plan --all-vcs"); !s.ok()) {
      return s;
    }
    for (size_t i = 0; i < vcs.size(); ++i) {
      for (size_t r = 0; r < need[i].size(); ++r) {
        PlanProbe p;
        p.size = need[i][r];
        p.dir = children[r].dir;
        if (absl::Status s = ReadProbe(ctx, vcs[i], &p); !s.ok()) return s;
        searches[i].plan.probes[p.size] = p;
      }
    }
    for (const ChildRun& c : children) {
      std::error_code ec;
      for (const char* f : {"jobs.csv", "timeline.csv"}) {
        fs::remove(fs::path(c.dir) / "out" / f, ec);
        fs::remove(fs::path(c.dir) / "out" / "baseline-private" / f, ec);
      }
    }
  }
  std::vector<VcPlan> plans;
  for (Search& s : searches) {
    VcPlan& plan = s.plan;
    NoteNonMonotone(&plan);
    plans.push_back(std::move(plan));
  }
  return plans;
}

}  // namespace hived::sim

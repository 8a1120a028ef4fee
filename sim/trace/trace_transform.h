// sim/trace/trace_transform.h: what-if edits of a job trace, for `run`, `sweep` and `plan`.
//
// Applied in this order after the trace is read:
//   0. `--bootstrap days|weeks|jobs`  the trace resampled, seeded by the run's seed
//      (`BootstrapTrace`, sim/trace/trace_growth.h): the workload's own uncertainty;
//   1. `--only-vcs A,B`         keep only these VCs' jobs (names as in the trace);
//   2. `--rename-vcs OLD=NEW,…` rename VCs; several OLD to one NEW merge them;
//   3. `--add-tenant VC[:jobs=N,load=L,seed=S]`  add a synthetic tenant: `gen-trace`'s
//      Philly-shaped jobs for VC (which must be in the config; `sweep --vc-cells` can add it),
//      interleaved by submit time with the real jobs (ties: real jobs first); ids "VC-gN";
//      the seed defaults to the run's `--seed`. `load=L` is relative to the VC's own cells
//      (the tenant grows with the VC). Absolute, whatever the VC's size:
//      `VC:per-day=N[,jobs=M,sizes=G:W/G:W...,max-gpus=G]` submits N jobs a day (Poisson)
//      from the first real job on, M jobs (default N x the real trace's days), gang sizes
//      from the mix (default Philly's) capped at max-gpus (default 8); `VC:like=X[,scale=K]`
//      copies X's real jobs (after 1-2) grown by K (sim/trace/trace_growth.h), ids "VC-ID";
//   3b. `--vc-load-scale VC=K,…`  VC's jobs x K over the same days (trace_growth.h);
//   4. `--vc-priority VC=P,…`   give every job of VC priority P (-1..1000);
//   5. `--vc-opportunistic VC=F,…`  make a fraction F of VC's jobs opportunistic
//      (priority -1): job k of the VC is chosen when a hash of (seed, VC, k) < F, so the
//      choice is deterministic and independent of other VCs;
//   6. `--move-vc VC=TYPE,…`  ("move a VC to A100s") the config part, `ApplyVcMoves`, runs
//      first, on the config (`MoveVc`, sim/cluster/spec_edit.h); here every job of VC that names a
//      GPU type asks for TYPE's leaf type instead (the VC has no other type left). Untyped jobs
//      stay untyped (any type the VC has: now TYPE's), pinned jobs keep their type (pinned
//      cells do not move). Gang sizes and durations are kept (a faster GPU is step 7), and
//      a pod larger than TYPE's nodes is rejected like any such pod;
//   7. `--vc-speed VC=F,…`  VC's jobs run F x as fast: durations divided by F (nearest
//      second, >= 1; sim/trace/trace_speed.h). `plan --gpu-speed TYPE=F` derives it for a
//      moved VC (new type's speed / old type's).
// A VC named in 1, 4, 5 or 7 that no job has (after the earlier steps) is an error naming the
// VCs present; a trace left empty is an error.
//
// Example:
//   TraceTransformFlags flags;
//   RegisterTraceTransformFlags(&parser, &flags);           // before Parse
//   absl::StatusOr<TraceTransforms> t = ParseTraceTransforms(flags);  // usage errors
//   absl::Status s = ApplyTraceTransforms(*t, spec, seed, &trace);    // input errors
//
// Thread safety: stateless functions.
#ifndef HIVED_SIM_TRACE_TRACE_TRANSFORM_H_
#define HIVED_SIM_TRACE_TRACE_TRANSFORM_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hived/cluster_spec.h"
#include "sim/cluster/spec_info.h"
#include "sim/common/flags.h"
#include "sim/trace/job.h"

namespace hived::sim {

// The flags' raw text, as given.
struct TraceTransformFlags {
  std::string only_vcs;
  std::string rename_vcs;
  std::string add_tenant;
  std::string vc_priority;
  std::string vc_opportunistic;
  std::string move_vc;
  std::string vc_load_scale;
  std::string bootstrap;
  std::string vc_speed;
};

// A tenant in one of three forms: relative (`load=`, gen-trace's load over the VC's own
// cells: it grows with the VC), absolute (`per-day=`: a Poisson rate and a gang-size mix,
// independent of the VC's size), or a copy (`like=VC,scale=K`: VC's real jobs x K).
struct TenantSpec {
  std::string vc;
  int64_t jobs = 2000;
  bool jobs_given = false;
  double load = 0.8;
  double per_day = 0;                             // > 0: absolute, this many jobs a day
  int64_t max_gpus = 0;                           // per-day: gang cap (0: 8 GPUs)
  std::vector<std::pair<int32_t, double>> sizes;  // per-day: gang GPUs -> weight
  std::string like;                               // non-empty: a copy of this VC's jobs
  double scale = 1;                               // like: x K
  std::optional<uint64_t> seed;                   // default: the run's seed
};

struct TraceTransforms {
  std::vector<std::string> only_vcs;
  std::vector<std::pair<std::string, std::string>> rename_vcs;
  std::vector<TenantSpec> tenants;
  std::vector<std::pair<std::string, Priority>> vc_priority;
  std::vector<std::pair<std::string, double>> vc_opportunistic;
  std::vector<std::pair<std::string, std::string>> move_vcs;  // (VC, target cell type)
  std::vector<std::pair<std::string, double>> vc_load_scale;  // (VC, K)
  std::vector<std::pair<std::string, double>> vc_speeds;      // (VC, F)
  int64_t bootstrap_block = -1;  // >= 0: resample (BootstrapTrace) with this block; 0 = jobs
  bool empty() const {
    return only_vcs.empty() && rename_vcs.empty() && tenants.empty() && vc_priority.empty() &&
           vc_opportunistic.empty() && move_vcs.empty() && vc_load_scale.empty() &&
           vc_speeds.empty() && bootstrap_block < 0;
  }
};

// Adds the flags to `parser`, writing into `flags`.
void RegisterTraceTransformFlags(FlagParser* parser, TraceTransformFlags* flags);

// Parses the flags' values. kInvalidArgument naming the flag and the bad item.
absl::StatusOr<TraceTransforms> ParseTraceTransforms(const TraceTransformFlags& flags);

// The flags back as command-line arguments ("--only-vcs=A,B", ...), for child runs.
std::vector<std::string> TraceTransformArgs(const TraceTransformFlags& flags);

// Applies `transforms` to `trace` in the documented order. `seed` is the run's seed.
// Errors: kInvalidArgument for a VC no job has, a tenant VC not in `spec`, or an empty result.
absl::Status ApplyTraceTransforms(const TraceTransforms& transforms, const ClusterSpec& spec,
                                  uint64_t seed, Trace* trace);

// The config part of `--move-vc`: `MoveVc` for each item, in order. Errors as `MoveVc`,
// prefixed with the item.
absl::Status ApplyVcMoves(const TraceTransforms& transforms, ClusterSpec* spec);

// Checks the pinned cells the trace's jobs name against the config: each must be a pinned
// cell of the job's own VC (jobs of a VC the config lacks are left to be rejected). Errors:
// kInvalidArgument "file:line:column: pinned cell 'X' is not in the config" / "... belongs
// to VC A, not to the job's VC B" for every bad row (the first 20, then a count); with
// `skip_bad_rows` those rows are dropped and counted in `skipped_rows` instead.
absl::Status CheckPinnedCells(const SpecInfo& info, bool skip_bad_rows, Trace* trace);
// What is wrong with one job's pinned cell (as `CheckPinnedCells` words it), "" if nothing.
std::string PinnedCellProblem(const SpecInfo& info, const TraceJob& job);

}  // namespace hived::sim

#endif  // HIVED_SIM_TRACE_TRACE_TRANSFORM_H_

// sim/trace/trace_growth.h: a VC's workload grown (or shrunk) in place, for the trace
// transforms `--vc-load-scale VC=K` and `--add-tenant NEW:like=VC,scale=K`
// (sim/trace/trace_transform.h).
//
// "K times the jobs over the same days": job i of the VC (in submit order) appears
// floor(K) times, plus once more when a hash of (seed, VC, i) falls below K - floor(K);
// its copies are spread evenly over the gap to the VC's next job (the last job uses the VC's
// mean gap), so the VC keeps its job-size mix, its durations, its span and its daily shape,
// and only its arrival rate changes. K < 1 keeps each job with probability K. Copy 0 is the
// job itself (same id and time); copy c > 0 gets the id "ID-xC". Deterministic: the same
// trace, VC, K and seed give the same jobs.
//
// Thread safety: stateless functions.
#ifndef HIVED_SIM_TRACE_TRACE_GROWTH_H_
#define HIVED_SIM_TRACE_TRACE_GROWTH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/trace/job.h"

namespace hived::sim {

// The largest K accepted (a VC at 1000 x its jobs is far past any planning question).
inline constexpr double kMaxVcLoadScale = 1000;

// The jobs of `vc` in `jobs` (sorted by submit time) grown by `k` as described above, in
// submit order. REQUIRES: 0 < k <= kMaxVcLoadScale.
std::vector<TraceJob> GrowVcJobs(const std::vector<TraceJob>& jobs, const std::string& vc, double k,
                                 uint64_t seed);

// Replaces the jobs of `vc` in `trace` by GrowVcJobs(..., k, seed), keeping the trace sorted
// by submit time (a job keeps its place among jobs submitted at the same time; its copies
// come after them). k == 1 changes nothing.
void ScaleVcLoad(const std::string& vc, double k, uint64_t seed, Trace* trace);

// The trace resampled for a bootstrap (`--bootstrap days|weeks|jobs`, seeded by the run's
// seed), so that replays of one config differ as the workload might have: `block_seconds` >
// 0 cuts the span from the first submission into blocks of that length (a day, a week) and
// draws as many blocks with replacement, block i taking the jobs of the drawn block shifted
// into its place (a block bootstrap: bursts and daily shape stay whole); 0 draws the jobs
// themselves with replacement, each keeping its submit time. Ids become "ID-bK" (K the
// draw), so a job drawn twice stays unique. A trace whose blocks are all alike comes back
// with the same jobs at the same times.
void BootstrapTrace(int64_t block_seconds, uint64_t seed, Trace* trace);

}  // namespace hived::sim

#endif  // HIVED_SIM_TRACE_TRACE_GROWTH_H_

// sim/engine/replay.h: the replay behind `Engine` (sim/engine/engine.h), internal to the simulator.
//
// One `Replay` runs one trace against one backend, once. Split by responsibility:
//   sim/engine/replay.cc          the event loop: submissions, finishes, node events, the VCs'
//                          queue passes, starts, preemptions and failures;
//   sim/engine/replay_measure.cc  what is measured between events: GPU-time integrals, the
//                          timeline, per-VC usage and lending, and the `easy` reservations.
// The contract (event order, what a pass tries, what is measured) is sim/engine/engine.h's.
//
// Invariants (between events): running_[running_pos_[j]] == j for every running job j;
// waiting_[v] counts VC v's queued jobs and queued_gpus_vc_/queued_opp_gpus_vc_ their GPUs;
// waiting_vcs_ holds exactly the VCs with waiting_[v] > 0 and waiting_vcs_[waiting_vc_pos_[v]]
// == v for each; waiting_opp_total_ is the sum of waiting_opp_;
// vc_used_[v] is the GPUs VC v's running jobs hold and used_total_ their sum; dirty_[v] iff v
// is in dirty_list_.
//
// Thread safety: not thread-safe; one replay per thread.
#ifndef HIVED_SIM_ENGINE_REPLAY_H_
#define HIVED_SIM_ENGINE_REPLAY_H_

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/cluster/spec_info.h"
#include "sim/engine/cluster_backend.h"
#include "sim/engine/engine.h"
#include "sim/engine/event_queue.h"
#include "sim/engine/queue_policy.h"

namespace hived::sim::replay_internal {

// Deterministic exponential samples (std distributions differ between library versions).
class ExpSampler {
 public:
  explicit ExpSampler(uint64_t seed) : gen_(seed) {}
  // A sample with the given mean, in whole seconds, at least 1.
  Time Next(double mean_seconds) {
    const double u = static_cast<double>(gen_() >> 11) * 0x1.0p-53;  // [0, 1)
    const double x = -mean_seconds * std::log1p(-u);
    // Clamped before the conversion: a huge mean (e.g. --mtbf 1e308) must not overflow.
    if (!(x < static_cast<double>(kMaxTime))) return kMaxTime;
    return std::max<Time>(1, static_cast<Time>(std::llround(x)));
  }

 private:
  std::mt19937_64 gen_;
};

enum class Interruption { kPreemption, kFailure };

class Replay : public BackfillOracle {
 public:
  Replay(const SpecInfo& info, ClusterBackend* backend, const EngineOptions& options)
      : info_(info), backend_(backend), options_(options), sampler_(options.seed) {}

  absl::StatusOr<EngineResult> Run(const Trace& trace, const std::vector<NodeEvent>& node_events);

  // BackfillOracle, for `easy`.
  Time Now() const override { return now_; }
  Time Runtime(JobIndex job) const override {
    return r_.records[static_cast<size_t>(job)].remaining;
  }
  int32_t Gpus(JobIndex job) const override { return r_.jobs[static_cast<size_t>(job)].gpus; }
  Reservation Reserve(JobIndex head) const override;

 private:
  void Advance(Time t);
  TimelineRow Sample(Time t) const;
  void ThinTimeline();
  // Seconds of [a, b) inside the measurement window.
  double InWindow(Time a, Time b) const {
    const Time lo = std::max(a, window_start_);
    const Time hi = std::min(b, window_end_);
    return hi > lo ? static_cast<double>(hi - lo) : 0.0;
  }
  // Integrates VC `vc`'s usage up to now; then changes its running GPUs by `delta`.
  void ChangeVcUsed(int32_t vc, int64_t delta);
  void ServeOrder(std::vector<int32_t>* batch) const;
  absl::Status Handle(const Event& e);
  void Enqueue(JobIndex j);
  void MarkDirty(int32_t vc);
  void OnRelease(int32_t vc);
  absl::Status Interrupt(JobIndex j, Interruption why);
  TryResult TryStart(JobIndex j);
  void Start(JobIndex j, bool opportunistic);
  absl::Status SchedulePasses();
  void RunningAdd(JobIndex j);
  void RunningRemove(JobIndex j);

  const SpecInfo& info_;
  ClusterBackend* backend_;
  const EngineOptions& options_;
  ExpSampler sampler_;
  EngineResult r_;
  EventQueue events_;
  std::vector<int32_t> shape_;
  std::vector<std::unique_ptr<QueuePolicy>> queues_;
  std::vector<int64_t> waiting_;      // per VC
  std::vector<int64_t> waiting_opp_;  // per VC: waiting jobs of priority -1
  std::vector<bool> dirty_;
  std::vector<int32_t> dirty_list_;
  std::vector<int32_t> batch_;      // SchedulePasses' VCs, kept for its capacity
  std::vector<JobIndex> deferred_;  // requeued during a pass
  std::vector<JobIndex> running_;
  std::vector<int32_t> running_pos_;
  int64_t queued_gpus_ = 0;
  // GPUs of waiting jobs per VC: guaranteed (priority >= 0) and opportunistic.
  std::vector<int64_t> queued_gpus_vc_;
  std::vector<int64_t> queued_opp_gpus_vc_;
  // A job joins (+1) or leaves (-1) its VC's waiting jobs: every count above and below.
  void ChangeQueued(const SimJob& job, int64_t sign);
  // VCs with waiting jobs (waiting_[v] > 0), in no particular order, and each one's place in
  // it (-1 when absent): loops over the VCs that could act visit only these. Their order
  // never matters: passes are sorted (ServeOrder) and sums are of integers.
  std::vector<int32_t> waiting_vcs_;
  std::vector<int32_t> waiting_vc_pos_;
  int64_t waiting_opp_total_ = 0;  // sum of waiting_opp_
  int64_t ReachableQueuedGpus(int64_t used) const;
  int64_t queued_total_ = 0;
  Time now_ = 0;
  Time last_time_ = 0;
  Time next_sample_ = 0;
  Time sample_interval_ = 1;
  Time last_submit_ = 0;
  Time window_start_ = 0;
  Time window_end_ = 0;
  // Per VC: running GPUs, guarantee, when the usage was last integrated, and the lending
  // integral at that time. Totals: borrowed beyond guarantees, idle guarantees, unreserved.
  std::vector<int64_t> vc_used_;
  std::vector<int64_t> vc_guarantee_;
  std::vector<Time> vc_since_;
  std::vector<double> vc_lent_mark_;
  double lent_share_integral_ = 0;  // integral of (GPUs lent / idle guarantee) dt
  int64_t used_total_ = 0;
  int64_t borrowed_total_ = 0;
  int64_t idle_guarantee_total_ = 0;
  int64_t unreserved_ = 0;
  absl::Status error_;
  int64_t submitted_ = 0;
};

}  // namespace hived::sim::replay_internal

#endif  // HIVED_SIM_ENGINE_REPLAY_H_

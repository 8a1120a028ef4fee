// sim/engine/replay.h: the replay behind `Engine` (sim/engine/engine.h), internal to the simulator.
//
// One `Replay` runs one trace against one backend, once. Split by responsibility:
//   sim/engine/replay.cc          the events: submissions, finishes, node events, the VCs'
//                          queue passes, starts, preemptions and failures, as the hooks of
//                          the one event loop (sim/engine/event_loop.h) that runs them;
//   sim/engine/replay_jobs.cc     the jobs: read from the feed, live, handed to the sink;
//   sim/engine/replay_measure.cc  what is measured between events: GPU-time integrals, the
//                          timeline, per-VC usage and lending, and the `easy` reservations.
// The contract (event order, what a pass tries, what is measured) is sim/engine/engine.h's.
//
// Invariants (between events): running_[Live(j).running_pos] == j for every running job j;
// slot_.Get(j) >= 0 iff job j was read from the feed and not yet handed to the sink, and then
// live_[slot_.Get(j)] is its state; free_ holds the other places of live_;
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
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "sim/cluster/spec_info.h"
#include "sim/engine/cluster_backend.h"
#include "sim/engine/engine.h"
#include "sim/engine/event_loop.h"
#include "sim/engine/event_queue.h"
#include "sim/engine/job_slots.h"
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

// What makes jobs interchangeable for the scheduler (see Replay::Pull).
struct ShapeKey {
  Priority priority;
  std::string_view gpu_type;
  std::string_view pinned_cell;
  GangMembers members;  // a copy: the job's own storage does not outlive it

  bool operator==(const ShapeKey& o) const {
    if (priority != o.priority || gpu_type != o.gpu_type || pinned_cell != o.pinned_cell ||
        members.size() != o.members.size()) {
      return false;
    }
    for (size_t i = 0; i < members.size(); ++i) {
      const GangMember& a = members[i];
      const GangMember& b = o.members[i];
      if (a.pod_number != b.pod_number || a.leaf_cell_number != b.leaf_cell_number) return false;
    }
    return true;
  }
  template <typename H>
  friend H AbslHashValue(H h, const ShapeKey& k) {
    h = H::combine(std::move(h), k.priority, k.gpu_type, k.pinned_cell, k.members.size());
    for (const GangMember& m : k.members) {
      h = H::combine(std::move(h), m.pod_number, m.leaf_cell_number);
    }
    return h;
  }
};

enum class Interruption { kPreemption, kFailure };

class Replay : public BackfillOracle {
 public:
  Replay(const SpecInfo& info, ClusterBackend* backend, const EngineOptions& options)
      : info_(info), backend_(backend), options_(options), sampler_(options.seed) {}

  absl::StatusOr<EngineResult> Run(JobFeed* feed, const TraceFacts& facts,
                                   const std::vector<NodeEvent>& node_events, JobSink* sink);

  // BackfillOracle, for `easy`.
  Time Now() const override { return now_; }
  Time Runtime(JobIndex job) const override { return Rec(job).remaining; }
  int32_t Gpus(JobIndex job) const override { return Job(job).gpus; }
  Reservation Reserve(JobIndex head) const override;

 private:
  // The event loop's hooks (sim/engine/event_loop.h): the feed's jobs are the arrivals, before
  // every other event of their time (they were known first); a wake-up for a job that no
  // longer waits is dropped before it can move the clock (a stale finish is `Handle`'s no-op,
  // after `Advance`: the integrals' sums stay as they are); after the events of a time, the
  // VCs' queue passes.
  friend class EventLoop<Replay>;
  static constexpr TiePolicy kTies = TiePolicy::kArrivalsFirst;
  bool HasArrival() const { return next_ >= 0; }
  Time ArrivalTime() const { return Rec(next_).submit; }
  absl::StatusOr<Event> TakeArrival();
  bool Stale(const Event& top) const;
  absl::Status EndOfTime() { return SchedulePasses(); }
  absl::Status CheckInvariants() const { return backend_->CheckInvariants(); }
  double Progress() const {
    return expected_jobs_ == 0
               ? 1.0
               : static_cast<double>(submitted_) / static_cast<double>(expected_jobs_);
  }

  // A job between its submission (or its read from the feed) and its hand-over to the sink.
  struct LiveJob {
    SimJob job;
    JobRecord rec;
    JobId id;
    Name vc_name;
    int32_t shape = 0;
    int32_t running_pos = -1;
  };
  // The live job j. REQUIRES: j is live.
  LiveJob& Live(JobIndex j) { return live_[static_cast<size_t>(slot_.Get(j))]; }
  const LiveJob& Live(JobIndex j) const { return live_[static_cast<size_t>(slot_.Get(j))]; }
  // The live job j, or null once it was handed to the sink.
  LiveJob* FindLive(JobIndex j) {
    const int32_t s = slot_.Get(j);
    return s < 0 ? nullptr : &live_[static_cast<size_t>(s)];
  }
  const LiveJob* FindLive(JobIndex j) const {
    const int32_t s = slot_.Get(j);
    return s < 0 ? nullptr : &live_[static_cast<size_t>(s)];
  }
  const SimJob& Job(JobIndex j) const { return Live(j).job; }
  const JobRecord& Rec(JobIndex j) const { return Live(j).rec; }
  JobRecord& Rec(JobIndex j) { return Live(j).rec; }
  // Reads the feed's next job into `next_` (resolved, live, not yet submitted): false at
  // its end.
  absl::StatusOr<bool> Pull();
  // Hands job j to the sink and frees its place.
  absl::Status Finish(JobIndex j);
  FinishedJob Finished(JobIndex j) const;

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
  EventQueue events_;  // finishes, node events, wake-ups; arrivals come from the feed
  JobFeed* feed_ = nullptr;
  JobSink* sink_ = nullptr;
  int64_t expected_jobs_ = 0;
  JobIndex next_ = -1;   // the job read from the feed and not yet submitted; -1: none
  JobIndex pulled_ = 0;  // jobs read from the feed so far
  Time last_pulled_time_ = 0;
  JobSlots slot_;  // per job: its place in live_, -1 when not live
  std::vector<LiveJob> live_;
  std::vector<int32_t> free_;  // places in live_ no job holds
  std::unique_ptr<JobResolver> resolver_;
  std::string reason_;  // scratch for the resolver
  absl::flat_hash_map<ShapeKey, int32_t> shapes_;
  bool ended_ = false;  // the run is over: the window and end are final
  std::vector<std::unique_ptr<QueuePolicy>> queues_;
  std::vector<int64_t> waiting_;      // per VC
  std::vector<int64_t> waiting_opp_;  // per VC: waiting jobs of priority -1
  std::vector<bool> dirty_;
  std::vector<int32_t> dirty_list_;
  std::vector<int32_t> batch_;      // SchedulePasses' VCs, kept for its capacity
  std::vector<JobIndex> deferred_;  // requeued during a pass
  std::vector<JobIndex> running_;
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

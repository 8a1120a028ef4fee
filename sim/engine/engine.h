// sim/engine/engine.h: the discrete-event replay of a trace against a `ClusterBackend`.
//
// Events (submit, finish, node down, node up) are processed in (time, sequence) order; all
// events of one time are handled before the queues are tried, so jobs submitted together
// see the same cluster. Each VC has its own queue (sim/engine/queue_policy.h). A VC's queue is
// tried only when something happened that could help it:
//   - a job of the VC arrived, finished, was preempted or killed;
//   - any release, for every VC with waiting jobs, when the backend shares capacity across
//     VCs for guaranteed jobs (a shared pool), or for VCs with waiting jobs that could run
//     opportunistically (priority -1, or `--opportunistic-overflow`);
//   - a node came back up (every VC with waiting jobs).
// So a replay costs O(events x VCs touched), not O(events x waiting jobs).
//
// Preemption: a start that needs victims releases them first; each victim goes back to its
// queue at its original place and restarts from zero (its run so far is lost: GPUs x run
// time count as GPU-hours lost) or, with `resume`, from where it stopped. A node going down
// kills the jobs on it the same way (counted as failures, not preemptions).
//
// Measurement: GPU-time is integrated over a fixed window (`window_start`, `window_end`;
// default the trace's submit span plus its longest job), the same for every policy, with the
// part of it later lost to preemption or failure apart. Per VC: used GPU-seconds, borrowed
// (beyond its guarantee) and lent (its idle guarantee used by others' borrowing). Lending is
// attributed pro rata: at each moment the borrowed GPUs beyond the cluster's unreserved
// capacity are shared among the VCs with idle guarantee in proportion to their idle GPUs.
//
// Memory: O(jobs + nodes + VCs + kMaxTimelineRows); nothing grows with simulated time alone.
// The timeline keeps at most `kMaxTimelineRows` rows: when it would exceed that, every other
// row is dropped and the sampling interval doubles, so any span costs bounded rows and time.
// Time sums saturate at `kMaxTime` instead of overflowing.
//
// Cost per event: the submissions come from the feed as the clock reaches them, the event
// heap holds only finishes, node events and wake-ups (about the running jobs); a run's nodes
// and a gang's members are stored inline. The replay itself is sim/engine/replay.h (its event
// handlers in sim/engine/replay.cc, measurement in sim/engine/replay_measure.cc), run by the
// simulator's one event loop (sim/engine/event_loop.h), which the pod replay shares.
//
// Thread safety: not thread-safe; one engine per thread.
#ifndef HIVED_SIM_ENGINE_ENGINE_H_
#define HIVED_SIM_ENGINE_ENGINE_H_

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/cluster/spec_info.h"
#include "sim/engine/cluster_backend.h"
#include "sim/engine/queue_policy.h"
#include "sim/trace/job.h"
#include "sim/trace/node_events.h"

namespace hived::sim {

// Saturation point for time sums (about 292 billion years: never reached by valid input).
inline constexpr Time kMaxTime = INT64_MAX / 2;
// a + b for b >= 0, saturating at kMaxTime.
inline Time SaturatingAdd(Time a, Time b) { return b >= kMaxTime - a ? kMaxTime : a + b; }
// Upper bound on timeline rows (between half of it and it once the run is long enough).
inline constexpr size_t kMaxTimelineRows = 4096;

struct EngineOptions {
  QueueKind queue = QueueKind::kFifo;
  bool resume = false;
  bool opportunistic_overflow = false;
  int64_t check_invariants_every = 0;  // events; 0 = never
  Time timeline_interval = 0;          // minimum seconds between rows; 0 = automatic
  Time horizon = -1;                   // stop at this time; -1 = run until every job is done
  // Measurement window [window_start, window_end); -1 = the default (first submission;
  // last submission + longest job). Clipped to the run's end when a horizon stops it.
  Time window_start = -1;
  Time window_end = -1;
  // Node failure model: exponential time between failures and to repair, per node, in
  // hours; 0 = off. Failures stop being drawn after the last submission.
  double mtbf_hours = 0;
  double mttr_hours = 0;
  uint64_t seed = 1;
  std::function<void(double fraction)> progress;  // called now and then; may be empty
};

enum class JobState : uint8_t { kPending, kQueued, kRunning, kCompleted, kRejected };
std::string_view JobStateName(JobState state);

// A value that almost every job lacks, behind one pointer allocated on first write: reads of
// an absent value see `T()`. Copies are deep.
template <typename T>
class Rare {
 public:
  Rare() = default;
  Rare(const Rare& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  Rare(Rare&&) noexcept = default;
  Rare& operator=(const Rare& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  Rare& operator=(Rare&&) noexcept = default;
  const T& get() const {
    static const T* const kAbsent = new T();
    return p_ ? *p_ : *kAbsent;
  }
  T& mutable_get() {
    if (!p_) p_ = std::make_unique<T>();
    return *p_;
  }
  bool present() const { return p_ != nullptr; }
  void reset() { p_.reset(); }

 private:
  std::unique_ptr<T> p_;
};

// A string that is almost always empty (a job's rejection reason): one pointer per job, not
// a 32-byte std::string, so a million job records do not carry 32 MB of empty strings.
class RareString {
 public:
  RareString& operator=(std::string text) {
    if (text.empty()) {
      text_.reset();
    } else {
      text_.mutable_get() = std::move(text);
    }
    return *this;
  }
  bool empty() const { return !text_.present(); }
  std::string_view view() const { return text_.get(); }
  operator std::string_view() const { return view(); }  // NOLINT: reads as the string it holds
  friend bool operator==(const RareString& a, std::string_view b) { return a.view() == b; }

 private:
  Rare<std::string> text_;  // present iff not empty
};

// The nodes of a job's run, sorted, in 8 bytes: a single node inline (almost every job), more
// in a heap block. Invariant: `slots_` is all zero (no nodes); or holds the tag 1 in
// `slots_[kTag]` and the node in `slots_[kNode]` (one node); or holds the address of a block
// with the count and then the nodes. `kTag` is the slot with the low half of the 8 bytes read
// as one word, so a block's address (8-aligned) reads with the low bit 0 and an inline node
// with 1. The address is copied in and out with memcpy, the node is a real int32_t: no
// storage is read as a type it does not hold.
class RunNodes {
 public:
  RunNodes() = default;
  RunNodes(const RunNodes& o) { Assign(o.begin(), o.size()); }
  RunNodes(RunNodes&& o) noexcept : slots_(o.slots_) { o.slots_ = {}; }
  RunNodes& operator=(const RunNodes& o) {
    if (this != &o) Assign(o.begin(), o.size());
    return *this;
  }
  RunNodes& operator=(RunNodes&& o) noexcept {
    if (this != &o) {
      Free();
      slots_ = o.slots_;
      o.slots_ = {};
    }
    return *this;
  }
  RunNodes& operator=(const NodeList& nodes) {
    Assign(nodes.data(), nodes.size());
    return *this;
  }
  ~RunNodes() { Free(); }

  size_t size() const {
    if (empty()) return 0;
    return Inline() ? 1 : static_cast<size_t>(Block()[0]);
  }
  const int32_t* begin() const {
    if (empty()) return nullptr;
    return Inline() ? &slots_[kNode] : Block() + 1;
  }
  const int32_t* end() const { return begin() + size(); }
  bool empty() const { return slots_[0] == 0 && slots_[1] == 0; }
  int32_t operator[](size_t i) const { return begin()[i]; }
  friend bool operator==(const RunNodes& a, const NodeList& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator!=(const RunNodes& a, const NodeList& b) { return !(a == b); }
  friend bool operator==(const RunNodes& a, const RunNodes& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator!=(const RunNodes& a, const RunNodes& b) { return !(a == b); }

 private:
  static constexpr size_t kTag = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 0 : 1;
  static constexpr size_t kNode = 1 - kTag;
  static_assert(sizeof(int32_t*) == 8, "a block's address fills both slots");
  bool Inline() const { return (slots_[kTag] & 1) != 0; }
  int32_t* Block() const {
    int32_t* block = nullptr;
    std::memcpy(&block, slots_.data(), sizeof(block));
    return block;
  }
  void Free() {
    if (!empty() && !Inline()) delete[] Block();
    slots_ = {};
  }
  void Assign(const int32_t* nodes, size_t n) {
    std::array<int32_t, 2> next{};
    if (n == 1) {
      next[kTag] = 1;
      next[kNode] = nodes[0];
    } else if (n > 1) {
      auto* block = new int32_t[n + 1];
      block[0] = static_cast<int32_t>(n);
      std::copy(nodes, nodes + n, block + 1);
      std::memcpy(next.data(), &block, sizeof(block));
    }
    Free();
    slots_ = next;
  }
  std::array<int32_t, 2> slots_{};
};

// What few jobs have: a rejection reason, GPU-seconds lost to preemptions and to failures.
struct JobRarities {
  std::string reason;                    // why rejected
  int64_t gpu_seconds_lost = 0;          // to preemptions (restart from zero)
  int64_t failure_gpu_seconds_lost = 0;  // to node failures
};

// Fields ordered so that nothing pads: 72 bytes a job (104 with the losses inline and the
// nodes in an InlinedVector, 136 with the flags spread and a string reason).
struct JobRecord {
  Time submit = 0;
  Time first_start = -1;
  Time last_start = -1;
  Time end = -1;
  Time remaining = 0;  // seconds still to run
  int32_t preemptions = 0;
  int32_t failures = 0;  // killed by a node going down
  int32_t epoch = 0;     // starts so far
  JobState state = JobState::kPending;
  bool wake_pushed = false;    // a kWake event is queued for its reclaim delay
  bool opportunistic = false;  // the current or last run was opportunistic
  Rare<JobRarities> rare;      // reason and losses; `rare.get()` reads them
  RunNodes nodes;              // nodes of the current or last run

  std::string_view reason() const { return rare.get().reason; }
  int64_t gpu_seconds_lost() const { return rare.get().gpu_seconds_lost; }
  int64_t failure_gpu_seconds_lost() const { return rare.get().failure_gpu_seconds_lost; }
};

struct TimelineRow {
  Time time = 0;
  int64_t used_gpus = 0;
  int64_t fragmented_free_gpus = 0;
  int64_t running_jobs = 0;
  int64_t queued_jobs = 0;
  std::vector<int64_t> queued_per_vc;
};

// GPU-seconds of one VC inside the measurement window.
struct VcUsage {
  double used = 0;      // by the VC's running jobs, opportunistic included
  double borrowed = 0;  // beyond the VC's guarantee
  double lent = 0;      // of its idle guarantee, used by others' borrowing (pro rata)
};

struct EngineResult {
  std::vector<SimJob> jobs;  // resolved jobs, trace order
  std::vector<JobRecord> records;
  std::vector<TimelineRow> timeline;
  Time start = 0;            // first event
  Time end = 0;              // last event (or the horizon)
  int64_t total_gpus = 0;    // the policy's GPUs (a cluster per VC: theirs only)
  int64_t cluster_gpus = 0;  // the physical cluster's GPUs: the window's denominator
  Time window_start = 0;
  Time window_end = 0;
  double window_used_gpu_seconds = 0;
  double window_lost_gpu_seconds = 0;          // of the used: runs later preempted
  double window_failure_lost_gpu_seconds = 0;  // of the used: runs later killed by a failure
  std::vector<VcUsage> vc_usage;               // by VC
  std::vector<int64_t> vc_guaranteed_gpus;     // by VC: the GPUs of its virtual cells
  // Integrals over [start, end] in GPU-seconds.
  double used_gpu_seconds = 0;
  double fragmented_gpu_seconds = 0;
  double servable_gpu_seconds = 0;  // min(total, used + queued demand)
  // used + what the waiting jobs could use under the policy's rules (a VC's waiting jobs
  // cannot use other VCs' cells under hived or private).
  double reachable_servable_gpu_seconds = 0;
  int64_t events = 0;
  int64_t schedule_calls = 0;
  int64_t node_down_events = 0;
};

// Resolves one trace row against the config: VC index, gang members (split by the VC's node
// size when the trace gives only a GPU count) and a rejection reason for a job that can never
// run (unknown VC, a pod larger than any node, more GPUs than the VC reserves or the cluster
// has; "" when runnable). Remembers the last VC's index: traces name few VCs, mostly in runs.
class JobResolver {
 public:
  explicit JobResolver(const SpecInfo& info) : info_(info) {}
  void Resolve(const TraceJob& t, JobIndex index, SimJob* job, std::string* reason);

 private:
  const SpecInfo& info_;
  std::string last_vc_;
  int32_t last_vc_index_ = -1;
  bool has_last_ = false;
};

// Every row of `trace` resolved (JobResolver); per job the reason ("" when runnable).
void ResolveJobs(const Trace& trace, const SpecInfo& info, std::vector<SimJob>* jobs,
                 std::vector<RareString>* reject_reasons);

// What the replay needs to know of the whole trace before its first event: from the trace
// read whole (`FactsOf`) or from a streaming pre-pass over the file.
struct TraceFacts {
  int64_t jobs = 0;
  Time first_submit = 0;  // 0 for an empty trace
  Time last_submit = 0;
  Time longest = 0;                             // the longest duration
  std::vector<std::string> named_pinned_cells;  // sorted, distinct (`NamedPinnedCells`)
};
TraceFacts FactsOf(const Trace& trace);
// Adds one job (in trace order) to facts being gathered; `pinned` collects the pinned cells.
void AddToFacts(const TraceJob& job, TraceFacts* facts);

// Where a replay pulls its jobs from, in trace order, as the clock reaches their submit
// times (issue 28 item 3): jobs must come in non-decreasing submit time (else the replay
// fails with kInvalidArgument). The names a job holds must outlive the replay.
class JobFeed {
 public:
  virtual ~JobFeed() = default;
  // The next job, or null at the end; valid until the next call.
  virtual absl::StatusOr<const TraceJob*> Next() = 0;
};

// A whole trace as a feed.
class TraceFeed : public JobFeed {
 public:
  explicit TraceFeed(const Trace& trace) : trace_(trace) {}
  absl::StatusOr<const TraceJob*> Next() override {
    return next_ < trace_.jobs.size() ? &trace_.jobs[next_++] : nullptr;
  }

 private:
  const Trace& trace_;
  size_t next_ = 0;
};

// One job whose record is final, handed to a `JobSink` once: when it completed or was
// rejected, or at the end of the run for the jobs still queued, running or not yet
// submitted (a horizon stopped the run). `window_*` and `run_end` are the run's as far as
// known: during the run the measurement window before any horizon clips it and run_end ==
// kMaxTime; at the end their final values (EngineResult's). A job handed over during the
// run has completed (so started) or was rejected, so its measurement does not depend on
// what is not known yet.
struct FinishedJob {
  JobIndex index = 0;
  std::string_view id;  // the trace's job id
  Name vc;              // the trace's VC name
  const SimJob* job = nullptr;
  const JobRecord* record = nullptr;
  Time window_start = 0;
  Time window_end = 0;
  Time run_end = kMaxTime;
};

// Takes the jobs a replay is done with, in no particular order.
class JobSink {
 public:
  virtual ~JobSink() = default;
  // An error stops the replay with it.
  virtual absl::Status Add(const FinishedJob& job) = 0;
};

class Engine {
 public:
  Engine(const SpecInfo& info, ClusterBackend* backend, EngineOptions options);
  // Replays `trace`. Errors: kInvalidArgument for a node event naming an unknown node;
  // any backend error (a bug) or a failed invariant check as is. The result holds every
  // job and record (`jobs`, `records`, by trace order).
  absl::StatusOr<EngineResult> Run(const Trace& trace, const std::vector<NodeEvent>& node_events);
  // Replays the jobs of `feed` (`facts` must be the feed's): each job is read when the
  // clock reaches its submit time and handed to `sink` once final, so memory holds the jobs
  // in flight (plus 4 bytes a job), not the trace. The result's `jobs` and `records` stay
  // empty. Errors as above, and the feed's and the sink's.
  absl::StatusOr<EngineResult> Run(JobFeed* feed, const TraceFacts& facts,
                                   const std::vector<NodeEvent>& node_events, JobSink* sink);

 private:
  const SpecInfo& info_;
  ClusterBackend* backend_;
  EngineOptions options_;
};

}  // namespace hived::sim

#endif  // HIVED_SIM_ENGINE_ENGINE_H_

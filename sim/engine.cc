#include "sim/engine.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "sim/csv.h"
#include "sim/event_queue.h"

namespace hived::sim {
namespace {

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

// GPUs a reserved job waits for: free now, and released at the running jobs' expected ends.
// Returns when `need` GPUs are free (kMaxTime: never) and how many are free then.
BackfillOracle::Reservation EarliestFree(std::vector<std::pair<Time, int64_t>>* releases,
                                         int64_t free, int64_t need, Time now) {
  std::sort(releases->begin(), releases->end());
  BackfillOracle::Reservation r{now, free - need};
  size_t i = 0;
  while (free < need && i < releases->size()) {
    r.shadow = (*releases)[i].first;
    while (i < releases->size() && (*releases)[i].first == r.shadow)
      free += (*releases)[i++].second;
  }
  if (free < need) return {kMaxTime, 0};
  r.extra = free - need;
  return r;
}

// GPUs free at `t` given the releases (sorted) and those free now.
int64_t FreeAt(const std::vector<std::pair<Time, int64_t>>& releases, int64_t free, Time t) {
  for (const auto& [end, gpus] : releases) {
    if (end > t) break;
    free += gpus;
  }
  return free;
}

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
  std::vector<uint64_t> shape_;
  std::vector<std::string> reject_;
  std::vector<std::unique_ptr<QueuePolicy>> queues_;
  std::vector<int64_t> waiting_;      // per VC
  std::vector<int64_t> waiting_opp_;  // per VC: waiting jobs of priority -1
  std::vector<bool> dirty_;
  std::vector<int32_t> dirty_list_;
  std::vector<JobIndex> deferred_;  // requeued during a pass
  std::vector<JobIndex> running_;
  std::vector<int32_t> running_pos_;
  int64_t queued_gpus_ = 0;
  // GPUs of waiting jobs per VC: guaranteed (priority >= 0) and opportunistic.
  std::vector<int64_t> queued_gpus_vc_;
  std::vector<int64_t> queued_opp_gpus_vc_;
  void ChangeQueued(const SimJob& job, int64_t sign) {
    queued_gpus_ += sign * job.gpus;
    auto& per_vc = job.priority < 0 ? queued_opp_gpus_vc_ : queued_gpus_vc_;
    per_vc[static_cast<size_t>(job.vc)] += sign * job.gpus;
  }
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

void Replay::RunningAdd(JobIndex j) {
  running_pos_[static_cast<size_t>(j)] = static_cast<int32_t>(running_.size());
  running_.push_back(j);
}

void Replay::RunningRemove(JobIndex j) {
  const int32_t pos = running_pos_[static_cast<size_t>(j)];
  const JobIndex last = running_.back();
  running_[static_cast<size_t>(pos)] = last;
  running_pos_[static_cast<size_t>(last)] = pos;
  running_.pop_back();
  running_pos_[static_cast<size_t>(j)] = -1;
}

TimelineRow Replay::Sample(Time t) const {
  TimelineRow row;
  row.time = t;
  row.used_gpus = backend_->used_gpus();
  row.fragmented_free_gpus = backend_->fragmented_free_gpus();
  row.running_jobs = static_cast<int64_t>(running_.size());
  row.queued_jobs = queued_total_;
  row.queued_per_vc = waiting_;
  return row;
}

void Replay::ThinTimeline() {
  // Rows sit at start + k x interval; keeping even k doubles the interval.
  size_t kept = 0;
  for (size_t i = 0; i < r_.timeline.size(); i += 2) r_.timeline[kept++] = r_.timeline[i];
  r_.timeline.resize(kept);
  sample_interval_ = SaturatingAdd(sample_interval_, sample_interval_);
}

void Replay::Advance(Time t) {
  if (t > last_time_) {
    const double dt = static_cast<double>(t - last_time_);
    const int64_t used = backend_->used_gpus();
    r_.used_gpu_seconds += static_cast<double>(used) * dt;
    r_.fragmented_gpu_seconds += static_cast<double>(backend_->fragmented_free_gpus()) * dt;
    r_.servable_gpu_seconds +=
        static_cast<double>(std::min(r_.total_gpus, used + queued_gpus_)) * dt;
    r_.reachable_servable_gpu_seconds += static_cast<double>(used + ReachableQueuedGpus(used)) * dt;
    const double in_window = InWindow(last_time_, t);
    if (in_window > 0) {
      r_.window_used_gpu_seconds += static_cast<double>(used_total_) * in_window;
      const int64_t lent =
          std::min(idle_guarantee_total_, std::max<int64_t>(0, borrowed_total_ - unreserved_));
      if (lent > 0) {
        lent_share_integral_ +=
            static_cast<double>(lent) / static_cast<double>(idle_guarantee_total_) * in_window;
      }
    }
  }
  while (next_sample_ < t) {
    r_.timeline.push_back(Sample(next_sample_));
    if (r_.timeline.size() >= kMaxTimelineRows) ThinTimeline();
    next_sample_ = SaturatingAdd(r_.timeline.back().time, sample_interval_);
  }
  last_time_ = std::max(last_time_, t);
  now_ = t;
}

int64_t Replay::ReachableQueuedGpus(int64_t used) const {
  // What the waiting jobs could use now under the policy's rules, by GPU counts: a VC's
  // guaranteed jobs its idle guarantee (pool policies: up to its maximum, anywhere idle;
  // overflow: anywhere idle), opportunistic jobs any idle GPU (private: their own VC's).
  const int64_t idle = std::max<int64_t>(0, r_.total_gpus - used);
  if (idle == 0 || queued_gpus_ == 0) return 0;
  const bool pool = backend_->ReleaseHelpsAllVcs();
  const bool shares = backend_->SharesIdleCells();
  int64_t reach = 0;
  for (size_t v = 0; v < queued_gpus_vc_.size(); ++v) {
    const int64_t q = queued_gpus_vc_[v];
    const int64_t q_opp = queued_opp_gpus_vc_[v];
    if (q == 0 && q_opp == 0) continue;
    const int64_t max = pool ? backend_->VcMaxGpus(static_cast<int32_t>(v)) : -1;
    const int64_t own = std::max<int64_t>(0, (max >= 0 ? max : vc_guarantee_[v]) - vc_used_[v]);
    reach += (options_.opportunistic_overflow && shares) ? q : std::min(q, own);
    reach += shares ? q_opp : std::min(q_opp, own);
  }
  return std::min(reach, idle);
}

void Replay::ChangeVcUsed(int32_t vc, int64_t delta) {
  const size_t v = static_cast<size_t>(vc);
  const int64_t used = vc_used_[v];
  const int64_t g = vc_guarantee_[v];
  const double dt = InWindow(vc_since_[v], now_);
  VcUsage& u = r_.vc_usage[v];
  u.used += static_cast<double>(used) * dt;
  u.borrowed += static_cast<double>(std::max<int64_t>(0, used - g)) * dt;
  u.lent += static_cast<double>(std::max<int64_t>(0, g - used)) *
            (lent_share_integral_ - vc_lent_mark_[v]);
  vc_since_[v] = now_;
  vc_lent_mark_[v] = lent_share_integral_;
  if (delta == 0) return;
  borrowed_total_ -= std::max<int64_t>(0, used - g);
  idle_guarantee_total_ -= std::max<int64_t>(0, g - used);
  vc_used_[v] += delta;
  used_total_ += delta;
  borrowed_total_ += std::max<int64_t>(0, vc_used_[v] - g);
  idle_guarantee_total_ += std::max<int64_t>(0, g - vc_used_[v]);
}

BackfillOracle::Reservation Replay::Reserve(JobIndex head) const {
  const SimJob& job = r_.jobs[static_cast<size_t>(head)];
  const size_t v = static_cast<size_t>(job.vc);
  const int64_t max = backend_->VcMaxGpus(job.vc);
  const int64_t cap = max >= 0 ? max : vc_guarantee_[v];
  // The VC's own limit: its running jobs' GPUs come back at their expected ends.
  std::vector<std::pair<Time, int64_t>> own;
  std::vector<std::pair<Time, int64_t>> all;
  const bool pool = backend_->ReleaseHelpsAllVcs();
  for (JobIndex j : running_) {
    const JobRecord& rec = r_.records[static_cast<size_t>(j)];
    const SimJob& other = r_.jobs[static_cast<size_t>(j)];
    const std::pair<Time, int64_t> release{SaturatingAdd(rec.last_start, rec.remaining),
                                           other.gpus};
    if (other.vc == job.vc) own.push_back(release);
    if (pool) all.push_back(release);
  }
  Reservation r = EarliestFree(&own, cap - vc_used_[v], job.gpus, now_);
  if (r.shadow <= now_) {
    // Enough GPUs by count, yet it waits: they are fragmented (or the cluster's are). It
    // is expected to fit at the next release; until then nothing may take GPUs it needs.
    Time next = kMaxTime;
    for (const auto& [end, gpus] : pool ? all : own) next = std::min(next, end);
    return {next, 0};
  }
  if (!pool || r.shadow == kMaxTime) return r;
  // A shared pool: the cluster's free GPUs limit too.
  const int64_t free_now = backend_->total_gpus() - backend_->used_gpus();
  const Reservation c = EarliestFree(&all, free_now, job.gpus, now_);
  if (c.shadow == kMaxTime) return c;
  r.shadow = std::max(r.shadow, c.shadow);
  r.extra = std::min(FreeAt(own, cap - vc_used_[v], r.shadow), FreeAt(all, free_now, r.shadow)) -
            job.gpus;
  return r;
}

void Replay::ServeOrder(std::vector<int32_t>* batch) const {
  std::sort(batch->begin(), batch->end());
  if (!backend_->ServesLeastUsedFirst()) return;
  // Least used first: running GPUs / guarantee ascending (a VC without a guarantee that runs
  // anything comes last), ties in VC order. Cross-multiplied: exact, no floats; GPU counts
  // are below 2^31 (a config has at most 2^20 cells), so the products fit.
  auto less = [this](int32_t a, int32_t b) {
    const size_t x = static_cast<size_t>(a);
    const size_t y = static_cast<size_t>(b);
    return vc_used_[x] * vc_guarantee_[y] < vc_used_[y] * vc_guarantee_[x];
  };
  std::stable_sort(batch->begin(), batch->end(), less);
}

void Replay::MarkDirty(int32_t vc) {
  if (dirty_[static_cast<size_t>(vc)]) return;
  dirty_[static_cast<size_t>(vc)] = true;
  dirty_list_.push_back(vc);
}

void Replay::OnRelease(int32_t vc) {
  MarkDirty(vc);
  const bool all = backend_->ReleaseHelpsAllVcs() ||
                   (options_.opportunistic_overflow && backend_->SharesIdleCells());
  const bool opp = backend_->SharesIdleCells();
  for (size_t v = 0; v < waiting_.size(); ++v) {
    if (waiting_[v] > 0 && (all || (opp && waiting_opp_[v] > 0))) {
      MarkDirty(static_cast<int32_t>(v));
    }
  }
}

void Replay::Enqueue(JobIndex j) {
  const SimJob& job = r_.jobs[static_cast<size_t>(j)];
  JobRecord& rec = r_.records[static_cast<size_t>(j)];
  rec.state = JobState::kQueued;
  queues_[static_cast<size_t>(job.vc)]->Push({static_cast<uint64_t>(j), job.priority,
                                              static_cast<int32_t>(shape_[static_cast<size_t>(j)]),
                                              j});
  ++waiting_[static_cast<size_t>(job.vc)];
  if (job.priority < 0) ++waiting_opp_[static_cast<size_t>(job.vc)];
  ChangeQueued(job, +1);
  ++queued_total_;
  MarkDirty(job.vc);
}

void Replay::Start(JobIndex j, bool opportunistic) {
  const SimJob& job = r_.jobs[static_cast<size_t>(j)];
  JobRecord& rec = r_.records[static_cast<size_t>(j)];
  rec.state = JobState::kRunning;
  if (rec.first_start < 0) rec.first_start = now_;
  rec.last_start = now_;
  rec.opportunistic = opportunistic;
  ++rec.epoch;
  rec.nodes = backend_->JobNodes(j);
  --waiting_[static_cast<size_t>(job.vc)];
  if (job.priority < 0) --waiting_opp_[static_cast<size_t>(job.vc)];
  ChangeQueued(job, -1);
  --queued_total_;
  RunningAdd(j);
  ChangeVcUsed(job.vc, job.gpus);
  Event finish;
  finish.time = SaturatingAdd(now_, rec.remaining);
  finish.kind = EventKind::kFinish;
  finish.job = j;
  finish.epoch = rec.epoch;
  events_.Push(finish);
}

absl::Status Replay::Interrupt(JobIndex j, Interruption why) {
  const SimJob& job = r_.jobs[static_cast<size_t>(j)];
  JobRecord& rec = r_.records[static_cast<size_t>(j)];
  if (rec.state != JobState::kRunning) {
    return absl::InternalError(absl::StrCat("job ", j, " interrupted while not running"));
  }
  if (absl::Status s = backend_->Release(job); !s.ok()) return s;
  RunningRemove(j);
  ChangeVcUsed(job.vc, -job.gpus);
  const Time ran = now_ - rec.last_start;
  if (!options_.resume) {
    const double lost = static_cast<double>(job.gpus) * InWindow(rec.last_start, now_);
    (why == Interruption::kPreemption ? r_.window_lost_gpu_seconds
                                      : r_.window_failure_lost_gpu_seconds) += lost;
  }
  if (options_.resume) {
    // Resume from progress: only the remainder is left to run.
    rec.remaining = std::max<Time>(1, rec.remaining - ran);
  } else {
    // Restart from zero: `remaining` stays the full duration; the run so far is lost.
    const int64_t lost = static_cast<int64_t>(job.gpus) * ran;
    (why == Interruption::kPreemption ? rec.gpu_seconds_lost : rec.failure_gpu_seconds_lost) +=
        lost;
  }
  if (why == Interruption::kPreemption) {
    ++rec.preemptions;
  } else {
    ++rec.failures;
  }
  ++rec.epoch;  // the pending finish event is now stale
  return absl::OkStatus();
}

TryResult Replay::TryStart(JobIndex j) {
  if (!error_.ok()) return TryResult::kWaiting;
  SimJob& job = r_.jobs[static_cast<size_t>(j)];
  JobRecord& record = r_.records[static_cast<size_t>(j)];
  const Time delay = backend_->ReclaimAfter();
  job.may_reclaim = delay >= 0 && now_ - record.submit >= delay;
  if (delay >= 0 && !job.may_reclaim && !record.wake_pushed) {
    // Try it again when the delay is over, whatever else happens by then.
    record.wake_pushed = true;
    Event wake;
    wake.time = SaturatingAdd(record.submit, delay);
    wake.kind = EventKind::kWake;
    wake.job = j;
    events_.Push(wake);
  }
  absl::StatusOr<StartAttempt> a = backend_->TryStart(job, options_.opportunistic_overflow);
  if (!a.ok()) {
    error_ = a.status();
    return TryResult::kWaiting;
  }
  switch (a->kind) {
    case StartAttempt::Kind::kStarted:
      Start(j, a->opportunistic);
      return TryResult::kStarted;
    case StartAttempt::Kind::kPreempting: {
      for (JobIndex v : a->victims) {
        if (absl::Status s = Interrupt(v, Interruption::kPreemption); !s.ok()) {
          error_ = s;
          return TryResult::kWaiting;
        }
        deferred_.push_back(v);
      }
      if (absl::Status s = backend_->FinishPreemption(job); !s.ok()) {
        error_ = s;
        return TryResult::kWaiting;
      }
      Start(j, a->opportunistic);
      return TryResult::kStarted;
    }
    case StartAttempt::Kind::kWaiting:
      return TryResult::kWaiting;
    case StartAttempt::Kind::kInfeasible: {
      JobRecord& rec = r_.records[static_cast<size_t>(j)];
      rec.state = JobState::kRejected;
      rec.reason = a->reason.empty() ? "the scheduler says it can never be placed" : a->reason;
      --waiting_[static_cast<size_t>(job.vc)];
      if (job.priority < 0) --waiting_opp_[static_cast<size_t>(job.vc)];
      ChangeQueued(job, -1);
      --queued_total_;
      return TryResult::kRemoved;
    }
  }
  return TryResult::kWaiting;
}

absl::Status Replay::SchedulePasses() {
  std::vector<int32_t> batch;
  while (!dirty_list_.empty()) {
    batch.swap(dirty_list_);
    dirty_list_.clear();
    ServeOrder(&batch);
    for (int32_t vc : batch) dirty_[static_cast<size_t>(vc)] = false;
    for (int32_t vc : batch) {
      queues_[static_cast<size_t>(vc)]->Pass([this](JobIndex j) { return TryStart(j); });
      if (!error_.ok()) return error_;
      // Victims go back to their queues after the pass, at their original places.
      for (JobIndex v : deferred_) {
        Enqueue(v);
        OnRelease(r_.jobs[static_cast<size_t>(v)].vc);
      }
      deferred_.clear();
    }
    batch.clear();
  }
  return absl::OkStatus();
}

absl::Status Replay::Handle(const Event& e) {
  switch (e.kind) {
    case EventKind::kSubmit: {
      ++submitted_;
      const size_t j = static_cast<size_t>(e.job);
      if (!reject_[j].empty()) {
        r_.records[j].state = JobState::kRejected;
        r_.records[j].reason = reject_[j];
        return absl::OkStatus();
      }
      Enqueue(e.job);
      return absl::OkStatus();
    }
    case EventKind::kFinish: {
      const size_t j = static_cast<size_t>(e.job);
      JobRecord& rec = r_.records[j];
      if (rec.state != JobState::kRunning || rec.epoch != e.epoch) return absl::OkStatus();
      if (absl::Status s = backend_->Release(r_.jobs[j]); !s.ok()) return s;
      RunningRemove(e.job);
      ChangeVcUsed(r_.jobs[j].vc, -r_.jobs[j].gpus);
      rec.state = JobState::kCompleted;
      rec.end = now_;
      rec.remaining = 0;
      OnRelease(r_.jobs[j].vc);
      return absl::OkStatus();
    }
    case EventKind::kNodeDown: {
      ++r_.node_down_events;
      if (absl::Status s = backend_->SetNodeHealthy(e.node, false); !s.ok()) return s;
      std::vector<JobIndex> killed;
      for (JobIndex j : running_) {
        const std::vector<int32_t>& nodes = r_.records[static_cast<size_t>(j)].nodes;
        if (std::binary_search(nodes.begin(), nodes.end(), e.node)) killed.push_back(j);
      }
      std::sort(killed.begin(), killed.end());
      for (JobIndex j : killed) {
        if (absl::Status s = Interrupt(j, Interruption::kFailure); !s.ok()) return s;
        Enqueue(j);
        OnRelease(r_.jobs[static_cast<size_t>(j)].vc);
      }
      if (options_.mttr_hours > 0 && options_.mtbf_hours > 0) {
        Event up;
        up.time = SaturatingAdd(now_, sampler_.Next(options_.mttr_hours * 3600.0));
        up.kind = EventKind::kNodeUp;
        up.node = e.node;
        up.epoch = 1;  // drawn by the failure model
        events_.Push(up);
      }
      return absl::OkStatus();
    }
    case EventKind::kWake: {
      const size_t j = static_cast<size_t>(e.job);
      if (r_.records[j].state == JobState::kQueued) MarkDirty(r_.jobs[j].vc);
      return absl::OkStatus();
    }
    case EventKind::kNodeUp: {
      if (absl::Status s = backend_->SetNodeHealthy(e.node, true); !s.ok()) return s;
      for (size_t v = 0; v < waiting_.size(); ++v) {
        if (waiting_[v] > 0) MarkDirty(static_cast<int32_t>(v));
      }
      if (e.epoch == 1 && options_.mtbf_hours > 0) {
        const Time next = SaturatingAdd(now_, sampler_.Next(options_.mtbf_hours * 3600.0));
        if (next <= last_submit_) {
          Event down;
          down.time = next;
          down.kind = EventKind::kNodeDown;
          down.node = e.node;
          down.epoch = 1;
          events_.Push(down);
        }
      }
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<EngineResult> Replay::Run(const Trace& trace,
                                         const std::vector<NodeEvent>& node_events) {
  ResolveJobs(trace, info_, &r_.jobs, &reject_);
  const size_t n = r_.jobs.size();
  r_.records.resize(n);
  r_.total_gpus = backend_->total_gpus();
  r_.cluster_gpus = info_.TotalGpus();
  running_pos_.assign(n, -1);
  const size_t vcs = static_cast<size_t>(info_.vc_count());
  vc_used_.assign(vcs, 0);
  vc_since_.assign(vcs, 0);
  vc_lent_mark_.assign(vcs, 0);
  r_.vc_usage.assign(vcs, {});
  unreserved_ = r_.cluster_gpus;
  vc_guarantee_ = info_.VcGuarantees(NamedPinnedCells(trace));  // pinned cells jobs name count
  for (size_t v = 0; v < vcs; ++v) {
    unreserved_ -= vc_guarantee_[v];
    idle_guarantee_total_ += vc_guarantee_[v];
  }
  unreserved_ = std::max<int64_t>(0, unreserved_);
  r_.vc_guaranteed_gpus = vc_guarantee_;
  for (size_t v = 0; v < vcs; ++v) queues_.push_back(MakeQueuePolicy(options_.queue, this));
  waiting_.assign(vcs, 0);
  waiting_opp_.assign(vcs, 0);
  queued_gpus_vc_.assign(vcs, 0);
  queued_opp_gpus_vc_.assign(vcs, 0);
  dirty_.assign(vcs, false);

  // Shapes: jobs with equal members, leaf type and priority are interchangeable.
  absl::flat_hash_map<std::string, uint64_t> shapes;
  shape_.resize(n);
  for (size_t j = 0; j < n; ++j) {
    const SimJob& job = r_.jobs[j];
    std::string key = absl::StrCat(job.priority, "/", job.gpu_type, "/", job.pinned_cell);
    for (const GroupMember& m : job.members)
      absl::StrAppend(&key, "/", m.pod_number, "x", m.leaf_cell_number);
    shape_[j] = shapes.try_emplace(key, shapes.size()).first->second;
  }

  // Node names -> ids, for node events.
  absl::flat_hash_map<std::string, int32_t> node_ids;
  const std::vector<std::string>& nodes = backend_->nodes();
  for (size_t i = 0; i < nodes.size(); ++i) node_ids.emplace(nodes[i], static_cast<int32_t>(i));

  events_.Reserve(n + node_events.size() + nodes.size() + 16);
  for (size_t j = 0; j < n; ++j) {
    JobRecord& rec = r_.records[j];
    rec.submit = trace.jobs[j].submit_time;
    rec.remaining = trace.jobs[j].duration;
    Event e;
    e.time = rec.submit;
    e.kind = EventKind::kSubmit;
    e.job = static_cast<JobIndex>(j);
    events_.Push(e);
  }
  for (const NodeEvent& ne : node_events) {
    // A physical node name also stands for its copies in the private clusters.
    auto it = node_ids.find(ne.node);
    std::optional<std::vector<int32_t>> ids =
        it != node_ids.end() ? std::vector<int32_t>{it->second} : backend_->NodesNamed(ne.node);
    if (!ids) {
      return absl::InvalidArgumentError(
          absl::StrCat(ne.where.empty() ? absl::StrCat("node event ", ne.line) : ne.where,
                       ": unknown node '", ne.node, "' (not in the config)"));
    }
    for (int32_t id : *ids) {
      Event e;
      e.time = ne.time;
      e.kind = ne.up ? EventKind::kNodeUp : EventKind::kNodeDown;
      e.node = id;
      events_.Push(e);
    }
  }
  const Time first_submit = n > 0 ? trace.jobs.front().submit_time : 0;
  last_submit_ = n > 0 ? trace.jobs.back().submit_time : 0;
  if (options_.mtbf_hours > 0 && options_.mttr_hours > 0) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      Event down;
      down.time = SaturatingAdd(first_submit, sampler_.Next(options_.mtbf_hours * 3600.0));
      if (down.time > last_submit_) continue;
      down.kind = EventKind::kNodeDown;
      down.node = static_cast<int32_t>(i);
      down.epoch = 1;
      events_.Push(down);
    }
  }
  r_.start = events_.empty() ? 0 : events_.Top().time;
  last_time_ = r_.start;
  next_sample_ = r_.start;
  // The work's span: submissions, each job's end if it ran at once, node events.
  Time longest = 0;
  Time span_end = last_submit_;
  for (const TraceJob& t : trace.jobs) longest = std::max(longest, t.duration);
  span_end = SaturatingAdd(span_end, longest);
  if (!node_events.empty()) span_end = std::max(span_end, node_events.back().time);
  sample_interval_ = options_.timeline_interval > 0
                         ? options_.timeline_interval
                         : std::max<Time>(60, (span_end - r_.start) / 2000);
  window_start_ = options_.window_start >= 0 ? options_.window_start : first_submit;
  window_end_ = options_.window_end >= 0 ? options_.window_end
                                         : SaturatingAdd(last_submit_, std::max<Time>(1, longest));
  for (Time& since : vc_since_) since = r_.start;

  int64_t since_check = 0;
  int64_t since_progress = 0;
  while (!events_.empty()) {
    // A wake-up for a job that no longer waits is dropped before it can move the clock.
    if (events_.Top().kind == EventKind::kWake &&
        r_.records[static_cast<size_t>(events_.Top().job)].state != JobState::kQueued) {
      events_.Pop();
      continue;
    }
    const Time t = events_.Top().time;
    if (options_.horizon >= 0 && t > options_.horizon) break;
    Advance(t);
    while (!events_.empty() && events_.Top().time == t) {
      const Event e = events_.Pop();
      if (absl::Status s = Handle(e); !s.ok()) return s;
      ++r_.events;
      if (options_.check_invariants_every > 0 && ++since_check >= options_.check_invariants_every) {
        since_check = 0;
        if (absl::Status s = backend_->CheckInvariants(); !s.ok()) {
          return absl::InternalError(
              absl::StrCat("invariant check failed at t=", t, ": ", s.message()));
        }
      }
    }
    if (absl::Status s = SchedulePasses(); !s.ok()) return s;
    if (options_.progress && ++since_progress >= 4096) {
      since_progress = 0;
      options_.progress(n == 0 ? 1.0 : static_cast<double>(submitted_) / static_cast<double>(n));
    }
  }
  // Stopped by the horizon: the run covers up to it; otherwise up to the last event.
  r_.end = !events_.empty() ? std::max(last_time_, options_.horizon) : last_time_;
  Advance(r_.end);
  r_.timeline.push_back(Sample(r_.end));
  for (int32_t v = 0; v < static_cast<int32_t>(vcs); ++v) ChangeVcUsed(v, 0);
  // A horizon cuts the window: what follows it was not simulated.
  if (!events_.empty()) window_end_ = std::min(window_end_, r_.end);
  r_.window_start = window_start_;
  r_.window_end = std::max(window_start_, window_end_);
  if (options_.check_invariants_every > 0) {
    if (absl::Status s = backend_->CheckInvariants(); !s.ok()) {
      return absl::InternalError(absl::StrCat("invariant check failed at the end: ", s.message()));
    }
  }
  r_.schedule_calls = backend_->schedule_calls();
  if (options_.progress) options_.progress(1.0);
  return std::move(r_);
}

}  // namespace

std::string_view JobStateName(JobState state) {
  switch (state) {
    case JobState::kPending:
      return "pending";
    case JobState::kQueued:
      return "queued";
    case JobState::kRunning:
      return "running";
    case JobState::kCompleted:
      return "completed";
    case JobState::kRejected:
      return "rejected";
  }
  return "pending";
}

void ResolveJobs(const Trace& trace, const SpecInfo& info, std::vector<SimJob>* jobs,
                 std::vector<std::string>* reject_reasons) {
  jobs->clear();
  reject_reasons->clear();
  jobs->reserve(trace.jobs.size());
  reject_reasons->reserve(trace.jobs.size());
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    const TraceJob& t = trace.jobs[i];
    SimJob job;
    job.index = static_cast<JobIndex>(i);
    job.priority = t.priority;
    job.gpus = t.total_gpus;
    job.gpu_type = t.gpu_type;
    job.pinned_cell = t.pinned_cell;
    std::string reason;
    const int32_t vc = info.VcIndex(t.vc);
    job.vc = vc;  // -1 for a VC the config lacks: the job is rejected at submission
    if (vc < 0) {
      reason = absl::StrCat("VC '", t.vc, "' is not in the config");
    } else {
      const int32_t node = info.VcNodeGpus(vc, t.gpu_type);
      if (t.pods == 0) {
        if (node <= 0) {
          reason = absl::StrCat("VC ", t.vc, " has no nodes",
                                t.gpu_type.empty() ? "" : " of type " + t.gpu_type);
        } else {
          job.members = SplitIntoPods(t.total_gpus, node);
        }
      } else {
        job.members = {{t.pods, t.gpus_per_pod}};
        const int32_t largest = info.MaxNodeGpus(t.gpu_type);
        if (t.gpus_per_pod > largest) {
          reason = absl::StrCat("a pod needs ", t.gpus_per_pod, " GPUs but the largest node has ",
                                largest);
        }
      }
      // Pinned cells serve only the jobs that name them: a job larger than its pinned cell,
      // or than the VC's virtual cells, can never run under hived or private.
      if (reason.empty() && t.priority >= 0 && !t.pinned_cell.empty() &&
          t.total_gpus > info.PinnedGpus(t.pinned_cell)) {
        reason = absl::StrCat("needs ", t.total_gpus, " GPUs but pinned cell ", t.pinned_cell,
                              " has only ", info.PinnedGpus(t.pinned_cell));
      } else if (reason.empty() && t.priority >= 0 && t.pinned_cell.empty() &&
                 t.total_gpus > info.VcVirtualGpus(vc)) {
        reason = absl::StrCat("needs ", t.total_gpus, " GPUs but VC ", t.vc, " reserves only ",
                              info.VcVirtualGpus(vc), " in virtual cells");
      }
      if (reason.empty() && t.total_gpus > info.TotalGpus()) {
        reason = absl::StrCat("needs ", t.total_gpus, " GPUs but the cluster has only ",
                              info.TotalGpus());
      }
    }
    if (job.members.empty()) job.members = {{1, std::max(1, t.total_gpus)}};
    jobs->push_back(std::move(job));
    reject_reasons->push_back(std::move(reason));
  }
}

Engine::Engine(const SpecInfo& info, ClusterBackend* backend, EngineOptions options)
    : info_(info), backend_(backend), options_(std::move(options)) {}

absl::StatusOr<EngineResult> Engine::Run(const Trace& trace,
                                         const std::vector<NodeEvent>& node_events) {
  Replay replay(info_, backend_, options_);
  return replay.Run(trace, node_events);
}

}  // namespace hived::sim

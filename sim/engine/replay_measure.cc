#include <algorithm>
#include <utility>
#include <vector>

#include "sim/engine/replay.h"

namespace hived::sim::replay_internal {
namespace {

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

}  // namespace

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
  // overflow: anywhere idle), opportunistic jobs any idle GPU (a cluster per VC: their own VC's).
  const int64_t idle = std::max<int64_t>(0, r_.total_gpus - used);
  if (idle == 0 || queued_gpus_ == 0) return 0;
  const bool pool = backend_->ReleaseHelpsAllVcs();
  const bool shares = backend_->SharesIdleCells();
  int64_t reach = 0;
  for (int32_t vc : waiting_vcs_) {  // the others queue nothing
    const size_t v = static_cast<size_t>(vc);
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
  const SimJob& job = Job(head);
  const size_t v = static_cast<size_t>(job.vc);
  const int64_t max = backend_->VcMaxGpus(job.vc);
  const int64_t cap = max >= 0 ? max : vc_guarantee_[v];
  // The VC's own limit: its running jobs' GPUs come back at their expected ends.
  std::vector<std::pair<Time, int64_t>> own;
  std::vector<std::pair<Time, int64_t>> all;
  const bool pool = backend_->ReleaseHelpsAllVcs();
  for (JobIndex j : running_) {
    const LiveJob& live = Live(j);
    const JobRecord& rec = live.rec;
    const SimJob& other = live.job;
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

}  // namespace hived::sim::replay_internal

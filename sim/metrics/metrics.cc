#include "sim/metrics/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/common/csv.h"

namespace hived::sim {
namespace {

constexpr const char* kSizeLabels[] = {"1", "2-7", "8", "9-32", ">32"};
constexpr size_t kSizeClasses = 5;
size_t SizeClassOf(int32_t gpus) {
  if (gpus <= 1) return 0;
  if (gpus < 8) return 1;
  if (gpus == 8) return 2;
  if (gpus <= 32) return 3;
  return 4;
}

}  // namespace

SummaryBuilder::SummaryBuilder(const SpecInfo& info, const RunInfo& run_info)
    : info_(info), run_info_(run_info) {
  const size_t vcs = static_cast<size_t>(info.vc_count());
  groups_.resize(vcs + 1);
  samples_.resize(vcs + 1);
  for (GroupSamples& g : samples_) g.by_size.resize(kSizeClasses);
  slo_.assign(vcs + 1, std::vector<SloShare>(run_info.slo_seconds.size()));
  lost_.assign(vcs + 1, 0);
  failure_lost_.assign(vcs + 1, 0);
}

void SummaryBuilder::Add(const FinishedJob& f) {
  const SimJob& job = *f.job;
  const JobRecord& rec = *f.record;
  const size_t vcs = groups_.size() - 1;
  const size_t slos = run_info_.slo_seconds.size();
  const Time measure_from = SaturatingAdd(f.window_start, std::max<Time>(0, run_info_.warmup));
  ++added_;
  const bool measured =
      rec.submit >= measure_from && rec.submit < f.window_end && rec.state != JobState::kRejected;
  // Jobs of VCs unknown to the config count under "all" only (they are rejected).
  const size_t own = job.vc >= 0 ? static_cast<size_t>(job.vc) : vcs;
  const size_t targets[2] = {own, vcs};
  for (size_t k = own == vcs ? 1 : 0; k < 2; ++k) {
    const size_t g = targets[k];
    GroupSummary& gs = groups_[g];
    ++gs.submitted;
    if (measured) {
      ++gs.measured;
      const int64_t wait = rec.first_start >= 0 ? rec.first_start - rec.submit
                                                : std::max<Time>(0, f.run_end - rec.submit);
      // Samples go to the job's own VC only; "all" gathers the VCs' samples in Finish
      // (measured jobs always have a VC), so each sample is stored once.
      GroupSamples& x = samples_[g];
      if (g == own && rec.first_start >= 0) {
        x.delays.push_back(wait);
        x.finals.push_back(rec.last_start - rec.submit);
        x.by_size[SizeClassOf(job.gpus)].push_back(wait);
      } else if (g == own) {
        x.censored.push_back(wait);
      }
      for (size_t i = 0; i < slos; ++i) {
        SloShare& share = slo_[g][i];
        const bool met = rec.first_start >= 0 && wait <= run_info_.slo_seconds[i];
        if (rec.first_start >= 0 || wait > run_info_.slo_seconds[i]) ++share.jobs;
        if (met) ++share.met;
      }
      if (g == own && rec.state == JobState::kCompleted) x.jcts.push_back(rec.end - rec.submit);
    }
    switch (rec.state) {
      case JobState::kCompleted:
        ++gs.completed;
        break;
      case JobState::kQueued:
      case JobState::kPending:
        ++gs.queued;
        break;
      case JobState::kRunning:
        ++gs.running;
        break;
      case JobState::kRejected:
        ++gs.rejected;
        break;
    }
    gs.preemptions += rec.preemptions;
    gs.failures += rec.failures;
    lost_[g] += rec.gpu_seconds_lost();
    failure_lost_[g] += rec.failure_gpu_seconds_lost();
  }
  if (rec.state == JobState::kRejected) ++reasons_[std::string(rec.reason())];
}

Summary Summarize(const EngineResult& result, const SpecInfo& info, const RunInfo& run_info) {
  SummaryBuilder builder(info, run_info);
  for (size_t j = 0; j < result.jobs.size(); ++j) {
    FinishedJob f;
    f.index = static_cast<JobIndex>(j);
    f.job = &result.jobs[j];
    f.record = &result.records[j];
    f.window_start = result.window_start;
    f.window_end = result.window_end;
    f.run_end = result.end;
    builder.Add(f);
  }
  return builder.Finish(result, static_cast<int64_t>(result.jobs.size()));
}

Summary SummaryBuilder::Finish(const EngineResult& result, int64_t jobs) {
  const RunInfo& run_info = run_info_;
  const SpecInfo& info = info_;
  Summary s;
  s.info = run_info;
  s.total_gpus = result.total_gpus;
  s.start = result.start;
  s.end = result.end;
  const double span = static_cast<double>(std::max<Time>(1, result.end - result.start));
  const double capacity = static_cast<double>(std::max<int64_t>(1, result.total_gpus)) * span;
  s.utilisation = result.used_gpu_seconds / capacity;
  s.allocation_rate =
      result.servable_gpu_seconds > 0 ? result.used_gpu_seconds / result.servable_gpu_seconds : 1.0;
  s.reachable_allocation_rate =
      result.reachable_servable_gpu_seconds > 0
          ? result.used_gpu_seconds / result.reachable_servable_gpu_seconds
          : 1.0;
  s.fragmentation = result.fragmented_gpu_seconds / capacity;
  s.mean_fragmented_free_gpus = result.fragmented_gpu_seconds / span;
  s.events = result.events;
  s.schedule_calls = result.schedule_calls;
  s.node_down_events = result.node_down_events;
  WindowSummary& w = s.window;
  w.start = result.window_start;
  w.end = result.window_end;
  w.cluster_gpus = result.cluster_gpus;
  const double window = static_cast<double>(std::max<Time>(1, w.end - w.start));
  const double window_capacity = static_cast<double>(std::max<int64_t>(1, w.cluster_gpus)) * window;
  w.used_gpu_hours = result.window_used_gpu_seconds / 3600.0;
  w.lost_gpu_hours = result.window_lost_gpu_seconds / 3600.0;
  w.failure_lost_gpu_hours = result.window_failure_lost_gpu_seconds / 3600.0;
  w.utilisation = result.window_used_gpu_seconds / window_capacity;
  w.useful_utilisation = (result.window_used_gpu_seconds - result.window_lost_gpu_seconds -
                          result.window_failure_lost_gpu_seconds) /
                         window_capacity;

  const size_t vcs = static_cast<size_t>(info.vc_count());
  const size_t slos = run_info.slo_seconds.size();
  std::vector<GroupSummary>& groups = groups_;
  // One metric's statistics of group g ("all": every VC's samples, merged into its own and
  // freed from the VCs').
  auto stats = [&](size_t g, auto&& pick) {
    if (g == vcs) {
      for (size_t v = 0; v < vcs; ++v) pick(vcs).MergeFrom(&pick(v));
    }
    Stats out = pick(g).Compute();
    if (g == vcs) pick(g).Clear();
    return out;
  };
  for (size_t g = 0; g <= vcs; ++g) {
    GroupSummary& gs = groups[g];
    gs.name = g < vcs ? info.vc_name(static_cast<int32_t>(g)) : "all";
    gs.reserved_gpus = g < vcs ? info.VcReservedGpus(static_cast<int32_t>(g)) : result.total_gpus;
    gs.queuing_delay = stats(g, [&](size_t v) -> Samples& { return samples_[v].delays; });
    gs.queuing_delay_final = stats(g, [&](size_t v) -> Samples& { return samples_[v].finals; });
    gs.censored_wait = stats(g, [&](size_t v) -> Samples& { return samples_[v].censored; });
    gs.jct = stats(g, [&](size_t v) -> Samples& { return samples_[v].jcts; });
    for (size_t c = 0; c < kSizeClasses; ++c) {
      gs.by_size.push_back(
          {kSizeLabels[c], stats(g, [&](size_t v) -> Samples& { return samples_[v].by_size[c]; })});
    }
    for (size_t i = 0; i < slos; ++i) {
      SloShare& x = slo_[g][i];
      x.seconds = run_info.slo_seconds[i];
      x.share = x.jobs > 0 ? static_cast<double>(x.met) / static_cast<double>(x.jobs) : 1.0;
      gs.slo.push_back(x);
    }
    if (g < vcs && g < result.vc_usage.size()) {
      const VcUsage& u = result.vc_usage[g];
      gs.guaranteed_gpus = result.vc_guaranteed_gpus[g];
      gs.used_gpu_hours = u.used / 3600.0;
      gs.borrowed_gpu_hours = u.borrowed / 3600.0;
      gs.lent_gpu_hours = u.lent / 3600.0;
      gs.reservation_utilisation =
          gs.guaranteed_gpus > 0
              ? (u.used - u.borrowed) / (static_cast<double>(gs.guaranteed_gpus) * window)
              : 0.0;
    } else if (g == vcs) {
      for (size_t v = 0; v < vcs && v < result.vc_usage.size(); ++v) {
        gs.guaranteed_gpus += result.vc_guaranteed_gpus[v];
        gs.used_gpu_hours += result.vc_usage[v].used / 3600.0;
        gs.borrowed_gpu_hours += result.vc_usage[v].borrowed / 3600.0;
        gs.lent_gpu_hours += result.vc_usage[v].lent / 3600.0;
      }
      gs.reservation_utilisation = gs.guaranteed_gpus > 0
                                       ? (gs.used_gpu_hours - gs.borrowed_gpu_hours) * 3600.0 /
                                             (static_cast<double>(gs.guaranteed_gpus) * window)
                                       : 0.0;
    }
    gs.gpu_hours_lost = static_cast<double>(lost_[g]) / 3600.0;
    gs.failure_gpu_hours_lost = static_cast<double>(failure_lost_[g]) / 3600.0;
    if (gs.submitted != gs.completed + gs.queued + gs.running + gs.rejected) {
      s.accounting_ok = false;
    }
  }
  // Per-VC counts must add up to the overall ones, and the overall to the trace.
  int64_t sum = 0;
  for (size_t g = 0; g < vcs; ++g) sum += groups[g].submitted;
  const int64_t unknown_vc = groups[vcs].submitted - sum;
  if (unknown_vc < 0 || groups[vcs].submitted != jobs || added_ != jobs) s.accounting_ok = false;
  s.all = std::move(groups[vcs]);
  groups.pop_back();
  s.vcs = std::move(groups);
  s.rejection_reasons.assign(reasons_.begin(), reasons_.end());
  std::sort(s.rejection_reasons.begin(), s.rejection_reasons.end(),
            [](const auto& a, const auto& b) {
              return a.second != b.second ? a.second > b.second : a.first < b.first;
            });
  return s;
}

void AddBaseline(const Summary& baseline, Summary* summary) {
  auto apply = [](const GroupSummary& b, GroupSummary* g) {
    if (b.queuing_delay.count > 0 || g->queuing_delay.count > 0) {
      g->baseline_mean_queuing_delay = b.queuing_delay.mean;
      g->sharing_anomaly = g->queuing_delay.mean - b.queuing_delay.mean;
      g->baseline_p95_queuing_delay = static_cast<double>(b.queuing_delay.p95);
      g->sharing_anomaly_p95 = static_cast<double>(g->queuing_delay.p95 - b.queuing_delay.p95);
    }
    if (b.jct.count > 0 || g->jct.count > 0) {
      g->baseline_mean_jct = b.jct.mean;
      g->sharing_anomaly_jct = g->jct.mean - b.jct.mean;
    }
  };
  for (GroupSummary& g : summary->vcs) {
    for (const GroupSummary& b : baseline.vcs) {
      if (b.name == g.name) apply(b, &g);
    }
  }
  apply(baseline.all, &summary->all);
}

}  // namespace hived::sim

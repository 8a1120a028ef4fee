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

// The 0-based index of the nearest-rank p-th percentile among `n` > 0 sorted values.
size_t NearestRankIndex(size_t n, double p) {
  const size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(n)));
  return std::clamp<size_t>(rank, 1, n) - 1;
}

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

Stats ComputeStats(std::vector<int64_t>* values) {
  Stats s;
  s.count = static_cast<int64_t>(values->size());
  if (values->empty()) return s;
  // Exact, so independent of the order: a long double holds integers below 2^64 exactly
  // (x86-64), and samples are at most 100 years (~2^32 s) each.
  long double sum = 0;
  for (int64_t v : *values) sum += v;
  s.mean = static_cast<double>(sum / static_cast<long double>(values->size()));
  // Selection instead of a sort, O(n): each percentile is selected among the values above
  // the previous one (ranks ascend).
  const size_t n = values->size();
  const auto first = values->begin();
  size_t from = 0;
  auto select = [&](double p) {
    const size_t i = NearestRankIndex(n, p);
    std::nth_element(first + static_cast<std::ptrdiff_t>(from),
                     first + static_cast<std::ptrdiff_t>(i), values->end());
    from = i;
    return (*values)[i];
  };
  s.p50 = select(50);
  s.p95 = select(95);
  s.p99 = select(99);
  s.max = *std::max_element(first + static_cast<std::ptrdiff_t>(from), values->end());
  return s;
}

Summary Summarize(const EngineResult& result, const SpecInfo& info, const RunInfo& run_info) {
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
  const Time measure_from = SaturatingAdd(w.start, std::max<Time>(0, run_info.warmup));

  const size_t vcs = static_cast<size_t>(info.vc_count());
  std::vector<GroupSummary> groups(vcs + 1);
  std::vector<std::vector<int64_t>> delays(vcs + 1);
  std::vector<std::vector<int64_t>> finals(vcs + 1);
  std::vector<std::vector<int64_t>> censored(vcs + 1);
  std::vector<std::vector<std::vector<int64_t>>> by_size(
      vcs + 1, std::vector<std::vector<int64_t>>(kSizeClasses));
  const size_t slos = run_info.slo_seconds.size();
  std::vector<std::vector<SloShare>> slo(vcs + 1, std::vector<SloShare>(slos));
  std::vector<std::vector<int64_t>> jcts(vcs + 1);
  std::vector<int64_t> lost(vcs + 1, 0);
  std::vector<int64_t> failure_lost(vcs + 1, 0);
  absl::flat_hash_map<std::string, int64_t> reasons;
  for (size_t j = 0; j < result.jobs.size(); ++j) {
    const SimJob& job = result.jobs[j];
    const JobRecord& rec = result.records[j];
    const bool measured =
        rec.submit >= measure_from && rec.submit < w.end && rec.state != JobState::kRejected;
    // Jobs of VCs unknown to the config count under "all" only (they are rejected).
    const size_t own = job.vc >= 0 ? static_cast<size_t>(job.vc) : vcs;
    const size_t targets[2] = {own, vcs};
    for (size_t k = own == vcs ? 1 : 0; k < 2; ++k) {
      const size_t g = targets[k];
      GroupSummary& gs = groups[g];
      ++gs.submitted;
      if (measured) {
        ++gs.measured;
        const int64_t wait = rec.first_start >= 0 ? rec.first_start - rec.submit
                                                  : std::max<Time>(0, result.end - rec.submit);
        // Samples go to the job's own VC only; "all" gathers the VCs' samples below (measured
        // jobs always have a VC), so each sample is stored once.
        if (g == own && rec.first_start >= 0) {
          delays[g].push_back(wait);
          finals[g].push_back(rec.last_start - rec.submit);
          by_size[g][SizeClassOf(job.gpus)].push_back(wait);
        } else if (g == own) {
          censored[g].push_back(wait);
        }
        for (size_t i = 0; i < slos; ++i) {
          SloShare& x = slo[g][i];
          const bool met = rec.first_start >= 0 && wait <= run_info.slo_seconds[i];
          if (rec.first_start >= 0 || wait > run_info.slo_seconds[i]) ++x.jobs;
          if (met) ++x.met;
        }
        if (g == own && rec.state == JobState::kCompleted) {
          jcts[g].push_back(rec.end - rec.submit);
        }
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
      lost[g] += rec.gpu_seconds_lost();
      failure_lost[g] += rec.failure_gpu_seconds_lost();
    }
    if (rec.state == JobState::kRejected) ++reasons[std::string(rec.reason())];
  }
  for (size_t g = 0; g <= vcs; ++g) {
    GroupSummary& gs = groups[g];
    if (g == vcs) {
      // "all": every VC's samples, in any order (ComputeStats does not depend on it). Each
      // VC's vector is freed as it is gathered.
      auto gather = [&](auto&& pick) {
        std::vector<int64_t>& all = pick(vcs);
        size_t total = all.size();
        for (size_t v = 0; v < vcs; ++v) total += pick(v).size();
        all.reserve(total);
        for (size_t v = 0; v < vcs; ++v) {
          all.insert(all.end(), pick(v).begin(), pick(v).end());
          std::vector<int64_t>().swap(pick(v));
        }
      };
      gather([&](size_t v) -> std::vector<int64_t>& { return delays[v]; });
      gather([&](size_t v) -> std::vector<int64_t>& { return finals[v]; });
      gather([&](size_t v) -> std::vector<int64_t>& { return censored[v]; });
      gather([&](size_t v) -> std::vector<int64_t>& { return jcts[v]; });
      for (size_t c = 0; c < kSizeClasses; ++c) {
        gather([&](size_t v) -> std::vector<int64_t>& { return by_size[v][c]; });
      }
    }
    gs.name = g < vcs ? info.vc_name(static_cast<int32_t>(g)) : "all";
    gs.reserved_gpus = g < vcs ? info.VcReservedGpus(static_cast<int32_t>(g)) : result.total_gpus;
    gs.queuing_delay = ComputeStats(&delays[g]);
    gs.queuing_delay_final = ComputeStats(&finals[g]);
    gs.censored_wait = ComputeStats(&censored[g]);
    gs.jct = ComputeStats(&jcts[g]);
    for (size_t c = 0; c < kSizeClasses; ++c) {
      gs.by_size.push_back({kSizeLabels[c], ComputeStats(&by_size[g][c])});
    }
    for (size_t i = 0; i < slos; ++i) {
      SloShare& x = slo[g][i];
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
    gs.gpu_hours_lost = static_cast<double>(lost[g]) / 3600.0;
    gs.failure_gpu_hours_lost = static_cast<double>(failure_lost[g]) / 3600.0;
    if (gs.submitted != gs.completed + gs.queued + gs.running + gs.rejected) {
      s.accounting_ok = false;
    }
  }
  // Per-VC counts must add up to the overall ones, and the overall to the trace.
  int64_t sum = 0;
  for (size_t g = 0; g < vcs; ++g) sum += groups[g].submitted;
  const int64_t unknown_vc = groups[vcs].submitted - sum;
  if (unknown_vc < 0 || groups[vcs].submitted != static_cast<int64_t>(result.jobs.size())) {
    s.accounting_ok = false;
  }
  s.all = std::move(groups[vcs]);
  groups.pop_back();
  s.vcs = std::move(groups);
  s.rejection_reasons.assign(reasons.begin(), reasons.end());
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

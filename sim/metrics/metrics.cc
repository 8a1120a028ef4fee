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

constexpr char kSchema[] = "hived-sim.summary/1";

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

void WriteOptional(JsonWriter* w, std::string_view key, const std::optional<double>& v) {
  if (v) {
    w->Double(key, *v);
  } else {
    w->Null(key);
  }
}

std::optional<double> OptionalFromJson(const JsonValue& v, std::string_view key) {
  const JsonValue* x = v.Find(key);
  if (x && x->type == JsonValue::Type::kNumber) return x->number;
  return std::nullopt;
}

void WriteStats(JsonWriter* w, std::string_view key, const Stats& s, bool full) {
  w->BeginObject(key);
  w->Int("count", s.count);
  w->Double("mean", s.mean);
  w->Int("p50", s.p50);
  w->Int("p95", s.p95);
  if (full) {
    w->Int("p99", s.p99);
    w->Int("max", s.max);
  }
  w->EndObject();
}

void WriteGroup(JsonWriter* w, const GroupSummary& g, std::string_view key) {
  w->BeginObject(key);
  w->String("name", g.name);
  w->Int("reserved_gpus", g.reserved_gpus);
  w->Int("submitted", g.submitted);
  w->Int("completed", g.completed);
  w->Int("queued", g.queued);
  w->Int("running", g.running);
  w->Int("rejected", g.rejected);
  WriteStats(w, "queuing_delay", g.queuing_delay, true);
  WriteStats(w, "jct", g.jct, false);
  w->Int("preemptions", g.preemptions);
  w->Double("gpu_hours_lost", g.gpu_hours_lost);
  w->Int("failures", g.failures);
  w->Double("failure_gpu_hours_lost", g.failure_gpu_hours_lost);
  WriteOptional(w, "baseline_mean_queuing_delay", g.baseline_mean_queuing_delay);
  WriteOptional(w, "sharing_anomaly", g.sharing_anomaly);
  WriteOptional(w, "baseline_p95_queuing_delay", g.baseline_p95_queuing_delay);
  WriteOptional(w, "sharing_anomaly_p95", g.sharing_anomaly_p95);
  WriteOptional(w, "baseline_mean_jct", g.baseline_mean_jct);
  WriteOptional(w, "sharing_anomaly_jct", g.sharing_anomaly_jct);
  w->Int("guaranteed_gpus", g.guaranteed_gpus);
  w->Int("measured", g.measured);
  WriteStats(w, "queuing_delay_final", g.queuing_delay_final, true);
  WriteStats(w, "censored_wait", g.censored_wait, true);
  w->BeginArray("delay_by_size");
  for (const SizeClass& c : g.by_size) {
    w->BeginObject();
    w->String("gpus", c.label);
    w->Int("count", c.queuing_delay.count);
    w->Double("mean", c.queuing_delay.mean);
    w->Int("p95", c.queuing_delay.p95);
    w->EndObject();
  }
  w->EndArray();
  w->BeginArray("slo");
  for (const SloShare& x : g.slo) {
    w->BeginObject();
    w->Int("seconds", x.seconds);
    w->Int("jobs", x.jobs);
    w->Int("met", x.met);
    w->Double("share", x.share);
    w->EndObject();
  }
  w->EndArray();
  w->Double("used_gpu_hours", g.used_gpu_hours);
  w->Double("borrowed_gpu_hours", g.borrowed_gpu_hours);
  w->Double("lent_gpu_hours", g.lent_gpu_hours);
  w->Double("reservation_utilisation", g.reservation_utilisation);
  w->EndObject();
}

Stats StatsFromJson(const JsonValue* v) {
  Stats s;
  if (!v) return s;
  s.count = static_cast<int64_t>(v->NumberOr("count", 0));
  s.mean = v->NumberOr("mean", 0);
  s.p50 = static_cast<int64_t>(v->NumberOr("p50", 0));
  s.p95 = static_cast<int64_t>(v->NumberOr("p95", 0));
  s.p99 = static_cast<int64_t>(v->NumberOr("p99", 0));
  s.max = static_cast<int64_t>(v->NumberOr("max", 0));
  return s;
}

GroupSummary GroupFromJson(const JsonValue& v) {
  GroupSummary g;
  g.name = v.StringOr("name", "");
  g.reserved_gpus = static_cast<int64_t>(v.NumberOr("reserved_gpus", 0));
  g.submitted = static_cast<int64_t>(v.NumberOr("submitted", 0));
  g.completed = static_cast<int64_t>(v.NumberOr("completed", 0));
  g.queued = static_cast<int64_t>(v.NumberOr("queued", 0));
  g.running = static_cast<int64_t>(v.NumberOr("running", 0));
  g.rejected = static_cast<int64_t>(v.NumberOr("rejected", 0));
  g.queuing_delay = StatsFromJson(v.Find("queuing_delay"));
  g.jct = StatsFromJson(v.Find("jct"));
  g.preemptions = static_cast<int64_t>(v.NumberOr("preemptions", 0));
  g.gpu_hours_lost = v.NumberOr("gpu_hours_lost", 0);
  g.failures = static_cast<int64_t>(v.NumberOr("failures", 0));
  g.failure_gpu_hours_lost = v.NumberOr("failure_gpu_hours_lost", 0);
  g.baseline_mean_queuing_delay = OptionalFromJson(v, "baseline_mean_queuing_delay");
  g.sharing_anomaly = OptionalFromJson(v, "sharing_anomaly");
  g.baseline_p95_queuing_delay = OptionalFromJson(v, "baseline_p95_queuing_delay");
  g.sharing_anomaly_p95 = OptionalFromJson(v, "sharing_anomaly_p95");
  g.baseline_mean_jct = OptionalFromJson(v, "baseline_mean_jct");
  g.sharing_anomaly_jct = OptionalFromJson(v, "sharing_anomaly_jct");
  g.guaranteed_gpus = static_cast<int64_t>(v.NumberOr("guaranteed_gpus", 0));
  g.measured = static_cast<int64_t>(v.NumberOr("measured", 0));
  g.queuing_delay_final = StatsFromJson(v.Find("queuing_delay_final"));
  g.censored_wait = StatsFromJson(v.Find("censored_wait"));
  if (const JsonValue* a = v.Find("delay_by_size"); a && a->type == JsonValue::Type::kArray) {
    for (const JsonValue& c : a->array) {
      SizeClass x;
      x.label = c.StringOr("gpus", "");
      x.queuing_delay = StatsFromJson(&c);
      g.by_size.push_back(std::move(x));
    }
  }
  if (const JsonValue* a = v.Find("slo"); a && a->type == JsonValue::Type::kArray) {
    for (const JsonValue& c : a->array) {
      g.slo.push_back({static_cast<Time>(c.NumberOr("seconds", 0)),
                       static_cast<int64_t>(c.NumberOr("jobs", 0)),
                       static_cast<int64_t>(c.NumberOr("met", 0)), c.NumberOr("share", 0)});
    }
  }
  g.used_gpu_hours = v.NumberOr("used_gpu_hours", 0);
  g.borrowed_gpu_hours = v.NumberOr("borrowed_gpu_hours", 0);
  g.lent_gpu_hours = v.NumberOr("lent_gpu_hours", 0);
  g.reservation_utilisation = v.NumberOr("reservation_utilisation", 0);
  return g;
}

std::string CsvQuote(std::string_view s) {
  if (s.find_first_of(",\"\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c == '\n' ? ' ' : c;
  }
  out += "\"";
  return out;
}

std::string Hours(double seconds) { return FormatFixed(seconds / 3600.0, 2); }

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

std::string SummaryToJson(const Summary& s) {
  JsonWriter w;
  w.BeginObject();
  w.String("schema", kSchema);
  w.BeginObject("run");
  w.String("policy", s.info.policy);
  w.String("queue", s.info.queue);
  w.String("config", s.info.config);
  w.String("trace", s.info.trace);
  w.String("format", s.info.format);
  w.Int("seed", static_cast<int64_t>(s.info.seed));
  w.Bool("resume", s.info.resume);
  w.Bool("opportunistic_overflow", s.info.opportunistic_overflow);
  w.Int("skipped_rows", s.info.skipped_rows);
  w.Double("load_scale", s.info.load_scale);
  w.Int("warmup", s.info.warmup);
  w.EndObject();
  w.BeginObject("cluster");
  w.Int("total_gpus", s.total_gpus);
  w.Int("start", s.start);
  w.Int("end", s.end);
  w.Double("utilisation", s.utilisation);
  w.Double("allocation_rate", s.allocation_rate);
  w.Double("reachable_allocation_rate", s.reachable_allocation_rate);
  w.Double("fragmentation", s.fragmentation);
  w.Double("mean_fragmented_free_gpus", s.mean_fragmented_free_gpus);
  w.Int("events", s.events);
  w.Int("schedule_calls", s.schedule_calls);
  w.Int("node_down_events", s.node_down_events);
  w.EndObject();
  w.BeginObject("window");
  w.Int("start", s.window.start);
  w.Int("end", s.window.end);
  w.Int("cluster_gpus", s.window.cluster_gpus);
  w.Double("used_gpu_hours", s.window.used_gpu_hours);
  w.Double("lost_gpu_hours", s.window.lost_gpu_hours);
  w.Double("failure_lost_gpu_hours", s.window.failure_lost_gpu_hours);
  w.Double("utilisation", s.window.utilisation);
  w.Double("useful_utilisation", s.window.useful_utilisation);
  w.EndObject();
  w.BeginObject("accounting");
  w.Int("submitted", s.all.submitted);
  w.Int("completed", s.all.completed);
  w.Int("queued", s.all.queued);
  w.Int("running", s.all.running);
  w.Int("rejected", s.all.rejected);
  w.Bool("balanced", s.accounting_ok);
  w.BeginArray("rejection_reasons");
  for (const auto& [reason, count] : s.rejection_reasons) {
    w.BeginObject();
    w.String("reason", reason);
    w.Int("jobs", count);
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  WriteGroup(&w, s.all, "overall");
  w.BeginArray("vcs");
  for (const GroupSummary& g : s.vcs) WriteGroup(&w, g, {});
  w.EndArray();
  w.EndObject();
  return w.Finish();
}

absl::StatusOr<Summary> SummaryFromJson(const JsonValue& json) {
  if (json.StringOr("schema", "") != kSchema) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a hived-sim summary (schema is not ", kSchema, ")"));
  }
  Summary s;
  if (const JsonValue* run = json.Find("run")) {
    s.info.policy = run->StringOr("policy", "");
    s.info.queue = run->StringOr("queue", "");
    s.info.config = run->StringOr("config", "");
    s.info.trace = run->StringOr("trace", "");
    const JsonValue* overflow = run->Find("opportunistic_overflow");
    s.info.opportunistic_overflow =
        overflow && overflow->type == JsonValue::Type::kBool && overflow->boolean;
  }
  if (const JsonValue* c = json.Find("cluster")) {
    s.total_gpus = static_cast<int64_t>(c->NumberOr("total_gpus", 0));
    s.start = static_cast<Time>(c->NumberOr("start", 0));
    s.end = static_cast<Time>(c->NumberOr("end", 0));
    s.utilisation = c->NumberOr("utilisation", 0);
    s.allocation_rate = c->NumberOr("allocation_rate", 0);
    s.reachable_allocation_rate = c->NumberOr("reachable_allocation_rate", 0);
    s.fragmentation = c->NumberOr("fragmentation", 0);
    s.schedule_calls = static_cast<int64_t>(c->NumberOr("schedule_calls", 0));
  }
  if (const JsonValue* c = json.Find("window")) {
    s.window.start = static_cast<Time>(c->NumberOr("start", 0));
    s.window.end = static_cast<Time>(c->NumberOr("end", 0));
    s.window.cluster_gpus = static_cast<int64_t>(c->NumberOr("cluster_gpus", 0));
    s.window.used_gpu_hours = c->NumberOr("used_gpu_hours", 0);
    s.window.lost_gpu_hours = c->NumberOr("lost_gpu_hours", 0);
    s.window.failure_lost_gpu_hours = c->NumberOr("failure_lost_gpu_hours", 0);
    s.window.utilisation = c->NumberOr("utilisation", 0);
    s.window.useful_utilisation = c->NumberOr("useful_utilisation", 0);
  }
  if (const JsonValue* a = json.Find("accounting")) {
    const JsonValue* b = a->Find("balanced");
    s.accounting_ok = b && b->type == JsonValue::Type::kBool && b->boolean;
  }
  if (const JsonValue* o = json.Find("overall")) s.all = GroupFromJson(*o);
  if (const JsonValue* v = json.Find("vcs"); v && v->type == JsonValue::Type::kArray) {
    for (const JsonValue& g : v->array) s.vcs.push_back(GroupFromJson(g));
  }
  return s;
}

namespace {

// Appends `s` as a CSV field (quoted as CsvQuote does), without a temporary when plain.
void AppendCsvField(std::string* out, std::string_view s) {
  // A plain loop: find_first_of over a set costs a search of the set per character.
  const bool plain =
      std::none_of(s.begin(), s.end(), [](char c) { return c == ',' || c == '"' || c == '\n'; });
  if (plain) {
    out->append(s);
  } else {
    out->append(CsvQuote(s));
  }
}

// Appends `v` in decimal, as absl::StrAppend writes it, through a stack buffer.
void AppendInt(std::string* out, int64_t v) {
  char digits[24];
  out->append(digits, std::to_chars(digits, digits + sizeof(digits), v).ptr);
}

// Appends `v` when `present`; an empty field otherwise.
void AppendIf(std::string* out, bool present, int64_t v) {
  if (present) AppendInt(out, v);
}

}  // namespace

std::string JobsCsv(const EngineResult& result, const Trace& trace,
                    const std::vector<std::string>& nodes) {
  std::string out =
      "job_id,vc,priority,gpus,pods,submit,first_start,end,queuing_delay,jct,state,"
      "preemptions,failures,gpu_hours_lost,opportunistic,nodes,reason\n";
  // Rows are written in place (no per-row temporaries): this runs once per job.
  out.reserve(result.jobs.size() * 96 + out.size());
  for (size_t j = 0; j < result.jobs.size(); ++j) {
    const SimJob& job = result.jobs[j];
    const JobRecord& rec = result.records[j];
    const TraceJob& t = trace.jobs[j];
    AppendCsvField(&out, t.id);
    out += ',';
    AppendCsvField(&out, t.vc);
    out += ',';
    AppendInt(&out, job.priority);
    out += ',';
    AppendInt(&out, job.gpus);
    out += ',';
    for (size_t m = 0; m < job.members.size(); ++m) {
      if (m > 0) out += '+';
      AppendInt(&out, job.members[m].pod_number);
      out += 'x';
      AppendInt(&out, job.members[m].leaf_cell_number);
    }
    out += ',';
    AppendInt(&out, rec.submit);
    out += ',';
    AppendIf(&out, rec.first_start >= 0, rec.first_start);
    out += ',';
    AppendIf(&out, rec.end >= 0, rec.end);
    out += ',';
    AppendIf(&out, rec.first_start >= 0, rec.first_start - rec.submit);
    out += ',';
    AppendIf(&out, rec.end >= 0, rec.end - rec.submit);
    out += ',';
    out += JobStateName(rec.state);
    out += ',';
    AppendInt(&out, rec.preemptions);
    out += ',';
    AppendInt(&out, rec.failures);
    out += ',';
    const int64_t lost = rec.gpu_seconds_lost() + rec.failure_gpu_seconds_lost();
    if (lost == 0) {
      out += "0.000";  // what FormatFixed writes for 0, without formatting
    } else {
      out += FormatFixed(static_cast<double>(lost) / 3600.0);
    }
    out += rec.opportunistic ? ",1," : ",0,";
    for (size_t n = 0; n < rec.nodes.size(); ++n) {
      if (n > 0) out += ';';
      out += nodes[static_cast<size_t>(rec.nodes[n])];
    }
    out += ',';
    AppendCsvField(&out, rec.reason());
    out += '\n';
  }
  return out;
}

std::string TimelineCsv(const EngineResult& result, const SpecInfo& info) {
  std::string out = "time,used_gpus,utilisation,fragmented_free_gpus,running_jobs,queued_jobs";
  for (int32_t v = 0; v < info.vc_count(); ++v) absl::StrAppend(&out, ",queued_", info.vc_name(v));
  out += "\n";
  const double total = static_cast<double>(std::max<int64_t>(1, result.total_gpus));
  for (const TimelineRow& row : result.timeline) {
    absl::StrAppend(&out, row.time, ",", row.used_gpus, ",",
                    FormatFixed(static_cast<double>(row.used_gpus) / total, 4), ",",
                    row.fragmented_free_gpus, ",", row.running_jobs, ",", row.queued_jobs);
    for (int64_t q : row.queued_per_vc) absl::StrAppend(&out, ",", q);
    out += "\n";
  }
  return out;
}

std::string SummaryTable(const Summary& s) {
  std::string out = absl::StrFormat(
      "policy %s, queue %s: %d jobs (%d completed, %d queued, %d running, %d rejected)%s\n"
      "cluster: %d GPUs, utilisation %s%%, allocation rate %s%%, fragmentation %s%%, "
      "%d scheduling decisions\n"
      "window [%d, %d) s: utilisation %s%% of %d GPUs, useful %s%%, lost %s GPU-hours\n",
      s.info.policy, s.info.queue, s.all.submitted, s.all.completed, s.all.queued, s.all.running,
      s.all.rejected, s.accounting_ok ? "" : "  ACCOUNTING MISMATCH", s.total_gpus,
      FormatFixed(100 * s.utilisation, 1), FormatFixed(100 * s.allocation_rate, 1),
      FormatFixed(100 * s.fragmentation, 1), s.schedule_calls, s.window.start, s.window.end,
      FormatFixed(100 * s.window.utilisation, 1), s.window.cluster_gpus,
      FormatFixed(100 * s.window.useful_utilisation, 1),
      FormatFixed(s.window.lost_gpu_hours + s.window.failure_lost_gpu_hours, 1));
  out += absl::StrFormat("%-12s %6s %7s %7s %5s %9s %9s %9s %9s %6s %9s\n", "vc", "gpus", "jobs",
                         "done", "rej", "wait-mean", "wait-p95", "wait-max", "jct-mean", "preem",
                         "anomaly");
  auto row = [&out](const GroupSummary& g) {
    out += absl::StrFormat(
        "%-12s %6d %7d %7d %5d %8sh %8sh %8sh %8sh %6d %9s\n", g.name.substr(0, 12),
        g.reserved_gpus, g.submitted, g.completed, g.rejected, Hours(g.queuing_delay.mean),
        Hours(static_cast<double>(g.queuing_delay.p95)),
        Hours(static_cast<double>(g.queuing_delay.max)), Hours(g.jct.mean), g.preemptions,
        g.sharing_anomaly ? Hours(*g.sharing_anomaly) + "h" : "-");
  };
  for (const GroupSummary& g : s.vcs) row(g);
  row(s.all);
  if (s.all.sharing_anomaly) {
    out += "anomaly = mean wait minus in a private cluster (> 0 = waits longer than private)\n";
  }
  if (s.all.censored_wait.count > 0) {
    out += absl::StrFormat(
        "%d jobs not started by the end (censored; not in the waits above): waited at least "
        "%sh on average\n",
        s.all.censored_wait.count, Hours(s.all.censored_wait.mean));
  }
  if (!s.rejection_reasons.empty()) {
    out += "rejected jobs by reason:\n";
    for (size_t i = 0; i < s.rejection_reasons.size() && i < 5; ++i) {
      out += absl::StrFormat("  %7d  %s\n", s.rejection_reasons[i].second,
                             s.rejection_reasons[i].first);
    }
  }
  return out;
}

}  // namespace hived::sim

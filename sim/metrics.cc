#include "sim/metrics.h"

#include <algorithm>
#include <cmath>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/csv.h"

namespace hived::sim {
namespace {

constexpr char kSchema[] = "hived-sim.summary/1";

int64_t NearestRank(const std::vector<int64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
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
  if (g.baseline_mean_queuing_delay) {
    w->Double("baseline_mean_queuing_delay", *g.baseline_mean_queuing_delay);
  } else {
    w->Null("baseline_mean_queuing_delay");
  }
  if (g.sharing_anomaly) {
    w->Double("sharing_anomaly", *g.sharing_anomaly);
  } else {
    w->Null("sharing_anomaly");
  }
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
  if (const JsonValue* b = v.Find("baseline_mean_queuing_delay");
      b && b->type == JsonValue::Type::kNumber) {
    g.baseline_mean_queuing_delay = b->number;
  }
  if (const JsonValue* a = v.Find("sharing_anomaly"); a && a->type == JsonValue::Type::kNumber) {
    g.sharing_anomaly = a->number;
  }
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
  std::sort(values->begin(), values->end());
  s.count = static_cast<int64_t>(values->size());
  if (values->empty()) return s;
  long double sum = 0;
  for (int64_t v : *values) sum += v;
  s.mean = static_cast<double>(sum / static_cast<long double>(values->size()));
  s.p50 = NearestRank(*values, 50);
  s.p95 = NearestRank(*values, 95);
  s.p99 = NearestRank(*values, 99);
  s.max = values->back();
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
  s.fragmentation = result.fragmented_gpu_seconds / capacity;
  s.mean_fragmented_free_gpus = result.fragmented_gpu_seconds / span;
  s.events = result.events;
  s.schedule_calls = result.schedule_calls;
  s.node_down_events = result.node_down_events;

  const size_t vcs = static_cast<size_t>(info.vc_count());
  std::vector<GroupSummary> groups(vcs + 1);
  std::vector<std::vector<int64_t>> delays(vcs + 1);
  std::vector<std::vector<int64_t>> jcts(vcs + 1);
  std::vector<int64_t> lost(vcs + 1, 0);
  std::vector<int64_t> failure_lost(vcs + 1, 0);
  absl::flat_hash_map<std::string, int64_t> reasons;
  for (size_t j = 0; j < result.jobs.size(); ++j) {
    const SimJob& job = result.jobs[j];
    const JobRecord& rec = result.records[j];
    // Jobs of VCs unknown to the config count under "all" only (they are rejected).
    const size_t own = job.vc >= 0 ? static_cast<size_t>(job.vc) : vcs;
    const size_t targets[2] = {own, vcs};
    for (size_t k = own == vcs ? 1 : 0; k < 2; ++k) {
      const size_t g = targets[k];
      GroupSummary& gs = groups[g];
      ++gs.submitted;
      switch (rec.state) {
        case JobState::kCompleted:
          ++gs.completed;
          jcts[g].push_back(rec.end - rec.submit);
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
      if (rec.first_start >= 0) delays[g].push_back(rec.first_start - rec.submit);
      gs.preemptions += rec.preemptions;
      gs.failures += rec.failures;
      lost[g] += rec.gpu_seconds_lost;
      failure_lost[g] += rec.failure_gpu_seconds_lost;
    }
    if (rec.state == JobState::kRejected) ++reasons[rec.reason];
  }
  for (size_t g = 0; g <= vcs; ++g) {
    GroupSummary& gs = groups[g];
    gs.name = g < vcs ? info.vc_name(static_cast<int32_t>(g)) : "all";
    gs.reserved_gpus = g < vcs ? info.VcReservedGpus(static_cast<int32_t>(g)) : result.total_gpus;
    gs.queuing_delay = ComputeStats(&delays[g]);
    gs.jct = ComputeStats(&jcts[g]);
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
    if (b.queuing_delay.count == 0 && g->queuing_delay.count == 0) return;
    g->baseline_mean_queuing_delay = b.queuing_delay.mean;
    g->sharing_anomaly = g->queuing_delay.mean - b.queuing_delay.mean;
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
  w.EndObject();
  w.BeginObject("cluster");
  w.Int("total_gpus", s.total_gpus);
  w.Int("start", s.start);
  w.Int("end", s.end);
  w.Double("utilisation", s.utilisation);
  w.Double("allocation_rate", s.allocation_rate);
  w.Double("fragmentation", s.fragmentation);
  w.Double("mean_fragmented_free_gpus", s.mean_fragmented_free_gpus);
  w.Int("events", s.events);
  w.Int("schedule_calls", s.schedule_calls);
  w.Int("node_down_events", s.node_down_events);
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
  }
  if (const JsonValue* c = json.Find("cluster")) {
    s.total_gpus = static_cast<int64_t>(c->NumberOr("total_gpus", 0));
    s.start = static_cast<Time>(c->NumberOr("start", 0));
    s.end = static_cast<Time>(c->NumberOr("end", 0));
    s.utilisation = c->NumberOr("utilisation", 0);
    s.allocation_rate = c->NumberOr("allocation_rate", 0);
    s.fragmentation = c->NumberOr("fragmentation", 0);
    s.schedule_calls = static_cast<int64_t>(c->NumberOr("schedule_calls", 0));
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

std::string JobsCsv(const EngineResult& result, const Trace& trace,
                    const std::vector<std::string>& nodes) {
  std::string out =
      "job_id,vc,priority,gpus,pods,submit,first_start,end,queuing_delay,jct,state,"
      "preemptions,failures,gpu_hours_lost,opportunistic,nodes,reason\n";
  for (size_t j = 0; j < result.jobs.size(); ++j) {
    const SimJob& job = result.jobs[j];
    const JobRecord& rec = result.records[j];
    const TraceJob& t = trace.jobs[j];
    std::string pods;
    for (const GroupMember& m : job.members) {
      absl::StrAppend(&pods, pods.empty() ? "" : "+", m.pod_number, "x", m.leaf_cell_number);
    }
    std::string where;
    for (int32_t n : rec.nodes) {
      absl::StrAppend(&where, where.empty() ? "" : ";", nodes[static_cast<size_t>(n)]);
    }
    const std::string& vc = t.vc;
    absl::StrAppend(
        &out, CsvQuote(t.id), ",", CsvQuote(vc), ",", job.priority, ",", job.gpus, ",", pods, ",",
        rec.submit, ",", rec.first_start >= 0 ? absl::StrCat(rec.first_start) : "", ",",
        rec.end >= 0 ? absl::StrCat(rec.end) : "", ",",
        rec.first_start >= 0 ? absl::StrCat(rec.first_start - rec.submit) : "", ",",
        rec.end >= 0 ? absl::StrCat(rec.end - rec.submit) : "", ",", Av(JobStateName(rec.state)),
        ",", rec.preemptions, ",", rec.failures, ",",
        FormatFixed(static_cast<double>(rec.gpu_seconds_lost + rec.failure_gpu_seconds_lost) /
                    3600.0),
        ",", rec.opportunistic ? 1 : 0, ",", where, ",", CsvQuote(rec.reason), "\n");
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
      "%d scheduling decisions\n",
      s.info.policy, s.info.queue, s.all.submitted, s.all.completed, s.all.queued, s.all.running,
      s.all.rejected, s.accounting_ok ? "" : "  ACCOUNTING MISMATCH", s.total_gpus,
      FormatFixed(100 * s.utilisation, 1), FormatFixed(100 * s.allocation_rate, 1),
      FormatFixed(100 * s.fragmentation, 1), s.schedule_calls);
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

// Summaries to and from JSON (summary.json): SummaryToJson and SummaryFromJson of
// sim/metrics/metrics.h.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/common/csv.h"
#include "sim/metrics/metrics.h"

namespace hived::sim {
namespace {

constexpr char kSchema[] = "hived-sim.summary/1";

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

}  // namespace

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
  if (const std::string schema = json.StringOr("schema", ""); schema != kSchema) {
    // fill and openb-replay write summaries of their own, without a schema: say so.
    const std::string command = json.StringOr("command", "");
    return absl::InvalidArgumentError(absl::StrCat(
        "not a hived-sim summary of a job replay (schema ",
        schema.empty() ? std::string("missing") : absl::StrCat("'", schema, "'"), ", expected ",
        kSchema, ")",
        command.empty() ? ""
                        : absl::StrCat(": it is `hived-sim ", command,
                                       "`'s summary; only `run` summaries of job traces "
                                       "(formats hived, philly) are read here")));
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

}  // namespace hived::sim

// The extender's counters in Prometheus' text format (version 0.0.4).
#include "server/metrics.h"

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"

namespace hived::server {
namespace {

std::string Number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

std::string EscapeLabel(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void ExtenderMetrics::CountDecision(const std::string& route, const std::string& outcome,
                                    double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  ++decisions_[{route, outcome}];
  auto& buckets = latency_buckets_[route];
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) ++buckets[i];
  }
  ++buckets[kBuckets.size()];
  latency_sum_[route] += seconds;
  ++latency_count_[route];
}

void ExtenderMetrics::CountPreemption(int64_t victim_pods) {
  std::lock_guard<std::mutex> lock(mu_);
  ++preemptions_;
  victim_pods_ += victim_pods;
}

void ExtenderMetrics::CountPodsRecovered(int64_t pods) {
  std::lock_guard<std::mutex> lock(mu_);
  pods_recovered_ += pods;
}

void ExtenderMetrics::CountExpiredReservations(int64_t reservations) {
  std::lock_guard<std::mutex> lock(mu_);
  expired_reservations_ += reservations;
}

void ExtenderMetrics::CountApiError(const std::string& kind) {
  std::lock_guard<std::mutex> lock(mu_);
  ++api_errors_[kind];
}

void ExtenderMetrics::CountForceBind(const std::string& outcome) {
  std::lock_guard<std::mutex> lock(mu_);
  ++force_binds_[outcome];
}

void ExtenderMetrics::AppendTo(std::string* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  absl::StrAppend(out,
                  "# HELP hived_extender_decisions_total Extender calls answered, by route and "
                  "outcome.\n# TYPE hived_extender_decisions_total counter\n");
  for (const auto& [key, n] : decisions_) {
    absl::StrAppend(out, "hived_extender_decisions_total{route=\"", EscapeLabel(key.first),
                    "\",outcome=\"", EscapeLabel(key.second), "\"} ", n, "\n");
  }
  absl::StrAppend(out,
                  "# HELP hived_extender_decision_seconds Time to answer an extender call.\n"
                  "# TYPE hived_extender_decision_seconds histogram\n");
  for (const auto& [route, buckets] : latency_buckets_) {
    std::string label = EscapeLabel(route);
    for (size_t i = 0; i < kBuckets.size(); ++i) {
      absl::StrAppend(out, "hived_extender_decision_seconds_bucket{route=\"", label, "\",le=\"",
                      Number(kBuckets[i]), "\"} ", buckets[i], "\n");
    }
    absl::StrAppend(out, "hived_extender_decision_seconds_bucket{route=\"", label,
                    "\",le=\"+Inf\"} ", buckets[kBuckets.size()], "\n");
    absl::StrAppend(out, "hived_extender_decision_seconds_sum{route=\"", label, "\"} ",
                    Number(latency_sum_.at(route)), "\n");
    absl::StrAppend(out, "hived_extender_decision_seconds_count{route=\"", label, "\"} ",
                    latency_count_.at(route), "\n");
  }
  absl::StrAppend(out,
                  "# HELP hived_extender_preemptions_total Preemptions started (preempt calls "
                  "that returned victims).\n# TYPE hived_extender_preemptions_total counter\n",
                  "hived_extender_preemptions_total ", preemptions_, "\n",
                  "# HELP hived_extender_victim_pods_total Victim pods returned by preempt.\n"
                  "# TYPE hived_extender_victim_pods_total counter\n",
                  "hived_extender_victim_pods_total ", victim_pods_, "\n",
                  "# HELP hived_extender_pods_recovered_total Pods replayed from their bind "
                  "info at start-up.\n# TYPE hived_extender_pods_recovered_total counter\n",
                  "hived_extender_pods_recovered_total ", pods_recovered_, "\n",
                  "# HELP hived_extender_expired_reservations_total Reservations of pods never "
                  "bound, given up at their deadline.\n"
                  "# TYPE hived_extender_expired_reservations_total counter\n",
                  "hived_extender_expired_reservations_total ", expired_reservations_, "\n",
                  "# HELP hived_extender_api_errors_total Failed calls and refused requests, "
                  "by kind.\n# TYPE hived_extender_api_errors_total counter\n");
  for (const auto& [kind, n] : api_errors_) {
    absl::StrAppend(out, "hived_extender_api_errors_total{kind=\"", EscapeLabel(kind), "\"} ", n,
                    "\n");
  }
  absl::StrAppend(out,
                  "# HELP hived_extender_force_binds_total Force binds of Binding pods (HiveD's "
                  "forcePodBindThreshold), by outcome.\n# TYPE hived_extender_force_binds_total "
                  "counter\n");
  for (const auto& [outcome, n] : force_binds_) {
    absl::StrAppend(out, "hived_extender_force_binds_total{outcome=\"", EscapeLabel(outcome),
                    "\"} ", n, "\n");
  }
}

}  // namespace hived::server

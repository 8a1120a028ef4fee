// server/metrics.h: the extender's counters, in Prometheus' text exposition format.
//
// Example:
//   ExtenderMetrics m;
//   m.CountDecision("filter", "placed", 0.0012);
//   std::string text;  m.AppendTo(&text);
//
// Thread safety: all methods lock an internal mutex.
#ifndef HIVED_SERVER_METRICS_H_
#define HIVED_SERVER_METRICS_H_

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace hived::server {

class ExtenderMetrics {
 public:
  // Upper bounds (seconds) of the decision latency histogram's buckets, +Inf implied.
  static constexpr std::array<double, 12> kBuckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                      0.01,   0.025,   0.05,   0.1,   0.25,   1.0};

  void CountDecision(const std::string& route, const std::string& outcome, double seconds);
  void CountPreemption(int64_t victim_pods);
  void CountPodsRecovered(int64_t pods);
  // Reservations (of pods filtered or preempting, never bound) given up at their deadline.
  void CountExpiredReservations(int64_t reservations);
  void CountApiError(const std::string& kind);
  // A force bind (HiveD's asynchronous bind of a Binding pod): "queued", "bound", "failed",
  // or "dropped" (the queue was full).
  void CountForceBind(const std::string& outcome);
  // The HELP/TYPE blocks and samples of every counter kept here.
  void AppendTo(std::string* out) const;

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, int64_t> decisions_;
  std::map<std::string, std::array<int64_t, kBuckets.size() + 1>> latency_buckets_;
  std::map<std::string, double> latency_sum_;
  std::map<std::string, int64_t> latency_count_;
  int64_t preemptions_ = 0;
  int64_t victim_pods_ = 0;
  int64_t pods_recovered_ = 0;
  int64_t expired_reservations_ = 0;
  std::map<std::string, int64_t> api_errors_;
  std::map<std::string, int64_t> force_binds_;
};

// A label value escaped for the text format (backslash, quote, newline).
std::string EscapeLabel(const std::string& value);

}  // namespace hived::server

#endif  // HIVED_SERVER_METRICS_H_

#include "sim/trace/gen_trace.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/common/csv.h"

namespace hived::sim {
namespace {

class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  double Uniform() { return static_cast<double>(gen_() >> 11) * 0x1.0p-53; }  // [0, 1)
  double Normal() {
    // Box-Muller, one value per call.
    const double u1 = 1.0 - Uniform();
    const double u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
  }
  double Exponential(double mean) { return -mean * std::log1p(-Uniform()); }

 private:
  std::mt19937_64 gen_;
};

struct SizeWeight {
  int32_t gpus;
  double weight;
};
// Philly's gang sizes (rows per size, from the trace README).
constexpr SizeWeight kSizes[] = {{1, 76627}, {2, 1818}, {4, 1870}, {8, 1643}, {12, 7},
                                 {16, 199},  {24, 7},   {32, 67},  {64, 6},   {128, 3}};

int32_t PowerOfTwoAtMost(int64_t n) {
  int32_t p = 1;
  while (static_cast<int64_t>(p) * 2 <= n) p *= 2;
  return p;
}

}  // namespace

absl::StatusOr<Trace> GenerateTrace(const SpecInfo& info, const GenTraceOptions& o) {
  if (o.jobs < 1 || o.jobs > kMaxGeneratedJobs) {
    return absl::InvalidArgumentError(
        absl::StrCat("--jobs must be in 1..", kMaxGeneratedJobs, ", got ", o.jobs,
                     " (a generated trace is built in memory, about 150 bytes a job)"));
  }
  if (o.load <= 0 && o.arrival_rate_per_hour <= 0) {
    return absl::InvalidArgumentError("--load (or --arrival-rate) must be positive");
  }
  if (o.median_duration <= 0 || o.p90_duration <= o.median_duration || o.max_duration < 1) {
    return absl::InvalidArgumentError("durations need 0 < median < p90 and max >= 1");
  }
  if (o.opportunistic_share < 0 || o.opportunistic_share > 1) {
    return absl::InvalidArgumentError("--opportunistic-share must be in [0, 1]");
  }
  // VCs and weights.
  std::vector<int32_t> vcs;
  std::vector<double> weights;
  if (o.vc_weights.empty()) {
    for (int32_t v = 0; v < info.vc_count(); ++v) {
      if (info.VcVirtualGpus(v) <= 0) continue;
      vcs.push_back(v);
      weights.push_back(static_cast<double>(info.VcVirtualGpus(v)));
    }
  } else {
    for (const auto& [name, w] : o.vc_weights) {
      const int32_t v = info.VcIndex(name);
      if (v < 0)
        return absl::InvalidArgumentError(absl::StrCat("--vc-mix: unknown VC '", name, "'"));
      if (w < 0)
        return absl::InvalidArgumentError(absl::StrCat("--vc-mix: negative weight for ", name));
      if (w == 0) continue;
      if (info.VcVirtualGpus(v) <= 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("--vc-mix: VC ", name, " has no virtual cells"));
      }
      vcs.push_back(v);
      weights.push_back(w);
    }
  }
  if (vcs.empty()) return absl::InvalidArgumentError("the config has no VC with virtual cells");
  double weight_sum = 0;
  for (double w : weights) weight_sum += w;
  double size_sum = 0;
  for (const SizeWeight& s : kSizes) size_sum += s.weight;

  const double mu = std::log(o.median_duration);
  const double sigma = (std::log(o.p90_duration) - mu) / 1.2815515655446004;
  Rng rng(o.seed);
  Trace trace;
  trace.jobs.reserve(static_cast<size_t>(o.jobs));
  long double gpu_seconds = 0;
  for (int64_t i = 0; i < o.jobs; ++i) {
    TraceJob job;
    job.id = absl::StrFormat("g%07d", i + 1);
    double pick = rng.Uniform() * weight_sum;
    size_t k = 0;
    while (k + 1 < vcs.size() && pick >= weights[k]) pick -= weights[k++];
    const int32_t vc = vcs[k];
    job.vc = trace.Intern(info.vc_name(vc));
    double s = rng.Uniform() * size_sum;
    int32_t gpus = kSizes[0].gpus;
    for (const SizeWeight& sw : kSizes) {
      if (s < sw.weight) {
        gpus = sw.gpus;
        break;
      }
      s -= sw.weight;
    }
    // One job never needs more than half its VC (at least one GPU): a gang as large as the
    // whole VC would wait for the VC to drain completely.
    const int64_t cap = std::max<int64_t>(1, info.VcVirtualGpus(vc) / 2);
    if (gpus > cap) gpus = PowerOfTwoAtMost(cap);
    const int32_t node = std::max(1, info.VcNodeGpus(vc, ""));
    if (gpus <= node) {
      job.pods = 1;
      job.gpus_per_pod = gpus;
    } else {
      // Gangs beyond a node: whole-node pods plus a remainder pod would need two members;
      // the own format has one, so round down to whole nodes.
      job.pods = gpus / node;
      job.gpus_per_pod = node;
    }
    job.total_gpus = job.pods * job.gpus_per_pod;
    const double d = std::exp(mu + sigma * rng.Normal());
    job.duration = std::clamp<int64_t>(static_cast<int64_t>(std::llround(d)), 1, o.max_duration);
    job.priority = rng.Uniform() < o.opportunistic_share ? kOpportunisticPriority : 0;
    gpu_seconds += static_cast<long double>(job.duration) * job.total_gpus;
    trace.jobs.push_back(std::move(job));
  }
  // Arrivals: a Poisson process whose mean gap gives the asked-for rate or load.
  double mean_gap = 0;
  if (o.arrival_rate_per_hour > 0) {
    mean_gap = 3600.0 / o.arrival_rate_per_hour;
  } else {
    // Load relative to the GPUs the drawn VCs reserve (their virtual cells), so that with the
    // default mix every VC sees about `load` of its own cells.
    double vc_gpus = 0;
    for (int32_t v : vcs) vc_gpus += static_cast<double>(info.VcVirtualGpus(v));
    const double span = static_cast<double>(gpu_seconds) / (o.load * std::max(1.0, vc_gpus));
    mean_gap = span / static_cast<double>(o.jobs);
  }
  double t = 0;
  for (TraceJob& job : trace.jobs) {
    job.submit_time = static_cast<Time>(std::llround(t));
    t += rng.Exponential(mean_gap);
  }
  return trace;
}

}  // namespace hived::sim

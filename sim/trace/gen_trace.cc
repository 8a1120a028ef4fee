#include "sim/trace/gen_trace.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

// What every job of one trace is drawn from: the VCs and their weights, the duration model.
struct Model {
  std::vector<int32_t> vcs;
  std::vector<double> weights;
  double weight_sum = 0;
  std::vector<SizeWeight> sizes;  // the gang-size mix
  double size_sum = 0;
  double mu = 0, sigma = 0;
};

// Checks the options and builds the model. Errors: those of GenerateTrace.
absl::StatusOr<Model> MakeModel(const SpecInfo& info, const GenTraceOptions& o) {
  if (o.jobs < 1 || o.jobs > kMaxGeneratedJobs) {
    return absl::InvalidArgumentError(
        absl::StrCat("--jobs must be in 1..", kMaxGeneratedJobs, ", got ", o.jobs));
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
  Model m;
  if (o.vc_weights.empty()) {
    for (int32_t v = 0; v < info.vc_count(); ++v) {
      if (info.VcVirtualGpus(v) <= 0) continue;
      m.vcs.push_back(v);
      m.weights.push_back(static_cast<double>(info.VcVirtualGpus(v)));
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
      m.vcs.push_back(v);
      m.weights.push_back(w);
    }
  }
  if (m.vcs.empty()) return absl::InvalidArgumentError("the config has no VC with virtual cells");
  for (double w : m.weights) m.weight_sum += w;
  if (o.size_weights.empty()) {
    m.sizes.assign(std::begin(kSizes), std::end(kSizes));
  } else {
    for (const auto& [gpus, w] : o.size_weights) {
      if (gpus < 1 || !(w >= 0)) {
        return absl::InvalidArgumentError(
            absl::StrCat("job-size mix: ", gpus, ":", w, " needs GPUs >= 1 and a weight >= 0"));
      }
      if (w > 0) m.sizes.push_back({gpus, w});
    }
    if (m.sizes.empty()) return absl::InvalidArgumentError("job-size mix: every weight is 0");
  }
  if (o.max_gang_gpus < 0) return absl::InvalidArgumentError("max gang GPUs must be >= 0");
  for (const SizeWeight& sw : m.sizes) m.size_sum += sw.weight;
  m.mu = std::log(o.median_duration);
  m.sigma = (std::log(o.p90_duration) - m.mu) / 1.2815515655446004;
  return m;
}

// One job but its id and submit time, as drawn.
struct DrawnJob {
  int32_t vc = 0;
  int32_t pods = 1, gpus_per_pod = 1, total_gpus = 1;
  int64_t duration = 1;
  int32_t priority = 0;
};

// Draws the next job from `rng` (VC, gang size, duration, priority, in that order).
DrawnJob DrawJob(const SpecInfo& info, const GenTraceOptions& o, const Model& m, Rng& rng) {
  DrawnJob job;
  double pick = rng.Uniform() * m.weight_sum;
  size_t k = 0;
  while (k + 1 < m.vcs.size() && pick >= m.weights[k]) pick -= m.weights[k++];
  job.vc = m.vcs[k];
  double s = rng.Uniform() * m.size_sum;
  int32_t gpus = m.sizes[0].gpus;
  for (const SizeWeight& sw : m.sizes) {
    if (s < sw.weight) {
      gpus = sw.gpus;
      break;
    }
    s -= sw.weight;
  }
  // One job never needs more than half its VC (at least one GPU): a gang as large as the
  // whole VC would wait for the VC to drain completely.
  const int64_t cap =
      o.max_gang_gpus > 0 ? o.max_gang_gpus : std::max<int64_t>(1, info.VcVirtualGpus(job.vc) / 2);
  if (gpus > cap) gpus = PowerOfTwoAtMost(cap);
  const int32_t node = std::max(1, info.VcNodeGpus(job.vc, ""));
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
  const double d = std::exp(m.mu + m.sigma * rng.Normal());
  job.duration = std::clamp<int64_t>(static_cast<int64_t>(std::llround(d)), 1, o.max_duration);
  job.priority = rng.Uniform() < o.opportunistic_share ? kOpportunisticPriority : 0;
  return job;
}

// The mean gap of the Poisson arrivals: from the rate, or from the load over the GPUs the
// drawn VCs reserve (their virtual cells), so that with the default mix every VC sees about
// `load` of its own cells.
double MeanGap(const SpecInfo& info, const GenTraceOptions& o, const Model& m,
               long double gpu_seconds) {
  if (o.arrival_rate_per_hour > 0) return 3600.0 / o.arrival_rate_per_hour;
  double vc_gpus = 0;
  for (int32_t v : m.vcs) vc_gpus += static_cast<double>(info.VcVirtualGpus(v));
  const double span = static_cast<double>(gpu_seconds) / (o.load * std::max(1.0, vc_gpus));
  return span / static_cast<double>(o.jobs);
}

std::string GeneratedJobId(int64_t i) { return absl::StrFormat("g%07d", i + 1); }

}  // namespace

absl::StatusOr<Trace> GenerateTrace(const SpecInfo& info, const GenTraceOptions& o) {
  absl::StatusOr<Model> m = MakeModel(info, o);
  if (!m.ok()) return m.status();
  Rng rng(o.seed);
  Trace trace;
  trace.jobs.reserve(static_cast<size_t>(o.jobs));
  long double gpu_seconds = 0;
  for (int64_t i = 0; i < o.jobs; ++i) {
    const DrawnJob d = DrawJob(info, o, *m, rng);
    TraceJob job;
    job.id = GeneratedJobId(i);
    job.vc = trace.Intern(info.vc_name(d.vc));
    job.pods = d.pods;
    job.gpus_per_pod = d.gpus_per_pod;
    job.total_gpus = d.total_gpus;
    job.duration = d.duration;
    job.priority = d.priority;
    gpu_seconds += static_cast<long double>(job.duration) * job.total_gpus;
    trace.jobs.push_back(std::move(job));
  }
  // Arrivals: a Poisson process whose mean gap gives the asked-for rate or load.
  const double mean_gap = MeanGap(info, o, *m, gpu_seconds);
  double t = 0;
  for (TraceJob& job : trace.jobs) {
    job.submit_time = static_cast<Time>(std::llround(t));
    t += rng.Exponential(mean_gap);
  }
  return trace;
}

absl::Status WriteGeneratedTrace(const SpecInfo& info, const GenTraceOptions& o,
                                 absl::FunctionRef<absl::Status(std::string_view)> write) {
  absl::StatusOr<Model> m = MakeModel(info, o);
  if (!m.ok()) return m.status();
  // Pass 1 draws every job for the offered GPU-seconds; `rng` then stands where
  // GenerateTrace draws its first arrival. Pass 2 draws the jobs again from a second
  // generator with the same seed, the arrivals from `rng`: the same numbers, in the same
  // roles, as GenerateTrace.
  Rng rng(o.seed);
  long double gpu_seconds = 0;
  for (int64_t i = 0; i < o.jobs; ++i) {
    const DrawnJob d = DrawJob(info, o, *m, rng);
    gpu_seconds += static_cast<long double>(d.duration) * d.total_gpus;
  }
  const double mean_gap = MeanGap(info, o, *m, gpu_seconds);
  Rng jobs_rng(o.seed);
  // TraceToCsv's layout; generated jobs name no pinned cell, so eight columns.
  std::string out = "job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration\n";
  constexpr size_t kChunk = size_t{1} << 20;
  double t = 0;
  for (int64_t i = 0; i < o.jobs; ++i) {
    const DrawnJob d = DrawJob(info, o, *m, jobs_rng);
    const Time submit = static_cast<Time>(std::llround(t));
    t += rng.Exponential(mean_gap);
    absl::StrAppend(&out, GeneratedJobId(i), ",", submit, ",", info.vc_name(d.vc), ",", d.priority,
                    ",", d.pods, ",", d.gpus_per_pod, ",,", d.duration, "\n");
    if (out.size() >= kChunk) {
      if (absl::Status s = write(out); !s.ok()) return s;
      out.clear();
    }
  }
  return write(out);
}

}  // namespace hived::sim

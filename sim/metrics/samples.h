// sim/metrics/samples.h: one metric's samples (waits, JCTs: non-negative seconds; the pod
// replay's slowdowns: `RealSamples`) kept as exact counts per distinct value, so their
// memory follows the distinct values (bounded by the time span the trace covers), not the
// number of jobs (issue 28 item 3: a 10M-job trace within 1 GB).
//
// Values are appended to a raw buffer; when it fills, it is sorted and merged into the sorted
// (value, count) runs. The buffer's limit is at least twice the runs' size, so each value
// costs O(log) amortised and the memory is O(distinct values + kMinBuffer).
// `Compute()` gives exactly what `ComputeStats` gives on the same values (nearest-rank
// percentiles, the mean of an exact sum, the max). `AtRank` and `SumAscending` give a
// figure's own definition on the sorted values (`RealSamples` holds doubles).
//
// Invariants (`CheckInvariants`): `runs_` is sorted by value, strictly ascending, with counts
// > 0; `buffer_.size()` <= the buffer's limit; `size()` is the sum of the counts plus the
// buffer's size.
//
// Example:
//   Samples waits;
//   waits.push_back(0);
//   waits.push_back(30);
//   Stats s = waits.Compute();  // count 2, p50 0, max 30
//
// Thread safety: not thread-safe; callers serialize.
#ifndef HIVED_SIM_METRICS_SAMPLES_H_
#define HIVED_SIM_METRICS_SAMPLES_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace hived::sim {

struct Stats {
  int64_t count = 0;
  double mean = 0;
  int64_t p50 = 0;
  int64_t p95 = 0;
  int64_t p99 = 0;
  int64_t max = 0;
};
// Nearest-rank statistics in O(n); reorders `values`.
Stats ComputeStats(std::vector<int64_t>* values);

// One metric's samples of type `T` (int64_t seconds; double for ratios such as slowdowns) as
// sorted (value, count) runs plus a raw buffer. Besides `Samples::Compute`, it answers the
// value at a rank and the sum in ascending order, for figures defined on the sorted samples
// (the pod replay's: sim/metrics/pod_summary.h).
template <typename T>
class SampleCounts {
 public:
  static constexpr size_t kMinBuffer = 1024;

  void push_back(T v) {
    buffer_.push_back(v);
    if (buffer_.size() >= Limit()) Compact();
  }
  size_t size() const { return counted_ + buffer_.size(); }
  bool empty() const { return size() == 0; }
  // Moves `other`'s samples into this one; `other` is left empty (its storage freed).
  void MergeFrom(SampleCounts* other);
  // The value at 0-based rank `rank` of the samples sorted ascending. REQUIRES: rank < size().
  T AtRank(size_t rank);
  // The largest sample. REQUIRES: !empty().
  T Max();
  // The samples summed as doubles one by one in ascending order (what a sorted vector's
  // loop gives, bit for bit: the order matters for doubles).
  double SumAscending();
  void Clear();  // and frees the storage
  // Distinct values held in the runs (for tests).
  size_t distinct() const { return runs_.size(); }
  bool CheckInvariants() const;

 protected:
  struct Run {
    T value;
    int64_t count;
  };
  size_t Limit() const { return std::max(kMinBuffer, 2 * runs_.size()); }
  // Sorts the buffer into the runs and empties it.
  void Compact();

  std::vector<T> buffer_;
  std::vector<Run> runs_;
  size_t counted_ = 0;  // the sum of the runs' counts
};

// Integer samples (waits, JCTs) with the job summary's statistics.
class Samples : public SampleCounts<int64_t> {
 public:
  // The statistics of every sample so far (`ComputeStats` of them, exactly).
  Stats Compute();
};

// Real samples (the pod replay's slowdowns).
using RealSamples = SampleCounts<double>;

extern template class SampleCounts<int64_t>;
extern template class SampleCounts<double>;

}  // namespace hived::sim

#endif  // HIVED_SIM_METRICS_SAMPLES_H_

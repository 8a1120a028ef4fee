// Samples (sim/metrics/samples.h): exact counts per distinct value, and ComputeStats.
#include "sim/metrics/samples.h"

#include <algorithm>
#include <cmath>
#include <iterator>

namespace hived::sim {
namespace {

// The 0-based index of the nearest-rank p-th percentile among `n` > 0 sorted values.
size_t NearestRankIndex(size_t n, double p) {
  const size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(n)));
  return std::clamp<size_t>(rank, 1, n) - 1;
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

template <typename T>
void SampleCounts<T>::Compact() {
  if (buffer_.empty()) return;
  std::sort(buffer_.begin(), buffer_.end());
  std::vector<Run> merged;
  merged.reserve(runs_.size() + buffer_.size());
  auto run = runs_.begin();
  auto add = [&merged](T value, int64_t count) {
    if (!merged.empty() && merged.back().value == value) {
      merged.back().count += count;
    } else {
      merged.push_back({value, count});
    }
  };
  for (T v : buffer_) {
    for (; run != runs_.end() && run->value <= v; ++run) add(run->value, run->count);
    add(v, 1);
  }
  for (; run != runs_.end(); ++run) add(run->value, run->count);
  counted_ += buffer_.size();
  buffer_.clear();
  merged.shrink_to_fit();
  runs_ = std::move(merged);
}

template <typename T>
void SampleCounts<T>::MergeFrom(SampleCounts* other) {
  Compact();
  other->Compact();
  if (runs_.empty()) {
    runs_ = std::move(other->runs_);
    counted_ = other->counted_;
  } else if (!other->runs_.empty()) {
    std::vector<Run> merged;
    merged.reserve(runs_.size() + other->runs_.size());
    std::merge(runs_.begin(), runs_.end(), other->runs_.begin(), other->runs_.end(),
               std::back_inserter(merged),
               [](const Run& a, const Run& b) { return a.value < b.value; });
    runs_.clear();
    for (const Run& r : merged) {
      if (!runs_.empty() && runs_.back().value == r.value) {
        runs_.back().count += r.count;
      } else {
        runs_.push_back(r);
      }
    }
    counted_ += other->counted_;
  }
  other->Clear();
}

template <typename T>
T SampleCounts<T>::AtRank(size_t rank) {
  Compact();
  size_t below = 0;  // samples in the runs before `run`
  for (const Run& run : runs_) {
    below += static_cast<size_t>(run.count);
    if (rank < below) return run.value;
  }
  return runs_.empty() ? T{} : runs_.back().value;  // only when the REQUIRES fails
}

template <typename T>
T SampleCounts<T>::Max() {
  Compact();
  return runs_.empty() ? T{} : runs_.back().value;
}

template <typename T>
double SampleCounts<T>::SumAscending() {
  Compact();
  double sum = 0;
  for (const Run& run : runs_) {
    const double v = static_cast<double>(run.value);
    for (int64_t k = 0; k < run.count; ++k) sum += v;
  }
  return sum;
}

Stats Samples::Compute() {
  Compact();
  Stats s;
  s.count = static_cast<int64_t>(counted_);
  if (runs_.empty()) return s;
  // The same exact sum as ComputeStats: value x count is an integer below 2^64.
  long double sum = 0;
  for (const Run& r : runs_) {
    sum += static_cast<long double>(r.value) * static_cast<long double>(r.count);
  }
  s.mean = static_cast<double>(sum / static_cast<long double>(counted_));
  // The value at a 0-based rank, walking the runs once (ranks ascend).
  auto run = runs_.begin();
  size_t below = 0;  // samples in the runs before `run`
  auto at = [&](size_t rank) {
    while (below + static_cast<size_t>(run->count) <= rank) {
      below += static_cast<size_t>(run->count);
      ++run;
    }
    return run->value;
  };
  s.p50 = at(NearestRankIndex(counted_, 50));
  s.p95 = at(NearestRankIndex(counted_, 95));
  s.p99 = at(NearestRankIndex(counted_, 99));
  s.max = runs_.back().value;
  return s;
}

template <typename T>
void SampleCounts<T>::Clear() {
  std::vector<T>().swap(buffer_);
  std::vector<Run>().swap(runs_);
  counted_ = 0;
}

template <typename T>
bool SampleCounts<T>::CheckInvariants() const {
  size_t counted = 0;
  for (size_t i = 0; i < runs_.size(); ++i) {
    if (runs_[i].count <= 0) return false;
    if (i > 0 && runs_[i - 1].value >= runs_[i].value) return false;
    counted += static_cast<size_t>(runs_[i].count);
  }
  return counted == counted_ && buffer_.size() <= Limit();
}

template class SampleCounts<int64_t>;
template class SampleCounts<double>;

}  // namespace hived::sim

#include "sim/metrics/samples.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "support/catch.h"

namespace hived::sim {
namespace {

void RequireSame(const Stats& a, const Stats& b) {
  REQUIRE(a.count == b.count);
  REQUIRE(a.mean == b.mean);  // exactly: both sums are exact
  REQUIRE(a.p50 == b.p50);
  REQUIRE(a.p95 == b.p95);
  REQUIRE(a.p99 == b.p99);
  REQUIRE(a.max == b.max);
}

TEST_CASE("Samples: statistics equal ComputeStats of the same values on any input", "[sim][unit]") {
  // Few distinct values (waits), many (JCTs), values past 32 bits, sizes around the buffer.
  std::mt19937_64 gen(11);
  for (size_t n : std::vector<size_t>{0, 1, 2, 99, 4095, 4096, 4097, 20000, 100000}) {
    for (uint64_t range : std::vector<uint64_t>{3, 1000, 1000000, uint64_t{1} << 40}) {
      CAPTURE(n, range);
      Samples samples;
      std::vector<int64_t> values;
      for (size_t i = 0; i < n; ++i) {
        const auto v = static_cast<int64_t>(gen() % range);
        samples.push_back(v);
        values.push_back(v);
        if (i % 1000 == 0) REQUIRE(samples.CheckInvariants());
      }
      REQUIRE(samples.size() == n);
      RequireSame(samples.Compute(), ComputeStats(&values));
      REQUIRE(samples.CheckInvariants());
    }
  }
}

TEST_CASE("Samples: memory follows the distinct values, not the count", "[sim][unit]") {
  Samples samples;
  for (int i = 0; i < 1000000; ++i) samples.push_back(i % 7 == 0 ? 3600 : 0);
  CHECK(samples.Compute().count == 1000000);
  CHECK(samples.distinct() == 2);
}

TEST_CASE("Samples: merged groups give the statistics of all their values", "[sim][unit]") {
  std::mt19937_64 gen(5);
  Samples all;
  std::vector<int64_t> values;
  for (int g = 0; g < 10; ++g) {
    Samples group;
    const int n = static_cast<int>(gen() % 9000);
    for (int i = 0; i < n; ++i) {
      const auto v = static_cast<int64_t>(gen() % 5000);
      group.push_back(v);
      values.push_back(v);
    }
    all.MergeFrom(&group);
    REQUIRE(group.size() == 0);
    REQUIRE(all.CheckInvariants());
  }
  RequireSame(all.Compute(), ComputeStats(&values));
}

template <typename T, typename Draw>
void CheckAgainstSorted(Draw draw) {
  std::mt19937_64 gen(17);
  for (size_t n : std::vector<size_t>{1, 2, 3, 1023, 1024, 5000}) {
    CAPTURE(n);
    SampleCounts<T> samples;
    std::vector<T> values;
    for (size_t i = 0; i < n; ++i) {
      const T v = draw(gen);
      samples.push_back(v);
      values.push_back(v);
    }
    std::sort(values.begin(), values.end());
    double sum = 0;
    for (T v : values) sum += static_cast<double>(v);
    REQUIRE(samples.SumAscending() == sum);  // bit for bit: the same additions in order
    for (size_t rank : std::vector<size_t>{0, n / 2, std::min(n - 1, n * 99 / 100), n - 1}) {
      REQUIRE(samples.AtRank(rank) == values[rank]);
    }
    REQUIRE(samples.Max() == values.back());
    REQUIRE(samples.CheckInvariants());
  }
}

TEST_CASE("SampleCounts: AtRank Max and SumAscending equal a sorted vector's", "[sim][unit]") {
  CheckAgainstSorted<int64_t>([](std::mt19937_64& g) { return static_cast<int64_t>(g() % 50); });
  // Doubles whose sum depends on the order: many magnitudes, few repeats.
  CheckAgainstSorted<double>([](std::mt19937_64& g) {
    return static_cast<double>(g() % 1000) / 7.0 * static_cast<double>(1 + g() % 3);
  });
}

}  // namespace
}  // namespace hived::sim

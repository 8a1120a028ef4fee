// Property test of cellalloc::GpuShares against a reference model: per GPU, the list of
// shares it holds. Random opens, closes, adds and removes (valid and invalid ones); after
// every step the sums, the Fits answers and CheckInvariants must agree with the model.
#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "cellalloc/gpu_shares.h"
#include "support/catch.h"
#include "support/property_knobs.h"

namespace hived::cellalloc {
namespace {

const int kSteps = static_cast<int>(::hived::testing::PropertySteps(20000));

struct ModelGpu {
  int64_t capacity = 0;
  std::vector<std::pair<int32_t, int64_t>> shares;
  int32_t milli() const {
    int32_t m = 0;
    for (const auto& s : shares) m += s.first;
    return m;
  }
  int64_t memory() const {
    int64_t m = 0;
    for (const auto& s : shares) m += s.second;
    return m;
  }
  bool fits(int32_t milli, int64_t mem) const {
    return this->milli() + milli <= kGpuMilli && (capacity == 0 || memory() + mem <= capacity);
  }
};

TEST_CASE("GpuShares matches a model of shares per GPU", "[property][gpu_shares]") {
  for (uint64_t seed = ::hived::testing::PropertyFirstSeed(1);
       seed < ::hived::testing::PropertySeedEnd(1, 5); ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    auto pick = [&](int64_t n) { return static_cast<int64_t>(rng() % static_cast<uint64_t>(n)); };
    GpuShares shares;
    std::map<uint32_t, ModelGpu> model;
    for (int step = 0; step < kSteps; ++step) {
      CAPTURE(step);
      const CellId leaf(static_cast<uint32_t>(pick(12)));
      const bool open = model.count(leaf.value()) > 0;
      const int32_t milli = static_cast<int32_t>(pick(5) == 0 ? pick(1200) - 100 : pick(500) + 1);
      const int64_t mem = pick(3) == 0 ? 0 : pick(9000);
      switch (pick(5)) {
        case 0: {  // open (an open one must be refused)
          const int64_t cap = pick(2) == 0 ? 0 : 8000 + pick(8000);
          REQUIRE(shares.Open(leaf, cap) == !open);
          if (!open) model[leaf.value()].capacity = cap;
          break;
        }
        case 1: {  // close: only open and empty ones
          const bool ok = open && model[leaf.value()].shares.empty();
          REQUIRE(shares.Close(leaf) == ok);
          if (ok) model.erase(leaf.value());
          break;
        }
        case 2:
        case 3: {  // add
          const bool ok =
              open && milli >= 1 && milli <= kGpuMilli && model[leaf.value()].fits(milli, mem);
          if (open && milli >= 1)
            REQUIRE(shares.Fits(leaf, milli, mem) == model[leaf.value()].fits(milli, mem));
          REQUIRE(shares.Add(leaf, milli, mem) == ok);
          if (ok) model[leaf.value()].shares.push_back({milli, mem});
          break;
        }
        default: {  // remove one the model holds
          if (!open || model[leaf.value()].shares.empty()) {
            REQUIRE_FALSE(shares.Remove(leaf, 1, 0));
            break;
          }
          auto& list = model[leaf.value()].shares;
          const size_t i = static_cast<size_t>(pick(static_cast<int64_t>(list.size())));
          REQUIRE(shares.Remove(leaf, list[i].first, list[i].second));
          list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
          break;
        }
      }
      REQUIRE(shares.CheckInvariants().ok());
      REQUIRE(shares.open().size() == model.size());
      int64_t total = 0;
      for (const auto& [id, m] : model) {
        const GpuShares::Gpu& g = shares.gpu(CellId(id));
        REQUIRE(g.used_milli == m.milli());
        REQUIRE(g.used_memory == m.memory());
        REQUIRE(g.shares == static_cast<int32_t>(m.shares.size()));
        REQUIRE(g.memory_capacity == m.capacity);
        total += m.milli();
      }
      REQUIRE(shares.total_milli() == total);
    }
  }
}

}  // namespace
}  // namespace hived::cellalloc

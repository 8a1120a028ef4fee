#include "sim/engine/job_slots.h"

#include <map>
#include <random>
#include <vector>

#include "support/catch.h"

namespace hived::sim {
namespace {

// The span from the lowest to the highest job of `model` (what JobSlots must store).
size_t ModelSpan(const std::map<int64_t, int32_t>& model) {
  return model.empty() ? 0 : static_cast<size_t>(model.rbegin()->first - model.begin()->first + 1);
}

TEST_CASE("JobSlots: random sets and clears agree with a map and store only the live span",
          "[sim][unit]") {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 gen(seed);
    const int64_t jobs = 1 + static_cast<int64_t>(gen() % 300);
    JobSlots slots;
    std::map<int64_t, int32_t> model;
    for (int step = 0; step < 2000; ++step) {
      const int64_t j = static_cast<int64_t>(gen() % static_cast<uint64_t>(jobs));
      if (gen() % 3 != 0) {
        const int32_t place = static_cast<int32_t>(gen() % 50);
        slots.Set(j, place);
        model[j] = place;
      } else {
        slots.Set(j, -1);
        model.erase(j);
      }
      REQUIRE(slots.CheckInvariants());
      REQUIRE(slots.span() == ModelSpan(model));
      const int64_t probe = static_cast<int64_t>(gen() % static_cast<uint64_t>(jobs + 5));
      auto it = model.find(probe);
      REQUIRE(slots.Get(probe) == (it == model.end() ? -1 : it->second));
    }
    std::vector<std::pair<int64_t, int32_t>> seen;
    slots.ForEach([&seen](int64_t j, int32_t place) { seen.emplace_back(j, place); });
    REQUIRE(seen == std::vector<std::pair<int64_t, int32_t>>(model.begin(), model.end()));
  }
}

TEST_CASE("JobSlots: jobs entering in order and leaving keep the span to the jobs in flight",
          "[sim][unit]") {
  // A replay's pattern: a million jobs, each leaving when the 99th after it arrived: at most
  // 100 in flight.
  JobSlots slots;
  size_t most = 0;
  for (int64_t j = 0; j < 1000000; ++j) {
    slots.Set(j, static_cast<int32_t>(j % 100));
    most = std::max(most, slots.span());
    if (j >= 99) slots.Set(j - 99, -1);
  }
  CHECK(most == 100);
  CHECK(slots.Get(999999) == 99);
  CHECK(slots.Get(5) == -1);
}

}  // namespace
}  // namespace hived::sim

#include "sim/engine/job_slots.h"

#include <algorithm>
#include <map>
#include <random>
#include <vector>

#include "support/catch.h"

namespace hived::sim {
namespace {

TEST_CASE("JobSlots: random sets and clears agree with a map and hold only the jobs with a place",
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
      REQUIRE(slots.size() == model.size());
      const int64_t probe = static_cast<int64_t>(gen() % static_cast<uint64_t>(jobs + 5));
      auto it = model.find(probe);
      REQUIRE(slots.Get(probe) == (it == model.end() ? -1 : it->second));
    }
    std::vector<std::pair<int64_t, int32_t>> seen;
    slots.ForEach([&seen](int64_t j, int32_t place) { seen.emplace_back(j, place); });
    REQUIRE(seen == std::vector<std::pair<int64_t, int32_t>>(model.begin(), model.end()));
    for (const auto& [j, place] : model) slots.Set(j, -1);
    REQUIRE(slots.pages() == 0);
    REQUIRE(slots.CheckInvariants());
  }
}

TEST_CASE("JobSlots: one long job does not keep the jobs after it stored", "[sim][unit]") {
  // The generated trace's pattern: job 0 runs throughout while a million jobs come and go
  // with at most 100 in flight (a span of indices would hold them all).
  JobSlots slots;
  slots.Set(0, 0);
  size_t most = 0;
  for (int64_t j = 1; j < 1000000; ++j) {
    slots.Set(j, static_cast<int32_t>(j % 100) + 1);
    most = std::max(most, slots.size());
    if (j >= 100) slots.Set(j - 99, -1);
  }
  CHECK(most == 101);
  CHECK(slots.pages() == 2);  // job 0's page and the page of the jobs in flight
  CHECK(slots.Get(0) == 0);
  CHECK(slots.Get(999999) == 100);
  CHECK(slots.Get(5) == -1);
}

}  // namespace
}  // namespace hived::sim

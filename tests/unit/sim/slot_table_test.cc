#include "sim/policies/slot_table.h"

#include <map>
#include <memory>
#include <random>
#include <utility>

#include "support/catch.h"

namespace hived::sim {
namespace {

struct Value {
  int64_t x = 0;
  std::unique_ptr<int> owned;  // a move-only member, as the backends' runs have
};

TEST_CASE("SlotTable: random opens, writes and closes agree with a map", "[sim][unit]") {
  // The reference model: a std::map from job to value; a job absent from it holds nothing.
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 gen(seed);
    const int32_t jobs = 1 + static_cast<int32_t>(gen() % 200);
    SlotTable<Value> table(static_cast<size_t>(jobs));
    std::map<int32_t, int64_t> model;
    size_t most_live = 0;
    for (int step = 0; step < 1000; ++step) {
      const int32_t j = static_cast<int32_t>(gen() % static_cast<uint64_t>(jobs));
      switch (gen() % 4) {
        case 0:
        case 1: {  // open (a fresh value when the job had none) and write
          Value& v = table.Open(j);
          if (model.count(j) == 0) {
            REQUIRE(v.x == 0);
            REQUIRE(v.owned == nullptr);
          }
          v.x = static_cast<int64_t>(gen() % 1000) + 1;
          v.owned = std::make_unique<int>(1);
          model[j] = v.x;
          break;
        }
        case 2:
          table.Close(j);
          model.erase(j);
          break;
        default: {
          const Value* v = std::as_const(table).Find(j);
          auto it = model.find(j);
          REQUIRE((v != nullptr) == (it != model.end()));
          if (v != nullptr) REQUIRE(v->x == it->second);
          break;
        }
      }
      REQUIRE(table.live() == model.size());
      most_live = std::max(most_live, model.size());
      if (step % 50 == 0) REQUIRE(table.CheckInvariants());
    }
    REQUIRE(table.CheckInvariants());
    for (const auto& [j, x] : model) REQUIRE(table[static_cast<size_t>(j)].x == x);
    // Closing every job leaves nothing live and every slot free.
    for (int32_t j = 0; j < jobs; ++j) table.Close(j);
    REQUIRE(table.live() == 0);
    REQUIRE(table.CheckInvariants());
  }
}

TEST_CASE("SlotTable: a job that stopped holds nothing, and its slot serves the next",
          "[sim][unit]") {
  SlotTable<Value> table(100000);
  // Jobs start and stop one after another: each finds a fresh value.
  for (int32_t j = 0; j < 100000; ++j) {
    REQUIRE(table.Open(j).x == 0);
    table.Open(j).x = j + 1;
    table.Close(j);
  }
  REQUIRE(table.live() == 0);
  table.Open(5).x = 1;
  table.Open(6).x = 2;
  REQUIRE(table.live() == 2);
  REQUIRE(table.Find(7) == nullptr);
  REQUIRE(table.CheckInvariants());
}

}  // namespace
}  // namespace hived::sim

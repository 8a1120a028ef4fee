// GroupTable (src/group_table.h): dense recycled ids, the name index, and its invariants.
#include "src/group_table.h"

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "support/catch.h"
#include "support/property_knobs.h"

namespace hived {
namespace {

TEST_CASE("GroupTable: finds live groups by name and recycles the slots of removed ones",
          "[scheduler][unit]") {
  GroupTable t;
  CHECK(t.Find("a") == kNilId);
  const GroupId a = t.Add("a");
  const GroupId b = t.Add("b");
  CHECK(a != b);
  CHECK(t.Find("a") == a);
  CHECK(t.Find("b") == b);
  t[a].pleaves = {CellId(3)};
  t[a].vleaves = {kNilId};
  REQUIRE(t.CheckInvariants().ok());
  t.Remove(a);
  CHECK(t.Find("a") == kNilId);
  CHECK_FALSE(t[a].alive);
  CHECK(t[a].pleaves.empty());
  REQUIRE(t.CheckInvariants().ok());
  const GroupId c = t.Add("c");
  CHECK(c == a);  // the freed slot is reused
  CHECK(t.Find("c") == c);
  CHECK(t.slots().size() == 2);
  REQUIRE(t.CheckInvariants().ok());
}

TEST_CASE("GroupTable: CheckInvariants names a broken rule", "[scheduler][unit]") {
  GroupTable t;
  const GroupId a = t.Add("a");
  SECTION("a live group renamed behind the index") {
    t[a].name = "renamed";
    const absl::Status st = t.CheckInvariants();
    CHECK(st.code() == absl::StatusCode::kInternal);
    CHECK(std::string(st.message()).find("(1)") != std::string::npos);
  }
  SECTION("leaf arrays of different lengths") {
    t[a].pleaves = {CellId(1), CellId(2)};
    t[a].vleaves = {kNilId};
    CHECK(std::string(t.CheckInvariants().message()).find("(3)") != std::string::npos);
  }
  SECTION("a slot marked dead without being removed") {
    t[a].alive = false;
    CHECK_FALSE(t.CheckInvariants().ok());
  }
}

// Random Add / Find / Remove against a std::map reference model: the name index (with the
// cached entry of the last Find that Remove reuses) always agrees with the model,
// slots are recycled before new ones are made, and the invariants hold after every step.
TEST_CASE("GroupTable: random adds, finds and removes agree with a map of names",
          "[scheduler][property]") {
  for (uint64_t seed = testing::PropertyFirstSeed(1); seed < testing::PropertySeedEnd(1, 20);
       ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    // Short names (inline strings) and long ones (heap strings), so a recycled slot's name
    // both keeps and outgrows its storage.
    std::vector<std::string> pool;
    for (int i = 0; i < 40; ++i) {
      pool.push_back(i % 3 == 0 ? "a-rather-long-group-name-" + std::to_string(i)
                                : std::to_string(i));
    }
    GroupTable t;
    std::map<std::string, GroupId> model;
    std::set<GroupId> free_slots;
    GroupId slots = 0;
    for (int step = 0; step < 2000; ++step) {
      CAPTURE(step);
      const std::string& name = pool[rng() % pool.size()];
      const uint64_t op = rng() % 4;
      auto it = model.find(name);
      if (op == 0 && it == model.end()) {
        const GroupId g = t.Add(name);
        if (free_slots.empty()) {
          REQUIRE(g == slots);
          ++slots;
        } else {
          REQUIRE(free_slots.erase(g) == 1);
        }
        REQUIRE(t[g].alive);
        REQUIRE(t[g].name == name);
        model[name] = g;
      } else if (op == 1 && it != model.end()) {
        // Release's path: Find, then Remove of what it found (the cached entry).
        const GroupId g = t.Find(name);
        REQUIRE(g == it->second);
        t.Remove(g);
        free_slots.insert(g);
        model.erase(it);
      } else if (op == 2 && it != model.end()) {
        // Remove after a Find of another name (the cache holds another group or none).
        const std::string& other = pool[rng() % pool.size()];
        auto o = model.find(other);
        REQUIRE(t.Find(other) == (o == model.end() ? kNilId : o->second));
        t.Remove(it->second);
        free_slots.insert(it->second);
        model.erase(it);
      } else {
        REQUIRE(t.Find(name) == (it == model.end() ? kNilId : it->second));
      }
      REQUIRE(t.CheckInvariants().ok());
      for (const std::string& n : pool) {
        auto m = model.find(n);
        REQUIRE(t.Find(n) == (m == model.end() ? kNilId : m->second));
      }
      REQUIRE(t.slots().size() == slots);
    }
  }
}

}  // namespace
}  // namespace hived

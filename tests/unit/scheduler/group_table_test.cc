// GroupTable (src/group_table.h): dense recycled ids, the name index, and its invariants.
#include "src/group_table.h"

#include <string>

#include "support/catch.h"

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

}  // namespace
}  // namespace hived

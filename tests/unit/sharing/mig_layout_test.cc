// Hand-checked cases of cellalloc::MigLayout (cellalloc/mig_layout.h): allowed starts, no
// overlap, compute limits, the placeability preference, reuse, and reconfiguration only
// when the GPU is idle. The geometry is NVIDIA's A100-40GB (docs/gpu-sharing.md, "MIG").
#include "cellalloc/mig_layout.h"

#include <optional>
#include <string>
#include <vector>

#include "support/catch.h"

namespace hived::cellalloc {
namespace {

MigGeometry A100() {
  MigGeometry g;
  g.profiles = {{"1g.5gb", 1, 1, {0, 1, 2, 3, 4, 5, 6}},
                {"1g.10gb", 1, 2, {0, 2, 4, 6}},
                {"2g.10gb", 2, 2, {0, 2, 4}},
                {"3g.20gb", 3, 4, {0, 4}},
                {"4g.20gb", 4, 4, {0}},
                {"7g.40gb", 7, 8, {0}}};
  g.Finish();
  return g;
}
constexpr int32_t k1g5 = 0, k1g10 = 1, k2g = 2, k3g = 3, k4g = 4, k7g = 5;

// Takes the layout's own choice for `profile`; its start (-1: none).
int32_t TakeBest(MigLayout* l, int32_t profile, const std::string& owner,
                 MigLayout::Step* step = nullptr) {
  const std::optional<MigLayout::Choice> c = l->Choose(profile);
  if (!c.has_value()) return -1;
  REQUIRE(l->Take(profile, *c, owner));
  REQUIRE(l->CheckInvariants().ok());
  if (step != nullptr) *step = c->step;
  return c->start;
}

TEST_CASE("MIG geometry: profiles compared from the largest, milli floored", "[mig]") {
  const MigGeometry g = A100();
  CHECK(g.by_size == std::vector<int32_t>{k7g, k4g, k3g, k2g, k1g10, k1g5});
  CHECK(g.Milli(k1g5) == 142);
  CHECK(g.Milli(k3g) == 428);
  CHECK(g.Milli(k4g) == 571);
  CHECK(g.Milli(k7g) == 1000);
  CHECK(g.Find("3g.20gb") == k3g);
  CHECK(g.Find("3g.40gb") == -1);
}

TEST_CASE("MIG layout: starts are the allowed ones and instances never overlap", "[mig]") {
  const MigGeometry g = A100();
  MigLayout l(&g);
  CHECK_FALSE(l.CanCreate(k4g, 4));    // 4g only at 0
  CHECK_FALSE(l.CanCreate(k1g5, 7));   // 1g.5gb at 0..6
  CHECK_FALSE(l.CanCreate(k3g, 2));    // 3g at 0 or 4
  CHECK_FALSE(l.CanCreate(k1g10, 1));  // 1g.10gb at even slices
  REQUIRE(l.Take(k2g, {MigLayout::Step::kCreate, 0, {}}, "a"));
  CHECK_FALSE(l.CanCreate(k1g5, 1));  // overlaps 2g@0 (slices 0-1)
  CHECK(l.CanCreate(k1g5, 2));
  CHECK_FALSE(l.CanCreate(k4g, 0));
  CHECK_FALSE(l.Take(k1g5, {MigLayout::Step::kCreate, 1, {}}, "b"));       // refused, unchanged
  CHECK_FALSE(l.Take(k1g5, {MigLayout::Step::kReconfigure, 2, {}}, "b"));  // not idle
  CHECK(l.instances().size() == 1);
  CHECK(l.CheckInvariants().ok());
}

TEST_CASE("MIG layout: a small profile goes where it costs the large ones least", "[mig]") {
  const MigGeometry g = A100();
  MigLayout l(&g);
  // Empty A100, 1g.5gb: at 6 it loses only one 1g.10gb, one 3g and the 7g (a 4g@0, three
  // 2g and a 3g@0 stay); at 0-3 the 4g is lost, at 4 or 5 one 2g too.
  const std::optional<MigLayout::Choice> c = l.Choose(k1g5);
  REQUIRE(c.has_value());
  CHECK(c->step == MigLayout::Step::kCreate);
  CHECK(c->start == 6);
  CHECK(c->loss == std::vector<int32_t>{1, 0, 1, 0, 1, 1});
  CHECK(TakeBest(&l, k1g5, "a") == 6);
  // The next one at 4 (5 ties and loses the same; 0-3 would lose the 4g).
  CHECK(TakeBest(&l, k1g5, "b") == 4);
  CHECK(l.Placeable() == std::vector<int32_t>{5, 2, 2, 1, 1, 0});  // geometry order
  // 3g on an empty GPU goes to 4: at 0 it would make the 4g unplaceable.
  MigLayout e(&g);
  CHECK(TakeBest(&e, k3g, "c") == 4);
  CHECK(TakeBest(&e, k4g, "d") == 0);  // 4g + 3g: all 7 compute slices
  CHECK(e.Choose(k1g5) == std::nullopt);
  CHECK(e.used_compute() == 7);
}

TEST_CASE("MIG layout: compute slices bound the instances, not only memory", "[mig]") {
  MigGeometry g;
  g.compute_slices = 3;
  g.memory_slices = 8;
  g.profiles = {{"1c", 1, 1, {0, 1, 2, 3, 4, 5, 6, 7}}};
  g.Finish();
  MigLayout l(&g);
  for (int i = 0; i < 3; ++i) CHECK(TakeBest(&l, 0, "p") >= 0);
  CHECK(l.Placeable() == std::vector<int32_t>{0});  // five memory slices free, no compute
  CHECK(l.Choose(0) == std::nullopt);
}

TEST_CASE("MIG layout: free instances are reused, a reconfiguration needs an idle GPU", "[mig]") {
  const MigGeometry g = A100();
  MigLayout l(&g);
  CHECK(TakeBest(&l, k3g, "a") == 4);
  CHECK(TakeBest(&l, k4g, "b") == 0);
  CHECK(l.creations() == 2);
  REQUIRE(l.Free(k3g, "a"));  // 3g@4 stays configured, free
  CHECK_FALSE(l.Free(k3g, "a"));
  MigLayout::Step step;
  // A 1g.5gb has no room (every slice configured) and the GPU is not idle: no choice.
  CHECK(l.Choose(k1g5) == std::nullopt);
  // A 3g reuses the free instance: no change, nothing counted.
  CHECK(TakeBest(&l, k3g, "c", &step) == 4);
  CHECK(step == MigLayout::Step::kReuse);
  CHECK(l.creations() == 2);
  REQUIRE(l.Free(k3g, "c"));
  REQUIRE(l.Free(k4g, "b"));
  CHECK(l.Idle());
  // Idle: the layout may be destroyed for a profile it has no room for; counted once.
  CHECK(TakeBest(&l, k1g5, "d", &step) == 6);
  CHECK(step == MigLayout::Step::kReconfigure);
  CHECK(l.reconfigurations() == 1);
  CHECK(l.creations() == 3);
  REQUIRE(l.instances().size() == 1);
  CHECK(l.instances()[0].owner == "d");
  // An idle GPU whose layout has the profile free is reused, not reconfigured.
  REQUIRE(l.Free(k1g5, "d"));
  CHECK(TakeBest(&l, k1g5, "e", &step) == 6);
  CHECK(step == MigLayout::Step::kReuse);
  CHECK(l.reconfigurations() == 1);
}

TEST_CASE("MIG layout: choices order reuse, create, reconfigure, then loss", "[mig]") {
  MigLayout::Choice reuse{MigLayout::Step::kReuse, 0, {0, 0}};
  MigLayout::Choice create_small{MigLayout::Step::kCreate, 0, {0, 1}};
  MigLayout::Choice create_big{MigLayout::Step::kCreate, 0, {1, 0}};
  MigLayout::Choice reconfigure{MigLayout::Step::kReconfigure, 0, {0, 0}};
  CHECK(BetterChoice(reuse, create_small));
  CHECK(BetterChoice(create_small, create_big));  // losing a small profile beats a big one
  CHECK(BetterChoice(create_big, reconfigure));
  CHECK_FALSE(BetterChoice(create_small, create_small));
}

TEST_CASE("MIG layout: FreeOwners frees every instance of the named groups", "[mig]") {
  const MigGeometry g = A100();
  MigLayout l(&g);
  TakeBest(&l, k1g5, "guest");
  TakeBest(&l, k1g5, "owner");
  TakeBest(&l, k1g5, "guest");
  l.FreeOwners({"guest"});
  CHECK(l.used() == 1);
  CHECK(l.CheckInvariants().ok());
}

}  // namespace
}  // namespace hived::cellalloc

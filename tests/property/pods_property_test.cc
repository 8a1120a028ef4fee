// Property test of pods within gangs (issue 29 item 1, acceptance): random per-pod
// allocations and releases in random orders (and whole-gang Allocate and Release, restarts
// through SaveState and Restore) against a simple gang model:
//  - a gang's slots are its placement's pods; its first pod runs the gang, a later pod takes
//    the first free slot of its size, the last pod's release releases the gang; a gang
//    allocated whole has every slot, named by index;
//  - every call's outcome (the slot, kPodOnly / kGang, the error code) is the model's;
//  - after every call, `Groups()` shows exactly the model's gangs and pods, the cluster's
//    free leaves are the model's and `CheckInvariants` holds;
//  - SaveState -> Restore -> SaveState is identical, and the restored scheduler goes on.
// Knobs: HIVED_PROPERTY_SEEDS, HIVED_PROPERTY_STEPS (support/property_knobs.h).
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "hived/scheduler.h"
#include "support/catch.h"
#include "support/property_knobs.h"
#include "unit/pods/pods_cluster.h"

namespace hived {
namespace {

struct ModelGang {
  GroupRequest request;
  Placement placement;
  std::vector<int32_t> sizes;      // per slot: its pod's leaf cells
  std::vector<std::string> names;  // per slot: its pod, empty when free
  int32_t Allocated() const {
    int32_t n = 0;
    for (const std::string& s : names) n += s.empty() ? 0 : 1;
    return n;
  }
  int32_t Leaves() const {
    int32_t n = 0;
    for (int32_t s : sizes) n += s;
    return n;
  }
};

class PodsRun {
 public:
  explicit PodsRun(uint64_t seed) : rng_(seed), s_(testdata::MakePods()) {}

  int64_t pod_allocations() const { return pod_allocations_; }
  int64_t pod_releases() const { return pod_releases_; }
  int64_t gang_releases() const { return gang_releases_; }
  int64_t refused() const { return refused_; }

  void Step() {
    const int kind = Pick(100);
    if (kind < 20 && gangs_.size() < 6) {
      NewGang();
    } else if (kind < 55) {
      AllocateOne();
    } else if (kind < 90) {
      ReleaseOne();
    } else if (kind < 94) {
      WholeRelease();
    } else if (kind < 97) {
      UnknownGroup();
    } else {
      Restart();
    }
    Check();
  }

 private:
  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  std::string PodName() {
    static const char* const kNames[] = {"0", "1", "p0", "p1", "p2", "p3", "p4"};
    return kNames[Pick(7)];
  }

  void NewGang() {
    static const int32_t kSizes[] = {1, 2, 4};
    GroupRequest r =
        testdata::Gang("g" + std::to_string(next_++), {}, 1, Pick(4) == 0 ? "VC2" : "VC1");
    const int kinds = 1 + Pick(2);
    for (int k = 0; k < kinds; ++k) {
      const int32_t size = kSizes[Pick(3)];
      bool dup = false;
      for (const GroupMember& m : r.members) dup = dup || m.leaf_cell_number == size;
      if (!dup) r.members.push_back(GroupMember{1 + Pick(3), size});
    }
    absl::StatusOr<ScheduleResult> res = s_->Schedule(r, Phase::kPreempting);
    REQUIRE(res.ok());
    if (res->outcome != Outcome::kPlaced) {
      REQUIRE(res->outcome != Outcome::kPreempting);  // one priority: nobody is a victim
      return;
    }
    ModelGang gang;
    gang.request = r;
    gang.placement = res->placement;
    for (const PodPlacement& p : res->placement.pods) gang.sizes.push_back(p.leaf_cell_number);
    gang.names.assign(gang.sizes.size(), "");
    if (Pick(4) == 0) {  // whole
      REQUIRE(s_->Allocate(r, res->placement).ok());
      for (size_t i = 0; i < gang.names.size(); ++i) gang.names[i] = std::to_string(i);
    } else {
      const Pod pod = testdata::NamedPod(
          PodName(), gang.sizes[static_cast<size_t>(Pick(static_cast<int>(gang.sizes.size())))]);
      absl::StatusOr<PodAllocation> a = s_->AllocatePod(r, res->placement, pod);
      INFO(a.status().message());
      REQUIRE(a.ok());
      REQUIRE(a->started_gang);
      const int32_t slot = FirstFree(gang, pod.leaf_cell_number);
      REQUIRE(a->pod.index == slot);
      gang.names[static_cast<size_t>(slot)] = pod.name;
      ++pod_allocations_;
    }
    gangs_[r.name] = gang;
  }

  static int32_t FirstFree(const ModelGang& g, int32_t size) {
    for (size_t i = 0; i < g.sizes.size(); ++i) {
      if (g.sizes[i] == size && g.names[i].empty()) return static_cast<int32_t>(i);
    }
    return -1;
  }

  ModelGang* AnyGang() {
    if (gangs_.empty()) return nullptr;
    auto it = gangs_.begin();
    std::advance(it, Pick(static_cast<int>(gangs_.size())));
    return &it->second;
  }

  void AllocateOne() {
    ModelGang* g = AnyGang();
    if (g == nullptr) return;
    const std::string name = PodName();
    const int32_t size =
        Pick(8) == 0 ? 3 : g->sizes[static_cast<size_t>(Pick(static_cast<int>(g->sizes.size())))];
    absl::StatusOr<PodAllocation> a =
        s_->AllocatePod(g->request, g->placement, testdata::NamedPod(name, size));
    CAPTURE(g->request.name, name, size);
    bool dup = false;
    for (const std::string& n : g->names) dup = dup || n == name;
    bool has_size = false;
    for (int32_t s : g->sizes) has_size = has_size || s == size;
    const int32_t slot = FirstFree(*g, size);
    if (dup) {
      REQUIRE(a.status().code() == absl::StatusCode::kAlreadyExists);
    } else if (!has_size) {
      REQUIRE(a.status().code() == absl::StatusCode::kInvalidArgument);
    } else if (slot < 0) {
      REQUIRE(a.status().code() == absl::StatusCode::kFailedPrecondition);
    } else {
      INFO(a.status().message());
      REQUIRE(a.ok());
      REQUIRE_FALSE(a->started_gang);
      REQUIRE(a->pod.index == slot);
      REQUIRE(a->pod.placement.node == g->placement.pods[static_cast<size_t>(slot)].node);
      g->names[static_cast<size_t>(slot)] = name;
      ++pod_allocations_;
      return;
    }
    ++refused_;
  }

  void ReleaseOne() {
    ModelGang* g = AnyGang();
    if (g == nullptr) return;
    std::string name = PodName();
    if (Pick(3) != 0) {  // mostly an allocated one
      std::vector<std::string> named;
      for (const std::string& n : g->names) {
        if (!n.empty()) named.push_back(n);
      }
      name = named[static_cast<size_t>(Pick(static_cast<int>(named.size())))];
    }
    CAPTURE(g->request.name, name);
    absl::StatusOr<PodRelease> r = s_->ReleasePod(g->request.name, name);
    size_t slot = g->names.size();
    for (size_t i = 0; i < g->names.size(); ++i) {
      if (g->names[i] == name) slot = i;
    }
    if (slot == g->names.size()) {
      REQUIRE(r.status().code() == absl::StatusCode::kNotFound);
      ++refused_;
      return;
    }
    INFO(r.status().message());
    REQUIRE(r.ok());
    if (g->Allocated() == 1) {
      REQUIRE(*r == PodRelease::kGang);
      gangs_.erase(g->request.name);
      ++gang_releases_;
    } else {
      REQUIRE(*r == PodRelease::kPodOnly);
      g->names[slot].clear();
      ++pod_releases_;
    }
  }

  void WholeRelease() {
    ModelGang* g = AnyGang();
    if (g == nullptr) return;
    REQUIRE(s_->Release(g->request.name).ok());
    gangs_.erase(g->request.name);
  }

  void UnknownGroup() {
    REQUIRE(s_->ReleasePod("absent", "p0").status().code() == absl::StatusCode::kNotFound);
    REQUIRE(s_->GetPod("absent", "p0").status().code() == absl::StatusCode::kNotFound);
    ++refused_;
  }

  void Restart() {
    absl::StatusOr<std::string> saved = s_->SaveState();
    REQUIRE(saved.ok());
    absl::StatusOr<std::unique_ptr<Scheduler>> back =
        Scheduler::Restore(testdata::PodsSpec(), *saved);
    INFO(back.status().message());
    REQUIRE(back.ok());
    absl::StatusOr<std::string> again = (*back)->SaveState();
    REQUIRE(again.ok());
    REQUIRE(*again == *saved);
    s_ = std::move(*back);
  }

  void Check() {
    testdata::RequireInvariants(*s_);
    const std::vector<GroupStatus> groups = s_->Groups();
    REQUIRE(groups.size() == gangs_.size());
    int32_t used = 0;
    for (const GroupStatus& gs : groups) {
      CAPTURE(gs.name);
      auto it = gangs_.find(gs.name);
      REQUIRE(it != gangs_.end());
      const ModelGang& g = it->second;
      REQUIRE(gs.state == GroupState::kAllocated);
      std::vector<PodIdentity> want;
      for (size_t i = 0; i < g.names.size(); ++i) {
        if (!g.names[i].empty())
          want.push_back(PodIdentity{static_cast<int32_t>(i), g.names[i], ""});
      }
      REQUIRE(gs.pods == want);
      used += g.Leaves();
    }
    int32_t free = 0;
    for (const NodeStatus& n : s_->Nodes()) free += n.free_leaf_cells;
    REQUIRE(free == 16 - used);
  }

  std::mt19937_64 rng_;
  std::unique_ptr<Scheduler> s_;
  std::map<std::string, ModelGang> gangs_;  // by name: deterministic
  int64_t next_ = 0;
  int64_t pod_allocations_ = 0;
  int64_t pod_releases_ = 0;
  int64_t gang_releases_ = 0;
  int64_t refused_ = 0;
};

TEST_CASE("Property: per-pod allocate and release in random orders agree with a gang model",
          "[pods][property]") {
  const int64_t steps = testing::PropertySteps(400);
  int64_t allocations = 0, releases = 0, gangs = 0, refused = 0;
  for (uint64_t seed = testing::PropertyFirstSeed(1); seed < testing::PropertySeedEnd(1, 8);
       ++seed) {
    CAPTURE(seed);
    PodsRun run(seed);
    for (int64_t i = 0; i < steps; ++i) {
      CAPTURE(i);
      run.Step();
    }
    allocations += run.pod_allocations();
    releases += run.pod_releases();
    gangs += run.gang_releases();
    refused += run.refused();
  }
  // The sequences exercised what the test claims.
  CAPTURE(allocations, releases, gangs, refused);
  CHECK(allocations > 0);
  CHECK(releases > 0);
  CHECK(gangs > 0);
  CHECK(refused > 0);
}

}  // namespace
}  // namespace hived

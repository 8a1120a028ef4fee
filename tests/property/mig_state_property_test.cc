// Property test of SaveState / Restore with MIG and host groups (docs/state-format.md,
// version 3): random whole-GPU, fractional, MIG, whole-GPU host and CPU-only groups
// (schedule, allocate, release, preempt: victims released or the preemption cancelled) on
// tests/support/mig_host_cluster.h, CheckInvariants after every step; at save points the
// state is restored into a new scheduler, which must show the same views (groups with
// their placements and MIG instances, every GPU's MIG instances and counters), save the
// same document byte for byte, and then answer the same next random operations exactly
// as the saved one, run side by side.
#include <cstdint>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "hived/scheduler.h"
#include "support/catch.h"
#include "support/mig_host_cluster.h"
#include "support/property_knobs.h"
#include "unit/sharing/mig_cluster.h"
#include "unit/sharing/sharing_helpers.h"

namespace hived {
namespace {

using testing::PropertyFirstSeed;
using testing::PropertySeedEnd;
using testing::PropertySeeds;
using testing::PropertySteps;

std::string Show(const Placement& p) {
  std::ostringstream out;
  out << p.chain << "[";
  for (const PodPlacement& pod : p.pods) {
    out << pod.node << ":";
    for (int32_t i : pod.leaf_cell_indices) out << i << ",";
    if (!pod.mig_profile.empty() || pod.mig_start >= 0) {
      out << pod.mig_profile << "@" << pod.mig_start;
    }
    out << ";";
  }
  return out.str() + "]";
}

// Every view a manager reads: groups (state, priority, placement with MIG instances) and
// the GPUs' MIG instances and counters.
std::string Views(Scheduler& s) {
  std::ostringstream out;
  for (const GroupStatus& g : s.Groups()) {
    out << g.name << " " << GroupStateName(g.state) << " " << g.priority << " " << g.vc << " "
        << Show(g.placement) << "\n";
  }
  for (const std::string& i : testdata::MigInstances(s)) out << i << "\n";
  for (const ChainSummary& c : s.ChainSummaries()) {
    out << c.chain << " " << c.mig_instances_created << " " << c.mig_reconfigurations << "\n";
  }
  return out.str();
}

// One random request: whole, fractional, MIG, whole host or CPU-only.
GroupRequest NewGroup(const std::string& name, std::mt19937_64& rng) {
  auto pick = [&](uint64_t n) { return static_cast<int64_t>(rng() % n); };
  const std::string vc = pick(2) == 0 ? "VC1" : "VC2";
  const Priority prio = static_cast<Priority>(pick(3) - 1);
  static const char* const kProfiles[] = {"1g.5gb",  "1g.10gb", "2g.10gb",
                                          "3g.20gb", "4g.20gb", "7g.40gb"};
  switch (pick(5)) {
    case 0:
      return testdata::Whole(name, vc, prio, static_cast<int32_t>(1 + pick(2)),
                             pick(3) == 0 ? "V100" : "A100");
    case 1:
      return testdata::Frac(name, vc, prio, static_cast<int32_t>(100 + 100 * pick(8)),
                            {pick(2) == 0 ? "V100" : "A100"}, static_cast<int32_t>(1 + pick(2)));
    case 2:
      return testdata::Mig(name, vc, prio, kProfiles[pick(6)], static_cast<int32_t>(1 + pick(2)));
    case 3: {
      GroupRequest r = testdata::Whole(name, vc, prio, 1, pick(2) == 0 ? "V100" : "A100");
      r.members[0].cpu_milli = 500 * (1 + pick(6));
      r.members[0].memory_mib = 4000 * pick(4);
      return r;
    }
    default: {
      GroupRequest r;
      r.name = name;
      r.vc = vc;
      r.priority = prio;
      GroupMember m;
      m.pod_number = static_cast<int32_t>(1 + pick(2));
      m.leaf_cell_number = 0;
      m.cpu_milli = 500 * (1 + pick(4));
      m.memory_mib = 2000 * pick(4);
      r.members = {m};
      return r;
    }
  }
}

// One random operation on `s`, its answers written to the transcript. Leaves no group
// reserved or preempting (a restart loses them: docs/state-format.md).
std::string Step(Scheduler& s, std::mt19937_64& rng, int* next) {
  auto pick = [&](uint64_t n) { return static_cast<int64_t>(rng() % n); };
  std::ostringstream out;
  const std::vector<GroupStatus> groups = s.Groups();
  std::vector<std::string> running;
  for (const GroupStatus& g : groups) {
    if (g.state == GroupState::kAllocated || g.state == GroupState::kOpportunistic) {
      running.push_back(g.name);
    }
  }
  if (!running.empty() && pick(4) == 0) {
    const std::string& name = running[static_cast<size_t>(pick(running.size()))];
    out << "release " << name << ": " << s.Release(name).ToString();
    return out.str();
  }
  const GroupRequest r = NewGroup("g" + std::to_string((*next)++), rng);
  absl::StatusOr<ScheduleResult> res = s.Schedule(r, Phase::kPreempting);
  out << "schedule " << r.name << ": ";
  if (!res.ok()) return out.str() + res.status().ToString();
  out << OutcomeName(res->outcome) << " " << Show(res->placement) << " " << res->reason;
  if (res->outcome == Outcome::kPreempting) {
    for (const std::string& v : res->victims) out << " victim " << v;
    if (pick(2) == 0) {  // preempt: the victims go, then the group is scheduled again
      for (const std::string& v : res->victims) out << " " << s.Release(v).ToString();
      res = s.Schedule(r, Phase::kPreempting);
      REQUIRE(res.ok());
      out << " again " << OutcomeName(res->outcome) << " " << Show(res->placement);
    }
    if (res->outcome == Outcome::kPreempting) {
      out << " cancel " << s.CancelPreemption(r.name).ToString();
      return out.str();
    }
  }
  if (res->outcome == Outcome::kPlaced) {
    absl::StatusOr<AllocateInfo> info = s.Allocate(r, res->placement);
    out << " allocate " << info.status().ToString();
    out << " -> " << Show(s.GetGroup(r.name).placement);
  }
  // A group still reserved or preempting (a Schedule again that no longer preempts leaves
  // a sharing group preempting until cancelled) is given up.
  const GroupState left = s.GetGroup(r.name).state;
  if (left == GroupState::kReserved) out << " unreserve " << s.Unreserve(r.name).ToString();
  if (left == GroupState::kPreempting) {
    out << " cancel " << s.CancelPreemption(r.name).ToString();
  }
  return out.str();
}

TEST_CASE("SaveState / Restore with MIG and host groups: the restored scheduler is the same",
          "[persistence][mig][hosts][property]") {
  const ClusterSpec spec = testdata::MigHostSpec();
  const uint64_t first = PropertyFirstSeed(1);
  int64_t steps_done = 0;
  int64_t mig_saved = 0, host_saved = 0, cpu_only_saved = 0;
  for (uint64_t seed = first; seed < PropertySeedEnd(first, PropertySeeds(25)); ++seed) {
    std::mt19937_64 rng(seed);
    absl::StatusOr<std::unique_ptr<Scheduler>> created = Scheduler::Create(spec);
    REQUIRE(created.ok());
    std::unique_ptr<Scheduler> a = std::move(*created);
    int next = 0;
    for (int round = 0; round < 4; ++round) {
      for (int64_t i = 0; i < PropertySteps(60); ++i, ++steps_done) {
        INFO("seed " << seed << " round " << round << " step " << i);
        const std::string t = Step(*a, rng, &next);
        INFO(t);
        const absl::Status inv = a->CheckInvariants();
        INFO(inv.message());
        REQUIRE(inv.ok());
      }
      INFO("seed " << seed << " round " << round << " save");
      absl::StatusOr<std::string> state = a->SaveState();
      REQUIRE(state.ok());
      if (state->find("\"migProfile\"") != std::string::npos) ++mig_saved;
      if (state->find("\"cpuMilli\"") != std::string::npos) ++host_saved;
      if (state->find("\"leafCellNumber\":0") != std::string::npos) ++cpu_only_saved;
      RestoreReport report;
      absl::StatusOr<std::unique_ptr<Scheduler>> restored =
          Scheduler::Restore(spec, *state, &report);
      INFO(*state);
      REQUIRE(restored.ok());
      std::unique_ptr<Scheduler> b = std::move(*restored);
      for (const RestoreReport::Group& g : report.groups) {
        INFO(g.name << ": " << g.reason);
        CHECK(g.outcome == RestoreOutcome::kKept);
      }
      CHECK(report.notes.empty());
      REQUIRE(b->CheckInvariants().ok());
      REQUIRE(Views(*b) == Views(*a));
      REQUIRE(*b->SaveState() == *state);
      for (const GroupStatus& g : a->Groups()) {  // records equal (MIG instances included)
        absl::StatusOr<GroupRecord> ra = a->GetGroupRecord(g.name);
        absl::StatusOr<GroupRecord> rb = b->GetGroupRecord(g.name);
        REQUIRE(ra.ok() == rb.ok());
        if (ra.ok()) CHECK(GroupRecordToJson(*ra) == GroupRecordToJson(*rb));
      }
      // Side by side: the same random operations, the same answers.
      const uint64_t fork = rng();
      std::mt19937_64 ra(fork), rb(fork);
      int na = next, nb = next;
      for (int64_t i = 0; i < PropertySteps(40); ++i, ++steps_done) {
        INFO("seed " << seed << " round " << round << " side-by-side step " << i);
        const std::string ta = Step(*a, ra, &na);
        const std::string tb = Step(*b, rb, &nb);
        REQUIRE(ta == tb);
        REQUIRE(a->CheckInvariants().ok());
        REQUIRE(b->CheckInvariants().ok());
      }
      REQUIRE(Views(*b) == Views(*a));
      REQUIRE(*b->SaveState() == *a->SaveState());
      rng.seed(ra());
      next = na;
      a = std::move(b);  // continue on the restored one
    }
  }
  // The test exercised what it claims.
  CHECK(steps_done >= 1000);
  CHECK(mig_saved > 0);
  CHECK(host_saved > 0);
  CHECK(cpu_only_saved > 0);
}

}  // namespace
}  // namespace hived

// Reservations and recovery of fractional groups (hived/scheduler.h rules 7-8,
// sharing/sharing.h), on tests/unit/sharing/sharing_cluster.h: a Preempting-phase kPlaced
// result reserves shares and new leaves until Allocate or Unreserve; Filtering reserves
// nothing; Recover is strict.
#include <string>
#include <vector>

#include "hived/scheduler.h"
#include "support/catch.h"
#include "unit/sharing/sharing_helpers.h"

namespace hived {
namespace {

using testdata::Frac;
using testdata::Make;
using testdata::OpenLeaves;
using testdata::Run;
using testdata::Whole;

std::string Where(const Placement& p) {
  return p.pods[0].node + "/" + std::to_string(p.pods[0].leaf_cell_indices[0]);
}

ScheduleResult Reserve(Scheduler& s, const GroupRequest& r) {
  absl::StatusOr<ScheduleResult> res = s.Schedule(r, Phase::kPreempting);
  REQUIRE(res.ok());
  REQUIRE(res->outcome == Outcome::kPlaced);
  REQUIRE(s.GetGroup(r.name).state == GroupState::kReserved);
  REQUIRE(s.CheckInvariants().ok());
  return *res;
}

bool Mentions(const absl::Status& s, const std::string& what) {
  return std::string(s.message()).find(what) != std::string::npos;
}

TEST_CASE("a kPlaced fractional result reserves its shares and new leaves", "[sharing]") {
  auto s = Make();
  const GroupRequest f1 = Frac("f1", "VC1", 0, 500);
  const GroupRequest f2 = Frac("f2", "VC1", 0, 500);
  const ScheduleResult r1 = Reserve(*s, f1);
  REQUIRE(s->GetGroup("hived-share/0").state == GroupState::kReserved);  // its holder
  REQUIRE(OpenLeaves(*s).empty());  // the new leaf opens at Allocate
  // Two Schedules before Allocate do not get the same GPU, and a repeated Schedule of the
  // reserved group returns its reservation.
  const ScheduleResult r2 = Reserve(*s, f2);
  REQUIRE(Where(r2.placement) != Where(r1.placement));
  absl::StatusOr<ScheduleResult> again = s->Schedule(f1, Phase::kFiltering);
  REQUIRE(again.ok());
  REQUIRE(again->outcome == Outcome::kPlaced);
  REQUIRE(Where(again->placement) == Where(r1.placement));
  // Allocate accepts only the reserved placement and request.
  absl::StatusOr<AllocateInfo> wrong = s->Allocate(f2, r1.placement);
  REQUIRE(wrong.status().code() == absl::StatusCode::kFailedPrecondition);
  REQUIRE(Mentions(wrong.status(), "reserved on node"));
  GroupRequest f1_other = f1;
  f1_other.members[0].gpu_milli = 600;
  REQUIRE(s->Allocate(f1_other, r1.placement).status().code() ==
          absl::StatusCode::kFailedPrecondition);
  REQUIRE(s->Release("f2").code() == absl::StatusCode::kFailedPrecondition);
  REQUIRE(s->CancelPreemption("f2").code() == absl::StatusCode::kFailedPrecondition);
  REQUIRE(s->Recover(f2, r2.placement).status().code() == absl::StatusCode::kFailedPrecondition);
  REQUIRE(s->Allocate(f1, r1.placement).ok());
  REQUIRE(s->GetGroup("f1").state == GroupState::kAllocated);
  REQUIRE(OpenLeaves(*s) == std::vector<std::string>{Where(r1.placement) + ":500"});
  REQUIRE(s->Unreserve("f1").code() == absl::StatusCode::kFailedPrecondition);
  // A share on an open GPU is reserved at once: counted there, and the GPU stays open
  // for it when the other sharers leave.
  const ScheduleResult r3 = Reserve(*s, Frac("f3", "VC1", 0, 400));
  REQUIRE(Where(r3.placement) == Where(r1.placement));
  REQUIRE(OpenLeaves(*s) == std::vector<std::string>{Where(r1.placement) + ":900"});
  const ScheduleResult r4 = Reserve(*s, Frac("f4", "VC1", 0, 400));
  REQUIRE(Where(r4.placement) != Where(r1.placement));  // 100 left there
  REQUIRE(Where(r4.placement) != Where(r2.placement));  // f2's leaf is reserved
  REQUIRE(s->Release("f1").ok());
  REQUIRE(OpenLeaves(*s) == std::vector<std::string>{Where(r1.placement) + ":400"});
  REQUIRE(s->CheckInvariants().ok());
  // Unreserve gives the shares back and releases (or unreserves) a holder only it needed.
  REQUIRE(s->Unreserve("f3").ok());
  REQUIRE(OpenLeaves(*s).empty());
  REQUIRE(s->GetGroup("hived-share/0").state == GroupState::kAbsent);
  REQUIRE(s->GetGroup("f3").state == GroupState::kAbsent);
  const std::string f4_holder = "hived-share/2";
  REQUIRE(s->GetGroup(f4_holder).state == GroupState::kReserved);
  REQUIRE(s->Unreserve("f4").ok());
  REQUIRE(s->GetGroup(f4_holder).state == GroupState::kAbsent);
  REQUIRE(s->Unreserve("f4").code() == absl::StatusCode::kNotFound);
  REQUIRE(s->Unreserve("hived-share/1").code() == absl::StatusCode::kInvalidArgument);
  REQUIRE(s->CheckInvariants().ok());
  // f2 still holds its reservation; its Allocate runs it.
  REQUIRE(s->Allocate(f2, r2.placement).ok());
  REQUIRE(s->GetGroup("f2").state == GroupState::kAllocated);
  REQUIRE(s->CheckInvariants().ok());
}

TEST_CASE("Filtering reserves nothing, and only the Allocate right after it is accepted",
          "[sharing]") {
  auto s = Make();
  const GroupRequest f = Frac("f", "VC1", 0, 300);
  absl::StatusOr<ScheduleResult> a = s->Schedule(f, Phase::kFiltering);
  REQUIRE(a.ok());
  REQUIRE(a->outcome == Outcome::kPlaced);
  REQUIRE(s->GetGroup("f").state == GroupState::kAbsent);
  REQUIRE(s->Groups().empty());  // not even a holder
  // Another request with the decided placement is not what Schedule decided.
  const absl::StatusOr<AllocateInfo> other = s->Allocate(Frac("f", "VC1", 0, 200), a->placement);
  REQUIRE(other.status().code() == absl::StatusCode::kFailedPrecondition);
  REQUIRE(Mentions(other.status(), "not what Schedule decided"));
  REQUIRE(s->Allocate(f, a->placement).ok());
  // On the open GPU now: a Filtering decision, then another group's change, then Allocate.
  const GroupRequest g = Frac("g", "VC1", 0, 300);
  absl::StatusOr<ScheduleResult> b = s->Schedule(g, Phase::kFiltering);
  REQUIRE(b.ok());
  REQUIRE(b->outcome == Outcome::kPlaced);
  REQUIRE(Run(*s, Frac("h", "VC1", 0, 600)) == Outcome::kPlaced);
  absl::StatusOr<AllocateInfo> late = s->Allocate(g, b->placement);
  REQUIRE(late.status().code() == absl::StatusCode::kFailedPrecondition);
  REQUIRE(Mentions(late.status(), "no reservation"));
  REQUIRE(s->CheckInvariants().ok());
}

TEST_CASE("a reserved fractional group on a bad node is blocked, or re-placed", "[sharing]") {
  auto s = Make();
  const GroupRequest f = Frac("f", "VC1", 0, 300, {"GB"});
  const ScheduleResult r = Reserve(*s, f);
  REQUIRE(s->SetNodeHealthy("b0", false).ok());
  absl::StatusOr<ScheduleResult> blocked = s->Schedule(f, Phase::kFiltering);
  REQUIRE(blocked.ok());
  REQUIRE(blocked->outcome == Outcome::kWaiting);
  REQUIRE(blocked->code == ReasonCode::kReservationBlocked);
  REQUIRE(s->GetGroup("f").state == GroupState::kReserved);
  absl::StatusOr<ScheduleResult> again = s->Schedule(f, Phase::kPreempting);
  REQUIRE(again.ok());
  REQUIRE(again->outcome != Outcome::kPlaced);  // b0 is VC1's only GB node
  REQUIRE(s->GetGroup("f").state == GroupState::kAbsent);
  REQUIRE(s->CheckInvariants().ok());
  REQUIRE(Where(r.placement).rfind("b0/", 0) == 0);
}

TEST_CASE("Recover of a fractional group reopens its GPU and is strict", "[sharing]") {
  auto s = Make();
  auto at = [](const std::string& node, int32_t index, int pods = 1) {
    Placement p;
    for (int i = 0; i < pods; ++i) {
      PodPlacement pod;
      pod.node = node;
      pod.leaf_cell_number = 1;
      pod.leaf_cell_indices = {index};
      p.pods.push_back(pod);
    }
    return p;
  };
  absl::StatusOr<AllocateInfo> first = s->Recover(Frac("r1", "VC1", 0, 400), at("a0", 1));
  INFO(first.status().message());
  REQUIRE(first.ok());
  REQUIRE(s->GetGroup("r1").state == GroupState::kAllocated);
  REQUIRE(OpenLeaves(*s) == std::vector<std::string>{"a0/1:400"});
  REQUIRE(s->Recover(Frac("r2", "VC1", 0, 500), at("a0", 1)).ok());  // packs on the open GPU
  REQUIRE(OpenLeaves(*s) == std::vector<std::string>{"a0/1:900"});
  REQUIRE(s->CheckInvariants().ok());
  auto code = [&](const GroupRequest& r, const Placement& p, const std::string& what) {
    absl::StatusOr<AllocateInfo> info = s->Recover(r, p);
    REQUIRE(!info.ok());
    REQUIRE(Mentions(info.status(), r.name));
    REQUIRE(Mentions(info.status(), what));
    REQUIRE(s->GetGroup(r.name).state == GroupState::kAbsent);
    REQUIRE(s->CheckInvariants().ok());
    return info.status().code();
  };
  REQUIRE(code(Frac("x", "VC1", 0, 200), at("a0", 1), "pod 0") ==
          absl::StatusCode::kFailedPrecondition);  // 100 left: never a silent shrink
  REQUIRE(code(Frac("x", "VC1", 0, 100), at("nope", 0), "nope") ==
          absl::StatusCode::kInvalidArgument);
  REQUIRE(code(Frac("x", "VC1", 0, 100), at("a0", 9), "pod 0") ==
          absl::StatusCode::kInvalidArgument);
  REQUIRE(code(Frac("x", "VC1", 0, 100, {"GA"}, 2), at("a0", 1), "pods") ==
          absl::StatusCode::kInvalidArgument);
  REQUIRE(code(Frac("x", "VC2", 0, 100), at("a0", 1), "pod 0") ==
          absl::StatusCode::kFailedPrecondition);  // VC1's GPU
  GroupRequest memory = Frac("x", "VC1", 0, 50);
  memory.members[0].gpu_memory_mib = 17000;  // GA GPUs have 16000
  REQUIRE(code(memory, at("a0", 2), "pod 0") == absl::StatusCode::kFailedPrecondition);
  REQUIRE(Run(*s, Whole("w", "VC1", 0, 2, "GB")) == Outcome::kPlaced);
  REQUIRE(code(Frac("x", "VC1", 0, 100, {"GB"}), at("b0", 0), "w") ==
          absl::StatusCode::kFailedPrecondition);  // a whole group's GPU
  // Decided before anything changes: a pod on a free GA GPU and one on w's GB GPU (two
  // chains) is refused with nothing opened for the first chain (the saved state unchanged).
  const absl::StatusOr<std::string> before = s->SaveState();
  REQUIRE(before.ok());
  Placement two_chains = at("a0", 2);
  two_chains.pods.push_back(at("b0", 0).pods[0]);
  REQUIRE(code(Frac("x", "VC1", 0, 100, {"GA", "GB"}, 2), two_chains, "w") ==
          absl::StatusCode::kFailedPrecondition);
  REQUIRE(s->SaveState() == before);
  REQUIRE(OpenLeaves(*s) == std::vector<std::string>{"a0/1:900"});
  // Two pods on one new GPU: one holder leaf, both shares.
  REQUIRE(s->Recover(Frac("two", "VC1", 0, 300, {"GA"}, 2), at("a0", 3, 2)).ok());
  REQUIRE(OpenLeaves(*s) == std::vector<std::string>{"a0/1:900", "a0/3:600"});
  REQUIRE(s->Recover(Frac("two", "VC1", 0, 300, {"GA"}, 2), at("a0", 3, 2)).status().code() ==
          absl::StatusCode::kAlreadyExists);
  // Pods of one group on one open GPU add up: 600 + 300 + 300 milli do not fit.
  REQUIRE(code(Frac("x", "VC1", 0, 300, {"GA"}, 2), at("a0", 3, 2), "pod 1") ==
          absl::StatusCode::kFailedPrecondition);
  // A node's CPU is a constraint of the recovered pods too (a0 has 8000 milli).
  GroupRequest cpu = Frac("c1", "VC1", 0, 100);
  cpu.members[0].cpu_milli = 5000;
  REQUIRE(s->Recover(cpu, at("a0", 2)).ok());
  cpu.name = "x";
  cpu.members[0].cpu_milli = 4000;
  REQUIRE(code(cpu, at("a0", 2), "CPU") == absl::StatusCode::kFailedPrecondition);
  REQUIRE(s->CheckInvariants().ok());
  for (const char* g : {"r1", "r2", "two", "c1"}) REQUIRE(s->Release(g).ok());
  REQUIRE(OpenLeaves(*s).empty());
  REQUIRE(s->CheckInvariants().ok());
}

}  // namespace
}  // namespace hived

// Property (issue 29, acceptance): recovery from a checkpoint plus the journal after it, at
// random crash points (a torn last record included), equals the scheduler that did not
// crash: the same views, the same saved text, and the same next 40 answers.
//
// The scheduler runs a random mix of every journaled call (Preempting and Filtering
// schedules with their Allocate, reservations held and given up, preemptions, releases,
// node health) and, in the second test, live config changes (a rack added and removed, VCs
// resized; stranded groups refused or applied); a checkpoint (StartJournal) is taken at
// random steps where no reservation is open (a checkpoint does not hold reservations, as
// SaveState does not), on whichever spec is current then.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hived/config.h"
#include "hived/journal.h"
#include "hived/scheduler.h"
#include "support/catch.h"
#include "support/example_spec.h"

namespace hived {
namespace {

ClusterSpec TwoRacks() { return testing::ExampleSpec("two-racks.yaml"); }

// The configs a workload moves between: 0 two racks; 1 a third rack (rack2-*) with prod grown
// onto it; 2 that rack with research and dev grown instead.
ClusterSpec Config(uint32_t k) {
  ClusterSpec spec = TwoRacks();
  if (k == 0) return spec;
  PhysicalCellSpec rack = spec.physical_cells[0];
  for (auto& node : rack.cell_children) node.cell_address = "rack2-" + node.cell_address;
  spec.physical_cells.push_back(rack);
  if (k == 1) {
    spec.virtual_clusters[0].virtual_cells[0].cell_number = 2;  // prod: two racks
  } else {
    spec.virtual_clusters[1].virtual_cells[0].cell_number = 4;  // research: 4 nodes
    spec.virtual_clusters[2].virtual_cells[0].cell_number = 2;  // dev: 2 sockets
  }
  return spec;
}

std::string Render(const Placement& p) {
  std::string out = p.chain;
  for (const PodPlacement& pod : p.pods) {
    absl::StrAppend(&out, " ", pod.node, ":");
    for (int32_t i : pod.leaf_cell_indices) absl::StrAppend(&out, i, ",");
  }
  return out;
}

void RenderCells(const std::vector<PhysicalCellStatus>& cells, std::string* out) {
  for (const PhysicalCellStatus& c : cells) {
    absl::StrAppend(out, c.address, "|", static_cast<int>(c.state), "|", static_cast<int>(c.health),
                    "|", c.priority, "|", c.vc, "|", c.virtual_cell, "\n");
    RenderCells(c.children, out);
  }
}

// Everything a caller can see: groups (reserved and preempting ones too), cells, VCs.
std::string Views(const Scheduler& s) {
  std::string out;
  for (const GroupStatus& g : s.Groups()) {
    absl::StrAppend(&out, g.name, "|", static_cast<int>(g.state), "|", g.priority, "|", g.preemptor,
                    "|", g.downgrade_reason, "|", Render(g.placement), "\n");
  }
  RenderCells(s.PhysicalCluster(), &out);
  for (const VcUsage& u : s.VcUsages()) {
    absl::StrAppend(&out, u.vc, "|", u.guaranteed_used_leaf_cells, "|",
                    u.opportunistic_used_leaf_cells, "\n");
  }
  return out;
}

std::string Answer(const absl::StatusOr<ScheduleResult>& r) {
  if (!r.ok()) return r.status().ToString();
  std::string out = absl::StrCat(static_cast<int>(r->outcome), " ", Render(r->placement));
  for (const std::string& v : r->victims) absl::StrAppend(&out, " v:", v);
  return out;
}

// A deterministic random workload; `Step` runs one call, remembering open reservations.
class Workload {
 public:
  Workload(uint32_t seed, bool config_changes) : rng_(seed), config_changes_(config_changes) {}

  std::string Step(Scheduler& s) {
    const std::vector<std::string> vcs = {"prod", "research", "dev", "test"};
    const auto kind = static_cast<uint32_t>(rng_() % 10);
    if (kind <= 4) {
      GroupRequest req;
      req.name = absl::StrCat("g", next_++);
      req.vc = vcs[rng_() % vcs.size()];
      req.priority = static_cast<Priority>(rng_() % 4) - 1;
      req.lazy_preemption = rng_() % 3 == 0;
      req.members = {
          {static_cast<int32_t>(1 + rng_() % 2), static_cast<int32_t>(1 << (rng_() % 4))}};
      const Phase phase = rng_() % 3 == 0 ? Phase::kFiltering : Phase::kPreempting;
      absl::StatusOr<ScheduleResult> r = s.Schedule(req, phase);
      std::string out = Answer(r);
      if (r.ok() && r->outcome == Outcome::kPlaced) {
        if (phase == Phase::kFiltering || rng_() % 4 != 0) {
          absl::StatusOr<AllocateInfo> info = s.Allocate(req, r->placement);
          absl::StrAppend(&out, info.ok() ? " allocated" : info.status().ToString());
          if (info.ok()) running_.push_back(req.name);
        } else {
          open_.push_back(req);  // held: allocated or given up later
        }
      } else if (r.ok() && r->outcome == Outcome::kPreempting) {
        for (const std::string& v : r->victims) (void)s.Release(v);
        open_.push_back(req);
      }
      return out;
    }
    if (kind <= 6 && !open_.empty()) {
      const size_t k = rng_() % open_.size();
      GroupRequest req = open_[k];
      open_.erase(open_.begin() + static_cast<std::ptrdiff_t>(k));
      if (rng_() % 2 == 0) return s.Unreserve(req.name).ToString();
      absl::StatusOr<ScheduleResult> r = s.Schedule(req, Phase::kPreempting);
      std::string out = Answer(r);
      if (r.ok() && r->outcome == Outcome::kPlaced) {
        absl::StatusOr<AllocateInfo> info = s.Allocate(req, r->placement);
        absl::StrAppend(&out, info.ok() ? " allocated" : info.status().ToString());
        if (info.ok()) running_.push_back(req.name);
      } else {
        absl::StrAppend(&out, " ", s.Unreserve(req.name).ToString());
      }
      return out;
    }
    if (kind <= 8 && !running_.empty()) {
      const size_t k = rng_() % running_.size();
      const std::string name = running_[k];
      running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(k));
      return s.Release(name).ToString();
    }
    if (config_changes_ && rng_() % 3 == 0) {
      ApplyConfigOptions options;
      if (rng_() % 2 == 0) options.stranded = ApplyConfigOptions::Stranded::kApply;
      absl::StatusOr<RestoreReport> r =
          s.ApplyConfig(Config(static_cast<uint32_t>(rng_() % 3)), options);
      if (!r.ok()) return r.status().ToString();
      std::string out = "config";
      for (const RestoreReport::Group& g : r->groups) {
        absl::StrAppend(&out, " ", g.name, ":", static_cast<int>(g.outcome));
      }
      return out;
    }
    const uint32_t racks = config_changes_ ? 3 : 2;
    const std::string node = absl::StrCat("rack", rng_() % racks, "-node", rng_() % 4);
    return s.SetNodeHealthy(node, rng_() % 3 != 0).ToString();
  }
  bool no_open_reservation() const { return open_.empty(); }

 private:
  std::mt19937 rng_;  // NOLINT
  bool config_changes_;
  int32_t next_ = 0;
  std::vector<GroupRequest> open_;
  std::vector<std::string> running_;
};

void CheckRecovery(uint32_t seed, bool config_changes) {
  const ClusterSpec spec = TwoRacks();
  CAPTURE(seed);
  constexpr int kSteps = 120;
  // The run that writes the journal: after each step, the journal's size and the views.
  auto s = Scheduler::Create(spec);
  REQUIRE(s.ok());
  MemoryJournalSink sink;
  std::vector<JournalCheckpoint> checkpoints;
  std::vector<ClusterSpec> checkpoint_specs;  // the spec current at each checkpoint
  checkpoints.push_back(*(*s)->StartJournal(&sink));
  checkpoint_specs.push_back(spec);
  std::vector<size_t> sizes;
  std::vector<size_t> checkpoint_at;  // per step: the last checkpoint taken at or before it
  Workload work(seed, config_changes);
  int config_records = 0;
  std::mt19937 rng(seed ^ 0x9e3779b9u);
  for (int step = 0; step < kSteps; ++step) {
    if (work.Step(**s).rfind("config", 0) == 0) ++config_records;
    if (work.no_open_reservation() && rng() % 15 == 0) {
      checkpoints.push_back(*(*s)->StartJournal(&sink));  // the sink keeps older records
      checkpoint_specs.push_back((*s)->spec());
    }
    sizes.push_back(sink.data().size());
    checkpoint_at.push_back(checkpoints.size() - 1);
  }
  if (config_changes) CHECK(config_records > 0);
  for (int crash = 0; crash < 8; ++crash) {
    const int step = static_cast<int>(rng() % kSteps);
    CAPTURE(step);
    // The uncrashed scheduler at that step: the same workload again, without a journal.
    auto ref = Scheduler::Create(spec);
    REQUIRE(ref.ok());
    Workload again(seed, config_changes);
    for (int i = 0; i <= step; ++i) (void)again.Step(**ref);
    // The crash: the journal up to that step, plus a torn part of the next record.
    std::string journal = sink.data().substr(0, sizes[static_cast<size_t>(step)]);
    const size_t next_size = static_cast<size_t>(step) + 1 < sizes.size()
                                 ? sizes[static_cast<size_t>(step) + 1]
                                 : sizes.back();
    // At most the next record less a byte (the next step may have written several).
    size_t torn = next_size - journal.size();
    if (torn >= 8) {
      uint32_t frame = 0;
      for (size_t i = 0; i < 4; ++i) {
        frame |= static_cast<uint32_t>(static_cast<unsigned char>(sink.data()[journal.size() + i]))
                 << (8 * i);
      }
      torn = std::min<size_t>(torn, 8 + frame);
    }
    if (torn > 1) journal += sink.data().substr(journal.size(), rng() % (torn - 1) + 1);
    JournalRecoveryReport report;
    const size_t from = checkpoint_at[static_cast<size_t>(step)];
    auto back =
        Scheduler::RecoverFromJournal(checkpoint_specs[from], checkpoints[from], journal, &report);
    REQUIRE(back.ok());
    CAPTURE(report.failed);
    CHECK(report.failed.empty());
    CHECK(report.torn_tail_bytes ==
          static_cast<int64_t>(journal.size() - sizes[static_cast<size_t>(step)]));
    REQUIRE((*back)->CheckInvariants().ok());
    CHECK(Views(**back) == Views(**ref));
    CHECK(*(*back)->SaveState() == *(*ref)->SaveState());
    CHECK((*back)->JournalSequence() == (*ref)->JournalSequence());
    // The next 40 answers.
    CHECK((*back)->SpecFingerprint() == (*ref)->SpecFingerprint());
    Workload next_a(seed + 7, config_changes);
    Workload next_b(seed + 7, config_changes);
    for (int i = 0; i < 40; ++i) {
      CAPTURE(i);
      REQUIRE(next_a.Step(**back) == next_b.Step(**ref));
    }
    CHECK(*(*back)->SaveState() == *(*ref)->SaveState());
  }
}

TEST_CASE("Journal: recovery at random crash points equals the uncrashed scheduler",
          "[journal][property]") {
  CheckRecovery(GENERATE(take(6, random(1u, 1000000u))), /*config_changes=*/false);
}

TEST_CASE("Journal: recovery with live config changes at random crash points",
          "[journal][property]") {
  CheckRecovery(GENERATE(take(6, random(1u, 1000000u))), /*config_changes=*/true);
}

}  // namespace
}  // namespace hived

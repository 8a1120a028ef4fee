// Property test of the live config change (issue 29 item 6; `Scheduler::ApplyConfig`): a
// scheduler receives random calls (whole-GPU groups in every VC, guaranteed and
// opportunistic, allocated or left reserved, and on the sharing cluster fractional groups;
// releases; bad nodes), then a random config edit (a node renamed, a top-level cell removed
// or added, a VC resized, removed or added). Then:
//  - an invalid new spec is kInvalidArgument, and the state (SaveState, version) is as before;
//  - a change that strands a running group (Restore of the saved state into the new spec
//    reports it other than kept) is kFailedPrecondition naming the group, the state as
//    before; with `Stranded::kApply` it is applied;
//  - an applied change equals `Restore(new spec, SaveState before)`: the same report for
//    the running groups, every reservation reported dropped, the same views and saved
//    text, the same answers to the next calls; the version increases and `Changes` of an
//    earlier version is kOutOfRange; `CheckInvariants` holds.
// Runs on the example cluster (config/examples/two-racks.yaml), HiveD's design config and
// the sharing tests' cluster (fractional groups).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hived/config.h"
#include "hived/scheduler.h"
#include "hived/state.h"
#include "support/catch.h"
#include "support/property_knobs.h"
#include "unit/sharing/sharing_cluster.h"

namespace {

using hived::ApplyConfigOptions;
using hived::ClusterSpec;
using hived::GroupRequest;
using hived::GroupState;
using hived::Phase;
using hived::RestoreOutcome;
using hived::RestoreReport;
using hived::Scheduler;

std::string PlacementText(const hived::Placement& p) {
  std::string out = p.chain;
  for (const auto& pod : p.pods) {
    absl::StrAppend(&out, " ", pod.node, ":", absl::StrJoin(pod.leaf_cell_indices, ","), "[",
                    absl::StrJoin(pod.preassigned_cell_types, ","), "]");
  }
  return out;
}

void VirtualText(const std::vector<hived::VirtualCellStatus>& cells, std::string* out) {
  for (const auto& c : cells) {
    absl::StrAppend(out, c.address, "=", c.physical_cell, ":", hived::CellStateName(c.state), ":",
                    c.priority, " ");
    VirtualText(c.children, out);
  }
}

// Every view, as text: saved state, groups, nodes, usage, capacity, each VC's cells.
std::string Views(const Scheduler& s) {
  std::string out = s.SaveState().value_or("save failed");
  for (const auto& g : s.Groups()) {
    absl::StrAppend(&out, "\ngroup ", g.name, " ", g.vc, " ", hived::GroupStateName(g.state), " ",
                    g.priority, " ", PlacementText(g.placement), " ", g.downgrade_reason);
  }
  for (const auto& n : s.Nodes()) {
    absl::StrAppend(&out, "\nnode ", n.name, " ", n.free_leaf_cells, "/", n.total_leaf_cells, " ",
                    n.healthy);
  }
  for (const auto& u : s.VcUsages()) {
    absl::StrAppend(&out, "\nusage ", u.vc, " ", u.leaf_cell_type, " ", u.reserved_leaf_cells, " ",
                    u.guaranteed_used_leaf_cells, " ", u.opportunistic_used_leaf_cells);
  }
  for (const auto& c : s.Capacity()) {
    absl::StrAppend(&out, "\ncapacity ", c.chain, " ", c.level, " ", c.total, " ", c.free, " ",
                    c.obtainable, " ", c.vc_reserved);
  }
  for (const auto& vc : s.spec().virtual_clusters) {
    absl::StrAppend(&out, "\nvc ", vc.name, ": ");
    auto cells = s.VirtualCluster(vc.name);
    if (cells.ok()) VirtualText(*cells, &out);
  }
  return out;
}

std::string ReportText(const RestoreReport& r, bool running_only) {
  std::string out = absl::StrCat("unknown nodes ", absl::StrJoin(r.unknown_nodes, ","));
  for (const auto& g : r.groups) {
    if (running_only && g.path.empty()) continue;
    absl::StrAppend(&out, "\n", g.name, " ", g.path, " ", hived::RestoreOutcomeName(g.outcome), " ",
                    g.reason);
  }
  return out;
}

// The node-level cells of `cells` (of type `type`, "" below the top: derived).
void NodeCells(ClusterSpec& spec, std::vector<hived::PhysicalCellSpec>& cells,
               const std::string& type, std::vector<hived::PhysicalCellSpec*>* out) {
  for (auto& c : cells) {
    const std::string t = c.cell_type.empty() ? type : c.cell_type;
    const hived::CellTypeSpec* ts = nullptr;
    for (const auto& s : spec.cell_types) {
      if (s.name == t) ts = &s;
    }
    if (ts == nullptr) continue;  // a leaf
    if (ts->is_node_level) {
      out->push_back(&c);
    } else {
      NodeCells(spec, c.cell_children, ts->child_cell_type, out);
    }
  }
}

void RenameAll(hived::PhysicalCellSpec& c, const std::string& suffix) {
  if (!c.cell_address.empty()) c.cell_address += suffix;
  c.pinned_cell_id.clear();
  for (auto& child : c.cell_children) RenameAll(child, suffix);
}

// One random edit of `spec`; `what` says which.
ClusterSpec Edit(ClusterSpec spec, std::mt19937_64& rng, std::string* what) {
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  switch (rng() % 7) {
    case 0: {  // rename a node (one removed, another added)
      std::vector<hived::PhysicalCellSpec*> nodes;
      NodeCells(spec, spec.physical_cells, "", &nodes);
      hived::PhysicalCellSpec* n = nodes[pick(nodes.size())];
      *what = absl::StrCat("rename node ", n->cell_address);
      n->cell_address += "-new";
      break;
    }
    case 1: {  // remove a top-level cell
      const size_t i = pick(spec.physical_cells.size());
      *what = absl::StrCat("remove top cell ", i);
      spec.physical_cells.erase(spec.physical_cells.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
    case 2: {  // add a copy of a top-level cell
      const size_t i = pick(spec.physical_cells.size());
      *what = absl::StrCat("add a copy of top cell ", i);
      hived::PhysicalCellSpec copy = spec.physical_cells[i];
      RenameAll(copy, "-added");
      spec.physical_cells.push_back(copy);
      break;
    }
    case 3:
    case 4: {  // resize a VC's virtual cells
      auto& vc = spec.virtual_clusters[pick(spec.virtual_clusters.size())];
      if (vc.virtual_cells.empty()) {
        *what = "no edit";
        break;
      }
      auto& cell = vc.virtual_cells[pick(vc.virtual_cells.size())];
      const int32_t delta = rng() % 2 == 0 ? -1 : 1;
      *what = absl::StrCat("resize ", vc.name, " ", cell.cell_type, " by ", delta);
      cell.cell_number = std::max(0, cell.cell_number + delta);
      break;
    }
    case 5: {  // remove a VC
      const size_t i = pick(spec.virtual_clusters.size());
      *what = absl::StrCat("remove VC ", spec.virtual_clusters[i].name);
      spec.virtual_clusters.erase(spec.virtual_clusters.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
    default: {  // add a VC with one cell of another VC's first type
      const auto& from = spec.virtual_clusters[pick(spec.virtual_clusters.size())];
      hived::VirtualClusterSpec vc;
      vc.name = "added-vc";
      if (!from.virtual_cells.empty())
        vc.virtual_cells.push_back({from.virtual_cells[0].cell_type, 1});
      *what = "add a VC";
      spec.virtual_clusters.push_back(vc);
      break;
    }
  }
  return spec;
}

GroupRequest RandomRequest(const ClusterSpec& spec, std::mt19937_64& rng, int serial,
                           bool fractional) {
  GroupRequest req;
  req.name = absl::StrCat("g", serial);
  req.vc = spec.virtual_clusters[rng() % spec.virtual_clusters.size()].name;
  req.priority = rng() % 4 == 0 ? -1 : static_cast<int32_t>(rng() % 3);
  hived::GroupMember m;
  m.pod_number = 1 + static_cast<int32_t>(rng() % 2);
  m.leaf_cell_number = 1 << (rng() % 3);
  if (fractional && rng() % 2 == 0) {
    m.pod_number = 1;
    m.leaf_cell_number = 1;
    m.gpu_milli = 250 * (1 + static_cast<int32_t>(rng() % 2));
  }
  req.members = {m};
  return req;
}

// Random calls: new groups scheduled in the Preempting phase, mostly allocated; releases;
// a node marked bad now and then.
void RandomCalls(Scheduler& s, std::mt19937_64& rng, int steps, int* serial, bool fractional) {
  std::vector<std::string> live;
  for (int i = 0; i < steps; ++i) {
    const int kind = static_cast<int>(rng() % 10);
    if (kind < 7) {
      GroupRequest req = RandomRequest(s.spec(), rng, (*serial)++, fractional);
      auto r = s.Schedule(req, Phase::kPreempting);
      if (!r.ok() || r->outcome != hived::Outcome::kPlaced) continue;
      if (rng() % 5 == 0) continue;  // left reserved
      if (s.Allocate(req, r->placement).ok()) live.push_back(req.name);
    } else if (kind < 9 && !live.empty()) {
      const size_t j = rng() % live.size();
      (void)s.Release(live[j]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(j));
    } else {
      auto nodes = s.Nodes();
      if (!nodes.empty()) (void)s.SetNodeHealthy(nodes[rng() % nodes.size()].name, rng() % 2 == 0);
    }
  }
}

void RunConfig(const ClusterSpec& spec, bool fractional, int seeds) {
  int applied = 0, refused = 0, invalid = 0;
  for (int seed = 0; seed < seeds; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(static_cast<uint64_t>(seed) * 7919 + 1);
    auto s = Scheduler::Create(spec);
    REQUIRE(s.ok());
    int serial = 0;
    RandomCalls(**s, rng, 10 + static_cast<int>(rng() % 30), &serial, fractional);
    std::string what;
    const ClusterSpec next = Edit(spec, rng, &what);
    CAPTURE(what);
    const std::string before = (*s)->SaveState().value();
    const std::string views_before = Views(**s);
    const uint64_t version_before = (*s)->version();
    std::vector<std::string> reservations;
    for (const auto& g : (*s)->Groups()) {
      if (g.state == GroupState::kReserved || g.state == GroupState::kPreempting) {
        reservations.push_back(g.name);
      }
    }

    RestoreReport want;
    hived::RestoreOptions anyway;
    anyway.spec_mismatch = hived::SpecMismatch::kRestoreAnyway;
    auto ref = Scheduler::Restore(next, before, &want, anyway);
    auto got = (*s)->ApplyConfig(next);
    if (!ref.ok()) {
      ++invalid;
      REQUIRE_FALSE(got.ok());
      CHECK(got.status().code() == ref.status().code());
      REQUIRE(Views(**s) == views_before);
      REQUIRE((*s)->version() == version_before);
      continue;
    }
    std::vector<std::string> stranded;
    for (const auto& g : want.groups) {
      if (g.outcome != RestoreOutcome::kKept) stranded.push_back(g.name);
    }
    if (!stranded.empty()) {
      ++refused;
      REQUIRE(got.status().code() == absl::StatusCode::kFailedPrecondition);
      for (size_t i = 0; i < stranded.size() && i < 10; ++i) {
        CHECK(absl::StrContains(got.status().message(), absl::StrCat("group ", stranded[i], " ")));
      }
      REQUIRE((*s)->SaveState().value() == before);
      REQUIRE(Views(**s) == views_before);
      REQUIRE((*s)->version() == version_before);
      ApplyConfigOptions apply;
      apply.stranded = ApplyConfigOptions::Stranded::kApply;
      got = (*s)->ApplyConfig(next, apply);
    } else {
      ++applied;
    }
    REQUIRE(got.ok());
    CHECK(ReportText(*got, /*running_only=*/true) == ReportText(want, true));
    std::vector<std::string> dropped;
    for (const auto& g : got->groups) {
      if (g.path.empty()) {
        CHECK(g.outcome == RestoreOutcome::kDropped);
        dropped.push_back(g.name);
      }
    }
    CHECK(dropped == reservations);
    REQUIRE((*s)->CheckInvariants().ok());
    REQUIRE(Views(**s) == Views(**ref));
    REQUIRE((*s)->version() == version_before + 1);
    if (version_before > 0) {
      CHECK((*s)->Changes(version_before).status().code() == absl::StatusCode::kOutOfRange);
    }
    auto none = (*s)->Changes(version_before + 1);
    REQUIRE(none.ok());
    CHECK(none->groups.empty());

    // The next calls: the same answers, and Changes follows from the new version.
    std::mt19937_64 a(rng()), b = a;
    int serial_a = serial, serial_b = serial;
    RandomCalls(**s, a, 15, &serial_a, fractional);
    RandomCalls(**ref, b, 15, &serial_b, fractional);
    REQUIRE(Views(**s) == Views(**ref));
    REQUIRE((*s)->version() == version_before + 1 + (*ref)->version());
    REQUIRE((*s)->CheckInvariants().ok());
  }
  // Every path is taken across the seeds.
  CHECK(applied > 0);
  CHECK(refused > 0);
  INFO("invalid edits: " << invalid);
}

ClusterSpec Load(const std::string& path) {
  auto spec = hived::LoadClusterSpecFile(path);
  REQUIRE(spec.ok());
  return *spec;
}

int Seeds(int fallback) {
  return static_cast<int>(hived::testing::EnvKnob("HIVED_PROPERTY_SEEDS", fallback, 1));
}

TEST_CASE("ApplyConfig: equals Restore of the saved state into the new config (two racks)",
          "[config_change][property]") {
  RunConfig(Load(std::string(HIVED_SOURCE_DIR) + "/config/examples/two-racks.yaml"),
            /*fractional=*/false, Seeds(120));
}

TEST_CASE("ApplyConfig: equals Restore of the saved state into the new config (HiveD design)",
          "[config_change][property]") {
  RunConfig(Load(std::string(HIVED_SOURCE_DIR) + "/tests/testdata/hived-configs/design.yaml"),
            /*fractional=*/false, Seeds(80));
}

TEST_CASE("ApplyConfig: equals Restore of the saved state into the new config (GPU sharing)",
          "[config_change][property]") {
  auto spec = hived::LoadClusterSpecString(hived::testdata::kSharingYaml, "sharing.yaml");
  REQUIRE(spec.ok());
  RunConfig(*spec, /*fractional=*/true, Seeds(120));
}

}  // namespace

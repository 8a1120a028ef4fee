// The runner's restart, virtual-cell expectations and the dispatch of every action
// (sim/scenario/scenario_runner_impl.h).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "hived/config.h"
#include "hived/scheduler.h"
#include "sim/common/json.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_check.h"
#include "sim/scenario/scenario_runner_impl.h"

namespace hived::sim::scenario_internal {

void Runner::RunRestart(const RestartStep& step, StepOutcome* out) {
  const std::string config = step.config_file.empty() ? scenario_.config_file : step.config_file;
  out->summary = absl::StrCat("restart from ", config);
  out->json.Str("config", config);
  std::vector<GroupStatus> groups = scheduler_->Groups();
  if (absl::Status s = Build(config); !s.ok()) {
    out->failures.push_back(absl::StrCat("restart: cannot build the scheduler: ", StatusText(s)));
    out->file_error = true;
    return;
  }
  // The cluster manager knows which nodes are bad: report them before the replay.
  std::set<std::string> still_bad;
  for (const std::string& node : bad_nodes_) {
    if (scheduler_->SetNodeHealthy(node, false).ok()) still_bad.insert(node);
  }
  bad_nodes_ = still_bad;

  std::vector<GroupStatus> running;
  std::vector<std::string> preempting;
  for (GroupStatus& g : groups) {
    if (g.state == GroupState::kPreempting || g.state == GroupState::kReserved) {
      preempting.push_back(g.name);
    } else if (g.state != GroupState::kAbsent) {
      running.push_back(std::move(g));
    }
  }
  // A seeded shuffle: recovery must not depend on the replay order.
  std::mt19937_64 rng(scenario_.seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(++restarts_));
  std::shuffle(running.begin(), running.end(), rng);
  std::vector<std::string> order;
  std::vector<std::string> downgraded;
  for (const GroupStatus& g : running) {
    order.push_back(g.name);
    auto req = requests_.find(g.name);
    if (req == requests_.end()) {
      out->failures.push_back(
          absl::StrCat("restart: group ", g.name, " runs but no schedule step asked for it"));
      continue;
    }
    absl::StatusOr<AllocateInfo> info = scheduler_->Recover(req->second, g.placement);
    if (!info.ok()) {
      out->failures.push_back(absl::StrCat("restart: replaying group ", g.name,
                                           " failed: ", StatusText(info.status())));
      continue;
    }
    placements_[g.name] = g.placement;
    if (info->downgraded) downgraded.push_back(g.name);
  }
  out->json.Raw("replayOrder", JsonStrings(order)).Raw("downgraded", JsonStrings(downgraded));
  // Reserved and Preempting groups were not persisted; the cluster manager schedules them
  // again.
  std::vector<std::string> rescheduled;
  for (const std::string& name : preempting) {
    const GroupRequest& req = requests_[name];
    absl::StatusOr<ScheduleResult> r = scheduler_->Schedule(req, Phase::kPreempting);
    if (!r.ok()) {
      out->failures.push_back(absl::StrCat("restart: rescheduling preempting group ", name,
                                           " failed: ", StatusText(r.status())));
      continue;
    }
    rescheduled.push_back(absl::StrCat(name, ": ", OutcomeName(r->outcome)));
    if (r->outcome == Outcome::kPlaced || r->outcome == Outcome::kPreempting) {
      placements_[name] = r->placement;
    }
    if (r->outcome == Outcome::kPlaced) {
      absl::StatusOr<AllocateInfo> info = scheduler_->Allocate(req, r->placement);
      if (!info.ok()) {
        out->failures.push_back(absl::StrCat("restart: allocating rescheduled group ", name,
                                             " failed: ", StatusText(info.status())));
      }
    }
  }
  out->json.Raw("rescheduled", JsonStrings(rescheduled));
  if (step.downgraded) {
    std::vector<std::string> want = *step.downgraded;
    std::sort(want.begin(), want.end());
    std::sort(downgraded.begin(), downgraded.end());
    if (want != downgraded) {
      out->failures.push_back(absl::StrCat("restart: downgraded groups: expected ", ListText(want),
                                           ", got ", ListText(downgraded)));
    }
  }
}

void Runner::RunExpectVirtualCells(const ExpectVirtualCellsStep& step, StepOutcome* out) {
  out->summary = absl::StrCat("expectVirtualCells ", step.vc, " ", step.cell_type);
  absl::StatusOr<std::vector<VirtualCellStatus>> cells = scheduler_->VirtualCluster(step.vc);
  if (!cells.ok()) {
    out->failures.push_back(
        absl::StrCat("VirtualCluster(", step.vc, ") failed: ", StatusText(cells.status())));
    return;
  }
  const std::vector<std::string> path = absl::StrSplit(step.cell_type, '.');
  const std::string& type = path.back();
  const std::string chain = path.size() > 1 ? path.front() : "";
  const std::vector<std::string> chains = PreassignedChains(scheduler_->spec(), step.vc);
  int32_t healthy = 0;
  int32_t bad = 0;
  int32_t bound = 0;
  std::function<void(const VirtualCellStatus&)> count = [&](const VirtualCellStatus& c) {
    if (c.cell_type == type) {
      (c.health == CellHealth::kHealthy ? healthy : bad) += 1;
      if (!c.physical_cell.empty()) ++bound;
    }
    for (const VirtualCellStatus& child : c.children) count(child);
  };
  for (std::size_t i = 0; i < cells->size(); ++i) {
    const VirtualCellStatus& root = (*cells)[i];
    if (!chain.empty()) {
      // "<vc>/<n>": n indexes the VC's preassigned cells in config order.
      std::size_t n = i;
      const std::vector<std::string> parts = absl::StrSplit(root.address, '/');
      uint64_t parsed = 0;
      if (parts.size() >= 2 && absl::SimpleAtoi(parts[1], &parsed))
        n = static_cast<std::size_t>(parsed);
      if (n >= chains.size() || chains[n] != chain) continue;
    }
    count(root);
  }
  out->json.Str("vc", step.vc)
      .Str("cellType", step.cell_type)
      .Int("healthy", healthy)
      .Int("bad", bad)
      .Int("bound", bound);
  CheckEq("healthy cells", step.healthy, healthy, &out->failures);
  CheckEq("bad cells", step.bad, bad, &out->failures);
  CheckEq("bound cells", step.bound, bound, &out->failures);
}

void Runner::RunStep(const ScenarioAction& action, StepOutcome* out) {
  std::vector<std::string>& f = out->failures;
  if (const auto* s = std::get_if<ScheduleStep>(&action)) {
    out->kind = "schedule";
    RunSchedule(*s, out);
  } else if (const auto* a = std::get_if<AllocateStep>(&action)) {
    out->kind = "allocate";
    RunAllocate(*a, out);
  } else if (const auto* rel = std::get_if<ReleaseStep>(&action)) {
    out->kind = "release";
    out->summary = absl::StrCat("release ", rel->group);
    absl::Status st = scheduler_->Release(rel->group);
    out->json.Str("group", rel->group).Str("status", StatusText(st));
    CheckError(st, rel->expect_error, "release", &f);
  } else if (const auto* c = std::get_if<CancelStep>(&action)) {
    out->kind = c->unreserve ? "unreserve" : "cancel";
    out->summary = absl::StrCat(out->kind, " ", c->group);
    absl::Status st =
        c->unreserve ? scheduler_->Unreserve(c->group) : scheduler_->CancelPreemption(c->group);
    out->json.Str("group", c->group).Str("status", StatusText(st));
    CheckError(st, c->expect_error, out->kind, &f);
  } else if (const auto* h = std::get_if<NodeHealthStep>(&action)) {
    out->kind = h->healthy ? "setNodeHealthy" : "setNodeBad";
    out->summary = absl::StrCat(out->kind, " ", h->node);
    absl::Status st = scheduler_->SetNodeHealthy(h->node, h->healthy);
    out->json.Str("node", h->node).Str("status", StatusText(st));
    CheckError(st, h->expect_error, out->kind, &f);
    if (st.ok()) {
      if (h->healthy) {
        bad_nodes_.erase(h->node);
      } else {
        bad_nodes_.insert(h->node);
      }
    }
  } else if (const auto* g = std::get_if<ExpectGroupStep>(&action)) {
    out->kind = "expectGroup";
    out->summary = absl::StrCat("expectGroup ", g->group);
    const GroupStatus st = scheduler_->GetGroup(g->group);
    const std::vector<ExpectedPod> pods = ToPods(st.placement);
    out->json.Str("group", g->group)
        .Str("state", GroupStateName(st.state))
        .Int("priority", st.priority)
        .Str("preemptor", st.preemptor)
        .Str("downgradeReason", st.downgrade_reason)
        .Raw("placement", PodsJson(pods));
    if (g->state && *g->state != st.state) {
      f.push_back(absl::StrCat("state: expected ", GroupStateName(*g->state), ", got ",
                               GroupStateName(st.state)));
    }
    CheckEq("priority", g->priority, st.priority, &f);
    if (g->preemptor && *g->preemptor != st.preemptor) {
      f.push_back(absl::StrCat("preemptor: expected ", Quote(*g->preemptor), ", got ",
                               Quote(st.preemptor)));
    }
    if (g->downgrade_reason && !absl::StrContains(st.downgrade_reason, *g->downgrade_reason)) {
      f.push_back(absl::StrCat("downgradeReason: expected to contain ", Quote(*g->downgrade_reason),
                               ", got ", Quote(st.downgrade_reason)));
    }
    if (g->placement && !SamePods(*g->placement, pods)) {
      f.push_back(absl::StrCat("placement:\n      expected: ", PodsText(*g->placement),
                               "\n      actual:   ", PodsText(pods)));
    }
  } else if (const auto* v = std::get_if<ExpectVirtualCellsStep>(&action)) {
    out->kind = "expectVirtualCells";
    RunExpectVirtualCells(*v, out);
  } else if (const auto* cap = std::get_if<ExpectCapacityStep>(&action)) {
    out->kind = "expectCapacity";
    out->summary = absl::StrCat("expectCapacity ", cap->chain, " ",
                                cap->level ? absl::StrCat("level ", *cap->level) : cap->cell_type);
    const ChainLevelCapacity* row = nullptr;
    const std::vector<ChainLevelCapacity> rows = scheduler_->Capacity();
    for (const ChainLevelCapacity& r : rows) {
      if (r.chain == cap->chain &&
          (cap->level ? r.level == *cap->level : r.cell_type == cap->cell_type)) {
        row = &r;
      }
    }
    if (row == nullptr) {
      f.push_back(absl::StrCat("no capacity row for chain ", cap->chain, " ",
                               cap->level ? absl::StrCat("level ", *cap->level) : cap->cell_type));
      return;
    }
    out->json.Str("chain", row->chain)
        .Int("level", row->level)
        .Str("cellType", row->cell_type)
        .Int("total", row->total)
        .Int("free", row->free)
        .Int("obtainable", row->obtainable)
        .Int("badFree", row->bad_free)
        .Int("vcReserved", row->vc_reserved)
        .Int("vcUnbound", row->vc_unbound);
    CheckEq("free", cap->free, row->free, &f);
    CheckEq("obtainable", cap->obtainable, row->obtainable, &f);
    CheckEq("badFree", cap->bad_free, row->bad_free, &f);
    CheckEq("vcUnbound", cap->vc_unbound, row->vc_unbound, &f);
  } else if (const auto* n = std::get_if<ExpectNodeStep>(&action)) {
    out->kind = "expectNode";
    out->summary = absl::StrCat("expectNode ", n->node);
    const std::vector<NodeStatus> nodes = scheduler_->Nodes();
    auto it = std::find_if(nodes.begin(), nodes.end(),
                           [&](const NodeStatus& ns) { return ns.name == n->node; });
    if (it == nodes.end()) {
      f.push_back(absl::StrCat("no node ", n->node));
      return;
    }
    out->json.Str("node", it->name)
        .Int("freeLeafCells", it->free_leaf_cells)
        .Bool("healthy", it->healthy);
    CheckEq("freeLeafCells", n->free_leaf_cells, it->free_leaf_cells, &f);
    if (n->healthy && *n->healthy != it->healthy) {
      f.push_back(absl::StrCat("healthy: expected ", *n->healthy, ", got ", it->healthy));
    }
  } else if (const auto* u = std::get_if<ExpectUsageStep>(&action)) {
    out->kind = "expectUsage";
    out->summary = absl::StrCat("expectUsage ", u->vc, " ", u->leaf_cell_type);
    const std::vector<VcUsage> usages = scheduler_->VcUsages();
    auto it = std::find_if(usages.begin(), usages.end(), [&](const VcUsage& x) {
      return x.vc == u->vc && x.leaf_cell_type == u->leaf_cell_type;
    });
    if (it == usages.end()) {
      f.push_back(absl::StrCat("no usage row for VC ", u->vc, " leaf type ", u->leaf_cell_type));
      return;
    }
    out->json.Str("vc", it->vc)
        .Str("leafCellType", it->leaf_cell_type)
        .Int("reserved", it->reserved_leaf_cells)
        .Int("guaranteed", it->guaranteed_used_leaf_cells)
        .Int("opportunistic", it->opportunistic_used_leaf_cells);
    CheckEq("guaranteed used leaf cells", u->guaranteed, it->guaranteed_used_leaf_cells, &f);
    CheckEq("opportunistic used leaf cells", u->opportunistic, it->opportunistic_used_leaf_cells,
            &f);
  } else if (const auto* rs = std::get_if<RestartStep>(&action)) {
    out->kind = "restart";
    RunRestart(*rs, out);
  }
}

}  // namespace hived::sim::scenario_internal

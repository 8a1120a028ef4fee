#include "sim/scenario/scenario_runner.h"

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

namespace hived::sim {
namespace scenario_internal {
namespace {

// ---- The runner ------------------------------------------------------------------------

class Runner {
 public:
  Runner(const Scenario& scenario, const ScenarioRunOptions& options)
      : scenario_(scenario), options_(options) {}

  ScenarioReport Run();

 private:
  struct StepOutcome {
    std::string kind;
    std::string summary;  // "schedule g1", for the diff header
    JsonObject json;
    std::vector<std::string> failures;
    bool file_error = false;
  };

  absl::Status Build(const std::string& config_file);
  void RunSchedule(const ScheduleStep& step, StepOutcome* out);
  void RunAllocate(const AllocateStep& step, StepOutcome* out);
  void RunRestart(const RestartStep& step, StepOutcome* out);
  void RunExpectVirtualCells(const ExpectVirtualCellsStep& step, StepOutcome* out);
  void RunStep(const ScenarioAction& action, StepOutcome* out);

  const Scenario& scenario_;
  const ScenarioRunOptions& options_;
  std::unique_ptr<Scheduler> scheduler_;
  std::map<std::string, GroupRequest> requests_;  // the last request per group name
  std::map<std::string, Placement> placements_;   // the last placed/preempting placement
  std::set<std::string> bad_nodes_;
  int32_t restarts_ = 0;
};

absl::Status Runner::Build(const std::string& config_file) {
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecFile(config_file);
  if (!spec.ok()) return spec.status();
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler = Scheduler::Create(*spec);
  if (!scheduler.ok()) return scheduler.status();
  scheduler_ = std::move(*scheduler);
  return absl::OkStatus();
}

void Runner::RunSchedule(const ScheduleStep& step, StepOutcome* out) {
  const GroupRequest& req = step.request;
  const ScheduleExpectation& e = step.expect;
  out->summary = absl::StrCat("schedule ", req.name);
  out->json.Str("group", req.name)
      .Str("phase", step.phase == Phase::kFiltering ? "filtering" : "preempting");
  absl::StatusOr<ScheduleResult> result = scheduler_->Schedule(req, step.phase);
  std::vector<std::string>& f = out->failures;
  if (!result.ok()) {
    const std::string message(result.status().message());
    out->json.Str("outcome", "error")
        .Str("code", absl::StatusCodeToString(result.status().code()))
        .Str("error", message);
    if (!e.outcome || *e.outcome != ExpectedOutcome::kError) {
      f.push_back(absl::StrCat("outcome: expected ",
                               e.outcome ? ExpectedOutcomeName(*e.outcome) : "no error",
                               ", got error ", StatusText(result.status())));
      return;
    }
    if (e.error_code && *e.error_code != result.status().code()) {
      f.push_back(absl::StrCat("code: expected ", absl::StatusCodeToString(*e.error_code), ", got ",
                               StatusText(result.status())));
    }
    if (e.reason && !absl::StrContains(message, *e.reason)) {
      f.push_back(
          absl::StrCat("reason: expected to contain ", Quote(*e.reason), ", got ", Quote(message)));
    }
    for (const std::string& absent : e.reason_absent) {
      if (absl::StrContains(message, absent)) {
        f.push_back(absl::StrCat("reason: expected not to contain ", Quote(absent), ", got ",
                                 Quote(message)));
      }
    }
    return;
  }
  const ScheduleResult& r = *result;
  const std::vector<ExpectedPod> pods = ToPods(r.placement);
  out->json.Str("outcome", OutcomeName(r.outcome));
  if (r.outcome == Outcome::kPlaced || r.outcome == Outcome::kPreempting) {
    out->json.Str("chain", r.placement.chain).Raw("placement", PodsJson(pods));
  }
  if (!r.victims.empty()) out->json.Raw("victims", JsonStrings(r.victims));
  if (!r.reason.empty()) out->json.Str("reason", r.reason);

  const std::string reason_note =
      r.reason.empty() ? "" : absl::StrCat(" (reason: ", Quote(r.reason), ")");
  if (e.outcome && *e.outcome != ToExpected(r.outcome)) {
    f.push_back(absl::StrCat("outcome: expected ", ExpectedOutcomeName(*e.outcome), ", got ",
                             OutcomeName(r.outcome), reason_note));
  }
  if (e.error_code) {
    f.push_back(absl::StrCat("code: expected error ", absl::StatusCodeToString(*e.error_code),
                             ", got outcome ", OutcomeName(r.outcome)));
  }
  if (e.placement && !SamePods(*e.placement, pods)) {
    f.push_back(absl::StrCat("placement:\n      expected: ", PodsText(*e.placement),
                             "\n      actual:   ", PodsText(pods)));
  }
  if (e.chain && *e.chain != r.placement.chain) {
    f.push_back(absl::StrCat("chain: expected ", *e.chain, ", got ", Quote(r.placement.chain)));
  }
  if (e.victims) {
    std::vector<std::string> want = *e.victims;
    std::vector<std::string> got = r.victims;
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    if (want != got) {
      f.push_back(absl::StrCat("victims: expected ", ListText(want), ", got ", ListText(got)));
    }
  }
  if (e.reason && !absl::StrContains(r.reason, *e.reason)) {
    f.push_back(
        absl::StrCat("reason: expected to contain ", Quote(*e.reason), ", got ", Quote(r.reason)));
  }
  for (const std::string& absent : e.reason_absent) {
    if (absl::StrContains(r.reason, absent)) {
      f.push_back(absl::StrCat("reason: expected not to contain ", Quote(absent), ", got ",
                               Quote(r.reason)));
    }
  }
  for (const ExpectedPod& pod : pods) {
    for (const std::string& node : e.nodes_absent) {
      if (pod.node == node) {
        f.push_back(
            absl::StrCat("placement uses node ", node, ", which it must avoid: ", PodsText(pods)));
      }
    }
    if (e.nodes_within && std::find(e.nodes_within->begin(), e.nodes_within->end(), pod.node) ==
                              e.nodes_within->end()) {
      f.push_back(absl::StrCat("placement uses node ", pod.node, ", outside ",
                               ListText(*e.nodes_within), ": ", PodsText(pods)));
    }
  }
  requests_[req.name] = req;
  if (r.outcome == Outcome::kPlaced || r.outcome == Outcome::kPreempting) {
    placements_[req.name] = r.placement;
  }
  if (r.outcome == Outcome::kPlaced && step.allocate) {
    absl::StatusOr<AllocateInfo> info = scheduler_->Allocate(req, r.placement);
    out->json.Bool("allocated", info.ok());
    if (!info.ok()) {
      out->json.Str("allocateError", StatusText(info.status()));
      f.push_back(
          absl::StrCat("allocate: expected success, got error ", StatusText(info.status())));
      return;
    }
    out->json.Bool("downgraded", info->downgraded);
    if (info->downgraded) out->json.Str("downgradeReason", info->reason);
    if (step.expect_downgraded && *step.expect_downgraded != info->downgraded) {
      f.push_back(absl::StrCat("allocate: expected downgraded ", *step.expect_downgraded, ", got ",
                               info->downgraded, " ", Quote(info->reason)));
    }
  }
}

void Runner::RunAllocate(const AllocateStep& step, StepOutcome* out) {
  out->summary = absl::StrCat("allocate ", step.group);
  out->json.Str("group", step.group);
  auto req = requests_.find(step.group);
  if (req == requests_.end()) {
    out->failures.push_back(
        absl::StrCat("allocate: no earlier schedule step asked for group ", step.group));
    return;
  }
  Placement given;
  if (step.placement) {
    given.chain = step.chain;
    for (const ExpectedPod& pod : *step.placement) {
      PodPlacement p;
      p.leaf_cell_number = static_cast<int32_t>(pod.leaf_cells.size());
      p.node = pod.node;
      p.leaf_cell_indices = pod.leaf_cells;
      given.pods.push_back(std::move(p));
    }
  } else {
    auto placement = placements_.find(step.group);
    if (placement == placements_.end()) {
      out->failures.push_back(absl::StrCat("allocate: no earlier schedule step placed group ",
                                           step.group, " (placed or preempting)"));
      return;
    }
    given = placement->second;
  }
  absl::StatusOr<AllocateInfo> info = step.recover ? scheduler_->Recover(req->second, given)
                                                   : scheduler_->Allocate(req->second, given);
  out->json.Raw("placement", PodsJson(ToPods(given)));
  if (step.recover) out->json.Bool("recover", true);
  CheckError(info.status(), step.expect_error, step.recover ? "recover" : "allocate",
             &out->failures);
  if (!info.ok()) {
    out->json.Str("error", StatusText(info.status()));
    return;
  }
  out->json.Bool("downgraded", info->downgraded);
  if (info->downgraded) out->json.Str("downgradeReason", info->reason);
  if (step.expect_downgraded && *step.expect_downgraded != info->downgraded) {
    out->failures.push_back(absl::StrCat("allocate: expected downgraded ", *step.expect_downgraded,
                                         ", got ", info->downgraded, " ", Quote(info->reason)));
  }
}

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

bool FileExists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

ScenarioReport Runner::Run() {
  ScenarioReport report;
  report.file = scenario_.file;
  if (options_.skip_missing_config) {
    std::vector<std::string> missing;
    if (!FileExists(scenario_.config_file)) missing.push_back(scenario_.config_file);
    for (const ScenarioStep& step : scenario_.steps) {
      if (const auto* r = std::get_if<RestartStep>(&step.action)) {
        if (!r->config_file.empty() && !FileExists(r->config_file))
          missing.push_back(r->config_file);
      }
    }
    if (!missing.empty()) {
      report.status = ScenarioStatus::kSkipped;
      report.text = absl::StrCat("SKIP ", scenario_.file,
                                 ": config not found: ", absl::StrJoin(missing, ", "), "\n");
      return report;
    }
  }
  if (absl::Status s = Build(scenario_.config_file); !s.ok()) {
    report.status = ScenarioStatus::kFileError;
    report.text = absl::StrCat("ERROR ", scenario_.file, ": config ", scenario_.config_file, ":\n",
                               s.message(), "\n");
    return report;
  }
  for (std::size_t i = 0; i < scenario_.steps.size(); ++i) {
    const ScenarioStep& step = scenario_.steps[i];
    StepOutcome out;
    RunStep(step.action, &out);
    absl::Status invariants = scheduler_->CheckInvariants();
    if (!invariants.ok()) {
      out.failures.push_back(
          absl::StrCat("invariant broken after the step: ", StatusText(invariants)));
    }
    ScenarioStepRecord record;
    record.index = static_cast<int32_t>(i + 1);
    record.location = step.location;
    record.passed = out.failures.empty();
    out.json.Int("step", record.index)
        .Int("line", step.location.line)
        .Str("action", out.kind)
        .Bool("passed", record.passed);
    if (!out.failures.empty()) out.json.Raw("failures", JsonStrings(out.failures));
    record.json = out.json.Done();
    report.steps.push_back(record);
    report.steps_run = record.index;
    if (!out.failures.empty()) {
      report.status = out.file_error ? ScenarioStatus::kFileError : ScenarioStatus::kFailed;
      report.text =
          absl::StrCat("FAIL ", scenario_.file, "\n  step ", record.index, " (", step.location.file,
                       ":", step.location.line, ") ", out.summary, ":\n");
      for (const std::string& failure : out.failures) {
        absl::StrAppend(&report.text, "    ", failure, "\n");
      }
      return report;
    }
  }
  report.text = absl::StrCat("PASS ", scenario_.file, " (", scenario_.steps.size(), " steps)\n");
  return report;
}

}  // namespace
}  // namespace scenario_internal

ScenarioReport RunScenario(const Scenario& scenario, const ScenarioRunOptions& options) {
  return scenario_internal::Runner(scenario, options).Run();
}

ScenarioReport RunScenarioFile(const std::string& path, const ScenarioRunOptions& options) {
  absl::StatusOr<Scenario> scenario = LoadScenarioFile(path, options.limits);
  if (!scenario.ok()) {
    ScenarioReport report;
    report.file = path;
    report.status = ScenarioStatus::kFileError;
    report.text = absl::StrCat("ERROR ", scenario.status().message(), "\n");
    return report;
  }
  return RunScenario(*scenario, options);
}

}  // namespace hived::sim

// The extender's read side: HiveD's inspect API (affinity groups, cluster status in HiveD's
// JSON shapes) and the Prometheus metrics, over the scheduler's views (extender.h).
#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/extender.h"

namespace hived::server {
namespace {

using nlohmann::json;

const char* HivedCellState(CellState s) {
  switch (s) {
    case CellState::kFree:
      return "Free";
    case CellState::kUsed:
      return "Used";
    case CellState::kReserving:
      return "Reserving";
    case CellState::kReserved:
      return "Reserved";
  }
  return "Free";
}

const char* HivedHealth(CellHealth h) { return h == CellHealth::kBad ? "Bad" : "Healthy"; }

// HiveD's affinity group states.
const char* HivedGroupState(GroupState s) {
  switch (s) {
    case GroupState::kAllocated:
    case GroupState::kOpportunistic:
      return "Allocated";
    case GroupState::kPreempting:
    case GroupState::kReserved:
      return "Preempting";
    case GroupState::kBeingPreempted:
      return "BeingPreempted";
    case GroupState::kAbsent:
      break;
  }
  return "Deleted";
}

json PhysicalJson(const PhysicalCellStatus& c,
                  const std::map<std::string, std::string>* leaf_types) {
  json out = json::object();
  if (leaf_types != nullptr) {
    auto it = leaf_types->find(c.cell_type);
    if (it != leaf_types->end()) out["leafCellType"] = it->second;
  }
  out["cellType"] = c.cell_type;
  out["isNodeLevel"] = c.is_node_level;
  out["cellAddress"] = c.address;
  out["cellState"] = HivedCellState(c.state);
  out["cellHealthiness"] = HivedHealth(c.health);
  out["cellPriority"] = c.priority;
  if (!c.children.empty()) {
    json children = json::array();
    for (const PhysicalCellStatus& child : c.children) {
      children.push_back(PhysicalJson(child, nullptr));
    }
    out["cellChildren"] = std::move(children);
  }
  if (!c.vc.empty()) out["vc"] = c.vc;
  if (!c.virtual_cell.empty()) {
    out["virtualCell"] = json{{"cellAddress", c.virtual_cell}, {"cellType", c.cell_type}};
  }
  return out;
}

json VirtualJson(const VirtualCellStatus& c) {
  json out = json::object();
  out["cellType"] = c.cell_type;
  out["cellAddress"] = c.address;
  out["cellState"] = HivedCellState(c.state);
  out["cellHealthiness"] = HivedHealth(c.health);
  out["cellPriority"] = c.priority;
  if (!c.children.empty()) {
    json children = json::array();
    for (const VirtualCellStatus& child : c.children) children.push_back(VirtualJson(child));
    out["cellChildren"] = std::move(children);
  }
  if (!c.physical_cell.empty()) {
    out["physicalCell"] = json{{"cellAddress", c.physical_cell}, {"cellType", c.cell_type}};
  }
  return out;
}

}  // namespace

// ---- inspect --------------------------------------------------------------------------

json Extender::GroupJson(const GroupStatus& g) const {
  json physical = json::object();
  for (const PodPlacement& p : g.placement.pods) {
    json& list = physical[p.node];
    if (!list.is_array()) list = json::array();
    for (int32_t i : p.leaf_cell_indices) list.push_back(i);
  }
  json virtual_placement = json::object();
  if (absl::StatusOr<GroupRecord> record = scheduler_->GetGroupRecord(g.name); record.ok()) {
    for (const std::string& leaf : record->virtual_leaf_cells) {
      if (leaf.empty()) continue;
      // The preassigned cell: "<vc>/<n>" of "<vc>/<n>/<i>/...".
      size_t first = leaf.find('/');
      size_t second = first == std::string::npos ? first : leaf.find('/', first + 1);
      std::string preassigned = second == std::string::npos ? leaf : leaf.substr(0, second);
      json& list = virtual_placement[preassigned];
      if (!list.is_array()) list = json::array();
      list.push_back(leaf);
    }
  }
  json allocated = json::array();
  if (auto it = gangs_.find(g.name); it != gangs_.end()) {
    for (const Slot& s : it->second.slots) {
      if (s.allocated) allocated.push_back(s.uid);
    }
  }
  json status = {{"vc", g.vc},
                 {"priority", g.priority},
                 {"state", HivedGroupState(g.state)},
                 {"physicalPlacement", physical},
                 {"virtualPlacement", virtual_placement},
                 {"allocatedPods", allocated},
                 {"preemptingPods", json::array()}};
  if (auto it = preempting_pods_.find(g.name); it != preempting_pods_.end()) {
    for (const std::string& uid : it->second) status["preemptingPods"].push_back(uid);
  }
  if (!g.preemptor.empty()) status["lazyPreemptionStatus"] = json{{"preemptor", g.preemptor}};
  return json{{"metadata", {{"name", g.name}}}, {"status", status}};
}

HttpReply Extender::Paths() const {
  return JsonReply(200, json{{"paths",
                              {"/v1/extender/filter", "/v1/extender/preempt", "/v1/extender/bind",
                               "/v1/inspect/affinitygroups/", "/v1/inspect/clusterstatus",
                               "/v1/inspect/clusterstatus/physicalcluster",
                               "/v1/inspect/clusterstatus/virtualclusters/", "/healthz", "/readyz",
                               "/metrics"}}});
}

HttpReply Extender::Inspect(std::string_view path_view) const {
  const std::string path(path_view);
  auto starts_with = [&path](const std::string& prefix) { return path.rfind(prefix, 0) == 0; };
  auto user_error = [](std::string_view message) {
    return JsonReply(400, json{{"Error", absl::StrCat(kUserErrorPrefix, std::string(message))}});
  };
  std::lock_guard<std::mutex> lock(mu_);
  const std::string kGroups = "/v1/inspect/affinitygroups";
  const std::string kStatus = "/v1/inspect/clusterstatus";
  auto physical = [&] {
    std::map<std::string, std::string> leaf_types;
    for (const ChainSummary& c : scheduler_->ChainSummaries()) {
      leaf_types[c.chain] = c.leaf_cell_type;
    }
    json out = json::array();
    for (const PhysicalCellStatus& c : scheduler_->PhysicalCluster()) {
      out.push_back(PhysicalJson(c, &leaf_types));
    }
    return out;
  };
  auto virtual_of = [&](const std::string& vc) -> absl::StatusOr<json> {
    absl::StatusOr<std::vector<VirtualCellStatus>> cells = scheduler_->VirtualCluster(vc);
    if (!cells.ok()) return cells.status();
    json out = json::array();
    for (const VirtualCellStatus& c : *cells) out.push_back(VirtualJson(c));
    return out;
  };
  auto all_virtual = [&] {
    json out = json::object();
    for (const VirtualClusterSpec& vc : scheduler_->spec().virtual_clusters) {
      out[vc.name] = *virtual_of(vc.name);
    }
    return out;
  };
  if (path == kGroups || path == kGroups + "/") {
    json items = json::array();
    for (const GroupStatus& g : scheduler_->Groups()) items.push_back(GroupJson(g));
    return JsonReply(200, json{{"items", items}});
  }
  if (starts_with(kGroups + "/")) {
    std::string name = path.substr(kGroups.size() + 1);
    GroupStatus g = scheduler_->GetGroup(name);
    if (g.state == GroupState::kAbsent) {
      return user_error(absl::StrCat("Affinity group ", name,
                                     " does not exist since it is not allocated or preempting"));
    }
    return JsonReply(200, GroupJson(g));
  }
  if (path == kStatus || path == kStatus + "/") {
    return JsonReply(200,
                     json{{"physicalCluster", physical()}, {"virtualClusters", all_virtual()}});
  }
  if (path == kStatus + "/physicalcluster" || path == kStatus + "/physicalcluster/") {
    return JsonReply(200, physical());
  }
  const std::string vcs = kStatus + "/virtualclusters";
  if (path == vcs || path == vcs + "/") return JsonReply(200, all_virtual());
  if (starts_with(vcs + "/")) {
    std::string vc = path.substr(vcs.size() + 1);
    absl::StatusOr<json> cells = virtual_of(vc);
    if (!cells.ok()) return user_error(absl::StrCat("VC ", vc, " does not exist!"));
    return JsonReply(200, *cells);
  }
  return JsonReply(404, json{{"Error", absl::StrCat(kUserErrorPrefix, "no such route: ", path)}});
}

// ---- metrics --------------------------------------------------------------------------

std::string Extender::Metrics() const {
  std::string out;
  metrics_.AppendTo(&out);
  std::lock_guard<std::mutex> lock(mu_);
  absl::StrAppend(&out,
                  "# HELP hived_vc_leaf_cells A VC's leaf cells (its guarantee) per chain, by "
                  "state.\n# TYPE hived_vc_leaf_cells gauge\n");
  std::vector<VcSummary> vcs = scheduler_->VcSummaries();
  for (const VcSummary& v : vcs) {
    std::string labels =
        absl::StrCat("vc=\"", EscapeLabel(v.vc), "\",chain=\"", EscapeLabel(v.chain),
                     "\",leaf_cell_type=\"", EscapeLabel(v.leaf_cell_type), "\"");
    for (const auto& [state, n] :
         std::vector<std::pair<const char*, int32_t>>{{"total", v.leaves.total},
                                                      {"free", v.leaves.free},
                                                      {"used", v.leaves.used},
                                                      {"reserved", v.leaves.reserved},
                                                      {"bad", v.leaves.bad}}) {
      absl::StrAppend(&out, "hived_vc_leaf_cells{", labels, ",state=\"", state, "\"} ", n, "\n");
    }
  }
  absl::StrAppend(&out,
                  "# HELP hived_vc_opportunistic_used_leaf_cells Leaf cells a VC's "
                  "opportunistic groups use, per chain.\n"
                  "# TYPE hived_vc_opportunistic_used_leaf_cells gauge\n");
  for (const VcSummary& v : vcs) {
    absl::StrAppend(&out, "hived_vc_opportunistic_used_leaf_cells{vc=\"", EscapeLabel(v.vc),
                    "\",chain=\"", EscapeLabel(v.chain), "\"} ", v.opportunistic_used_leaf_cells,
                    "\n");
  }
  std::map<std::string, int64_t> by_state;
  for (GroupState s : {GroupState::kAllocated, GroupState::kOpportunistic, GroupState::kPreempting,
                       GroupState::kBeingPreempted, GroupState::kReserved}) {
    by_state[GroupStateName(s)] = 0;
  }
  for (const GroupStatus& g : scheduler_->Groups()) ++by_state[GroupStateName(g.state)];
  absl::StrAppend(&out,
                  "# HELP hived_groups Live affinity groups by state (reserved and preempting "
                  "ones hold reservations).\n# TYPE hived_groups gauge\n");
  for (const auto& [state, n] : by_state) {
    absl::StrAppend(&out, "hived_groups{state=\"", state, "\"} ", n, "\n");
  }
  absl::StrAppend(&out,
                  "# HELP hived_extender_reservations Groups holding a reservation (reserved or "
                  "preempting).\n# TYPE hived_extender_reservations gauge\n",
                  "hived_extender_reservations ", by_state["reserved"] + by_state["preempting"],
                  "\n",
                  "# HELP hived_extender_tracked_pods Pods holding a slot of a gang.\n"
                  "# TYPE hived_extender_tracked_pods gauge\n",
                  "hived_extender_tracked_pods ", pods_.size(), "\n",
                  "# HELP hived_extender_ready 1 once recovery is done.\n"
                  "# TYPE hived_extender_ready gauge\n",
                  "hived_extender_ready ", ready() ? 1 : 0, "\n");
  return out;
}

}  // namespace hived::server

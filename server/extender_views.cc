// The extender's read side: HiveD's inspect API (affinity groups, cluster status in HiveD's
// JSON shapes) and the Prometheus metrics, over the scheduler's views (extender.h).
#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

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

// What an affinity group's JSON needs besides its `GroupStatus`: the virtual leaves of its
// record and the pods the extender holds for it.
struct GroupExtras {
  std::vector<std::string> virtual_leaf_cells;
  std::vector<std::string> allocated_pods;   // slot order
  std::vector<std::string> preempting_pods;  // sorted
};

json GroupJson(const GroupStatus& g, const GroupExtras& extras) {
  json physical = json::object();
  for (const PodPlacement& p : g.placement.pods) {
    json& list = physical[p.node];
    if (!list.is_array()) list = json::array();
    for (int32_t i : p.leaf_cell_indices) list.push_back(i);
  }
  json virtual_placement = json::object();
  for (const std::string& leaf : extras.virtual_leaf_cells) {
    if (leaf.empty()) continue;
    // The preassigned cell: "<vc>/<n>" of "<vc>/<n>/<i>/...".
    size_t first = leaf.find('/');
    size_t second = first == std::string::npos ? first : leaf.find('/', first + 1);
    std::string preassigned = second == std::string::npos ? leaf : leaf.substr(0, second);
    json& list = virtual_placement[preassigned];
    if (!list.is_array()) list = json::array();
    list.push_back(leaf);
  }
  json status = {{"vc", g.vc},
                 {"priority", g.priority},
                 {"state", HivedGroupState(g.state)},
                 {"physicalPlacement", physical},
                 {"virtualPlacement", virtual_placement},
                 {"allocatedPods", extras.allocated_pods},
                 {"preemptingPods", extras.preempting_pods}};
  if (!g.preemptor.empty()) status["lazyPreemptionStatus"] = json{{"preemptor", g.preemptor}};
  return json{{"metadata", {{"name", g.name}}}, {"status", status}};
}

// The library's views an inspect route answers from, taken together (`Extender::TakeViews`).
struct InspectViews {
  std::vector<GroupStatus> groups;
  std::map<std::string, GroupExtras> extras;  // per group of `groups`
  std::vector<PhysicalCellStatus> physical;
  std::map<std::string, std::string> leaf_types;  // chain -> leaf cell type
  // Per VC asked for (config order); a VC the config does not have: an error.
  std::vector<std::pair<std::string, absl::StatusOr<std::vector<VirtualCellStatus>>>> virtuals;
};

json PhysicalListJson(const InspectViews& v) {
  json out = json::array();
  for (const PhysicalCellStatus& c : v.physical) out.push_back(PhysicalJson(c, &v.leaf_types));
  return out;
}

json VirtualListJson(const std::vector<VirtualCellStatus>& cells) {
  json out = json::array();
  for (const VirtualCellStatus& c : cells) out.push_back(VirtualJson(c));
  return out;
}

json AllVirtualJson(const InspectViews& v) {
  json out = json::object();
  for (const auto& [vc, cells] : v.virtuals) {
    if (cells.ok()) out[vc] = VirtualListJson(*cells);
  }
  return out;
}

}  // namespace

// ---- inspect --------------------------------------------------------------------------

void Extender::TakeViews(const std::function<void()>& library_views,
                         const std::function<void()>& own_state) const {
  // Optimistic first: the library's views without `mu_` (each takes the library's shared
  // lock; filters and binds go on meanwhile), kept when no change came in between — every
  // change of what a view shows increases `version()`, and every change is made under `mu_`,
  // so the version read under `mu_` equal to the one before the views means the views and
  // the extender's own state copied then are of one state.
  for (int attempt = 0; attempt < kInspectAttempts; ++attempt) {
    const uint64_t before = scheduler_->version();
    library_views();
    std::lock_guard<std::mutex> lock(mu_);
    if (scheduler_->version() == before) {
      own_state();
      return;
    }
  }
  // Changes kept coming: take the views under `mu_` (no change can come in between); the
  // JSON is still built outside it.
  std::lock_guard<std::mutex> lock(mu_);
  library_views();
  own_state();
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
  const std::string kGroups = "/v1/inspect/affinitygroups";
  const std::string kStatus = "/v1/inspect/clusterstatus";
  const std::string kVcs = kStatus + "/virtualclusters";
  const bool all_groups = path == kGroups || path == kGroups + "/";
  const bool one_group = !all_groups && starts_with(kGroups + "/");
  const bool status = path == kStatus || path == kStatus + "/";
  const bool physical =
      path == kStatus + "/physicalcluster" || path == kStatus + "/physicalcluster/";
  const bool all_vcs = path == kVcs || path == kVcs + "/";
  const bool one_vc = !all_vcs && starts_with(kVcs + "/");
  if (!all_groups && !one_group && !status && !physical && !all_vcs && !one_vc) {
    return JsonReply(404, json{{"Error", absl::StrCat(kUserErrorPrefix, "no such route: ", path)}});
  }
  const std::string name = one_group ? path.substr(kGroups.size() + 1)
                           : one_vc  ? path.substr(kVcs.size() + 1)
                                     : "";

  // The views, taken by `TakeViews` (copies; the JSON is built from them without `mu_`).
  InspectViews v;
  auto library_views = [&] {
    v = InspectViews{};
    if (all_groups) v.groups = scheduler_->Groups();
    if (one_group) {
      GroupStatus g = scheduler_->GetGroup(name);
      if (g.state != GroupState::kAbsent) v.groups.push_back(std::move(g));
    }
    for (const GroupStatus& g : v.groups) {
      GroupExtras& extras = v.extras[g.name];
      if (absl::StatusOr<GroupRecord> record = scheduler_->GetGroupRecord(g.name); record.ok()) {
        extras.virtual_leaf_cells = std::move(record->virtual_leaf_cells);
      }
    }
    if (status || physical) {
      for (const ChainSummary& c : scheduler_->ChainSummaries()) {
        v.leaf_types[c.chain] = c.leaf_cell_type;
      }
      v.physical = scheduler_->PhysicalCluster();
    }
    if (status || all_vcs) {
      for (const VirtualClusterSpec& vc : scheduler_->spec().virtual_clusters) {
        v.virtuals.emplace_back(vc.name, scheduler_->VirtualCluster(vc.name));
      }
    }
    if (one_vc) v.virtuals.emplace_back(name, scheduler_->VirtualCluster(name));
  };
  auto own_state = [&] {  // REQUIRES: mu_ held
    for (auto& [group, extras] : v.extras) {
      if (auto it = gangs_.find(group); it != gangs_.end()) {
        for (const Slot& s : it->second.slots) {
          if (s.allocated) extras.allocated_pods.push_back(s.uid);
        }
      }
      if (auto it = preempting_pods_.find(group); it != preempting_pods_.end()) {
        extras.preempting_pods.assign(it->second.begin(), it->second.end());
      }
    }
  };
  TakeViews(library_views, own_state);

  if (all_groups) {
    json items = json::array();
    for (const GroupStatus& g : v.groups) items.push_back(GroupJson(g, v.extras[g.name]));
    return JsonReply(200, json{{"items", items}});
  }
  if (one_group) {
    if (v.groups.empty()) {
      return user_error(absl::StrCat("Affinity group ", name,
                                     " does not exist since it is not allocated or preempting"));
    }
    return JsonReply(200, GroupJson(v.groups[0], v.extras[name]));
  }
  if (status) {
    return JsonReply(200, json{{"physicalCluster", PhysicalListJson(v)},
                               {"virtualClusters", AllVirtualJson(v)}});
  }
  if (physical) return JsonReply(200, PhysicalListJson(v));
  if (all_vcs) return JsonReply(200, AllVirtualJson(v));
  const auto& cells = v.virtuals.at(0).second;
  if (!cells.ok()) return user_error(absl::StrCat("VC ", name, " does not exist!"));
  return JsonReply(200, VirtualListJson(*cells));
}

// ---- metrics --------------------------------------------------------------------------

std::string Extender::Metrics() const {
  std::string out;
  metrics_.AppendTo(&out);
  // Gauges need no single snapshot: each library view is consistent by itself, and `mu_` is
  // held only to count the tracked pods.
  size_t tracked_pods = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    tracked_pods = pods_.size();
  }
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
                  "hived_extender_tracked_pods ", tracked_pods, "\n",
                  "# HELP hived_extender_ready 1 once recovery is done.\n"
                  "# TYPE hived_extender_ready gauge\n",
                  "hived_extender_ready ", ready() ? 1 : 0, "\n");
  return out;
}

}  // namespace hived::server

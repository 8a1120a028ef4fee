// The C interface's calls on running groups and the read side (hived_c.h): release,
// unreserve, cancel, node health, invariants, saved state and group records, and the views as
// JSON. The handle types and conventions are capi_internal.h's.
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "capi_internal.h"
#include "hived/config.h"
#include "hived/hived_c.h"
#include "hived/scheduler.h"
#include "hived/state.h"
#include "hived/status_view.h"

using hived::capi::ClearInfo;
using hived::capi::Dump;
using hived::capi::FillInfo;
using hived::capi::FromStatus;
using hived::capi::GroupJson;
using hived::capi::Guard;
using hived::capi::Json;
using hived::capi::JsonView;
using hived::capi::LeavesJson;
using hived::capi::NullArgument;
using hived::capi::Output;
using hived::capi::RestoreReportJson;
using hived::capi::VirtualCellJson;

namespace {

template <typename Call>
hived_code GroupCall(hived_scheduler* scheduler, const char* group, const char* function,
                     char** error, Call&& call) {
  if (scheduler == nullptr) return NullArgument(error, function, "scheduler");
  if (group == nullptr) return NullArgument(error, function, "group");
  return Guard(error, [&] { return FromStatus(call(*scheduler->scheduler), error); });
}

}  // namespace

extern "C" {

hived_code hived_release(hived_scheduler* scheduler, const char* group, char** error) {
  return GroupCall(scheduler, group, "hived_release", error,
                   [&](hived::Scheduler& s) { return s.Release(group); });
}

hived_code hived_unreserve(hived_scheduler* scheduler, const char* group, char** error) {
  return GroupCall(scheduler, group, "hived_unreserve", error,
                   [&](hived::Scheduler& s) { return s.Unreserve(group); });
}

hived_code hived_cancel_preemption(hived_scheduler* scheduler, const char* group, char** error) {
  return GroupCall(scheduler, group, "hived_cancel_preemption", error,
                   [&](hived::Scheduler& s) { return s.CancelPreemption(group); });
}

hived_code hived_set_node_healthy(hived_scheduler* scheduler, const char* node, int healthy,
                                  char** error) {
  if (scheduler == nullptr) return NullArgument(error, "hived_set_node_healthy", "scheduler");
  if (node == nullptr) return NullArgument(error, "hived_set_node_healthy", "node");
  return Guard(error, [&] {
    return FromStatus(scheduler->scheduler->SetNodeHealthy(node, healthy != 0), error);
  });
}

hived_code hived_check_invariants(const hived_scheduler* scheduler, char** error) {
  if (scheduler == nullptr) return NullArgument(error, "hived_check_invariants", "scheduler");
  return Guard(error, [&] { return FromStatus(scheduler->scheduler->CheckInvariants(), error); });
}

hived_code hived_save_state(const hived_scheduler* scheduler, char** state, size_t* state_len,
                            char** error) {
  if (scheduler == nullptr) return NullArgument(error, "hived_save_state", "scheduler");
  if (state == nullptr) return NullArgument(error, "hived_save_state", "state");
  return Guard(error, [&] {
    absl::StatusOr<std::string> saved = scheduler->scheduler->SaveState();
    if (!saved.ok()) return FromStatus(saved.status(), error);
    return Output(*saved, state, state_len, error);
  });
}

}  // extern "C"

namespace hived::capi {
Json RestoreReportJson(const hived::RestoreReport& report) {
  Json groups = Json::array();
  for (const hived::RestoreReport::Group& g : report.groups) {
    groups.push_back({{"name", g.name},
                      {"path", g.path},
                      {"outcome", hived::RestoreOutcomeName(g.outcome)},
                      {"reason", g.reason}});
  }
  return {{"groups", std::move(groups)},
          {"unknownNodes", report.unknown_nodes},
          {"notes", report.notes}};
}
}  // namespace hived::capi

extern "C" {

hived_code hived_scheduler_restore(const hived_config* config, const char* state, size_t state_len,
                                   hived_scheduler** out, char** report_json, char** error) {
  constexpr const char* kFn = "hived_scheduler_restore";
  if (config == nullptr) return NullArgument(error, kFn, "config");
  if (state == nullptr && state_len > 0) return NullArgument(error, kFn, "state");
  if (out == nullptr) return NullArgument(error, kFn, "out");
  return Guard(error, [&] {
    hived::RestoreReport report;
    const std::string_view text =
        state == nullptr ? std::string_view() : std::string_view(state, state_len);
    absl::StatusOr<std::unique_ptr<hived::Scheduler>> s =
        hived::Scheduler::Restore(config->spec, text, &report);
    if (!s.ok()) return FromStatus(s.status(), error);
    if (report_json != nullptr) {
      const Json j = RestoreReportJson(report);
      const hived_code code = Output(Dump(j), report_json, nullptr, error);
      if (code != HIVED_OK) return code;
    }
    *out = new hived_scheduler{nullptr, std::move(*s)};
    return HIVED_OK;
  });
}

hived_code hived_group_record(const hived_scheduler* scheduler, const char* group,
                              char** record_json, size_t* record_len, char** error) {
  if (scheduler == nullptr) return NullArgument(error, "hived_group_record", "scheduler");
  if (group == nullptr) return NullArgument(error, "hived_group_record", "group");
  if (record_json == nullptr) return NullArgument(error, "hived_group_record", "record_json");
  return Guard(error, [&] {
    absl::StatusOr<hived::GroupRecord> record = scheduler->scheduler->GetGroupRecord(group);
    if (!record.ok()) return FromStatus(record.status(), error);
    return Output(hived::GroupRecordToJson(*record), record_json, record_len, error);
  });
}

hived_code hived_allocate_record(hived_scheduler* scheduler, const char* record_json,
                                 size_t record_len, hived_allocate_info* info, char** error) {
  ClearInfo(info);
  if (scheduler == nullptr) return NullArgument(error, "hived_allocate_record", "scheduler");
  if (record_json == nullptr) return NullArgument(error, "hived_allocate_record", "record_json");
  return Guard(error, [&] {
    absl::StatusOr<hived::GroupRecord> record =
        hived::GroupRecordFromJson(std::string_view(record_json, record_len));
    if (!record.ok()) return FromStatus(record.status(), error);
    absl::StatusOr<hived::AllocateInfo> i = scheduler->scheduler->AllocateRecord(*record);
    if (!i.ok()) return FromStatus(i.status(), error);
    FillInfo(*i, info);
    return HIVED_OK;
  });
}

hived_code hived_import_hived_bind_info(const char* bind_info_yaml, size_t bind_info_len,
                                        const char* scheduling_spec_yaml,
                                        size_t scheduling_spec_len, char** record_json,
                                        size_t* record_len, char** error) {
  constexpr const char* kFn = "hived_import_hived_bind_info";
  if (bind_info_yaml == nullptr) return NullArgument(error, kFn, "bind_info_yaml");
  if (scheduling_spec_yaml == nullptr && scheduling_spec_len > 0) {
    return NullArgument(error, kFn, "scheduling_spec_yaml");
  }
  if (record_json == nullptr) return NullArgument(error, kFn, "record_json");
  return Guard(error, [&] {
    const std::string_view spec = scheduling_spec_yaml == nullptr
                                      ? std::string_view()
                                      : std::string_view(scheduling_spec_yaml, scheduling_spec_len);
    absl::StatusOr<hived::GroupRecord> record =
        hived::ImportHivedBindInfo(std::string_view(bind_info_yaml, bind_info_len), spec);
    if (!record.ok()) return FromStatus(record.status(), error);
    return Output(hived::GroupRecordToJson(*record), record_json, record_len, error);
  });
}

hived_code hived_group_json(const hived_scheduler* scheduler, const char* group, char** json,
                            size_t* json_len, char** error) {
  if (group == nullptr) return NullArgument(error, "hived_group_json", "group");
  return JsonView(scheduler, "hived_group_json", json, json_len, error,
                  [&](const hived::Scheduler& s) -> absl::StatusOr<Json> {
                    return GroupJson(s.GetGroup(group));
                  });
}

hived_code hived_groups_json(const hived_scheduler* scheduler, char** json, size_t* json_len,
                             char** error) {
  return JsonView(scheduler, "hived_groups_json", json, json_len, error,
                  [&](const hived::Scheduler& s) -> absl::StatusOr<Json> {
                    Json j = Json::array();
                    for (const hived::GroupStatus& g : s.Groups()) j.push_back(GroupJson(g));
                    return j;
                  });
}

hived_code hived_groups_page_json(const hived_scheduler* scheduler, const char* after,
                                  int32_t limit, char** json, size_t* json_len, char** error) {
  return JsonView(scheduler, "hived_groups_page_json", json, json_len, error,
                  [&](const hived::Scheduler& s) -> absl::StatusOr<Json> {
                    Json j = Json::array();
                    const std::string_view from = after == nullptr ? "" : after;
                    for (const hived::GroupStatus& g : s.Groups(from, limit)) {
                      j.push_back(GroupJson(g));
                    }
                    return j;
                  });
}

hived_code hived_state_version(const hived_scheduler* scheduler, uint64_t* version, char** error) {
  if (scheduler == nullptr) return NullArgument(error, "hived_state_version", "scheduler");
  if (version == nullptr) return NullArgument(error, "hived_state_version", "version");
  return Guard(error, [&] {
    *version = scheduler->scheduler->version();
    return HIVED_OK;
  });
}

hived_code hived_changes_json(const hived_scheduler* scheduler, uint64_t since, char** json,
                              size_t* json_len, char** error) {
  return JsonView(
      scheduler, "hived_changes_json", json, json_len, error,
      [&](const hived::Scheduler& s) -> absl::StatusOr<Json> {
        absl::StatusOr<hived::StateChanges> ch = s.Changes(since);
        if (!ch.ok()) return ch.status();
        return Json{{"version", ch->version}, {"groups", ch->groups}, {"nodes", ch->nodes}};
      });
}

hived_code hived_nodes_json(const hived_scheduler* scheduler, char** json, size_t* json_len,
                            char** error) {
  return JsonView(scheduler, "hived_nodes_json", json, json_len, error,
                  [&](const hived::Scheduler& s) -> absl::StatusOr<Json> {
                    Json j = Json::array();
                    for (const hived::NodeStatus& n : s.Nodes()) {
                      j.push_back({{"name", n.name},
                                   {"leafCellType", n.leaf_cell_type},
                                   {"totalLeafCells", n.total_leaf_cells},
                                   {"freeLeafCells", n.free_leaf_cells},
                                   {"healthy", n.healthy}});
                    }
                    return j;
                  });
}

hived_code hived_vc_usages_json(const hived_scheduler* scheduler, char** json, size_t* json_len,
                                char** error) {
  return JsonView(
      scheduler, "hived_vc_usages_json", json, json_len, error,
      [&](const hived::Scheduler& s) -> absl::StatusOr<Json> {
        Json j = Json::array();
        for (const hived::VcUsage& u : s.VcUsages()) {
          j.push_back({{"vc", u.vc},
                       {"leafCellType", u.leaf_cell_type},
                       {"reservedLeafCells", u.reserved_leaf_cells},
                       {"guaranteedUsedLeafCells", u.guaranteed_used_leaf_cells},
                       {"opportunisticUsedLeafCells", u.opportunistic_used_leaf_cells}});
        }
        return j;
      });
}

hived_code hived_chain_summaries_json(const hived_scheduler* scheduler, char** json,
                                      size_t* json_len, char** error) {
  return JsonView(scheduler, "hived_chain_summaries_json", json, json_len, error,
                  [&](const hived::Scheduler& s) -> absl::StatusOr<Json> {
                    Json j = Json::array();
                    for (const hived::ChainSummary& c : s.ChainSummaries()) {
                      j.push_back({{"chain", c.chain},
                                   {"leafCellType", c.leaf_cell_type},
                                   {"nodes", c.nodes},
                                   {"badNodes", c.bad_nodes},
                                   {"leaves", LeavesJson(c.leaves)}});
                    }
                    return j;
                  });
}

hived_code hived_vc_summaries_json(const hived_scheduler* scheduler, char** json, size_t* json_len,
                                   char** error) {
  return JsonView(
      scheduler, "hived_vc_summaries_json", json, json_len, error,
      [&](const hived::Scheduler& s) -> absl::StatusOr<Json> {
        Json j = Json::array();
        for (const hived::VcSummary& v : s.VcSummaries()) {
          j.push_back({{"vc", v.vc},
                       {"chain", v.chain},
                       {"leafCellType", v.leaf_cell_type},
                       {"leaves", LeavesJson(v.leaves)},
                       {"opportunisticUsedLeafCells", v.opportunistic_used_leaf_cells}});
        }
        return j;
      });
}

hived_code hived_virtual_cluster_json(const hived_scheduler* scheduler, const char* vc, char** json,
                                      size_t* json_len, char** error) {
  if (vc == nullptr) return NullArgument(error, "hived_virtual_cluster_json", "vc");
  return JsonView(scheduler, "hived_virtual_cluster_json", json, json_len, error,
                  [&](const hived::Scheduler& s) -> absl::StatusOr<Json> {
                    absl::StatusOr<std::vector<hived::VirtualCellStatus>> cells =
                        s.VirtualCluster(vc);
                    if (!cells.ok()) return cells.status();
                    Json j = Json::array();
                    for (const hived::VirtualCellStatus& c : *cells) {
                      j.push_back(VirtualCellJson(c));
                    }
                    return j;
                  });
}

}  // extern "C"

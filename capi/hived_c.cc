// The C interface (include/hived/hived_c.h) over the public C++ API. Every entry point
// converts its arguments, calls the C++ API and converts the answer; no C++ exception
// leaves it (an allocation failure becomes HIVED_RESOURCE_EXHAUSTED).
#include "hived/hived_c.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "capi_internal.h"
#include "hived/cluster_spec.h"
#include "hived/config.h"
#include "hived/schedule_result.h"
#include "hived/scheduler.h"
#include "hived/state.h"
#include "hived/status_view.h"
#include "hived/version.h"
#include "nlohmann/json.hpp"

namespace hived::capi {

std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

char* CopyOut(std::string_view text) {
  char* out = static_cast<char*>(std::malloc(text.size() + 1));
  if (out == nullptr) return nullptr;
  if (!text.empty()) std::memcpy(out, text.data(), text.size());
  out[text.size()] = '\0';
  return out;
}

hived_code Fail(char** error, hived_code code, std::string_view message) {
  if (error != nullptr) {
    std::free(*error);
    *error = CopyOut(message);
  }
  return code;
}

hived_code FromStatus(const absl::Status& status, char** error) {
  if (status.ok()) return HIVED_OK;
  const absl::string_view message = status.message();
  return Fail(error, static_cast<hived_code>(status.code()),
              std::string_view(message.data(), message.size()));
}

hived_code NullArgument(char** error, const char* function, const char* argument) {
  return Fail(error, HIVED_INVALID_ARGUMENT, absl::StrCat(function, ": ", argument, " is NULL"));
}

// Hands `text` to the caller through `out` and `out_len`.
hived_code Output(std::string_view text, char** out, size_t* out_len, char** error) {
  char* copy = CopyOut(text);
  if (copy == nullptr) return Fail(error, HIVED_RESOURCE_EXHAUSTED, "out of memory");
  *out = copy;
  if (out_len != nullptr) *out_len = text.size();
  return HIVED_OK;
}

std::string Str(const char* s) { return s == nullptr ? std::string() : std::string(s); }

void FillInfo(const hived::AllocateInfo& info, hived_allocate_info* out) {
  if (out == nullptr) return;
  out->downgraded = info.downgraded ? 1 : 0;
  out->reason = info.downgraded ? CopyOut(info.reason) : nullptr;
}

void ClearInfo(hived_allocate_info* out) {
  if (out == nullptr) return;
  out->downgraded = 0;
  out->reason = nullptr;
}

Json PlacementJson(const hived::Placement& placement) {
  Json pods = Json::array();
  for (const hived::PodPlacement& pod : placement.pods) {
    Json p = {{"leafCellNumber", pod.leaf_cell_number},
              {"physicalNode", pod.node},
              {"physicalLeafCellIndices", pod.leaf_cell_indices},
              {"preassignedCellTypes", pod.preassigned_cell_types}};
    if (!pod.mig_profile.empty()) p["migProfile"] = pod.mig_profile;
    if (pod.mig_start >= 0) p["migStart"] = pod.mig_start;
    pods.push_back(std::move(p));
  }
  return {{"cellChain", placement.chain}, {"pods", std::move(pods)}};
}

Json RequestJson(const hived::GroupRequest& request) {
  Json members = Json::array();
  for (const hived::GroupMember& m : request.members) {
    Json j = {{"podNumber", m.pod_number}, {"leafCellNumber", m.leaf_cell_number}};
    if (m.gpu_milli != 0) j["gpuMilli"] = m.gpu_milli;
    if (m.gpu_memory_mib != 0) j["gpuMemoryMiB"] = m.gpu_memory_mib;
    if (m.cpu_milli != 0) j["cpuMilli"] = m.cpu_milli;
    if (m.memory_mib != 0) j["memoryMiB"] = m.memory_mib;
    if (!m.mig_profile.empty()) j["migProfile"] = m.mig_profile;
    members.push_back(std::move(j));
  }
  Json j = {{"name", request.name},
            {"virtualCluster", request.vc},
            {"priority", request.priority},
            {"leafCellType", request.leaf_cell_type},
            {"leafCellTypes", request.leaf_cell_types},
            {"pinnedCellId", request.pinned_cell_id},
            {"lazyPreemptionEnable", request.lazy_preemption},
            {"members", std::move(members)}};
  return j;
}

Json GroupJson(const hived::GroupStatus& g) {
  return {{"name", g.name},
          {"virtualCluster", g.vc},
          {"state", hived::GroupStateName(g.state)},
          {"priority", g.priority},
          {"request", RequestJson(g.request)},
          {"placement", PlacementJson(g.placement)},
          {"preemptor", g.preemptor},
          {"downgradeReason", g.downgrade_reason}};
}

Json LeavesJson(const hived::LeafCounts& c) {
  return {{"total", c.total},
          {"free", c.free},
          {"used", c.used},
          {"reserved", c.reserved},
          {"opportunistic", c.opportunistic},
          {"bad", c.bad}};
}

Json VirtualCellJson(const hived::VirtualCellStatus& c) {
  Json children = Json::array();
  for (const hived::VirtualCellStatus& child : c.children) {
    children.push_back(VirtualCellJson(child));
  }
  return {{"cellType", c.cell_type},
          {"address", c.address},
          {"level", c.level},
          {"state", hived::CellStateName(c.state)},
          {"health", hived::CellHealthName(c.health)},
          {"priority", c.priority},
          {"physicalCell", c.physical_cell},
          {"pinnedCellId", c.pinned_cell_id},
          {"children", std::move(children)}};
}

hived_code LoadConfig(absl::StatusOr<hived::ClusterSpec> spec, hived_config** out, char** error) {
  if (!spec.ok()) return FromStatus(spec.status(), error);
  *out = new hived_config{std::move(*spec)};
  return HIVED_OK;
}

static_assert(static_cast<int>(hived::Outcome::kInfeasible) == HIVED_OUTCOME_INFEASIBLE);
static_assert(static_cast<int>(hived::ReasonCode::kLazyDowngrade) == HIVED_REASON_LAZY_DOWNGRADE);
static_assert(static_cast<int>(absl::StatusCode::kUnauthenticated) == HIVED_UNAUTHENTICATED);

hived_code ScheduleInto(const char* function, hived_scheduler* scheduler,
                        const hived_request* request, int phase, const hived::ReservationTime* time,
                        hived_result* result, char** error) {
  if (result == nullptr) return NullArgument(error, function, "result");
  const hived_code code = [&] {
    if (scheduler == nullptr) return NullArgument(error, function, "scheduler");
    if (request == nullptr) return NullArgument(error, function, "request");
    if (phase != HIVED_PHASE_FILTERING && phase != HIVED_PHASE_PREEMPTING) {
      return Fail(error, HIVED_INVALID_ARGUMENT,
                  absl::StrCat(function, ": phase ", phase, " is not a hived_phase"));
    }
    return Guard(error, [&] {
      const hived::Phase p =
          phase == HIVED_PHASE_FILTERING ? hived::Phase::kFiltering : hived::Phase::kPreempting;
      absl::StatusOr<hived::ScheduleResult> r =
          time == nullptr ? scheduler->scheduler->Schedule(request->request, p)
                          : scheduler->scheduler->Schedule(request->request, p, *time);
      if (!r.ok()) return FromStatus(r.status(), error);
      result->result = *std::move(r);
      return HIVED_OK;
    });
  }();
  if (code != HIVED_OK) result->result = hived::ScheduleResult();  // emptied on an error
  return code;
}

}  // namespace hived::capi

using hived::capi::ClearInfo;
using hived::capi::Dump;
using hived::capi::Fail;
using hived::capi::FillInfo;
using hived::capi::FromStatus;
using hived::capi::Guard;
using hived::capi::Json;
using hived::capi::LoadConfig;
using hived::capi::NullArgument;
using hived::capi::Output;
using hived::capi::PlacementJson;
using hived::capi::Str;

extern "C" {

const char* hived_version(void) { return hived::VersionString(); }

void hived_free(void* p) { std::free(p); }

const char* hived_code_name(int code) {
  switch (code) {
    case HIVED_OK:
      return "ok";
    case HIVED_CANCELLED:
      return "cancelled";
    case HIVED_UNKNOWN:
      return "unknown";
    case HIVED_INVALID_ARGUMENT:
      return "invalid-argument";
    case HIVED_DEADLINE_EXCEEDED:
      return "deadline-exceeded";
    case HIVED_NOT_FOUND:
      return "not-found";
    case HIVED_ALREADY_EXISTS:
      return "already-exists";
    case HIVED_PERMISSION_DENIED:
      return "permission-denied";
    case HIVED_RESOURCE_EXHAUSTED:
      return "resource-exhausted";
    case HIVED_FAILED_PRECONDITION:
      return "failed-precondition";
    case HIVED_ABORTED:
      return "aborted";
    case HIVED_OUT_OF_RANGE:
      return "out-of-range";
    case HIVED_UNIMPLEMENTED:
      return "unimplemented";
    case HIVED_INTERNAL:
      return "internal";
    case HIVED_UNAVAILABLE:
      return "unavailable";
    case HIVED_DATA_LOSS:
      return "data-loss";
    case HIVED_UNAUTHENTICATED:
      return "unauthenticated";
    default:
      return "unknown";
  }
}

const char* hived_outcome_name(int outcome) {
  if (outcome < HIVED_OUTCOME_PLACED || outcome > HIVED_OUTCOME_INFEASIBLE) return "unknown";
  return hived::OutcomeName(static_cast<hived::Outcome>(outcome));
}

const char* hived_reason_code_name(int code) {
  if (code < HIVED_REASON_NONE || code > HIVED_REASON_LAZY_DOWNGRADE) return "unknown";
  return hived::ReasonCodeName(static_cast<hived::ReasonCode>(code));
}

hived_code hived_config_load_file(const char* path, hived_config** out, char** error) {
  if (path == nullptr) return NullArgument(error, "hived_config_load_file", "path");
  if (out == nullptr) return NullArgument(error, "hived_config_load_file", "out");
  return Guard(error, [&] { return LoadConfig(hived::LoadClusterSpecFile(path), out, error); });
}

hived_code hived_config_load_yaml(const char* yaml, size_t yaml_len, hived_config** out,
                                  char** error) {
  if (yaml == nullptr && yaml_len > 0) return NullArgument(error, "hived_config_load_yaml", "yaml");
  if (out == nullptr) return NullArgument(error, "hived_config_load_yaml", "out");
  return Guard(error, [&] {
    const std::string_view text =
        yaml == nullptr ? std::string_view() : std::string_view(yaml, yaml_len);
    return LoadConfig(hived::LoadClusterSpecString(text, "<yaml>"), out, error);
  });
}

void hived_config_destroy(hived_config* config) { delete config; }

hived_code hived_scheduler_create(const hived_config* config, hived_scheduler** out, char** error) {
  if (config == nullptr) return NullArgument(error, "hived_scheduler_create", "config");
  if (out == nullptr) return NullArgument(error, "hived_scheduler_create", "out");
  return Guard(error, [&] {
    absl::StatusOr<std::unique_ptr<hived::Scheduler>> s = hived::Scheduler::Create(config->spec);
    if (!s.ok()) return FromStatus(s.status(), error);
    *out = new hived_scheduler{nullptr, std::move(*s)};
    return HIVED_OK;
  });
}

hived_code hived_scheduler_create_from_file(const char* config_path, hived_scheduler** out,
                                            char** error) {
  if (out == nullptr) return NullArgument(error, "hived_scheduler_create_from_file", "out");
  hived_config* config = nullptr;
  hived_code code = hived_config_load_file(config_path, &config, error);
  if (code == HIVED_OK) code = hived_scheduler_create(config, out, error);
  hived_config_destroy(config);
  return code;
}

hived_code hived_scheduler_create_from_yaml(const char* yaml, size_t yaml_len,
                                            hived_scheduler** out, char** error) {
  if (out == nullptr) return NullArgument(error, "hived_scheduler_create_from_yaml", "out");
  hived_config* config = nullptr;
  hived_code code = hived_config_load_yaml(yaml, yaml_len, &config, error);
  if (code == HIVED_OK) code = hived_scheduler_create(config, out, error);
  hived_config_destroy(config);
  return code;
}

void hived_scheduler_destroy(hived_scheduler* scheduler) { delete scheduler; }

hived_code hived_request_create(const hived_request_desc* desc, hived_request** out, char** error) {
  constexpr const char* kFn = "hived_request_create";
  if (desc == nullptr) return NullArgument(error, kFn, "desc");
  if (out == nullptr) return NullArgument(error, kFn, "out");
  if (desc->members == nullptr && desc->member_count > 0) {
    return NullArgument(error, kFn, "desc->members (with member_count > 0)");
  }
  if (desc->leaf_cell_types == nullptr && desc->leaf_cell_type_count > 0) {
    return NullArgument(error, kFn, "desc->leaf_cell_types (with leaf_cell_type_count > 0)");
  }
  if (desc->has_suggested_nodes != 0 && desc->suggested_nodes == nullptr &&
      desc->suggested_node_count > 0) {
    return NullArgument(error, kFn, "desc->suggested_nodes (with suggested_node_count > 0)");
  }
  return Guard(error, [&] {
    auto request = std::make_unique<hived_request>();
    hived::GroupRequest& r = request->request;
    r.name = Str(desc->name);
    r.vc = Str(desc->vc);
    r.priority = desc->priority;
    r.leaf_cell_type = Str(desc->leaf_cell_type);
    r.pinned_cell_id = Str(desc->pinned_cell_id);
    r.lazy_preemption = desc->lazy_preemption != 0;
    r.members.reserve(desc->member_count);
    for (size_t i = 0; i < desc->member_count; ++i) {
      const hived_member& m = desc->members[i];
      r.members.push_back({m.pod_number, m.leaf_cell_number, m.gpu_milli, m.gpu_memory_mib,
                           m.cpu_milli, m.memory_mib, Str(m.mig_profile)});
    }
    for (size_t i = 0; i < desc->leaf_cell_type_count; ++i) {
      r.leaf_cell_types.push_back(Str(desc->leaf_cell_types[i]));
    }
    if (desc->has_suggested_nodes != 0) {
      std::vector<std::string> nodes;
      for (size_t i = 0; i < desc->suggested_node_count; ++i) {
        nodes.push_back(Str(desc->suggested_nodes[i]));
      }
      r.suggested_nodes = std::move(nodes);
    }
    *out = request.release();
    return HIVED_OK;
  });
}

void hived_request_destroy(hived_request* request) { delete request; }

hived_result* hived_result_create(void) { return new (std::nothrow) hived_result(); }

void hived_result_destroy(hived_result* result) { delete result; }

hived_code hived_schedule(hived_scheduler* scheduler, const hived_request* request, int phase,
                          hived_result* result, char** error) {
  return hived::capi::ScheduleInto("hived_schedule", scheduler, request, phase, nullptr, result,
                                   error);
}

hived_outcome hived_result_outcome(const hived_result* result) {
  if (result == nullptr) return HIVED_OUTCOME_WAITING;
  return static_cast<hived_outcome>(result->result.outcome);
}

hived_reason_code hived_result_reason_code(const hived_result* result) {
  if (result == nullptr) return HIVED_REASON_NONE;
  return static_cast<hived_reason_code>(result->result.code);
}

const char* hived_result_reason(const hived_result* result) {
  return result == nullptr ? "" : result->result.reason.c_str();
}

const char* hived_result_chain(const hived_result* result) {
  return result == nullptr ? "" : result->result.placement.chain.c_str();
}

size_t hived_result_victim_count(const hived_result* result) {
  return result == nullptr ? 0 : result->result.victims.size();
}

const char* hived_result_victim(const hived_result* result, size_t i) {
  if (result == nullptr || i >= result->result.victims.size()) return "";
  return result->result.victims[i].c_str();
}

size_t hived_result_pod_count(const hived_result* result) {
  return result == nullptr ? 0 : result->result.placement.pods.size();
}

const char* hived_result_pod_node(const hived_result* result, size_t pod) {
  if (result == nullptr || pod >= result->result.placement.pods.size()) return "";
  return result->result.placement.pods[pod].node.c_str();
}

int32_t hived_result_pod_leaf_cell_number(const hived_result* result, size_t pod) {
  if (result == nullptr || pod >= result->result.placement.pods.size()) return 0;
  return result->result.placement.pods[pod].leaf_cell_number;
}

const int32_t* hived_result_pod_leaf_cell_indices(const hived_result* result, size_t pod,
                                                  size_t* count) {
  if (result == nullptr || pod >= result->result.placement.pods.size()) {
    if (count != nullptr) *count = 0;
    return nullptr;
  }
  const std::vector<int32_t>& indices = result->result.placement.pods[pod].leaf_cell_indices;
  if (count != nullptr) *count = indices.size();
  return indices.data();
}

hived_code hived_result_json(const hived_result* result, char** json, size_t* json_len,
                             char** error) {
  if (result == nullptr) return NullArgument(error, "hived_result_json", "result");
  if (json == nullptr) return NullArgument(error, "hived_result_json", "json");
  return Guard(error, [&] {
    const hived::ScheduleResult& r = result->result;
    Json j = {{"outcome", hived::OutcomeName(r.outcome)},
              {"code", hived::ReasonCodeName(r.code)},
              {"reason", r.reason},
              {"victims", r.victims},
              {"placement", PlacementJson(r.placement)}};
    return Output(Dump(j), json, json_len, error);
  });
}

hived_code hived_allocate(hived_scheduler* scheduler, const hived_request* request,
                          const hived_result* result, hived_allocate_info* info, char** error) {
  constexpr const char* kFn = "hived_allocate";
  ClearInfo(info);
  if (scheduler == nullptr) return NullArgument(error, kFn, "scheduler");
  if (request == nullptr) return NullArgument(error, kFn, "request");
  if (result == nullptr) return NullArgument(error, kFn, "result");
  return Guard(error, [&] {
    absl::StatusOr<hived::AllocateInfo> i =
        scheduler->scheduler->Allocate(request->request, result->result.placement);
    if (!i.ok()) return FromStatus(i.status(), error);
    FillInfo(*i, info);
    return HIVED_OK;
  });
}

hived_code hived_recover(hived_scheduler* scheduler, const hived_request* request,
                         const hived_placement* placement, hived_allocate_info* info,
                         char** error) {
  constexpr const char* kFn = "hived_recover";
  ClearInfo(info);
  if (scheduler == nullptr) return NullArgument(error, kFn, "scheduler");
  if (request == nullptr) return NullArgument(error, kFn, "request");
  if (placement == nullptr) return NullArgument(error, kFn, "placement");
  if (placement->pods == nullptr && placement->pod_count > 0) {
    return NullArgument(error, kFn, "placement->pods (with pod_count > 0)");
  }
  for (size_t i = 0; i < placement->pod_count; ++i) {
    const hived_pod_placement& pod = placement->pods[i];
    if (pod.leaf_cell_indices == nullptr && pod.leaf_cell_count > 0) {
      return Fail(error, HIVED_INVALID_ARGUMENT,
                  absl::StrCat(kFn, ": placement->pods[", i,
                               "].leaf_cell_indices is NULL (with leaf_cell_count > 0)"));
    }
  }
  return Guard(error, [&] {
    hived::Placement p;
    p.chain = Str(placement->chain);
    p.pods.reserve(placement->pod_count);
    for (size_t i = 0; i < placement->pod_count; ++i) {
      const hived_pod_placement& pod = placement->pods[i];
      hived::PodPlacement& q = p.pods.emplace_back();
      q.leaf_cell_number = pod.leaf_cell_number;
      q.node = Str(pod.node);
      if (pod.leaf_cell_count > 0) {
        q.leaf_cell_indices.assign(pod.leaf_cell_indices,
                                   pod.leaf_cell_indices + pod.leaf_cell_count);
      }
      if (pod.preassigned_cell_types != nullptr) {
        for (size_t k = 0; k < pod.leaf_cell_count; ++k) {
          q.preassigned_cell_types.push_back(Str(pod.preassigned_cell_types[k]));
        }
      }
    }
    absl::StatusOr<hived::AllocateInfo> i = scheduler->scheduler->Recover(request->request, p);
    if (!i.ok()) return FromStatus(i.status(), error);
    FillInfo(*i, info);
    return HIVED_OK;
  });
}

}  // extern "C"

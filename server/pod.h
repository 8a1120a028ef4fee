// server/pod.h: HiveD's pod contract (hived-reference.md §3.2) on Kubernetes Pod objects.
//
// A pod opts in with a resource limit `hivedscheduler.microsoft.com/pod-scheduling-enable`
// > 0 on some container or init container, and describes its gang in the annotation
// `hivedscheduler.microsoft.com/pod-scheduling-spec` (YAML, HiveD's keys, legacy `gpu*` keys
// accepted). On bind the server writes `pod-bind-info` (the whole gang's placement, the
// recovery record) and `pod-leaf-cell-isolation` (the pod's device indices) as HiveD does.
//
// Example:
//   absl::StatusOr<hived::server::PodInfo> pod = hived::server::ParsePod(pod_json);
//   absl::StatusOr<hived::server::SchedulingSpec> spec = hived::server::ParseSchedulingSpec(*pod);
//
// Thread safety: plain values and pure functions; `SpecCache` may be used from any thread.
#ifndef HIVED_SERVER_POD_H_
#define HIVED_SERVER_POD_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "hived/schedule_result.h"
#include "nlohmann/json.hpp"

namespace hived::server {

inline constexpr const char* kResourcePodSchedulingEnable =
    "hivedscheduler.microsoft.com/pod-scheduling-enable";
inline constexpr const char* kAnnotationPodSchedulingSpec =
    "hivedscheduler.microsoft.com/pod-scheduling-spec";
inline constexpr const char* kAnnotationPodBindInfo = "hivedscheduler.microsoft.com/pod-bind-info";
inline constexpr const char* kAnnotationPodLeafCellIsolation =
    "hivedscheduler.microsoft.com/pod-leaf-cell-isolation";
// hived's own recovery record of the pod's group (`GroupRecordToJson`: HiveD's bind info plus
// the virtual leaf cells it runs on), written beside HiveD's annotations. With it a restart
// binds the same virtual cells again, so the recovered state equals the uncrashed one; a pod
// without it (bound by HiveD) is recovered from `pod-bind-info` by HiveD's rule.
inline constexpr const char* kAnnotationGroupRecord = "hived.io/group-record";
// The legacy name of the isolation annotation, written too (HiveD's older readers).
inline constexpr const char* kAnnotationPodGpuIsolation =
    "hivedscheduler.microsoft.com/pod-gpu-isolation";

// The fields of a Kubernetes Pod the server reads.
struct PodInfo {
  std::string ns;  // metadata.namespace ("default" when absent)
  std::string name;
  std::string uid;
  std::string node_name;  // spec.nodeName: set once bound
  std::string phase;      // status.phase
  std::map<std::string, std::string> annotations;
  bool scheduling_enabled = false;  // the opt-in resource limit is > 0
  std::string Key() const { return ns + "/" + name; }
  bool Terminated() const { return phase == "Succeeded" || phase == "Failed"; }
};

// The pod scheduling spec, defaulted as HiveD defaults it.
struct SchedulingSpec {
  std::string virtual_cluster;
  int32_t priority = 0;
  std::string pinned_cell_id;
  std::string leaf_cell_type;
  int32_t leaf_cell_number = 0;
  bool gang_release_enable = false;
  bool lazy_preemption_enable = false;
  bool ignore_k8s_suggested_nodes = true;
  std::string affinity_group_name;
  std::vector<GroupMember> members;  // pod_number and leaf_cell_number only
};

// Reads a Pod object (JSON, Kubernetes' lower-camel keys). Errors: kInvalidArgument when it
// is not an object or lacks metadata.name / metadata.uid.
absl::StatusOr<PodInfo> ParsePod(const nlohmann::json& pod);

// Parses and validates the pod's scheduling spec (HiveD's rules, its messages). Errors:
// kInvalidArgument (a user error: the pod must be fixed).
absl::StatusOr<SchedulingSpec> ParseSchedulingSpec(const PodInfo& pod);

// `ParseSchedulingSpec` with each distinct annotation text parsed once: the last `capacity`
// texts used (least recently used dropped first) and their results, errors too (a bad pod
// is refused without parsing again). Invariants: size() <= capacity; `Parse(pod)` equals
// `ParseSchedulingSpec(pod)` for every pod (a spec without `affinityGroup` is still named
// after its own pod; the missing-annotation error is not cached). Capacity 0 keeps nothing:
// every `Parse` parses (each counted a miss).
class SpecCache {
 public:
  explicit SpecCache(size_t capacity = 4096);
  absl::StatusOr<SchedulingSpec> Parse(const PodInfo& pod);
  size_t size() const;
  int64_t hits() const;
  int64_t misses() const;

 private:
  using Entry = std::pair<std::string, absl::StatusOr<SchedulingSpec>>;
  const size_t capacity_;
  mutable std::mutex mu_;
  std::list<Entry> entries_;  // most recently used first
  // Lookup only (never iterated): text -> its entry.
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
  int64_t hits_ = 0;
  int64_t misses_ = 0;
};

// The group request of a spec (suggested nodes not set).
GroupRequest ToGroupRequest(const SchedulingSpec& spec);

// The `pod-leaf-cell-isolation` value ("0,1"). (`pod-bind-info` is the library's
// `ExportHivedBindInfo`.)
std::string LeafCellIsolation(const PodPlacement& pod);

}  // namespace hived::server

#endif  // HIVED_SERVER_POD_H_

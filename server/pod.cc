// HiveD's pod contract: reading Pod objects and scheduling specs, writing bind info.
#include "server/pod.h"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "yaml-cpp/yaml.h"

namespace hived::server {
namespace {

using nlohmann::json;

std::string StringAt(const json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

// A Kubernetes quantity ("1", "2", 1) > 0. Fractions ("500m") count as > 0 when positive.
bool PositiveQuantity(const json& value) {
  if (value.is_number()) return value.get<double>() > 0;
  if (!value.is_string()) return false;
  const std::string& text = value.get_ref<const std::string&>();
  return std::strtod(text.c_str(), nullptr) > 0;
}

bool ContainersOptIn(const json& containers) {
  if (!containers.is_array()) return false;
  for (const json& c : containers) {
    if (!c.is_object()) continue;
    auto resources = c.find("resources");
    if (resources == c.end() || !resources->is_object()) continue;
    auto limits = resources->find("limits");
    if (limits == resources->end() || !limits->is_object()) continue;
    auto limit = limits->find(kResourcePodSchedulingEnable);
    if (limit != limits->end() && PositiveQuantity(*limit)) return true;
  }
  return false;
}

absl::Status UserError(std::string_view message) {
  return absl::InvalidArgumentError(std::string(message));
}

// The first present of `keys` in `map` (HiveD rewrites legacy `gpu*` keys to `leafCell*`;
// the current name wins when both are given).
YAML::Node Find(const YAML::Node& map, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    YAML::Node v = map[key];
    if (v.IsDefined() && !v.IsNull()) return v;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

template <typename T>
bool Read(const YAML::Node& v, T* out) {
  if (!v.IsDefined() || v.IsNull()) return true;
  if (!v.IsScalar()) return false;
  return YAML::convert<T>::decode(v, *out);
}

}  // namespace

absl::StatusOr<PodInfo> ParsePod(const json& pod) {
  if (!pod.is_object()) return UserError("Pod is not a JSON object");
  auto meta_it = pod.find("metadata");
  if (meta_it == pod.end() || !meta_it->is_object()) return UserError("Pod has no metadata");
  const json& meta = *meta_it;
  PodInfo info;
  info.name = StringAt(meta, "name");
  info.uid = StringAt(meta, "uid");
  info.ns = StringAt(meta, "namespace");
  if (info.ns.empty()) info.ns = "default";
  if (info.name.empty()) return UserError("Pod has no metadata.name");
  if (info.uid.empty()) return UserError(absl::StrCat("Pod ", info.Key(), " has no metadata.uid"));
  auto annotations = meta.find("annotations");
  if (annotations != meta.end() && annotations->is_object()) {
    for (auto it = annotations->begin(); it != annotations->end(); ++it) {
      if (it.value().is_string()) info.annotations[it.key()] = it.value().get<std::string>();
    }
  }
  auto spec = pod.find("spec");
  if (spec != pod.end() && spec->is_object()) {
    info.node_name = StringAt(*spec, "nodeName");
    auto containers = spec->find("containers");
    auto init = spec->find("initContainers");
    info.scheduling_enabled = (containers != spec->end() && ContainersOptIn(*containers)) ||
                              (init != spec->end() && ContainersOptIn(*init));
  }
  auto status = pod.find("status");
  if (status != pod.end()) info.phase = StringAt(*status, "phase");
  return info;
}

namespace {

// The spec of an annotation text, validated; a spec without `affinityGroup` keeps an empty
// group name (the pod's defaults are `WithPodDefaults`'s). Depends on the text only.
absl::StatusOr<SchedulingSpec> ParseSpecText(const std::string& text) {
  SchedulingSpec spec;
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) {
      return UserError(absl::StrCat("Failed to unmarshal ", kAnnotationPodSchedulingSpec,
                                    ": expected a YAML mapping"));
    }
    bool ok = Read(root["virtualCluster"], &spec.virtual_cluster) &&
              Read(root["priority"], &spec.priority) &&
              Read(root["pinnedCellId"], &spec.pinned_cell_id) &&
              Read(Find(root, {"leafCellType", "gpuType"}), &spec.leaf_cell_type) &&
              Read(Find(root, {"leafCellNumber", "gpuNumber"}), &spec.leaf_cell_number) &&
              Read(root["gangReleaseEnable"], &spec.gang_release_enable) &&
              Read(root["lazyPreemptionEnable"], &spec.lazy_preemption_enable) &&
              Read(root["ignoreK8sSuggestedNodes"], &spec.ignore_k8s_suggested_nodes);
    if (!ok) {
      return UserError(absl::StrCat("Failed to unmarshal ", kAnnotationPodSchedulingSpec,
                                    ": a field has the wrong type"));
    }
    YAML::Node group = root["affinityGroup"];
    if (group.IsDefined() && !group.IsNull()) {
      if (!group.IsMap() || !Read(group["name"], &spec.affinity_group_name)) {
        return UserError("Failed to unmarshal affinityGroup: expected {name, members}");
      }
      YAML::Node members = group["members"];
      if (members.IsDefined() && !members.IsNull()) {
        if (!members.IsSequence()) return UserError("AffinityGroup.Members is not a list");
        for (const YAML::Node& m : members) {
          GroupMember member;
          if (!m.IsMap() || !Read(m["podNumber"], &member.pod_number) ||
              !Read(Find(m, {"leafCellNumber", "gpuNumber"}), &member.leaf_cell_number)) {
            return UserError("AffinityGroup.Members has a malformed member");
          }
          spec.members.push_back(member);
        }
      }
      if (spec.affinity_group_name.empty()) return UserError("AffinityGroup.Name is empty");
      if (spec.members.empty()) return UserError("AffinityGroup.Members is empty");
    }
  } catch (const YAML::Exception& e) {
    return UserError(
        absl::StrCat("Failed to unmarshal ", kAnnotationPodSchedulingSpec, ": ", e.what()));
  }
  // HiveD's validation, in its order.
  if (spec.virtual_cluster.empty()) return UserError("VirtualCluster is empty");
  if (spec.priority < kOpportunisticPriority) {
    return UserError(absl::StrCat("Priority is less than ", kOpportunisticPriority));
  }
  if (spec.priority > kMaxGuaranteedPriority) {
    return UserError(absl::StrCat("Priority is greater than ", kMaxGuaranteedPriority));
  }
  if (spec.leaf_cell_number <= 0) return UserError("LeafCellNumber is non-positive");
  bool found = spec.affinity_group_name.empty();  // the pod's own group (WithPodDefaults)
  for (const GroupMember& m : spec.members) {
    if (m.pod_number <= 0) return UserError("AffinityGroup.Members has non-positive PodNumber");
    if (m.leaf_cell_number <= 0) {
      return UserError("AffinityGroup.Members has non-positive LeafCellNumber");
    }
    found = found || m.leaf_cell_number == spec.leaf_cell_number;
  }
  if (!found) {
    return UserError(absl::StrCat("AffinityGroup.Members does not contains current Pod: ",
                                  "no member has LeafCellNumber ", spec.leaf_cell_number));
  }
  if (spec.priority == kOpportunisticPriority && !spec.pinned_cell_id.empty()) {
    return UserError(
        absl::StrCat("opportunistic pod not supported to use pinned cell ", spec.pinned_cell_id));
  }
  return spec;
}

// A spec without `affinityGroup` is a group of the pod alone, named after it (HiveD's).
absl::StatusOr<SchedulingSpec> WithPodDefaults(absl::StatusOr<SchedulingSpec> spec,
                                               const PodInfo& pod) {
  if (spec.ok() && spec->affinity_group_name.empty()) {
    spec->affinity_group_name = pod.Key();
    spec->members = {GroupMember{1, spec->leaf_cell_number}};
  }
  return spec;
}

const std::string* SpecText(const PodInfo& pod) {
  auto annotation = pod.annotations.find(kAnnotationPodSchedulingSpec);
  if (annotation == pod.annotations.end() || annotation->second.empty()) return nullptr;
  return &annotation->second;
}

absl::Status NoSpec(const PodInfo& pod) {
  return UserError(
      absl::StrCat("Pod ", pod.Key(), " does not have annotation ", kAnnotationPodSchedulingSpec));
}

}  // namespace

absl::StatusOr<SchedulingSpec> ParseSchedulingSpec(const PodInfo& pod) {
  const std::string* text = SpecText(pod);
  if (text == nullptr) return NoSpec(pod);
  return WithPodDefaults(ParseSpecText(*text), pod);
}

SpecCache::SpecCache(size_t capacity) : capacity_(capacity) {}

absl::StatusOr<SchedulingSpec> SpecCache::Parse(const PodInfo& pod) {
  const std::string* text = SpecText(pod);
  if (text == nullptr) return NoSpec(pod);
  if (capacity_ == 0) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++misses_;
    }
    return ParseSchedulingSpec(pod);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(*text);
    if (it != index_.end()) {
      ++hits_;
      entries_.splice(entries_.begin(), entries_, it->second);  // now the most recent
      return WithPodDefaults(it->second->second, pod);
    }
    ++misses_;
  }
  // Parsed outside the lock: two threads may parse one text at once; the second insert
  // finds the first and keeps it (both results are equal: the parse depends on the text).
  absl::StatusOr<SchedulingSpec> parsed = ParseSpecText(*text);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (index_.count(*text) == 0) {
      entries_.emplace_front(*text, parsed);
      index_.emplace(entries_.front().first, entries_.begin());
      if (entries_.size() > capacity_) {
        index_.erase(entries_.back().first);
        entries_.pop_back();
      }
    }
  }
  return WithPodDefaults(std::move(parsed), pod);
}

size_t SpecCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

int64_t SpecCache::hits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return hits_;
}

int64_t SpecCache::misses() const {
  std::lock_guard<std::mutex> lock(mu_);
  return misses_;
}

GroupRequest ToGroupRequest(const SchedulingSpec& spec) {
  GroupRequest request;
  request.name = spec.affinity_group_name;
  request.vc = spec.virtual_cluster;
  request.priority = spec.priority;
  request.leaf_cell_type = spec.leaf_cell_type;
  request.pinned_cell_id = spec.pinned_cell_id;
  request.lazy_preemption = spec.lazy_preemption_enable;
  // HiveD merges members with equal leafCellNumber.
  for (const GroupMember& m : spec.members) {
    bool merged = false;
    for (GroupMember& have : request.members) {
      if (have.leaf_cell_number == m.leaf_cell_number) {
        have.pod_number += m.pod_number;
        merged = true;
      }
    }
    if (!merged) request.members.push_back(GroupMember{m.pod_number, m.leaf_cell_number});
  }
  return request;
}

std::string LeafCellIsolation(const PodPlacement& pod) {
  return absl::StrJoin(pod.leaf_cell_indices, ",");
}

}  // namespace hived::server

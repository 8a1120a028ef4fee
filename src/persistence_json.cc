// The JSON form of group records and saved states (docs/state-format.md).
#include "src/persistence_json.h"

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "src/internal/status_macros.h"
#include "src/persistence_json_pods.h"
#include "src/persistence_json_reader.h"
#include "src/persistence_json_sharing.h"

namespace hived {
namespace internal {
namespace {

// Compact JSON. Strings that are not valid UTF-8 (a group name from a caller, say) get
// U+FFFD for each bad byte instead of an exception.
std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// Key names: HiveD's where HiveD has the concept (pod-scheduling-spec, pod-bind-info).
constexpr const char* kName = "name";
constexpr const char* kVc = "virtualCluster";
constexpr const char* kPriority = "priority";
constexpr const char* kLeafType = "leafCellType";
constexpr const char* kPinned = "pinnedCellId";
constexpr const char* kLazy = "lazyPreemptionEnable";
constexpr const char* kMembers = "members";
constexpr const char* kPodNumber = "podNumber";
constexpr const char* kLeafNumber = "leafCellNumber";
constexpr const char* kState = "state";
constexpr const char* kDowngradeReason = "downgradeReason";
constexpr const char* kPreemptor = "lazyPreemptor";
constexpr const char* kPlacement = "placement";
constexpr const char* kChain = "cellChain";
constexpr const char* kPods = "pods";
constexpr const char* kNode = "physicalNode";
constexpr const char* kIndices = "physicalLeafCellIndices";
constexpr const char* kTypes = "preassignedCellTypes";
constexpr const char* kVirtual = "virtualLeafCells";
constexpr const char* kSchema = "schema";
constexpr const char* kVersion = "version";
constexpr const char* kBadNodes = "badNodes";
constexpr const char* kGroups = "groups";
constexpr const char* kConfig = "config";
constexpr const char* kBindings = "bindings";
constexpr const char* kDoomed = "doomedCells";
constexpr const char* kVirtualCell = "virtualCell";
constexpr const char* kPhysicalCell = "physicalCell";
constexpr const char* kBad = "bad";
// Version 2: GPU sharing (docs/gpu-sharing.md); `migProfile` and `migStart` were reserved
// there (only their defaults), and mean MIG from version 3.
constexpr const char* kLeafTypes = "leafCellTypes";
constexpr const char* kGpuMilli = "gpuMilli";
constexpr const char* kGpuMemory = "gpuMemoryMiB";
constexpr const char* kCpuMilli = "cpuMilli";
constexpr const char* kMemory = "memoryMiB";
constexpr const char* kMigProfile = "migProfile";
constexpr const char* kMigStart = "migStart";
constexpr const char* kNextHolder = "nextShareHolder";
constexpr const char* kShareShapes = "shareShapes";  // {"tally": [...], "atRebuild": [...]}
constexpr int32_t kSharingVersion = 2;               // the first version with the keys above
// Version 3: MIG groups (a member's `migProfile`, a pod's `migStart`), every MIG GPU's
// layout, CPU-only pods (`leafCellNumber` 0).
constexpr const char* kMigLayouts = "migLayouts";
constexpr int32_t kMigVersion = 3;

Json StringArray(const std::vector<std::string>& values) {
  Json out = Json::array();
  for (const std::string& v : values) out.push_back(v);
  return out;
}

Json RecordToJson(const GroupRecord& rec) {
  const GroupRequest& r = rec.request;
  Json j = Json::object();
  j[kName] = r.name;
  j[kVc] = r.vc;
  j[kPriority] = r.priority;
  if (!r.leaf_cell_type.empty()) j[kLeafType] = r.leaf_cell_type;
  if (!r.leaf_cell_types.empty()) j[kLeafTypes] = StringArray(r.leaf_cell_types);
  if (!r.pinned_cell_id.empty()) j[kPinned] = r.pinned_cell_id;
  if (r.lazy_preemption) j[kLazy] = true;
  Json members = Json::array();
  for (const GroupMember& m : r.members) {
    Json member = Json{{kPodNumber, m.pod_number}, {kLeafNumber, m.leaf_cell_number}};
    if (m.gpu_milli != 0) member[kGpuMilli] = m.gpu_milli;
    if (m.gpu_memory_mib != 0) member[kGpuMemory] = m.gpu_memory_mib;
    if (m.cpu_milli != 0) member[kCpuMilli] = m.cpu_milli;
    if (m.memory_mib != 0) member[kMemory] = m.memory_mib;
    if (!m.mig_profile.empty()) member[kMigProfile] = m.mig_profile;
    members.push_back(std::move(member));
  }
  j[kMembers] = std::move(members);
  j[kState] = GroupStateName(rec.state);
  if (!rec.downgrade_reason.empty()) j[kDowngradeReason] = rec.downgrade_reason;
  if (!rec.preemptor.empty()) j[kPreemptor] = rec.preemptor;
  Json pods = Json::array();
  for (const PodPlacement& pod : rec.placement.pods) {
    Json p = Json::object();
    p[kLeafNumber] = pod.leaf_cell_number;
    p[kNode] = pod.node;
    p[kIndices] = pod.leaf_cell_indices;
    if (!pod.preassigned_cell_types.empty()) p[kTypes] = StringArray(pod.preassigned_cell_types);
    if (pod.mig_start >= 0) p[kMigStart] = pod.mig_start;
    pods.push_back(std::move(p));
  }
  j[kPlacement] = Json{{kChain, rec.placement.chain}, {kPods, std::move(pods)}};
  if (!rec.virtual_leaf_cells.empty()) j[kVirtual] = StringArray(rec.virtual_leaf_cells);
  PodsToJson(rec.pods, &j);  // src/persistence_json_pods.h
  return j;
}

absl::Status PodFromJson(const Json& j, const std::string& path, int32_t version,
                         PodPlacement* pod) {
  HIVED_RETURN_IF_ERROR(Reader::Object(j, path, {kLeafNumber, kNode, kIndices, kTypes, kMigStart}));
  HIVED_RETURN_IF_ERROR(Reader::NotBefore(j, path, version, kSharingVersion, {kMigStart}));
  if (auto it = j.find(kMigStart); it != j.end()) {
    if (version < kMigVersion) {
      return Reader::Error(
          absl::StrCat(path, ".", kMigStart),
          absl::StrCat("a MIG placement in a version ", version,
                       " document (reserved there; MIG is new in version ", kMigVersion, ")"));
    }
    HIVED_RETURN_IF_ERROR(
        Reader::Int(*it, absl::StrCat(path, ".", kMigStart), 0, kMaxMigStart, &pod->mig_start));
  }
  // A CPU-only pod (version 3) names its node and no leaf cell.
  HIVED_RETURN_IF_ERROR(Reader::IntMember(j, path, kLeafNumber, version >= kMigVersion ? 0 : 1,
                                          std::numeric_limits<int32_t>::max(),
                                          &pod->leaf_cell_number));
  HIVED_RETURN_IF_ERROR(Reader::String(j, path, kNode, /*required=*/true, &pod->node));
  const Json* indices = nullptr;
  HIVED_RETURN_IF_ERROR(Reader::Array(j, path, kIndices, /*required=*/true, &indices));
  if (static_cast<int64_t>(indices->size()) != pod->leaf_cell_number) {
    return Reader::Error(
        absl::StrCat(path, ".", kIndices),
        absl::StrCat(indices->size(), " indices for ", pod->leaf_cell_number, " leaf cells"));
  }
  for (size_t i = 0; i < indices->size(); ++i) {
    int32_t idx = 0;
    HIVED_RETURN_IF_ERROR(Reader::Int((*indices)[i], absl::StrCat(path, ".", kIndices, "[", i, "]"),
                                      0, std::numeric_limits<int32_t>::max(), &idx));
    pod->leaf_cell_indices.push_back(idx);
  }
  HIVED_RETURN_IF_ERROR(Reader::Strings(j, path, kTypes, &pod->preassigned_cell_types));
  if (!pod->preassigned_cell_types.empty() &&
      pod->preassigned_cell_types.size() != pod->leaf_cell_indices.size()) {
    return Reader::Error(absl::StrCat(path, ".", kTypes),
                         absl::StrCat(pod->preassigned_cell_types.size(), " types for ",
                                      pod->leaf_cell_indices.size(), " leaf cells"));
  }
  return absl::OkStatus();
}

// One member's amounts: whole leaf cells, or (version 2) a share of one GPU.
absl::Status MemberFromJson(const Json& m, const std::string& mpath, int32_t version,
                            GroupMember* member) {
  HIVED_RETURN_IF_ERROR(Reader::Object(
      m, mpath, {kPodNumber, kLeafNumber, kGpuMilli, kGpuMemory, kCpuMilli, kMemory, kMigProfile}));
  HIVED_RETURN_IF_ERROR(
      Reader::NotBefore(m, mpath, version, kSharingVersion,
                        {kGpuMilli, kGpuMemory, kCpuMilli, kMemory, kMigProfile}));
  HIVED_RETURN_IF_ERROR(
      Reader::IntMember(m, mpath, kPodNumber, 1, kMaxGroupPods, &member->pod_number));
  HIVED_RETURN_IF_ERROR(Reader::IntMember(m, mpath, kLeafNumber, version >= kMigVersion ? 0 : 1,
                                          std::numeric_limits<int32_t>::max(),
                                          &member->leaf_cell_number));
  const int64_t max = std::numeric_limits<int64_t>::max();
  struct Amount {
    const char* key;
    int64_t max;
    int64_t* out;
  };
  int64_t milli = 0;
  for (const Amount& a :
       {Amount{kGpuMilli, 1000, &milli}, Amount{kGpuMemory, max, &member->gpu_memory_mib},
        Amount{kCpuMilli, max, &member->cpu_milli}, Amount{kMemory, max, &member->memory_mib}}) {
    auto it = m.find(a.key);
    if (it != m.end()) {
      HIVED_RETURN_IF_ERROR(Reader::Int64(*it, absl::StrCat(mpath, ".", a.key),
                                          a.key == kGpuMilli ? 1 : 0, a.max, a.out));
    }
  }
  member->gpu_milli = static_cast<int32_t>(milli);
  HIVED_RETURN_IF_ERROR(
      Reader::String(m, mpath, kMigProfile, /*required=*/false, &member->mig_profile));
  if (!member->mig_profile.empty() && version < kMigVersion) {
    return Reader::Error(
        absl::StrCat(mpath, ".", kMigProfile),
        absl::StrCat("a MIG profile in a version ", version,
                     " document (reserved there; MIG is new in version ", kMigVersion, ")"));
  }
  return absl::OkStatus();
}

absl::Status RecordFromJson(const Json& j, const std::string& path, int32_t version,
                            GroupRecord* rec) {
  HIVED_RETURN_IF_ERROR(
      Reader::Object(j, path,
                     {kName, kVc, kPriority, kLeafType, kLeafTypes, kPinned, kLazy, kMembers,
                      kState, kDowngradeReason, kPreemptor, kPlacement, kVirtual, kAllocatedPods}));
  HIVED_RETURN_IF_ERROR(Reader::NotBefore(j, path, version, kSharingVersion, {kLeafTypes}));
  GroupRequest& r = rec->request;
  HIVED_RETURN_IF_ERROR(Reader::String(j, path, kName, /*required=*/true, &r.name));
  if (r.name.empty()) return Reader::Error(absl::StrCat(path, ".", kName), "empty group name");
  HIVED_RETURN_IF_ERROR(Reader::String(j, path, kVc, /*required=*/true, &r.vc));
  HIVED_RETURN_IF_ERROR(Reader::IntMember(j, path, kPriority, kOpportunisticPriority,
                                          kMaxGuaranteedPriority, &r.priority));
  HIVED_RETURN_IF_ERROR(Reader::String(j, path, kLeafType, /*required=*/false, &r.leaf_cell_type));
  HIVED_RETURN_IF_ERROR(Reader::Strings(j, path, kLeafTypes, &r.leaf_cell_types));
  HIVED_RETURN_IF_ERROR(Reader::String(j, path, kPinned, /*required=*/false, &r.pinned_cell_id));
  HIVED_RETURN_IF_ERROR(Reader::Bool(j, path, kLazy, &r.lazy_preemption));
  const Json* members = nullptr;
  HIVED_RETURN_IF_ERROR(Reader::Array(j, path, kMembers, /*required=*/true, &members));
  if (members->empty()) return Reader::Error(absl::StrCat(path, ".", kMembers), "no members");
  int64_t pods = 0;
  for (size_t i = 0; i < members->size(); ++i) {
    const std::string mpath = absl::StrCat(path, ".", kMembers, "[", i, "]");
    const Json& m = (*members)[i];
    GroupMember member;
    HIVED_RETURN_IF_ERROR(MemberFromJson(m, mpath, version, &member));
    pods += member.pod_number;
    if (pods > kMaxGroupPods) {
      return Reader::Error(mpath, absl::StrCat("more than ", kMaxGroupPods, " pods in all"));
    }
    r.members.push_back(member);
  }
  std::string state;
  HIVED_RETURN_IF_ERROR(Reader::String(j, path, kState, /*required=*/true, &state));
  if (state == GroupStateName(GroupState::kAllocated)) {
    rec->state = GroupState::kAllocated;
    if (r.priority < kMinGuaranteedPriority) {
      return Reader::Error(absl::StrCat(path, ".", kState),
                           "an opportunistic request (priority -1) cannot be allocated");
    }
  } else if (state == GroupStateName(GroupState::kOpportunistic)) {
    rec->state = GroupState::kOpportunistic;
  } else {
    return Reader::Error(absl::StrCat(path, ".", kState),
                         absl::StrCat("expected allocated or opportunistic, got ", Quote(state)));
  }
  HIVED_RETURN_IF_ERROR(Reader::String(j, path, kDowngradeReason, /*required=*/false,
                                       &rec->downgrade_reason, kMaxStateStringBytes));
  HIVED_RETURN_IF_ERROR(Reader::String(j, path, kPreemptor, /*required=*/false, &rec->preemptor));

  HIVED_ASSIGN_OR_RETURN(const Json* placement,
                         Reader::Member(j, path, kPlacement, /*required=*/true));
  const std::string ppath = absl::StrCat(path, ".", kPlacement);
  HIVED_RETURN_IF_ERROR(Reader::Object(*placement, ppath, {kChain, kPods}));
  HIVED_RETURN_IF_ERROR(
      Reader::String(*placement, ppath, kChain, /*required=*/true, &rec->placement.chain));
  const Json* pod_list = nullptr;
  HIVED_RETURN_IF_ERROR(Reader::Array(*placement, ppath, kPods, /*required=*/true, &pod_list));
  size_t leaves = 0;
  for (size_t i = 0; i < pod_list->size(); ++i) {
    PodPlacement pod;
    HIVED_RETURN_IF_ERROR(
        PodFromJson((*pod_list)[i], absl::StrCat(ppath, ".", kPods, "[", i, "]"), version, &pod));
    leaves += pod.leaf_cell_indices.size();
    rec->placement.pods.push_back(std::move(pod));
  }
  // A MIG pod's profile is its member's (pods in member order); migStart only on MIG pods.
  size_t pod_index = 0;
  for (const GroupMember& m : r.members) {
    for (int32_t k = 0; k < m.pod_number && pod_index < rec->placement.pods.size(); ++k) {
      PodPlacement& pod = rec->placement.pods[pod_index++];
      if (pod.mig_start >= 0 && m.mig_profile.empty()) {
        return Reader::Error(absl::StrCat(ppath, ".", kPods, "[", pod_index - 1, "].", kMigStart),
                             "a MIG start on a pod whose member has no migProfile");
      }
      if (pod.mig_start >= 0) pod.mig_profile = m.mig_profile;
    }
  }
  HIVED_RETURN_IF_ERROR(
      Reader::Strings(j, path, kVirtual, &rec->virtual_leaf_cells, kMaxStateStringBytes));
  if (!rec->virtual_leaf_cells.empty() && rec->virtual_leaf_cells.size() != leaves) {
    return Reader::Error(absl::StrCat(path, ".", kVirtual),
                         absl::StrCat(rec->virtual_leaf_cells.size(), " virtual cells for ", leaves,
                                      " leaf cells in the placement"));
  }
  HIVED_RETURN_IF_ERROR(PodsFromJson(j, path, &rec->pods));
  if (!rec->pods.empty() &&
      static_cast<size_t>(rec->pods.back().index) >= rec->placement.pods.size()) {
    return Reader::Error(absl::StrCat(path, ".", kAllocatedPods),
                         absl::StrCat("slot ", rec->pods.back().index, " of a placement of ",
                                      rec->placement.pods.size(), " pods"));
  }
  return absl::OkStatus();
}

}  // namespace

int32_t VersionNeeded(const SavedState& state) {
  if (!state.mig_layouts.empty()) return kMigVersion;
  for (const GroupRecord& g : state.groups) {
    for (const GroupMember& m : g.request.members) {
      if (!m.mig_profile.empty() || m.leaf_cell_number == 0) return kMigVersion;
    }
  }
  return kSharingVersion;
}

std::string SavedStateToJson(const SavedState& state) {
  // The header on one line, then one group per line: valid JSON that diffs well.
  std::string out = absl::StrCat(
      "{", Dump(Json(kSchema)), ":", Dump(Json(kStateSchema)), ",", Dump(Json(kVersion)), ":",
      VersionNeeded(state), ",", Dump(Json(kConfig)), ":", Dump(Json(state.config)), ",",
      Dump(Json(kBadNodes)), ":", Dump(StringArray(state.bad_nodes)), ",", Dump(Json(kDoomed)), ":",
      Dump(StringArray(state.doomed)), ",");
  if (state.next_holder != 0) {
    absl::StrAppend(&out, Dump(Json(kNextHolder)), ":", state.next_holder, ",");
  }
  if (!state.share_shapes.tally.empty() || !state.share_shapes.at_rebuild.empty()) {
    auto counts = [](const std::vector<ShareChoice::Count>& cs) {
      Json a = Json::array();
      for (const ShareChoice::Count& c : cs) {
        a.push_back(Json::array(
            {c.shape.cpu, c.shape.memory, c.shape.milli, c.shape.gpus, c.shape.types, c.pods}));
      }
      return a;
    };
    absl::StrAppend(&out, Dump(Json(kShareShapes)), ":",
                    Dump(Json{{kShapeTally, counts(state.share_shapes.tally)},
                              {kShapesAtRebuild, counts(state.share_shapes.at_rebuild)}}),
                    ",");
  }
  absl::StrAppend(&out, Dump(Json(kGroups)), ":[");
  for (size_t i = 0; i < state.groups.size(); ++i) {
    absl::StrAppend(&out, i == 0 ? "\n" : ",\n", Dump(RecordToJson(state.groups[i])));
  }
  absl::StrAppend(&out, state.groups.empty() ? "]," : "\n],");
  if (!state.mig_layouts.empty()) {  // one GPU per line
    absl::StrAppend(&out, Dump(Json(kMigLayouts)), ":[");
    for (size_t i = 0; i < state.mig_layouts.size(); ++i) {
      const SavedMigLayout& l = state.mig_layouts[i];
      Json inst = Json::array();
      for (const auto& [profile, start] : l.instances)
        inst.push_back(Json::array({profile, start}));
      Json j = Json{{kGpu, l.gpu},
                    {kInstances, std::move(inst)},
                    {kCreations, l.creations},
                    {kReconfigurations, l.reconfigurations}};
      absl::StrAppend(&out, i == 0 ? "\n" : ",\n", Dump(j));
    }
    absl::StrAppend(&out, "\n],");
  }
  absl::StrAppend(&out, Dump(Json(kBindings)), ":[");
  for (size_t i = 0; i < state.bindings.size(); ++i) {
    const SavedBinding& b = state.bindings[i];
    Json j = Json{{kVirtualCell, b.virtual_cell}, {kPhysicalCell, b.physical_cell}};
    if (b.bad) j[kBad] = true;
    absl::StrAppend(&out, i == 0 ? "\n" : ",\n", Dump(j));
  }
  absl::StrAppend(&out, state.bindings.empty() ? "]}\n" : "\n]}\n");
  return out;
}

absl::StatusOr<SavedState> SavedStateFromJson(std::string_view text) {
  HIVED_ASSIGN_OR_RETURN(Json j, ParseJson(text, "saved state"));
  const std::string root = "$";
  HIVED_RETURN_IF_ERROR(Reader::Object(j, root,
                                       {kSchema, kVersion, kConfig, kBadNodes, kDoomed, kNextHolder,
                                        kShareShapes, kGroups, kMigLayouts, kBindings}));
  std::string schema;
  HIVED_RETURN_IF_ERROR(Reader::String(j, root, kSchema, /*required=*/true, &schema));
  if (schema != kStateSchema) {
    return Reader::Error(absl::StrCat(root, ".", kSchema),
                         absl::StrCat("expected ", kStateSchema, ", got ", Quote(schema)));
  }
  int32_t version = 0;
  HIVED_RETURN_IF_ERROR(Reader::IntMember(j, root, kVersion, std::numeric_limits<int32_t>::min(),
                                          std::numeric_limits<int32_t>::max(), &version));
  if (version < kOldestStateVersion || version > kStateVersion) {
    return Reader::Error(
        absl::StrCat(root, ".", kVersion),
        absl::StrCat("version ", version, " is not readable by this library (it reads versions ",
                     kOldestStateVersion, " to ", kStateVersion, ")"));
  }
  HIVED_RETURN_IF_ERROR(
      Reader::NotBefore(j, root, version, kSharingVersion, {kNextHolder, kShareShapes}));
  HIVED_RETURN_IF_ERROR(Reader::NotBefore(j, root, version, kMigVersion, {kMigLayouts}));
  SavedState state;
  if (auto it = j.find(kMigLayouts); it != j.end()) {
    HIVED_RETURN_IF_ERROR(
        ReadMigLayouts(*it, absl::StrCat(root, ".", kMigLayouts), &state.mig_layouts));
  }
  if (auto it = j.find(kNextHolder); it != j.end()) {
    HIVED_RETURN_IF_ERROR(Reader::Int64(*it, absl::StrCat(root, ".", kNextHolder), 0,
                                        std::numeric_limits<int64_t>::max(), &state.next_holder));
  }
  if (auto it = j.find(kShareShapes); it != j.end()) {
    HIVED_RETURN_IF_ERROR(
        ReadShareShapes(*it, absl::StrCat(root, ".", kShareShapes), &state.share_shapes));
  }
  HIVED_RETURN_IF_ERROR(Reader::String(j, root, kConfig, /*required=*/false, &state.config));
  HIVED_RETURN_IF_ERROR(Reader::Strings(j, root, kBadNodes, &state.bad_nodes));
  HIVED_RETURN_IF_ERROR(Reader::Strings(j, root, kDoomed, &state.doomed, kMaxStateStringBytes));
  const Json* bindings = nullptr;
  HIVED_RETURN_IF_ERROR(Reader::Array(j, root, kBindings, /*required=*/false, &bindings));
  for (size_t i = 0; bindings != nullptr && i < bindings->size(); ++i) {
    const std::string path = absl::StrCat(root, ".", kBindings, "[", i, "]");
    const Json& b = (*bindings)[i];
    HIVED_RETURN_IF_ERROR(Reader::Object(b, path, {kVirtualCell, kPhysicalCell, kBad}));
    SavedBinding binding;
    HIVED_RETURN_IF_ERROR(Reader::String(b, path, kVirtualCell, /*required=*/true,
                                         &binding.virtual_cell, kMaxStateStringBytes));
    HIVED_RETURN_IF_ERROR(Reader::String(b, path, kPhysicalCell, /*required=*/true,
                                         &binding.physical_cell, kMaxStateStringBytes));
    HIVED_RETURN_IF_ERROR(Reader::Bool(b, path, kBad, &binding.bad));
    state.bindings.push_back(std::move(binding));
  }
  const Json* groups = nullptr;
  HIVED_RETURN_IF_ERROR(Reader::Array(j, root, kGroups, /*required=*/true, &groups));
  absl::flat_hash_map<std::string, size_t> seen;
  for (size_t i = 0; i < groups->size(); ++i) {
    const std::string path = absl::StrCat(root, ".", kGroups, "[", i, "]");
    GroupRecord rec;
    HIVED_RETURN_IF_ERROR(RecordFromJson((*groups)[i], path, version, &rec));
    auto [it, inserted] = seen.emplace(rec.request.name, i);
    if (!inserted) {
      return Reader::Error(absl::StrCat(path, ".", kName),
                           absl::StrCat("duplicate group ", Quote(rec.request.name), " (also at $.",
                                        kGroups, "[", it->second, "])"));
    }
    state.groups.push_back(std::move(rec));
  }
  return state;
}

}  // namespace internal

std::string GroupRecordToJson(const GroupRecord& record) {
  return internal::Dump(internal::RecordToJson(record));
}

absl::StatusOr<GroupRecord> GroupRecordFromJson(std::string_view json) {
  HIVED_ASSIGN_OR_RETURN(internal::Json j, internal::ParseJson(json, "group record"));
  GroupRecord rec;
  HIVED_RETURN_IF_ERROR(internal::RecordFromJson(j, "$", kStateVersion, &rec));
  return rec;
}

}  // namespace hived

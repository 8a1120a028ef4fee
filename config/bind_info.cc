// ImportHivedBindInfo: HiveD's persisted pod record (the `pod-bind-info` and
// `pod-scheduling-spec` annotations, hived-reference.md §3.2) -> a `GroupRecord`.
// Like HiveD's reader, unknown keys are ignored; every problem is located (annotation,
// line, column, YAML path); the first one is returned.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "hived/state.h"
#include "strict_yaml/strict_yaml.h"

namespace hived {
namespace {

constexpr int64_t kMaxAnnotationNodes = int64_t{1} << 20;

// Reads one annotation, keeping the first problem.
class AnnotationReader {
 public:
  explicit AnnotationReader(std::string annotation) : annotation_(std::move(annotation)) {}

  const absl::Status& status() const { return status_; }
  bool ok() const { return status_.ok(); }

  // The document's root mapping; nullopt (with the problem) otherwise.
  std::optional<YAML::Node> Parse(std::string_view text) {
    yaml_internal::ParsedDocument doc = yaml_internal::ParseDocument(text, kMaxAnnotationNodes);
    if (doc.problem) {
      Fail(doc.problem->mark, "", doc.problem->message);
      return std::nullopt;
    }
    if (!doc.has_root || !doc.root.IsMap()) {
      Fail(doc.root.Mark(), "",
           absl::StrCat("expected a mapping, got ",
                        doc.has_root ? yaml_internal::KindName(doc.root) : "nothing"));
      return std::nullopt;
    }
    return doc.root;
  }

  void Fail(const YAML::Mark& mark, const std::string& path, std::string_view message) {
    if (!status_.ok()) return;
    // A message may quote the input (a scalar that is not an integer, the parser's context):
    // at most ~100 bytes of it (hived/state.h, limits).
    constexpr size_t kMaxMessage = 100 + kMaxQuotedInputBytes;
    std::string shortened;
    if (message.size() > kMaxMessage) {
      size_t n = kMaxMessage;
      while (n > 0 && (static_cast<unsigned char>(message[n]) & 0xC0) == 0x80) --n;
      shortened =
          absl::StrCat(absl::string_view(message.data(), n), "... (", message.size(), " bytes)");
      message = shortened;
    }
    std::string where = annotation_;
    if (!mark.is_null()) absl::StrAppend(&where, ":", mark.line + 1, ":", mark.column + 1);
    status_ = absl::InvalidArgumentError(
        absl::StrCat(where, ": ", path.empty() ? "" : absl::StrCat(path, ": "),
                     absl::string_view(message.data(), message.size())));
  }

  // The value of the first present key of `keys` (a legacy spelling after the current one).
  YAML::Node Find(const YAML::Node& map, std::initializer_list<const char*> keys,
                  std::string* key) {
    for (const char* k : keys) {
      YAML::Node v = map[k];
      if (v.IsDefined() && !v.IsNull()) {
        *key = k;
        return v;
      }
    }
    *key = *keys.begin();
    return YAML::Node(YAML::NodeType::Undefined);
  }

  std::optional<std::string> String(const YAML::Node& map, const std::string& path,
                                    std::initializer_list<const char*> keys, bool required) {
    std::string key;
    YAML::Node v = Find(map, keys, &key);
    const std::string at = Join(path, key);
    if (!v.IsDefined()) {
      if (required) Fail(map.Mark(), at, "missing");
      return required ? std::nullopt : std::optional<std::string>(std::string());
    }
    if (!v.IsScalar()) {
      Fail(v.Mark(), at, absl::StrCat("expected a string, got ", yaml_internal::KindName(v)));
      return std::nullopt;
    }
    if (v.Scalar().size() > static_cast<size_t>(kMaxNameBytes)) {  // every string is a name
      Fail(v.Mark(), at,
           absl::StrCat(v.Scalar().size(), " bytes, more than the limit of ", kMaxNameBytes,
                        " for a name"));
      return std::nullopt;
    }
    return v.Scalar();
  }

  std::optional<int32_t> Int(const YAML::Node& v, const std::string& at, int64_t min, int64_t max) {
    if (!v.IsScalar()) {
      Fail(v.Mark(), at, absl::StrCat("expected an integer, got ", yaml_internal::KindName(v)));
      return std::nullopt;
    }
    yaml_internal::Problem problem;
    std::optional<int64_t> value = yaml_internal::ParseInteger(v.Scalar(), min, max, &problem);
    if (!value) {
      Fail(v.Mark(), at, problem.message);
      return std::nullopt;
    }
    return static_cast<int32_t>(*value);
  }

  std::optional<int32_t> IntMember(const YAML::Node& map, const std::string& path,
                                   std::initializer_list<const char*> keys, int64_t min,
                                   int64_t max, std::optional<int32_t> fallback) {
    std::string key;
    YAML::Node v = Find(map, keys, &key);
    if (!v.IsDefined()) {
      if (!fallback) Fail(map.Mark(), Join(path, key), "missing");
      return fallback;
    }
    return Int(v, Join(path, key), min, max);
  }

  std::optional<bool> Bool(const YAML::Node& map, const std::string& path, const char* key) {
    YAML::Node v = map[key];
    if (!v.IsDefined() || v.IsNull()) return false;
    std::optional<bool> b = v.IsScalar() ? yaml_internal::ParseBool(v.Scalar()) : std::nullopt;
    if (!b) Fail(v.Mark(), Join(path, key), "expected true or false");
    return b;
  }

  // A list (required); nullopt with the problem otherwise.
  std::optional<YAML::Node> List(const YAML::Node& map, const std::string& path,
                                 std::initializer_list<const char*> keys) {
    std::string key;
    YAML::Node v = Find(map, keys, &key);
    if (!v.IsDefined()) {
      Fail(map.Mark(), Join(path, key), "missing");
      return std::nullopt;
    }
    if (!v.IsSequence()) {
      Fail(v.Mark(), Join(path, key),
           absl::StrCat("expected a list, got ", yaml_internal::KindName(v)));
      return std::nullopt;
    }
    return v;
  }

  static std::string Join(const std::string& path, std::string_view key) {
    const absl::string_view k(key.data(), key.size());
    return path.empty() ? std::string(k) : absl::StrCat(path, ".", k);
  }

 private:
  std::string annotation_;
  absl::Status status_;
};

// affinityGroupBindInfo -> members and placement (pods by leaf cell number, stable).
absl::Status ReadBindInfo(std::string_view text, GroupRecord* rec) {
  AnnotationReader r("pod-bind-info");
  std::optional<YAML::Node> root = r.Parse(text);
  if (!root) return r.status();
  std::optional<std::string> chain = r.String(*root, "", {"cellChain"}, /*required=*/true);
  std::optional<YAML::Node> groups = r.List(*root, "", {"affinityGroupBindInfo"});
  if (!r.ok()) return r.status();
  rec->placement.chain = *chain;
  if (groups->size() == 0) {
    r.Fail(groups->Mark(), "affinityGroupBindInfo", "no members");
    return r.status();
  }
  for (size_t i = 0; i < groups->size() && r.ok(); ++i) {
    const YAML::Node entry = (*groups)[i];
    const std::string path = absl::StrCat("affinityGroupBindInfo[", i, "]");
    if (!entry.IsMap()) {
      r.Fail(entry.Mark(), path,
             absl::StrCat("expected a mapping, got ", yaml_internal::KindName(entry)));
      break;
    }
    std::optional<YAML::Node> pods = r.List(entry, path, {"podPlacements"});
    if (!pods) break;
    if (pods->size() == 0) {
      r.Fail(pods->Mark(), AnnotationReader::Join(path, "podPlacements"), "no pods");
      break;
    }
    GroupMember member;
    for (size_t k = 0; k < pods->size() && r.ok(); ++k) {
      const YAML::Node p = (*pods)[k];
      const std::string ppath = absl::StrCat(path, ".podPlacements[", k, "]");
      if (!p.IsMap()) {
        r.Fail(p.Mark(), ppath,
               absl::StrCat("expected a mapping, got ", yaml_internal::KindName(p)));
        break;
      }
      PodPlacement pod;
      std::optional<std::string> node = r.String(p, ppath, {"physicalNode"}, /*required=*/true);
      std::optional<YAML::Node> indices =
          r.List(p, ppath, {"physicalLeafCellIndices", "physicalGpuIndices"});
      if (!node || !indices) break;
      pod.node = *node;
      for (size_t x = 0; x < indices->size() && r.ok(); ++x) {
        std::optional<int32_t> idx =
            r.Int((*indices)[x], absl::StrCat(ppath, ".physicalLeafCellIndices[", x, "]"), 0,
                  std::numeric_limits<int32_t>::max());
        if (idx) pod.leaf_cell_indices.push_back(*idx);
      }
      if (!r.ok()) break;
      pod.leaf_cell_number = static_cast<int32_t>(pod.leaf_cell_indices.size());
      if (pod.leaf_cell_number == 0) {
        r.Fail(indices->Mark(), AnnotationReader::Join(ppath, "physicalLeafCellIndices"),
               "no leaf cells");
        break;
      }
      YAML::Node types = p["preassignedCellTypes"];
      if (types.IsDefined() && !types.IsNull()) {
        const std::string tpath = AnnotationReader::Join(ppath, "preassignedCellTypes");
        if (!types.IsSequence() || types.size() != pod.leaf_cell_indices.size()) {
          r.Fail(types.Mark(), tpath,
                 absl::StrCat("expected a list of ", pod.leaf_cell_indices.size(),
                              " cell types (one per leaf cell; empty for opportunistic)"));
          break;
        }
        for (size_t x = 0; x < types.size(); ++x) {
          if (!types[x].IsNull() && !types[x].IsScalar()) {
            r.Fail(types[x].Mark(), absl::StrCat(tpath, "[", x, "]"), "expected a cell type");
            break;
          }
          if (types[x].IsScalar() &&
              types[x].Scalar().size() > static_cast<size_t>(kMaxNameBytes)) {
            r.Fail(types[x].Mark(), absl::StrCat(tpath, "[", x, "]"),
                   absl::StrCat(types[x].Scalar().size(), " bytes, more than the limit of ",
                                kMaxNameBytes, " for a name"));
            break;
          }
          pod.preassigned_cell_types.push_back(types[x].IsNull() ? "" : types[x].Scalar());
        }
      }
      if (k == 0) {
        member.leaf_cell_number = pod.leaf_cell_number;
      } else if (pod.leaf_cell_number != member.leaf_cell_number) {
        r.Fail(indices->Mark(), AnnotationReader::Join(ppath, "physicalLeafCellIndices"),
               absl::StrCat(pod.leaf_cell_number, " leaf cells, but the member's first pod has ",
                            member.leaf_cell_number));
        break;
      }
      ++member.pod_number;
      rec->placement.pods.push_back(std::move(pod));
    }
    rec->request.members.push_back(member);
  }
  if (!r.ok()) return r.status();
  std::stable_sort(rec->placement.pods.begin(), rec->placement.pods.end(),
                   [](const PodPlacement& a, const PodPlacement& b) {
                     return a.leaf_cell_number < b.leaf_cell_number;
                   });
  return absl::OkStatus();
}

// The pod-scheduling-spec -> the request's other fields; its members must match.
absl::Status ReadSchedulingSpec(std::string_view text, GroupRecord* rec) {
  AnnotationReader r("pod-scheduling-spec");
  std::optional<YAML::Node> root = r.Parse(text);
  if (!root) return r.status();
  GroupRequest& q = rec->request;
  std::optional<std::string> vc = r.String(*root, "", {"virtualCluster"}, /*required=*/true);
  std::optional<int32_t> priority =
      r.IntMember(*root, "", {"priority"}, kOpportunisticPriority, kMaxGuaranteedPriority, 0);
  std::optional<std::string> type =
      r.String(*root, "", {"leafCellType", "gpuType"}, /*required=*/false);
  std::optional<std::string> pinned = r.String(*root, "", {"pinnedCellId"}, /*required=*/false);
  std::optional<bool> lazy = r.Bool(*root, "", "lazyPreemptionEnable");
  if (!r.ok()) return r.status();
  if (vc->empty()) {
    r.Fail((*root)["virtualCluster"].Mark(), "virtualCluster", "empty");
    return r.status();
  }
  q.vc = *vc;
  q.priority = *priority;
  q.leaf_cell_type = *type;
  q.pinned_cell_id = *pinned;
  q.lazy_preemption = *lazy;
  YAML::Node group = (*root)["affinityGroup"];
  if (!group.IsDefined() || group.IsNull()) return absl::OkStatus();  // name: the caller's
  if (!group.IsMap()) {
    r.Fail(group.Mark(), "affinityGroup",
           absl::StrCat("expected a mapping, got ", yaml_internal::KindName(group)));
    return r.status();
  }
  std::optional<std::string> name = r.String(group, "affinityGroup", {"name"}, /*required=*/true);
  if (!r.ok()) return r.status();
  q.name = *name;
  YAML::Node members = group["members"];
  if (!members.IsDefined() || members.IsNull()) return absl::OkStatus();
  if (!members.IsSequence()) {
    r.Fail(members.Mark(), "affinityGroup.members", "expected a list");
    return r.status();
  }
  // The spec's members and the bind info's must be the same multiset of pod sizes.
  std::map<int32_t, int64_t> want, have;
  for (size_t i = 0; i < members.size(); ++i) {
    const std::string path = absl::StrCat("affinityGroup.members[", i, "]");
    if (!members[i].IsMap()) {
      r.Fail(members[i].Mark(), path, "expected a mapping");
      return r.status();
    }
    std::optional<int32_t> pods =
        r.IntMember(members[i], path, {"podNumber"}, 1, kMaxGroupPods, std::nullopt);
    std::optional<int32_t> leaves =
        r.IntMember(members[i], path, {"leafCellNumber", "gpuNumber"}, 1,
                    std::numeric_limits<int32_t>::max(), std::nullopt);
    if (!r.ok()) return r.status();
    want[*leaves] += *pods;
  }
  for (const GroupMember& m : q.members) have[m.leaf_cell_number] += m.pod_number;
  if (want != have) {
    r.Fail(members.Mark(), "affinityGroup.members",
           "do not match the pods of pod-bind-info's affinityGroupBindInfo");
    return r.status();
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<GroupRecord> ImportHivedBindInfo(std::string_view bind_info_yaml,
                                                std::string_view scheduling_spec_yaml) {
  // Before any parsing: the YAML reader's time and memory grow with the text (a 200 MB scalar
  // took 33 s and 1.44 GB).
  for (const auto& [name, text] :
       {std::pair<const char*, std::string_view>{"pod-bind-info", bind_info_yaml},
        {"pod-scheduling-spec", scheduling_spec_yaml}}) {
    if (text.size() > static_cast<size_t>(kMaxAnnotationBytes)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, ": ", text.size(), " bytes, more than the limit of ",
                       kMaxAnnotationBytes, " (what Kubernetes allows for a pod's annotations)"));
    }
  }
  GroupRecord rec;
  absl::Status s = ReadBindInfo(bind_info_yaml, &rec);
  if (!s.ok()) return s;
  if (!scheduling_spec_yaml.empty()) {
    s = ReadSchedulingSpec(scheduling_spec_yaml, &rec);
    if (!s.ok()) return s;
  }
  rec.state = rec.request.priority >= kMinGuaranteedPriority ? GroupState::kAllocated
                                                             : GroupState::kOpportunistic;
  return rec;
}

}  // namespace hived

#include "src/persistence_json_pods.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hived/schedule_result.h"
#include "hived/state.h"

namespace hived::internal {
namespace {

constexpr const char* kSlot = "slot";
constexpr const char* kPodName = "name";
constexpr const char* kUid = "uid";

}  // namespace

void PodsToJson(const std::vector<PodIdentity>& pods, Json* record) {
  if (pods.empty()) return;
  Json list = Json::array();
  for (const PodIdentity& p : pods) {
    Json j = Json{{kSlot, p.index}, {kPodName, p.name}};
    if (!p.uid.empty()) j[kUid] = p.uid;
    list.push_back(std::move(j));
  }
  (*record)[kAllocatedPods] = std::move(list);
}

absl::Status PodsFromJson(const Json& record, const std::string& path,
                          std::vector<PodIdentity>* pods) {
  const Json* list = nullptr;
  HIVED_RETURN_IF_ERROR(Reader::Array(record, path, kAllocatedPods, /*required=*/false, &list));
  if (list == nullptr) return absl::OkStatus();
  const std::string lpath = absl::StrCat(path, ".", kAllocatedPods);
  if (list->empty()) return Reader::Error(lpath, "an empty list (omit the key instead)");
  std::vector<std::string_view> names;
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string ppath = absl::StrCat(lpath, "[", i, "]");
    const Json& j = (*list)[i];
    HIVED_RETURN_IF_ERROR(Reader::Object(j, ppath, {kSlot, kPodName, kUid}));
    PodIdentity pod;
    HIVED_RETURN_IF_ERROR(Reader::IntMember(j, ppath, kSlot, 0, kMaxGroupPods - 1, &pod.index));
    HIVED_RETURN_IF_ERROR(Reader::String(j, ppath, kPodName, /*required=*/true, &pod.name));
    if (pod.name.empty())
      return Reader::Error(absl::StrCat(ppath, ".", kPodName), "empty pod name");
    HIVED_RETURN_IF_ERROR(Reader::String(j, ppath, kUid, /*required=*/false, &pod.uid));
    if (!pods->empty() && pod.index <= pods->back().index) {
      return Reader::Error(absl::StrCat(ppath, ".", kSlot),
                           absl::StrCat("slot ", pod.index, " after slot ", pods->back().index,
                                        " (slots ascending, each once)"));
    }
    pods->push_back(std::move(pod));
  }
  for (const PodIdentity& p : *pods) names.push_back(p.name);
  std::sort(names.begin(), names.end());
  if (auto dup = std::adjacent_find(names.begin(), names.end()); dup != names.end()) {
    return Reader::Error(lpath, absl::StrCat("pod ", Quote(*dup), " is listed twice"));
  }
  return absl::OkStatus();
}

}  // namespace hived::internal

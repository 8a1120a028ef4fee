// The GPU-sharing sections of the saved state's JSON (src/persistence_json_sharing.h).
#include "src/persistence_json_sharing.h"

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hived/types.h"
#include "nlohmann/json.hpp"
#include "src/internal/status_macros.h"

namespace hived::internal {

// "shareShapes": {"tally": [[cpuMilli, memoryMiB, gpuMilli, gpus, typeMask, pods], ...],
// "atRebuild": [...]} (docs/state-format.md).
absl::Status ReadShareShapes(const Json& v, const std::string& path, ShareChoice::Learning* out) {
  HIVED_RETURN_IF_ERROR(Reader::Object(v, path, {kShapeTally, kShapesAtRebuild}));
  for (const char* key : {kShapeTally, kShapesAtRebuild}) {
    const Json* list = nullptr;
    HIVED_RETURN_IF_ERROR(Reader::Array(v, path, key, /*required=*/true, &list));
    std::vector<ShareChoice::Count>& counts = key == kShapeTally ? out->tally : out->at_rebuild;
    for (size_t i = 0; i < list->size(); ++i) {
      const std::string at = absl::StrCat(path, ".", key, "[", i, "]");
      const Json& e = (*list)[i];
      if (!e.is_array() || e.size() != 6) {
        return Reader::Error(at, "expected [cpuMilli, memoryMiB, gpuMilli, gpus, typeMask, pods]");
      }
      ShareChoice::Count c;
      int64_t milli = 0, gpus = 0;
      constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
      HIVED_RETURN_IF_ERROR(Reader::Int64(e[0], at + "[0]", 0, kMax, &c.shape.cpu));
      HIVED_RETURN_IF_ERROR(Reader::Int64(e[1], at + "[1]", 0, kMax, &c.shape.memory));
      HIVED_RETURN_IF_ERROR(Reader::Int64(e[2], at + "[2]", 0, 1000, &milli));
      HIVED_RETURN_IF_ERROR(Reader::Int64(e[3], at + "[3]", 0, kMaxGroupPods, &gpus));
      if (!e[4].is_number_unsigned() && !(e[4].is_number_integer() && e[4].get<int64_t>() >= 0)) {
        return Reader::Error(at + "[4]", "expected a non-negative integer (a leaf-type mask)");
      }
      c.shape.types = e[4].get<uint64_t>();
      HIVED_RETURN_IF_ERROR(Reader::Int64(e[5], at + "[5]", 1, kMax, &c.pods));
      c.shape.milli = static_cast<int32_t>(milli);
      c.shape.gpus = static_cast<int32_t>(gpus);
      counts.push_back(c);
    }
  }
  return absl::OkStatus();
}

absl::Status ReadMigLayouts(const Json& v, const std::string& path,
                            std::vector<SavedMigLayout>* out) {
  if (!v.is_array())
    return Reader::Error(path, absl::StrCat("expected a list, got ", v.type_name()));
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string at = absl::StrCat(path, "[", i, "]");
    const Json& e = v[i];
    HIVED_RETURN_IF_ERROR(Reader::Object(e, at, {kGpu, kInstances, kCreations, kReconfigurations}));
    SavedMigLayout l;
    HIVED_RETURN_IF_ERROR(
        Reader::String(e, at, kGpu, /*required=*/true, &l.gpu, kMaxStateStringBytes));
    const Json* list = nullptr;
    HIVED_RETURN_IF_ERROR(Reader::Array(e, at, kInstances, /*required=*/true, &list));
    for (size_t k = 0; k < list->size(); ++k) {
      const std::string ipath = absl::StrCat(at, ".", kInstances, "[", k, "]");
      const Json& inst = (*list)[k];
      if (!inst.is_array() || inst.size() != 2 || !inst[0].is_string()) {
        return Reader::Error(ipath, "expected [profile, start]");
      }
      int32_t start = 0;
      HIVED_RETURN_IF_ERROR(Reader::Int(inst[1], ipath + "[1]", 0, kMaxMigStart, &start));
      HIVED_RETURN_IF_ERROR(Reader::Size(inst[0], absl::StrCat(ipath, "[0]"), kMaxNameBytes));
      l.instances.emplace_back(inst[0].get<std::string>(), start);
    }
    for (const char* key : {kCreations, kReconfigurations}) {
      HIVED_ASSIGN_OR_RETURN(const Json* n, Reader::Member(e, at, key, /*required=*/true));
      HIVED_RETURN_IF_ERROR(Reader::Int64(*n, absl::StrCat(at, ".", key), 0, kMax,
                                          key == kCreations ? &l.creations : &l.reconfigurations));
    }
    out->push_back(std::move(l));
  }
  return absl::OkStatus();
}

}  // namespace hived::internal

// src/persistence_json_sharing.h: the GPU-sharing sections of the saved state's JSON
// (docs/state-format.md): the stranded rule's learnt shapes (`shareShapes`, version 2) and
// every MIG GPU's layout (`migLayouts`, version 3): their keys and their readers. The writers
// are in SavedStateToJson (src/persistence_json.cc), with the same keys.
//
// Invariants: src/persistence_json.h's (2) and (3): reading never throws; every error is
// kInvalidArgument naming the JSON path; unknown keys are rejected.
//
// Thread safety: pure functions.
#ifndef HIVED_SRC_PERSISTENCE_JSON_SHARING_H_
#define HIVED_SRC_PERSISTENCE_JSON_SHARING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "src/persistence_json.h"
#include "src/persistence_json_reader.h"
#include "src/share_choice.h"

namespace hived::internal {

// "shareShapes": {"tally": [...], "atRebuild": [...]}.
inline constexpr const char* kShapeTally = "tally";
inline constexpr const char* kShapesAtRebuild = "atRebuild";
// "migLayouts": [{"gpu", "instances", "creations", "reconfigurations"}, ...].
inline constexpr const char* kGpu = "gpu";
inline constexpr const char* kInstances = "instances";
inline constexpr const char* kCreations = "creations";
inline constexpr const char* kReconfigurations = "reconfigurations";
// The most memory slices a MIG geometry may declare (config validation): starts below it.
inline constexpr int32_t kMaxMigStart = 63;

// "shareShapes": {"tally": [[cpuMilli, memoryMiB, gpuMilli, gpus, typeMask, pods], ...],
// "atRebuild": [...]} into `out`.
absl::Status ReadShareShapes(const Json& v, const std::string& path, ShareChoice::Learning* out);
// "migLayouts": every MIG GPU's layout, its instances as [profile, start], into `out`.
absl::Status ReadMigLayouts(const Json& v, const std::string& path,
                            std::vector<SavedMigLayout>* out);

}  // namespace hived::internal

#endif  // HIVED_SRC_PERSISTENCE_JSON_SHARING_H_

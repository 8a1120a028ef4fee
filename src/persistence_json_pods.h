// src/persistence_json_pods.h: the JSON form of a group record's allocated pods
// (`GroupRecord::pods`, scheduler.h "Pods"): the record's optional key "allocatedPods", a
// list of {"slot": i, "name": "...", "uid": "..."} (uid omitted when empty), slots
// ascending. Absent when the record has no pods (every pod runs, named by its index), so
// records of gangs allocated whole, and every document older than pods, read and write
// unchanged; any version of the format may carry the key.
//
// Thread safety: pure functions.
#ifndef HIVED_SRC_PERSISTENCE_JSON_PODS_H_
#define HIVED_SRC_PERSISTENCE_JSON_PODS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "hived/status_view.h"
#include "src/persistence_json_reader.h"

namespace hived::internal {

inline constexpr const char* kAllocatedPods = "allocatedPods";

// Sets `record[kAllocatedPods]` when `pods` is not empty.
void PodsToJson(const std::vector<PodIdentity>& pods, Json* record);
// Reads `record[kAllocatedPods]` (record at `path`) into `pods`. Errors (kInvalidArgument
// naming the JSON path): a malformed entry, an empty or too long name or uid, slots not
// ascending, a name listed twice. Slots beyond the placement are the caller's check.
absl::Status PodsFromJson(const Json& record, const std::string& path,
                          std::vector<PodIdentity>* pods);

}  // namespace hived::internal

#endif  // HIVED_SRC_PERSISTENCE_JSON_PODS_H_

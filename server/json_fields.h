// server/json_fields.h: reading kube-scheduler's JSON as Go's decoder does (keys matched
// case-insensitively, exact match first), never throwing on a value of another type.
//
// Example:
//   std::string name = FieldString(args, "PodName");  // also finds "podName"
//
// Thread safety: pure functions.
#ifndef HIVED_SERVER_JSON_FIELDS_H_
#define HIVED_SERVER_JSON_FIELDS_H_

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>

#include "nlohmann/json.hpp"

namespace hived::server {

// Go's JSON decoder matches keys case-insensitively: so do we (exact match first).
inline const nlohmann::json* Field(const nlohmann::json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  auto exact = object.find(std::string(key));
  if (exact != object.end()) return &*exact;
  for (auto it = object.begin(); it != object.end(); ++it) {
    const std::string& k = it.key();
    if (k.size() == key.size() && std::equal(k.begin(), k.end(), key.begin(), [](char a, char b) {
          return std::tolower(static_cast<unsigned char>(a)) ==
                 std::tolower(static_cast<unsigned char>(b));
        })) {
      return &it.value();
    }
  }
  return nullptr;
}

inline std::string FieldString(const nlohmann::json& object, std::string_view key) {
  const nlohmann::json* v = Field(object, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

}  // namespace hived::server

#endif  // HIVED_SERVER_JSON_FIELDS_H_

// src/persistence_json_reader.h: the strict JSON reading of saved states and group records
// (src/persistence_json.h's invariants 2-3): parsing with bounded depth and located syntax
// errors, and `Reader`, which walks a parsed document naming the JSON path of every problem
// (a wrong type or range, a missing or unknown key, a key newer than the document).
// Internal (nlohmann-json).
//
// Thread safety: pure functions.
#ifndef HIVED_SRC_PERSISTENCE_JSON_READER_H_
#define HIVED_SRC_PERSISTENCE_JSON_READER_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "hived/state.h"
#include "nlohmann/json.hpp"
#include "src/internal/status_macros.h"
#include "src/internal/strings.h"

namespace hived::internal {

using Json = nlohmann::ordered_json;

// `text` parsed; kInvalidArgument "<what>: nested deeper than 32 levels" or "<what>:
// malformed JSON at line L, column C: ...". The limits of hived/state.h (document size, JSON
// values, string size) are checked before parsing. Never throws.
absl::StatusOr<Json> ParseJson(std::string_view text, std::string_view what);

// `s` as an error message may quote it: whole up to `kMaxQuotedInputBytes`, else its first
// bytes (whole UTF-8 characters) and "... (N bytes)".
std::string Quote(std::string_view s);

// Walks a parsed document, naming the JSON path of every problem.
class Reader {
 public:
  static absl::Status Error(const std::string& path, std::string_view message) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", ToAbsl(message)));
  }

  // `j` must be an object whose keys are all in `allowed`.
  static absl::Status Object(const Json& j, const std::string& path,
                             std::initializer_list<const char*> allowed) {
    if (!j.is_object()) return Error(path, absl::StrCat("expected an object, got ", j.type_name()));
    for (auto it = j.begin(); it != j.end(); ++it) {
      bool known = false;
      for (const char* k : allowed) known = known || it.key() == k;
      if (!known) {
        return Error(absl::StrCat(path, ".", Quote(it.key())),
                     absl::StrCat("unknown key (this reader knows version ", kStateVersion,
                                  " of the format)"));
      }
    }
    return absl::OkStatus();
  }

  // The member `key` of object `j`; null when absent and not `required`.
  static absl::StatusOr<const Json*> Member(const Json& j, const std::string& path, const char* key,
                                            bool required) {
    auto it = j.find(key);
    if (it == j.end()) {
      if (required) return Error(absl::StrCat(path, ".", key), "missing");
      return static_cast<const Json*>(nullptr);
    }
    return &*it;
  }

  // A string of at most `max` bytes (names by default: `kMaxNameBytes`).
  static absl::Status String(const Json& j, const std::string& path, const char* key, bool required,
                             std::string* out, int64_t max = kMaxNameBytes) {
    HIVED_ASSIGN_OR_RETURN(const Json* v, Member(j, path, key, required));
    if (v == nullptr) return absl::OkStatus();
    if (!v->is_string()) {
      return Error(absl::StrCat(path, ".", key),
                   absl::StrCat("expected a string, got ", v->type_name()));
    }
    HIVED_RETURN_IF_ERROR(Size(*v, absl::StrCat(path, ".", key), max));
    *out = v->get<std::string>();
    return absl::OkStatus();
  }

  // A string value `v` of at most `max` bytes.
  static absl::Status Size(const Json& v, const std::string& path, int64_t max) {
    const size_t size = v.get_ref<const std::string&>().size();
    if (size <= static_cast<size_t>(max)) return absl::OkStatus();
    return Error(path, absl::StrCat(size, " bytes, more than the limit of ", max,
                                    max == kMaxNameBytes ? " for a name" : ""));
  }

  // An optional boolean member (false when absent).
  static absl::Status Bool(const Json& j, const std::string& path, const char* key, bool* out) {
    HIVED_ASSIGN_OR_RETURN(const Json* v, Member(j, path, key, /*required=*/false));
    if (v == nullptr) return absl::OkStatus();
    if (!v->is_boolean()) {
      return Error(absl::StrCat(path, ".", key),
                   absl::StrCat("expected true or false, got ", v->type_name()));
    }
    *out = v->get<bool>();
    return absl::OkStatus();
  }

  static absl::Status Int(const Json& v, const std::string& path, int64_t min, int64_t max,
                          int32_t* out) {
    if (!v.is_number_integer()) {
      return Error(path, absl::StrCat("expected an integer, got ", v.type_name()));
    }
    const bool is_unsigned = v.is_number_unsigned();
    const uint64_t u = is_unsigned ? v.get<uint64_t>() : 0;
    const int64_t i = is_unsigned ? 0 : v.get<int64_t>();
    const bool below = is_unsigned ? (min > 0 && u < static_cast<uint64_t>(min)) : i < min;
    const bool above = is_unsigned ? u > static_cast<uint64_t>(max) : i > max;
    if (below || above) {
      return Error(path, absl::StrCat("integer out of range ", min, "..", max));
    }
    *out = static_cast<int32_t>(is_unsigned ? static_cast<int64_t>(u) : i);
    return absl::OkStatus();
  }

  static absl::Status Int64(const Json& v, const std::string& path, int64_t min, int64_t max,
                            int64_t* out) {
    if (!v.is_number_integer() ||
        (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(max))) {
      return Error(path, v.is_number_integer()
                             ? absl::StrCat("integer out of range ", min, "..", max)
                             : absl::StrCat("expected an integer, got ", v.type_name()));
    }
    const int64_t i = v.get<int64_t>();
    if (i < min || i > max)
      return Error(path, absl::StrCat("integer out of range ", min, "..", max));
    *out = i;
    return absl::OkStatus();
  }

  // Keys a document of `version` cannot have: those introduced by `since`.
  static absl::Status NotBefore(const Json& j, const std::string& path, int32_t version,
                                int32_t since, std::initializer_list<const char*> keys) {
    if (version >= since) return absl::OkStatus();
    for (const char* k : keys) {
      if (j.contains(k)) {
        return Error(absl::StrCat(path, ".", k),
                     absl::StrCat("unknown key in a version ", version,
                                  " document (it is new in version ", since, ")"));
      }
    }
    return absl::OkStatus();
  }

  static absl::Status IntMember(const Json& j, const std::string& path, const char* key,
                                int64_t min, int64_t max, int32_t* out) {
    HIVED_ASSIGN_OR_RETURN(const Json* v, Member(j, path, key, /*required=*/true));
    return Int(*v, absl::StrCat(path, ".", key), min, max, out);
  }

  static absl::Status Array(const Json& j, const std::string& path, const char* key, bool required,
                            const Json** out) {
    HIVED_ASSIGN_OR_RETURN(*out, Member(j, path, key, required));
    if (*out != nullptr && !(*out)->is_array()) {
      return Error(absl::StrCat(path, ".", key),
                   absl::StrCat("expected a list, got ", (*out)->type_name()));
    }
    return absl::OkStatus();
  }

  static absl::Status Strings(const Json& j, const std::string& path, const char* key,
                              std::vector<std::string>* out, int64_t max = kMaxNameBytes) {
    const Json* a = nullptr;
    HIVED_RETURN_IF_ERROR(Array(j, path, key, /*required=*/false, &a));
    if (a == nullptr) return absl::OkStatus();
    for (size_t i = 0; i < a->size(); ++i) {
      const Json& v = (*a)[i];
      if (!v.is_string()) {
        return Error(absl::StrCat(path, ".", key, "[", i, "]"),
                     absl::StrCat("expected a string, got ", v.type_name()));
      }
      HIVED_RETURN_IF_ERROR(Size(v, absl::StrCat(path, ".", key, "[", i, "]"), max));
      out->push_back(v.get<std::string>());
    }
    return absl::OkStatus();
  }
};

}  // namespace hived::internal

#endif  // HIVED_SRC_PERSISTENCE_JSON_READER_H_

// src/internal/strings.h: the one conversion from std::string_view to absl::string_view.
//
// Abseil's string_view is not std::string_view in the Debian 12 build (style guide, section
// 3), so `absl::StrCat` and Abseil's maps take a `std::string_view` through `ToAbsl`.
// Example: `absl::StrCat("group ", ToAbsl(name), " is not known")`.
//
// Thread safety: a pure function.
#ifndef HIVED_SRC_INTERNAL_STRINGS_H_
#define HIVED_SRC_INTERNAL_STRINGS_H_

#include <string_view>

#include "absl/strings/string_view.h"

namespace hived {

inline absl::string_view ToAbsl(std::string_view s) {
  return absl::string_view(s.data(), s.size());
}

}  // namespace hived

#endif  // HIVED_SRC_INTERNAL_STRINGS_H_

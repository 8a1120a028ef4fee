// Checks shared by the simulator's libFuzzer targets: a failure traps, so libFuzzer reports it
// with the input.
#ifndef HIVED_TESTS_FUZZ_SIM_FUZZ_CHECK_H_
#define HIVED_TESTS_FUZZ_SIM_FUZZ_CHECK_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "sim/common/csv.h"

namespace hived::sim::fuzz {

inline void Require(bool condition) {
  if (!condition) __builtin_trap();
}

// An error must be kInvalidArgument, name the file first, and say something.
inline void RequireLocatedError(const absl::Status& status, std::string_view file_name) {
  Require(status.code() == absl::StatusCode::kInvalidArgument);
  const std::string_view m(status.message().data(), status.message().size());
  Require(m.substr(0, file_name.size()) == file_name);
  Require(m.size() > file_name.size() + 2);
}

// A name that came through a reader is a usable name.
inline void RequireName(std::string_view name) {
  size_t offset = 0;
  Require(!CheckName(name, "name", &offset).has_value());
}

inline void RequireTime(int64_t t, int64_t min = 0) { Require(t >= min && t <= kMaxTimeSeconds); }

}  // namespace hived::sim::fuzz

#endif  // HIVED_TESTS_FUZZ_SIM_FUZZ_CHECK_H_

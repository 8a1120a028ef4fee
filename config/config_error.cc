#include "absl/strings/str_cat.h"
#include "hived/config.h"

namespace hived {

std::string ConfigError::ToString() const {
  std::string out;
  if (!file.empty()) {
    absl::StrAppend(&out, file);
    if (line > 0) absl::StrAppend(&out, ":", line, ":", column);
    absl::StrAppend(&out, ": ");
  }
  if (!yaml_path.empty()) absl::StrAppend(&out, yaml_path, ": ");
  absl::StrAppend(&out, message);
  if (!hint.empty()) absl::StrAppend(&out, " (", hint, ")");
  return out;
}

}  // namespace hived

// strict_yaml/strict_yaml.h: strict, located, bounded reading of YAML files, shared by the
// config loader (config/) and the scenario loader (sim/). An internal target: not installed,
// not part of the public API.
//
// Provides the checks every reader of a hived YAML file makes before and while walking the
// document: a size limit enforced while reading the file; text that is valid UTF-8 without
// control characters; exactly one document; a budget on the number of YAML nodes, counted
// on the parser's events before any node tree is built; and scalar readers (integers without
// ambiguous leading zeros, YAML 1.1 booleans) that say precisely what is wrong.
//
// Invariants:
//   1. `ReadFileLimited` never holds more than `max_bytes + 1` bytes of the file.
//   2. `ParseDocument` builds a node tree only for text that passed `CheckText` and whose
//      first document has at most `max_nodes` events; every failure carries a mark.
//   3. No function here throws; yaml-cpp's exceptions become `Problem`s.
//
// Example:
//   absl::StatusOr<std::string> text = ReadFileLimited(path, kDefaultMaxInputBytes, "config");
//   ParsedDocument doc = ParseDocument(*text, kDefaultMaxNodes);
//   if (doc.problem) Report(doc.problem->mark, doc.problem->message, doc.problem->hint);
//
// Thread safety: free functions without shared state.
#ifndef HIVED_STRICT_YAML_STRICT_YAML_H_
#define HIVED_STRICT_YAML_STRICT_YAML_H_

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace hived::yaml_internal {

// Defaults of the limits, documented in the README ("Input limits"); each reader lets its
// caller override them.
inline constexpr int64_t kDefaultMaxInputBytes = int64_t{64} << 20;  // 64 MiB
inline constexpr int64_t kDefaultMaxNodes = int64_t{1} << 21;        // parser events
inline constexpr int32_t kDefaultMaxErrors = 100;                    // located errors shown

// Reads the file at `path`, failing as soon as it holds more than `max_bytes` bytes (so
// `/dev/zero` fails fast). kNotFound when it cannot be opened or read; kInvalidArgument
// "<path>: the <what> file is larger than N bytes" when it is too large.
absl::StatusOr<std::string> ReadFileLimited(const std::string& path, int64_t max_bytes,
                                            std::string_view what);

// One problem with a mark (0-based line and column, as yaml-cpp's).
struct Problem {
  YAML::Mark mark;
  std::string message;
  std::string hint;
};

// The first character YAML (or UTF-8) does not allow: C0 controls other than tab, LF and CR,
// DEL, and bytes that are not valid UTF-8 (overlong forms, surrogates, > U+10FFFF).
// yaml-cpp 0.7 accepts them: a NUL makes it produce empty documents forever.
std::optional<Problem> CheckText(std::string_view text);

// A parsed file. `has_root` when its first document was read (`root`); `empty` when the
// file holds no document at all. `problem` is set when something is wrong: with `has_root`
// only for a second document (the first is still worth checking), else parsing stopped.
struct ParsedDocument {
  YAML::Node root;
  bool has_root = false;
  bool empty = false;
  std::optional<Problem> problem;
};

// Checks the text, then counts the parser's events (nodes, keys, aliases) and documents
// before building the node tree: more than `max_nodes` events, or a second document, is a
// problem (the second document's is located at its start).
ParsedDocument ParseDocument(std::string_view text, int64_t max_nodes);

// "a mapping", "a list", "a scalar", "null", "nothing".
const char* KindName(const YAML::Node& node);
// True for a plain (unquoted, untagged) scalar; quoted scalars are strings in YAML.
bool IsPlain(const YAML::Node& node);
// `text` in backticks, shortened to 60 characters.
std::string Quote(std::string_view text);

// Reads a decimal integer in [min, max]: an optional sign, then digits. A leading zero
// ("010") is refused as ambiguous: YAML 1.1 and HiveD's Go reader take it as octal.
// Returns nullopt and sets `problem` (message and hint, no mark) otherwise.
std::optional<int64_t> ParseInteger(std::string_view text, int64_t min, int64_t max,
                                    Problem* problem);
// YAML 1.1 booleans: true/false, yes/no, on/off, y/n, any case.
std::optional<bool> ParseBool(std::string_view text);

// Keeps the first `max` errors and counts the rest, so a hostile file cannot make millions
// of error lines.
class ErrorCap {
 public:
  explicit ErrorCap(int32_t max) : max_(max) {}
  // True when the next error should be kept.
  bool Admit() {
    if (kept_ < max_) {
      ++kept_;
      return true;
    }
    ++dropped_;
    return false;
  }
  int64_t dropped() const { return dropped_; }
  // "... and N more errors (only the first M are shown)", or "" when none was dropped.
  std::string Summary() const;

 private:
  int32_t max_;
  int32_t kept_ = 0;
  int64_t dropped_ = 0;
};

}  // namespace hived::yaml_internal

#endif  // HIVED_STRICT_YAML_STRICT_YAML_H_

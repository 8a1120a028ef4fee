// sim/scenario/scenario_parser.h: the scenario file parser's shared part (internal to the loader):
// strict, located YAML reading of one scenario document. Every problem is collected as
// "file:line:col: path: message" (up to `ScenarioLimits::max_errors`), so a file's errors are
// reported at once. The document and file level (root keys, paths relative to the file) is
// in sim/scenario/scenario_loader.cc; the step vocabulary (requests, expectations, node and usage
// steps) in sim/scenario/scenario_steps.cc.
//
// Thread safety: one parser per document; not thread-safe.
#ifndef HIVED_SIM_SCENARIO_SCENARIO_PARSER_H_
#define HIVED_SIM_SCENARIO_SCENARIO_PARSER_H_

#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sim/scenario/scenario.h"
#include "strict_yaml/strict_yaml.h"
#include "yaml-cpp/yaml.h"

namespace hived::sim::scenario_internal {

// Collects located errors while walking one scenario document.
class ScenarioParser {
 public:
  ScenarioParser(std::string file, const ScenarioLimits& limits)
      : file_(std::move(file)), limits_(limits), cap_(limits.max_errors) {}

  absl::StatusOr<Scenario> Parse(std::string_view yaml);

 private:
  ScenarioLocation Where(const YAML::Node& node) const {
    ScenarioLocation loc;
    loc.file = file_;
    const YAML::Mark mark = node.Mark();
    if (!mark.is_null()) {
      loc.line = mark.line + 1;
      loc.column = mark.column + 1;
    }
    return loc;
  }

  std::string At(const YAML::Node& node) const {
    const ScenarioLocation loc = Where(node);
    if (loc.line == 0) return file_;
    return absl::StrCat(file_, ":", loc.line, ":", loc.column);
  }

  void Error(const YAML::Node& node, const std::string& path, const std::string& message) {
    if (cap_.Admit()) errors_.push_back(absl::StrCat(At(node), ": ", path, ": ", message));
  }

  // Reports keys of `map` that are not in `known`, and duplicated keys.
  void CheckKeys(const YAML::Node& map, const std::string& path,
                 const std::vector<std::string>& known) {
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      if (!it->first.IsScalar()) {
        Error(it->first, path, "keys must be plain strings");
        continue;
      }
      const std::string key = it->first.Scalar();
      if (!seen.insert(key).second) {
        Error(it->first, path, absl::StrCat("duplicate key '", key, "'"));
      }
      bool found = false;
      for (const std::string& k : known) found = found || k == key;
      if (!found) {
        Error(it->first, path,
              absl::StrCat("unknown key '", key, "' (expected one of: ", absl::StrJoin(known, ", "),
                           ")"));
      }
    }
  }

  bool IsMap(const YAML::Node& node, const std::string& path) {
    if (node.IsMap()) return true;
    Error(node, path, "must be a map");
    return false;
  }

  std::optional<std::string> String(const YAML::Node& node, const std::string& path) {
    if (!node.IsScalar()) {
      Error(node, path, "must be a string");
      return std::nullopt;
    }
    return node.Scalar();
  }

  // Integers may be quoted; a leading zero ("010") is refused as ambiguous (octal in YAML 1.1).
  std::optional<int64_t> Int(const YAML::Node& node, const std::string& path, int64_t min,
                             int64_t max) {
    if (!node.IsScalar()) {
      Error(node, path, "must be an integer");
      return std::nullopt;
    }
    yaml_internal::Problem problem;
    std::optional<int64_t> value = yaml_internal::ParseInteger(node.Scalar(), min, max, &problem);
    if (!value) {
      Error(node, path,
            problem.hint.empty() ? problem.message
                                 : absl::StrCat(problem.message, " (", problem.hint, ")"));
    }
    return value;
  }

  std::optional<int32_t> Int32(const YAML::Node& node, const std::string& path,
                               int64_t min = INT32_MIN, int64_t max = INT32_MAX) {
    std::optional<int64_t> v = Int(node, path, min, max);
    if (!v) return std::nullopt;
    return static_cast<int32_t>(*v);
  }

  std::optional<bool> Bool(const YAML::Node& node, const std::string& path) {
    std::optional<bool> value;
    if (node.IsScalar()) value = yaml_internal::ParseBool(node.Scalar());
    if (!value) Error(node, path, "must be true or false");
    return value;
  }

  // A list of strings; a single string is accepted as a one-element list.
  std::optional<std::vector<std::string>> StringList(const YAML::Node& node,
                                                     const std::string& path, bool allow_scalar) {
    std::vector<std::string> out;
    if (node.IsNull()) return out;
    if (node.IsScalar() && allow_scalar) {
      out.push_back(node.Scalar());
      return out;
    }
    if (!node.IsSequence()) {
      Error(node, path, "must be a list of strings");
      return std::nullopt;
    }
    bool ok = true;
    for (std::size_t i = 0; i < node.size(); ++i) {
      std::optional<std::string> s = String(node[i], absl::StrCat(path, "[", i, "]"));
      if (s) {
        out.push_back(*s);
      } else {
        ok = false;
      }
    }
    if (!ok) return std::nullopt;
    return out;
  }

  std::optional<absl::StatusCode> Code(const YAML::Node& node, const std::string& path);
  std::optional<ExpectedError> ErrorExpectation(const YAML::Node& node, const std::string& path);
  std::optional<std::vector<ExpectedPod>> Pods(const YAML::Node& node, const std::string& path);
  std::optional<GroupRequest> Request(const YAML::Node& node, const std::string& path,
                                      Phase* phase);
  std::optional<ScheduleExpectation> Expectation(const YAML::Node& node, const std::string& path);
  std::optional<ScenarioAction> Step(const YAML::Node& node, const std::string& path);
  std::string Resolve(const std::string& relative) const;

  std::string file_;
  ScenarioLimits limits_;
  yaml_internal::ErrorCap cap_;
  std::vector<std::string> errors_;
};

}  // namespace hived::sim::scenario_internal

#endif  // HIVED_SIM_SCENARIO_SCENARIO_PARSER_H_

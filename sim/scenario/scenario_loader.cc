// Loads scenario files (sim/scenario/scenario.h). Like the cluster config loader, and on the same
// strict YAML reading (strict_yaml/), it is strict: unknown keys, wrong types and missing
// required keys are errors, each reported with file:line:col, and every problem in the file
// is reported at once (up to `ScenarioLimits::max_errors`).
// The parser's helpers are in sim/scenario/scenario_parser.h, the step vocabulary in
// sim/scenario/scenario_steps.cc.
#include <filesystem>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_parser.h"

namespace hived::sim {
namespace scenario_internal {

std::string ScenarioParser::Resolve(const std::string& relative) const {
  std::filesystem::path p(relative);
  if (p.is_absolute()) return relative;
  return (std::filesystem::path(file_).parent_path() / p).lexically_normal().string();
}

absl::StatusOr<Scenario> ScenarioParser::Parse(std::string_view yaml) {
  yaml_internal::ParsedDocument doc = yaml_internal::ParseDocument(yaml, limits_.max_yaml_nodes);
  if (doc.problem) {
    const YAML::Mark& mark = doc.problem->mark;
    errors_.push_back(absl::StrCat(file_, ":", mark.line + 1, ":", mark.column + 1, ": ",
                                   doc.problem->message, doc.problem->hint.empty() ? "" : " (",
                                   doc.problem->hint, doc.problem->hint.empty() ? "" : ")"));
    if (!doc.has_root) return absl::InvalidArgumentError(errors_.front());
  }
  // Only const access below: a non-const operator[] may add keys to the document.
  const YAML::Node root = doc.root;
  Scenario scenario;
  scenario.file = file_;
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file_, ": a scenario must be a map with 'config' and 'steps'"));
  }
  try {
    CheckKeys(root, "<root>", {"config", "seed", "description", "steps"});
    if (!root["config"]) {
      Error(root, "<root>", "missing key 'config' (the cluster config, relative to this file)");
    } else if (auto s = String(root["config"], "config")) {
      scenario.config = *s;
      scenario.config_file = Resolve(*s);
    }
    if (root["seed"]) {
      if (auto v = Int(root["seed"], "seed", 0, INT64_MAX)) {
        scenario.seed = static_cast<uint64_t>(*v);
      }
    }
    if (root["description"]) {
      if (auto s = String(root["description"], "description")) scenario.description = *s;
    }
    if (!root["steps"]) {
      Error(root, "<root>", "missing key 'steps'");
    } else if (!root["steps"].IsSequence()) {
      Error(root["steps"], "steps", "must be a list of steps");
    } else {
      const YAML::Node steps = root["steps"];
      for (std::size_t i = 0; i < steps.size(); ++i) {
        std::optional<ScenarioAction> action = Step(steps[i], absl::StrCat("steps[", i, "]"));
        if (action) scenario.steps.push_back(ScenarioStep{Where(steps[i]), std::move(*action)});
      }
    }
  } catch (const YAML::Exception& e) {
    // Defensive: the accessors above do not throw on well-formed documents.
    errors_.push_back(
        absl::StrCat(file_, ":", e.mark.line + 1, ":", e.mark.column + 1, ": ", e.msg));
  }
  if (cap_.dropped() > 0) errors_.push_back(absl::StrCat(file_, ": ", cap_.Summary()));
  if (!errors_.empty()) return absl::InvalidArgumentError(absl::StrJoin(errors_, "\n"));
  return scenario;
}

}  // namespace scenario_internal

absl::StatusOr<Scenario> LoadScenarioString(std::string_view yaml, std::string_view file_name,
                                            const ScenarioLimits& limits) {
  return scenario_internal::ScenarioParser(std::string(file_name), limits).Parse(yaml);
}

absl::StatusOr<Scenario> LoadScenarioFile(const std::string& path, const ScenarioLimits& limits) {
  absl::StatusOr<std::string> text =
      yaml_internal::ReadFileLimited(path, limits.max_input_bytes, "scenario");
  if (!text.ok()) return text.status();
  return LoadScenarioString(*text, path, limits);
}

const char* ExpectedOutcomeName(ExpectedOutcome outcome) {
  switch (outcome) {
    case ExpectedOutcome::kPlaced:
      return "placed";
    case ExpectedOutcome::kPreempting:
      return "preempting";
    case ExpectedOutcome::kWaiting:
      return "waiting";
    case ExpectedOutcome::kInfeasible:
      return "infeasible";
    case ExpectedOutcome::kError:
      return "error";
  }
  return "?";
}

}  // namespace hived::sim

// Expectation checks and formatting for the scenario runner (sim/scenario/scenario_check.h).
#include "sim/scenario/scenario_check.h"

#include <functional>

#include "absl/strings/match.h"
#include "sim/scenario/scenario_runner.h"

namespace hived::sim::scenario_internal {

std::string JsonStrings(const std::vector<std::string>& v) {
  std::vector<std::string> parts;
  parts.reserve(v.size());
  for (const std::string& s : v) parts.push_back(JsonQuote(s));
  return absl::StrCat("[", absl::StrJoin(parts, ","), "]");
}

std::string PodsText(const std::vector<ExpectedPod>& pods) {
  std::vector<std::string> parts;
  for (const ExpectedPod& p : pods) {
    parts.push_back(
        absl::StrCat("{node: ", p.node, ", leafCells: [", absl::StrJoin(p.leaf_cells, ", "), "]}"));
  }
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

std::string PodsJson(const std::vector<ExpectedPod>& pods) {
  std::vector<std::string> parts;
  for (const ExpectedPod& p : pods) {
    parts.push_back(JsonObject()
                        .Str("node", p.node)
                        .Raw("leafCells", absl::StrCat("[", absl::StrJoin(p.leaf_cells, ","), "]"))
                        .Done());
  }
  return absl::StrCat("[", absl::StrJoin(parts, ","), "]");
}

std::vector<ExpectedPod> ToPods(const Placement& placement) {
  std::vector<ExpectedPod> pods;
  for (const PodPlacement& p : placement.pods) pods.push_back({p.node, p.leaf_cell_indices});
  return pods;
}

bool SamePods(const std::vector<ExpectedPod>& a, const std::vector<ExpectedPod>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].node != b[i].node || a[i].leaf_cells != b[i].leaf_cells) return false;
  }
  return true;
}

ExpectedOutcome ToExpected(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPlaced:
      return ExpectedOutcome::kPlaced;
    case Outcome::kPreempting:
      return ExpectedOutcome::kPreempting;
    case Outcome::kWaiting:
      return ExpectedOutcome::kWaiting;
    case Outcome::kInfeasible:
      return ExpectedOutcome::kInfeasible;
  }
  return ExpectedOutcome::kError;
}

std::string Quote(const std::string& s) { return absl::StrCat("\"", s, "\""); }

std::string ListText(std::vector<std::string> v) {
  return absl::StrCat("[", absl::StrJoin(v, ", "), "]");
}

std::string StatusText(const absl::Status& status) {
  return absl::StrCat(absl::StatusCodeToString(status.code()), ": ", status.message());
}

// Checks a status against an optional expected error; appends failures.
void CheckError(const absl::Status& status, const std::optional<ExpectedError>& expected,
                const std::string& what, std::vector<std::string>* failures) {
  if (!expected) {
    if (!status.ok()) {
      failures->push_back(absl::StrCat(what, ": expected success, got error ", StatusText(status)));
    }
    return;
  }
  if (status.ok()) {
    failures->push_back(absl::StrCat(
        what, ": expected an error",
        expected->code ? absl::StrCat(" ", absl::StatusCodeToString(*expected->code)) : "",
        expected->message_substring.empty()
            ? ""
            : absl::StrCat(" containing ", Quote(expected->message_substring)),
        ", got success"));
    return;
  }
  if (expected->code && *expected->code != status.code()) {
    failures->push_back(absl::StrCat(what, ": error code: expected ",
                                     absl::StatusCodeToString(*expected->code), ", got ",
                                     StatusText(status)));
  }
  if (!absl::StrContains(status.message(), expected->message_substring)) {
    failures->push_back(absl::StrCat(what, ": error message: expected to contain ",
                                     Quote(expected->message_substring), ", got ",
                                     Quote(std::string(status.message()))));
  }
}

std::vector<std::string> PreassignedChains(const ClusterSpec& spec, const std::string& vc) {
  std::vector<std::string> chains;
  for (const VirtualClusterSpec& v : spec.virtual_clusters) {
    if (v.name != vc) continue;
    for (const VirtualCellSpec& cell : v.virtual_cells) {
      const std::string chain = std::string(cell.cell_type.substr(0, cell.cell_type.find('.')));
      for (int32_t i = 0; i < cell.cell_number; ++i) chains.push_back(chain);
    }
    for (const PinnedCellSpec& pinned : v.pinned_cells) {
      std::string chain;
      std::function<bool(const PhysicalCellSpec&)> contains = [&](const PhysicalCellSpec& c) {
        if (c.pinned_cell_id == pinned.pinned_cell_id) return true;
        for (const PhysicalCellSpec& child : c.cell_children) {
          if (contains(child)) return true;
        }
        return false;
      };
      for (const PhysicalCellSpec& top : spec.physical_cells) {
        if (contains(top)) {
          chain = top.cell_type;
          break;
        }
      }
      chains.push_back(chain);
    }
  }
  return chains;
}

}  // namespace hived::sim::scenario_internal

namespace hived::sim {

std::string ScenarioReportToJson(const ScenarioReport& report) {
  const char* status = "passed";
  switch (report.status) {
    case ScenarioStatus::kPassed:
      status = "passed";
      break;
    case ScenarioStatus::kFailed:
      status = "failed";
      break;
    case ScenarioStatus::kFileError:
      status = "error";
      break;
    case ScenarioStatus::kSkipped:
      status = "skipped";
      break;
  }
  std::vector<std::string> steps;
  for (const ScenarioStepRecord& s : report.steps) steps.push_back(s.json);
  scenario_internal::JsonObject obj;
  obj.Str("file", report.file).Str("status", status);
  if (report.status != ScenarioStatus::kPassed) obj.Str("message", report.text);
  obj.Raw("steps", absl::StrCat("[", absl::StrJoin(steps, ","), "]"));
  return obj.Done();
}

}  // namespace hived::sim

// sim/scenario/scenario_check.h: comparing what the scheduler did with a scenario's expectations,
// and formatting both as text and JSON (internal to the scenario runner,
// sim/scenario/scenario_runner.cc and scenario_actions.cc).
//
// Thread safety: stateless functions; `JsonObject` is a plain value.
#ifndef HIVED_SIM_SCENARIO_SCENARIO_CHECK_H_
#define HIVED_SIM_SCENARIO_SCENARIO_CHECK_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hived/cluster_spec.h"
#include "hived/schedule_result.h"
#include "sim/common/json.h"
#include "sim/scenario/scenario.h"

namespace hived::sim::scenario_internal {

// Builds one JSON object field by field.
class JsonObject {
 public:
  JsonObject& Raw(const std::string& key, const std::string& raw) {
    fields_.push_back(absl::StrCat(JsonQuote(key), ":", raw));
    return *this;
  }
  JsonObject& Str(const std::string& key, const std::string& value) {
    return Raw(key, JsonQuote(value));
  }
  JsonObject& Int(const std::string& key, int64_t value) { return Raw(key, absl::StrCat(value)); }
  JsonObject& Bool(const std::string& key, bool value) {
    return Raw(key, value ? "true" : "false");
  }
  std::string Done() const { return absl::StrCat("{", absl::StrJoin(fields_, ","), "}"); }

 private:
  std::vector<std::string> fields_;
};

// A JSON array of strings.
std::string JsonStrings(const std::vector<std::string>& v);
// "[{node: n, leafCells: [0, 1]}, ...]" and its JSON form.
std::string PodsText(const std::vector<ExpectedPod>& pods);
std::string PodsJson(const std::vector<ExpectedPod>& pods);
std::vector<ExpectedPod> ToPods(const Placement& placement);
bool SamePods(const std::vector<ExpectedPod>& a, const std::vector<ExpectedPod>& b);
ExpectedOutcome ToExpected(Outcome outcome);
std::string Quote(const std::string& s);
std::string ListText(std::vector<std::string> v);
std::string StatusText(const absl::Status& status);

// Checks a status against an optional expected error; appends failures.
void CheckError(const absl::Status& status, const std::optional<ExpectedError>& expected,
                const std::string& what, std::vector<std::string>* failures);

// Appends "what: expected E, got A" when an expected value is given and differs.
template <typename T>
void CheckEq(const std::string& what, const std::optional<T>& expected, const T& actual,
             std::vector<std::string>* failures) {
  if (expected && *expected != actual) {
    failures->push_back(absl::StrCat(what, ": expected ", *expected, ", got ", actual));
  }
}

// The chain of every preassigned virtual cell of a VC, indexed by its number n in the
// address "<vc>/<n>": non-pinned cells in config order, then pinned cells (HiveD's order).
std::vector<std::string> PreassignedChains(const ClusterSpec& spec, const std::string& vc);

}  // namespace hived::sim::scenario_internal

#endif  // HIVED_SIM_SCENARIO_SCENARIO_CHECK_H_

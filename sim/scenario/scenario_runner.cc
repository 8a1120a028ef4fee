#include "sim/scenario/scenario_runner.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "hived/config.h"
#include "hived/scheduler.h"
#include "sim/common/json.h"
#include "sim/scenario/scenario.h"
#include "sim/scenario/scenario_check.h"
#include "sim/scenario/scenario_runner_impl.h"

namespace hived::sim {
namespace scenario_internal {

absl::Status Runner::Build(const std::string& config_file) {
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecFile(config_file);
  if (!spec.ok()) return spec.status();
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler = Scheduler::Create(*spec);
  if (!scheduler.ok()) return scheduler.status();
  scheduler_ = std::move(*scheduler);
  return absl::OkStatus();
}

void Runner::RunSchedule(const ScheduleStep& step, StepOutcome* out) {
  const GroupRequest& req = step.request;
  const ScheduleExpectation& e = step.expect;
  out->summary = absl::StrCat("schedule ", req.name);
  out->json.Str("group", req.name)
      .Str("phase", step.phase == Phase::kFiltering ? "filtering" : "preempting");
  absl::StatusOr<ScheduleResult> result = scheduler_->Schedule(req, step.phase);
  std::vector<std::string>& f = out->failures;
  if (!result.ok()) {
    const std::string message(result.status().message());
    out->json.Str("outcome", "error")
        .Str("code", absl::StatusCodeToString(result.status().code()))
        .Str("error", message);
    if (!e.outcome || *e.outcome != ExpectedOutcome::kError) {
      f.push_back(absl::StrCat("outcome: expected ",
                               e.outcome ? ExpectedOutcomeName(*e.outcome) : "no error",
                               ", got error ", StatusText(result.status())));
      return;
    }
    if (e.error_code && *e.error_code != result.status().code()) {
      f.push_back(absl::StrCat("code: expected ", absl::StatusCodeToString(*e.error_code), ", got ",
                               StatusText(result.status())));
    }
    if (e.reason && !absl::StrContains(message, *e.reason)) {
      f.push_back(
          absl::StrCat("reason: expected to contain ", Quote(*e.reason), ", got ", Quote(message)));
    }
    for (const std::string& absent : e.reason_absent) {
      if (absl::StrContains(message, absent)) {
        f.push_back(absl::StrCat("reason: expected not to contain ", Quote(absent), ", got ",
                                 Quote(message)));
      }
    }
    return;
  }
  const ScheduleResult& r = *result;
  const std::vector<ExpectedPod> pods = ToPods(r.placement);
  out->json.Str("outcome", OutcomeName(r.outcome));
  if (r.outcome == Outcome::kPlaced || r.outcome == Outcome::kPreempting) {
    out->json.Str("chain", r.placement.chain).Raw("placement", PodsJson(pods));
  }
  if (!r.victims.empty()) out->json.Raw("victims", JsonStrings(r.victims));
  if (!r.reason.empty()) out->json.Str("reason", r.reason);

  const std::string reason_note =
      r.reason.empty() ? "" : absl::StrCat(" (reason: ", Quote(r.reason), ")");
  if (e.outcome && *e.outcome != ToExpected(r.outcome)) {
    f.push_back(absl::StrCat("outcome: expected ", ExpectedOutcomeName(*e.outcome), ", got ",
                             OutcomeName(r.outcome), reason_note));
  }
  if (e.error_code) {
    f.push_back(absl::StrCat("code: expected error ", absl::StatusCodeToString(*e.error_code),
                             ", got outcome ", OutcomeName(r.outcome)));
  }
  if (e.placement && !SamePods(*e.placement, pods)) {
    f.push_back(absl::StrCat("placement:\n      expected: ", PodsText(*e.placement),
                             "\n      actual:   ", PodsText(pods)));
  }
  if (e.chain && *e.chain != r.placement.chain) {
    f.push_back(absl::StrCat("chain: expected ", *e.chain, ", got ", Quote(r.placement.chain)));
  }
  if (e.victims) {
    std::vector<std::string> want = *e.victims;
    std::vector<std::string> got = r.victims;
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    if (want != got) {
      f.push_back(absl::StrCat("victims: expected ", ListText(want), ", got ", ListText(got)));
    }
  }
  if (e.reason && !absl::StrContains(r.reason, *e.reason)) {
    f.push_back(
        absl::StrCat("reason: expected to contain ", Quote(*e.reason), ", got ", Quote(r.reason)));
  }
  for (const std::string& absent : e.reason_absent) {
    if (absl::StrContains(r.reason, absent)) {
      f.push_back(absl::StrCat("reason: expected not to contain ", Quote(absent), ", got ",
                               Quote(r.reason)));
    }
  }
  for (const ExpectedPod& pod : pods) {
    for (const std::string& node : e.nodes_absent) {
      if (pod.node == node) {
        f.push_back(
            absl::StrCat("placement uses node ", node, ", which it must avoid: ", PodsText(pods)));
      }
    }
    if (e.nodes_within && std::find(e.nodes_within->begin(), e.nodes_within->end(), pod.node) ==
                              e.nodes_within->end()) {
      f.push_back(absl::StrCat("placement uses node ", pod.node, ", outside ",
                               ListText(*e.nodes_within), ": ", PodsText(pods)));
    }
  }
  requests_[req.name] = req;
  if (r.outcome == Outcome::kPlaced || r.outcome == Outcome::kPreempting) {
    placements_[req.name] = r.placement;
  }
  if (r.outcome == Outcome::kPlaced && step.allocate) {
    absl::StatusOr<AllocateInfo> info = scheduler_->Allocate(req, r.placement);
    out->json.Bool("allocated", info.ok());
    if (!info.ok()) {
      out->json.Str("allocateError", StatusText(info.status()));
      f.push_back(
          absl::StrCat("allocate: expected success, got error ", StatusText(info.status())));
      return;
    }
    out->json.Bool("downgraded", info->downgraded);
    if (info->downgraded) out->json.Str("downgradeReason", info->reason);
    if (step.expect_downgraded && *step.expect_downgraded != info->downgraded) {
      f.push_back(absl::StrCat("allocate: expected downgraded ", *step.expect_downgraded, ", got ",
                               info->downgraded, " ", Quote(info->reason)));
    }
  }
}

void Runner::RunAllocate(const AllocateStep& step, StepOutcome* out) {
  out->summary = absl::StrCat("allocate ", step.group);
  out->json.Str("group", step.group);
  auto req = requests_.find(step.group);
  if (req == requests_.end()) {
    out->failures.push_back(
        absl::StrCat("allocate: no earlier schedule step asked for group ", step.group));
    return;
  }
  Placement given;
  if (step.placement) {
    given.chain = step.chain;
    for (const ExpectedPod& pod : *step.placement) {
      PodPlacement p;
      p.leaf_cell_number = static_cast<int32_t>(pod.leaf_cells.size());
      p.node = pod.node;
      p.leaf_cell_indices = pod.leaf_cells;
      given.pods.push_back(std::move(p));
    }
  } else {
    auto placement = placements_.find(step.group);
    if (placement == placements_.end()) {
      out->failures.push_back(absl::StrCat("allocate: no earlier schedule step placed group ",
                                           step.group, " (placed or preempting)"));
      return;
    }
    given = placement->second;
  }
  absl::StatusOr<AllocateInfo> info = step.recover ? scheduler_->Recover(req->second, given)
                                                   : scheduler_->Allocate(req->second, given);
  out->json.Raw("placement", PodsJson(ToPods(given)));
  if (step.recover) out->json.Bool("recover", true);
  CheckError(info.status(), step.expect_error, step.recover ? "recover" : "allocate",
             &out->failures);
  if (!info.ok()) {
    out->json.Str("error", StatusText(info.status()));
    return;
  }
  out->json.Bool("downgraded", info->downgraded);
  if (info->downgraded) out->json.Str("downgradeReason", info->reason);
  if (step.expect_downgraded && *step.expect_downgraded != info->downgraded) {
    out->failures.push_back(absl::StrCat("allocate: expected downgraded ", *step.expect_downgraded,
                                         ", got ", info->downgraded, " ", Quote(info->reason)));
  }
}

namespace {

bool FileExists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

}  // namespace

ScenarioReport Runner::Run() {
  ScenarioReport report;
  report.file = scenario_.file;
  if (options_.skip_missing_config) {
    std::vector<std::string> missing;
    if (!FileExists(scenario_.config_file)) missing.push_back(scenario_.config_file);
    for (const ScenarioStep& step : scenario_.steps) {
      if (const auto* r = std::get_if<RestartStep>(&step.action)) {
        if (!r->config_file.empty() && !FileExists(r->config_file))
          missing.push_back(r->config_file);
      }
    }
    if (!missing.empty()) {
      report.status = ScenarioStatus::kSkipped;
      report.text = absl::StrCat("SKIP ", scenario_.file,
                                 ": config not found: ", absl::StrJoin(missing, ", "), "\n");
      return report;
    }
  }
  if (absl::Status s = Build(scenario_.config_file); !s.ok()) {
    report.status = ScenarioStatus::kFileError;
    report.text = absl::StrCat("ERROR ", scenario_.file, ": config ", scenario_.config_file, ":\n",
                               s.message(), "\n");
    return report;
  }
  for (std::size_t i = 0; i < scenario_.steps.size(); ++i) {
    const ScenarioStep& step = scenario_.steps[i];
    StepOutcome out;
    RunStep(step.action, &out);
    absl::Status invariants = scheduler_->CheckInvariants();
    if (!invariants.ok()) {
      out.failures.push_back(
          absl::StrCat("invariant broken after the step: ", StatusText(invariants)));
    }
    ScenarioStepRecord record;
    record.index = static_cast<int32_t>(i + 1);
    record.location = step.location;
    record.passed = out.failures.empty();
    out.json.Int("step", record.index)
        .Int("line", step.location.line)
        .Str("action", out.kind)
        .Bool("passed", record.passed);
    if (!out.failures.empty()) out.json.Raw("failures", JsonStrings(out.failures));
    record.json = out.json.Done();
    report.steps.push_back(record);
    report.steps_run = record.index;
    if (!out.failures.empty()) {
      report.status = out.file_error ? ScenarioStatus::kFileError : ScenarioStatus::kFailed;
      report.text =
          absl::StrCat("FAIL ", scenario_.file, "\n  step ", record.index, " (", step.location.file,
                       ":", step.location.line, ") ", out.summary, ":\n");
      for (const std::string& failure : out.failures) {
        absl::StrAppend(&report.text, "    ", failure, "\n");
      }
      return report;
    }
  }
  report.text = absl::StrCat("PASS ", scenario_.file, " (", scenario_.steps.size(), " steps)\n");
  return report;
}

}  // namespace scenario_internal

ScenarioReport RunScenario(const Scenario& scenario, const ScenarioRunOptions& options) {
  return scenario_internal::Runner(scenario, options).Run();
}

ScenarioReport RunScenarioFile(const std::string& path, const ScenarioRunOptions& options) {
  absl::StatusOr<Scenario> scenario = LoadScenarioFile(path, options.limits);
  if (!scenario.ok()) {
    ScenarioReport report;
    report.file = path;
    report.status = ScenarioStatus::kFileError;
    report.text = absl::StrCat("ERROR ", scenario.status().message(), "\n");
    return report;
  }
  return RunScenario(*scenario, options);
}

}  // namespace hived::sim

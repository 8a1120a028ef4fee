// The scenario step vocabulary (sim/scenario/scenario.h): schedule requests and their expected
// outcomes, pods, errors, and every other step kind, each checked strictly and located.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sim/scenario/scenario_parser.h"

namespace hived::sim::scenario_internal {

std::optional<absl::StatusCode> ScenarioParser::Code(const YAML::Node& node,
                                                     const std::string& path) {
  std::optional<std::string> s = String(node, path);
  if (!s) return std::nullopt;
  // Accept camelCase (`notFound`) and Abseil's own spelling (`NOT_FOUND`).
  std::string key;
  for (char c : *s) {
    if (c != '_') key.push_back(absl::ascii_tolower(static_cast<unsigned char>(c)));
  }
  static const std::pair<const char*, absl::StatusCode> kCodes[] = {
      {"invalidargument", absl::StatusCode::kInvalidArgument},
      {"notfound", absl::StatusCode::kNotFound},
      {"alreadyexists", absl::StatusCode::kAlreadyExists},
      {"failedprecondition", absl::StatusCode::kFailedPrecondition},
      {"resourceexhausted", absl::StatusCode::kResourceExhausted},
      {"outofrange", absl::StatusCode::kOutOfRange},
      {"unimplemented", absl::StatusCode::kUnimplemented},
      {"internal", absl::StatusCode::kInternal},
      {"permissiondenied", absl::StatusCode::kPermissionDenied},
      {"aborted", absl::StatusCode::kAborted},
      {"unavailable", absl::StatusCode::kUnavailable},
  };
  for (const auto& [name, code] : kCodes) {
    if (key == name) return code;
  }
  Error(node, path,
        absl::StrCat("unknown status code '", *s,
                     "' (expected invalidArgument, notFound, alreadyExists, "
                     "failedPrecondition, resourceExhausted, outOfRange, internal, ...)"));
  return std::nullopt;
}

// `expectError: "substring"` or `expectError: {code: notFound, message: "substring"}`.
std::optional<ExpectedError> ScenarioParser::ErrorExpectation(const YAML::Node& node,
                                                              const std::string& path) {
  ExpectedError out;
  if (node.IsScalar()) {
    out.message_substring = node.Scalar();
    return out;
  }
  if (!node.IsMap()) {
    Error(node, path, "must be a message substring or a map {code, message}");
    return std::nullopt;
  }
  CheckKeys(node, path, {"code", "message"});
  if (node["code"]) out.code = Code(node["code"], absl::StrCat(path, ".code"));
  if (node["message"]) {
    std::optional<std::string> m = String(node["message"], absl::StrCat(path, ".message"));
    if (m) out.message_substring = *m;
  }
  return out;
}

// `[{node: n, leafCells: [0, 1]}, ...]`.
std::optional<std::vector<ExpectedPod>> ScenarioParser::Pods(const YAML::Node& node,
                                                             const std::string& path) {
  if (!node.IsSequence()) {
    Error(node, path, "must be a list of {node, leafCells}");
    return std::nullopt;
  }
  std::vector<ExpectedPod> pods;
  bool ok = true;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string p = absl::StrCat(path, "[", i, "]");
    const YAML::Node pod = node[i];
    if (!IsMap(pod, p)) {
      ok = false;
      continue;
    }
    CheckKeys(pod, p, {"node", "leafCells"});
    ExpectedPod out;
    if (!pod["node"]) {
      Error(pod, p, "missing key 'node'");
      ok = false;
    } else if (std::optional<std::string> n = String(pod["node"], absl::StrCat(p, ".node"))) {
      out.node = *n;
    } else {
      ok = false;
    }
    if (!pod["leafCells"]) {
      Error(pod, p, "missing key 'leafCells'");
      ok = false;
    } else if (!pod["leafCells"].IsSequence()) {
      Error(pod["leafCells"], absl::StrCat(p, ".leafCells"), "must be a list of integers");
      ok = false;
    } else {
      for (std::size_t k = 0; k < pod["leafCells"].size(); ++k) {
        std::optional<int32_t> v =
            Int32(pod["leafCells"][k], absl::StrCat(p, ".leafCells[", k, "]"), 0);
        if (v) {
          out.leaf_cells.push_back(*v);
        } else {
          ok = false;
        }
      }
    }
    pods.push_back(std::move(out));
  }
  if (!ok) return std::nullopt;
  return pods;
}

std::optional<GroupRequest> ScenarioParser::Request(const YAML::Node& node, const std::string& path,
                                                    Phase* phase) {
  if (!IsMap(node, path)) return std::nullopt;
  CheckKeys(node, path,
            {"group", "vc", "priority", "leafCellType", "pinnedCellId", "lazyPreemption", "members",
             "suggestedNodes", "phase"});
  GroupRequest req;
  const std::size_t errors_before = errors_.size();
  auto str = [&](const char* key, std::string* out, bool required) {
    if (!node[key]) {
      if (required) Error(node, path, absl::StrCat("missing key '", key, "'"));
      return;
    }
    if (std::optional<std::string> s = String(node[key], absl::StrCat(path, ".", key))) {
      *out = *s;
    }
  };
  str("group", &req.name, true);
  str("vc", &req.vc, true);
  str("leafCellType", &req.leaf_cell_type, false);
  str("pinnedCellId", &req.pinned_cell_id, false);
  if (node["priority"]) {
    // Out-of-range priorities are the scheduler's to reject (a misuse scenario).
    if (std::optional<int32_t> p = Int32(node["priority"], absl::StrCat(path, ".priority"))) {
      req.priority = *p;
    }
  }
  if (node["lazyPreemption"]) {
    if (std::optional<bool> b =
            Bool(node["lazyPreemption"], absl::StrCat(path, ".lazyPreemption"))) {
      req.lazy_preemption = *b;
    }
  }
  if (!node["members"]) {
    Error(node, path, "missing key 'members'");
  } else if (!node["members"].IsSequence()) {
    Error(node["members"], absl::StrCat(path, ".members"),
          "must be a list of {podNumber, leafCellNumber}");
  } else {
    const YAML::Node members = node["members"];
    int64_t total_pods = 0;
    for (std::size_t i = 0; i < members.size(); ++i) {
      const std::string p = absl::StrCat(path, ".members[", i, "]");
      if (!IsMap(members[i], p)) continue;
      CheckKeys(members[i], p, {"podNumber", "leafCellNumber"});
      GroupMember m;
      // Zero or negative counts are passed on: rejecting them is the scheduler's job.
      if (!members[i]["podNumber"]) {
        Error(members[i], p, "missing key 'podNumber'");
      } else if (auto v = Int32(members[i]["podNumber"], absl::StrCat(p, ".podNumber"))) {
        m.pod_number = *v;
      }
      if (!members[i]["leafCellNumber"]) {
        Error(members[i], p, "missing key 'leafCellNumber'");
      } else if (auto v = Int32(members[i]["leafCellNumber"], absl::StrCat(p, ".leafCellNumber"))) {
        m.leaf_cell_number = *v;
      }
      req.members.push_back(m);
      if (m.pod_number > 0) total_pods += m.pod_number;
    }
    if (total_pods > limits_.max_pods_per_request) {
      Error(members, absl::StrCat(path, ".members"),
            absl::StrCat("the group asks for ", total_pods, " pods in total; at most ",
                         limits_.max_pods_per_request, " are allowed"));
    }
  }
  if (node["suggestedNodes"]) {
    if (auto list = StringList(node["suggestedNodes"], absl::StrCat(path, ".suggestedNodes"),
                               /*allow_scalar=*/false)) {
      req.suggested_nodes = *list;
    }
  }
  if (node["phase"]) {
    if (std::optional<std::string> s = String(node["phase"], absl::StrCat(path, ".phase"))) {
      if (*s == "preempting") {
        *phase = Phase::kPreempting;
      } else if (*s == "filtering") {
        *phase = Phase::kFiltering;
      } else {
        Error(node["phase"], absl::StrCat(path, ".phase"),
              absl::StrCat("unknown phase '", *s, "' (expected preempting or filtering)"));
      }
    }
  }
  if (errors_.size() != errors_before) return std::nullopt;
  return req;
}

std::optional<ScheduleExpectation> ScenarioParser::Expectation(const YAML::Node& node,
                                                               const std::string& path) {
  if (!IsMap(node, path)) return std::nullopt;
  CheckKeys(node, path,
            {"outcome", "placement", "victims", "reason", "reasonAbsent", "code", "chain",
             "nodesAbsent", "nodesWithin"});
  ScheduleExpectation e;
  const std::size_t errors_before = errors_.size();
  if (node["outcome"]) {
    const std::string p = absl::StrCat(path, ".outcome");
    if (std::optional<std::string> s = String(node["outcome"], p)) {
      static const std::pair<const char*, ExpectedOutcome> kOutcomes[] = {
          {"placed", ExpectedOutcome::kPlaced},
          {"preempting", ExpectedOutcome::kPreempting},
          {"waiting", ExpectedOutcome::kWaiting},
          {"infeasible", ExpectedOutcome::kInfeasible},
          {"error", ExpectedOutcome::kError}};
      for (const auto& [name, outcome] : kOutcomes) {
        if (*s == name) e.outcome = outcome;
      }
      if (!e.outcome) {
        Error(node["outcome"], p,
              absl::StrCat("unknown outcome '", *s,
                           "' (expected placed, preempting, waiting, infeasible or error)"));
      }
    }
  }
  if (node["placement"]) e.placement = Pods(node["placement"], absl::StrCat(path, ".placement"));
  if (node["victims"]) {
    e.victims = StringList(node["victims"], absl::StrCat(path, ".victims"), false);
  }
  if (node["reason"]) e.reason = String(node["reason"], absl::StrCat(path, ".reason"));
  if (node["reasonAbsent"]) {
    if (auto l = StringList(node["reasonAbsent"], absl::StrCat(path, ".reasonAbsent"), true)) {
      e.reason_absent = *l;
    }
  }
  if (node["code"]) e.error_code = Code(node["code"], absl::StrCat(path, ".code"));
  if (node["chain"]) e.chain = String(node["chain"], absl::StrCat(path, ".chain"));
  if (node["nodesAbsent"]) {
    if (auto l = StringList(node["nodesAbsent"], absl::StrCat(path, ".nodesAbsent"), true)) {
      e.nodes_absent = *l;
    }
  }
  if (node["nodesWithin"]) {
    e.nodes_within = StringList(node["nodesWithin"], absl::StrCat(path, ".nodesWithin"), true);
  }
  if (errors_.size() != errors_before) return std::nullopt;
  return e;
}

std::optional<ScenarioAction> ScenarioParser::Step(const YAML::Node& node,
                                                   const std::string& path) {
  if (!IsMap(node, path)) return std::nullopt;
  static const std::vector<std::string> kActions = {
      "schedule",       "allocate",    "release",
      "cancel",         "unreserve",   "setNodeBad",
      "setNodeHealthy", "expectGroup", "expectVirtualCells",
      "expectCapacity", "expectNode",  "expectUsage",
      "restart"};
  std::string action;
  int actions = 0;
  for (const std::string& a : kActions) {
    if (!node[a]) continue;
    // `allocate` is a modifier of `schedule` and an action of its own otherwise.
    if (a == "allocate" && node["schedule"]) continue;
    if (actions == 0) action = a;
    ++actions;
  }
  if (actions != 1) {
    Error(node, path,
          actions == 0
              ? absl::StrCat("a step needs one action key: ", absl::StrJoin(kActions, ", "))
              : "a step has more than one action key");
    return std::nullopt;
  }
  const YAML::Node body = node[action];
  const std::string p = absl::StrCat(path, ".", action);
  const std::size_t errors_before = errors_.size();
  auto expect_error = [&]() -> std::optional<ExpectedError> {
    if (!node["expectError"]) return std::nullopt;
    return ErrorExpectation(node["expectError"], absl::StrCat(path, ".expectError"));
  };
  auto group_name = [&]() -> std::string {
    std::optional<std::string> s = String(body, p);
    return s ? *s : std::string();
  };

  if (action == "schedule") {
    CheckKeys(node, path, {"schedule", "expect", "allocate", "expectDowngraded"});
    ScheduleStep step;
    std::optional<GroupRequest> req = Request(body, p, &step.phase);
    if (req) step.request = std::move(*req);
    if (node["expect"]) {
      if (auto e = Expectation(node["expect"], absl::StrCat(path, ".expect"))) step.expect = *e;
    }
    if (node["allocate"]) {
      if (auto b = Bool(node["allocate"], absl::StrCat(path, ".allocate"))) step.allocate = *b;
    }
    if (node["expectDowngraded"]) {
      step.expect_downgraded =
          Bool(node["expectDowngraded"], absl::StrCat(path, ".expectDowngraded"));
    }
    if (errors_.size() != errors_before) return std::nullopt;
    return ScenarioAction(std::move(step));
  }
  if (action == "allocate") {
    CheckKeys(node, path, {"allocate", "expectError", "expectDowngraded"});
    AllocateStep step;
    if (body.IsMap()) {
      CheckKeys(body, p, {"group", "chain", "placement", "recover"});
      if (!body["group"]) {
        Error(body, p, "missing key 'group'");
      } else if (auto s = String(body["group"], absl::StrCat(p, ".group"))) {
        step.group = *s;
      }
      if (body["chain"]) {
        if (auto s = String(body["chain"], absl::StrCat(p, ".chain"))) step.chain = *s;
      }
      if (body["placement"])
        step.placement = Pods(body["placement"], absl::StrCat(p, ".placement"));
      if (body["recover"]) {
        if (auto b = Bool(body["recover"], absl::StrCat(p, ".recover"))) step.recover = *b;
      }
    } else {
      step.group = group_name();
    }
    step.expect_error = expect_error();
    if (node["expectDowngraded"]) {
      step.expect_downgraded =
          Bool(node["expectDowngraded"], absl::StrCat(path, ".expectDowngraded"));
    }
    if (errors_.size() != errors_before) return std::nullopt;
    return ScenarioAction(std::move(step));
  }
  if (action == "release" || action == "cancel" || action == "unreserve") {
    CheckKeys(node, path, {action, "expectError"});
    std::string group = group_name();
    std::optional<ExpectedError> err = expect_error();
    if (errors_.size() != errors_before) return std::nullopt;
    if (action == "release") return ScenarioAction(ReleaseStep{group, err});
    return ScenarioAction(CancelStep{group, err, action == "unreserve"});
  }
  if (action == "setNodeBad" || action == "setNodeHealthy") {
    CheckKeys(node, path, {action, "expectError"});
    NodeHealthStep step;
    step.node = group_name();
    step.healthy = action == "setNodeHealthy";
    step.expect_error = expect_error();
    if (errors_.size() != errors_before) return std::nullopt;
    return ScenarioAction(std::move(step));
  }
  CheckKeys(node, path, {action});
  if (action == "restart") {
    RestartStep step;
    if (!body.IsNull()) {
      if (!IsMap(body, p)) return std::nullopt;
      CheckKeys(body, p, {"config", "downgraded"});
      if (body["config"]) {
        if (auto s = String(body["config"], absl::StrCat(p, ".config"))) {
          step.config = *s;
          step.config_file = Resolve(*s);
        }
      }
      if (body["downgraded"]) {
        step.downgraded = StringList(body["downgraded"], absl::StrCat(p, ".downgraded"), true);
      }
    }
    if (errors_.size() != errors_before) return std::nullopt;
    return ScenarioAction(std::move(step));
  }
  if (!IsMap(body, p)) return std::nullopt;
  auto req_str = [&](const char* key, std::string* out) {
    if (!body[key]) {
      Error(body, p, absl::StrCat("missing key '", key, "'"));
    } else if (auto s = String(body[key], absl::StrCat(p, ".", key))) {
      *out = *s;
    }
  };
  auto opt_int = [&](const char* key, std::optional<int32_t>* out) {
    if (body[key]) *out = Int32(body[key], absl::StrCat(p, ".", key), 0);
  };
  if (action == "expectGroup") {
    CheckKeys(body, p, {"group", "state", "priority", "preemptor", "downgradeReason", "placement"});
    ExpectGroupStep step;
    req_str("group", &step.group);
    if (body["state"]) {
      if (auto s = String(body["state"], absl::StrCat(p, ".state"))) {
        static const std::pair<const char*, GroupState> kStates[] = {
            {"absent", GroupState::kAbsent},
            {"allocated", GroupState::kAllocated},
            {"opportunistic", GroupState::kOpportunistic},
            {"preempting", GroupState::kPreempting},
            {"being-preempted", GroupState::kBeingPreempted},
            {"reserved", GroupState::kReserved}};
        for (const auto& [name, state] : kStates) {
          if (*s == name) step.state = state;
        }
        if (!step.state) {
          Error(body["state"], absl::StrCat(p, ".state"),
                absl::StrCat("unknown state '", *s,
                             "' (expected allocated, opportunistic, preempting, "
                             "being-preempted, reserved or absent)"));
        }
      }
    }
    if (body["priority"]) step.priority = Int32(body["priority"], absl::StrCat(p, ".priority"));
    if (body["preemptor"])
      step.preemptor = String(body["preemptor"], absl::StrCat(p, ".preemptor"));
    if (body["downgradeReason"]) {
      step.downgrade_reason = String(body["downgradeReason"], absl::StrCat(p, ".downgradeReason"));
    }
    if (body["placement"]) step.placement = Pods(body["placement"], absl::StrCat(p, ".placement"));
    if (errors_.size() != errors_before) return std::nullopt;
    return ScenarioAction(std::move(step));
  }
  if (action == "expectVirtualCells") {
    CheckKeys(body, p, {"vc", "cellType", "healthy", "bad", "bound"});
    ExpectVirtualCellsStep step;
    req_str("vc", &step.vc);
    req_str("cellType", &step.cell_type);
    opt_int("healthy", &step.healthy);
    opt_int("bad", &step.bad);
    opt_int("bound", &step.bound);
    if (errors_.size() != errors_before) return std::nullopt;
    return ScenarioAction(std::move(step));
  }
  if (action == "expectCapacity") {
    CheckKeys(body, p,
              {"chain", "level", "cellType", "free", "obtainable", "badFree", "vcUnbound"});
    ExpectCapacityStep step;
    req_str("chain", &step.chain);
    if (body["level"]) {
      step.level = Int32(body["level"], absl::StrCat(p, ".level"), 1);
    } else {
      req_str("cellType", &step.cell_type);
    }
    opt_int("free", &step.free);
    opt_int("obtainable", &step.obtainable);
    opt_int("badFree", &step.bad_free);
    opt_int("vcUnbound", &step.vc_unbound);
    if (errors_.size() != errors_before) return std::nullopt;
    return ScenarioAction(std::move(step));
  }
  if (action == "expectNode") {
    CheckKeys(body, p, {"node", "freeLeafCells", "healthy"});
    ExpectNodeStep step;
    req_str("node", &step.node);
    opt_int("freeLeafCells", &step.free_leaf_cells);
    if (body["healthy"]) step.healthy = Bool(body["healthy"], absl::StrCat(p, ".healthy"));
    if (errors_.size() != errors_before) return std::nullopt;
    return ScenarioAction(std::move(step));
  }
  // expectUsage
  CheckKeys(body, p, {"vc", "leafCellType", "guaranteed", "opportunistic"});
  ExpectUsageStep step;
  req_str("vc", &step.vc);
  req_str("leafCellType", &step.leaf_cell_type);
  opt_int("guaranteed", &step.guaranteed);
  opt_int("opportunistic", &step.opportunistic);
  if (errors_.size() != errors_before) return std::nullopt;
  return ScenarioAction(std::move(step));
}

}  // namespace hived::sim::scenario_internal

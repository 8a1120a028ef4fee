// hived-sim policies: the policy registry (sim/policies/policy_registry.h) as text or as the
// Markdown table the docs hold, so that table is generated, never written by hand.
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "sim/cli/commands.h"
#include "sim/common/csv.h"
#include "sim/common/flags.h"
#include "sim/policies/policy_registry.h"

namespace hived::sim {
namespace {

// The `run` flags a job policy takes, "`--placement`, `--reclaim-after`" or "–".
std::string OptionFlags(const PolicyInfo& p) {
  std::string out;
  for (const auto& [option, flag] : {std::pair{kPolicyTakesPlacement, "--placement"},
                                     std::pair{kPolicyTakesReclaimAfter, "--reclaim-after"},
                                     std::pair{kPolicyTakesMaxCapacity, "--max-capacity"}}) {
    if (p.Takes(option)) absl::StrAppend(&out, out.empty() ? "" : ", ", "`", flag, "`");
  }
  return out.empty() ? "–" : out;
}

}  // namespace

std::string PolicyMarkdown() {
  std::string out =
      "| policy | commands | description | options |\n"
      "|---|---|---|---|\n";
  // A policy serving both models has a row per model: the descriptions differ.
  for (const auto& [model, commands] :
       {std::pair{PolicyModel::kJobs, "run, sweep, plan"},
        std::pair{PolicyModel::kPods, "fill, openb-replay, run --format openb"}}) {
    for (const PolicyInfo& p : Policies()) {
      if (!p.Serves(model)) continue;
      absl::StrAppend(&out, "| `", Av(p.name), "` | ", commands, " | ", Av(p.Description(model)),
                      " | ", model == PolicyModel::kJobs ? OptionFlags(p) : "–", " |\n");
    }
  }
  return out;
}

int PoliciesCommand(int argc, char** argv) {
  bool markdown = false;
  FlagParser p("hived-sim policies", "[--markdown]",
               "Lists every policy of the registry (sim/policies/policy_registry.h): the sharing\n"
               "policies of job replays (run, sweep, plan) and the placement policies of the\n"
               "fill model (fill, openb-replay, run --format openb).");
  p.Bool("markdown", &markdown, "print the docs' Markdown table instead");
  std::vector<std::string> rest;
  if (int code = p.Parse(argc, argv, &rest); code >= 0) return code;
  if (!rest.empty()) return p.UsageError(absl::StrCat("unexpected argument '", rest[0], "'"));
  const std::string text =
      markdown ? PolicyMarkdown()
               : absl::StrCat("sharing policies (run, sweep, plan; --policy):\n",
                              PolicyTable(PolicyModel::kJobs),
                              "\n\nplacement policies of the fill model (fill, openb-replay, "
                              "run --format openb; --policy):\n",
                              PolicyTable(PolicyModel::kPods), "\n");
  std::fputs(text.c_str(), stdout);
  return kExitOk;
}

}  // namespace hived::sim

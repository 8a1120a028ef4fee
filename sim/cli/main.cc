// hived-sim: validate cluster configs, run scenarios, replay job traces.
#include <cstdio>
#include <cstring>
#include <string>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "absl/strings/str_cat.h"
#include "hived/version.h"
#include "sim/cli/commands.h"
#include "sim/cli/validate_command.h"
#include "sim/planning/planning_commands.h"
#include "sim/policies/policy_registry.h"
#include "sim/scenario/scenario_runner.h"
#include "sim/trace/openb_config.h"

namespace {

// The policy names come from the registry (sim/policies/policy_registry.h).
std::string Usage() {
  return absl::StrCat(
      "usage: hived-sim <command> [options]\n"
      "\n"
      "commands:\n"
      "  version                 print the version\n"
      "  run                     replay a job trace under a sharing policy (",
      hived::sim::JobPolicyNames(", "),
      ")\n"
      "  policies                every policy with its description (--markdown: the docs' table)\n"
      "  gen-trace               write a synthetic, Philly-shaped trace for a config\n"
      "  gen-cluster             write a generated cluster config (scale tests)\n"
      "  compare A B             two run summaries side by side, with the anomaly per VC\n"
      "                          (--label L RUN... or SWEEP.csv: N runs, with charts)\n"
      "  sweep                   a grid of replays in parallel (or --shard I/N); tidy CSV\n"
      "  merge SHARD_DIR...      combine sweep shards into the unsharded result\n"
      "  plan                    smallest VC reservation meeting a target, e.g. p95_wait<=1h\n"
      "  plot RUN...             charts comparing runs (anomaly, delay, utilisation)\n"
      "  validate CONFIG         check a cluster config; print its capacity table\n"
      "  scenario FILE...        run scenario files (what-if tests) against the scheduler\n"
      "  fill                    the FGD fill experiment on the openb GPU-sharing trace\n"
      "  openb-config            write a HiveD config for an openb node list\n"
      "  openb-replay            run --format openb: replay an openb pod list in time\n"
      "\n"
      "Run 'hived-sim <command> --help' for a command's options.\n");
}

}  // namespace

int main(int argc, char** argv) {
#if defined(__GLIBC__)
  // A fixed mmap threshold: blocks of 128 KiB and more are mapped, and unmapped when freed.
  // By default glibc raises the threshold (up to 32 MiB) at the first such free, and later
  // big blocks then come from the heap, where freed ones (a trace's text, a finished run's
  // tables) stay resident. The simulator allocates its big arrays once, so mapping them
  // costs no extra churn: the 1M-job replay peaks ~9 MB lower, Philly with its private
  // baseline ~5 MB lower, at the same speed (docs: README, "Performance").
  mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    std::fputs(Usage().c_str(), argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  if (command == "version" || command == "--version") {
    std::printf("hived-sim %s\n", hived::VersionString());
    return 0;
  }
  if (command == "scenario") return hived::sim::ScenarioCommand(argc - 1, argv + 1);
  if (command == "validate") return hived::sim::ValidateCommand(argc - 1, argv + 1);
  if (command == "run") return hived::sim::RunCommand(argc - 1, argv + 1);
  if (command == "policies") return hived::sim::PoliciesCommand(argc - 1, argv + 1);
  if (command == "gen-trace") return hived::sim::GenTraceCommand(argc - 1, argv + 1);
  if (command == "gen-cluster") return hived::sim::GenClusterCommand(argc - 1, argv + 1);
  if (command == "compare") return hived::sim::CompareCommand(argc - 1, argv + 1);
  if (command == "fill") return hived::sim::FillCommand(argc - 1, argv + 1);
  if (command == "openb-replay") return hived::sim::OpenbReplayCommand(argc - 1, argv + 1);
  if (command == "openb-config") return hived::sim::OpenbConfigCommand(argc - 1, argv + 1);
  if (command == "sweep") return hived::sim::SweepCommand(argc - 1, argv + 1);
  if (command == "merge") return hived::sim::MergeCommand(argc - 1, argv + 1);
  if (command == "plan") return hived::sim::PlanCommand(argc - 1, argv + 1);
  if (command == "plot") return hived::sim::PlotCommand(argc - 1, argv + 1);
  std::fprintf(stderr, "hived-sim: unknown command '%s'\n\n%s", command.c_str(), Usage().c_str());
  return 2;
}

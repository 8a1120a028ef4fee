// sim/cli/commands.h: hived-sim's trace-replay subcommands. Each takes the arguments after
// `hived-sim` (argv[0] is the subcommand name) and returns the exit code: 0 ok; 1 run
// failed, accounting mismatch or bad input; 2 bad command line.
#ifndef HIVED_SIM_CLI_COMMANDS_H_
#define HIVED_SIM_CLI_COMMANDS_H_

#include <string>

namespace hived::sim {

int RunCommand(int argc, char** argv);          // hived-sim run (job traces, --format openb)
int OpenbReplayCommand(int argc, char** argv);  // hived-sim openb-replay: run --format openb
int GenTraceCommand(int argc, char** argv);     // hived-sim gen-trace
int GenClusterCommand(int argc, char** argv);   // hived-sim gen-cluster
int CompareCommand(int argc, char** argv);      // hived-sim compare A B
int PlotCommand(int argc, char** argv);         // hived-sim plot DIR...
int PoliciesCommand(int argc, char** argv);     // hived-sim policies [--markdown]

// The policy registry as the docs' Markdown table: one row per policy (job policies, then
// the fill model's), with the commands that take it, its description and its options.
std::string PolicyMarkdown();

}  // namespace hived::sim

#endif  // HIVED_SIM_CLI_COMMANDS_H_

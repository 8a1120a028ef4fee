// sim/planning/planning_commands.h: hived-sim's capacity-planning subcommands (issue 11). Each
// takes the arguments after `hived-sim` (argv[0] is the subcommand name) and returns the
// exit code: 0 ok; 1 bad input, a failed run or no size meeting the target; 2 bad command
// line. The reference is docs/planning.md.
#ifndef HIVED_SIM_PLANNING_PLANNING_COMMANDS_H_
#define HIVED_SIM_PLANNING_PLANNING_COMMANDS_H_

namespace hived::sim {

int SweepCommand(int argc, char** argv);  // hived-sim sweep
int MergeCommand(int argc, char** argv);  // hived-sim merge SHARD_DIR...
int PlanCommand(int argc, char** argv);   // hived-sim plan

// `compare` with labels, more or fewer than two runs, or a sweep CSV.
bool WantsMultiCompare(int argc, char** argv);
int CompareMultiCommand(int argc, char** argv);

}  // namespace hived::sim

#endif  // HIVED_SIM_PLANNING_PLANNING_COMMANDS_H_

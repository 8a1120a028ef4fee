// sim/cli/validate_command.h: `hived-sim validate CONFIG [--json]`.
//
// Loads a HiveD cluster config strictly and prints either every error, located
// (`file:line:col: path: message (hint)`, one per line), or the per-chain, per-level capacity
// table: physical cells, cells available after higher-level reservations, each VC's reserved
// cells, the total and the slack. `--json` prints the same as one JSON document on stdout.
//
// Exit status: 0 when the config is valid, 1 when it is not (or cannot be read), 2 on a
// usage error.
#ifndef HIVED_SIM_CLI_VALIDATE_COMMAND_H_
#define HIVED_SIM_CLI_VALIDATE_COMMAND_H_

namespace hived::sim {

// `argv[0]` is "validate".
int ValidateCommand(int argc, char** argv);

}  // namespace hived::sim

#endif  // HIVED_SIM_CLI_VALIDATE_COMMAND_H_

// sim/cli/run_openb.h: the openb format of `hived-sim run` (and of its alias `openb-replay`):
// the flags only that format takes, which of run's flags each format takes, and the replay of
// an openb node and pod list (sim/openb/openb_replay.h) from run's parsed flags, written by
// run's output path (sim/common/output_dir.h).
//
// Example (in RunCommand, after FlagParser::Parse):
//   if (std::string f = FlagNotTaken(parser, openb); !f.empty()) return parser.UsageError(...);
//   if (openb) return RunOpenbReplay(parser, "hived-sim run", args);
//
// Thread safety: stateless functions.
#ifndef HIVED_SIM_CLI_RUN_OPENB_H_
#define HIVED_SIM_CLI_RUN_OPENB_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "sim/common/flags.h"
#include "sim/engine/sharing_model.h"

namespace hived::sim {

// The flags only the openb format takes.
struct OpenbRunFlags {
  std::string nodes_path;
  std::string pods_path;
  int64_t sample_seconds = 3600;  // the timeline's step
  SharingParams sharing_params;
};
// Registers --nodes, --pods, --sample-seconds and the sharing models' parameters (--quantum,
// --switch-cost, --uvm-slowdown, --mps-interference, --tgs-production-slowdown).
void AddOpenbRunFlags(FlagParser* parser, OpenbRunFlags* flags);

// The first flag the last `parser.Parse` saw that the format does not take, as "--name", or
// "" when there is none. The openb format takes the flags of AddOpenbRunFlags and the ones
// both formats share (--format, --policy, --seed, --sharing, --out, --skip-bad-rows,
// --quiet); the job formats (hived, philly) take every other flag of run.
std::string FlagNotTaken(const FlagParser& parser, bool openb);

// The values of run's flags the openb format reads.
struct OpenbRunArgs {
  OpenbRunFlags flags;
  std::string policy;   // a fill policy of the registry
  std::string sharing;  // a sharing mode; when --sharing was not given, `ideal`
  std::string out_dir;
  int64_t seed = 42;  // the `random` policy's; when --seed was not given, 42
  bool skip_bad_rows = false;
};

// Checks the arguments (usage errors through `parser`, naming the flag), opens the output
// folder, reads the node and pod lists, replays them and writes DIR/summary.json,
// DIR/timeline.csv and DIR/pods.csv; prints the one-line summary on stdout. Returns the exit
// code (kExitUsage, kExitFailed with "<command>: <message>" on stderr, or kExitOk).
int RunOpenbReplay(const FlagParser& parser, std::string_view command, OpenbRunArgs args);

}  // namespace hived::sim

#endif  // HIVED_SIM_CLI_RUN_OPENB_H_

// sim/planning/sweep_runner.h: runs simulations as child processes of the hived-sim binary, a few
// at a time, for `sweep` and `plan`.
//
// Each child is `hived-sim <args...>` with its working directory unchanged and its stdout
// and stderr going to `<dir>/log.txt`. Children share nothing, so results do not depend on
// how many run at once or in which order they finish. The first child that fails stops
// the launching of new ones; those running are waited for; the error names the failed run,
// its exit code, the tail of its log and the log's path. A progress bar ("label 12/64")
// is drawn on stderr when it is a terminal.
//
// Example:
//   std::vector<ChildRun> runs = {{{"run", "--config", "c.yaml", ...}, "out/runs/00000", "r0"}};
//   absl::Status s = RunChildren(SelfExe(), runs, /*jobs=*/2, "sweep");
//
// Thread safety: call from one thread; it forks.
#ifndef HIVED_SIM_PLANNING_SWEEP_RUNNER_H_
#define HIVED_SIM_PLANNING_SWEEP_RUNNER_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace hived::sim {

struct ChildRun {
  std::vector<std::string> args;  // after the program name, e.g. {"run", "--config", ...}
  std::string dir;                // created if missing; holds log.txt
  std::string label;              // for errors, e.g. "run 12 (policy=quota seed=2)"
};

// The path of the running executable (/proc/self/exe), for running more of itself.
std::string SelfExe();

// The default for --jobs: the number of cores (at least 1).
int DefaultJobs();

// Runs every child, at most `jobs` at once; `on_success(i)` (may be empty) is called as
// child i exits with 0, and its error fails the whole like a failed child. Errors: kInternal
// when a child cannot be started; kAborted naming the first child that exited non-zero (or
// died of a signal).
absl::Status RunChildren(const std::string& exe, const std::vector<ChildRun>& runs, int jobs,
                         const std::string& progress_label,
                         const std::function<absl::Status(size_t)>& on_success = {});

// Writes DIR/NAME.dat and DIR/NAME.gp, then runs gnuplot on the script inside DIR (the
// script names its PNG). Errors: kFailedPrecondition without gnuplot; kInternal when a file
// cannot be written or gnuplot fails (its messages are kept in DIR/NAME.log).
absl::Status RenderGnuplot(const std::string& dir, const std::string& name, const std::string& data,
                           const std::string& script);

// A string as a gnuplot double-quoted literal (double quotes become single quotes).
std::string GnuplotQuote(const std::string& s);

// Writes `text` to `path` through a temporary file and a rename, so readers see the whole
// file or none. kInternal when it cannot be written.
absl::Status WriteFileAtomically(const std::string& path, const std::string& text);

}  // namespace hived::sim

#endif  // HIVED_SIM_PLANNING_SWEEP_RUNNER_H_

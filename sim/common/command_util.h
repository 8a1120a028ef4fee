// sim/common/command_util.h: small helpers shared by hived-sim's subcommands (sim/cli/commands.cc,
// sim/cli/run_command.cc): failing with the command's name, writing a text file, and the
// --max-input-mb flag.
//
// Thread safety: stateless functions.
#ifndef HIVED_SIM_COMMON_COMMAND_UTIL_H_
#define HIVED_SIM_COMMON_COMMAND_UTIL_H_

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "sim/common/csv.h"
#include "sim/common/flags.h"

namespace hived::sim {

// Prints "COMMAND: MESSAGE" on stderr; returns kExitFailed.
inline int Fail(std::string_view command, absl::string_view message) {
  std::fprintf(stderr, "%.*s: %.*s\n", static_cast<int>(command.size()), command.data(),
               static_cast<int>(message.size()), message.data());
  return kExitFailed;
}

// Writes `text` to `path` (binary). kInternal when it cannot.
inline absl::Status WriteTextFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path.string()));
  return absl::OkStatus();
}

// The --max-input-mb help text, naming each reader's default.
inline std::string MaxInputHelp() {
  return absl::StrCat("largest input file, MB (default: trace ", kDefaultMaxTraceBytes / kMiB,
                      ", node events ", kDefaultMaxNodeEventsBytes / kMiB, ", summary ",
                      kDefaultMaxSummaryBytes / kMiB, ")");
}

// --max-input-mb (0 = the reader's default) in bytes.
inline int64_t MaxInputBytes(int64_t max_input_mb, int64_t default_bytes) {
  return max_input_mb > 0 ? max_input_mb * kMiB : default_bytes;
}

// The ranges of run's numeric flags (README "Limits"), also checked by compare and plot for
// --max-input-mb; an error message or "". Defined in sim/cli/run_options.cc.
std::string CheckRunLimits(double mtbf, double mttr, int64_t timeline_interval, int64_t horizon,
                           int64_t max_input_mb);

}  // namespace hived::sim

#endif  // HIVED_SIM_COMMON_COMMAND_UTIL_H_

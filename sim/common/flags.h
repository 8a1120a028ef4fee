// sim/common/flags.h: hand-written flag parsing for hived-sim's subcommands (each has its own
// flags, so global absl flags do not fit). Accepts `--name=value` and `--name value`;
// boolean flags take no value (`--name`, or `--name=true|false`); `--help`/`-h` prints the
// usage. Everything else is positional.
//
// Example:
//   FlagParser p("hived-sim run", "Replays a trace.");
//   std::string config;
//   p.String("config", &config, "PATH", "cluster config");
//   std::vector<std::string> args;
//   if (int code = p.Parse(argc, argv, &args); code >= 0) return code;
//
// Thread safety: not thread-safe.
#ifndef HIVED_SIM_COMMON_FLAGS_H_
#define HIVED_SIM_COMMON_FLAGS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/string_view.h"

namespace hived::sim {

// Exit codes of every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;  // run failed, accounting mismatch, bad input
inline constexpr int kExitUsage = 2;   // bad command line

class FlagParser {
 public:
  FlagParser(std::string command, std::string synopsis, std::string description);
  void String(std::string name, std::string* out, std::string value_name, std::string help);
  void Int(std::string name, int64_t* out, std::string help);
  void Double(std::string name, double* out, std::string help);
  void Bool(std::string name, bool* out, std::string help);
  // Parses argv[1..argc) (argv[0] is the subcommand). Returns -1 to go on, kExitOk after
  // printing --help to stdout, kExitUsage after printing an error and the usage to stderr.
  int Parse(int argc, char** argv, std::vector<std::string>* positional);
  std::string Usage() const;
  // Whether the last Parse saw `--name` on the command line (with any value), for commands
  // whose options depend on another option's value.
  bool Given(std::string_view name) const;
  // The names of the flags the last Parse saw, in command-line order (repeats kept).
  const std::vector<std::string>& given() const { return given_; }
  // Prints "<command>: <message>" and the usage hint to stderr; returns kExitUsage.
  int UsageError(std::string_view message) const;
  int UsageError(absl::string_view message) const {
    return UsageError(std::string_view(message.data(), message.size()));
  }
  int UsageError(const std::string& message) const { return UsageError(std::string_view(message)); }
  int UsageError(const char* message) const { return UsageError(std::string_view(message)); }

 private:
  enum class Kind { kString, kInt, kDouble, kBool };
  struct Flag {
    std::string name;
    Kind kind;
    void* out;
    std::string value_name;
    std::string help;
  };
  bool Set(const Flag& flag, std::string_view value, std::string* error);
  std::string command_;
  std::string synopsis_;
  std::string description_;
  std::vector<Flag> flags_;
  std::vector<std::string> given_;  // names seen by Parse, in order
};

}  // namespace hived::sim

#endif  // HIVED_SIM_COMMON_FLAGS_H_

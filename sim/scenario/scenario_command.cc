// `hived-sim scenario`: runs scenario files and reports a diff for each failure.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "sim/scenario/scenario_runner.h"

namespace hived::sim {
namespace {

constexpr char kScenarioUsage[] =
    "usage: hived-sim scenario FILE... [--json] [--skip-missing-config] [--max-input-bytes N]\n"
    "\n"
    "Runs scenario files (YAML; see the README, \"Scenario files\") against the scheduler.\n"
    "Each file names a cluster config (relative to the file) and steps with expectations.\n"
    "\n"
    "  --json                 print every step's result as JSON on stdout (one object per\n"
    "                         file, in a list); failures still go to stderr\n"
    "  --skip-missing-config  skip (exit 77) a scenario whose config file does not exist\n"
    "  --max-input-bytes N    refuse a scenario file larger than N bytes (default 16 MiB;\n"
    "                         checked while reading)\n"
    "\n"
    "exit: 0 all passed, 1 an expectation failed, 2 usage or file errors, 77 all skipped\n";

}  // namespace

int ScenarioCommand(int argc, char** argv) {
  ScenarioRunOptions options;
  bool json = false;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kScenarioUsage, stdout);
      return 0;
    }
    if (arg == "--json") {
      json = true;
    } else if (arg == "--skip-missing-config") {
      options.skip_missing_config = true;
    } else if (arg == "--max-input-bytes") {
      int64_t bytes = 0;
      if (i + 1 >= argc || !absl::SimpleAtoi(argv[i + 1], &bytes) || bytes <= 0) {
        std::fprintf(stderr, "hived-sim scenario: --max-input-bytes needs a positive integer\n");
        return 2;
      }
      options.limits.max_input_bytes = bytes;
      ++i;
    } else if (arg.size() > 1 && arg[0] == '-') {
      std::fprintf(stderr, "hived-sim scenario: unknown option '%s'\n\n%s", arg.c_str(),
                   kScenarioUsage);
      return 2;
    } else {
      files.push_back(arg);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "hived-sim scenario: no scenario file given\n\n%s", kScenarioUsage);
    return 2;
  }
  int passed = 0;
  int failed = 0;
  int errors = 0;
  int skipped = 0;
  std::vector<std::string> json_reports;
  for (const std::string& file : files) {
    const ScenarioReport report = RunScenarioFile(file, options);
    switch (report.status) {
      case ScenarioStatus::kPassed:
        ++passed;
        break;
      case ScenarioStatus::kFailed:
        ++failed;
        break;
      case ScenarioStatus::kFileError:
        ++errors;
        break;
      case ScenarioStatus::kSkipped:
        ++skipped;
        break;
    }
    if (json) {
      json_reports.push_back(ScenarioReportToJson(report));
      if (report.status != ScenarioStatus::kPassed) std::cerr << report.text;
    } else {
      (report.status == ScenarioStatus::kPassed ? std::cout : std::cerr) << report.text;
    }
  }
  if (json) {
    std::cout << "[" << absl::StrJoin(json_reports, ",\n") << "]\n";
  } else if (files.size() > 1) {
    std::cout << passed << " passed, " << failed << " failed, " << errors << " errors, " << skipped
              << " skipped\n";
  }
  if (errors > 0) return 2;
  if (failed > 0) return 1;
  if (skipped > 0 && passed == 0) return 77;
  return 0;
}

}  // namespace hived::sim

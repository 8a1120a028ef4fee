// Helpers of the capacity-planning tests: a fresh temporary folder, and running the
// hived-sim binary (HIVED_SIM_EXE) with its output captured.
#ifndef HIVED_TESTS_UNIT_SIM_PLANNING_TEST_UTIL_H_
#define HIVED_TESTS_UNIT_SIM_PLANNING_TEST_UTIL_H_

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "support/catch.h"

namespace hived::sim::testing {

// A new empty folder under the system temp folder, removed by the destructor.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() /
              ("hived-" + name + "-" + std::to_string(getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct SimResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

#ifdef HIVED_SIM_EXE
// The SOURCE_DATE_EPOCH of RunSim's children: plan's sized.yaml then has a fixed date
// (2026-12-05T00:00:00Z), so reruns compare byte for byte.
inline constexpr const char* kTestSourceDateEpoch = "1796428800";

// Runs `hived-sim ARGS` from the source folder (arguments are passed to the shell as is), with
// `env` (`env` arguments; default SOURCE_DATE_EPOCH=kTestSourceDateEpoch).
inline SimResult RunSim(const std::string& args, const std::string& log,
                        const std::string& env = std::string("SOURCE_DATE_EPOCH=") +
                                                 kTestSourceDateEpoch) {
  const std::string cmd = std::string("cd '") + HIVED_SOURCE_DIR + "' && env " + env + " '" +
                          HIVED_SIM_EXE + "' " + args + " >'" + log + "' 2>&1";
  const int status = std::system(cmd.c_str());
  SimResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.output = ReadAll(log);
  return r;
}
#endif

}  // namespace hived::sim::testing

#endif  // HIVED_TESTS_UNIT_SIM_PLANNING_TEST_UTIL_H_

// Helpers for the hostile-input tests: scratch folders and files, and running a subcommand
// in-process with an argument list.
#ifndef HIVED_TESTS_UNIT_SIM_HOSTILE_TEST_UTIL_H_
#define HIVED_TESTS_UNIT_SIM_HOSTILE_TEST_UTIL_H_

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"

namespace hived::sim::testing {

// A fresh folder under the system's temporary folder, removed with everything in it at the
// end of the test.
class ScratchDir {
 public:
  explicit ScratchDir(std::string_view tag) {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() / absl::StrCat("hived-", std::string(tag), "-",
                                                                  static_cast<int64_t>(getpid()),
                                                                  "-", counter++);
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(std::string_view name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline void WriteFile(const std::string& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary);
  out.write(text.data(), static_cast<std::streamsize>(text.size()));
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Calls `command(argc, argv)` with argv = {name, args...}.
template <typename Command>
int RunArgs(Command command, std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  return command(static_cast<int>(args.size()), argv.data());
}

}  // namespace hived::sim::testing

#endif  // HIVED_TESTS_UNIT_SIM_HOSTILE_TEST_UTIL_H_

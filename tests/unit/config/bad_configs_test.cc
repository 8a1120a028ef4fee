// Every file in tests/testdata/bad-configs/ is a broken config; each line that carries a
// `# EXPECT: <text>` comment is where an error must be reported, with <text> in its message.
// The config must produce exactly those errors: no crash, no missing and no extra error.
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "hived/config.h"
#include "support/catch.h"
#include "unit/config/config_test_util.h"

namespace hived {
namespace {

struct Expectation {
  int32_t line = 0;
  std::string text;
};

std::vector<Expectation> ReadExpectations(const std::string& yaml) {
  std::vector<Expectation> out;
  std::istringstream in(yaml);
  std::string line;
  int32_t number = 0;
  const std::string marker = "# EXPECT: ";
  while (std::getline(in, line)) {
    ++number;
    const size_t at = line.find(marker);
    if (at != std::string::npos) out.push_back({number, line.substr(at + marker.size())});
  }
  return out;
}

TEST_CASE("LoadClusterSpecDetailed: each bad config reports its located errors", "[config][unit]") {
  const auto files = testing::YamlFiles(std::filesystem::path(HIVED_SOURCE_DIR) / "tests" /
                                        "testdata" / "bad-configs");
  REQUIRE(files.size() >= 30);
  for (const auto& path : files) {
    CAPTURE(path.filename().string());
    const std::string yaml = testing::ReadFile(path);
    const std::vector<Expectation> expected = ReadExpectations(yaml);
    REQUIRE(!expected.empty());
    const ConfigLoadResult result = LoadClusterSpecDetailed(yaml, path.filename().string());
    std::string all;
    for (const ConfigError& error : result.errors) all += error.ToString() + "\n";
    INFO(all);
    CHECK_FALSE(result.ok());
    CHECK(result.errors.size() == expected.size());
    for (const Expectation& e : expected) {
      CAPTURE(e.line, e.text);
      bool found = false;
      for (const ConfigError& error : result.errors) {
        found =
            found || (error.line == e.line && error.ToString().find(e.text) != std::string::npos);
      }
      CHECK(found);
    }
    for (const ConfigError& error : result.errors) {
      CHECK(error.file == path.filename().string());
      CHECK(error.line >= 1);
      CHECK(error.column >= 1);
    }
    // The file API reports the same, as one InvalidArgument status.
    const absl::StatusOr<ClusterSpec> status = LoadClusterSpecFile(path.string());
    CHECK(status.status().code() == absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace hived

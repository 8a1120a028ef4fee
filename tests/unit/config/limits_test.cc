// Hostile inputs to the config loader (issue 14): every limit is checked while reading, every
// YAML node counts, errors are capped. (The public names of the API's enums are tested in
// tests/api/names_test.cc.)
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hived/config.h"
#include "support/catch.h"

namespace hived {
namespace {

constexpr char kValidHead[] = R"(physicalCluster:
  cellTypes:
    K80-NODE: {childCellType: K80, childCellNumber: 4, isNodeLevel: true}
  physicalCells:
  - cellType: K80-NODE
    cellAddress: node-a
virtualClusters:
  VC1:
    virtualCells: [{cellType: K80-NODE, cellNumber: 1}]
)";

std::string Joined(const ConfigLoadResult& result) {
  std::string all;
  for (const ConfigError& error : result.errors) all += error.ToString() + "\n";
  return all;
}

TEST_CASE("LoadClusterSpecFile: /dev/zero fails fast at the size limit", "[config][unit]") {
  ConfigLimits limits;
  limits.max_input_bytes = 1 << 20;
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecFile("/dev/zero", limits);
  REQUIRE_FALSE(spec.ok());
  CHECK(spec.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(spec.status().message()) ==
        "/dev/zero:1:1: the config file is larger than 1048576 bytes (raise the limit if this "
        "input is expected)");
}

TEST_CASE("LoadClusterSpecFile: a file within the size limit loads", "[config][unit]") {
  const std::string path = absl::StrCat(HIVED_SOURCE_DIR, "/config/examples/two-racks.yaml");
  ConfigLimits limits;
  CHECK(LoadClusterSpecFile(path, limits).ok());
  limits.max_input_bytes = 100;
  absl::StatusOr<ClusterSpec> small = LoadClusterSpecFile(path, limits);
  REQUIRE_FALSE(small.ok());
  CHECK(std::string(small.status().message()).find("larger than 100 bytes") != std::string::npos);
}

TEST_CASE("LoadClusterSpecDetailed: ignored skuTypes still count against the node budget",
          "[config][unit]") {
  // A large `skuTypes` mapping, which the loader otherwise ignores: each entry is 5 nodes.
  std::ostringstream yaml;
  yaml << "physicalCluster:\n  skuTypes:\n";
  for (int i = 0; i < 50000; ++i) yaml << "    sku" << i << ": {gpu: 1, cpu: 4}\n";
  ConfigLimits limits;
  limits.max_yaml_nodes = 100000;
  const ConfigLoadResult result = LoadClusterSpecDetailed(yaml.str(), "sku.yaml", limits);
  INFO(Joined(result));
  REQUIRE(result.errors.size() == 1);
  CHECK(result.errors[0].message == "the file has more than 100000 YAML nodes");
  CHECK(result.errors[0].line > 1000);  // located where the budget ran out
}

TEST_CASE("LoadClusterSpecDetailed: errors are capped, then counted", "[config][unit]") {
  std::ostringstream yaml;
  yaml << kValidHead << "  VC2:\n    virtualCells:\n";
  for (int i = 0; i < 500; ++i) yaml << "    - {cellType: NOPE" << i << ", cellNumber: 1}\n";
  ConfigLimits limits;
  limits.max_errors = 20;
  const ConfigLoadResult result = LoadClusterSpecDetailed(yaml.str(), "many.yaml", limits);
  REQUIRE(result.errors.size() == 21);
  CHECK(result.errors.back().message == "... and 480 more errors (only the first 20 are shown)");
  CHECK(result.errors.front().message.find("NOPE0") != std::string::npos);
  // With the default cap of 100.
  CHECK(LoadClusterSpecDetailed(yaml.str(), "many.yaml").errors.size() == 101);
}

TEST_CASE("LoadClusterSpecDetailed: integers with a leading zero are refused", "[config][unit]") {
  std::string yaml = kValidHead;
  yaml.replace(yaml.find("childCellNumber: 4"), 18, "childCellNumber: 04");
  ConfigLoadResult result = LoadClusterSpecDetailed(yaml, "zero.yaml");
  REQUIRE(result.errors.size() == 1);
  CHECK(result.errors[0].ToString() ==
        "zero.yaml:3:53: physicalCluster.cellTypes.K80-NODE.childCellNumber: integer `04` has a "
        "leading zero, which YAML 1.1 and HiveD read as octal (write the number without "
        "leading zeros)");
  // A zero on its own, signs and the largest values are fine.
  std::string plain = kValidHead;
  plain.replace(plain.find("cellNumber: 1}"), 13, "cellNumber: +1");
  CHECK(LoadClusterSpecDetailed(plain, "plus.yaml").ok());
}

TEST_CASE("LoadClusterSpecDetailed: names must be UTF-8", "[config][unit]") {
  std::string yaml = kValidHead;
  yaml.replace(yaml.find("VC1"), 3, "VC\xc3\xa9");  // valid: U+00E9
  CHECK(LoadClusterSpecDetailed(yaml, "ok.yaml").ok());
  yaml.replace(yaml.find("VC\xc3\xa9"), 4, "VC\xc3");  // truncated sequence
  const ConfigLoadResult bad = LoadClusterSpecDetailed(yaml, "bad.yaml");
  REQUIRE(bad.errors.size() == 1);
  CHECK(bad.errors[0].line == 8);
  CHECK(bad.errors[0].column == 5);
  CHECK(bad.errors[0].message == "byte 0xc3 is not valid UTF-8");
  // Overlong encodings and surrogates are not UTF-8 either.
  for (const char* bytes : {"\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80"}) {
    std::string other = kValidHead;
    other.replace(other.find("VC1"), 3, bytes);
    CHECK_FALSE(LoadClusterSpecDetailed(other, "bad.yaml").ok());
  }
}

TEST_CASE("ValidateClusterSpec: names of a spec built in code must be UTF-8", "[config][unit]") {
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecString(kValidHead, "ok.yaml");
  REQUIRE(spec.ok());
  CHECK(ValidateClusterSpec(*spec).empty());
  ClusterSpec bad = *spec;
  bad.virtual_clusters[0].name = "VC\xff";
  bad.physical_cells[0].cell_address = "node-\xc3";
  bad.cell_types[0].child_cell_type = "K\x80";
  std::vector<std::string> messages;
  for (const ConfigError& e : ValidateClusterSpec(bad)) messages.push_back(e.message);
  CHECK(std::count(messages.begin(), messages.end(),
                   "a virtual cluster's name is not valid UTF-8") == 1);
  CHECK(std::count(messages.begin(), messages.end(),
                   "the cell's `cellAddress` or `pinnedCellId` is not valid UTF-8") == 1);
  CHECK(std::count(messages.begin(), messages.end(), "the cell type's names are not valid UTF-8") ==
        1);
}

}  // namespace
}  // namespace hived

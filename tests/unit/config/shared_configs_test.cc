// HiveD's own configs (vendored in tests/testdata/hived-configs), the benchmark config and the
// project's examples load, derive the hand-counted facts below, and survive a YAML round trip.
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "hived/config.h"
#include "support/catch.h"
#include "unit/config/config_test_util.h"
#include "unit/config/spec_equal.h"

namespace hived {
namespace {

using testing::ChainFacts;
using testing::FactDeriver;
using testing::SpecFacts;

struct Expected {
  std::string file;  // relative to tests/testdata/
  std::vector<std::string> chains;
  std::map<std::string, ChainFacts> chain;  // {levels, top cells, nodes, leaves}
  std::map<std::string, int64_t> vc_cells;  // "chain@level" -> cells
  std::vector<std::string> pinned;
};

// Counted by hand from the YAML files (see the comments for the less obvious ones).
const std::vector<Expected>& HandCounted() {
  static const auto* expected = new std::vector<Expected>{
      {"hived-configs/basic.yaml",
       {"3-K80-NODE"},
       {{"3-K80-NODE", {4, 1, 3, 12}}},
       // VC1 1 node, VC2 1 node + the pinned node.
       {{"3-K80-NODE@3", 3}},
       {"VC2-K80"}},
      {"hived-configs/design.yaml",
       {"CT1-NODE", "3-DGX1-P100-NODE", "DGX2-V100-NODE", "3-DGX2-V100-NODE", "4-DGX2-V100-NODE",
        "2-IB-DGX2-V100-NODE"},
       {{"CT1-NODE", {2, 3, 3, 6}},
        {"3-DGX1-P100-NODE", {5, 1, 3, 24}},
        {"DGX2-V100-NODE", {5, 2, 2, 32}},
        {"3-DGX2-V100-NODE", {6, 1, 3, 48}},
        {"4-DGX2-V100-NODE", {7, 2, 8, 128}},
        {"2-IB-DGX2-V100-NODE", {6, 1, 2, 32}}},
       {{"4-DGX2-V100-NODE@5", 2},     // VC1 2 x ...2-DGX2-V100-NODE.DGX2-V100-NODE
        {"4-DGX2-V100-NODE@6", 2},     // VC1 1 x ...2-DGX2-V100-NODE + pinned VC1-YQW-DGX2
        {"3-DGX2-V100-NODE@5", 2},     // VC1
        {"DGX2-V100-NODE@5", 2},       // VC1
        {"CT1-NODE@1", 1},             // pinned VC1-YQW-CT1, a single CT1
        {"CT1-NODE@2", 1},             // VC2
        {"2-IB-DGX2-V100-NODE@6", 1},  // pinned VC1-YQW-IB-DGX2, the whole top cell
        {"3-DGX1-P100-NODE@4", 2},     // VC2 nodes
        {"3-DGX1-P100-NODE@3", 2}},    // VC2 CPU sockets
       {"VC1-YQW-CT1", "VC1-YQW-DGX2", "VC1-YQW-IB-DGX2"}},
      {"hived-configs/feature-1.yaml",
       {"3-K80-NODE", "2-K80-NODE"},
       {{"3-K80-NODE", {4, 1, 3, 12}}, {"2-K80-NODE", {4, 1, 2, 8}}},
       {{"3-K80-NODE@3", 3}, {"2-K80-NODE@4", 1}},
       {"VC2-K80"}},
      {"hived-configs/feature-2.yaml",
       {"K80-NODE-POOL", "M60-NODE-POOL"},
       {{"K80-NODE-POOL", {4, 1, 4, 16}}, {"M60-NODE-POOL", {4, 1, 1, 4}}},
       {{"K80-NODE-POOL@3", 3}, {"M60-NODE-POOL@3", 1}},
       {}},
      {"hived-configs/feature-3.yaml",
       {"K80-NODE-POOL", "M60-NODE-POOL"},
       {{"K80-NODE-POOL", {4, 1, 4, 16}}, {"M60-NODE-POOL", {4, 1, 1, 4}}},
       {{"K80-NODE-POOL@3", 4}, {"M60-NODE-POOL@3", 1}},
       {}},
      {"hived-configs/feature-33.yaml",
       {"K80-NODE-POOL"},
       {{"K80-NODE-POOL", {4, 1, 4, 16}}},
       {{"K80-NODE-POOL@3", 3}},
       {}},
      {"hived-configs/feature-4.yaml",
       {"K80-NODE-POOL", "M60-NODE-POOL"},
       {{"K80-NODE-POOL", {4, 1, 4, 16}}, {"M60-NODE-POOL", {4, 1, 2, 8}}},
       {{"K80-NODE-POOL@3", 3}, {"M60-NODE-POOL@3", 2}},
       {}},
      {"hived-configs/feature-5.yaml",
       {"K80-NODE-POOL", "M60-NODE-POOL"},
       {{"K80-NODE-POOL", {4, 1, 4, 16}}, {"M60-NODE-POOL", {4, 1, 1, 4}}},
       {{"K80-NODE-POOL@3", 4}, {"M60-NODE-POOL@3", 1}},
       {}},
      {"hived-configs/feature-6.yaml",
       {"K80-NODE-POOL", "M60-NODE-POOL"},
       {{"K80-NODE-POOL", {4, 1, 4, 16}}, {"M60-NODE-POOL", {4, 1, 1, 4}}},
       {{"K80-NODE-POOL@3", 4}, {"M60-NODE-POOL@3", 1}},
       {}},
      {"hived-configs/feature-7.yaml",
       {"K80-NODE-POOL", "M60-NODE-POOL"},
       {{"K80-NODE-POOL", {4, 1, 3, 12}}, {"M60-NODE-POOL", {4, 1, 1, 4}}},
       {{"K80-NODE-POOL@3", 2}, {"M60-NODE-POOL@3", 1}},
       {}},
      {"hived-configs/feature-8.yaml",
       {"3-K80-NODE", "2-K80-NODE"},
       {{"3-K80-NODE", {4, 1, 3, 12}}, {"2-K80-NODE", {4, 1, 2, 8}}},
       {{"3-K80-NODE@3", 3}, {"2-K80-NODE@4", 1}},
       {"VC1-K80"}},
      // 125 racks of 8 nodes; the VCs reserve 100 racks and 200 nodes: an exact fit.
      {"bench-configs/gen-1000-nodes.yaml",
       {"V100-RACK"},
       {{"V100-RACK", {5, 125, 1000, 8000}}},
       {{"V100-RACK@5", 100}, {"V100-RACK@4", 200}},
       {}},
  };
  return *expected;
}

TEST_CASE("LoadClusterSpecFile: loads every HiveD config and derives its chains, nodes and VCs",
          "[config][unit]") {
  const std::string shared = testing::VendoredConfigsDir();
  // Every file of hived-configs/ is covered by the table.
  size_t listed = 0;
  for (const auto& path : testing::YamlFiles(std::filesystem::path(shared) / "hived-configs")) {
    CAPTURE(path.string());
    bool found = false;
    for (const Expected& e : HandCounted())
      found = found || e.file.find(path.filename().string()) != std::string::npos;
    CHECK(found);
    ++listed;
  }
  CHECK(listed >= 11);
  for (const Expected& expected : HandCounted()) {
    const std::string path = shared + "/" + expected.file;
    CAPTURE(path);
    absl::StatusOr<ClusterSpec> spec = LoadClusterSpecFile(path);
    REQUIRE(spec.ok());
    const SpecFacts facts = FactDeriver(*spec).Derive();
    CHECK(facts.chains == expected.chains);
    for (const auto& [name, want] : expected.chain) {
      CAPTURE(name);
      REQUIRE(facts.chain.count(name) == 1);
      const ChainFacts& got = facts.chain.at(name);
      CHECK(got.levels == want.levels);
      CHECK(got.top_cells == want.top_cells);
      CHECK(got.nodes == want.nodes);
      CHECK(got.leaves == want.leaves);
    }
    CHECK(facts.vc_cells == expected.vc_cells);
    CHECK(facts.pinned == expected.pinned);

    // The capacity report agrees with the naive derivation.
    const CapacityReport report = ComputeCapacityReport(*spec);
    REQUIRE(report.chains.size() == expected.chains.size());
    for (const ChainCapacity& chain : report.chains) {
      CAPTURE(chain.chain);
      const ChainFacts& want = expected.chain.at(chain.chain);
      CHECK(static_cast<int32_t>(chain.levels.size()) == want.levels);
      CHECK(chain.top_cells == want.top_cells);
      CHECK(chain.levels.back().physical_cells == want.leaves);
      int64_t nodes = 0;
      for (const CapacityLevel& level : chain.levels) {
        if (level.is_node_level) nodes = level.physical_cells;
        const std::string key = chain.chain + "@" + std::to_string(level.level);
        const int64_t vc = expected.vc_cells.count(key) ? expected.vc_cells.at(key) : 0;
        CHECK(level.total_reserved == vc);
        CHECK(level.slack >= 0);
      }
      CHECK(nodes == want.nodes);
    }
  }
}

TEST_CASE("ClusterSpecToYaml: every shipped config loads back to an equal spec", "[config][unit]") {
  std::vector<std::filesystem::path> files =
      testing::YamlFiles(std::filesystem::path(HIVED_SOURCE_DIR) / "config" / "examples");
  for (const char* dir : {"hived-configs", "bench-configs"}) {
    for (const auto& f :
         testing::YamlFiles(std::filesystem::path(testing::VendoredConfigsDir()) / dir)) {
      files.push_back(f);
    }
  }
  REQUIRE(files.size() >= 13);
  for (const auto& path : files) {
    CAPTURE(path.string());
    absl::StatusOr<ClusterSpec> spec = LoadClusterSpecFile(path.string());
    REQUIRE(spec.ok());
    const std::string yaml = ClusterSpecToYaml(*spec);
    absl::StatusOr<ClusterSpec> again = LoadClusterSpecString(yaml, "round-trip");
    INFO(again.status().ToString());
    REQUIRE(again.ok());
    CHECK(*again == *spec);
    CHECK(ClusterSpecToYaml(*again) == yaml);
  }
}

TEST_CASE("config/examples: every example config is valid", "[config][unit]") {
  const auto files =
      testing::YamlFiles(std::filesystem::path(HIVED_SOURCE_DIR) / "config" / "examples");
  REQUIRE(!files.empty());
  bool two_racks = false;
  for (const auto& path : files) {
    CAPTURE(path.string());
    ConfigLoadResult result =
        LoadClusterSpecDetailed(testing::ReadFile(path), path.filename().string());
    for (const ConfigError& error : result.errors) UNSCOPED_INFO(error.ToString());
    CHECK(result.ok());
    if (path.filename() == "two-racks.yaml") {
      two_racks = true;
      const SpecFacts facts = FactDeriver(result.spec).Derive();
      CHECK(facts.chains == std::vector<std::string>{"V100-RACK"});
      CHECK(facts.chain.at("V100-RACK") == ChainFacts{5, 2, 8, 64});
      CHECK(facts.vc_cells ==
            std::map<std::string, int64_t>{
                {"V100-RACK@5", 1}, {"V100-RACK@4", 3}, {"V100-RACK@3", 1}, {"V100-RACK@2", 1}});
      CHECK(facts.pinned == std::vector<std::string>{"research-node"});
    }
  }
  CHECK(two_racks);
}

}  // namespace
}  // namespace hived

// `hived::DescribeCluster` (hived/cluster_info.h) against the naive derivation of
// config_test_util.h, which shares no code with the library, on every real config.
#include <filesystem>
#include <string>
#include <vector>

#include "hived/cluster_info.h"
#include "hived/config.h"
#include "support/catch.h"
#include "unit/config/config_test_util.h"

namespace hived {
namespace {

std::vector<std::filesystem::path> RealConfigs() {
  std::vector<std::filesystem::path> files =
      testing::YamlFiles(std::filesystem::path(HIVED_SOURCE_DIR) / "config" / "examples");
  for (const auto& f :
       testing::YamlFiles(std::filesystem::path(testing::VendoredConfigsDir()) / "hived-configs")) {
    files.push_back(f);
  }
  return files;
}

TEST_CASE("DescribeCluster: chains, leaf counts and pinned cells match a naive derivation",
          "[config][unit]") {
  const std::vector<std::filesystem::path> files = RealConfigs();
  REQUIRE(files.size() >= 13);  // config/examples and HiveD's 11
  for (const auto& path : files) {
    CAPTURE(path.string());
    absl::StatusOr<ClusterSpec> spec = LoadClusterSpecFile(path.string());
    REQUIRE(spec.ok());
    const testing::SpecFacts facts = testing::FactDeriver(*spec).Derive();
    const ClusterDescription d = DescribeCluster(*spec);
    REQUIRE(d.chains.size() == facts.chains.size());
    int64_t total = 0;
    for (size_t c = 0; c < d.chains.size(); ++c) {
      const ChainDescription& chain = d.chains[c];
      const testing::ChainFacts& expected = facts.chain.at(facts.chains[c]);
      CHECK(chain.name == facts.chains[c]);
      CHECK(chain.top_cells == expected.top_cells);
      CHECK(chain.leaf_cells == expected.leaves);
      CHECK(static_cast<int32_t>(chain.cell_types.size()) == expected.levels);
      total += expected.leaves;
    }
    CHECK(d.total_leaf_cells == total);
    REQUIRE(d.pinned_cells.size() == facts.pinned.size());
    for (size_t p = 0; p < d.pinned_cells.size(); ++p) {
      CHECK(d.pinned_cells[p].pinned_cell_id == facts.pinned[p]);
    }
    for (const CellTypeDescription& type : d.cell_types) {
      CAPTURE(type.name);
      CHECK(type.level >= 1);
      CHECK(type.leaf_cells >= 1);
      CHECK(type.is_leaf_type == (type.level == 1));
    }
  }
}

TEST_CASE("DescribeCluster: describes what it can of an invalid spec, never fails",
          "[config][unit]") {
  ClusterSpec spec;
  spec.cell_types = {{"A", "B", 2, true}, {"B", "A", 2, false}, {"N", "GPU", 4, true}};
  spec.physical_cells = {{"A", "", "", {}}, {"N", "node-1", "pin", {}}, {"NOPE", "", "", {}}};
  const ClusterDescription d = DescribeCluster(spec);
  REQUIRE(d.cell_types.size() == 4);  // A, B, N, then the leaf type GPU
  CHECK(d.cell_types[0].level == 0);  // on a cycle: not well defined
  CHECK(d.cell_types[2].leaf_cells == 4);
  CHECK(d.cell_types[2].node_leaf_cells == 4);
  CHECK(d.cell_types[3].is_leaf_type);
  REQUIRE(d.chains.size() == 1);
  CHECK(d.chains[0].name == "N");
  REQUIRE(d.pinned_cells.size() == 1);
  CHECK(d.pinned_cells[0].top_cell == 1);
  CHECK(d.total_leaf_cells == 4);
}

}  // namespace
}  // namespace hived

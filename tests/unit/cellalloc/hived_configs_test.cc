// The cell forest and buddy allocator on HiveD's own example configs, loaded from YAML
// (vendored in tests/testdata/hived-configs, so they always run).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "cellalloc/buddy_allocator.h"
#include "cellalloc/cell_forest.h"
#include "hived/config.h"
#include "support/catch.h"
#include "unit/cellalloc/test_specs.h"

namespace hived::cellalloc {
namespace {

std::filesystem::path ConfigDir() {
  return std::filesystem::path(HIVED_SOURCE_DIR) / "tests" / "testdata" / "hived-configs";
}

std::vector<std::filesystem::path> ConfigFiles() {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(ConfigDir(), error)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST_CASE("CellForest: design.yaml loaded from YAML equals its C++ transcription",
          "[cellalloc][unit]") {
  const std::filesystem::path path = ConfigDir() / "design.yaml";
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecFile(path.string());
  INFO(spec.status().ToString());
  REQUIRE(spec.ok());
  absl::StatusOr<CellForest> loaded = CellForest::Build(*spec);
  absl::StatusOr<CellForest> coded = CellForest::Build(testing::DesignSpec());
  REQUIRE(loaded.ok());
  REQUIRE(coded.ok());
  REQUIRE(loaded->num_cells() == coded->num_cells());
  for (int32_t i = 0; i < loaded->num_cells(); ++i) {
    const CellId c(static_cast<uint32_t>(i));
    INFO("cell " << i);
    CHECK(loaded->address(c) == coded->address(c));
    CHECK(loaded->level(c) == coded->level(c));
    CHECK(loaded->chain(c) == coded->chain(c));
    CHECK(loaded->leaf_index(c) == coded->leaf_index(c));
    CHECK(loaded->pinned_id(c) == coded->pinned_id(c));
    CHECK(loaded->node(c) == coded->node(c));
  }
}

TEST_CASE("BuddyAllocator: allocates every leaf of HiveD's example configs and merges back",
          "[cellalloc][unit]") {
  const std::vector<std::filesystem::path> files = ConfigFiles();
  REQUIRE(files.size() >= 11);  // every vendored config
  for (const std::filesystem::path& path : files) {
    INFO(path.string());
    absl::StatusOr<ClusterSpec> spec = LoadClusterSpecFile(path.string());
    INFO(spec.status().ToString());
    REQUIRE(spec.ok());
    absl::StatusOr<CellForest> forest = CellForest::Build(*spec);
    INFO(forest.status().ToString());
    REQUIRE(forest.ok());
    REQUIRE(forest->CheckInvariants().ok());
    BuddyAllocator alloc(&*forest);
    std::vector<CellId> used;
    for (int32_t i = 0; i < forest->num_chains(); ++i) {
      const ChainId ch(static_cast<uint32_t>(i));
      const int32_t leaves = alloc.obtainable(ch, 1);
      CHECK(leaves == forest->chain_info(ch).cells_at_level[1]);
      for (int32_t k = 0; k < leaves; ++k) {
        const CellId leaf = alloc.Allocate(ch, 1);
        REQUIRE_FALSE(leaf.IsNil());
        used.push_back(leaf);
      }
      CHECK(alloc.Allocate(ch, 1).IsNil());
      for (CellLevel l = 1; l <= forest->chain_info(ch).top_level; ++l) {
        CHECK(alloc.obtainable(ch, l) == 0);
      }
    }
    REQUIRE(alloc.CheckInvariants().ok());
    for (CellId leaf : used) alloc.Release(leaf);
    REQUIRE(alloc.CheckInvariants().ok());
    for (int32_t i = 0; i < forest->num_chains(); ++i) {
      const ChainInfo& info = forest->chain_info(ChainId(static_cast<uint32_t>(i)));
      CHECK(alloc.free_count(ChainId(static_cast<uint32_t>(i)), info.top_level) ==
            static_cast<int32_t>(info.top_cells.size()));
    }
  }
}

}  // namespace
}  // namespace hived::cellalloc

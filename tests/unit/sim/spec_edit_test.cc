#include "sim/cluster/spec_edit.h"

#include <filesystem>

#include "absl/strings/match.h"
#include "hived/config.h"
#include "sim_test_util.h"
#include "support/catch.h"

namespace hived::sim {
namespace {

using testing::LoadSpec;

ClusterSpec Philly() {
  absl::StatusOr<ClusterSpec> spec =
      LoadClusterSpecFile(std::string(HIVED_SOURCE_DIR) + "/config/examples/philly.yaml");
  REQUIRE(spec.ok());
  return *spec;
}

ClusterSpec TwoRacks() {
  absl::StatusOr<ClusterSpec> spec =
      LoadClusterSpecFile(std::string(HIVED_SOURCE_DIR) + "/config/examples/two-racks.yaml");
  REQUIRE(spec.ok());
  return *spec;
}

const VirtualClusterSpec& Vc(const ClusterSpec& spec, const std::string& name) {
  for (const VirtualClusterSpec& v : spec.virtual_clusters) {
    if (v.name == name) return v;
  }
  FAIL("no VC " << name);
  return spec.virtual_clusters.front();
}

TEST_CASE("SpecEdit: a VC's size counts its cells in units of its lowest reserved type",
          "[sim][planning][unit]") {
  const ClusterSpec spec = Philly();
  absl::StatusOr<VcUnits> u = GetVcUnits(spec, "6c71a0", "");  // 1 rack + 1 node
  REQUIRE(u.ok());
  CHECK(u->unit_type == "P100-RACK.P100-NODE");
  CHECK(u->units == 9);
  u = GetVcUnits(spec, "6c71a0", "P100-RACK.P100-NODE.P100-SOCKET");
  REQUIRE(u.ok());
  CHECK(u->units == 18);
  CHECK(GetVcUnits(spec, "6c71a0", "P100-RACK").status().code() ==
        absl::StatusCode::kInvalidArgument);  // a node is not a whole number of racks
  CHECK(GetVcUnits(spec, "nope", "").status().code() == absl::StatusCode::kNotFound);
  CHECK(GetVcUnits(spec, "6c71a0", "P100-RACK.P100-GPU").status().code() ==
        absl::StatusCode::kInvalidArgument);
}

TEST_CASE("SpecEdit: resizing keeps the VC's shape and leaves other VCs alone",
          "[sim][planning][unit]") {
  ClusterSpec spec = Philly();
  const ClusterSpec before = spec;
  REQUIRE(SetVcUnits(&spec, "6c71a0", "", 17).ok());
  const VirtualClusterSpec& v = Vc(spec, "6c71a0");
  REQUIRE(v.virtual_cells.size() == 2);
  CHECK(v.virtual_cells[0].cell_type == "P100-RACK");
  CHECK(v.virtual_cells[0].cell_number == 2);
  CHECK(v.virtual_cells[1].cell_type == "P100-RACK.P100-NODE");
  CHECK(v.virtual_cells[1].cell_number == 1);
  for (size_t i = 0; i < spec.virtual_clusters.size(); ++i) {
    if (spec.virtual_clusters[i].name == "6c71a0") continue;
    CHECK(spec.virtual_clusters[i].name == before.virtual_clusters[i].name);
    CHECK(spec.virtual_clusters[i].virtual_cells.size() ==
          before.virtual_clusters[i].virtual_cells.size());
  }
  SECTION("exactly a number of racks drops the node entry") {
    REQUIRE(SetVcUnits(&spec, "6c71a0", "", 16).ok());
    REQUIRE(Vc(spec, "6c71a0").virtual_cells.size() == 1);
    CHECK(Vc(spec, "6c71a0").virtual_cells[0].cell_number == 2);
  }
  SECTION("a VC not in the config is added with the named type") {
    REQUIRE(SetVcUnits(&spec, "tenant", "P100-RACK.P100-NODE", 3).ok());
    CHECK(Vc(spec, "tenant").virtual_cells[0].cell_number == 3);
    CHECK(!SetVcUnits(&spec, "other", "", 3).ok());
  }
  CHECK(!SetVcUnits(&spec, "6c71a0", "", -1).ok());
  CHECK(!SetVcUnits(&spec, "6c71a0", "", 0).ok());  // no cells left
}

TEST_CASE("SpecEdit: FitPhysicalCluster adds copies of the chain's racks until VCs fit",
          "[sim][planning][unit]") {
  ClusterSpec spec = Philly();
  const int64_t racks = TopCellsPerChain(spec)[0].second;
  REQUIRE(SetVcUnits(&spec, "6214e9", "", 8 + 8 * 3 + 5).ok());  // +29 nodes
  CHECK(!CheckSpec(spec).ok());
  REQUIRE(FitPhysicalCluster(&spec).ok());
  CHECK(CheckSpec(spec).ok());
  const int64_t grown = TopCellsPerChain(spec)[0].second;
  CHECK(grown > racks);
  // Reloading the written YAML gives a valid config too (names are unique).
  absl::StatusOr<ClusterSpec> again = LoadClusterSpecString(ClusterSpecToYaml(spec));
  INFO(again.status().ToString());
  CHECK(again.ok());
  SECTION("and TrimPhysicalCluster removes what is not needed") {
    REQUIRE(AddTopCells(&spec, "", 5).ok());
    TrimPhysicalCluster(&spec);
    CHECK(CheckSpec(spec).ok());
    CHECK(TopCellsPerChain(spec)[0].second <= grown);
    ClusterSpec smaller = spec;
    if (AddTopCells(&smaller, "", -1).ok()) CHECK(!CheckSpec(smaller).ok());
  }
}

TEST_CASE("SpecEdit: AddTopCells never removes pinned cells and names the chains",
          "[sim][planning][unit]") {
  ClusterSpec spec = TwoRacks();
  CHECK(NodesPerTopCell(spec, "V100-RACK") == 4);
  // rack1 holds the pinned node: only rack0 is removable.
  ClusterSpec removed = spec;
  CHECK(AddTopCells(&removed, "", -2).code() == absl::StatusCode::kFailedPrecondition);
  REQUIRE(AddTopCells(&removed, "", -1).ok());
  REQUIRE(removed.physical_cells.size() == 1);
  CHECK(removed.physical_cells[0].cell_children[3].pinned_cell_id == "research-node");
  CHECK(AddTopCells(&spec, "A100-RACK", 1).code() == absl::StatusCode::kNotFound);
  REQUIRE(AddTopCells(&spec, "V100-RACK", 2).ok());
  CHECK(TopCellsPerChain(spec)[0].second == 4);
  CHECK(CheckSpec(spec).ok());
  // The copies are of the last rack, without its pinned id, with fresh node names.
  for (size_t i = 2; i < 4; ++i) {
    for (const PhysicalCellSpec& n : spec.physical_cells[i].cell_children) {
      CHECK(n.pinned_cell_id.empty());
      CHECK(absl::StartsWith(n.cell_address, "add"));
    }
  }
}

TEST_CASE("SpecEdit: every VC of HiveD's own configs scales by 2 into a valid config",
          "[sim][planning][unit]") {
  const std::filesystem::path dir = std::string(HIVED_SOURCE_DIR) + "/tests/testdata/hived-configs";
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    absl::StatusOr<ClusterSpec> spec = LoadClusterSpecFile(entry.path().string());
    if (!spec.ok()) continue;
    CAPTURE(entry.path().string());
    ClusterSpec scaled = *spec;
    absl::Status s = ScaleVcs(&scaled, "", 2.0);
    if (s.ok()) s = FitPhysicalCluster(&scaled);
    INFO(s.ToString());
    CHECK(s.ok());
    CHECK(CheckSpec(scaled).ok());
    ++checked;
  }
  CHECK(checked >= 11);  // every vendored config
}

}  // namespace
}  // namespace hived::sim

namespace hived::sim {
namespace {

// Nodes under one cell of `type`, walked down the cell types independently of the library:
// the reference for NodesPerTopCell, which asks `hived::DescribeCluster`.
int64_t ReferenceNodesPer(const ClusterSpec& spec, std::string type) {
  int64_t n = 1;
  for (int depth = 0; depth < 64; ++depth) {
    const CellTypeSpec* s = nullptr;
    for (const CellTypeSpec& t : spec.cell_types) {
      if (t.name == type) s = &t;
    }
    if (s == nullptr) return 0;
    if (s->is_node_level) return n;
    n *= s->child_cell_number;
    type = s->child_cell_type;
  }
  return 0;
}

TEST_CASE(
    "SpecEdit: nodes per top-level cell, from the library's description, agree with a walk "
    "down the cell types on every config of the repository",
    "[sim][planning][unit]") {
  int chains = 0;
  for (const char* folder : {"/config/examples", "/tests/testdata/hived-configs"}) {
    for (const auto& entry :
         std::filesystem::directory_iterator(std::string(HIVED_SOURCE_DIR) + folder)) {
      absl::StatusOr<ClusterSpec> spec = LoadClusterSpecFile(entry.path().string());
      if (!spec.ok()) continue;
      CAPTURE(entry.path().string());
      for (const auto& [chain, count] : TopCellsPerChain(*spec)) {
        CAPTURE(chain);
        CHECK(NodesPerTopCell(*spec, chain) == ReferenceNodesPer(*spec, chain));
        ++chains;
      }
      CHECK(NodesPerTopCell(*spec, "no-such-type") == 0);
    }
  }
  CHECK(chains >= 10);
  // Philly: a rack holds 8 nodes.
  CHECK(NodesPerTopCell(Philly(), "P100-RACK") == 8);
}

}  // namespace
}  // namespace hived::sim

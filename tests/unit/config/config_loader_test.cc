// Unit tests of the loader, the validator and the capacity report on small inline configs.
#include <string>
#include <vector>

#include "hived/config.h"
#include "support/catch.h"
#include "unit/config/spec_equal.h"

namespace hived {
namespace {

// HiveD's basic config, with the Kubernetes keys the loader accepts and ignores.
constexpr char kBasic[] = R"(kubeApiServerAddress: http://10.151.41.15:8080
kubeConfigFilePath: ""
webServerAddress: ":30096"
forcePodBindThreshold: 3
waitingPodSchedulingBlockMilliSec: 50
quotaExcludeVCs: [VC1]
physicalCluster:
  skuTypes:
    K80: {gpu: 1, cpu: 4, memory: 8192Mi}
  cellTypes:
    K80-2GPU:
      childCellType: K80
      childCellNumber: 2
    K80-NODE:
      childCellType: K80-2GPU
      childCellNumber: 2
      isNodeLevel: true
    3-K80-NODE:
      childCellType: K80-NODE
      childCellNumber: 3
  physicalCells:
  - cellType: 3-K80-NODE
    cellChildren:
    - cellAddress: 10.151.41.20
    - cellAddress: 10.151.41.21
      pinnedCellId: VC2-K80
    - cellAddress: 10.151.41.22
virtualClusters:
  VC1:
    virtualCells:
    - cellType: 3-K80-NODE.K80-NODE
      cellNumber: 1
  VC2:
    virtualCells:
    - cellType: 3-K80-NODE.K80-NODE
      cellNumber: 1
    pinnedCells:
    - pinnedCellId: VC2-K80
)";

ClusterSpec BasicSpec() {
  ClusterSpec spec;
  spec.cell_types = {{"K80-2GPU", "K80", 2, false},
                     {"K80-NODE", "K80-2GPU", 2, true},
                     {"3-K80-NODE", "K80-NODE", 3, false}};
  PhysicalCellSpec rack;
  rack.cell_type = "3-K80-NODE";
  rack.cell_children.resize(3);
  rack.cell_children[0].cell_address = "10.151.41.20";
  rack.cell_children[1].cell_address = "10.151.41.21";
  rack.cell_children[1].pinned_cell_id = "VC2-K80";
  rack.cell_children[2].cell_address = "10.151.41.22";
  spec.physical_cells = {rack};
  spec.virtual_clusters = {{"VC1", {{"3-K80-NODE.K80-NODE", 1}}, {}},
                           {"VC2", {{"3-K80-NODE.K80-NODE", 1}}, {{"VC2-K80"}}}};
  return spec;
}

std::string Joined(const std::vector<ConfigError>& errors) {
  std::string out;
  for (const ConfigError& e : errors) out += e.ToString() + "\n";
  return out;
}

TEST_CASE("LoadClusterSpecString: loads HiveD's basic config and ignores the Kubernetes keys",
          "[config][unit]") {
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecString(kBasic);
  INFO(spec.status().ToString());
  REQUIRE(spec.ok());
  CHECK(*spec == BasicSpec());
}

TEST_CASE("LoadClusterSpecString: null, empty and absent cellChildren all generate children",
          "[config][unit]") {
  const std::string head =
      "physicalCluster:\n  cellTypes:\n    N: {childCellType: G, childCellNumber: 2, "
      "isNodeLevel: true}\n  physicalCells:\n  - cellType: N\n    cellAddress: n0\n";
  for (const char* children :
       {"", "    cellChildren: null\n", "    cellChildren: []\n", "    cellChildren:\n"}) {
    CAPTURE(children);
    absl::StatusOr<ClusterSpec> spec = LoadClusterSpecString(head + std::string(children));
    INFO(spec.status().ToString());
    REQUIRE(spec.ok());
    CHECK(spec->physical_cells[0].cell_children.empty());
    const CapacityReport report = ComputeCapacityReport(*spec);
    REQUIRE(report.chains.size() == 1);
    CHECK(report.chains[0].levels.back().physical_cells == 2);
  }
}

TEST_CASE("LoadClusterSpecDetailed: reports every error with file, line, column and path",
          "[config][unit]") {
  const std::string yaml =
      "physicalCluster:\n"           // 1
      "  cellTypes:\n"               // 2
      "    NODE:\n"                  // 3
      "      childCellType: GPU\n"   // 4
      "      childCellNumber: 4\n"   // 5
      "      isNodeLevel: true\n"    // 6
      "    SPARE:\n"                 // 7
      "      childCellType: NODE\n"  // 8
      "      childCellNumbr: 4\n"    // 9
      "  physicalCells:\n"           // 10
      "  - cellType: NODE\n"         // 11
      "    cellAddress: a\n"         // 12
      "virtualClusters:\n"           // 13
      "  VC1:\n"                     // 14
      "    virtualCells:\n"          // 15
      "    - cellType: NOD\n"        // 16
      "      cellNumber: 1\n";       // 17
  const ConfigLoadResult result = LoadClusterSpecDetailed(yaml, "c.yaml");
  INFO(Joined(result.errors));
  REQUIRE(result.errors.size() == 3);
  const ConfigError& missing = result.errors[0];
  CHECK(missing.file == "c.yaml");
  CHECK(missing.line == 7);  // a missing key is reported at its mapping's key
  CHECK(missing.column == 5);
  CHECK(missing.message == "missing required key `childCellNumber`");
  CHECK(result.errors[1].line == 9);
  CHECK(result.errors[1].column == 7);
  CHECK(result.errors[1].yaml_path == "physicalCluster.cellTypes.SPARE.childCellNumbr");
  CHECK(result.errors[1].hint == "did you mean `childCellNumber`?");
  CHECK(result.errors[2].line == 16);
  CHECK(result.errors[2].yaml_path == "virtualClusters.VC1.virtualCells[0].cellType");
  CHECK(result.errors[2].hint == "did you mean `NODE`?");
}

TEST_CASE("ValidateClusterSpec: checks a spec built in code, with paths and no positions",
          "[config][unit]") {
  CHECK(ValidateClusterSpec(BasicSpec()).empty());

  ClusterSpec spec = BasicSpec();
  spec.virtual_clusters[0].virtual_cells[0].cell_number = 2;  // 2 + 1 + pinned 1 > 3 nodes
  std::vector<ConfigError> errors = ValidateClusterSpec(spec);
  INFO(Joined(errors));
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].line == 0);
  CHECK(errors[0].file.empty());
  CHECK(errors[0].yaml_path == "virtualClusters.VC2.pinnedCells[0].pinnedCellId");
  CHECK(errors[0].message ==
        "insufficient physical cells in chain `3-K80-NODE` at level 3 (`K80-NODE`): 4 needed, 3 "
        "available (`VC1` asks 2, `VC2` asks 2)");

  spec = BasicSpec();
  spec.cell_types[0].child_cell_type = "3-K80-NODE";  // K80-2GPU -> 3-K80-NODE -> ... cycle
  errors = ValidateClusterSpec(spec);
  INFO(Joined(errors));
  REQUIRE(!errors.empty());
  CHECK(errors[0].message ==
        "cell types form a cycle: K80-2GPU -> 3-K80-NODE -> K80-NODE -> K80-2GPU");
}

TEST_CASE("ValidateClusterSpec: a VC cell path must follow the chain level by level",
          "[config][unit]") {
  ClusterSpec spec = BasicSpec();
  spec.virtual_clusters[0].virtual_cells[0].cell_type = "3-K80-NODE.K80-2GPU";  // skips NODE
  std::vector<ConfigError> errors = ValidateClusterSpec(spec);
  INFO(Joined(errors));
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message == "`K80-2GPU` is not the child type of `3-K80-NODE`");
  CHECK(errors[0].hint == "the child type of `3-K80-NODE` is `K80-NODE`");

  spec.virtual_clusters[0].virtual_cells[0].cell_type = "3-K80-NODE.K80-NODE.K80-2GPU.K80";
  CHECK(ValidateClusterSpec(spec).empty());
  spec.virtual_clusters[0].virtual_cells[0].cell_type = "K80-NODE";
  errors = ValidateClusterSpec(spec);
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message == "`K80-NODE` is not a chain: no top-level physical cell has this type");
}

TEST_CASE("ValidateClusterSpec: a node may appear in two chains but not twice in one",
          "[config][unit]") {
  ClusterSpec spec;
  spec.cell_types = {{"A-NODE", "A", 2, true}, {"B-NODE", "B", 2, true}};
  PhysicalCellSpec a{"A-NODE", "n1", "", {}};
  PhysicalCellSpec b{"B-NODE", "n1", "", {}};
  spec.physical_cells = {a, b};
  CHECK(ValidateClusterSpec(spec).empty());
  spec.physical_cells.push_back(a);
  const std::vector<ConfigError> errors = ValidateClusterSpec(spec);
  INFO(Joined(errors));
  // The second `n1` of chain A-NODE; its GPUs are not checked again.
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].message ==
        "node `n1` appears twice in chain `A-NODE` (first at "
        "physicalCluster.physicalCells[0].cellAddress)");
}

TEST_CASE("ComputeCapacityReport: gives HiveD's per-level table", "[config][unit]") {
  ClusterSpec spec = BasicSpec();
  spec.virtual_clusters[0].virtual_cells.push_back({"3-K80-NODE.K80-NODE.K80-2GPU", 1});
  const CapacityReport report = ComputeCapacityReport(spec);
  CHECK(report.vc_names == std::vector<std::string>{"VC1", "VC2"});
  REQUIRE(report.chains.size() == 1);
  const ChainCapacity& chain = report.chains[0];
  CHECK(chain.chain == "3-K80-NODE");
  CHECK(chain.leaf_cell_type == "K80");
  CHECK(chain.top_cells == 1);
  REQUIRE(chain.levels.size() == 4);
  // level 4: 1 rack, nothing reserved; level 3: 3 nodes, VC1 1, VC2 1 + pinned 1.
  CHECK(chain.levels[0].level == 4);
  CHECK(chain.levels[0].slack == 1);
  CHECK(chain.levels[1].cell_type == "K80-NODE");
  CHECK(chain.levels[1].is_node_level);
  CHECK(chain.levels[1].physical_cells == 3);
  CHECK(chain.levels[1].available_cells == 3);
  CHECK(chain.levels[1].reserved == std::vector<int64_t>{1, 2});
  CHECK(chain.levels[1].total_reserved == 3);
  CHECK(chain.levels[1].slack == 0);
  // level 2: 6 pairs of GPUs, none left after the nodes; VC1 asks 1: over-full by 1.
  CHECK(chain.levels[2].physical_cells == 6);
  CHECK(chain.levels[2].available_cells == 0);
  CHECK(chain.levels[2].reserved == std::vector<int64_t>{1, 0});
  CHECK(chain.levels[2].slack == -1);
  CHECK(chain.levels[3].physical_cells == 12);
  CHECK(chain.levels[3].available_cells == 0);
}

TEST_CASE("ClusterSpecToYaml: quotes what YAML would otherwise read differently",
          "[config][unit]") {
  ClusterSpec spec = BasicSpec();
  spec.physical_cells[0].cell_children[0].cell_address = "null";
  spec.physical_cells[0].cell_children[1].cell_address = "true";
  spec.physical_cells[0].cell_children[2].cell_address = "0x10";
  spec.virtual_clusters[0].name = "a: b";
  absl::StatusOr<ClusterSpec> again = LoadClusterSpecString(ClusterSpecToYaml(spec));
  REQUIRE(again.ok());
  CHECK(*again == spec);
}

TEST_CASE("LoadClusterSpecDetailed: never throws on garbage", "[config][unit]") {
  const std::vector<std::string> inputs = {
      "",
      "{",
      "- - -",
      "a: [",
      "physicalCluster: 3",
      "physicalCluster: {cellTypes: [1, 2]}",
      "virtualClusters: {VC1: {virtualCells: [{cellType: [], cellNumber: {}}]}}",
      "&a [*a]",
      "physicalCluster:\n  physicalCells:\n  - cellChildren: [[[[]]]]\n",
      std::string(5000, '['),
      "\xff\xfe\x00"};
  for (const std::string& input : inputs) {
    CAPTURE(input.substr(0, 40));
    ConfigLoadResult result = LoadClusterSpecDetailed(input, "g.yaml");
    CHECK_FALSE(result.ok());
  }
}

TEST_CASE("LoadClusterSpecFile: a missing file is NotFound", "[config][unit]") {
  CHECK(LoadClusterSpecFile("/nonexistent/cluster.yaml").status().code() ==
        absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace hived

#include "cellalloc/cell_forest.h"

#include <cstdint>
#include <string>
#include <vector>

#include "hived/cluster_spec.h"
#include "support/catch.h"
#include "unit/cellalloc/test_specs.h"

namespace hived::cellalloc {
namespace {

using testing::Cell;
using testing::Top;

CellForest MustBuild(const ClusterSpec& spec) {
  absl::StatusOr<CellForest> forest = CellForest::Build(spec);
  INFO(forest.status().ToString());
  REQUIRE(forest.ok());
  REQUIRE(forest->CheckInvariants().ok());
  return *std::move(forest);
}

// The cell with this address; Nil when there is none (a linear scan, for tests).
CellId ByAddress(const CellForest& forest, const std::string& address) {
  for (int32_t i = 0; i < forest.num_cells(); ++i) {
    const CellId c(static_cast<uint32_t>(i));
    if (forest.address(c) == address) return c;
  }
  return CellId::Nil();
}

std::vector<int32_t> LeafIndices(const CellForest& forest, CellId cell) {
  std::vector<int32_t> out;
  const CellId first = forest.first_leaf(cell);
  for (int32_t k = 0; k < forest.leaf_count(cell); ++k) {
    out.push_back(forest.leaf_index(CellId(first.value() + static_cast<uint32_t>(k))));
  }
  return out;
}

std::vector<std::string> LeafAddresses(const CellForest& forest, CellId cell) {
  std::vector<std::string> out;
  const CellId first = forest.first_leaf(cell);
  for (int32_t k = 0; k < forest.leaf_count(cell); ++k) {
    out.push_back(forest.address(CellId(first.value() + static_cast<uint32_t>(k))));
  }
  return out;
}

TEST_CASE("CellForest: derives levels, leaf counts and node names of HiveD's basic config",
          "[cellalloc][unit]") {
  CellForest forest = MustBuild(testing::BasicSpec());
  REQUIRE(forest.num_chains() == 1);
  const ChainInfo& chain = forest.chain_info(ChainId(0));
  CHECK(chain.name == "3-K80-NODE");
  CHECK(chain.top_level == 4);
  CHECK(chain.node_level == 3);
  CHECK(chain.leaf_type == "K80");
  CHECK(chain.cells_at_level == std::vector<int32_t>{0, 12, 6, 3, 1});
  CHECK(chain.child_count == std::vector<int32_t>{0, 0, 2, 2, 3});
  CHECK(forest.num_cells() == 22);
  CHECK(forest.leaf_types() == std::vector<std::string>{"K80"});
  const CellTypeInfo& node_type = forest.type_info(forest.FindType("K80-NODE"));
  CHECK(node_type.level == 3);
  CHECK(node_type.leaf_count == 4);
  CHECK(node_type.is_node_level);
  CHECK_FALSE(node_type.above_node);
  CHECK(forest.type_info(forest.FindType("3-K80-NODE")).above_node);
  CHECK(forest.type_info(forest.FindType("K80")).level == 1);
  CHECK(forest.FindType("nope").IsNil());

  const CellId top(0);
  CHECK(forest.address(top) == "0");
  CHECK(forest.node(top).IsNil());
  CHECK(forest.num_nodes() == 3);
  CHECK(forest.node_name(NodeId(0)) == "10.151.41.20");
  CHECK(forest.node_name(NodeId(2)) == "10.151.41.22");
  const CellId node1 = forest.child(top, 1);
  CHECK(forest.address(node1) == "0/10.151.41.21");
  CHECK(forest.node(node1) == forest.FindNode("10.151.41.21"));
  CHECK(forest.pinned_id(node1) == "VC2-K80");
  CHECK(forest.FindPinned("VC2-K80") == node1);
  CHECK(forest.pinned_id(top).empty());
  CHECK(LeafAddresses(forest, node1) ==
        std::vector<std::string>{"0/10.151.41.21/0/0", "0/10.151.41.21/0/1", "0/10.151.41.21/1/2",
                                 "0/10.151.41.21/1/3"});
  CHECK(LeafIndices(forest, node1) == std::vector<int32_t>{0, 1, 2, 3});
  for (CellId leaf = forest.first_leaf(node1); leaf.value() < forest.first_leaf(node1).value() + 4;
       leaf = CellId(leaf.value() + 1)) {
    CHECK(forest.node(leaf) == forest.node(node1));
    CHECK(forest.top_cell(leaf) == top);
  }
  CHECK(forest.FindLeaf(ChainId(0), forest.FindNode("10.151.41.22"), 3) ==
        ByAddress(forest, "0/10.151.41.22/1/3"));
  CHECK(forest.FindLeaf(ChainId(0), forest.FindNode("10.151.41.22"), 4).IsNil());
  CHECK(forest.SpecPath(forest.child(node1, 1)) ==
        "physicalCluster.physicalCells[0].cellChildren[1].cellChildren[1]");
}

TEST_CASE("CellForest: keeps children consecutive and parents before children",
          "[cellalloc][unit]") {
  CellForest forest = MustBuild(testing::DesignSpec());
  for (int32_t i = 0; i < forest.num_cells(); ++i) {
    const CellId c(static_cast<uint32_t>(i));
    for (int32_t k = 0; k < forest.num_children(c); ++k) {
      CHECK(forest.parent(forest.child(c, k)) == c);
      CHECK(forest.child(c, k).value() > c.value());
    }
    if (forest.level(c) == 1) {
      CHECK(forest.first_child(c).IsNil());
      CHECK(forest.first_leaf(c) == c);
    }
  }
}

TEST_CASE("CellForest: derives design.yaml's chains, leaf types and shared nodes",
          "[cellalloc][unit]") {
  CellForest forest = MustBuild(testing::DesignSpec());
  REQUIRE(forest.num_chains() == 6);
  const std::vector<std::string> chains = {"CT1-NODE",         "3-DGX1-P100-NODE",
                                           "DGX2-V100-NODE",   "3-DGX2-V100-NODE",
                                           "4-DGX2-V100-NODE", "2-IB-DGX2-V100-NODE"};
  for (size_t i = 0; i < chains.size(); ++i) {
    CHECK(forest.chain_info(ChainId(static_cast<uint32_t>(i))).name == chains[i]);
    CHECK(forest.FindChain(chains[i]) == ChainId(static_cast<uint32_t>(i)));
  }
  CHECK(forest.leaf_types() == std::vector<std::string>{"CT1", "DGX1-P100", "DGX1-V100",
                                                        "DGX2-V100", "IB-DGX2-V100-V100"});
  CHECK(forest.ChainsOfLeafType("DGX2-V100") ==
        std::vector<ChainId>{ChainId(2), ChainId(3), ChainId(4)});
  CHECK(forest.ChainsOfLeafType("DGX1-V100").empty());  // defined but no physical cell
  CHECK(forest.ChainsOfLeafType("unknown").empty());
  CHECK(forest.FindChain("2-DGX1-V100-NODE").IsNil());

  const ChainInfo& ct1 = forest.chain_info(ChainId(0));
  CHECK(ct1.top_level == 2);
  CHECK(ct1.node_level == 2);  // the top-level cell is a whole node
  CHECK(ct1.top_cells == std::vector<CellId>{CellId(0), CellId(1), CellId(2)});
  const ChainInfo& dgx2 = forest.chain_info(ChainId(2));
  CHECK(dgx2.top_level == 5);
  CHECK(dgx2.node_level == 5);
  const ChainInfo& four = forest.chain_info(ChainId(4));
  CHECK(four.top_level == 7);
  CHECK(four.node_level == 5);
  CHECK(four.cells_at_level == std::vector<int32_t>{0, 128, 64, 32, 16, 8, 4, 2});
  CHECK(forest.type_info(four.types[6]).name == "2-DGX2-V100-NODE");

  // Node 1.0.0.2 holds a CT1-NODE cell and a DGX1-P100-NODE cell (two leaf types).
  const NodeId shared = forest.FindNode("1.0.0.2");
  REQUIRE_FALSE(shared.IsNil());
  REQUIRE(forest.node_cells(shared).size() == 2);
  CHECK(forest.chain(forest.node_cells(shared)[0]) == ChainId(0));
  CHECK(forest.chain(forest.node_cells(shared)[1]) == ChainId(1));
  // Nodes are numbered in config order (depth first), not in id order.
  CHECK(forest.node_name(NodeId(0)) == "0.0.0.0");
  CHECK(forest.node_name(NodeId(2)) == "1.0.0.2");
  CHECK(forest.node_name(NodeId(3)) == "1.0.0.1");
  CHECK(forest.node_name(NodeId(4)) == "1.0.0.0");
  CHECK(forest.node_name(NodeId(5)) == "0.0.1.0");
  CHECK(forest.num_nodes() == 20);
  CHECK(forest.node_name(NodeId(19)) == "0.1.0.1");
}

TEST_CASE("CellForest: keeps explicit leaf addresses and pins of a CT1-NODE top cell",
          "[cellalloc][unit]") {
  CellForest forest = MustBuild(testing::DesignSpec());
  const CellId node(2);
  CHECK(forest.address(node) == "1.0.0.2");
  CHECK(forest.is_node_level(node));
  CHECK(forest.level(node) == 2);
  CHECK(forest.node_name(forest.node(node)) == "1.0.0.2");
  CHECK(LeafAddresses(forest, node) == std::vector<std::string>{"1.0.0.2/8", "1.0.0.2/9"});
  CHECK(LeafIndices(forest, node) == std::vector<int32_t>{8, 9});
  const CellId pinned = forest.FindPinned("VC1-YQW-CT1");
  CHECK(pinned == forest.first_leaf(node));
  CHECK(forest.level(pinned) == 1);
  CHECK(forest.FindLeaf(ChainId(0), forest.node(node), 9) == forest.child(node, 1));
  CHECK(forest.FindLeaf(ChainId(0), forest.node(node), 0).IsNil());
  // Generated children of an explicit top-level node: 0, 1.
  CHECK(LeafAddresses(forest, CellId(0)) == std::vector<std::string>{"0.0.0.0/0", "0.0.0.0/1"});
}

TEST_CASE("CellForest: derives design.yaml's scrambled and generated DGX1 addresses",
          "[cellalloc][unit]") {
  CellForest forest = MustBuild(testing::DesignSpec());
  const CellId rack(3);
  CHECK(forest.address(rack) == "3");  // default: position in physicalCells
  CHECK(forest.level(rack) == 5);
  // Generated node 1.0.0.2 derives exactly what 1.0.0.1 spells out.
  const CellId generated = forest.child(rack, 0);
  const CellId spelled = forest.child(rack, 1);
  CHECK(forest.address(generated) == "3/1.0.0.2");
  std::vector<std::string> expected;
  for (const std::string& a : LeafAddresses(forest, spelled)) {
    expected.push_back("3/1.0.0.2" + a.substr(std::string("3/1.0.0.1").size()));
  }
  CHECK(LeafAddresses(forest, generated) == expected);
  CHECK(LeafAddresses(forest, spelled) ==
        std::vector<std::string>{"3/1.0.0.1/0/0/0", "3/1.0.0.1/0/0/1", "3/1.0.0.1/0/1/2",
                                 "3/1.0.0.1/0/1/3", "3/1.0.0.1/1/2/4", "3/1.0.0.1/1/2/5",
                                 "3/1.0.0.1/1/3/6", "3/1.0.0.1/1/3/7"});
  CHECK(LeafIndices(forest, generated) == std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(forest.address(forest.child(generated, 1)) == "3/1.0.0.2/1");
  CHECK(forest.address(forest.child(forest.child(generated, 1), 0)) == "3/1.0.0.2/1/2");
  // Scrambled node 1.0.0.0 keeps the config's order and indices.
  const CellId scrambled = forest.child(rack, 2);
  CHECK(LeafIndices(forest, scrambled) == std::vector<int32_t>{1, 3, 4, 7, 0, 2, 6, 5});
  CHECK(LeafAddresses(forest, scrambled) ==
        std::vector<std::string>{"3/1.0.0.0/1/1/1", "3/1.0.0.0/1/1/3", "3/1.0.0.0/1/0/4",
                                 "3/1.0.0.0/1/0/7", "3/1.0.0.0/0/1/0", "3/1.0.0.0/0/1/2",
                                 "3/1.0.0.0/0/0/6", "3/1.0.0.0/0/0/5"});
  const NodeId node = forest.FindNode("1.0.0.0");
  CHECK(forest.FindLeaf(ChainId(1), node, 5) == ByAddress(forest, "3/1.0.0.0/0/0/5"));
  CHECK(forest.FindLeaf(ChainId(0), node, 5).IsNil());  // no CT1 cell on that node
  for (CellId leaf : {forest.first_leaf(scrambled)}) {
    CHECK(forest.node(leaf) == node);
    CHECK(forest.leaf_index(leaf) == 1);
    CHECK(forest.leaf_index(scrambled) == -1);
  }
}

TEST_CASE("CellForest: numbers cells above node level per top cell and pins nested cells",
          "[cellalloc][unit]") {
  CellForest forest = MustBuild(testing::DesignSpec());
  // physicalCells[7] is the first 4-DGX2-V100-NODE: its halves default to 7*2+k.
  const CellId top(7);
  CHECK(forest.address(top) == "7");
  const CellId half0 = forest.child(top, 0);
  const CellId half1 = forest.child(top, 1);
  CHECK(forest.address(half0) == "7/14");
  CHECK(forest.address(half1) == "7/15");
  CHECK(forest.level(half0) == 6);
  CHECK(forest.node(half0).IsNil());
  CHECK(forest.FindPinned("VC1-YQW-DGX2") == half0);
  CHECK(forest.address(forest.child(CellId(8), 1)) == "8/17");
  const CellId node = forest.child(half1, 1);
  CHECK(forest.address(node) == "7/15/0.0.3.3");
  CHECK(forest.node_name(forest.node(node)) == "0.0.3.3");
  // 16 GPUs under a node default to 0..15 (the default index resets at node level).
  std::vector<int32_t> sixteen;
  for (int32_t i = 0; i < 16; ++i) sixteen.push_back(i);
  CHECK(LeafIndices(forest, node) == sixteen);
  CHECK(LeafAddresses(forest, node).back() == "7/15/0.0.3.3/1/3/7/15");
  CHECK(LeafAddresses(forest, node)[5] == "7/15/0.0.3.3/0/1/2/5");
  // Top-level DGX2 nodes (a chain whose top cell is a whole node).
  CHECK(forest.address(CellId(4)) == "0.0.1.0");
  CHECK(LeafIndices(forest, CellId(4)) == sixteen);
  CHECK(forest.FindPinned("VC1-YQW-IB-DGX2") == CellId(9));
  CHECK(forest.address(forest.child(CellId(9), 1)) == "9/0.1.0.1");
  CHECK(forest.type_info(forest.type(forest.first_leaf(CellId(9)))).name == "IB-DGX2-V100-V100");
}

TEST_CASE("CellForest: builds fan-outs of 3 and 16", "[cellalloc][unit]") {
  CellForest forest = MustBuild(testing::FlatSpec(2, 3, 16));
  CHECK(forest.num_cells() == 2 + 6 + 96);
  const CellId rack1(1);
  CHECK(forest.num_children(rack1) == 3);
  CHECK(forest.leaf_count(rack1) == 48);
  CHECK(forest.address(forest.child(rack1, 2)) == "1/k-r1-n2");
  CHECK(forest.leaf_index(forest.child(forest.child(rack1, 2), 15)) == 15);
}

struct BadSpec {
  std::string name;
  ClusterSpec spec;
  std::string expected;  // a substring of the error message
};

std::vector<BadSpec> BadSpecs() {
  std::vector<BadSpec> cases;
  ClusterSpec base = testing::BasicSpec();
  {
    ClusterSpec s = base;
    s.physical_cells[0].cell_type = "4-K80-NODE";
    cases.push_back({"unknown top type", s,
                     "physicalCluster.physicalCells[0]: physicalCells "
                     "contains unknown cellType '4-K80-NODE'"});
  }
  {
    ClusterSpec s = base;
    s.physical_cells[0].cell_type = "K80";
    cases.push_back({"leaf type at top", s, "unknown cellType 'K80'"});
  }
  {
    ClusterSpec s = base;
    s.physical_cells[0].cell_type = "";
    cases.push_back({"no top type", s, "physicalCells[0]: a top-level physical cell needs"});
  }
  {
    ClusterSpec s = base;
    s.cell_types.push_back({"A", "B", 2, false});
    s.cell_types.push_back({"B", "A", 2, true});
    cases.push_back(
        {"cycle", s, "cellTypes.A.childCellType: cell types form a cycle: A -> B -> A"});
  }
  {
    ClusterSpec s = base;
    s.cell_types.push_back({"SELF", "SELF", 2, false});
    cases.push_back({"self cycle", s, "cell types form a cycle: SELF -> SELF"});
  }
  {
    ClusterSpec s = base;
    s.cell_types[0].is_node_level = true;
    cases.push_back({"two node levels", s,
                     "physicalCells[0]: cell type '3-K80-NODE' has 2 "
                     "node-level types below it (K80-NODE, K80-2GPU)"});
  }
  {
    ClusterSpec s = base;
    s.cell_types[1].is_node_level = false;
    cases.push_back({"no node level", s, "top cell must be node-level or above"});
  }
  {
    ClusterSpec s = base;
    s.physical_cells = {Top("K80-2GPU")};
    cases.push_back({"top cell below node", s, "top cell must be node-level or above"});
  }
  {
    ClusterSpec s = base;
    s.physical_cells[0].cell_children.push_back(Cell("10.151.41.23"));
    cases.push_back({"too many children", s,
                     "physicalCells[0]: cell of type '3-K80-NODE' "
                     "lists 4 cellChildren but childCellNumber is 3"});
  }
  {
    ClusterSpec s = base;
    s.physical_cells[0].cell_children.pop_back();
    cases.push_back({"too few children", s, "lists 2 cellChildren but childCellNumber is 3"});
  }
  {
    ClusterSpec s = base;
    s.physical_cells[0].cell_children[1].cell_children = {Cell("0", {Cell("0"), Cell("x1")}),
                                                          Cell("1")};
    cases.push_back({"non-integer leaf", s,
                     "physicalCluster.physicalCells[0].cellChildren[1].cellChildren[0]."
                     "cellChildren[1]: leaf cell address 'x1' is not a device index"});
  }
  {
    ClusterSpec s = base;
    s.physical_cells[0].cell_children[0].cell_children = {Cell("0", {Cell("0"), Cell("-1")}),
                                                          Cell("1")};
    cases.push_back({"negative leaf", s, "leaf cell address '-1' is not a device index"});
  }
  {
    ClusterSpec s = base;
    s.physical_cells[0].cell_children[0].cell_children = {
        Cell("0", {Cell("0"), Cell("1", {Cell("7")})}), Cell("1")};
    cases.push_back({"children under a leaf", s, "cell of leaf type 'K80' cannot have"});
  }
  {
    ClusterSpec s = base;
    s.physical_cells[0].cell_children[2].cell_address = "10.151.41.20";
    cases.push_back({"duplicate node", s,
                     "physicalCells[0].cellChildren[2]: duplicate node name '10.151.41.20' "
                     "in chain '3-K80-NODE' (first at physicalCluster.physicalCells[0]."
                     "cellChildren[0])"});
  }
  {
    ClusterSpec s = base;
    s.physical_cells.push_back(Top("K80-NODE", "10.151.41.21"));
    cases.push_back({"duplicate device index across chains", s,
                     "duplicate device index 0 for leaf type 'K80' on node '10.151.41.21'"});
  }
  {
    ClusterSpec s = base;
    s.physical_cells[0].cell_children[0].cell_children = {Cell("0", {Cell("3"), Cell("1")}),
                                                          Cell("1")};
    cases.push_back({"duplicate device index", s, "duplicate device index 3"});
  }
  {
    ClusterSpec s = base;
    s.physical_cells[0].cell_children[2].pinned_cell_id = "VC2-K80";
    cases.push_back({"duplicate pin", s,
                     "physicalCells[0].cellChildren[2]: duplicate pinnedCellId 'VC2-K80' "
                     "(first used at physicalCluster.physicalCells[0].cellChildren[1])"});
  }
  {
    ClusterSpec s = base;
    s.cell_types[0].child_cell_number = 0;
    cases.push_back(
        {"zero children", s, "`childCellNumber` of `K80-2GPU` must be at least 1, got 0"});
  }
  {
    ClusterSpec s = base;
    s.cell_types[2].child_cell_number = -3;
    cases.push_back({"negative children", s, "must be at least 1, got -3"});
  }
  {
    ClusterSpec s = base;
    s.cell_types.push_back(s.cell_types[0]);
    cases.push_back({"duplicate type", s, "cell type `K80-2GPU` is defined twice"});
  }
  {
    ClusterSpec s = base;
    s.cell_types[0].child_cell_type = "";
    cases.push_back({"no child type", s, "has no `childCellType`"});
  }
  {
    ClusterSpec s = base;
    s.physical_cells[0].cell_children[1].cell_type = "K80-2GPU";
    cases.push_back({"mismatched child type", s,
                     "cellChildren[1]: cellType 'K80-2GPU' does not match the type 'K80-NODE'"});
  }
  {
    ClusterSpec s = base;
    s.cell_types = {{"BIG-NODE", "G", 100000, true}, {"BIG-RACK", "BIG-NODE", 100000, false}};
    s.physical_cells = {Top("BIG-RACK")};
    cases.push_back({"too many cells", s, "more than"});
  }
  {
    ClusterSpec s = base;
    s.physical_cells[0].cell_children[0].cell_address = "rack/";
    cases.push_back({"empty node name", s, "gives an empty node name"});
  }
  return cases;
}

// Build trusts a validated spec; one that was not validated is a caller's bug, still reported
// (kInternal, located), never a crash.
TEST_CASE("CellForest: reports an unvalidated malformed spec as an internal error",
          "[cellalloc][unit]") {
  for (const BadSpec& c : BadSpecs()) {
    SECTION(c.name) {
      absl::StatusOr<CellForest> forest = CellForest::Build(c.spec);
      REQUIRE_FALSE(forest.ok());
      CHECK(forest.status().code() == absl::StatusCode::kInternal);
      INFO(forest.status().message());
      CHECK(std::string(forest.status().message()).find(c.expected) != std::string::npos);
    }
  }
}

TEST_CASE("CellForest: accepts an empty cluster and a node that spans two chains",
          "[cellalloc][unit]") {
  CellForest empty = MustBuild(ClusterSpec{});
  CHECK(empty.num_cells() == 0);
  CHECK(empty.num_chains() == 0);
  ClusterSpec spec = testing::BasicSpec();
  spec.cell_types.push_back({"T4-NODE", "T4", 4, true});
  spec.physical_cells.push_back(Top("T4-NODE", "10.151.41.21"));
  CellForest forest = MustBuild(spec);
  const NodeId node = forest.FindNode("10.151.41.21");
  CHECK(forest.node_cells(node).size() == 2);
  CHECK(forest.FindLeaf(forest.FindChain("T4-NODE"), node, 3) ==
        ByAddress(forest, "10.151.41.21/3"));
}

TEST_CASE("CellForest: reports its memory", "[cellalloc][unit]") {
  CellForest forest = MustBuild(testing::RackSpec(4, 8, 2));
  CHECK(forest.MemoryBytes() > static_cast<size_t>(forest.num_cells()) * 20);
}

}  // namespace
}  // namespace hived::cellalloc

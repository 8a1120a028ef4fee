// Property tests of the cell forest's derivation and of PriorityUsage.
//
// Forest: random cell-type chains (depth, fan-outs and node level drawn at random) and
// random physical cells that mix generated children, explicit addresses and scrambled device
// indices are derived by CellForest and by a reference model: a direct recursive
// transcription of HiveD's defaulting (hived-reference.md §1.2: the address is
// `<parent>/<own>`, the default index `parentIndex * childCellNumber + k`, reset to 0 below a
// node-level cell; node = last component at node level; device index = last component at
// a leaf). Every cell's address, type, level, node name and device index must agree.
//
// PriorityUsage: random leaf priorities against counts recomputed from the leaves.
#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cellalloc/cell_forest.h"
#include "cellalloc/priority_usage.h"
#include "hived/cluster_spec.h"
#include "support/catch.h"
#include "support/property_knobs.h"
#include "unit/cellalloc/test_specs.h"

namespace hived::cellalloc {
namespace {

struct Expected {
  std::string type;
  std::string node;  // empty above node level
  int32_t leaf_index = -1;
};

class RandomSpec {
 public:
  explicit RandomSpec(uint64_t seed) : rng_(seed) {}

  ClusterSpec Make() {
    ClusterSpec spec;
    const int chains = Uniform(1, 3);
    for (int ch = 0; ch < chains; ++ch) {
      const int depth = Uniform(1, 4);  // levels above the leaf
      const int node_level = Uniform(2, depth + 1);
      std::string child = absl::StrCat("LEAF", ch);
      for (int l = 2; l <= depth + 1; ++l) {
        const std::string name = absl::StrCat("C", ch, "-L", l);
        spec.cell_types.push_back({name, child, Uniform(1, 4), l == node_level});
        child = name;
      }
      const int tops = Uniform(1, 3);
      for (int t = 0; t < tops; ++t) {
        PhysicalCellSpec top;
        top.cell_type = child;
        Fill(spec, &top, child, depth + 1, node_level, /*at_top=*/true);
        spec.physical_cells.push_back(std::move(top));
      }
    }
    // Interleave the chains' top cells so default indices and chain order are exercised.
    std::shuffle(spec.physical_cells.begin(), spec.physical_cells.end(), rng_);
    return spec;
  }

 private:
  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  int32_t ChildCount(const ClusterSpec& spec, const std::string& type) {
    for (const CellTypeSpec& t : spec.cell_types) {
      if (t.name == type) return t.child_cell_number;
    }
    return 0;
  }
  std::string ChildType(const ClusterSpec& spec, const std::string& type) {
    for (const CellTypeSpec& t : spec.cell_types) {
      if (t.name == type) return t.child_cell_type;
    }
    return "";
  }

  // Gives `cell` (of `type` at `level`) explicit pieces at random.
  void Fill(const ClusterSpec& spec, PhysicalCellSpec* cell, const std::string& type, int level,
            int node_level, bool at_top) {
    if (level == node_level) {
      // Node names must be unique in a chain: explicit and unique, or left to the default
      // index (unique within a chain above node level, but only when no sibling is named,
      // so a default is used only for top-level nodes).
      if (!at_top || Uniform(0, 1) == 0) cell->cell_address = absl::StrCat("node-", next_node_++);
    } else if (level > node_level && Uniform(0, 3) == 0) {
      cell->cell_address = absl::StrCat("r", next_name_++);
    }
    if (level == 1) return;
    if (Uniform(0, 2) == 0) return;  // children generated
    const int32_t n = ChildCount(spec, type);
    const std::string child_type = ChildType(spec, type);
    std::vector<int32_t> indices(static_cast<size_t>(n));
    for (int32_t k = 0; k < n; ++k) indices[static_cast<size_t>(k)] = 10 + k;
    std::shuffle(indices.begin(), indices.end(), rng_);
    const bool explicit_leaves = Uniform(0, 1) == 0;
    for (int32_t k = 0; k < n; ++k) {
      PhysicalCellSpec child;
      if (level - 1 == 1) {
        // Leaves: all explicit (scrambled) or all defaulted, never mixed (a mix could repeat
        // an index on one node).
        if (explicit_leaves && level == node_level) {
          child.cell_address = std::to_string(indices[static_cast<size_t>(k)]);
        }
      } else if (level - 1 < node_level && Uniform(0, 2) == 0) {
        child.cell_address = absl::StrCat("s", next_name_++);
      }
      Fill(spec, &child, child_type, level - 1, node_level, /*at_top=*/false);
      cell->cell_children.push_back(std::move(child));
    }
  }

  std::mt19937_64 rng_;
  int next_node_ = 0;
  int next_name_ = 0;  // explicit names are unique, so addresses identify cells
};

// HiveD's inferPhysicalCellSpec + buildChildCell, transcribed recursively.
void Reference(const ClusterSpec& spec, const PhysicalCellSpec& cell, const std::string& type,
               int64_t default_index, const std::string& prefix, std::string node,
               std::map<std::string, Expected>* out) {
  const std::string own =
      cell.cell_address.empty() ? std::to_string(default_index) : cell.cell_address;
  const std::string address = prefix + own;
  const CellTypeSpec* t = nullptr;
  for (const CellTypeSpec& candidate : spec.cell_types) {
    if (candidate.name == type) t = &candidate;
  }
  if (t != nullptr && t->is_node_level) node = own.substr(own.rfind('/') + 1);
  Expected e;
  e.type = type;
  e.node = node;
  if (t == nullptr) {
    e.leaf_index = std::stoi(own.substr(own.rfind('/') + 1));
    (*out)[address] = e;
    return;
  }
  (*out)[address] = e;
  const int64_t base = t->is_node_level ? 0 : default_index;
  for (int32_t k = 0; k < t->child_cell_number; ++k) {
    const PhysicalCellSpec empty;
    const PhysicalCellSpec& child =
        cell.cell_children.empty() ? empty : cell.cell_children[static_cast<size_t>(k)];
    Reference(spec, child, t->child_cell_type, base * t->child_cell_number + k, address + "/", node,
              out);
  }
}

TEST_CASE("CellForest property: random specs derive HiveD's addresses, nodes and indices",
          "[cellalloc][property]") {
  const uint64_t seed = GENERATE(
      range(::hived::testing::PropertyFirstSeed(1), ::hived::testing::PropertySeedEnd(1, 200)));
  CAPTURE(seed);
  const ClusterSpec spec = RandomSpec(seed).Make();
  absl::StatusOr<CellForest> forest = CellForest::Build(spec);
  INFO(forest.status().ToString());
  REQUIRE(forest.ok());
  REQUIRE(forest->CheckInvariants().ok());
  std::map<std::string, Expected> expected;
  for (size_t i = 0; i < spec.physical_cells.size(); ++i) {
    Reference(spec, spec.physical_cells[i], spec.physical_cells[i].cell_type,
              static_cast<int64_t>(i), "", "", &expected);
  }
  REQUIRE(static_cast<size_t>(forest->num_cells()) == expected.size());
  for (int32_t i = 0; i < forest->num_cells(); ++i) {
    const CellId c(static_cast<uint32_t>(i));
    const std::string address = forest->address(c);
    auto it = expected.find(address);
    if (it == expected.end()) FAIL("cell " << i << " has unexpected address " << address);
    const Expected& e = it->second;
    const std::string node = forest->node(c).IsNil() ? "" : forest->node_name(forest->node(c));
    if (forest->type_info(forest->type(c)).name != e.type || node != e.node ||
        forest->leaf_index(c) != e.leaf_index) {
      FAIL("cell " << address << ": type/node/index " << forest->type_info(forest->type(c)).name
                   << "/" << node << "/" << forest->leaf_index(c) << ", HiveD says " << e.type
                   << "/" << e.node << "/" << e.leaf_index);
    }
    if (forest->level(c) == 1) {
      CHECK(forest->FindLeaf(forest->chain(c), forest->node(c), forest->leaf_index(c)) == c);
    }
  }
}

TEST_CASE("PriorityUsage property: counts match leaves recomputed from scratch",
          "[cellalloc][property]") {
  const uint64_t seed = GENERATE(
      range(::hived::testing::PropertyFirstSeed(1), ::hived::testing::PropertySeedEnd(1, 20)));
  CAPTURE(seed);
  absl::StatusOr<CellForest> forest = CellForest::Build(testing::RackSpec(1, 2));
  REQUIRE(forest.ok());
  PriorityUsage usage = PriorityUsage::ForForest(*forest);
  std::mt19937_64 rng(seed);
  auto uniform = [&rng](int32_t lo, int32_t hi) {
    return std::uniform_int_distribution<int32_t>(lo, hi)(rng);
  };
  std::vector<CellId> leaves;
  for (int32_t i = 0; i < forest->num_cells(); ++i) {
    if (forest->level(CellId(static_cast<uint32_t>(i))) == 1) {
      leaves.push_back(CellId(static_cast<uint32_t>(i)));
    }
  }
  std::map<uint32_t, Priority> leaf_priority;
  const std::vector<Priority> priorities = {kFreePriority, kFreePriority, -1, 0, 1, 5, 1000};
  for (int64_t step = 0, steps = ::hived::testing::PropertySteps(2000); step < steps; ++step) {
    const CellId leaf =
        leaves[static_cast<size_t>(uniform(0, static_cast<int32_t>(leaves.size()) - 1))];
    const Priority p = priorities[static_cast<size_t>(uniform(0, 6))];
    usage.SetLeafPriority(leaf, p);
    leaf_priority[leaf.value()] = p;
    if (!usage.CheckInvariants().ok()) FAIL("step " << step << ": " << usage.CheckInvariants());
    // Spot-check the queries on a random cell against its leaves.
    const CellId cell(static_cast<uint32_t>(uniform(0, forest->num_cells() - 1)));
    const Priority q = priorities[static_cast<size_t>(uniform(2, 6))];
    int32_t at = 0, above = 0, at_or_above = 0, total = 0;
    Priority max = kFreePriority;
    const uint32_t first = forest->first_leaf(cell).value();
    for (uint32_t k = first; k < first + static_cast<uint32_t>(forest->leaf_count(cell)); ++k) {
      auto it = leaf_priority.find(k);
      if (it == leaf_priority.end() || it->second == kFreePriority) continue;
      ++total;
      if (it->second == q) ++at;
      if (it->second > q) ++above;
      if (it->second >= q) ++at_or_above;
      if (it->second > max) max = it->second;
    }
    if (usage.UsedAt(cell, q) != at || usage.UsedAbove(cell, q) != above ||
        usage.UsedAtOrAbove(cell, q) != at_or_above || usage.UsedTotal(cell) != total ||
        usage.MaxPriority(cell) != max ||
        usage.FreeLeavesFor(cell, q) != forest->leaf_count(cell) - at_or_above) {
      FAIL("step " << step << ": queries on cell " << cell.value() << " disagree");
    }
  }
}

}  // namespace
}  // namespace hived::cellalloc

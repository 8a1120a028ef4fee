// tests/unit/config/config_test_util.h: file helpers and an independent, naive derivation of
// what a spec describes (chains, levels, nodes, leaves, VC cells per level, pinned cells),
// used to check loaded configs against hand-counted facts.
#ifndef HIVED_TESTS_UNIT_CONFIG_CONFIG_TEST_UTIL_H_
#define HIVED_TESTS_UNIT_CONFIG_CONFIG_TEST_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "hived/cluster_spec.h"

namespace hived::testing {

inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Sorted so the tests run in a stable order.
inline std::vector<std::filesystem::path> YamlFiles(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  if (!std::filesystem::is_directory(dir)) return files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The folder holding HiveD's configs (hived-configs/) and the benchmark config
// (bench-configs/), vendored from ../shared into tests/testdata/ so a fresh clone tests them.
inline std::string VendoredConfigsDir() {
  return std::string(HIVED_SOURCE_DIR) + "/tests/testdata";
}

struct ChainFacts {
  int32_t levels = 0;
  int32_t top_cells = 0;
  int64_t nodes = 0;
  int64_t leaves = 0;
  bool operator==(const ChainFacts& o) const {
    return levels == o.levels && top_cells == o.top_cells && nodes == o.nodes && leaves == o.leaves;
  }
};

struct SpecFacts {
  std::vector<std::string> chains;  // first-appearance order
  std::map<std::string, ChainFacts> chain;
  std::map<std::string, int64_t> vc_cells;  // "chain@level" -> cells of all VCs, pinned included
  std::vector<std::string> pinned;          // pinned ids in physical-cell order
};

// A deliberately simple derivation, by recursion over the spec (no shared code with config/).
class FactDeriver {
 public:
  explicit FactDeriver(const ClusterSpec& spec) : spec_(spec) {}

  SpecFacts Derive() {
    SpecFacts facts;
    for (const PhysicalCellSpec& top : spec_.physical_cells) {
      if (facts.chain.count(top.cell_type) == 0) facts.chains.push_back(top.cell_type);
      ChainFacts& c = facts.chain[top.cell_type];
      c.levels = Level(top.cell_type);
      c.top_cells++;
      Count(top, top.cell_type, top.cell_type, &c, &facts);
    }
    for (const VirtualClusterSpec& vc : spec_.virtual_clusters) {
      for (const VirtualCellSpec& cell : vc.virtual_cells) {
        const std::string chain = cell.cell_type.substr(0, cell.cell_type.find('.'));
        const std::string last = cell.cell_type.substr(cell.cell_type.rfind('.') + 1);
        facts.vc_cells[chain + "@" + std::to_string(Level(last))] += cell.cell_number;
      }
      for (const PinnedCellSpec& pin : vc.pinned_cells) {
        facts.vc_cells[pinned_chain_[pin.pinned_cell_id] + "@" +
                       std::to_string(Level(pinned_type_[pin.pinned_cell_id]))] += 1;
      }
    }
    return facts;
  }

 private:
  const CellTypeSpec* Find(const std::string& name) const {
    for (const CellTypeSpec& t : spec_.cell_types) {
      if (t.name == name) return &t;
    }
    return nullptr;
  }
  int32_t Level(const std::string& type) const {
    const CellTypeSpec* t = Find(type);
    return t == nullptr ? 1 : 1 + Level(t->child_cell_type);
  }
  void Count(const PhysicalCellSpec& cell, const std::string& type, const std::string& chain,
             ChainFacts* c, SpecFacts* facts) {
    if (!cell.pinned_cell_id.empty()) {
      facts->pinned.push_back(cell.pinned_cell_id);
      pinned_chain_[cell.pinned_cell_id] = chain;
      pinned_type_[cell.pinned_cell_id] = type;
    }
    const CellTypeSpec* t = Find(type);
    if (t == nullptr) {
      c->leaves++;
      return;
    }
    if (t->is_node_level) c->nodes++;
    if (cell.cell_children.empty()) {
      for (int32_t i = 0; i < t->child_cell_number; ++i) {
        Count(PhysicalCellSpec{}, t->child_cell_type, chain, c, facts);
      }
    }
    for (const PhysicalCellSpec& child : cell.cell_children) {
      Count(child, t->child_cell_type, chain, c, facts);
    }
  }

  const ClusterSpec& spec_;
  std::map<std::string, std::string> pinned_chain_;
  std::map<std::string, std::string> pinned_type_;
};

}  // namespace hived::testing

#endif  // HIVED_TESTS_UNIT_CONFIG_CONFIG_TEST_UTIL_H_

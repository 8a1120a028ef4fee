// hierarchy/analyzer.h: the class behind `AnalyzeClusterSpec` (spec_analysis.h), private to
// hierarchy/. spec_analysis.cc walks the physical cells (chains, nodes, device indices,
// pinned cells); vc_analysis.cc resolves the virtual clusters and computes the capacity.
//
// Not thread-safe; one Analyzer per analysis.
#ifndef HIVED_HIERARCHY_ANALYZER_H_
#define HIVED_HIERARCHY_ANALYZER_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "hierarchy/spec_analysis.h"
#include "hived/cluster_spec.h"
#include "hived/config.h"

namespace hived::hierarchy {

class Analyzer {
 public:
  Analyzer(const ClusterSpec& spec, std::vector<ConfigError>* errors)
      : spec_(spec), errors_(errors) {}

  Analysis Run();

 private:
  struct Chain {
    int32_t type = -1;
    int32_t top_cells = 0;
    std::unordered_map<std::string, int32_t> nodes;  // node name -> origin
  };
  // Device indices claimed on one node for one leaf type.
  struct DeviceRange {
    int64_t lo = 0;
    int64_t hi = 0;  // exclusive
    int32_t origin = 0;
  };
  struct DeviceKey {
    std::string node;
    int32_t leaf_type = -1;
    std::vector<DeviceRange> ranges;
  };
  struct Pinned {
    int32_t chain = -1;
    int32_t type = -1;
    std::string path;
    int32_t claimed_by = -1;  // VC index
    std::string claim_path;
  };
  struct Demand {  // one VC's cells at one chain level
    int32_t vc = -1;
    int32_t chain = -1;
    int32_t level = 0;
    int64_t count = 0;
    std::string path;
  };

  void Report(std::string path, std::string message, std::string hint = "") {
    if (errors_ == nullptr) return;
    ConfigError error;
    error.yaml_path = std::move(path);
    error.message = std::move(message);
    error.hint = std::move(hint);
    errors_->push_back(std::move(error));
  }

  int32_t AddOrigin(std::string path) {
    origins_.push_back(std::move(path));
    return static_cast<int32_t>(origins_.size() - 1);
  }

  void CheckTopLevelCells();
  void WalkCell(const PhysicalCellSpec& cell, int32_t type, const std::string& path, int32_t chain,
                int64_t default_index, const std::string* node, bool in_pinned, int32_t depth);
  void WalkGeneratedAboveNode(int32_t type, int64_t default_index, int32_t chain, int32_t origin);
  // Records a node of a chain; false (and reported) when the chain has it already.
  bool AddNode(int32_t chain, const std::string& name, const std::string& path, int32_t origin,
               bool generated);
  void AddDevices(const std::string& node, int32_t leaf_type, int64_t lo, int64_t hi,
                  int32_t origin);
  void CheckDevices();
  void CheckVirtualClusters();
  void ResolveVirtualCell(int32_t vc, const VirtualCellSpec& cell, const std::string& path);
  void ComputeCapacity();
  std::vector<std::string> ChainNames() const;
  // True when some physical cells were not checked (their errors are reported already).
  bool PhysicalCellsIncomplete() const {
    return spec_.physical_cells.empty() || skipped_top_cells_ > 0 || !generate_;
  }

  const ClusterSpec& spec_;
  std::vector<ConfigError>* errors_;
  TypeTable types_;
  std::vector<Chain> chains_;
  std::unordered_map<int32_t, int32_t> chain_of_type_;  // lookup only
  // Types of top-level cells rejected by an error already reported: references to them
  // (VC paths, pinned ids inside them) would only repeat that error.
  std::unordered_map<int32_t, bool> broken_top_types_;  // lookup only
  int32_t skipped_top_cells_ = 0;
  bool generate_ = true;  // false when the cluster is too large to enumerate
  std::vector<std::string> origins_;
  std::vector<DeviceKey> devices_;
  std::unordered_map<std::string, size_t> device_index_;  // node + '\n' + leaf -> devices_
  std::vector<std::string> pinned_order_;
  std::unordered_map<std::string, Pinned> pinned_;
  std::vector<Demand> demands_;
  CapacityReport capacity_;
};

}  // namespace hived::hierarchy

#endif  // HIVED_HIERARCHY_ANALYZER_H_

// sim/cluster/spec_info.h: facts the simulator needs from a `ClusterSpec` without a scheduler:
// leaf counts per cell type, node sizes per chain, each VC's reserved GPUs, and the specs
// of the baseline policies (a single pool VC, one-VC clusters). The
// hierarchy itself comes from the library (`hived::DescribeCluster`); nothing is re-derived.
//
// Thread safety: plain values after construction.
#ifndef HIVED_SIM_CLUSTER_SPEC_INFO_H_
#define HIVED_SIM_CLUSTER_SPEC_INFO_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "hived/cluster_info.h"
#include "hived/cluster_spec.h"

namespace hived::sim {

class SpecInfo {
 public:
  explicit SpecInfo(const ClusterSpec& spec);

  // Leaves (devices) under one cell of `type`; 1 for a leaf type, 0 for an unknown path.
  int64_t LeafCount(const std::string& type) const;
  // The leaf type at the bottom of `type`'s chain.
  std::string LeafType(const std::string& type) const;
  // GPUs of a node-level cell in the chain with top type `chain`; 0 when it has none.
  int32_t NodeGpus(const std::string& chain) const;

  int32_t vc_count() const { return static_cast<int32_t>(vcs_.size()); }
  const std::string& vc_name(int32_t vc) const { return vcs_[static_cast<size_t>(vc)].name; }
  // -1 when unknown.
  int32_t VcIndex(const std::string& name) const;
  // Leaves reserved by the VC (virtual cells and pinned cells), all leaf types.
  int64_t VcReservedGpus(int32_t vc) const { return vcs_[static_cast<size_t>(vc)].reserved; }
  // Leaves of the VC's virtual cells only (pinned cells serve only jobs that name them).
  int64_t VcVirtualGpus(int32_t vc) const { return vcs_[static_cast<size_t>(vc)].virtual_gpus; }
  // The node size used to split the VC's gangs into pods: the node GPUs of the VC's first
  // chain having `leaf_type` (any type when empty); 0 when the VC has no such chain.
  int32_t VcNodeGpus(int32_t vc, const std::string& leaf_type) const;
  // Largest node size in the cluster for `leaf_type` (any when empty); 0 when none.
  int32_t MaxNodeGpus(const std::string& leaf_type) const;
  int64_t TotalGpus() const { return total_gpus_; }

  // Leaves of the pinned cell `id` (`pinnedCellId`); 0 when the physical cells have no such id.
  int64_t PinnedGpus(const std::string& id) const;
  // The VC whose `pinnedCells` name `id`; -1 when none does.
  int32_t PinnedVc(const std::string& id) const;
  // Each VC's guarantee for a trace naming `named_pins` (any order): the GPUs of its virtual
  // cells plus those of its pinned cells that some job names. A pinned cell no job names
  // serves nothing, so it counts for no policy; one that is named counts for every policy.
  std::vector<int64_t> VcGuarantees(const std::vector<std::string>& named_pins) const;

  // The pool policies': the physical cluster without pinned ids, and one VC `kPoolVc` reserving
  // every top-level cell of every chain.
  ClusterSpec QuotaSpec() const;
  // A cluster per VC: only VC `vc`, on just enough top-level cells of each of its chains to hold
  // its cells (plus the top cells holding its pinned cells), other VCs' pinned ids removed.
  ClusterSpec PrivateSpec(int32_t vc) const;

  static constexpr const char* kPoolVc = "quota-pool";

 private:
  struct Chain {
    std::string top_type;
    std::string leaf_type;
    int32_t node_gpus = 0;
  };
  struct Vc {
    std::string name;
    int64_t reserved = 0;
    int64_t virtual_gpus = 0;
    std::vector<std::string> chains;      // chains of its virtual and pinned cells, config order
    std::vector<std::string> leaf_types;  // parallel to chains
    std::vector<int32_t> node_gpus;       // parallel to chains
  };
  // The type of the pinned cell `id` and its top-level cell index; false when absent.
  bool FindPinned(const std::string& id, std::string* type, int* top) const;

  ClusterSpec spec_;
  ClusterDescription description_;
  // Index into `description_.cell_types` (an index, so a copied SpecInfo stays valid).
  absl::flat_hash_map<std::string, size_t> types_;
  // The description of `type`, or null for a name the spec does not mention.
  const CellTypeDescription* FindType(const std::string& type) const;
  std::vector<Chain> chains_;  // distinct top-level types, config order
  std::vector<Vc> vcs_;
  absl::flat_hash_map<std::string, int32_t> vc_index_;
  int64_t total_gpus_ = 0;
};

}  // namespace hived::sim

#endif  // HIVED_SIM_CLUSTER_SPEC_INFO_H_

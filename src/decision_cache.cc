// DecisionCache: the last kPlaced decision, matched exactly against the Allocate after it.
#include "src/decision_cache.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace hived {

void DecisionCache::Store(std::string_view name, uint64_t epoch, ChainId chain,
                          const std::vector<int32_t>& needs, std::vector<CellId>* pleaves,
                          std::vector<VCellId>* vleaves) {
  name_.assign(name.data(), name.size());
  epoch_ = epoch;
  chain_ = chain;
  needs_ = needs;
  pleaves_.swap(*pleaves);  // swaps keep both buffers' capacity
  vleaves_.swap(*vleaves);
}

bool DecisionCache::Matches(const GroupRequest& request, const Placement& placement,
                            const cellalloc::CellForest& f, uint64_t epoch) const {
  if (epoch_ != epoch || name_ != request.name) return false;
  // The members: the same multiset of pod sizes as scheduled (`needs_` is sorted).
  size_t pods = 0;
  for (const GroupMember& m : request.members) {
    if (m.pod_number <= 0 || m.leaf_cell_number <= 0) return false;
    pods += static_cast<size_t>(m.pod_number);
    if (pods > needs_.size()) return false;
  }
  if (pods != needs_.size() || placement.pods.size() != pods) return false;
  for (const GroupMember& m : request.members) {
    size_t asked = 0;
    for (const GroupMember& o : request.members) {
      if (o.leaf_cell_number == m.leaf_cell_number) asked += static_cast<size_t>(o.pod_number);
    }
    auto range = std::equal_range(needs_.begin(), needs_.end(), m.leaf_cell_number);
    if (static_cast<size_t>(range.second - range.first) != asked) return false;
  }
  if (placement.chain != f.chain_info(chain_).name) return false;
  // Pods in the scheduled order, on the scheduled nodes and devices. Device indices are
  // unique per node and leaf type, so these are exactly the leaves a by-name resolution finds.
  size_t off = 0;
  for (size_t k = 0; k < pods; ++k) {
    const PodPlacement& pod = placement.pods[k];
    const size_t n = static_cast<size_t>(needs_[k]);
    if (pod.leaf_cell_number != needs_[k] || pod.leaf_cell_indices.size() != n) return false;
    if (!pod.preassigned_cell_types.empty() && pod.preassigned_cell_types.size() != n) {
      return false;
    }
    if (pod.node != f.node_name(f.node(pleaves_[off]))) return false;
    for (size_t i = 0; i < n; ++i, ++off) {
      if (f.leaf_index(pleaves_[off]) != pod.leaf_cell_indices[i]) return false;
    }
  }
  return true;
}

absl::Status DecisionCache::CheckInvariants() const {
  if (epoch_ == kNever) return absl::OkStatus();
  if (!std::is_sorted(needs_.begin(), needs_.end())) {
    return absl::InternalError(absl::StrCat("(1) cached pod sizes of ", name_, " not ascending"));
  }
  size_t leaves = 0;
  for (int32_t n : needs_) leaves += static_cast<size_t>(n);
  if (pleaves_.size() != leaves || vleaves_.size() != leaves) {
    return absl::InternalError(absl::StrCat("(1) cached decision of ", name_, " has ",
                                            pleaves_.size(), " physical and ", vleaves_.size(),
                                            " virtual leaves for ", leaves, " requested"));
  }
  return absl::OkStatus();
}

}  // namespace hived

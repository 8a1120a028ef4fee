// Reservations: comparing an Allocate with the reservation it claims, and the Filtering
// phase's last kPlaced decision, matched exactly against the Allocate after it.
#include "src/reservations.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/internal/strings.h"
#include "src/rw_lock.h"

namespace hived {

namespace {

// Pod sizes of `members`, ascending.
std::vector<int32_t> PodSizes(const std::vector<GroupMember>& members) {
  std::vector<int32_t> sizes;
  for (const GroupMember& m : members) {
    for (int32_t k = 0; k < m.pod_number && sizes.size() <= static_cast<size_t>(kMaxGroupPods);
         ++k) {
      sizes.push_back(m.leaf_cell_number);
    }
  }
  std::sort(sizes.begin(), sizes.end());
  return sizes;
}

// Pods of `m`'s shape (leaf cells, share, GPU memory, CPU, host memory, MIG profile).
int64_t PodsShaped(const std::vector<GroupMember>& members, const GroupMember& m) {
  int64_t n = 0;
  for (const GroupMember& o : members) {
    if (o.leaf_cell_number == m.leaf_cell_number && o.gpu_milli == m.gpu_milli &&
        o.gpu_memory_mib == m.gpu_memory_mib && o.cpu_milli == m.cpu_milli &&
        o.memory_mib == m.memory_mib && o.mig_profile == m.mig_profile) {
      n += o.pod_number;
    }
  }
  return n;
}

// The same multiset of pod shapes, without allocating (the Allocate of every reservation).
bool SameShapes(const std::vector<GroupMember>& a, const std::vector<GroupMember>& b) {
  for (const GroupMember& m : a) {
    if (PodsShaped(a, m) != PodsShaped(b, m)) return false;
  }
  for (const GroupMember& m : b) {
    if (PodsShaped(a, m) != PodsShaped(b, m)) return false;
  }
  return true;
}

std::string Members(const std::vector<int32_t>& sizes) {
  return absl::StrCat("pods of [", absl::StrJoin(sizes, ","), "] leaf cells");
}

}  // namespace

std::string Reservations::RequestDifference(const Group& g, const GroupRequest& r) {
  static const std::vector<std::string> kNoTypes;  // a whole group has one leaf type or none
  return Difference({g.vc_name(), g.priority, g.members, g.notes().pinned_id, g.notes().leaf_type,
                     kNoTypes, g.lazy},
                    r);
}

std::string Reservations::RequestDifference(const GroupRequest& reserved, const GroupRequest& r) {
  return Difference({reserved.vc, reserved.priority, reserved.members, reserved.pinned_cell_id,
                     reserved.leaf_cell_type, reserved.leaf_cell_types, reserved.lazy_preemption},
                    r);
}

std::string Reservations::Difference(const Reserved& g, const GroupRequest& r) {
  if (r.vc != g.vc) return absl::StrCat("VC ", r.vc, ", reserved in VC ", ToAbsl(g.vc));
  if (r.priority != g.priority) {
    return absl::StrCat("priority ", r.priority, ", reserved at ", g.priority);
  }
  if (!SameShapes(r.members, g.members)) {
    const std::vector<int32_t> given = PodSizes(r.members);
    const std::vector<int32_t> reserved = PodSizes(g.members);
    if (given != reserved)
      return absl::StrCat(Members(given), ", reserved for ", Members(reserved));
    return "other GPU shares, GPU memory, CPU, host memory or MIG profiles than reserved";
  }
  if (r.pinned_cell_id != g.pinned_cell_id) {
    return absl::StrCat("pinned cell '", r.pinned_cell_id, "', reserved for '",
                        ToAbsl(g.pinned_cell_id), "'");
  }
  if (r.leaf_cell_type != g.leaf_cell_type) {
    return absl::StrCat("leaf cell type '", r.leaf_cell_type, "', reserved for '",
                        ToAbsl(g.leaf_cell_type), "'");
  }
  if (r.leaf_cell_types != g.leaf_cell_types) {
    return absl::StrCat("leaf cell types [", absl::StrJoin(r.leaf_cell_types, ","),
                        "], reserved for [", absl::StrJoin(g.leaf_cell_types, ","), "]");
  }
  if (r.lazy_preemption != g.lazy_preemption) {
    return absl::StrCat("lazy preemption ", r.lazy_preemption ? "on" : "off", ", reserved with it ",
                        g.lazy_preemption ? "on" : "off");
  }
  return std::string();
}

std::string Reservations::PlacementDifference(const Placement& reserved, const Placement& given) {
  if (given.chain != reserved.chain) {
    return absl::StrCat("chain ", given.chain, ", reserved in chain ", reserved.chain);
  }
  if (given.pods.size() != reserved.pods.size()) {
    return absl::StrCat(given.pods.size(), " pods, reserved ", reserved.pods.size());
  }
  for (size_t k = 0; k < given.pods.size(); ++k) {
    const PodPlacement& a = given.pods[k];
    const PodPlacement& b = reserved.pods[k];
    if (a.node != b.node || a.leaf_cell_number != b.leaf_cell_number ||
        a.leaf_cell_indices != b.leaf_cell_indices ||
        (!a.preassigned_cell_types.empty() &&
         a.preassigned_cell_types != b.preassigned_cell_types)) {
      return absl::StrCat("pod ", k, " on node ", a.node, " leaf cells [",
                          absl::StrJoin(a.leaf_cell_indices, ","), "], reserved on node ", b.node,
                          " leaf cells [", absl::StrJoin(b.leaf_cell_indices, ","), "]",
                          a.node == b.node && a.leaf_cell_indices == b.leaf_cell_indices
                              ? " (other pod size or preassigned cell types)"
                              : "");
    }
  }
  return std::string();
}

void Reservations::StoreFiltered(const GroupRequest& request, uint64_t epoch, ChainId chain,
                                 const std::vector<int32_t>& needs, std::vector<CellId>* pleaves,
                                 std::vector<VCellId>* vleaves) const {
  Filtered& s = filtered_[ThisThreadNumber() % kFilteredSlots];
  std::lock_guard<std::mutex> hold(s.mu);
  s.epoch = epoch;
  s.name.assign(request.name);  // the assignments reuse the slot's capacity
  s.vc.assign(request.vc);
  s.priority = request.priority;
  s.pinned_cell_id.assign(request.pinned_cell_id);
  s.leaf_cell_type.assign(request.leaf_cell_type);
  s.chain = chain;
  s.needs.assign(needs.begin(), needs.end());
  s.pleaves.swap(*pleaves);  // swaps keep both buffers' capacity
  s.vleaves.swap(*vleaves);
}

void Reservations::Invalidate() {
  for (Filtered& s : filtered_) {
    if (s.epoch != kNever) s.epoch = kNever;  // a slot already stale is not written
  }
}

bool Reservations::MatchesFiltered(const GroupRequest& request, const Placement& placement,
                                   const cellalloc::CellForest& f, uint64_t epoch) const {
  for (const Filtered& s : filtered_) {
    if (s.epoch == epoch && Matches(s, request, placement, f)) {
      matched_ = &s;
      return true;
    }
  }
  return false;
}

bool Reservations::Matches(const Filtered& s, const GroupRequest& request,
                           const Placement& placement, const cellalloc::CellForest& f) {
  if (s.name != request.name || s.vc != request.vc || s.priority != request.priority ||
      s.pinned_cell_id != request.pinned_cell_id || s.leaf_cell_type != request.leaf_cell_type) {
    return false;
  }
  const std::vector<int32_t>& needs = s.needs;
  // The members: the same multiset of pod sizes as scheduled (`needs` is sorted).
  size_t pods = 0;
  for (const GroupMember& m : request.members) {
    if (m.pod_number <= 0 || m.leaf_cell_number <= 0) return false;
    pods += static_cast<size_t>(m.pod_number);
    if (pods > needs.size()) return false;
  }
  if (pods != needs.size() || placement.pods.size() != pods) return false;
  for (const GroupMember& m : request.members) {
    size_t asked = 0;
    for (const GroupMember& o : request.members) {
      if (o.leaf_cell_number == m.leaf_cell_number) asked += static_cast<size_t>(o.pod_number);
    }
    auto range = std::equal_range(needs.begin(), needs.end(), m.leaf_cell_number);
    if (static_cast<size_t>(range.second - range.first) != asked) return false;
  }
  if (placement.chain != f.chain_info(s.chain).name) return false;
  // Pods in the scheduled order, on the scheduled nodes and devices. Device indices are
  // unique per node and leaf type, so these are exactly the leaves a by-name resolution finds.
  size_t off = 0;
  for (size_t k = 0; k < pods; ++k) {
    const PodPlacement& pod = placement.pods[k];
    const size_t n = static_cast<size_t>(needs[k]);
    if (pod.leaf_cell_number != needs[k] || pod.leaf_cell_indices.size() != n) return false;
    if (!pod.preassigned_cell_types.empty() && pod.preassigned_cell_types.size() != n) {
      return false;
    }
    if (pod.node != f.node_name(f.node(s.pleaves[off]))) return false;
    for (size_t i = 0; i < n; ++i, ++off) {
      if (f.leaf_index(s.pleaves[off]) != pod.leaf_cell_indices[i]) return false;
    }
  }
  return true;
}

void Reservations::NoteCancelled(std::string_view group, std::string_view by) {
  cancelled_[std::string(group)] = std::string(by);
}

std::string Reservations::TakeCancelled(std::string_view group) {
  if (cancelled_.empty()) return std::string();
  auto it = cancelled_.find(group);
  if (it == cancelled_.end()) return std::string();
  std::string by = std::move(it->second);
  cancelled_.erase(it);
  return by;
}

const std::string* Reservations::CancelledBy(std::string_view group) const {
  if (cancelled_.empty()) return nullptr;
  auto it = cancelled_.find(group);
  return it == cancelled_.end() ? nullptr : &it->second;
}

std::string Reservations::CancelledMessage(std::string_view group, std::string_view by) {
  return absl::StrCat("group ", ToAbsl(group), " has no reservation: it was cancelled by group ",
                      ToAbsl(by),
                      ", whose decision overlapped it while it was preempting; Schedule it again");
}

absl::Status Reservations::CheckInvariants() const {
  for (Filtered& s : filtered_) {
    std::lock_guard<std::mutex> hold(s.mu);  // filters may store meanwhile
    if (s.epoch == kNever) continue;
    if (!std::is_sorted(s.needs.begin(), s.needs.end())) {
      return absl::InternalError(
          absl::StrCat("(1) Filtering decision's pod sizes of ", s.name, " not ascending"));
    }
    size_t leaves = 0;
    for (int32_t n : s.needs) leaves += static_cast<size_t>(n);
    if (s.pleaves.size() != leaves || s.vleaves.size() != leaves) {
      return absl::InternalError(absl::StrCat("(1) Filtering decision of ", s.name, " has ",
                                              s.pleaves.size(), " physical and ", s.vleaves.size(),
                                              " virtual leaves for ", leaves, " requested"));
    }
  }
  return absl::OkStatus();
}

}  // namespace hived

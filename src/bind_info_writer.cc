// ExportHivedBindInfo: a running group's record -> HiveD's `pod-bind-info` and
// `pod-scheduling-spec` annotations for one of its pods (the inverse of
// `ImportHivedBindInfo`, config/bind_info.cc). Written by hand, every string double-quoted:
// no YAML library is needed to write, and any name survives the round trip.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "hived/state.h"

namespace hived {
namespace {

// A YAML double-quoted scalar.
std::string Quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (u < 0x20 || u == 0x7f) {
      constexpr char kHex[] = "0123456789abcdef";
      out.append("\\x");
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 0xfu]);
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
  return out;
}

}  // namespace

absl::StatusOr<HivedAnnotations> ExportHivedBindInfo(const GroupRecord& record, int32_t pod_index) {
  const GroupRequest& q = record.request;
  const std::vector<PodPlacement>& pods = record.placement.pods;
  const auto fail = [&q](const std::string& problem) {
    return absl::InvalidArgumentError(absl::StrCat(
        "group ", q.name.substr(0, static_cast<size_t>(kMaxQuotedInputBytes)), ": ", problem));
  };
  if (pod_index < 0 || static_cast<size_t>(pod_index) >= pods.size()) {
    return fail(absl::StrCat("no pod ", pod_index, " (it has ", pods.size(), ")"));
  }
  if (q.members.empty()) return fail("no members");
  for (const GroupMember& m : q.members) {
    if (m.leaf_cell_number <= 0 || m.gpu_milli != 0 || !m.mig_profile.empty() ||
        m.pod_number <= 0) {
      return fail("only whole-GPU gangs have a HiveD bind info (not fractional, MIG or CPU-only)");
    }
  }
  // affinityGroupBindInfo: one entry per member, its pods the placement's pods of that size
  // in placement order (ImportHivedBindInfo makes one member per entry).
  std::vector<bool> used(pods.size(), false);
  std::string groups;
  for (const GroupMember& m : q.members) {
    absl::StrAppend(&groups, "- podPlacements:\n");
    int32_t found = 0;
    for (size_t i = 0; i < pods.size() && found < m.pod_number; ++i) {
      const PodPlacement& pod = pods[i];
      if (used[i] || pod.leaf_cell_number != m.leaf_cell_number) continue;
      if (pod.leaf_cell_indices.size() != static_cast<size_t>(m.leaf_cell_number)) {
        return fail(absl::StrCat("pod ", i, " has ", pod.leaf_cell_indices.size(),
                                 " leaf cells, not ", m.leaf_cell_number));
      }
      used[i] = true;
      ++found;
      absl::StrAppend(&groups, "  - physicalNode: ", Quoted(pod.node),
                      "\n    physicalLeafCellIndices: [");
      for (size_t k = 0; k < pod.leaf_cell_indices.size(); ++k) {
        absl::StrAppend(&groups, k == 0 ? "" : ", ", pod.leaf_cell_indices[k]);
      }
      absl::StrAppend(&groups, "]\n");
      if (!pod.preassigned_cell_types.empty()) {
        absl::StrAppend(&groups, "    preassignedCellTypes: [");
        for (size_t k = 0; k < pod.preassigned_cell_types.size(); ++k) {
          absl::StrAppend(&groups, k == 0 ? "" : ", ", Quoted(pod.preassigned_cell_types[k]));
        }
        absl::StrAppend(&groups, "]\n");
      }
    }
    if (found != m.pod_number) {
      return fail(absl::StrCat("the placement lacks pods of ", m.leaf_cell_number,
                               " leaf cells for its members"));
    }
  }
  for (size_t i = 0; i < pods.size(); ++i) {
    if (!used[i]) return fail(absl::StrCat("pod ", i, " matches no member"));
  }
  const PodPlacement& mine = pods[static_cast<size_t>(pod_index)];
  HivedAnnotations out;
  absl::StrAppend(&out.bind_info_yaml, "node: ", Quoted(mine.node), "\nleafCellIsolation: [");
  for (size_t k = 0; k < mine.leaf_cell_indices.size(); ++k) {
    absl::StrAppend(&out.bind_info_yaml, k == 0 ? "" : ", ", mine.leaf_cell_indices[k]);
  }
  absl::StrAppend(&out.bind_info_yaml, "]\ncellChain: ", Quoted(record.placement.chain),
                  "\naffinityGroupBindInfo:\n", groups);
  absl::StrAppend(&out.scheduling_spec_yaml, "virtualCluster: ", Quoted(q.vc),
                  "\npriority: ", q.priority, "\n");
  if (!q.leaf_cell_type.empty()) {
    absl::StrAppend(&out.scheduling_spec_yaml, "leafCellType: ", Quoted(q.leaf_cell_type), "\n");
  }
  if (!q.pinned_cell_id.empty()) {
    absl::StrAppend(&out.scheduling_spec_yaml, "pinnedCellId: ", Quoted(q.pinned_cell_id), "\n");
  }
  absl::StrAppend(&out.scheduling_spec_yaml,
                  "lazyPreemptionEnable: ", q.lazy_preemption ? "true" : "false",
                  "\naffinityGroup:\n  name: ", Quoted(q.name), "\n  members:\n");
  for (const GroupMember& m : q.members) {
    absl::StrAppend(&out.scheduling_spec_yaml, "  - podNumber: ", m.pod_number,
                    "\n    leafCellNumber: ", m.leaf_cell_number, "\n");
  }
  return out;
}

}  // namespace hived

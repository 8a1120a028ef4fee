// Requests: the one validation every request passes (Schedule and Allocate), parsing into
// per-pod needs, and the infeasibility check of a view.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/internal/check.h"
#include "src/internal/status_macros.h"
#include "src/scheduler_impl.h"

namespace hived {

using cellalloc::ChainInfo;

absl::Status ValidateRequest(const GroupRequest& r) {
  if (r.name.empty()) return absl::InvalidArgumentError("group name is empty");
  if (r.priority < kOpportunisticPriority || r.priority > kMaxGuaranteedPriority) {
    return absl::InvalidArgumentError(absl::StrCat("group ", r.name, ": priority ", r.priority,
                                                   " is outside -1..", kMaxGuaranteedPriority));
  }
  if (r.members.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("group ", r.name, " has no members"));
  }
  int64_t pods = 0;
  bool fractional = false;
  for (const GroupMember& m : r.members) {
    if (m.gpu_milli < 0 || (m.gpu_milli == 0 && m.mig_profile.empty() &&
                            (m.gpu_memory_mib != 0 || m.cpu_milli != 0 || m.memory_mib != 0))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "group ", r.name, ": gpu_memory_mib, cpu_milli and memory_mib are for fractional ",
          "pods (gpu_milli 1..1000) only, and gpu_milli cannot be negative"));
    }
    fractional = fractional || m.gpu_milli > 0 || !m.mig_profile.empty();
    if (m.pod_number <= 0 || m.leaf_cell_number <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("group ", r.name, ": podNumber and leafCellNumber must be positive (got ",
                       m.pod_number, " x ", m.leaf_cell_number, ")"));
    }
    pods += m.pod_number;  // int64: no overflow, members are few
    if (pods > kMaxGroupPods) {
      return absl::InvalidArgumentError(absl::StrCat(
          "group ", r.name, ": too many pods (more than ", kMaxGroupPods, " in all members)"));
    }
  }
  if (!fractional && !r.leaf_cell_types.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "group ", r.name, ": leaf_cell_types is for fractional groups; use leaf_cell_type"));
  }
  return absl::OkStatus();
}

std::vector<uint32_t> PodsInNeedsOrder(const GroupRequest& r) {
  std::vector<uint32_t> order;
  std::vector<int32_t> leaves;  // per pod in member order
  for (const GroupMember& m : r.members) {
    for (int32_t k = 0; k < m.pod_number; ++k) {
      order.push_back(static_cast<uint32_t>(leaves.size()));
      leaves.push_back(m.leaf_cell_number);
    }
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return leaves[a] < leaves[b]; });
  return order;
}

absl::StatusOr<SchedulerImpl::Req> SchedulerImpl::ParseRequest(const GroupRequest& r) const {
  return ParseRequest(r, &needs_pool_);  // a buffer kept from the previous request
}

absl::StatusOr<SchedulerImpl::Req> SchedulerImpl::ParseRequest(
    const GroupRequest& r, std::vector<int32_t>* needs_buffer) const {
  HIVED_RETURN_IF_ERROR(ValidateRequest(r));
  Req req;
  req.raw = &r;
  req.needs.swap(*needs_buffer);
  req.needs.clear();
  req.vc = vclusters_.FindVc(r.vc);
  if (req.vc.IsNil()) return absl::NotFoundError(absl::StrCat("VC ", r.vc, " does not exist"));
  req.guaranteed = r.priority >= kMinGuaranteedPriority;
  for (const GroupMember& m : r.members) {
    for (int32_t k = 0; k < m.pod_number; ++k) req.needs.push_back(m.leaf_cell_number);
  }
  // Ascending: the same sequence as the leaf counts of `PodsInNeedsOrder(r)` (equal counts
  // are interchangeable here; the positions matter only to a `NodeRoom`'s per-pod asks).
  std::sort(req.needs.begin(), req.needs.end());
  const Vc& vc = vclusters_.vc(req.vc);
  const cellalloc::CellForest& f = *forest_;
  int32_t largest = 0;
  auto consider_chain = [&](ChainId ch) {
    const ChainInfo& info = f.chain_info(ch);
    largest =
        std::max(largest, f.type_info(info.types[static_cast<size_t>(info.node_level)]).leaf_count);
  };
  if (!r.pinned_cell_id.empty()) {
    if (!req.guaranteed) {
      return absl::InvalidArgumentError(absl::StrCat(
          "group ", r.name, ": an opportunistic group cannot use pinned cell ", r.pinned_cell_id));
    }
    auto p = vc.pinned.find(r.pinned_cell_id);
    if (p == vc.pinned.end()) {
      return absl::NotFoundError(
          absl::StrCat("VC ", r.vc, " does not have pinned cell ", r.pinned_cell_id));
    }
    req.pinned_root = p->second;
    consider_chain(vclusters_.cell(p->second).chain);
  } else if (!r.leaf_cell_type.empty()) {
    const std::vector<ChainId>& chains = f.ChainsOfLeafType(r.leaf_cell_type);
    if (chains.empty()) {
      return absl::NotFoundError(
          absl::StrCat("leaf cell type ", r.leaf_cell_type, " does not exist in the cluster"));
    }
    bool vc_has = false;
    for (ChainId ch : chains) {
      consider_chain(ch);
      vc_has = vc_has || vc.chain_view[ch.value()] >= 0;
    }
    if (req.guaranteed && !vc_has) {
      return absl::InvalidArgumentError(
          absl::StrCat("VC ", r.vc, " does not have leaf cell type ", r.leaf_cell_type));
    }
  } else {
    bool vc_has = false;
    for (int32_t c = 0; c < f.num_chains(); ++c) {
      consider_chain(ChainId(static_cast<uint32_t>(c)));
      vc_has = vc_has || vc.chain_view[static_cast<size_t>(c)] >= 0;
    }
    if (req.guaranteed && !vc_has) {
      return absl::InvalidArgumentError(absl::StrCat(
          "VC ", r.vc, " has no virtual cells outside pinned cells; set pinnedCellId"));
    }
  }
  if (req.needs.back() > largest) {
    return absl::InvalidArgumentError(
        absl::StrCat("group ", r.name, ": a pod needs ", req.needs.back(),
                     " leaf cells but the largest node of the requested type has ", largest));
  }
  req.has_suggested = r.suggested_nodes.has_value();
  return req;
}

std::string SchedulerImpl::Infeasibility(const Req& req, const View& view, ReasonCode* code) const {
  // The checks first: the message is built only when the request is infeasible (this runs
  // for every chain tried, so the feasible case must not pay for string formatting).
  const int32_t largest = view.index.max_total();
  int64_t total = 0;
  for (int32_t n : req.needs) total += n;
  const bool too_big_pod = req.needs.back() > largest;
  if (!too_big_pod && total <= view.total_leaves) return std::string();
  const cellalloc::CellForest& f = *forest_;
  const ChainInfo& info = f.chain_info(view.chain);
  std::string where =
      view.physical ? absl::StrCat("chain ", info.name)
                    : absl::StrCat("VC ", vclusters_.vc(view.vc).name, ", chain ", info.name,
                                   req.pinned_root != kNilId
                                       ? absl::StrCat(", pinned cell ", req.raw->pinned_cell_id)
                                       : std::string());
  *code = too_big_pod ? ReasonCode::kPodTooLarge : ReasonCode::kGroupTooLarge;
  if (too_big_pod) {
    return absl::StrCat(where, ": a pod needs ", req.needs.back(),
                        " leaf cells on one node but the largest node ",
                        view.physical ? "" : "the VC has ", "has ", largest);
  }
  return absl::StrCat(where, ": the group needs ", total, " leaf cells but ",
                      view.physical ? "the chain has " : "the VC reserves ", view.total_leaves);
}

}  // namespace hived

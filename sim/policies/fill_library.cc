#include "sim/policies/fill_library.h"

#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hived/scheduler.h"
#include "sim/trace/openb_config.h"

namespace hived::sim {
namespace {

class LibraryPolicy : public FillPolicy {
 public:
  LibraryPolicy(const OpenbNodeList& nodes, std::unique_ptr<Scheduler> scheduler)
      : scheduler_(std::move(scheduler)), models_(nodes.models) {
    int32_t index = 0;
    for (const OpenbNode& n : nodes.nodes) {
      if (n.gpus > 0) node_index_[n.name] = index;
      ++index;
    }
  }

  FillChoice Choose(const FillCluster& cluster, const FillPod& pod,
                    const std::vector<int32_t>& /*feasible*/) override {
    GroupRequest r;
    r.name = absl::StrCat("pod-", next_++);
    r.vc = "openb";
    r.priority = 0;
    std::vector<std::string> types;
    for (size_t m = 0; m < models_.size(); ++m) {
      if (pod.model_mask >> m & 1U) types.push_back(models_[m]);
    }
    const bool any = types.size() == models_.size();
    GroupMember member{1, pod.num_gpu, 0, 0, pod.cpu_milli, pod.memory_mib};
    if (pod.IsSharing()) {
      member.gpu_milli = pod.gpu_milli;
      if (!any) r.leaf_cell_types = types;
    }
    r.members = {member};
    // Whole-GPU pods name one leaf type: each allowed model in turn (any: one try).
    std::vector<std::string> tries = {""};
    if (pod.num_gpu > 0 && !pod.IsSharing() && !any) tries = types;
    for (const std::string& type : tries) {
      r.leaf_cell_type = type;
      absl::StatusOr<ScheduleResult> res = scheduler_->Schedule(r, Phase::kFiltering);
      if (!res.ok() || res->outcome != Outcome::kPlaced) continue;
      absl::StatusOr<AllocateInfo> info = scheduler_->Allocate(r, res->placement);
      if (!info.ok()) {
        error_ = info.status();
        return {};
      }
      return Mirror(cluster, pod, r.name, res->placement);
    }
    return {};
  }

  void Removed(const FillCluster& /*cluster*/, const FillPod& pod,
               const FillChoice& choice) override {
    auto it = names_.find(Where(pod, choice));
    if (it == names_.end() || it->second.empty()) {
      error_ = absl::InternalError("fill library: a removed pod was never placed");
      return;
    }
    const std::string name = std::move(it->second.back());
    it->second.pop_back();
    if (absl::Status s = scheduler_->Release(name); !s.ok()) error_ = s;
  }

  absl::Status Check() const override {
    if (!error_.ok()) return error_;
    return scheduler_->CheckInvariants();
  }

 private:
  FillChoice Mirror(const FillCluster& cluster, const FillPod& pod, const std::string& name,
                    const Placement& placement) {
    FillChoice c;
    if (placement.pods.size() != 1) {
      error_ = absl::InternalError(
          absl::StrCat("fill library: ", name, " placed as ", placement.pods.size(), " pods"));
      return {};
    }
    const PodPlacement& p = placement.pods[0];
    auto it = node_index_.find(p.node);
    if (it == node_index_.end()) {
      error_ = absl::InternalError(absl::StrCat("fill library: unknown node ", p.node));
      return {};
    }
    c.node = it->second;
    for (int32_t i : p.leaf_cell_indices) c.gpus |= uint64_t{1} << i;
    bool fits = cluster.Fits(c.node, pod);
    if (pod.IsSharing()) {
      fits = fits && p.leaf_cell_indices.size() == 1 &&
             cluster.gpu_left(c.node)[p.leaf_cell_indices[0]] >= pod.gpu_milli;
    } else {
      for (int32_t i : p.leaf_cell_indices) {
        fits = fits && cluster.gpu_left(c.node)[i] == kMilliPerGpu;
      }
      fits = fits && static_cast<int32_t>(p.leaf_cell_indices.size()) == pod.num_gpu;
    }
    if (!fits) {
      error_ = absl::InternalError(absl::StrCat("fill library: ", name, " placed on ", p.node,
                                                " where the fill model finds it does not fit"));
      return {};
    }
    names_[Where(pod, c)].push_back(name);
    return c;
  }

  // Pods of one shape on the same GPUs are interchangeable: any of their groups is released.
  using Key = std::tuple<int32_t, uint64_t, int64_t, int64_t, int32_t, int32_t>;
  static Key Where(const FillPod& pod, const FillChoice& c) {
    return Key{c.node, c.gpus, pod.cpu_milli, pod.memory_mib, pod.gpu_milli, pod.num_gpu};
  }

  std::unique_ptr<Scheduler> scheduler_;
  std::vector<std::string> models_;
  std::map<std::string, int32_t> node_index_;
  std::map<Key, std::vector<std::string>> names_;  // for Removed
  uint64_t next_ = 0;
  absl::Status error_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<FillPolicy>> MakeLibraryFillPolicy(const OpenbNodeList& nodes) {
  absl::StatusOr<OpenbConfig> config = BuildOpenbConfig(nodes);
  if (!config.ok()) return config.status();
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler = Scheduler::Create(config->spec);
  if (!scheduler.ok()) return scheduler.status();
  return std::unique_ptr<FillPolicy>(std::make_unique<LibraryPolicy>(nodes, *std::move(scheduler)));
}

}  // namespace hived::sim

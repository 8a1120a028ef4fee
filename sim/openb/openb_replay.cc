// The openb pod replay's format adapter: the fill model (sim/policies/fill_cluster.h and a
// fill policy) as the engine's `PodBackend`; the replay itself is the engine's
// (sim/engine/pod_replay.h).
#include "sim/openb/openb_replay.h"

#include <memory>
#include <random>
#include <utility>

#include "absl/strings/str_cat.h"
#include "sim/openb/fill_experiment.h"
#include "sim/policies/fgd_frag.h"
#include "sim/policies/fill_cluster.h"

namespace hived::sim {
namespace {

// The fill model of an openb node list, placing by a fill policy. Keeps the FGD
// fragmentation of every node up to date for the timeline.
class FillBackend : public PodBackend {
 public:
  FillBackend(const OpenbNodeList& nodes, std::vector<FillPod> pods,
              const OpenbReplayOptions& options)
      : pods_(RequestsUnder(options.sharing, std::move(pods))),
        cluster_(nodes),
        shapes_(AssignFillShapes(&pods_)),
        frag_(TypicalPods(pods_, options.typical_coverage),
              static_cast<int32_t>(nodes.models.size())),
        rng_(options.seed),
        policy_(MakeFillPolicy(options.policy,
                               {&rng_, &frag_, shapes_, &pods_, options.typical_coverage,
                                static_cast<int32_t>(nodes.models.size()), &nodes},
                               cluster_.node_count())),
        choice_(pods_.size()),
        node_frag_(static_cast<size_t>(cluster_.node_count())) {
    for (int32_t n = 0; n < cluster_.node_count(); ++n) {
      UpdateFrag(n);
      gpus_ += cluster_.node(n).gpus;
    }
  }

  int32_t gpu_count() const override { return gpus_; }
  int32_t pod_gpus(int32_t pod) const override { return pods_[static_cast<size_t>(pod)].num_gpu; }

  bool TryPlace(int32_t i, int32_t only_node, PodPlacement* placement) override {
    const FillPod& pod = pods_[static_cast<size_t>(i)];
    feasible_.clear();
    if (only_node >= 0) {
      if (cluster_.Fits(only_node, pod)) feasible_.push_back(only_node);
    } else {
      for (int32_t n = 0; n < cluster_.node_count(); ++n) {
        if (cluster_.Fits(n, pod)) feasible_.push_back(n);
      }
    }
    if (feasible_.empty()) return false;
    const FillChoice choice = policy_->Choose(cluster_, pod, feasible_);
    if (choice.node < 0) return false;
    cluster_.Place(pod, choice.node, choice.gpus);
    policy_->Placed(cluster_, pod, choice);
    UpdateFrag(choice.node);
    choice_[static_cast<size_t>(i)] = choice;
    *placement = {choice.node, choice.gpus, cluster_.node(choice.node).first_gpu};
    return true;
  }

  void Remove(int32_t i) override {
    const FillPod& pod = pods_[static_cast<size_t>(i)];
    const FillChoice choice = choice_[static_cast<size_t>(i)];
    cluster_.Remove(pod, choice.node, choice.gpus);
    policy_->Removed(cluster_, pod, choice);
    UpdateFrag(choice.node);
  }

  double allocation_ratio() const override { return cluster_.allocation_ratio(); }
  double fragmentation() const override {
    return total_frag_ / static_cast<double>(cluster_.capacity_milli());
  }

  absl::Status Finish() const override {
    if (cluster_.allocated_milli() != 0) {
      return absl::InternalError("replay: GPU milli still allocated after the last departure");
    }
    if (absl::Status s = cluster_.CheckInvariants(); !s.ok()) return s;
    return policy_->Check();
  }

 private:
  // The pods with the GPU requests `mode` places (exclusive: whole GPUs; mig: instances).
  static std::vector<FillPod> RequestsUnder(SharingMode mode, std::vector<FillPod> pods) {
    for (FillPod& p : pods) {
      if (p.num_gpu == 1) p.gpu_milli = SharingRequestMilli(mode, p.gpu_milli);
    }
    return pods;
  }

  void UpdateFrag(int32_t n) {
    const FillCluster::Node& nd = cluster_.node(n);
    double& f = node_frag_[static_cast<size_t>(n)];
    total_frag_ -= f;
    f = frag_.NodeFrag(nd.model, nd.cpu_left, cluster_.gpu_left(n), nd.gpus);
    total_frag_ += f;
  }

  std::vector<FillPod> pods_;
  FillCluster cluster_;
  int32_t shapes_;
  FragMeasure frag_;
  std::mt19937_64 rng_;
  std::unique_ptr<FillPolicy> policy_;
  std::vector<FillChoice> choice_;  // per pod: where it was last placed
  std::vector<double> node_frag_;
  std::vector<int32_t> feasible_;
  double total_frag_ = 0;
  int32_t gpus_ = 0;
};

}  // namespace

absl::StatusOr<OpenbReplayResult> ReplayOpenb(const OpenbNodeList& nodes, const OpenbPodList& list,
                                              const std::vector<FillPod>& pods,
                                              const OpenbReplayOptions& options) {
  if (!list.stats.has_times) {
    return absl::InvalidArgumentError(
        absl::StrCat(list.file,
                     ": this pod list has no creation or deletion times (the 5-column layout); "
                     "it can be used by `fill`, not replayed"));
  }
  FillBackend backend(nodes, pods, options);
  return ReplayPods(list, &backend,
                    {options.sample_seconds, options.sharing, options.sharing_params});
}

}  // namespace hived::sim

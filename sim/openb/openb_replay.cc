// The openb pod replay's format adapter: the fill model (sim/policies/fill_cluster.h and a
// fill policy) as a `ClusterBackend` (sim/engine/cluster_backend.h); the replay itself is
// the engine's (sim/engine/pod_replay.h).
#include "sim/openb/openb_replay.h"

#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "sim/openb/fill_experiment.h"
#include "sim/policies/fgd_frag.h"
#include "sim/policies/fill_cluster.h"
#include "sim/policies/policy_kind.h"

namespace hived::sim {
namespace {

// The fill model of an openb node list, placing by a fill policy, as a `ClusterBackend`:
// job i is pod i of the list (a one-member job; its request is `pods_[i]`). Keeps the FGD
// fragmentation of every node up to date for the timeline.
class FillBackend : public ClusterBackend {
 public:
  FillBackend(const OpenbNodeList& nodes, std::vector<FillPod> pods,
              const OpenbReplayOptions& options)
      : kind_(options.policy),
        pods_(RequestsUnder(options.sharing, std::move(pods))),
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
    names_.reserve(nodes.nodes.size());
    for (const OpenbNode& n : nodes.nodes) names_.push_back(n.name);
    for (int32_t n = 0; n < cluster_.node_count(); ++n) {
      UpdateFrag(n);
      gpus_ += cluster_.node(n).gpus;
    }
  }

  std::string_view policy_name() const override { return PolicyKindName(kind_); }
  const std::vector<std::string>& nodes() const override { return names_; }

  absl::StatusOr<StartAttempt> TryStart(const SimJob& job, const TryOptions& options) override {
    if (absl::Status s = CheckPod(job.index, "start"); !s.ok()) return s;
    const size_t i = static_cast<size_t>(job.index);
    if (choice_[i].node >= 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("fill model: pod ", job.index, " is already running"));
    }
    const int32_t only = options.only_node;
    if (only >= cluster_.node_count()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "fill model: only_node ", only, " is not a node (", cluster_.node_count(), " nodes)"));
    }
    const FillPod& pod = pods_[i];
    StartAttempt attempt;  // kWaiting
    feasible_.clear();
    if (only >= 0) {
      if (cluster_.Fits(only, pod)) feasible_.push_back(only);
    } else {
      for (int32_t n = 0; n < cluster_.node_count(); ++n) {
        if (cluster_.Fits(n, pod)) feasible_.push_back(n);
      }
    }
    if (feasible_.empty()) return attempt;
    ++schedule_calls_;
    const FillChoice choice = policy_->Choose(cluster_, pod, feasible_);
    if (choice.node < 0) return attempt;
    cluster_.Place(pod, choice.node, choice.gpus);
    policy_->Placed(cluster_, pod, choice);
    UpdateFrag(choice.node);
    choice_[i] = choice;
    attempt.kind = StartAttempt::Kind::kStarted;
    return attempt;
  }

  absl::Status FinishPreemption(const SimJob& job) override {
    return absl::FailedPreconditionError(absl::StrCat(
        "fill model: FinishPreemption for pod ", job.index,
        ", but the fill model never preempts (TryStart answers kStarted or kWaiting)"));
  }

  absl::Status Release(const SimJob& job) override {
    if (absl::Status s = CheckPod(job.index, "release"); !s.ok()) return s;
    FillChoice& choice = choice_[static_cast<size_t>(job.index)];
    if (choice.node < 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("fill model: release of pod ", job.index, ", which is not running"));
    }
    const FillPod& pod = pods_[static_cast<size_t>(job.index)];
    cluster_.Remove(pod, choice.node, choice.gpus);
    policy_->Removed(cluster_, pod, choice);
    UpdateFrag(choice.node);
    choice = FillChoice{};
    return absl::OkStatus();
  }

  absl::Status SetNodeHealthy(int32_t node, bool /*healthy*/) override {
    return absl::UnimplementedError(
        absl::StrCat("fill model: node ", node,
                     ": an openb node list has no node failures (node events and --mtbf are "
                     "job-trace options)"));
  }

  NodeList JobNodes(JobIndex job) const override {
    const int32_t node = Running(job).node;
    return node >= 0 ? NodeList{node} : NodeList{};
  }

  JobGpus RunGpus(JobIndex job) const override {
    const FillChoice choice = Running(job);
    if (choice.node < 0) return {};
    return {choice.node, cluster_.node(choice.node).first_gpu, choice.gpus};
  }

  // One VC (every pod is VC 0) sharing every node: any release may help any waiting pod.
  bool ReleaseHelpsAllVcs() const override { return true; }
  bool SharesIdleCells() const override { return true; }

  // The fill model's invariants, then the policy's errors (`hived`: the library's).
  absl::Status CheckInvariants() const override {
    if (absl::Status s = cluster_.CheckInvariants(); !s.ok()) return s;
    return policy_->Check();
  }

  int64_t total_gpus() const override { return gpus_; }
  int64_t used_gpus() const override {
    int64_t used = 0;
    for (int32_t n = 0; n < cluster_.node_count(); ++n) {
      used += cluster_.node(n).gpus - cluster_.FullyFreeGpus(n);
    }
    return used;
  }
  // Fully free GPUs on nodes where some GPU is allocated.
  int64_t fragmented_free_gpus() const override {
    int64_t free = 0;
    for (int32_t n = 0; n < cluster_.node_count(); ++n) {
      const int32_t idle = cluster_.FullyFreeGpus(n);
      if (idle < cluster_.node(n).gpus) free += idle;
    }
    return free;
  }
  double allocation_ratio() const override { return cluster_.allocation_ratio(); }
  double fragmentation_ratio() const override {
    return total_frag_ / static_cast<double>(cluster_.capacity_milli());
  }
  // Calls to the policy's `Choose` (attempts with a feasible node).
  int64_t schedule_calls() const override { return schedule_calls_; }

 private:
  // The pods with the GPU requests `mode` places (exclusive: whole GPUs; mig: instances).
  static std::vector<FillPod> RequestsUnder(SharingMode mode, std::vector<FillPod> pods) {
    for (FillPod& p : pods) {
      if (p.num_gpu == 1) p.gpu_milli = SharingRequestMilli(mode, p.gpu_milli);
    }
    return pods;
  }

  absl::Status CheckPod(JobIndex job, std::string_view what) const {
    if (job < 0 || static_cast<size_t>(job) >= pods_.size()) {
      return absl::InvalidArgumentError(absl::StrCat("fill model: cannot ", std::string(what),
                                                     " job ", job, ": not a pod of the list (",
                                                     pods_.size(), " pods)"));
    }
    return absl::OkStatus();
  }

  // Where pod `job` runs; node -1 when it does not (or is not a pod).
  FillChoice Running(JobIndex job) const {
    if (job < 0 || static_cast<size_t>(job) >= choice_.size()) return {};
    return choice_[static_cast<size_t>(job)];
  }

  void UpdateFrag(int32_t n) {
    const FillCluster::Node& nd = cluster_.node(n);
    double& f = node_frag_[static_cast<size_t>(n)];
    total_frag_ -= f;
    f = frag_.NodeFrag(nd.model, nd.cpu_left, cluster_.gpu_left(n), nd.gpus);
    total_frag_ += f;
  }

  PolicyKind kind_;
  std::vector<FillPod> pods_;
  FillCluster cluster_;
  int32_t shapes_;
  FragMeasure frag_;
  std::mt19937_64 rng_;
  std::unique_ptr<FillPolicy> policy_;
  std::vector<std::string> names_;  // by node index
  std::vector<FillChoice> choice_;  // per pod: where it runs; node -1 when it does not
  std::vector<double> node_frag_;
  std::vector<int32_t> feasible_;
  double total_frag_ = 0;
  int32_t gpus_ = 0;
  int64_t schedule_calls_ = 0;
};

}  // namespace

std::unique_ptr<ClusterBackend> MakeFillBackend(const OpenbNodeList& nodes,
                                                std::vector<FillPod> pods,
                                                const OpenbReplayOptions& options) {
  return std::make_unique<FillBackend>(nodes, std::move(pods), options);
}

absl::StatusOr<PodReplayResult> ReplayOpenb(const OpenbNodeList& nodes, const OpenbPodList& list,
                                            const std::vector<FillPod>& pods,
                                            const OpenbReplayOptions& options, PodSink* sink) {
  if (!list.stats.has_times) {
    return absl::InvalidArgumentError(
        absl::StrCat(list.file,
                     ": this pod list has no creation or deletion times (the 5-column layout); "
                     "it can be used by `fill`, not replayed"));
  }
  FillBackend backend(nodes, pods, options);
  return ReplayPods(list, &backend,
                    {options.sample_seconds, options.sharing, options.sharing_params}, sink);
}

}  // namespace hived::sim

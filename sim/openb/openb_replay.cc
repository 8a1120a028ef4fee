#include "sim/openb/openb_replay.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <queue>
#include <random>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/common/flags.h"
#include "sim/common/output_dir.h"
#include "sim/openb/fill_experiment.h"
#include "sim/policies/fgd_frag.h"
#include "sim/policies/fill_cluster.h"

namespace hived::sim {
namespace {

struct Event {
  int64_t time = 0;
  int32_t kind = 0;  // 0 departure, 1 arrival: departures first at equal times
  int32_t pod = 0;
  uint32_t generation = 0;  // departures: stale unless it is the pod's current one
  bool operator>(const Event& o) const {
    return std::tie(time, kind, pod) > std::tie(o.time, o.kind, o.pod);
  }
};

class Replay {
 public:
  Replay(const OpenbNodeList& nodes, const OpenbPodList& list, std::vector<FillPod> pods,
         const OpenbReplayOptions& options)
      : list_(list),
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
        placement_(pods_.size()),
        node_frag_(static_cast<size_t>(cluster_.node_count())),
        step_(options.sample_seconds),
        sharing_(options.sharing),
        params_(options.sharing_params) {
    for (int32_t n = 0; n < cluster_.node_count(); ++n) UpdateFrag(n);
    int32_t gpus = 0;
    for (int32_t n = 0; n < cluster_.node_count(); ++n) gpus += cluster_.node(n).gpus;
    tenants_.resize(static_cast<size_t>(gpus));
    state_.resize(pods_.size());
    result_.runs.resize(pods_.size());
    gpus_at_degree_.assign(2, 0);
    gpus_at_degree_[0] = gpus;
    result_.gpu_seconds_by_degree.assign(2, 0.0);
  }

  absl::StatusOr<OpenbReplayResult> Run() {
    OpenbReplayResult& r = result_;
    r.pods = static_cast<int64_t>(pods_.size());
    r.end_time = list_.stats.trace_end;
    r.start_time = r.end_time;
    for (size_t i = 0; i < pods_.size(); ++i) {
      const OpenbPod& p = list_.pods[i];
      r.start_time = std::min(r.start_time, *p.creation_time);
      events_.push({*p.creation_time, 1, static_cast<int32_t>(i)});
      if (p.phase == OpenbPhase::kPending) ++r.pending_in_trace;
      if (p.phase == OpenbPhase::kRunning && p.deletion_time == r.end_time) ++r.censored;
    }
    last_time_ = r.start_time;
    next_sample_ = r.start_time;
    while (!events_.empty()) {
      const Event e = events_.top();
      events_.pop();
      if (e.kind == 0 && e.generation != state_[static_cast<size_t>(e.pod)].generation) continue;
      Advance(e.time);
      if (e.kind == 1) {
        Arrive(e.pod, e.time);
      } else {
        Depart(e.pod, e.time);
      }
    }
    Advance(r.end_time);
    for (int32_t w : waiting_) {
      ++r.never_placed;
      if (list_.pods[static_cast<size_t>(w)].phase != OpenbPhase::kPending) ++r.never_placed_by_end;
    }
    if (cluster_.allocated_milli() != 0) {
      return absl::InternalError("replay: GPU milli still allocated after the last departure");
    }
    if (absl::Status s = cluster_.CheckInvariants(); !s.ok()) return s;
    if (absl::Status s = policy_->Check(); !s.ok()) return s;
    if (r.placed + r.never_placed != r.pods) {
      return absl::InternalError("replay: placed + never placed != pods");
    }
    std::sort(waits_.begin(), waits_.end());
    if (!waits_.empty()) {
      double sum = 0;
      for (int64_t w : waits_) sum += static_cast<double>(w);
      r.mean_wait = sum / static_cast<double>(waits_.size());
      r.p50_wait = waits_[waits_.size() / 2];
      r.p99_wait = waits_[std::min(waits_.size() - 1, waits_.size() * 99 / 100)];
      r.max_wait = waits_.back();
    }
    const double span = static_cast<double>(r.end_time - r.start_time);
    r.mean_allocation_ratio = span > 0 ? area_ / span : cluster_.allocation_ratio();
    SummariseSharing();
    return r;
  }

 private:
  struct Placement {
    FillChoice choice;
    bool placed = false;
  };
  // A placed pod's progress.
  struct PodState {
    double work_left = 0;  // seconds at speed 1
    double speed = 0;
    int64_t since = 0;  // time `work_left` was last brought up to date
    uint32_t generation = 0;
    bool fixed_end = false;  // Pending pods leave at their deletion time, whatever the speed
  };

  // The pods with the GPU requests `mode` places (exclusive: whole GPUs; mig: instances).
  static std::vector<FillPod> RequestsUnder(SharingMode mode, std::vector<FillPod> pods) {
    for (FillPod& p : pods) {
      if (p.num_gpu == 1) p.gpu_milli = SharingRequestMilli(mode, p.gpu_milli);
    }
    return pods;
  }

  // The global index of GPU `i` of node `n`.
  size_t Gpu(int32_t n, int32_t i) const {
    return static_cast<size_t>(cluster_.node(n).first_gpu) + static_cast<size_t>(i);
  }

  // Moves one GPU from `from` pods to `to` pods in the degree counts.
  void ChangeDegree(size_t from, size_t to) {
    const size_t top = std::max(from, to);
    if (top >= gpus_at_degree_.size()) {
      gpus_at_degree_.resize(top + 1, 0);
      result_.gpu_seconds_by_degree.resize(top + 1, 0.0);
    }
    --gpus_at_degree_[from];
    ++gpus_at_degree_[to];
  }

  // Recomputes the speeds of the pods on GPU `g` at `t` and reschedules the departures of
  // those whose speed changed (and of `placed`, just arrived). O(pods on the GPU).
  void Reschedule(size_t g, int64_t t, int32_t placed) {
    const std::vector<int32_t>& on = tenants_[g];
    tenant_buf_.clear();
    for (int32_t p : on) {
      const OpenbPod& pod = list_.pods[static_cast<size_t>(p)];
      tenant_buf_.push_back(
          {static_cast<double>(pod.gpu_milli) / kMilliPerGpu, pod.qos == OpenbQos::kBE});
    }
    SharingRates(sharing_, params_, tenant_buf_, &speed_buf_);
    for (size_t k = 0; k < on.size(); ++k) {
      const int32_t p = on[k];
      PodState& st = state_[static_cast<size_t>(p)];
      OpenbPodRun& run = result_.runs[static_cast<size_t>(p)];
      run.max_degree = std::max(run.max_degree, static_cast<int32_t>(on.size()));
      if (st.fixed_end || (st.speed == speed_buf_[k] && p != placed)) continue;
      st.work_left = std::max(0.0, st.work_left - st.speed * static_cast<double>(t - st.since));
      st.since = t;
      st.speed = speed_buf_[k];
      ++st.generation;
      // Rounded up to a whole second; a hair of slack so an exact quotient stays exact.
      const int64_t left = static_cast<int64_t>(std::ceil(st.work_left / st.speed - 1e-6));
      events_.push({t + std::max<int64_t>(left, 0), 0, p, st.generation});
    }
  }

  // Accounts the time from the last event to `t` (up to the trace end) and samples the
  // timeline on the way.
  void Advance(int64_t t) {
    const int64_t until = std::min(t, result_.end_time);
    while (step_ > 0 && next_sample_ <= until) {
      const double idle_capacity = static_cast<double>(cluster_.capacity_milli());
      result_.timeline.push_back({next_sample_, cluster_.allocation_ratio(),
                                  total_frag_ / idle_capacity, running_,
                                  static_cast<int64_t>(waiting_.size())});
      next_sample_ += step_;
    }
    if (until > last_time_) {
      const double dt = static_cast<double>(until - last_time_);
      area_ += cluster_.allocation_ratio() * dt;
      for (size_t k = 1; k < gpus_at_degree_.size(); ++k) {
        result_.gpu_seconds_by_degree[k] += static_cast<double>(gpus_at_degree_[k]) * dt;
      }
      last_time_ = until;
    }
  }

  // The last moment a waiting pod may still be placed: a Pending pod's deletion, else the
  // trace end.
  int64_t Deadline(int32_t i) const {
    const OpenbPod& p = list_.pods[static_cast<size_t>(i)];
    return p.phase == OpenbPhase::kPending ? *p.deletion_time : result_.end_time;
  }

  void Arrive(int32_t i, int64_t t) {
    const FillPod& pod = pods_[static_cast<size_t>(i)];
    if (t >= Deadline(i)) {
      ++result_.never_placed;
      if (list_.pods[static_cast<size_t>(i)].phase != OpenbPhase::kPending) {
        ++result_.never_placed_by_end;
      }
      return;
    }
    feasible_.clear();
    for (int32_t n = 0; n < cluster_.node_count(); ++n) {
      if (cluster_.Fits(n, pod)) feasible_.push_back(n);
    }
    if (feasible_.empty() || !Place(i, t)) {
      waiting_.push_back(i);
      return;
    }
    ++result_.placed_at_arrival;
  }

  void Depart(int32_t i, int64_t t) {
    const FillPod& pod = pods_[static_cast<size_t>(i)];
    const FillChoice choice = placement_[static_cast<size_t>(i)].choice;
    OpenbPodRun& run = result_.runs[static_cast<size_t>(i)];
    run.end = t;
    if (run.work > 0)
      run.slowdown = static_cast<double>(t - run.start) / static_cast<double>(run.work);
    for (int32_t g = 0; g < cluster_.node(choice.node).gpus; ++g) {
      if ((choice.gpus >> g & 1U) == 0) continue;
      std::vector<int32_t>& on = tenants_[Gpu(choice.node, g)];
      on.erase(std::find(on.begin(), on.end(), i));
      ChangeDegree(on.size() + 1, on.size());
      Reschedule(Gpu(choice.node, g), t, -1);
    }
    cluster_.Remove(pod, choice.node, choice.gpus);
    policy_->Removed(cluster_, pod, choice);
    UpdateFrag(choice.node);
    --running_;
    // Only `choice.node` gained room: a waiting pod can fit nowhere else.
    size_t keep = 0;
    for (size_t k = 0; k < waiting_.size(); ++k) {
      const int32_t w = waiting_[k];
      if (t >= Deadline(w)) {
        ++result_.never_placed;
        if (list_.pods[static_cast<size_t>(w)].phase != OpenbPhase::kPending) {
          ++result_.never_placed_by_end;
        }
        continue;
      }
      if (cluster_.Fits(choice.node, pods_[static_cast<size_t>(w)])) {
        feasible_.assign(1, choice.node);
        if (Place(w, t)) continue;
      }
      waiting_[keep++] = w;
    }
    waiting_.resize(keep);
  }

  // Places pod `i` at `t` on one of `feasible_` (`hived`: where the library places it);
  // false when the policy declines it.
  bool Place(int32_t i, int64_t t) {
    const FillPod& pod = pods_[static_cast<size_t>(i)];
    const OpenbPod& p = list_.pods[static_cast<size_t>(i)];
    const FillChoice choice = policy_->Choose(cluster_, pod, feasible_);
    if (choice.node < 0) return false;
    cluster_.Place(pod, choice.node, choice.gpus);
    policy_->Placed(cluster_, pod, choice);
    UpdateFrag(choice.node);
    placement_[static_cast<size_t>(i)] = {choice, true};
    ++running_;
    ++result_.placed;
    waits_.push_back(t - *p.creation_time);
    OpenbPodRun& run = result_.runs[static_cast<size_t>(i)];
    run.placed = true;
    run.node = choice.node;
    run.start = t;
    PodState& st = state_[static_cast<size_t>(i)];
    st.since = t;
    st.speed = 1.0;
    if (p.phase == OpenbPhase::kPending) {
      ++result_.pending_placed;
      st.fixed_end = true;
      events_.push({std::max(*p.deletion_time, t), 0, i, st.generation});
    } else {
      run.work = *p.deletion_time - p.scheduled_time.value_or(*p.creation_time);
      st.work_left = static_cast<double>(run.work);
      if (pod.num_gpu == 0) events_.push({t + run.work, 0, i, st.generation});
    }
    for (int32_t g = 0; g < cluster_.node(choice.node).gpus; ++g) {
      if ((choice.gpus >> g & 1U) == 0) continue;
      std::vector<int32_t>& on = tenants_[Gpu(choice.node, g)];
      on.push_back(i);
      ChangeDegree(on.size() - 1, on.size());
      Reschedule(Gpu(choice.node, g), t, i);
    }
    return true;
  }

  // Fills in the slowdown and sharing-degree figures once every pod has left.
  void SummariseSharing() {
    OpenbReplayResult& r = result_;
    std::vector<double> slowdowns;
    for (size_t i = 0; i < r.runs.size(); ++i) {
      const OpenbPodRun& run = r.runs[i];
      if (!run.placed || run.work == 0 || state_[i].fixed_end || pods_[i].num_gpu == 0) continue;
      slowdowns.push_back(run.slowdown);
      if (run.slowdown > 1.001) ++r.slowed_pods;
    }
    std::sort(slowdowns.begin(), slowdowns.end());
    r.slowdown_pods = static_cast<int64_t>(slowdowns.size());
    if (!slowdowns.empty()) {
      double sum = 0;
      for (double x : slowdowns) sum += x;
      r.mean_slowdown = sum / static_cast<double>(slowdowns.size());
      r.p50_slowdown = slowdowns[slowdowns.size() / 2];
      r.p99_slowdown = slowdowns[std::min(slowdowns.size() - 1, slowdowns.size() * 99 / 100)];
      r.max_slowdown = slowdowns.back();
    }
    double busy = 0, weighted = 0;
    for (size_t k = 1; k < r.gpu_seconds_by_degree.size(); ++k) {
      busy += r.gpu_seconds_by_degree[k];
      weighted += static_cast<double>(k) * r.gpu_seconds_by_degree[k];
      if (r.gpu_seconds_by_degree[k] > 0) r.max_degree = static_cast<int32_t>(k);
    }
    r.mean_degree = busy > 0 ? weighted / busy : 0;
  }

  void UpdateFrag(int32_t n) {
    const FillCluster::Node& nd = cluster_.node(n);
    double& f = node_frag_[static_cast<size_t>(n)];
    total_frag_ -= f;
    f = frag_.NodeFrag(nd.model, nd.cpu_left, cluster_.gpu_left(n), nd.gpus);
    total_frag_ += f;
    result_.peak_allocation_ratio =
        std::max(result_.peak_allocation_ratio, cluster_.allocation_ratio());
  }

  const OpenbPodList& list_;
  std::vector<FillPod> pods_;
  FillCluster cluster_;
  int32_t shapes_;
  FragMeasure frag_;
  std::mt19937_64 rng_;
  std::unique_ptr<FillPolicy> policy_;
  std::vector<Placement> placement_;
  std::vector<double> node_frag_;
  double total_frag_ = 0;
  int64_t step_;
  SharingMode sharing_;
  SharingParams params_;
  std::vector<std::vector<int32_t>> tenants_;  // per GPU (Gpu()): the pods on it
  std::vector<PodState> state_;                // per pod
  std::vector<int64_t> gpus_at_degree_;        // GPUs by number of pods on them
  std::vector<GpuTenant> tenant_buf_;
  std::vector<double> speed_buf_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::vector<int32_t> waiting_;  // arrival order
  std::vector<int32_t> feasible_;
  std::vector<int64_t> waits_;
  int64_t running_ = 0;
  int64_t last_time_ = 0;
  int64_t next_sample_ = 0;
  double area_ = 0;
  OpenbReplayResult result_;
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
  return Replay(nodes, list, pods, options).Run();
}

}  // namespace hived::sim

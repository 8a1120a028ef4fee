// The pool policies: one pool VC over the whole cluster, jobs placed topology-aware anywhere
// in it, each VC limited by GPU counts only. See sim/policies/scheduler_backend.h.
//   kQuota         hard cap: a VC's guaranteed GPUs <= its guarantee (the HiveD paper's
//                  quota baseline).
//   kYarnCs        elastic, no reclaim: <= its maximum capacity; borrowed GPUs come back
//                  only when the borrowers finish.
//   kElasticQuota  elastic with reclaim: within the guarantee a job runs at pool priority 1,
//                  beyond it (borrowing) at 0, so owners preempt borrowers.
// (Their names and descriptions: sim/policies/policy_registry.h.)
//
// A job naming a pinned cell is capped at that cell's GPUs (its own sub-quota, never
// borrowing) and runs at pool priority 1 under kElasticQuota; other jobs of its VC are
// capped at the virtual cells' GPUs (kQuota) or at the VC's maximum (elastic).
//
// Victims youngest first: when an owner must reclaim, the backend picks the borrowers itself,
// latest start first (the least work lost), the fewest such that
// the job fits by GPU counts on nodes holding no older borrower, and suggests just those
// nodes to the library, whose placement can then only preempt the chosen borrowers. When the
// library still cannot place it there (topology), the next attempt of that job lets the
// library choose.
#include <algorithm>
#include <memory>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "sim/common/csv.h"
#include "sim/policies/scheduler_backend.h"

namespace hived::sim {
namespace {

class PoolBackend : public SchedulerBackend {
 public:
  PoolBackend(PolicyKind kind, const ClusterSpec& spec, int32_t job_count,
              const PolicyOptions& options)
      : SchedulerBackend(spec, job_count),
        kind_(kind),
        reclaim_after_(kind == PolicyKind::kYarnCs ? options.reclaim_after : -1),
        placement_(options.placement),
        held_(static_cast<size_t>(std::max(job_count, 0))) {
    const int64_t total = info_.TotalGpus();
    const std::vector<int64_t> guarantee = info_.VcGuarantees(options.named_pinned_cells);
    for (int32_t v = 0; v < info_.vc_count(); ++v) {
      const int64_t g = guarantee[static_cast<size_t>(v)];
      int64_t max = total;
      if (kind == PolicyKind::kQuota) {
        max = g;
      } else if (static_cast<size_t>(v) < options.max_capacity.size() &&
                 options.max_capacity[static_cast<size_t>(v)] >= 0) {
        max = std::clamp(options.max_capacity[static_cast<size_t>(v)], g, total);
      }
      max_.push_back(max);
    }
    vc_pinned_used_.assign(static_cast<size_t>(info_.vc_count()), 0);
    for (const std::string& id : options.named_pinned_cells) pin_used_.try_emplace(id, 0);
  }

  absl::Status Init() {
    const ClusterSpec pool = info_.QuotaSpec();
    absl::StatusOr<std::unique_ptr<Scheduler>> full = CreateScheduler(pool);
    if (!full.ok()) return full.status();
    SetNodes(**full);
    for (const NodeStatus& n : (*full)->Nodes()) {
      auto it = std::find(types_.begin(), types_.end(), n.leaf_cell_type);
      node_type_.push_back(static_cast<int32_t>(it - types_.begin()));
      if (it == types_.end()) types_.push_back(n.leaf_cell_type);
    }
    healthy_.assign(node_type_.size(), 1);
    total_gpus_ = info_.TotalGpus();
    return AddDomain(std::move(*full));  // the pool is the full cluster: built once
  }

  std::string_view policy_name() const override { return PolicyKindName(kind_); }
  bool ReleaseHelpsAllVcs() const override { return true; }
  bool ServesLeastUsedFirst() const override { return kind_ == PolicyKind::kYarnCs; }
  int64_t VcMaxGpus(int32_t vc) const override { return max_[static_cast<size_t>(vc)]; }
  Time ReclaimAfter() const override { return reclaim_after_; }

  absl::StatusOr<StartAttempt> TryStart(const SimJob& job, const TryOptions& options) override {
    const Priority asked = job.priority >= 0 ? AskFor(job, false).priority : -1;
    steered_ = false;
    absl::StatusOr<StartAttempt> a = SchedulerBackend::TryStart(job, options);
    if (!a.ok()) return a;
    Held& h = held_[static_cast<size_t>(job.index)];
    // A steered attempt the library could not place: let it choose the next time.
    h.unsteered = steered_ && a->kind == StartAttempt::Kind::kWaiting;
    if (a->kind == StartAttempt::Kind::kStarted) {
      OnStart(job, a->opportunistic, asked);
    } else if (a->kind == StartAttempt::Kind::kPreempting) {
      h.pending_opportunistic = a->opportunistic;
      h.pending_asked = asked;
    }
    return a;
  }

  absl::Status FinishPreemption(const SimJob& job) override {
    if (absl::Status s = SchedulerBackend::FinishPreemption(job); !s.ok()) return s;
    const Held& h = held_[static_cast<size_t>(job.index)];
    OnStart(job, h.pending_opportunistic, h.pending_asked);
    return absl::OkStatus();
  }

  absl::Status Release(const SimJob& job) override {
    if (absl::Status s = SchedulerBackend::Release(job); !s.ok()) return s;
    Held& h = held_[static_cast<size_t>(job.index)];
    if (h.counted && !job.pinned_cell.empty()) {
      pin_used_[std::string(job.pinned_cell)] -= job.gpus;
      vc_pinned_used_[static_cast<size_t>(job.vc)] -= job.gpus;
    }
    if (h.borrower) borrowers_.erase({h.start, job.index});
    if (h.opportunistic) opportunistic_.erase(job.index);
    h.counted = h.borrower = h.opportunistic = false;
    return absl::OkStatus();
  }

  absl::Status SetNodeHealthy(int32_t node, bool healthy) override {
    if (absl::Status s = SchedulerBackend::SetNodeHealthy(node, healthy); !s.ok()) return s;
    healthy_[static_cast<size_t>(node)] = healthy ? 1 : 0;
    return absl::OkStatus();
  }

 protected:
  bool KeepsPinnedCells() const override { return false; }

  Ask AskFor(const SimJob& job, bool opportunistic) const override {
    if (opportunistic) return {0, SpecInfo::kPoolVc, kOpportunisticPriority};
    // One priority for every guaranteed job of kQuota and kYarnCs: in a shared pool a higher
    // priority would let one VC preempt another, which they do not do. kElasticQuota: a job
    // that keeps its VC within its guarantee may reclaim (priority 1) from borrowers (0);
    // a pinned job is always within (its pinned cell caps it).
    if (!Reclaims()) return {0, SpecInfo::kPoolVc, 0};
    if (!job.pinned_cell.empty()) return {0, SpecInfo::kPoolVc, 1};
    return {0, SpecInfo::kPoolVc, UnpinnedUsed(job.vc) + job.gpus <= info_.VcVirtualGpus(job.vc)};
  }

  std::string Admit(const SimJob& job) const override {
    if (!job.pinned_cell.empty()) {
      const std::string pin(job.pinned_cell);
      auto it = pin_used_.find(pin);
      const int64_t used = it == pin_used_.end() ? 0 : it->second;
      const int64_t cap = info_.PinnedGpus(pin);
      if (used + job.gpus <= cap) return "";
      return absl::StrCat("pinned cell ", pin, " full: ", used, " of ", cap,
                          " GPUs in use, job needs ", job.gpus);
    }
    // quota caps a VC's unpinned jobs at its virtual cells; the elastic policies cap the
    // VC's guaranteed GPUs (pinned jobs too) at its maximum.
    const bool hard = kind_ == PolicyKind::kQuota;
    const int64_t max = hard ? info_.VcVirtualGpus(job.vc) : max_[static_cast<size_t>(job.vc)];
    const int64_t used =
        hard ? UnpinnedUsed(job.vc) : vc_guaranteed_used_[static_cast<size_t>(job.vc)];
    if (used + job.gpus <= max) return "";
    return absl::StrCat("VC ", info_.vc_name(job.vc),
                        hard ? " at quota: " : " at maximum capacity: ", used, " of ", max,
                        " GPUs in use, job needs ", job.gpus);
  }

  bool MayFitGuaranteed(const SimJob& job) const override {
    // Opportunistic work can be preempted, and so can borrowers by a kElasticQuota owner;
    // other guaranteed work cannot.
    int64_t held = guaranteed_used_;
    if (Reclaims() && AskFor(job, false).priority > 0) {
      held = 0;
      for (const auto& by_priority : vc_used_by_priority_) {
        for (const auto& [p, gpus] : by_priority) held += p > 0 ? gpus : 0;
      }
    }
    return total_gpus_ - held >= job.gpus;
  }

  // kYarnCs reclaims only after the delay; kElasticQuota at once.
  bool MayPreempt(const SimJob& /*job*/, const Ask& ask) const override {
    return kind_ != PolicyKind::kYarnCs || ask.may_reclaim;
  }

  std::optional<std::vector<std::string>> SuggestNodes(const SimJob& job,
                                                       const Ask& ask) const override {
    if (ask.priority < 0 || held_[static_cast<size_t>(job.index)].unsteered) return std::nullopt;
    const bool may_reclaim = Reclaims() && ask.priority > 0 && MayPreempt(job, ask);
    if (!may_reclaim && placement_ == NodePlacement::kPack) return std::nullopt;
    std::vector<int32_t> avail = FreeGpus();
    const std::vector<char> usable(avail.size(), 1);
    std::vector<int32_t> chosen;
    const bool fits_free = PlacePods(job, avail, usable, NodePlacement::kFirstFit, &chosen);
    if (!fits_free && may_reclaim) {
      return Steer(YoungestFirst(job, std::move(avail)));
    }
    if (placement_ == NodePlacement::kPack || !fits_free) return std::nullopt;
    PlacePods(job, avail, usable, placement_, &chosen);
    return Steer(chosen);
  }

 private:
  struct Held {
    bool counted = false;        // running guaranteed: in pin_used_ when pinned
    bool borrower = false;       // running guaranteed at pool priority 0 while reclaim is on
    bool opportunistic = false;  // running at priority -1
    bool unsteered = false;
    bool pending_opportunistic = false;
    Priority pending_asked = 0;
    int64_t start = 0;  // start sequence
  };

  bool Reclaims() const {
    return kind_ == PolicyKind::kElasticQuota ||
           (kind_ == PolicyKind::kYarnCs && reclaim_after_ >= 0);
  }

  int64_t UnpinnedUsed(int32_t vc) const {
    return vc_guaranteed_used_[static_cast<size_t>(vc)] - vc_pinned_used_[static_cast<size_t>(vc)];
  }

  void OnStart(const SimJob& job, bool opportunistic, Priority asked) {
    Held& h = held_[static_cast<size_t>(job.index)];
    if (opportunistic) {
      h.opportunistic = true;
      opportunistic_.insert(job.index);
      return;
    }
    h.counted = true;
    h.start = ++starts_;
    if (!job.pinned_cell.empty()) {
      pin_used_[std::string(job.pinned_cell)] += job.gpus;
      vc_pinned_used_[static_cast<size_t>(job.vc)] += job.gpus;
    }
    if (Reclaims() && asked == 0) {
      h.borrower = true;
      borrowers_.insert({h.start, job.index});
    }
  }

  // Free GPUs per node of the pool (0 on unhealthy nodes).
  std::vector<int32_t> FreeGpus() const {
    const NodeUsage& usage = domains_[0].usage;
    std::vector<int32_t> free(healthy_.size(), 0);
    for (size_t n = 0; n < free.size(); ++n) {
      const int32_t node = static_cast<int32_t>(n);
      if (healthy_[n]) free[n] = usage.capacity_of(node) - usage.used_on(node);
    }
    return free;
  }

  // Places the job's pods, largest first, by GPU counts on usable nodes of one leaf type
  // (its own, or the first type in node order where it fits): `kFirstFit` the first node in
  // config order with room, `kSpread` the one with the most free GPUs. Fills `nodes`
  // (ascending, distinct); false when the pods do not fit.
  bool PlacePods(const SimJob& job, const std::vector<int32_t>& avail,
                 const std::vector<char>& usable, NodePlacement how,
                 std::vector<int32_t>* nodes) const {
    std::vector<int32_t> pods;
    for (const GangMember& m : job.members)
      pods.insert(pods.end(), static_cast<size_t>(m.pod_number), m.leaf_cell_number);
    std::sort(pods.begin(), pods.end(), std::greater<>());
    std::vector<int32_t> types;  // the job's leaf type, or every type in node order
    for (size_t t = 0; t < types_.size(); ++t) {
      if (job.gpu_type.empty() || types_[t] == job.gpu_type)
        types.push_back(static_cast<int32_t>(t));
    }
    for (int32_t type : types) {
      std::vector<int32_t> left = avail;
      nodes->clear();
      bool ok = true;
      for (int32_t pod : pods) {
        int32_t best = -1;
        for (size_t n = 0; n < left.size(); ++n) {
          if (!usable[n] || node_type_[n] != type || left[n] < pod) continue;
          if (best < 0 ||
              (how == NodePlacement::kSpread && left[n] > left[static_cast<size_t>(best)])) {
            best = static_cast<int32_t>(n);
            if (how != NodePlacement::kSpread) break;
          }
        }
        if (best < 0) {
          ok = false;
          break;
        }
        left[static_cast<size_t>(best)] -= pod;
        nodes->push_back(best);
      }
      if (!ok) continue;
      std::sort(nodes->begin(), nodes->end());
      nodes->erase(std::unique(nodes->begin(), nodes->end()), nodes->end());
      return true;
    }
    nodes->clear();
    return false;
  }

  // The nodes an owner may reclaim on: borrowers are taken youngest first until the job fits
  // (by GPU counts, first fit) on nodes where every borrower is taken; those nodes. Empty
  // when even every borrower is not enough (the library then reports why it waits).
  std::vector<int32_t> YoungestFirst(const SimJob& job, std::vector<int32_t> avail) const {
    // Opportunistic GPUs are preemptible by any guaranteed job: count them as available.
    for (JobIndex j : opportunistic_) {
      for (const auto& [node, gpus] : jobs_[static_cast<size_t>(j)].pods) {
        if (healthy_[static_cast<size_t>(node)]) avail[static_cast<size_t>(node)] += gpus;
      }
    }
    std::vector<int32_t> untaken(avail.size(), 0);  // borrower pods not taken yet, per node
    for (const auto& [start, j] : borrowers_) {
      for (const auto& [node, gpus] : jobs_[static_cast<size_t>(j)].pods) {
        ++untaken[static_cast<size_t>(node)];
      }
    }
    std::vector<char> usable(avail.size());
    int64_t usable_gpus = 0;  // available on usable nodes
    for (size_t n = 0; n < usable.size(); ++n) {
      usable[n] = untaken[n] == 0 ? 1 : 0;
      if (usable[n]) usable_gpus += avail[n];
    }
    std::vector<int32_t> nodes;
    for (auto it = borrowers_.rbegin(); it != borrowers_.rend(); ++it) {
      bool opened = false;  // a node became usable: only then can the answer change
      for (const auto& [node, gpus] : jobs_[static_cast<size_t>(it->second)].pods) {
        const size_t n = static_cast<size_t>(node);
        if (healthy_[n]) avail[n] += gpus;
        if (--untaken[n] == 0) {
          usable[n] = 1;
          opened = true;
          usable_gpus += avail[n];
        }
      }
      if (!opened || usable_gpus < job.gpus) continue;
      if (PlacePods(job, avail, usable, NodePlacement::kFirstFit, &nodes)) {
        nodes.clear();
        for (size_t n = 0; n < usable.size(); ++n) {
          if (usable[n] && healthy_[n]) nodes.push_back(static_cast<int32_t>(n));
        }
        return nodes;
      }
    }
    return {};
  }

  std::optional<std::vector<std::string>> Steer(const std::vector<int32_t>& nodes) const {
    if (nodes.empty()) return std::nullopt;
    steered_ = true;
    std::vector<std::string> names;
    for (int32_t n : nodes) names.push_back(this->nodes()[static_cast<size_t>(n)]);
    return names;
  }

  PolicyKind kind_;
  Time reclaim_after_;
  NodePlacement placement_;
  std::vector<int64_t> max_;  // by VC
  std::vector<int64_t> vc_pinned_used_;
  absl::flat_hash_map<std::string, int64_t> pin_used_;  // lookups only, never iterated
  std::vector<Held> held_;                              // by job
  std::set<std::pair<int64_t, JobIndex>> borrowers_;    // (start sequence, job), oldest first
  std::set<JobIndex> opportunistic_;                    // running opportunistic jobs
  int64_t starts_ = 0;
  std::vector<std::string> types_;  // leaf types, in node order of first appearance
  std::vector<int32_t> node_type_;  // index into types_, by node
  std::vector<char> healthy_;       // by node (char: cheaper to index than vector<bool>)
  mutable bool steered_ = false;    // the last request carried a suggestion
};

}  // namespace

absl::StatusOr<NodePlacement> ParseNodePlacement(std::string_view name) {
  if (name == "pack") return NodePlacement::kPack;
  if (name == "first-fit") return NodePlacement::kFirstFit;
  if (name == "spread") return NodePlacement::kSpread;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown placement '", Av(name), "' (expected pack, first-fit or spread)"));
}

absl::StatusOr<std::unique_ptr<ClusterBackend>> MakeElasticBackend(PolicyKind kind,
                                                                   const ClusterSpec& spec,
                                                                   int32_t job_count,
                                                                   const PolicyOptions& options) {
  auto backend = std::make_unique<PoolBackend>(kind, spec, job_count, options);
  if (absl::Status s = backend->Init(); !s.ok()) return s;
  return std::unique_ptr<ClusterBackend>(std::move(backend));
}

}  // namespace hived::sim

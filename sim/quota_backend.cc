// The pool policies: one pool VC over the whole cluster, jobs placed topology-aware anywhere
// in it, each VC limited by GPU counts only. See sim/scheduler_backend.h.
//   quota          hard cap: a VC's guaranteed GPUs <= its guarantee (the HiveD paper's
//                  quota baseline).
//   yarn-cs        elastic, no reclaim: <= its maximum capacity; borrowed GPUs come back
//                  only when the borrowers finish.
//   elastic-quota  elastic with reclaim: within the guarantee a job runs at pool priority 1,
//                  beyond it (borrowing) at 0, so owners preempt borrowers.
#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "sim/scheduler_backend.h"

namespace hived::sim {
namespace {

class PoolBackend : public SchedulerBackend {
 public:
  PoolBackend(PolicyKind kind, const ClusterSpec& spec, int32_t job_count,
              const PolicyOptions& options)
      : SchedulerBackend(spec, job_count),
        kind_(kind),
        reclaim_after_(kind == PolicyKind::kYarnCs ? options.reclaim_after : -1) {
    const int64_t total = info_.TotalGpus();
    for (int32_t v = 0; v < info_.vc_count(); ++v) {
      const int64_t guarantee = info_.VcVirtualGpus(v);
      int64_t max = total;
      if (kind == PolicyKind::kQuota) {
        max = guarantee;
      } else if (static_cast<size_t>(v) < options.max_capacity.size() &&
                 options.max_capacity[static_cast<size_t>(v)] >= 0) {
        max = std::clamp(options.max_capacity[static_cast<size_t>(v)], guarantee, total);
      }
      max_.push_back(max);
    }
  }

  absl::Status Init() {
    const ClusterSpec pool = info_.QuotaSpec();
    absl::StatusOr<std::unique_ptr<Scheduler>> full = Scheduler::Create(pool);
    if (!full.ok()) return full.status();
    SetNodes(**full);
    total_gpus_ = info_.TotalGpus();
    return AddDomain(pool);
  }

  std::string_view policy_name() const override { return PolicyKindName(kind_); }
  bool ReleaseHelpsAllVcs() const override { return true; }
  bool ServesLeastUsedFirst() const override { return kind_ == PolicyKind::kYarnCs; }
  int64_t VcMaxGpus(int32_t vc) const override { return max_[static_cast<size_t>(vc)]; }
  Time ReclaimAfter() const override { return reclaim_after_; }

 protected:
  Ask AskFor(const SimJob& job, bool opportunistic) const override {
    if (opportunistic) return {0, SpecInfo::kPoolVc, kOpportunisticPriority};
    // One priority for every guaranteed job of quota and yarn-cs: in a shared pool a higher
    // priority would let one VC preempt another, which they do not do. elastic-quota: a job
    // that keeps its VC within its guarantee may reclaim (priority 1) from borrowers (0).
    if (!Reclaims()) return {0, SpecInfo::kPoolVc, 0};
    const size_t v = static_cast<size_t>(job.vc);
    const bool within = vc_guaranteed_used_[v] + job.gpus <= info_.VcVirtualGpus(job.vc);
    return {0, SpecInfo::kPoolVc, within ? 1 : 0};
  }

  std::string Admit(const SimJob& job) const override {
    const int64_t max = max_[static_cast<size_t>(job.vc)];
    const int64_t used = vc_guaranteed_used_[static_cast<size_t>(job.vc)];
    if (used + job.gpus <= max) return "";
    return absl::StrCat("VC ", info_.vc_name(job.vc),
                        kind_ == PolicyKind::kQuota ? " at quota: " : " at maximum capacity: ",
                        used, " of ", max, " GPUs in use, job needs ", job.gpus);
  }

  bool MayFitGuaranteed(const SimJob& job) const override {
    // Opportunistic work can be preempted, and so can borrowers by an elastic-quota owner;
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

  // yarn-cs reclaims only after the delay; elastic-quota at once.
  bool MayPreempt(const SimJob& job) const override {
    return kind_ != PolicyKind::kYarnCs || job.may_reclaim;
  }

 private:
  bool Reclaims() const {
    return kind_ == PolicyKind::kElasticQuota ||
           (kind_ == PolicyKind::kYarnCs && reclaim_after_ >= 0);
  }

  PolicyKind kind_;
  Time reclaim_after_;
  std::vector<int64_t> max_;  // by VC
};

}  // namespace

absl::StatusOr<std::unique_ptr<ClusterBackend>> MakeElasticBackend(PolicyKind kind,
                                                                   const ClusterSpec& spec,
                                                                   int32_t job_count,
                                                                   const PolicyOptions& options) {
  auto backend = std::make_unique<PoolBackend>(kind, spec, job_count, options);
  if (absl::Status s = backend->Init(); !s.ok()) return s;
  return std::unique_ptr<ClusterBackend>(std::move(backend));
}

absl::StatusOr<std::unique_ptr<ClusterBackend>> MakeQuotaBackend(const ClusterSpec& spec,
                                                                 int32_t job_count) {
  return MakeElasticBackend(PolicyKind::kQuota, spec, job_count, {});
}

}  // namespace hived::sim

// The `quota` policy (the HiveD paper's quota baseline): one pool VC over the whole
// cluster; each VC may run guaranteed GPUs up to its reserved cells' GPU count, placed
// topology-aware anywhere. See sim/scheduler_backend.h.
#include <memory>

#include "absl/strings/str_cat.h"
#include "sim/scheduler_backend.h"

namespace hived::sim {
namespace {

class QuotaBackend : public SchedulerBackend {
 public:
  QuotaBackend(const ClusterSpec& spec, int32_t job_count) : SchedulerBackend(spec, job_count) {}

  absl::Status Init() {
    const ClusterSpec pool = info_.QuotaSpec();
    absl::StatusOr<std::unique_ptr<Scheduler>> full = Scheduler::Create(pool);
    if (!full.ok()) return full.status();
    SetNodes(**full);
    total_gpus_ = info_.TotalGpus();
    return AddDomain(pool);
  }

  std::string_view policy_name() const override { return "quota"; }
  bool ReleaseHelpsAllVcs() const override { return true; }

 protected:
  Ask AskFor(const SimJob& /*job*/, bool opportunistic) const override {
    // Every guaranteed job at priority 0: in a shared pool a higher priority would let one
    // VC preempt another, which quota scheduling does not do.
    return {0, SpecInfo::kPoolVc, opportunistic ? kOpportunisticPriority : 0};
  }

  std::string Admit(const SimJob& job) const override {
    const int64_t quota = info_.VcReservedGpus(job.vc);
    const int64_t used = vc_guaranteed_used_[static_cast<size_t>(job.vc)];
    if (used + job.gpus <= quota) return "";
    return absl::StrCat("VC ", info_.vc_name(job.vc), " at quota: ", used, " of ", quota,
                        " GPUs in use, job needs ", job.gpus);
  }

  bool MayFitGuaranteed(const SimJob& job) const override {
    // Opportunistic work can be preempted; other guaranteed work cannot.
    return total_gpus_ - guaranteed_used_ >= job.gpus;
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<ClusterBackend>> MakeQuotaBackend(const ClusterSpec& spec,
                                                                 int32_t job_count) {
  auto backend = std::make_unique<QuotaBackend>(spec, job_count);
  if (absl::Status s = backend->Init(); !s.ok()) return s;
  return std::unique_ptr<ClusterBackend>(std::move(backend));
}

}  // namespace hived::sim

// The `hived` policy: one Scheduler on the config; jobs run in their own VC.
#include <memory>
#include <utility>

#include "sim/policies/scheduler_backend.h"

namespace hived::sim {
namespace {

class HivedBackend : public SchedulerBackend {
 public:
  HivedBackend(const ClusterSpec& spec, int32_t job_count) : SchedulerBackend(spec, job_count) {}

  absl::Status Init(const ClusterSpec& spec) {
    absl::StatusOr<std::unique_ptr<Scheduler>> full = CreateScheduler(spec);
    if (!full.ok()) return full.status();
    SetNodes(**full);
    total_gpus_ = info_.TotalGpus();
    return AddDomain(std::move(*full));  // the domain is the full cluster: built once
  }

  std::string_view policy_name() const override { return PolicyKindName(PolicyKind::kHived); }
  bool ReleaseHelpsAllVcs() const override { return false; }

 protected:
  Ask AskFor(const SimJob& job, bool opportunistic) const override {
    return {0, info_.vc_name(job.vc), opportunistic ? kOpportunisticPriority : job.priority};
  }
};

}  // namespace

absl::StatusOr<std::unique_ptr<ClusterBackend>> MakeHivedBackend(PolicyKind /*kind*/,
                                                                 const ClusterSpec& spec,
                                                                 int32_t job_count,
                                                                 const PolicyOptions& /*options*/) {
  auto backend = std::make_unique<HivedBackend>(spec, job_count);
  if (absl::Status s = backend->Init(spec); !s.ok()) return s;
  return std::unique_ptr<ClusterBackend>(std::move(backend));
}

}  // namespace hived::sim

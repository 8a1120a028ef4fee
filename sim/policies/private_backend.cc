// PolicyKind::kPrivate: every VC alone on a private cluster of exactly its reserved cells.
// See sim/policies/scheduler_backend.h.
#include <algorithm>
#include <memory>

#include "sim/policies/scheduler_backend.h"

namespace hived::sim {
namespace {

class PrivateBackend : public SchedulerBackend {
 public:
  PrivateBackend(const ClusterSpec& spec, int32_t job_count) : SchedulerBackend(spec, job_count) {}

  absl::Status Init() {
    // Each VC's private cluster is hardware of its own, named `VC/node` (the node names of
    // the cells it is built from), so failures hit each private cluster independently.
    absl::StatusOr<std::unique_ptr<Scheduler>> full = CreateScheduler(info_.QuotaSpec());
    if (!full.ok()) return full.status();
    for (const NodeStatus& n : (*full)->Nodes()) config_nodes_.push_back(n.name);
    std::sort(config_nodes_.begin(), config_nodes_.end());
    total_gpus_ = 0;
    for (int32_t v = 0; v < info_.vc_count(); ++v) {
      total_gpus_ += info_.VcReservedGpus(v);
      if (absl::Status s = AddDomain(info_.PrivateSpec(v), info_.vc_name(v) + "/"); !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  }

  std::string_view policy_name() const override { return PolicyKindName(PolicyKind::kPrivate); }
  bool ReleaseHelpsAllVcs() const override { return false; }

 protected:
  Ask AskFor(const SimJob& job, bool /*opportunistic*/) const override {
    const Priority p =
        job.priority < 0 ? 0 : std::min<Priority>(job.priority + 1, kMaxGuaranteedPriority);
    return {job.vc, info_.vc_name(job.vc), p};
  }
  bool SupportsOverflow() const override { return false; }
};

}  // namespace

absl::StatusOr<std::unique_ptr<ClusterBackend>> MakePrivateBackend(
    PolicyKind /*kind*/, const ClusterSpec& spec, int32_t job_count,
    const PolicyOptions& /*options*/) {
  auto backend = std::make_unique<PrivateBackend>(spec, job_count);
  if (absl::Status s = backend->Init(); !s.ok()) return s;
  return std::unique_ptr<ClusterBackend>(std::move(backend));
}

}  // namespace hived::sim

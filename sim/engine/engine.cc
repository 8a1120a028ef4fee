#include "sim/engine/engine.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "sim/engine/replay.h"

namespace hived::sim {

std::string_view JobStateName(JobState state) {
  switch (state) {
    case JobState::kPending:
      return "pending";
    case JobState::kQueued:
      return "queued";
    case JobState::kRunning:
      return "running";
    case JobState::kCompleted:
      return "completed";
    case JobState::kRejected:
      return "rejected";
  }
  return "pending";
}

void ResolveJobs(const Trace& trace, const SpecInfo& info, std::vector<SimJob>* jobs,
                 std::vector<RareString>* reject_reasons) {
  jobs->clear();
  reject_reasons->clear();
  jobs->reserve(trace.jobs.size());
  reject_reasons->reserve(trace.jobs.size());
  // Traces name few VCs, mostly in runs: the last name's index, not a hash lookup per job.
  const Name* last_vc = nullptr;
  int32_t last_vc_index = -1;
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    const TraceJob& t = trace.jobs[i];
    SimJob job;
    job.index = static_cast<JobIndex>(i);
    job.priority = t.priority;
    job.gpus = t.total_gpus;
    job.gpu_type = t.gpu_type;
    job.pinned_cell = t.pinned_cell;
    std::string reason;
    if (last_vc == nullptr || *last_vc != t.vc) {
      last_vc = &t.vc;
      last_vc_index = info.VcIndex(t.vc);
    }
    const int32_t vc = last_vc_index;
    job.vc = vc;  // -1 for a VC the config lacks: the job is rejected at submission
    if (vc < 0) {
      reason = absl::StrCat("VC '", t.vc.str(), "' is not in the config");
    } else {
      const int32_t node = info.VcNodeGpus(vc, t.gpu_type);
      if (t.pods == 0) {
        if (node <= 0) {
          reason = absl::StrCat("VC ", t.vc.str(), " has no nodes",
                                t.gpu_type.empty() ? "" : " of type " + t.gpu_type.str());
        } else {
          // Copied in, not move-assigned: GCC 12 takes the move's deallocation check for a
          // read of uninitialized storage (-Wmaybe-uninitialized, a false positive).
          const GangMembers split = SplitIntoPods(t.total_gpus, node);
          job.members.assign(split.begin(), split.end());
        }
      } else {
        job.members = {{t.pods, t.gpus_per_pod}};
        const int32_t largest = info.MaxNodeGpus(t.gpu_type);
        if (t.gpus_per_pod > largest) {
          reason = absl::StrCat("a pod needs ", t.gpus_per_pod, " GPUs but the largest node has ",
                                largest);
        }
      }
      // Pinned cells serve only the jobs that name them: a job larger than its pinned cell,
      // or than the VC's virtual cells, can never run under hived or private.
      if (reason.empty() && t.priority >= 0 && !t.pinned_cell.empty() &&
          t.total_gpus > info.PinnedGpus(t.pinned_cell)) {
        reason = absl::StrCat("needs ", t.total_gpus, " GPUs but pinned cell ", t.pinned_cell.str(),
                              " has only ", info.PinnedGpus(t.pinned_cell));
      } else if (reason.empty() && t.priority >= 0 && t.pinned_cell.empty() &&
                 t.total_gpus > info.VcVirtualGpus(vc)) {
        reason = absl::StrCat("needs ", t.total_gpus, " GPUs but VC ", t.vc.str(),
                              " reserves only ", info.VcVirtualGpus(vc), " in virtual cells");
      }
      if (reason.empty() && t.total_gpus > info.TotalGpus()) {
        reason = absl::StrCat("needs ", t.total_gpus, " GPUs but the cluster has only ",
                              info.TotalGpus());
      }
    }
    if (job.members.empty()) job.members = {{1, std::max(1, t.total_gpus)}};
    jobs->push_back(std::move(job));
    reject_reasons->emplace_back() = std::move(reason);
  }
}

Engine::Engine(const SpecInfo& info, ClusterBackend* backend, EngineOptions options)
    : info_(info), backend_(backend), options_(std::move(options)) {}

absl::StatusOr<EngineResult> Engine::Run(const Trace& trace,
                                         const std::vector<NodeEvent>& node_events) {
  replay_internal::Replay replay(info_, backend_, options_);
  return replay.Run(trace, node_events);
}

}  // namespace hived::sim

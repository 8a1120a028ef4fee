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

void JobResolver::Resolve(const TraceJob& t, JobIndex index, SimJob* out, std::string* reason) {
  SimJob job;
  job.index = index;
  job.priority = t.priority;
  job.gpus = t.total_gpus;
  job.gpu_type = t.gpu_type;
  job.pinned_cell = t.pinned_cell;
  reason->clear();
  if (!has_last_ || last_vc_ != t.vc.view()) {
    has_last_ = true;
    last_vc_ = t.vc.str();
    last_vc_index_ = info_.VcIndex(t.vc);
  }
  const SpecInfo& info = info_;
  const int32_t vc = last_vc_index_;
  job.vc = vc;  // -1 for a VC the config lacks: the job is rejected at submission
  if (vc < 0) {
    *reason = absl::StrCat("VC '", t.vc.str(), "' is not in the config");
  } else {
    const int32_t node = info.VcNodeGpus(vc, t.gpu_type);
    if (t.pods == 0) {
      if (node <= 0) {
        *reason = absl::StrCat("VC ", t.vc.str(), " has no nodes",
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
        *reason = absl::StrCat("a pod needs ", t.gpus_per_pod, " GPUs but the largest node has ",
                               largest);
      }
    }
    // Pinned cells serve only the jobs that name them: a job larger than its pinned cell,
    // or than the VC's virtual cells, can never run under hived or private.
    if (reason->empty() && t.priority >= 0 && !t.pinned_cell.empty() &&
        t.total_gpus > info.PinnedGpus(t.pinned_cell)) {
      *reason = absl::StrCat("needs ", t.total_gpus, " GPUs but pinned cell ", t.pinned_cell.str(),
                             " has only ", info.PinnedGpus(t.pinned_cell));
    } else if (reason->empty() && t.priority >= 0 && t.pinned_cell.empty() &&
               t.total_gpus > info.VcVirtualGpus(vc)) {
      *reason = absl::StrCat("needs ", t.total_gpus, " GPUs but VC ", t.vc.str(), " reserves only ",
                             info.VcVirtualGpus(vc), " in virtual cells");
    }
    if (reason->empty() && t.total_gpus > info.TotalGpus()) {
      *reason =
          absl::StrCat("needs ", t.total_gpus, " GPUs but the cluster has only ", info.TotalGpus());
    }
  }
  if (job.members.empty()) job.members = {{1, std::max(1, t.total_gpus)}};
  *out = job;
}

void ResolveJobs(const Trace& trace, const SpecInfo& info, std::vector<SimJob>* jobs,
                 std::vector<RareString>* reject_reasons) {
  jobs->clear();
  reject_reasons->clear();
  jobs->reserve(trace.jobs.size());
  reject_reasons->reserve(trace.jobs.size());
  JobResolver resolver(info);
  std::string reason;
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    SimJob job;
    resolver.Resolve(trace.jobs[i], static_cast<JobIndex>(i), &job, &reason);
    jobs->push_back(job);
    reject_reasons->emplace_back() = std::move(reason);
  }
}

void AddToFacts(const TraceJob& job, TraceFacts* facts) {
  if (facts->jobs == 0) facts->first_submit = job.submit_time;
  ++facts->jobs;
  facts->last_submit = job.submit_time;
  facts->longest = std::max(facts->longest, job.duration);
  if (!job.pinned_cell.empty()) {
    std::vector<std::string>& cells = facts->named_pinned_cells;
    auto it = std::lower_bound(cells.begin(), cells.end(), job.pinned_cell.view());
    if (it == cells.end() || *it != job.pinned_cell.view()) cells.insert(it, job.pinned_cell.str());
  }
}

TraceFacts FactsOf(const Trace& trace) {
  TraceFacts facts;
  for (const TraceJob& t : trace.jobs) AddToFacts(t, &facts);
  return facts;
}

Engine::Engine(const SpecInfo& info, ClusterBackend* backend, EngineOptions options)
    : info_(info), backend_(backend), options_(std::move(options)) {}

namespace {

// Keeps every job and record in the result, by trace order.
class CollectSink : public JobSink {
 public:
  CollectSink(size_t jobs, EngineResult* result) : result_(result) {
    result_->jobs.resize(jobs);
    result_->records.resize(jobs);
  }
  absl::Status Add(const FinishedJob& job) override {
    const size_t j = static_cast<size_t>(job.index);
    result_->jobs[j] = *job.job;
    result_->records[j] = *job.record;
    return absl::OkStatus();
  }

 private:
  EngineResult* result_;
};

}  // namespace

absl::StatusOr<EngineResult> Engine::Run(const Trace& trace,
                                         const std::vector<NodeEvent>& node_events) {
  TraceFeed feed(trace);
  const TraceFacts facts = FactsOf(trace);
  EngineResult collected;
  CollectSink sink(trace.jobs.size(), &collected);
  absl::StatusOr<EngineResult> result = Run(&feed, facts, node_events, &sink);
  if (!result.ok()) return result.status();
  result->jobs = std::move(collected.jobs);
  result->records = std::move(collected.records);
  return result;
}

absl::StatusOr<EngineResult> Engine::Run(JobFeed* feed, const TraceFacts& facts,
                                         const std::vector<NodeEvent>& node_events, JobSink* sink) {
  replay_internal::Replay replay(info_, backend_, options_);
  return replay.Run(feed, facts, node_events, sink);
}

}  // namespace hived::sim

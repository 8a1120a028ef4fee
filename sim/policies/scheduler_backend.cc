#include "sim/policies/scheduler_backend.h"

#include <algorithm>
#include <charconv>
#include <string>

#include "absl/strings/str_cat.h"
#include "sim/common/csv.h"

namespace hived::sim {

// ParsePolicyKind, PolicyKindName and MakeSchedulerBackend: sim/policies/policy_registry.cc.

SchedulerBackend::SchedulerBackend(const ClusterSpec& spec, int32_t job_count)
    : info_(spec),
      vc_used_by_priority_(static_cast<size_t>(info_.vc_count())),
      vc_guaranteed_used_(static_cast<size_t>(info_.vc_count()), 0),
      jobs_(static_cast<size_t>(std::max(job_count, 0))) {}

int32_t SchedulerBackend::AddNode(const std::string& name, const std::string& physical,
                                  int32_t gpus) {
  auto [it, inserted] = node_index_.try_emplace(name, static_cast<int32_t>(nodes_.size()));
  if (inserted) {
    nodes_.push_back(name);
    physical_name_.push_back(physical);
    node_capacity_.push_back(gpus);
    node_domain_.push_back(-1);  // until a domain claims it
  } else {
    node_capacity_[static_cast<size_t>(it->second)] += gpus;
  }
  return it->second;
}

void SchedulerBackend::SetNodes(const Scheduler& full) {
  for (const NodeStatus& n : full.Nodes()) AddNode(n.name, n.name, n.total_leaf_cells);
}

std::optional<std::vector<int32_t>> SchedulerBackend::NodesNamed(std::string_view physical) const {
  auto it = copies_.find(std::string(physical));
  if (it != copies_.end()) return it->second;
  if (std::binary_search(config_nodes_.begin(), config_nodes_.end(), physical)) {
    return std::vector<int32_t>{};
  }
  return std::nullopt;
}

absl::StatusOr<std::unique_ptr<Scheduler>> SchedulerBackend::CreateScheduler(
    const ClusterSpec& spec) {
  SchedulerOptions options;
  options.change_log_capacity = 0;
  return Scheduler::Create(spec, options);
}

absl::Status SchedulerBackend::AddDomain(const ClusterSpec& spec, const std::string& prefix) {
  absl::StatusOr<std::unique_ptr<Scheduler>> s = CreateScheduler(spec);
  if (!s.ok()) return s.status();
  return AddDomain(std::move(*s), prefix);
}

absl::Status SchedulerBackend::AddDomain(std::unique_ptr<Scheduler> scheduler,
                                         const std::string& prefix) {
  if (!prefix.empty()) {
    for (const NodeStatus& n : scheduler->Nodes()) {
      const int32_t id = AddNode(prefix + n.name, n.name, n.total_leaf_cells);
      std::vector<int32_t>& ids = copies_[n.name];
      if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
    }
  }
  Domain d{std::move(scheduler), NodeUsage(node_capacity_), prefix, {}, {}};
  const int32_t domain = static_cast<int32_t>(domains_.size());
  for (const NodeStatus& n : d.scheduler->Nodes()) {
    auto it = node_index_.find(prefix + n.name);
    if (it == node_index_.end()) {
      return absl::InternalError(absl::StrCat("node ", n.name, " is not in the full cluster"));
    }
    int32_t& owner = node_domain_[static_cast<size_t>(it->second)];
    if (owner != -1 && owner != domain) {
      return absl::InternalError(absl::StrCat("node ", prefix, n.name, " is in two domains"));
    }
    owner = domain;
    d.global_index.emplace(n.name, it->second);
  }
  const Scheduler& sched = *d.scheduler;
  d.global_by_id.assign(static_cast<size_t>(sched.NodeCount()), -1);
  for (int32_t id = 0; id < sched.NodeCount(); ++id) {
    auto it = d.global_index.find(std::string(sched.NodeName(id)));
    if (it != d.global_index.end()) d.global_by_id[static_cast<size_t>(id)] = it->second;
  }
  domains_.push_back(std::move(d));
  return absl::OkStatus();
}

const GroupRequest& SchedulerBackend::MakeRequest(const SimJob& job, const Ask& ask) {
  GroupRequest& req = request_;
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), job.index);
  req.name.assign(digits, ec == std::errc() ? end : digits);
  req.vc.assign(ask.vc.data(), ask.vc.size());
  req.priority = ask.priority;
  req.leaf_cell_type.assign(job.gpu_type.data(), job.gpu_type.size());
  // The request is reused between jobs: every field is set on every call.
  if (KeepsPinnedCells()) {
    req.pinned_cell_id.assign(job.pinned_cell.data(), job.pinned_cell.size());
  } else {
    req.pinned_cell_id.clear();
  }
  req.members.resize(job.members.size());
  for (size_t i = 0; i < job.members.size(); ++i) {
    req.members[i] = GroupMember{job.members[i].pod_number, job.members[i].leaf_cell_number};
  }
  req.suggested_nodes = SuggestNodes(job, ask);
  return req;
}

bool SchedulerBackend::MayFitGuaranteed(const SimJob& job) const {
  const Priority p = AskFor(job, /*opportunistic=*/false).priority;
  int64_t used = 0;
  for (const auto& [q, gpus] : vc_used_by_priority_[static_cast<size_t>(job.vc)]) {
    if (q >= p) used += gpus;
  }
  // Reserved GPUs (pinned cells too): a pinned job's usage is not in the virtual cells.
  return info_.VcReservedGpus(job.vc) - used >= job.gpus;
}

absl::StatusOr<StartAttempt> SchedulerBackend::TryStart(const SimJob& job,
                                                        const TryOptions& options) {
  if (options.only_node >= 0) {
    // The library places a gang where its packing decides; a one-node restriction would be
    // a suggestion it may ignore, so it is refused rather than silently dropped.
    return absl::InvalidArgumentError(absl::StrCat(
        "policy ", std::string(policy_name()), " cannot start job ", job.index, " on node ",
        options.only_node, " only: a job backend places gangs anywhere (TryOptions::only_node)"));
  }
  StartAttempt first;
  if (job.priority >= 0 || !SupportsOverflow()) {
    // A guaranteed ask (private runs opportunistic jobs as guaranteed inside the VC).
    const bool opportunistic_job = job.priority < 0;
    if (job.pinned_cell.empty() && job.gpus > info_.VcVirtualGpus(job.vc)) {
      // Only reachable for private's opportunistic jobs: guaranteed ones this large are
      // rejected before they are queued.
      first.kind = StartAttempt::Kind::kInfeasible;
      first.reason =
          absl::StrCat("needs ", job.gpus, " GPUs but VC ", info_.vc_name(job.vc),
                       " reserves only ", info_.VcVirtualGpus(job.vc), " in virtual cells");
      return first;
    }
    std::string why = opportunistic_job ? "" : Admit(job);
    if (!why.empty()) {
      first.reason = std::move(why);
    } else if (!MayFitGuaranteed(job)) {
      // Waiting: the VC has too few reserved GPUs free or preemptible. No reason string:
      // this is the most frequent answer, and waiting reasons are not reported.
    } else {
      if (absl::Status s = Attempt(job, /*opportunistic=*/false, options.may_reclaim, &first);
          !s.ok()) {
        return s;
      }
      if (first.kind != StartAttempt::Kind::kWaiting) return first;
    }
    if (!options.allow_overflow || !SupportsOverflow() || opportunistic_job) return first;
  }
  // Opportunistic: the job's own priority -1, or an overflow attempt.
  const int32_t domain = AskFor(job, /*opportunistic=*/true).domain;
  const Domain& d = domains_[static_cast<size_t>(domain)];
  StartAttempt second;
  if (d.usage.capacity() - d.usage.used() < job.gpus) {
    // Waiting: too few idle GPUs in the cluster for an opportunistic run (no reason string,
    // as above).
  } else if (absl::Status s = Attempt(job, /*opportunistic=*/true, options.may_reclaim, &second);
             !s.ok()) {
    return s;
  }
  if (job.priority >= 0 && second.kind != StartAttempt::Kind::kStarted) return first;
  return second;
}

absl::Status SchedulerBackend::Attempt(const SimJob& job, bool opportunistic, bool may_reclaim,
                                       StartAttempt* attempt) {
  Ask ask = AskFor(job, opportunistic);
  ask.may_reclaim = may_reclaim;
  const GroupRequest& req = MakeRequest(job, ask);
  Scheduler& scheduler = *domains_[static_cast<size_t>(ask.domain)].scheduler;
  ++schedule_calls_;
  const bool may_preempt = opportunistic || MayPreempt(job, ask);
  // An attempt that may preempt takes the fast path: Schedule(kPreempting) and, when placed,
  // Allocate in one call (`fast_.detail` is Schedule's result for any other outcome).
  absl::StatusOr<ScheduleResult> classic;
  absl::Status status;
  if (may_preempt) {
    status = scheduler.ScheduleAndAllocate(req, &fast_);
  } else {
    classic = scheduler.Schedule(req, Phase::kFiltering);
    status = classic.status();
  }
  if (!status.ok()) {
    // A request the scheduler refuses as malformed (e.g. a leaf type the VC lacks) is the
    // job's fault: it is rejected, with the scheduler's words as the reason.
    if (absl::IsInvalidArgument(status) || absl::IsNotFound(status)) {
      attempt->kind = StartAttempt::Kind::kInfeasible;
      attempt->reason = std::string(status.message());
      return absl::OkStatus();
    }
    return status;
  }
  ScheduleResult* r = may_preempt ? &fast_.detail : &*classic;
  attempt->opportunistic = ask.priority < 0;
  switch (r->outcome) {
    case Outcome::kPlaced: {
      if (!may_preempt) {
        absl::StatusOr<AllocateInfo> a = scheduler.Allocate(req, r->placement);
        if (!a.ok()) return a.status();
      }
      attempt->kind = StartAttempt::Kind::kStarted;
      JobRun& run = jobs_.Open(job.index);
      run.domain = ask.domain;
      run.opportunistic = attempt->opportunistic;
      run.priority = ask.priority;
      run.handle = GroupHandle();
      if (may_preempt) {
        run.handle = fast_.handle;
        return Record(job, fast_);
      }
      return Record(job, r->placement);
    }
    case Outcome::kPreempting: {
      if (!may_preempt) {
        attempt->kind = StartAttempt::Kind::kWaiting;
        attempt->reason = "would preempt borrowers before the reclaim delay";
        return absl::OkStatus();
      }
      attempt->kind = StartAttempt::Kind::kPreempting;
      for (const std::string& v : r->victims) {
        JobIndex victim = -1;
        auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), victim);
        if (ec != std::errc() || ptr != v.data() + v.size() || victim < 0 ||
            static_cast<size_t>(victim) >= jobs_.size()) {
          return absl::InternalError(absl::StrCat("victim '", v, "' is not a simulated job"));
        }
        attempt->victims.push_back(victim);
      }
      JobRun& run = jobs_.Open(job.index);
      run.domain = ask.domain;
      run.opportunistic = attempt->opportunistic;
      run.priority = ask.priority;
      run.handle = GroupHandle();  // allocated by Allocate later: released by name
      run.pending = std::make_unique<PendingStart>(PendingStart{req, std::move(r->placement)});
      return absl::OkStatus();
    }
    case Outcome::kWaiting:
      attempt->kind = StartAttempt::Kind::kWaiting;
      attempt->reason = std::move(r->reason);
      return absl::OkStatus();
    case Outcome::kInfeasible:
      attempt->kind = StartAttempt::Kind::kInfeasible;
      attempt->reason = std::move(r->reason);
      return absl::OkStatus();
  }
  return absl::InternalError("unknown schedule outcome");
}

absl::Status SchedulerBackend::Record(const SimJob& job, const Placement& placement) {
  JobRun& run = jobs_.Open(job.index);
  Domain& d = domains_[static_cast<size_t>(run.domain)];
  run.running = true;
  run.pods.clear();
  for (const PodPlacement& pod : placement.pods) {
    auto it = d.global_index.find(pod.node);
    if (it == d.global_index.end()) {
      return absl::InternalError(absl::StrCat("placement names unknown node ", pod.node));
    }
    const int32_t gpus = static_cast<int32_t>(pod.leaf_cell_indices.size());
    run.pods.emplace_back(it->second, gpus);
    d.usage.Add(it->second, gpus);
  }
  if (!run.opportunistic) CountGuaranteed(job, run.priority);
  return absl::OkStatus();
}

absl::Status SchedulerBackend::Record(const SimJob& job, const FastResult& placed) {
  JobRun& run = jobs_.Open(job.index);
  Domain& d = domains_[static_cast<size_t>(run.domain)];
  run.running = true;
  run.pods.clear();
  for (const FastPod& pod : placed.pods) {
    const int32_t node = pod.node >= 0 && static_cast<size_t>(pod.node) < d.global_by_id.size()
                             ? d.global_by_id[static_cast<size_t>(pod.node)]
                             : -1;
    if (node < 0) {
      return absl::InternalError(absl::StrCat("placement names unknown node id ", pod.node));
    }
    run.pods.emplace_back(node, pod.leaf_count);
    d.usage.Add(node, pod.leaf_count);
  }
  if (!run.opportunistic) CountGuaranteed(job, run.priority);
  return absl::OkStatus();
}

void SchedulerBackend::CountGuaranteed(const SimJob& job, Priority p) {
  auto& by_priority = vc_used_by_priority_[static_cast<size_t>(job.vc)];
  auto it = std::find_if(by_priority.begin(), by_priority.end(),
                         [p](const auto& e) { return e.first == p; });
  if (it == by_priority.end()) {
    by_priority.emplace_back(p, job.gpus);
  } else {
    it->second += job.gpus;
  }
  vc_guaranteed_used_[static_cast<size_t>(job.vc)] += job.gpus;
  guaranteed_used_ += job.gpus;
}

absl::Status SchedulerBackend::FinishPreemption(const SimJob& job) {
  JobRun* found = jobs_.Find(job.index);
  if (found == nullptr || !found->pending) {
    return absl::FailedPreconditionError(absl::StrCat("job ", job.index, " is not preempting"));
  }
  JobRun& run = *found;
  Scheduler& scheduler = *domains_[static_cast<size_t>(run.domain)].scheduler;
  absl::StatusOr<AllocateInfo> a = scheduler.Allocate(run.pending->request, run.pending->placement);
  if (!a.ok()) return a.status();
  const std::unique_ptr<PendingStart> pending = std::move(run.pending);
  return Record(job, pending->placement);
}

absl::Status SchedulerBackend::Release(const SimJob& job) {
  JobRun* found = jobs_.Find(job.index);
  if (found == nullptr || !found->running) {
    return absl::FailedPreconditionError(absl::StrCat("job ", job.index, " is not running"));
  }
  JobRun& run = *found;
  Domain& d = domains_[static_cast<size_t>(run.domain)];
  // The group name (the job index in decimal) in a buffer: no string built per release.
  char name[16];
  const auto [end, ec] = std::to_chars(name, name + sizeof(name), job.index);
  if (ec != std::errc()) return absl::InternalError("job index does not fit a group name");
  if (absl::Status s = !run.handle.IsNil() ? d.scheduler->Release(run.handle)
                                           : d.scheduler->Release(std::string_view(
                                                 name, static_cast<size_t>(end - name)));
      !s.ok()) {
    return s;
  }
  for (const auto& [node, gpus] : run.pods) d.usage.Remove(node, gpus);
  if (!run.opportunistic) {
    const Priority p = run.priority;
    for (auto& [q, gpus] : vc_used_by_priority_[static_cast<size_t>(job.vc)]) {
      if (q == p) gpus -= job.gpus;
    }
    vc_guaranteed_used_[static_cast<size_t>(job.vc)] -= job.gpus;
    guaranteed_used_ -= job.gpus;
  }
  jobs_.Close(job.index);
  return absl::OkStatus();
}

absl::Status SchedulerBackend::SetNodeHealthy(int32_t node, bool healthy) {
  if (node < 0 || static_cast<size_t>(node) >= nodes_.size()) {
    return absl::NotFoundError(absl::StrCat("node index ", node, " out of range"));
  }
  // Only the node's own domain hears of it. (Per-domain masks sized when each domain was
  // added were read past their end for later domains' nodes: stray bits sent a private
  // cluster's failure to another cluster, and runs differed from run to run.)
  const int32_t d = node_domain_[static_cast<size_t>(node)];
  if (d < 0) return absl::OkStatus();
  return domains_[static_cast<size_t>(d)].scheduler->SetNodeHealthy(
      physical_name_[static_cast<size_t>(node)], healthy);
}

NodeList SchedulerBackend::JobNodes(JobIndex job) const {
  NodeList out;
  const JobRun* run = jobs_.Find(job);
  if (run == nullptr) return out;
  for (const auto& pod : run->pods) out.push_back(pod.first);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

absl::Status SchedulerBackend::CheckInvariants() const {
  for (const Domain& d : domains_) {
    if (absl::Status s = d.scheduler->CheckInvariants(); !s.ok()) return s;
  }
  return absl::OkStatus();
}

int64_t SchedulerBackend::used_gpus() const {
  int64_t used = 0;
  for (const Domain& d : domains_) used += d.usage.used();
  return used;
}

int64_t SchedulerBackend::fragmented_free_gpus() const {
  int64_t frag = 0;
  for (const Domain& d : domains_) frag += d.usage.fragmented_free();
  return frag;
}

}  // namespace hived::sim

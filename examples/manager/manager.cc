// An example cluster manager on hived (docs/integration.md walks through it).
//
// Jobs are gangs of pods kept in memory, the way a Kubernetes scheduler plugin or a custom
// manager keeps them in its own store. The manager owns the job queue, binds pods to the
// nodes and devices hived chooses, deletes the pods of preemption victims, reacts to node
// failures, restarts from its persisted records or from the scheduler's saved state, and serves
// status from another thread. hived owns the cells: placement, reservation, preemption victims, VC
// guarantees.
//
// Usage: example_manager [cluster.yaml]   (default: cluster.yaml beside this file)
// Runs a scripted day of the cluster and exits 0 when everything behaved as expected.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hived/config.h"
#include "hived/scheduler.h"
#include "hived/state.h"

#ifndef EXAMPLE_DIR  // where cluster.yaml is; CMake sets it to this folder
#define EXAMPLE_DIR "."
#endif

namespace example {

struct Pod {
  std::string name;
  int32_t gpus = 0;
  std::string node;              // empty until bound
  std::vector<int32_t> devices;  // device indices on the node (NVIDIA_VISIBLE_DEVICES)
};

enum class JobState { kPending, kPreempting, kRunning, kFailed, kDone };

struct Job {
  hived::GroupRequest request;  // the gang as hived sees it
  std::vector<Pod> pods;
  JobState state = JobState::kPending;
  std::string why;             // why it is pending or failed
  hived::Placement placement;  // while running: the record persisted for a restart
  int64_t submitted = 0;       // queue order among equal priorities
};

class Manager {
 public:
  static absl::StatusOr<std::unique_ptr<Manager>> Start(const std::string& config_path) {
    // [snippet: create]
    absl::StatusOr<hived::ClusterSpec> spec = hived::LoadClusterSpecFile(config_path);
    if (!spec.ok()) return spec.status();  // located: "cluster.yaml:12:5: ..."
    absl::StatusOr<std::unique_ptr<hived::Scheduler>> scheduler = hived::Scheduler::Create(*spec);
    if (!scheduler.ok()) return scheduler.status();
    // [end snippet]
    return std::unique_ptr<Manager>(new Manager(std::move(*spec), std::move(*scheduler)));
  }

  // [snippet: submit]
  void Submit(const std::string& name, const std::string& vc, hived::Priority priority,
              int32_t pods, int32_t gpus_per_pod) {
    Job job;
    job.request.name = name;
    job.request.vc = vc;
    job.request.priority = priority;  // -1: opportunistic, 0..1000: guaranteed
    job.request.members = {{/*pod_number=*/pods, /*leaf_cell_number=*/gpus_per_pod}};
    for (int32_t i = 0; i < pods; ++i)
      job.pods.push_back({name + "-" + std::to_string(i), gpus_per_pod, {}, {}});
    job.submitted = next_submission_++;
    jobs_[name] = std::move(job);
  }
  // [end snippet]

  // One scheduling pass: every pending or preempting job, highest priority first, then in
  // submission order.
  void RunCycle() {
    std::vector<Job*> queue;
    for (auto& [name, job] : jobs_) {
      if (job.state == JobState::kPending || job.state == JobState::kPreempting) {
        queue.push_back(&job);
      }
    }
    std::sort(queue.begin(), queue.end(), [](const Job* a, const Job* b) {
      if (a->request.priority != b->request.priority) {
        return a->request.priority > b->request.priority;
      }
      return a->submitted < b->submitted;
    });
    for (Job* job : queue) ScheduleOne(*job);
  }

  // [snippet: filter]
  // Kubernetes' Filter: may the job run now, and on which nodes? Phase::kFiltering changes
  // nothing in the scheduler: victims are reported, not reserved.
  std::string WouldRun(const Job& job) const {
    absl::StatusOr<hived::ScheduleResult> result =
        scheduler_->Schedule(job.request, hived::Phase::kFiltering);
    if (!result.ok()) return "error: " + result.status().ToString();
    std::string answer = hived::OutcomeName(result->outcome);
    for (const std::string& victim : result->victims) answer += " " + victim;
    return answer;
  }
  // [end snippet]

  // [snippet: finish]
  // A job's pods all ended: hived frees its cells.
  absl::Status Finish(const std::string& name) {
    Job& job = jobs_.at(name);
    absl::Status released = scheduler_->Release(name);
    if (!released.ok()) return released;
    Unbind(job);
    job.state = JobState::kDone;
    return absl::OkStatus();
  }
  // [end snippet]

  // [snippet: node-health]
  // A node failed or came back. hived keeps running groups on a bad node (the manager
  // decides) and places nothing new there. This manager restarts the gangs it hit.
  absl::Status SetNodeHealthy(const std::string& node, bool healthy) {
    absl::Status status = scheduler_->SetNodeHealthy(node, healthy);
    if (!status.ok() || healthy) return status;
    for (auto& [name, job] : jobs_) {
      const bool hit = std::any_of(job.pods.begin(), job.pods.end(),
                                   [&](const Pod& pod) { return pod.node == node; });
      if (job.state != JobState::kRunning || !hit) continue;
      status = scheduler_->Release(name);
      if (!status.ok()) return status;
      Unbind(job);
      job.state = JobState::kPending;  // scheduled again, elsewhere, by the next cycle
      job.why = "restarted: node " + node + " failed";
    }
    return absl::OkStatus();
  }
  // [end snippet]

  // [snippet: restart]
  // The manager process restarted: build a new scheduler from the same config and hand
  // every running job's persisted placement to Recover (a placement from elsewhere). A job
  // that was preempting holds no cells yet: it is simply scheduled again.
  absl::Status Restart() {
    absl::StatusOr<std::unique_ptr<hived::Scheduler>> fresh = hived::Scheduler::Create(spec_);
    if (!fresh.ok()) return fresh.status();
    scheduler_ = std::move(*fresh);
    for (auto& [name, job] : jobs_) {
      if (job.state == JobState::kPreempting) job.state = JobState::kPending;
      if (job.state != JobState::kRunning) continue;
      absl::StatusOr<hived::AllocateInfo> info = scheduler_->Recover(job.request, job.placement);
      if (!info.ok()) return info.status();  // e.g. a corrupted record: kInvalidArgument
      if (info->downgraded)
        std::printf("  %s now runs opportunistically: %s\n", name.c_str(), info->reason.c_str());
    }
    return scheduler_->CheckInvariants();
  }
  // [end snippet]

  // [snippet: restore]
  // Instead of per-job records, the manager persisted the scheduler's whole state
  // (SaveState: versioned JSON, docs/state-format.md). After a restart it rebuilds the
  // scheduler from the config and that document; the report says, per group, whether it was
  // kept as it ran, downgraded or dropped, and why.
  absl::Status RestoreFrom(const std::string& saved_state) {
    hived::RestoreReport report;
    absl::StatusOr<std::unique_ptr<hived::Scheduler>> restored =
        hived::Scheduler::Restore(spec_, saved_state, &report);
    if (!restored.ok()) return restored.status();  // located: "$.groups[3].name: ..."
    scheduler_ = std::move(*restored);
    for (const hived::RestoreReport::Group& g : report.groups) {
      if (g.outcome != hived::RestoreOutcome::kKept)
        std::printf("  %s %s: %s\n", g.name.c_str(), hived::RestoreOutcomeName(g.outcome),
                    g.reason.c_str());
    }
    // Preempting groups are not saved (they hold no cells yet): schedule them again.
    for (auto& [name, job] : jobs_) {
      if (job.state == JobState::kPreempting) job.state = JobState::kPending;
    }
    return scheduler_->CheckInvariants();
  }
  // [end snippet]

  const Job& job(const std::string& name) const { return jobs_.at(name); }
  void FailNextBind() { fail_next_bind_ = true; }
  const hived::Scheduler& scheduler() const { return *scheduler_; }

 private:
  Manager(hived::ClusterSpec spec, std::unique_ptr<hived::Scheduler> scheduler)
      : spec_(std::move(spec)), scheduler_(std::move(scheduler)) {}

  // [snippet: schedule]
  void ScheduleOne(Job& job) {
    absl::StatusOr<hived::ScheduleResult> result =
        scheduler_->Schedule(job.request, hived::Phase::kPreempting);
    if (!result.ok()) {  // a malformed request or an unknown VC: it never runs as written
      Fail(job, result.status().ToString());
      return;
    }
    switch (result->outcome) {
      case hived::Outcome::kPlaced:  // Kubernetes: Reserve, Permit, Bind
        Bind(job, result->placement);
        break;
      case hived::Outcome::kPreempting:  // Kubernetes: PostFilter (preemption)
        job.state = JobState::kPreempting;
        job.why = "waiting for its victims to go";
        Evict(result->victims);
        break;
      case hived::Outcome::kWaiting:  // Kubernetes: Unschedulable; try again later
        job.why = result->reason;
        break;
      case hived::Outcome::kInfeasible:  // Kubernetes: UnschedulableAndUnresolvable
        Fail(job, result->reason);
        break;
    }
  }
  // [end snippet]

  // [snippet: bind]
  // The placement is reserved for the job until Allocate or Unreserve. Pods of one size are
  // interchangeable: each takes the next placement pod of its size.
  void Bind(Job& job, const hived::Placement& placement) {
    std::vector<bool> taken(placement.pods.size(), false);
    for (Pod& pod : job.pods) {
      for (size_t i = 0; i < placement.pods.size(); ++i) {
        if (taken[i] || placement.pods[i].leaf_cell_number != pod.gpus) continue;
        taken[i] = true;
        pod.node = placement.pods[i].node;
        pod.devices = placement.pods[i].leaf_cell_indices;
        break;
      }
    }
    if (!BindPods(job)) {  // e.g. the API server refused a binding: give the cells back
      Unbind(job);
      absl::Status unreserved = scheduler_->Unreserve(job.request.name);
      job.why = "bind failed, reservation given up: " + unreserved.ToString();
      return;  // still pending: scheduled again next cycle
    }
    absl::StatusOr<hived::AllocateInfo> info = scheduler_->Allocate(job.request, placement);
    if (!info.ok()) {  // not the reserved request or placement: a bug of the manager
      Fail(job, info.status().ToString());
      return;
    }
    job.why = info->downgraded ? "runs opportunistically: " + info->reason : "";
    job.state = JobState::kRunning;
    job.placement = placement;  // persist this with the job: it is the recovery record
  }
  // [end snippet]

  // [snippet: evict]
  // Preemption: delete the victims' pods, then tell hived their cells are free. The
  // preemptor keeps its reservation meanwhile; the next cycle's Schedule places it.
  void Evict(const std::vector<std::string>& victims) {
    for (const std::string& victim : victims) {
      Job& gone = jobs_.at(victim);
      if (!scheduler_->Release(victim).ok()) continue;  // already gone
      Unbind(gone);  // in Kubernetes: delete the pods, wait until they terminate
      gone.state = JobState::kPending;
      gone.why = "preempted";
    }
  }
  // [end snippet]

  // The cluster's side of binding (in Kubernetes, the Binding objects). Fails once when a
  // test asked for it (`FailNextBind`).
  bool BindPods(const Job& job) {
    if (!fail_next_bind_) return !job.pods.empty();
    fail_next_bind_ = false;
    return false;
  }

  static void Unbind(Job& job) {
    for (Pod& pod : job.pods) {
      pod.node.clear();
      pod.devices.clear();
    }
    job.placement = hived::Placement();
  }

  static void Fail(Job& job, std::string why) {
    job.state = JobState::kFailed;
    job.why = std::move(why);
  }

  hived::ClusterSpec spec_;
  std::unique_ptr<hived::Scheduler> scheduler_;
  std::map<std::string, Job> jobs_;
  int64_t next_submission_ = 0;
  bool fail_next_bind_ = false;
};

const char* StateName(JobState state) {
  switch (state) {
    case JobState::kPending:
      return "pending";
    case JobState::kPreempting:
      return "preempting";
    case JobState::kRunning:
      return "running";
    case JobState::kFailed:
      return "failed";
    case JobState::kDone:
      return "done";
  }
  return "unknown";
}

int failures = 0;

void Expect(const Manager& m, const std::string& name, JobState want) {
  const Job& job = m.job(name);
  std::string where;
  for (const Pod& pod : job.pods) {
    if (pod.node.empty()) continue;
    where += " " + pod.name + "@" + pod.node + "[";
    for (size_t i = 0; i < pod.devices.size(); ++i)
      where += (i ? "," : "") + std::to_string(pod.devices[i]);
    where += "]";
  }
  std::printf("  %-10s %-10s%s%s%s\n", name.c_str(), StateName(job.state), where.c_str(),
              job.why.empty() ? "" : "  -- ", job.why.c_str());
  if (job.state != want) {
    std::printf("  UNEXPECTED: %s should be %s\n", name.c_str(), StateName(want));
    ++failures;
  }
}

void Check(bool ok, const std::string& what) {
  if (!ok) {
    std::printf("  UNEXPECTED: %s\n", what.c_str());
    ++failures;
  }
}

}  // namespace example

int main(int argc, char** argv) {
  using example::JobState;
  const std::string config = argc > 1 ? argv[1] : EXAMPLE_DIR "/cluster.yaml";
  absl::StatusOr<std::unique_ptr<example::Manager>> started = example::Manager::Start(config);
  if (!started.ok()) {
    std::fprintf(stderr, "%s\n", started.status().ToString().c_str());
    return 1;
  }
  example::Manager& m = **started;

  // [snippet: status]
  // A status endpoint on its own thread: views may run while the manager schedules (the
  // scheduler's internal lock serialises them with mutations).
  std::atomic<bool> stop{false};
  std::atomic<int64_t> polls{0};
  std::thread status([&] {
    while (!stop.load()) {
      int32_t used = 0;
      for (const hived::VcUsage& u : m.scheduler().VcUsages()) {
        used += u.guaranteed_used_leaf_cells + u.opportunistic_used_leaf_cells;
      }
      if (used >= 0) polls.fetch_add(1);
    }
  });
  // [end snippet]
  while (polls.load() == 0) std::this_thread::yield();  // the status endpoint is up

  std::printf("research fills its 2 nodes; an opportunistic job borrows an idle prod node\n");
  m.Submit("train", "research", 10, 2, 4);
  m.Submit("explore", "research", hived::kOpportunisticPriority, 1, 4);
  m.RunCycle();
  example::Expect(m, "train", JobState::kRunning);
  example::Expect(m, "explore", JobState::kRunning);

  std::printf("prod needs its 2 nodes back: Filtering reports the victim, Preempting evicts it\n");
  m.Submit("serve", "prod", 100, 2, 4);
  const std::string would = m.WouldRun(m.job("serve"));
  std::printf("  filter: %s\n", would.c_str());
  example::Check(would == "preempting explore", "the Filtering phase names the victim");
  m.RunCycle();  // serve reserves; explore's pods are deleted
  example::Expect(m, "serve", JobState::kPreempting);
  example::Expect(m, "explore", JobState::kPending);
  m.RunCycle();  // the victim is gone: serve is placed and bound; explore waits
  example::Expect(m, "serve", JobState::kRunning);
  example::Expect(m, "explore", JobState::kPending);

  std::printf("a gang larger than research's cells can never run\n");
  m.Submit("huge", "research", 10, 3, 4);
  m.RunCycle();
  example::Expect(m, "huge", JobState::kFailed);

  std::printf("a node of train fails: train restarts and waits; explore borrows the free node\n");
  const std::string node = m.job("train").pods[0].node;
  example::Check(m.SetNodeHealthy(node, false).ok(), "mark " + node + " bad");
  m.RunCycle();
  example::Expect(m, "train", JobState::kPending);
  example::Expect(m, "explore", JobState::kRunning);

  std::printf("the node is back: train takes its cells back from explore\n");
  example::Check(m.SetNodeHealthy(node, true).ok(), "mark " + node + " healthy");
  m.RunCycle();
  example::Expect(m, "train", JobState::kPreempting);
  m.RunCycle();
  example::Expect(m, "train", JobState::kRunning);
  example::Expect(m, "explore", JobState::kPending);

  // The status thread reads the scheduler that Restart replaces: stop it first.
  stop.store(true);
  status.join();
  std::printf("status thread: %lld polls while scheduling\n", static_cast<long long>(polls.load()));

  std::printf("the manager restarts and recovers every running job from its records\n");
  const std::vector<hived::GroupStatus> before = m.scheduler().Groups();
  example::Check(m.Restart().ok(), "restart");
  const std::vector<hived::GroupStatus> after = m.scheduler().Groups();
  example::Check(before.size() == after.size(), "the same groups after the restart");
  for (size_t i = 0; i < std::min(before.size(), after.size()); ++i) {
    example::Check(before[i].name == after[i].name && before[i].state == after[i].state &&
                       before[i].placement.pods.size() == after[i].placement.pods.size(),
                   before[i].name + " recovered as it was");
  }

  std::printf("the manager restarts again, this time from the scheduler's saved state\n");
  const absl::StatusOr<std::string> saved = m.scheduler().SaveState();
  example::Check(saved.ok(), "save the scheduler's state");
  example::Check(saved.ok() && m.RestoreFrom(*saved).ok(), "restore from the saved state");
  const absl::StatusOr<std::string> resaved = m.scheduler().SaveState();
  example::Check(saved.ok() && resaved.ok() && *saved == *resaved,
                 "the restored scheduler saves the same state");
  example::Check(m.scheduler().Groups().size() == after.size(), "the same groups after restore");

  std::printf("jobs finish; explore finally runs\n");
  example::Check(m.Finish("serve").ok(), "finish serve");
  m.RunCycle();
  example::Expect(m, "explore", JobState::kRunning);

  std::printf("a bind fails: the manager unreserves the job's cells and binds it next cycle\n");
  m.Submit("eval", "prod", 100, 1, 4);
  m.FailNextBind();
  m.RunCycle();
  example::Expect(m, "eval", JobState::kPending);
  example::Check(m.scheduler().GetGroup("eval").state == hived::GroupState::kAbsent,
                 "eval holds no reservation after its failed bind");
  m.RunCycle();
  example::Expect(m, "eval", JobState::kRunning);
  example::Check(m.Finish("eval").ok(), "finish eval");
  example::Check(m.Finish("train").ok() && m.Finish("explore").ok(), "finish the rest");
  example::Check(m.scheduler().Groups().empty(), "no group left");
  example::Check(m.scheduler().CheckInvariants().ok(), "invariants hold");

  if (example::failures == 0) {
    std::printf("example manager: all as expected\n");
  } else {
    std::printf("example manager: %d unexpected results\n", example::failures);
  }
  return example::failures == 0 ? 0 : 1;
}

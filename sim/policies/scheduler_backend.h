// sim/policies/scheduler_backend.h: the sharing policies, each a `ClusterBackend` over
// `hived::Scheduler` (the public API only), by `PolicyKind` (their names, one-line
// descriptions and options: the registry, sim/policies/policy_registry.h).
//
//   kHived   one Scheduler on the config. Jobs run in their VC at their priority;
//            opportunistic jobs (-1) anywhere idle; preemption as the library decides.
//   kQuota   the HiveD paper's quota baseline. One Scheduler whose single VC `quota-pool`
//            reserves every top-level cell of every chain; every guaranteed job runs in the
//            pool at priority 0 with topology-aware placement anywhere, admitted only while
//            its VC's running guaranteed GPUs plus its own stay within the VC's quota (= the
//            GPUs of the VC's reserved cells). Opportunistic jobs run at -1 in the pool.
//   kPrivate each VC alone: one Scheduler per VC built from just that VC and enough of the
//            physical cluster to hold its cells, so its reserved cells are exactly its
//            private cluster and no other VC contends. Priorities shift up by one (capped at
//            1000) and opportunistic jobs run at priority 0 inside the VC, so they use only
//            the VC's own idle cells and yield to its guaranteed jobs, as on a private cluster.
//            `--opportunistic-overflow` has nothing to overflow into and is ignored.
//   kYarnCs  YARN's Capacity Scheduler without preemption: the kQuota pool, but a VC may run
//            guaranteed GPUs up to its maximum capacity (default: the whole cluster), not just
//            its guarantee, whenever GPUs are idle. Nothing is taken back: an owner whose
//            guarantee is lent waits for the borrowers to finish. Waiting VCs are served
//            least-used first (used / guaranteed GPUs), as YARN orders its queues.
//            With `reclaim_after` (YARN's preemption monitor) jobs are classed as in
//            kElasticQuota, but an owner preempts borrowers only once it has waited that long.
//   kElasticQuota  elastic quotas with reclaim (Kueue cohorts, scheduler-plugins
//            ElasticQuota): the kQuota pool; a job that keeps its VC within its guarantee runs
//            at pool priority 1, a job beyond it (a borrower, up to the maximum) at 0, so an
//            owner's job within its guarantee preempts borrowers when it needs their GPUs.
//            A job's class is fixed when it starts.
// A VC's guarantee under the pool policies is the GPUs of its virtual cells plus those of
// its pinned cells some trace job names (a trace row's `pinned_cell`); a pinned job runs
// under hived and private in its pinned cell, under the pool policies anywhere in the pool
// but within its pinned cell's GPUs (pinned jobs never borrow). Unnamed pinned cells serve
// no trace job, so they count for no policy.
//
// Group names are job indices in decimal, so victims map back to jobs without a table.
//
// Thread safety: not thread-safe; callers serialize. Backends share nothing.
#ifndef HIVED_SIM_POLICIES_SCHEDULER_BACKEND_H_
#define HIVED_SIM_POLICIES_SCHEDULER_BACKEND_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "hived/cluster_spec.h"
#include "hived/fast_path.h"
#include "hived/scheduler.h"
#include "sim/cluster/spec_info.h"
#include "sim/engine/cluster_backend.h"
#include "sim/policies/policy_kind.h"
#include "sim/policies/slot_table.h"

namespace hived::sim {

// The policies' ids: sim/policies/policy_kind.h; names and factories: the registry
// (sim/policies/policy_registry.h).

// Node choice of the pool policies (`--placement`): `pack` is HiveD's topology-aware packing
// (the library's own order: most used nodes first); `first-fit` puts each pod, largest
// first, on the first node in config order with room; `spread` on the node with the most
// free GPUs (YARN's multi-node placement, `ResourceUsageMultiNodeLookupPolicy`).
enum class NodePlacement { kPack, kFirstFit, kSpread };
absl::StatusOr<NodePlacement> ParseNodePlacement(std::string_view name);

// Knobs of the elastic pool policies (kYarnCs, kElasticQuota).
struct PolicyOptions {
  // Maximum GPUs a VC's guaranteed jobs may hold, by VC index; missing or < 0 = the whole
  // cluster. A VC's guarantee is never cut by a smaller maximum.
  std::vector<int64_t> max_capacity;
  // kYarnCs: YARN's preemption monitor. A job within its VC's guarantee that has waited this
  // many seconds preempts borrowers (jobs beyond their VCs' guarantees); -1 = off.
  Time reclaim_after = -1;
  // The pinned cells the trace's jobs name (`NamedPinnedCells`): they count in their VCs'
  // guarantees (`SpecInfo::VcGuarantees`); a pinned job is capped at its pinned cell.
  std::vector<std::string> named_pinned_cells;
  NodePlacement placement = NodePlacement::kPack;  // pool policies only
};

// Builds the backend for `kind` (its registry entry's factory); `job_count` sizes per-job
// tables. Errors: kInvalidArgument when a scheduler cannot be built from the (derived) spec
// or `kind` does not replay jobs.
absl::StatusOr<std::unique_ptr<ClusterBackend>> MakeSchedulerBackend(
    PolicyKind kind, const ClusterSpec& spec, int32_t job_count,
    const PolicyOptions& policy_options = {});

// The shared machinery: scheduler "domains" (one, or one per VC for kPrivate), node usage,
// per-job placements, per-VC guaranteed usage. Subclasses say which domain, VC name and
// priority a job uses and whether it is admitted.
class SchedulerBackend : public ClusterBackend {
 public:
  // Errors: kInvalidArgument for `options.only_node` >= 0 (not honoured by job backends).
  absl::StatusOr<StartAttempt> TryStart(const SimJob& job, const TryOptions& options) override;
  absl::Status FinishPreemption(const SimJob& job) override;
  absl::Status Release(const SimJob& job) override;
  absl::Status SetNodeHealthy(int32_t node, bool healthy) override;
  NodeList JobNodes(JobIndex job) const override;
  absl::Status CheckInvariants() const override;
  const std::vector<std::string>& nodes() const override { return nodes_; }
  bool SharesIdleCells() const override { return SupportsOverflow(); }
  int64_t total_gpus() const override { return total_gpus_; }
  int64_t used_gpus() const override;
  int64_t fragmented_free_gpus() const override;
  int64_t schedule_calls() const override { return schedule_calls_; }
  std::optional<std::vector<int32_t>> NodesNamed(std::string_view physical) const override;

 protected:
  // How a job is asked for in its domain.
  struct Ask {
    int32_t domain = 0;
    std::string_view vc;  // into storage that outlives the backend's calls (info_, a constant)
    Priority priority = 0;
    bool may_reclaim = false;  // TryOptions::may_reclaim of the attempt
  };
  SchedulerBackend(const ClusterSpec& spec, int32_t job_count);
  // A scheduler for `spec` as the backends build them: without a change feed
  // (SchedulerOptions::change_log_capacity 0: the simulator never reads `Changes`, and a
  // ring per scheduler would cost ~3 MB each). Errors: Scheduler::Create's.
  static absl::StatusOr<std::unique_ptr<Scheduler>> CreateScheduler(const ClusterSpec& spec);
  // Adds a domain built from `spec` (CreateScheduler). With an empty `prefix` its nodes must be
  // among `nodes_`; otherwise the domain has hardware of its own: its nodes join `nodes_` as
  // `prefix` + name (private clusters fail independently of each other).
  absl::Status AddDomain(const ClusterSpec& spec, const std::string& prefix = "");
  // The same with the domain's scheduler already built (e.g. the one `SetNodes` read, so a
  // one-domain policy builds its scheduler once, not twice).
  absl::Status AddDomain(std::unique_ptr<Scheduler> scheduler, const std::string& prefix = "");
  // Sets the global node list from a scheduler over the full physical cluster.
  void SetNodes(const Scheduler& full);

  virtual Ask AskFor(const SimJob& job, bool opportunistic) const = 0;
  // A guaranteed job's admission beyond what the scheduler checks (kQuota's cap); "" = admitted.
  virtual std::string Admit(const SimJob& /*job*/) const { return ""; }
  // Nodes to suggest for a request (`GroupRequest::suggested_nodes`); nullopt = every node.
  virtual std::optional<std::vector<std::string>> SuggestNodes(const SimJob& /*job*/,
                                                               const Ask& /*ask*/) const {
    return std::nullopt;
  }
  // Whether jobs ask for their pinned cell (false for the pool, whose spec has no pins).
  virtual bool KeepsPinnedCells() const { return true; }
  // Whether an overflow attempt makes sense for this policy.
  virtual bool SupportsOverflow() const { return true; }
  // A cheap necessary condition for a guaranteed attempt, to skip hopeless `Schedule`
  // calls: by default the VC's reserved GPUs minus those its jobs of priority >= the job's
  // use must cover the job.
  virtual bool MayFitGuaranteed(const SimJob& job) const;

  SpecInfo info_;
  int64_t total_gpus_ = 0;
  // Guaranteed GPUs in use per VC (the job's VC), per priority, and in all.
  std::vector<std::vector<std::pair<Priority, int64_t>>> vc_used_by_priority_;
  std::vector<int64_t> vc_guaranteed_used_;
  int64_t guaranteed_used_ = 0;

 private:
  struct Domain {
    std::unique_ptr<Scheduler> scheduler;
    NodeUsage usage;
    std::string prefix;  // of its nodes' global names
    // The scheduler's node names -> global node index (saves prefixing names per placement).
    absl::flat_hash_map<std::string, int32_t> global_index;
    // The scheduler's node ids (hived/fast_path.h) -> global node index.
    std::vector<int32_t> global_by_id;
  };
  // Registers a node of `gpus` under `name` (adds the GPUs when known); returns its index.
  int32_t AddNode(const std::string& name, const std::string& physical, int32_t gpus);
  // A start waiting for its victims to go (kPreempting until FinishPreemption).
  struct PendingStart {
    GroupRequest request;
    Placement placement;
  };
  struct JobRun {
    bool running = false;
    bool opportunistic = false;
    int32_t domain = 0;
    Priority priority = 0;  // asked for in the domain
    // (node, GPUs) per pod; inline up to two: no allocation per run.
    absl::InlinedVector<std::pair<int32_t, int32_t>, 2> pods;
    // Its group's handle when the fast path started it (released by handle), else nil
    // (released by name).
    GroupHandle handle;
    std::unique_ptr<PendingStart> pending;
  };
  // Fills `request_` (reusing its strings' and members' capacity) for `job` asked as `ask`.
  const GroupRequest& MakeRequest(const SimJob& job, const Ask& ask);
  // Whether a guaranteed job may preempt now (else a placement needing victims waits).
  virtual bool MayPreempt(const SimJob& /*job*/, const Ask& /*ask*/) const { return true; }
  // Schedules and, when placed, allocates. Fills `attempt`.
  absl::Status Attempt(const SimJob& job, bool opportunistic, bool may_reclaim,
                       StartAttempt* attempt);
  absl::Status Record(const SimJob& job, const Placement& placement);
  // The same for a placement the fast path returned (node ids, no names).
  absl::Status Record(const SimJob& job, const FastResult& placed);
  // The guaranteed usage of a job that starts running.
  void CountGuaranteed(const SimJob& job, Priority p);

  GroupRequest request_;  // MakeRequest's scratch: one request at a time
  // The fast path's result (hived/fast_path.h), reused by every attempt that may preempt:
  // those take `ScheduleAndAllocate` (the same decisions as Schedule(kPreempting) and
  // Allocate, without the placement's strings); the others (a Filtering attempt) the
  // classic calls.
  FastResult fast_;
  std::vector<std::string> nodes_;
  std::vector<std::string> physical_name_;  // by global node: the name its scheduler knows
  absl::flat_hash_map<std::string, int32_t> node_index_;
  absl::flat_hash_map<std::string, std::vector<int32_t>> copies_;  // physical -> prefixed ids

 protected:
  std::vector<std::string> config_nodes_;  // sorted physical node names (private only)
  std::vector<int32_t> node_capacity_;
  std::vector<Domain> domains_;
  // By global node index: the one domain holding the node, or -1 (a config node in no
  // private cluster); AddNode gives every node its entry.
  std::vector<int32_t> node_domain_;
  // By job index, for the jobs running or preempting only (a million-job trace with a few
  // thousand running held 48 MB of idle runs when every job had one).
  SlotTable<JobRun> jobs_;
  int64_t schedule_calls_ = 0;
};

}  // namespace hived::sim

#endif  // HIVED_SIM_POLICIES_SCHEDULER_BACKEND_H_

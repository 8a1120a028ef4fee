// server/extender.h: HiveD's scheduler-extender logic on hived's public API, without HTTP.
//
// `Extender` answers kube-scheduler's extender calls (filter, preempt, bind), the inspect
// API, health and metrics; `http_server.h` puts it on the wire. It builds gangs from pods
// as they arrive, on the library's per-pod calls (scheduler.h "Pods"):
//   1. Filter reserves: the first pod of an affinity group to reach filter schedules the
//      whole group (`Schedule` in kFiltering; a kPlaced decision is then reserved by a
//      timed `Schedule` in kPreempting, deadline now + `reservation_timeout_ms`). The pod
//      takes the first free slot of its leafCellNumber in the placement; later pods of the
//      group take the next slots (no scheduling). A slot is only promised until bind.
//   2. Bind allocates: `AllocatePod` with the slot's node and first leaf; the group's first
//      bound pod runs the whole gang (HiveD's rule), later ones take their slots. Then
//      `pod-bind-info` (written by `ExportHivedBindInfo`), `pod-leaf-cell-isolation` and
//      hived's record of the group (`hived.io/group-record`: the virtual cells too) go to
//      Kubernetes through the `Binder`. A failed Kubernetes bind keeps the allocation
//      (kube-scheduler retries the pod; filter gives the same node). A bind of a pod
//      already bound answers 200 without a second Kubernetes bind.
//   2a. Force bind (HiveD's): a filter of a decided pod not yet bound counts an attempt;
//      once attempts reach `force_bind_threshold`, or at once when the decided node is not
//      among the filter's candidate nodes, the extender binds the pod itself (allocating it
//      as 2 does), asynchronously (`ForceBindQueue`). A bind call for a pod whose force bind
//      is queued or running waits for it, so a pod is never bound twice by the extender.
//   3. Preempt schedules in kPreempting (timed too): the group becomes Preempting (its cells
//      reserved) and the victims' pods are returned; once they are deleted, filter finds
//      the group's reservation placed and reserves it as in 1.
//   4. Expiry: `ExpireReservations` (every `expiry_period_ms` on a thread of the
//      extender's) gives up reservations past their deadline, so a pod filtered or
//      preempting and never bound does not hold cells for ever; its pods lose their
//      promised slots and a later filter schedules them afresh.
//   5. A deleted (or finished) pod is `ReleasePod`ed; its gang is released with its last
//      bound pod. A pod only promised a slot gives it back; the reservation is given up
//      (`Unreserve`) when no pod holds a promise of it.
//   6. Recovery rebuilds every gang from the running pods' annotations with `RecoverPod`
//      (HiveD's way: the first pod of a group rebuilds the gang, later pods attach to
//      their slots by node and first leaf). The record is `hived.io/group-record` when the
//      pod has one (this version's or an earlier one's: the same virtual cells again),
//      else HiveD's `pod-bind-info` (pods bound by HiveD: virtual cells re-derived by
//      HiveD's rule). All before the server reports ready.
// Every change is made under one mutex, so changes are serialized and deterministic in
// arrival order; a filter's Filtering decision is made outside it (in parallel with other
// filters, under the library's shared lock) and its reservation under it. The inspect
// routes and the metrics take the library's views without it (each view takes the
// library's shared lock) and hold it only to copy the extender's own pod maps; an inspect
// answer is of one state (`TakeViews`), its JSON built outside the mutex.
//
// Example:
//   hived::server::Extender ext(std::move(scheduler), options, &binder);
//   ext.Recover(running_pods);
//   HttpReply r = ext.Filter(R"({"Pod": {...}, "NodeNames": ["n1"]})");
//
// Thread safety: all methods may be called from any thread.
#ifndef HIVED_SERVER_EXTENDER_H_
#define HIVED_SERVER_EXTENDER_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "hived/scheduler.h"
#include "nlohmann/json.hpp"
#include "server/force_bind.h"
#include "server/metrics.h"
#include "server/pod.h"

namespace hived::server {

// A reply to one HTTP request.
struct HttpReply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
};

// A JSON reply with `status`.
inline HttpReply JsonReply(int status, const nlohmann::json& body) {
  return HttpReply{status, body.dump()};
}

// Performs Kubernetes' bind (the pod's `binding` subresource, carrying the annotations).
class Binder {
 public:
  virtual ~Binder() = default;
  virtual absl::Status Bind(const std::string& ns, const std::string& name, const std::string& uid,
                            const std::string& node,
                            const std::map<std::string, std::string>& annotations) = 0;
};

struct ExtenderOptions {
  // Largest request body accepted (bytes); larger ones are answered 413.
  size_t max_body_bytes = size_t{4} << 20;
  // HiveD's `waitingPodSchedulingBlockMilliSec`: a filter that makes a pod wait answers only
  // after this long (outside the lock), a cheap FIFO for kube-scheduler's retries.
  int64_t waiting_block_ms = 0;
  // HiveD's `forcePodBindThreshold`: filters of a Binding pod before the extender binds it
  // itself (see 3a above).
  int32_t force_bind_threshold = 3;
  // Force binds waiting at most (more are dropped and counted; a later filter retries).
  size_t force_bind_queue = 1024;
  // Off only for tools that filter without binding (the load test); HiveD always force binds.
  bool force_bind = true;
  // How long a reservation made by filter or preempt waits for its bind (ms); see
  // docs/kubernetes.md for why the default is kube-scheduler's volume-binding bind timeout.
  int64_t reservation_timeout_ms = 600'000;
  // How often the extender's own thread expires reservations (ms); 0: no thread (the
  // caller calls `ExpireReservations`).
  int64_t expiry_period_ms = 1'000;
  // Distinct `pod-scheduling-spec` texts whose parse is kept (`SpecCache`); 0: none, every
  // filter parses its pod's spec.
  size_t spec_cache_entries = 4096;
  // The clock of reservations (ms); unset: std::chrono::steady_clock.
  std::function<int64_t()> clock;
};

// What recovery did.
struct RecoveryReport {
  int32_t pods_recovered = 0;
  int32_t groups_recovered = 0;
  int32_t groups_downgraded = 0;
  std::vector<std::string> problems;  // pods whose bind info could not be replayed, and why
};

class Extender {
 public:
  Extender(std::unique_ptr<Scheduler> scheduler, ExtenderOptions options, Binder* binder);
  ~Extender();
  Extender(const Extender&) = delete;
  Extender& operator=(const Extender&) = delete;

  // kube-scheduler's calls; bodies are its JSON payloads.
  HttpReply Filter(std::string_view body);
  HttpReply Preempt(std::string_view body);
  HttpReply Bind(std::string_view body);
  // GET routes under /v1/inspect/ (`path` is the full path).
  HttpReply Inspect(std::string_view path) const;
  HttpReply Paths() const;
  std::string Metrics() const;

  // Recovery: replays the bind info of `pods` (Pod objects; bound, running ones count).
  // Call before `SetReady`.
  RecoveryReport Recover(const std::vector<nlohmann::json>& pods);
  void SetReady() { ready_.store(true); }
  bool ready() const { return ready_.load(); }

  // Cluster events (from the API server's watch).
  void OnPodDeleted(const nlohmann::json& pod);
  void OnPodUpdated(const nlohmann::json& pod);  // a finished pod is released
  void OnNodeHealth(const std::string& node, bool healthy);
  // After a re-list: pods holding a slot that the list no longer has (or has finished) are
  // treated as deleted.
  void ReconcilePods(const std::vector<nlohmann::json>& pods);

  // Gives up the reservations whose deadline is at or before `now_ms` (the options' clock)
  // and the slots promised on them; returns the groups given up.
  std::vector<std::string> ExpireReservations(int64_t now_ms);
  int64_t NowMs() const;

  // Blocks until no force bind is queued or running (tests, shutdown).
  void WaitForceBinds();

  // Counts a failed API call (watch, list, bind) in the metrics.
  void CountApiError(const std::string& kind);
  // A reply for a request the HTTP layer refused (body too large, malformed route).
  HttpReply RefuseRequest(int status, absl::string_view message);

  const Scheduler& scheduler() const { return *scheduler_; }
  const ExtenderOptions& options() const { return options_; }

 private:
  struct Slot {
    std::string uid;  // empty: no pod yet
    std::string pod_key;
    bool bound = false;
    int32_t filter_attempts = 0;  // filters since the pod was decided (HiveD's bind attempts)
    bool binding = false;         // a Kubernetes bind (the route's or a force bind) is under way
    bool allocated = false;       // `AllocatePod`ed (else only promised by a filter)
  };
  struct Gang {
    GroupRequest request;
    Placement placement;
    bool running = false;     // the library runs the group (else it holds a reservation)
    std::vector<Slot> slots;  // one per placement pod
  };
  struct PodRef {
    std::string group;
    size_t slot = 0;
  };

  // `*outcome` (a metrics label: "bind", "preempt", "wait") is set for a 200 answer.
  // `lock` (of mu_, not held on entry) is taken once the pod and its spec are parsed, and
  // released while the Filtering decision is made.
  HttpReply FilterLocked(const nlohmann::json& args, std::unique_lock<std::mutex>& lock,
                         const char** outcome);
  HttpReply PreemptLocked(const nlohmann::json& args);
  // Reserves the group (a timed `Schedule` in kPreempting, after a kPlaced Filtering
  // decision) and opens its gang; when the state changed meanwhile and it is not placed,
  // opens nothing and says why in `*wait_reason`. REQUIRES: mu_ held.
  absl::Status OpenGang(const GroupRequest& request, std::string* wait_reason);
  // `AllocatePod`s the pod promised `slot` (no-op when allocated). REQUIRES: mu_ held.
  absl::Status AllocateSlot(const std::string& group, size_t slot);
  // Drops a gang the library no longer runs or reserves, and its pods. REQUIRES: mu_ held.
  void DropGang(const std::string& group);
  ReservationTime TimeNow() const;
  // Gives the pod a slot of its leafCellNumber; the node. REQUIRES: mu_ held.
  absl::StatusOr<std::string> TakeSlot(Gang& gang, const PodInfo& pod, int32_t leaf_cell_number);
  void ForgetPod(const std::string& uid, const PodInfo& pod);  // REQUIRES: mu_ held
  // The annotations a bind of slot `slot` writes. REQUIRES: mu_ held.
  std::map<std::string, std::string> BindAnnotations(const std::string& group, size_t slot) const;
  // Queues a force bind of the pod in `slot` when HiveD's rule asks for one. REQUIRES: mu_.
  void MaybeForceBind(const std::string& group, size_t slot, const PodInfo& pod,
                      const std::vector<std::string>& candidates);
  void OnForceBindDone(const ForceBindJob& job, const absl::Status& status);
  nlohmann::json VictimsByNode(const std::vector<std::string>& groups) const;
  // Takes an inspect route's views: `library_views` (the scheduler's views, into copies
  // the caller owns; called again when a change came in between) and `own_state` (the
  // extender's pod maps, REQUIRES: mu_ held), so that both are of one state. Tries
  // `kInspectAttempts` times without `mu_` (filters and binds go on), then under it.
  void TakeViews(const std::function<void()>& library_views,
                 const std::function<void()>& own_state) const;
  static constexpr int kInspectAttempts = 3;

  HttpReply UserError(const std::string& route, absl::string_view message);
  HttpReply PlatformError(const std::string& route, absl::string_view message);
  HttpReply NotReady(const std::string& route);

  std::unique_ptr<Scheduler> scheduler_;
  ExtenderOptions options_;
  Binder* binder_;
  std::atomic<bool> ready_{false};
  mutable std::mutex mu_;
  std::condition_variable bind_cv_;     // a slot's `binding` ended
  std::map<std::string, Gang> gangs_;   // running groups opened by this server
  std::map<std::string, PodRef> pods_;  // pod uid -> its slot
  // Preempting groups -> the pods whose preempt call started the preemption.
  std::map<std::string, std::set<std::string>> preempting_pods_;
  mutable ExtenderMetrics metrics_;
  SpecCache specs_;  // the pods' scheduling specs, parsed once per distinct text
  // Last: destroyed first, so its worker never sees a half-destroyed extender.
  std::unique_ptr<ForceBindQueue> force_binds_;
  // The expiry thread (`expiry_period_ms`), stopped by the destructor.
  std::mutex expiry_mu_;
  std::condition_variable expiry_cv_;
  bool stopping_ = false;
  std::thread expiry_;
};

// The message prefixes of HiveD's errors.
inline constexpr const char* kUserErrorPrefix = "hivedscheduler: User Error: ";
inline constexpr const char* kPlatformErrorPrefix = "hivedscheduler: Platform Error: ";

}  // namespace hived::server

#endif  // HIVED_SERVER_EXTENDER_H_

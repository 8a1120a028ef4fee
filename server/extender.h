// server/extender.h: HiveD's scheduler-extender logic on hived's public API, without HTTP.
//
// `Extender` answers kube-scheduler's extender calls (filter, preempt, bind), the inspect
// API, health and metrics; `http_server.h` puts it on the wire. It builds gangs from pods
// as they arrive, on today's gang-level `Scheduler` API:
//   1. The first pod of an affinity group to reach filter schedules the whole group
//      (`Schedule` in kFiltering; kPlaced → `Allocate` at once: HiveD's "a Binding pod is
//      allocated immediately"). The pod takes the first free slot of its leafCellNumber in
//      the placement; later pods of the group take the next slots (no scheduling).
//   2. Preempt schedules in kPreempting: the group becomes Preempting (its cells reserved)
//      and the victims' pods are returned; once they are deleted, filter finds the group's
//      reservation placed and allocates it.
//   3. Bind writes `pod-bind-info` and `pod-leaf-cell-isolation` through the `Binder`. A
//      bind of a pod already bound answers 200 without a second Kubernetes bind.
//   3a. Force bind (HiveD's): a filter of a Binding pod (decided, not bound) counts an
//      attempt; once attempts reach `force_bind_threshold`, or at once when the decided node
//      is not among the filter's candidate nodes, the extender binds the pod itself,
//      asynchronously (`ForceBindQueue`). A bind call for a pod whose force bind is queued or
//      running waits for it, so a pod is never bound twice by the extender.
//   4. A deleted (or finished) pod leaves its slot; the group is released when its last
//      known pod is gone (the library has no per-pod release yet, issue 29).
//   5. Recovery replays the bind info of running pods (`ImportHivedBindInfo`), one group per
//      affinity group, before the server reports ready.
// Every decision is made under one mutex, so decisions are serialized and deterministic in
// arrival order.
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
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
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
  };
  struct Gang {
    GroupRequest request;
    Placement placement;
    std::vector<Slot> slots;  // one per placement pod
  };
  struct PodRef {
    std::string group;
    size_t slot = 0;
  };

  // `*outcome` (a metrics label: "bind", "preempt", "wait") is set for a 200 answer.
  HttpReply FilterLocked(const nlohmann::json& args, const char** outcome);
  HttpReply PreemptLocked(const nlohmann::json& args);
  // Allocates a kPlaced result and opens the gang. REQUIRES: mu_ held.
  absl::Status OpenGang(const GroupRequest& request, const Placement& placement);
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
  nlohmann::json GroupJson(const GroupStatus& group) const;

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
  // Last: destroyed first, so its worker never sees a half-destroyed extender.
  std::unique_ptr<ForceBindQueue> force_binds_;
};

// The message prefixes of HiveD's errors.
inline constexpr const char* kUserErrorPrefix = "hivedscheduler: User Error: ";
inline constexpr const char* kPlatformErrorPrefix = "hivedscheduler: Platform Error: ";

}  // namespace hived::server

#endif  // HIVED_SERVER_EXTENDER_H_

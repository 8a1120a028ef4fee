// HiveD's extender logic: the filter and preempt routes, reservations' expiry, errors (the
// per-pod calls and recovery: extender_pods.cc; bind: extender_bind.cc; inspect and metrics:
// extender_views.cc).
#include "server/extender.h"

#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/json_fields.h"

namespace hived::server {
namespace {

using nlohmann::json;

// ExtenderArgs' candidate nodes: `NodeNames` (nodeCacheCapable) or `Nodes.items[].metadata.name`.
std::vector<std::string> CandidateNodes(const json& args) {
  std::vector<std::string> names;
  if (const json* n = Field(args, "NodeNames"); n != nullptr && n->is_array()) {
    for (const json& name : *n) {
      if (name.is_string()) names.push_back(name.get<std::string>());
    }
    return names;
  }
  if (const json* nodes = Field(args, "Nodes"); nodes != nullptr) {
    if (const json* items = Field(*nodes, "items"); items != nullptr && items->is_array()) {
      for (const json& node : *items) {
        if (const json* meta = Field(node, "metadata"); meta != nullptr) {
          std::string name = FieldString(*meta, "name");
          if (!name.empty()) names.push_back(name);
        }
      }
    }
  }
  return names;
}

bool IsUserStatus(const absl::Status& s) {
  return s.code() == absl::StatusCode::kInvalidArgument || s.code() == absl::StatusCode::kNotFound;
}

}  // namespace

Extender::Extender(std::unique_ptr<Scheduler> scheduler, ExtenderOptions options, Binder* binder)
    : scheduler_(std::move(scheduler)),
      options_(options),
      binder_(binder),
      specs_(options_.spec_cache_entries) {
  if (binder_ != nullptr && options_.force_bind) {
    force_binds_ = std::make_unique<ForceBindQueue>(
        binder_, options_.force_bind_queue,
        [this](const ForceBindJob& job, const absl::Status& s) { OnForceBindDone(job, s); });
  }
  if (options_.expiry_period_ms > 0) {
    expiry_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(expiry_mu_);
      while (!expiry_cv_.wait_for(lock, std::chrono::milliseconds(options_.expiry_period_ms),
                                  [this] { return stopping_; })) {
        lock.unlock();
        (void)ExpireReservations(NowMs());
        lock.lock();
      }
    });
  }
}

Extender::~Extender() {
  {
    std::lock_guard<std::mutex> lock(expiry_mu_);
    stopping_ = true;
  }
  expiry_cv_.notify_all();
  if (expiry_.joinable()) expiry_.join();
}

int64_t Extender::NowMs() const {
  if (options_.clock) return options_.clock();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

ReservationTime Extender::TimeNow() const {
  ReservationTime time;
  time.now = NowMs();
  time.deadline = time.now + options_.reservation_timeout_ms;
  return time;
}

std::vector<std::string> Extender::ExpireReservations(int64_t now_ms) {
  std::vector<std::string> groups;
  std::lock_guard<std::mutex> lock(mu_);
  for (const ExpiredReservation& e : scheduler_->ExpireReservations(now_ms)) {
    groups.push_back(e.group);
    if (auto it = gangs_.find(e.group); it != gangs_.end() && !it->second.running) {
      DropGang(e.group);
    }
    preempting_pods_.erase(e.group);
  }
  metrics_.CountExpiredReservations(static_cast<int64_t>(groups.size()));
  return groups;
}

void Extender::DropGang(const std::string& group) {
  auto it = gangs_.find(group);
  if (it == gangs_.end()) return;
  for (const Slot& slot : it->second.slots) {
    if (!slot.uid.empty()) pods_.erase(slot.uid);
  }
  gangs_.erase(it);
}

HttpReply Extender::UserError(const std::string& route, absl::string_view message) {
  metrics_.CountApiError(absl::StrCat(route, "-user-error"));
  std::string text = absl::StrCat(kUserErrorPrefix, std::string(message));
  if (route == "preempt") return JsonReply(400, json(text));
  return JsonReply(400, json{{"Error", text}});
}

HttpReply Extender::PlatformError(const std::string& route, absl::string_view message) {
  metrics_.CountApiError(absl::StrCat(route, "-platform-error"));
  std::string text = absl::StrCat(kPlatformErrorPrefix, std::string(message));
  if (route == "preempt") return JsonReply(500, json(text));
  return JsonReply(500, json{{"Error", text}});
}

HttpReply Extender::NotReady(const std::string& route) {
  HttpReply r = PlatformError(route, "not ready: recovering the cluster's state from its pods");
  r.status = 503;
  return r;
}

HttpReply Extender::RefuseRequest(int status, absl::string_view message) {
  metrics_.CountApiError(absl::StrCat("refused-", status));
  return JsonReply(status, json{{"Error", absl::StrCat(kUserErrorPrefix, std::string(message))}});
}

void Extender::CountApiError(const std::string& kind) { metrics_.CountApiError(kind); }

// ---- filter ---------------------------------------------------------------------------

HttpReply Extender::Filter(std::string_view body) {
  auto start = std::chrono::steady_clock::now();
  if (!ready()) return NotReady("filter");
  json args = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  HttpReply reply;
  const char* outcome = "error";
  if (args.is_discarded() || !args.is_object()) {
    reply = UserError("filter", "request body is not a JSON ExtenderArgs object");
  } else {
    std::unique_lock<std::mutex> lock(mu_, std::defer_lock);
    reply = FilterLocked(args, lock, &outcome);
  }
  metrics_.CountDecision(
      "filter", outcome,
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  if (std::string_view(outcome) == "wait" && options_.waiting_block_ms > 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(options_.waiting_block_ms));
  }
  return reply;
}

HttpReply Extender::FilterLocked(const json& args, std::unique_lock<std::mutex>& lock,
                                 const char** outcome) {
  const json* pod_json = Field(args, "Pod");
  if (pod_json == nullptr) return UserError("filter", "ExtenderArgs has no Pod");
  absl::StatusOr<PodInfo> pod = ParsePod(*pod_json);
  if (!pod.ok()) return UserError("filter", pod.status().message());
  if (!pod->scheduling_enabled) {
    return UserError("filter",
                     absl::StrCat("Pod ", pod->Key(), " does not set resource limit ",
                                  kResourcePodSchedulingEnable, ": it is not scheduled by HiveD"));
  }
  absl::StatusOr<SchedulingSpec> spec = specs_.Parse(*pod);
  if (!spec.ok()) return UserError("filter", spec.status().message());
  std::vector<std::string> candidates = CandidateNodes(args);
  auto bind_to = [outcome](const std::string& node) {
    *outcome = "bind";
    return JsonReply(
        200,
        json{{"NodeNames", json::array({node})}, {"FailedNodes", json::object()}, {"Error", ""}});
  };

  GroupRequest request = ToGroupRequest(*spec);
  if (!spec->ignore_k8s_suggested_nodes) request.suggested_nodes = candidates;
  // The request is parsed without the lock; from here on the extender's state is read.
  lock.lock();
  // The answers that need no decision: a pod that already holds a slot (a Binding pod
  // filtered again) gets its node, insisted (one more bind attempt counted, and a force
  // bind when HiveD's rule asks for it); a pod of an open gang takes its next slot.
  auto known = [&]() -> std::optional<HttpReply> {
    if (auto it = pods_.find(pod->uid); it != pods_.end()) {
      const PodRef ref = it->second;
      Gang& gang = gangs_.at(ref.group);
      if (!gang.slots[ref.slot].bound) ++gang.slots[ref.slot].filter_attempts;
      MaybeForceBind(ref.group, ref.slot, *pod, candidates);
      return bind_to(gang.placement.pods[ref.slot].node);
    }
    if (auto it = gangs_.find(request.name); it != gangs_.end()) {
      absl::StatusOr<std::string> node = TakeSlot(it->second, *pod, spec->leaf_cell_number);
      if (!node.ok()) return UserError("filter", node.status().message());
      MaybeForceBind(request.name, pods_.at(pod->uid).slot, *pod, candidates);
      return bind_to(*node);
    }
    return std::nullopt;
  };
  if (std::optional<HttpReply> r = known()) return *std::move(r);
  // The decision, outside the extender's lock: a Filtering `Schedule` takes the library's
  // shared lock, so concurrent filters decide in parallel (most answers are waits).
  lock.unlock();
  absl::StatusOr<ScheduleResult> result = scheduler_->Schedule(request, Phase::kFiltering);
  lock.lock();
  if (std::optional<HttpReply> r = known()) return *std::move(r);  // decided meanwhile
  if (!result.ok()) {
    return IsUserStatus(result.status()) ? UserError("filter", result.status().message())
                                         : PlatformError("filter", result.status().message());
  }
  if (result->outcome == Outcome::kPlaced) {
    // Reserved under the lock: the state may have changed since the decision, so the
    // reserving `Schedule` decides again (the same placement when nothing did).
    std::string wait_reason;
    if (absl::Status s = OpenGang(request, &wait_reason); !s.ok()) {
      return PlatformError("filter", s.message());
    }
    if (gangs_.count(request.name) == 0) {
      result->outcome = Outcome::kWaiting;
      result->reason = wait_reason;
    }
  }
  switch (result->outcome) {
    case Outcome::kPlaced: {
      absl::StatusOr<std::string> node =
          TakeSlot(gangs_.at(request.name), *pod, spec->leaf_cell_number);
      if (!node.ok()) return UserError("filter", node.status().message());
      MaybeForceBind(request.name, pods_.at(pod->uid).slot, *pod, candidates);
      return bind_to(*node);
    }
    case Outcome::kPreempting: {
      // HiveD: the nodes holding victims fail with the victims named, so that
      // kube-scheduler's preemption (and with it our preempt verb) runs.
      json failed = json::object();
      json victims = VictimsByNode(result->victims);
      for (auto it = victims.begin(); it != victims.end(); ++it) {
        std::vector<std::string> uids;
        for (const json& p : it.value()["Pods"]) uids.push_back(p["UID"].get<std::string>());
        failed[it.key()] = absl::StrCat("node(", it.key(), ") has preemptible Pods: [",
                                        absl::StrJoin(uids, " "), "]");
      }
      *outcome = "preempt";
      if (failed.empty()) {
        *outcome = "wait";
        failed["hivedscheduler"] =
            absl::StrCat("Pod is waiting for preemptible or free resource to appear: victims ",
                         absl::StrJoin(result->victims, ", "), " run on no node the server tracks");
      }
      return JsonReply(200,
                       json{{"NodeNames", json::array()}, {"FailedNodes", failed}, {"Error", ""}});
    }
    case Outcome::kWaiting:
    case Outcome::kInfeasible:
      break;
  }
  *outcome = "wait";
  return JsonReply(200,
                   json{{"NodeNames", json::array()},
                        {"FailedNodes",
                         {{"hivedscheduler", absl::StrCat("Pod is waiting for preemptible or free "
                                                          "resource to appear: ",
                                                          result->reason)}}},
                        {"Error", ""}});
}

json Extender::VictimsByNode(const std::vector<std::string>& groups) const {
  json out = json::object();
  for (const std::string& group : groups) {
    auto it = gangs_.find(group);
    if (it == gangs_.end()) continue;
    for (size_t i = 0; i < it->second.slots.size(); ++i) {
      const Slot& slot = it->second.slots[i];
      if (slot.uid.empty()) continue;
      const std::string& node = it->second.placement.pods[i].node;
      json& entry = out[node];
      if (!entry.is_object()) entry = json{{"Pods", json::array()}, {"NumPDBViolations", 0}};
      entry["Pods"].push_back(json{{"UID", slot.uid}});
    }
  }
  return out;
}

// ---- preempt --------------------------------------------------------------------------

HttpReply Extender::Preempt(std::string_view body) {
  auto start = std::chrono::steady_clock::now();
  if (!ready()) return NotReady("preempt");
  json args = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  HttpReply reply;
  if (args.is_discarded() || !args.is_object()) {
    reply = UserError("preempt", "request body is not a JSON ExtenderPreemptionArgs object");
  } else {
    std::lock_guard<std::mutex> lock(mu_);
    reply = PreemptLocked(args);
  }
  std::string outcome = "error";
  if (reply.status == 200) {
    json r = json::parse(reply.body, nullptr, false);
    const json* v = Field(r, "NodeNameToMetaVictims");
    outcome = v != nullptr && v->is_object() && !v->empty() ? "preempt" : "no-victims";
  }
  metrics_.CountDecision(
      "preempt", outcome,
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return reply;
}

HttpReply Extender::PreemptLocked(const json& args) {
  const json* pod_json = Field(args, "Pod");
  if (pod_json == nullptr) return UserError("preempt", "ExtenderPreemptionArgs has no Pod");
  absl::StatusOr<PodInfo> pod = ParsePod(*pod_json);
  if (!pod.ok()) return UserError("preempt", pod.status().message());
  if (!pod->scheduling_enabled) {
    return UserError("preempt", absl::StrCat("Pod ", pod->Key(), " does not set resource limit ",
                                             kResourcePodSchedulingEnable));
  }
  absl::StatusOr<SchedulingSpec> spec = specs_.Parse(*pod);
  if (!spec.ok()) return UserError("preempt", spec.status().message());
  json empty = json{{"NodeNameToMetaVictims", json::object()}};
  GroupRequest request = ToGroupRequest(*spec);
  // A pod with a slot, or of a running gang, needs no victims.
  if (pods_.count(pod->uid) > 0 || gangs_.count(request.name) > 0) return JsonReply(200, empty);
  if (!spec->ignore_k8s_suggested_nodes) {
    std::vector<std::string> nodes;
    for (const char* key : {"NodeNameToMetaVictims", "NodeNameToVictims"}) {
      if (const json* m = Field(args, key); m != nullptr && m->is_object()) {
        for (auto it = m->begin(); it != m->end(); ++it) nodes.push_back(it.key());
      }
    }
    request.suggested_nodes = nodes;
  }
  absl::StatusOr<ScheduleResult> result =
      scheduler_->Schedule(request, Phase::kPreempting, TimeNow());
  if (!result.ok()) {
    return IsUserStatus(result.status()) ? UserError("preempt", result.status().message())
                                         : PlatformError("preempt", result.status().message());
  }
  if (result->outcome != Outcome::kPreempting) return JsonReply(200, empty);
  preempting_pods_[request.name].insert(pod->uid);
  json victims = VictimsByNode(result->victims);
  int64_t victim_pods = 0;
  for (auto it = victims.begin(); it != victims.end(); ++it) {
    victim_pods += static_cast<int64_t>(it.value()["Pods"].size());
  }
  metrics_.CountPreemption(victim_pods);
  return JsonReply(200, json{{"NodeNameToMetaVictims", victims}});
}

}  // namespace hived::server

// HiveD's extender logic: gangs from pods, filter/preempt/bind, recovery (inspect and
// metrics: extender_views.cc).
#include "server/extender.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "hived/state.h"
#include "server/json_fields.h"
#include "yaml-cpp/yaml.h"

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
    : scheduler_(std::move(scheduler)), options_(options), binder_(binder) {
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
    std::unique_lock<std::mutex> lock(mu_);
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

absl::Status Extender::OpenGang(const GroupRequest& request, std::string* wait_reason) {
  const GroupState before = scheduler_->GetGroup(request.name).state;
  absl::StatusOr<ScheduleResult> reserved =
      scheduler_->Schedule(request, Phase::kPreempting, TimeNow());
  if (!reserved.ok()) return reserved.status();
  if (reserved->outcome != Outcome::kPlaced) {
    // The state changed since the Filtering decision. Filter never starts a preemption:
    // a reservation this call made is given up (one made before, by preempt, is kept).
    GroupState now = scheduler_->GetGroup(request.name).state;
    if (before == GroupState::kAbsent && now != GroupState::kAbsent) {
      if (absl::Status s = scheduler_->Unreserve(request.name); !s.ok()) return s;
    }
    *wait_reason = reserved->outcome == Outcome::kPreempting
                       ? "the cells decided were taken meanwhile; would preempt now"
                       : reserved->reason;
    return absl::OkStatus();
  }
  Gang gang;
  gang.request = request;
  // The group's placement carries the preassigned cell types (the bind info needs them).
  gang.placement = scheduler_->GetGroup(request.name).placement;
  gang.slots.resize(gang.placement.pods.size());
  gangs_[request.name] = std::move(gang);
  preempting_pods_.erase(request.name);
  return absl::OkStatus();
}

absl::Status Extender::AllocateSlot(const std::string& group, size_t slot_index) {
  Gang& gang = gangs_.at(group);
  Slot& slot = gang.slots[slot_index];
  if (slot.allocated) return absl::OkStatus();
  const PodPlacement& p = gang.placement.pods[slot_index];
  Pod pod;
  pod.name = slot.uid;
  pod.uid = slot.uid;
  pod.leaf_cell_number = p.leaf_cell_number;
  pod.node = p.node;
  pod.first_leaf_index = p.leaf_cell_indices.empty() ? -1 : p.leaf_cell_indices[0];
  absl::StatusOr<PodAllocation> allocation =
      scheduler_->AllocatePod(gang.request, gang.placement, pod);
  if (!allocation.ok()) return allocation.status();
  if (allocation->pod.index != static_cast<int32_t>(slot_index)) {
    return absl::InternalError(absl::StrCat("pod ", slot.pod_key, " of group ", group,
                                            " was allocated slot ", allocation->pod.index,
                                            ", not its promised slot ", slot_index));
  }
  gang.running = true;
  slot.allocated = true;
  return absl::OkStatus();
}

absl::StatusOr<std::string> Extender::TakeSlot(Gang& gang, const PodInfo& pod,
                                               int32_t leaf_cell_number) {
  int32_t configured = 0;
  for (size_t i = 0; i < gang.placement.pods.size(); ++i) {
    if (gang.placement.pods[i].leaf_cell_number != leaf_cell_number) continue;
    ++configured;
    if (!gang.slots[i].uid.empty()) continue;
    gang.slots[i].uid = pod.uid;
    gang.slots[i].pod_key = pod.Key();
    pods_[pod.uid] = PodRef{gang.request.name, i};
    return gang.placement.pods[i].node;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("Requesting more pods than the configured number for ", leaf_cell_number,
                   " leaf cells (", configured, " pods) in affinity group ", gang.request.name));
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

// ---- cluster events -------------------------------------------------------------------

void Extender::ForgetPod(const std::string& uid, const PodInfo& pod) {
  auto it = pods_.find(uid);
  if (it == pods_.end()) {
    // The preemptor of a Preempting group going away gives up its reservation.
    absl::StatusOr<SchedulingSpec> spec = specs_.Parse(pod);
    if (!spec.ok()) return;
    GroupStatus g = scheduler_->GetGroup(spec->affinity_group_name);
    if ((g.state == GroupState::kPreempting || g.state == GroupState::kReserved) &&
        gangs_.count(g.name) == 0) {
      std::set<std::string>& preemptors = preempting_pods_[g.name];
      preemptors.erase(pod.uid);
      if (preemptors.empty()) {
        (void)scheduler_->Unreserve(g.name);
        preempting_pods_.erase(g.name);
      }
    }
    return;
  }
  const std::string group = it->second.group;
  Gang& gang = gangs_.at(group);
  const size_t index = it->second.slot;
  const bool allocated = gang.slots[index].allocated;
  gang.slots[index] = Slot{};
  pods_.erase(it);
  if (allocated) {
    absl::StatusOr<PodRelease> released = scheduler_->ReleasePod(group, uid);
    if (!released.ok()) metrics_.CountApiError("release");
    // The gang's last bound pod: the gang is released; pods only promised a slot of it
    // filter again.
    if (!released.ok() || *released == PodRelease::kGang) DropGang(group);
    return;
  }
  const bool any = std::any_of(gang.slots.begin(), gang.slots.end(),
                               [](const Slot& s) { return !s.uid.empty(); });
  if (!any && !gang.running) {
    // No pod holds a promise of the reservation any more.
    if (!scheduler_->Unreserve(group).ok()) metrics_.CountApiError("unreserve");
    DropGang(group);
  }
}

void Extender::OnPodDeleted(const json& pod) {
  absl::StatusOr<PodInfo> info = ParsePod(pod);
  if (!info.ok()) return;
  std::lock_guard<std::mutex> lock(mu_);
  ForgetPod(info->uid, *info);
}

void Extender::OnPodUpdated(const json& pod) {
  absl::StatusOr<PodInfo> info = ParsePod(pod);
  if (!info.ok() || !info->Terminated()) return;
  std::lock_guard<std::mutex> lock(mu_);
  ForgetPod(info->uid, *info);
}

void Extender::ReconcilePods(const std::vector<json>& pods) {
  std::set<std::string> live;
  for (const json& object : pods) {
    absl::StatusOr<PodInfo> pod = ParsePod(object);
    if (pod.ok() && !pod->Terminated()) live.insert(pod->uid);
  }
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::pair<std::string, PodInfo>> gone;
  for (const auto& [uid, ref] : pods_) {
    if (live.count(uid) > 0) continue;
    PodInfo info;
    info.uid = uid;
    gone.emplace_back(uid, info);
  }
  for (const auto& [uid, info] : gone) ForgetPod(uid, info);
}

void Extender::OnNodeHealth(const std::string& node, bool healthy) {
  std::lock_guard<std::mutex> lock(mu_);
  absl::Status s = scheduler_->SetNodeHealthy(node, healthy);
  (void)s;  // a node the config does not have is not HiveD's: ignored, as HiveD does
}

// ---- recovery -------------------------------------------------------------------------

RecoveryReport Extender::Recover(const std::vector<json>& pod_objects) {
  RecoveryReport report;
  std::vector<PodInfo> pods;
  for (const json& object : pod_objects) {
    absl::StatusOr<PodInfo> pod = ParsePod(object);
    if (!pod.ok() || pod->Terminated() || pod->node_name.empty()) continue;
    if (pod->annotations.count(kAnnotationPodBindInfo) == 0) continue;
    pods.push_back(*std::move(pod));
  }
  std::sort(pods.begin(), pods.end(),
            [](const PodInfo& a, const PodInfo& b) { return a.Key() < b.Key(); });
  // Pods of one gang share their spec text: parse each text that names its group once (a
  // spec without `affinityGroup` is named after its pod: parsed per pod).
  std::map<std::string, absl::StatusOr<SchedulingSpec>> specs;
  std::lock_guard<std::mutex> lock(mu_);
  for (const PodInfo& pod : pods) {
    auto text = pod.annotations.find(kAnnotationPodSchedulingSpec);
    absl::StatusOr<SchedulingSpec> spec = absl::UnknownError("");
    if (text != pod.annotations.end() && text->second.find("affinityGroup") != std::string::npos) {
      auto cached = specs.find(text->second);
      if (cached == specs.end())
        cached = specs.emplace(text->second, ParseSchedulingSpec(pod)).first;
      spec = cached->second;
    } else {
      spec = ParseSchedulingSpec(pod);
    }
    if (!spec.ok()) {
      report.problems.push_back(absl::StrCat(pod.Key(), ": ", spec.status().message()));
      continue;
    }
    const std::string& bind_info = pod.annotations.at(kAnnotationPodBindInfo);
    const std::string& group = spec->affinity_group_name;
    // The gang's record as this pod carries it: hived's own record of earlier versions
    // first (the same virtual cells again), else HiveD's bind info (HiveD's rule). A later
    // pod of a running group only attaches (its record is not read).
    GroupRecord record;
    bool have_record = false;
    if (auto own = pod.annotations.find(kAnnotationGroupRecord); own != pod.annotations.end()) {
      absl::StatusOr<GroupRecord> saved = GroupRecordFromJson(own->second);
      if (saved.ok() && saved->request.name == group) {
        record = *std::move(saved);
        have_record = true;
      }
    }
    if (!have_record) {
      absl::StatusOr<GroupRecord> imported =
          ImportHivedBindInfo(bind_info, text == pod.annotations.end() ? "" : text->second);
      if (!imported.ok()) {
        report.problems.push_back(absl::StrCat(pod.Key(), ": ", imported.status().message()));
        continue;
      }
      record = *std::move(imported);
      record.request.name = group;
      record.request.vc = spec->virtual_cluster;
      record.request.priority = spec->priority;
    }
    // The pod's slot: its node and first leaf index (from the isolation annotation, else
    // from the bind info).
    Pod member;
    member.name = pod.uid;
    member.uid = pod.uid;
    member.leaf_cell_number = spec->leaf_cell_number;
    member.node = pod.node_name;
    if (auto iso = pod.annotations.find(kAnnotationPodLeafCellIsolation);
        iso != pod.annotations.end() && !iso->second.empty()) {
      member.first_leaf_index = std::atoi(iso->second.c_str());
    } else {
      try {
        YAML::Node root = YAML::Load(bind_info);
        member.node = root["node"].as<std::string>(member.node);
        YAML::Node leaves = root["leafCellIsolation"];
        if (leaves.IsSequence() && leaves.size() > 0) {
          member.first_leaf_index = leaves[0].as<int32_t>(-1);
        }
      } catch (const YAML::Exception& e) {
        report.problems.push_back(absl::StrCat(pod.Key(), ": pod-bind-info: ", e.what()));
        continue;
      }
    }
    absl::StatusOr<PodAllocation> allocation = scheduler_->RecoverPod(record, member);
    if (!allocation.ok()) {
      report.problems.push_back(absl::StrCat(pod.Key(), ": ", allocation.status().message()));
      continue;
    }
    if (allocation->started_gang) {
      ++report.groups_recovered;
      if (allocation->info.downgraded) ++report.groups_downgraded;
      Gang gang;
      gang.request = record.request;
      gang.placement = scheduler_->GetGroup(group).placement;
      gang.slots.resize(gang.placement.pods.size());
      gang.running = true;
      gangs_[group] = std::move(gang);
    }
    Gang& gang = gangs_.at(group);
    const auto index = static_cast<size_t>(allocation->pod.index);
    Slot& slot = gang.slots.at(index);
    slot.uid = pod.uid;
    slot.pod_key = pod.Key();
    slot.bound = true;
    slot.allocated = true;
    pods_[pod.uid] = PodRef{group, index};
    ++report.pods_recovered;
  }
  metrics_.CountPodsRecovered(report.pods_recovered);
  return report;
}

}  // namespace hived::server

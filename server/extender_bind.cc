// HiveD's bind: the bind route and the force bind of Binding pods (extender.h, 3 and 3a).
#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "hived/state.h"
#include "server/extender.h"
#include "server/json_fields.h"

namespace hived::server {

using nlohmann::json;

std::map<std::string, std::string> Extender::BindAnnotations(const std::string& group,
                                                             size_t slot) const {
  const Gang& gang = gangs_.at(group);
  const PodPlacement& placement = gang.placement.pods[slot];
  std::map<std::string, std::string> annotations;
  // One writer of HiveD's record: the library's (what `ImportHivedBindInfo` reads back).
  // hived's own record of the group goes beside it: it carries the virtual cells, which
  // HiveD's record has not, so a restart rebuilds exactly the state it lost (recovering
  // from the bind info alone re-derives the virtual cells by HiveD's rule, and later
  // decisions may then differ from those of a server that never restarted).
  absl::StatusOr<GroupRecord> record = scheduler_->GetGroupRecord(group);
  if (record.ok()) {
    absl::StatusOr<HivedAnnotations> hived =
        ExportHivedBindInfo(*record, static_cast<int32_t>(slot));
    if (hived.ok()) annotations[kAnnotationPodBindInfo] = hived->bind_info_yaml;
    annotations[kAnnotationGroupRecord] = GroupRecordToJson(*record);
  }
  annotations[kAnnotationPodLeafCellIsolation] = LeafCellIsolation(placement);
  annotations[kAnnotationPodGpuIsolation] = LeafCellIsolation(placement);
  return annotations;
}

HttpReply Extender::Bind(std::string_view body) {
  auto start = std::chrono::steady_clock::now();
  if (!ready()) return NotReady("bind");
  json args = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
  auto done = [&](HttpReply reply, const char* outcome) {
    metrics_.CountDecision(
        "bind", reply.status == 200 ? outcome : "error",
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return reply;
  };
  if (args.is_discarded() || !args.is_object()) {
    return done(UserError("bind", "request body is not a JSON ExtenderBindingArgs object"), "");
  }
  std::string name = FieldString(args, "PodName");
  std::string ns = FieldString(args, "PodNamespace");
  std::string uid = FieldString(args, "PodUID");
  std::string node = FieldString(args, "Node");
  if (name.empty() || ns.empty() || uid.empty() || node.empty()) {
    return done(UserError("bind",
                          "ExtenderBindingArgs needs PodName, PodNamespace, PodUID and "
                          "Node"),
                "");
  }
  if (binder_ == nullptr) {
    return done(PlatformError("bind", "no Kubernetes API server is configured"), "");
  }
  std::map<std::string, std::string> annotations;
  {
    std::unique_lock<std::mutex> lock(mu_);
    // A force bind of the pod under way finishes first (a pod is bound once).
    bind_cv_.wait_for(lock, std::chrono::seconds(10), [&] {
      auto it = pods_.find(uid);
      return it == pods_.end() || !gangs_.at(it->second.group).slots[it->second.slot].binding;
    });
    auto it = pods_.find(uid);
    if (it == pods_.end()) {
      return done(UserError("bind", absl::StrCat("Pod ", ns, "/", name, " (", uid,
                                                 ") was never filtered to a node: no "
                                                 "placement to bind")),
                  "");
    }
    Slot& slot = gangs_.at(it->second.group).slots[it->second.slot];
    const std::string& decided = gangs_.at(it->second.group).placement.pods[it->second.slot].node;
    if (decided != node) {
      return done(UserError("bind", absl::StrCat("Pod ", ns, "/", name, " is decided to node ",
                                                 decided, ", not to node ", node)),
                  "");
    }
    if (slot.binding) {
      return done(PlatformError("bind", absl::StrCat("a bind of pod ", ns, "/", name,
                                                     " is still under way; retry")),
                  "");
    }
    // Bound already (by a force bind, an earlier call, or before a restart): binding is
    // idempotent, no second Kubernetes bind.
    if (slot.bound) return done(JsonReply(200, json{{"Error", ""}}), "bound");
    // The bind allocates (the gang's first bound pod runs it).
    if (absl::Status a = AllocateSlot(it->second.group, it->second.slot); !a.ok()) {
      return done(
          PlatformError("bind", absl::StrCat("allocating pod ", ns, "/", name, ": ", a.message())),
          "");
    }
    slot.binding = true;
    annotations = BindAnnotations(it->second.group, it->second.slot);
  }
  absl::Status s = binder_->Bind(ns, name, uid, node, annotations);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = pods_.find(uid); it != pods_.end()) {
      Slot& slot = gangs_.at(it->second.group).slots[it->second.slot];
      slot.binding = false;
      if (s.ok()) slot.bound = true;
    }
  }
  bind_cv_.notify_all();
  if (!s.ok()) {
    return done(PlatformError("bind", absl::StrCat("binding pod ", ns, "/", name, " to node ", node,
                                                   ": ", s.message())),
                "");
  }
  return done(JsonReply(200, json{{"Error", ""}}), "bound");
}

void Extender::MaybeForceBind(const std::string& group, size_t slot_index, const PodInfo& pod,
                              const std::vector<std::string>& candidates) {
  if (force_binds_ == nullptr) return;
  Gang& gang = gangs_.at(group);
  Slot& slot = gang.slots[slot_index];
  if (slot.bound || slot.binding) return;
  const std::string& node = gang.placement.pods[slot_index].node;
  const bool listed = std::find(candidates.begin(), candidates.end(), node) != candidates.end();
  if (slot.filter_attempts < options_.force_bind_threshold && listed) return;
  if (absl::Status a = AllocateSlot(group, slot_index); !a.ok()) {
    metrics_.CountApiError("force-bind-allocate");
    return;
  }
  ForceBindJob job{pod.ns, pod.name, pod.uid, node, BindAnnotations(group, slot_index)};
  if (!force_binds_->Push(std::move(job))) {
    metrics_.CountForceBind("dropped");
    return;
  }
  slot.binding = true;
  metrics_.CountForceBind("queued");
}

void Extender::OnForceBindDone(const ForceBindJob& job, const absl::Status& status) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = pods_.find(job.uid); it != pods_.end()) {
      Slot& slot = gangs_.at(it->second.group).slots[it->second.slot];
      slot.binding = false;
      if (status.ok()) slot.bound = true;
    }
  }
  bind_cv_.notify_all();
  if (status.ok()) {
    metrics_.CountForceBind("bound");
    return;
  }
  metrics_.CountForceBind("failed");
  metrics_.CountApiError("force-bind");
  std::cerr << "hived-extender: force bind of pod " << job.ns << "/" << job.name << " to node "
            << job.node << " failed: " << status.message() << "\n";
}

void Extender::WaitForceBinds() {
  if (force_binds_ != nullptr) force_binds_->WaitIdle();
}

}  // namespace hived::server

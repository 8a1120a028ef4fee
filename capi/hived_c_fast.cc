// The C interface's fast path (include/hived/hived_c.h "The fast path"; hived/fast_path.h):
// a reusable `hived_fast_result` over `hived::FastResult`, handles by value, node and chain
// ids. Same conventions as hived_c.cc (capi/capi_internal.h). A placed call adds no
// allocation to the C++ call's: the result is written in place and read through accessors.
#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "capi_internal.h"
#include "hived/fast_path.h"
#include "hived/hived_c.h"
#include "hived/scheduler.h"

struct hived_fast_result {
  hived::FastResult result;
};

namespace {

using hived::capi::FromStatus;
using hived::capi::Guard;
using hived::capi::NullArgument;
using hived::capi::Output;

hived_group_handle ToC(const hived::GroupHandle& h) {
  return hived_group_handle{h.slot, h.generation, h.config_epoch};
}

hived::GroupHandle FromC(const hived_group_handle& h) {
  hived::GroupHandle out;
  out.slot = h.slot;
  out.generation = h.generation;
  out.config_epoch = h.config_epoch;
  return out;
}

// Outcome waiting, nil handle, no pods; the vectors keep their capacity.
void Empty(hived::FastResult* r) {
  r->outcome = hived::Outcome::kWaiting;
  r->handle = hived::GroupHandle();
  r->chain = -1;
  r->pods.clear();
  r->leaves.clear();
  r->detail = hived::ScheduleResult();
}

// The pod at `pod`, or nullptr.
const hived::FastPod* PodAt(const hived_fast_result* result, size_t pod) {
  if (result == nullptr || pod >= result->result.pods.size()) return nullptr;
  return &result->result.pods[pod];
}

// Whether the pod's leaves lie within the result's (they do for what the scheduler wrote).
bool LeavesInRange(const hived_fast_result* result, const hived::FastPod& p) {
  return p.leaf_begin >= 0 && p.leaf_count >= 0 &&
         static_cast<size_t>(p.leaf_begin) + static_cast<size_t>(p.leaf_count) <=
             result->result.leaves.size();
}

}  // namespace

extern "C" {

hived_fast_result* hived_fast_result_create(void) {
  hived_fast_result* r = new (std::nothrow) hived_fast_result();
  if (r != nullptr) Empty(&r->result);
  return r;
}

void hived_fast_result_destroy(hived_fast_result* result) { delete result; }

hived_code hived_schedule_and_allocate(hived_scheduler* scheduler, const hived_request* request,
                                       hived_fast_result* result, char** error) {
  constexpr const char* kFn = "hived_schedule_and_allocate";
  if (result == nullptr) return NullArgument(error, kFn, "result");
  const hived_code code = [&] {
    if (scheduler == nullptr) return NullArgument(error, kFn, "scheduler");
    if (request == nullptr) return NullArgument(error, kFn, "request");
    return Guard(error, [&] {
      return FromStatus(
          scheduler->scheduler->ScheduleAndAllocate(request->request, &result->result), error);
    });
  }();
  if (code != HIVED_OK) Empty(&result->result);
  return code;
}

hived_code hived_release_handle(hived_scheduler* scheduler, hived_group_handle handle,
                                char** error) {
  if (scheduler == nullptr) return NullArgument(error, "hived_release_handle", "scheduler");
  return Guard(error,
               [&] { return FromStatus(scheduler->scheduler->Release(FromC(handle)), error); });
}

hived_code hived_handle_of(const hived_scheduler* scheduler, const char* group,
                           hived_group_handle* out, char** error) {
  constexpr const char* kFn = "hived_handle_of";
  if (out != nullptr) *out = ToC(hived::GroupHandle());
  if (scheduler == nullptr) return NullArgument(error, kFn, "scheduler");
  if (group == nullptr) return NullArgument(error, kFn, "group");
  if (out == nullptr) return NullArgument(error, kFn, "out");
  return Guard(error, [&] {
    absl::StatusOr<hived::GroupHandle> h = scheduler->scheduler->HandleOf(group);
    if (!h.ok()) return FromStatus(h.status(), error);
    *out = ToC(*h);
    return HIVED_OK;
  });
}

hived_code hived_group_name(const hived_scheduler* scheduler, hived_group_handle handle,
                            char** name, size_t* name_len, char** error) {
  constexpr const char* kFn = "hived_group_name";
  if (scheduler == nullptr) return NullArgument(error, kFn, "scheduler");
  if (name == nullptr) return NullArgument(error, kFn, "name");
  return Guard(error, [&] {
    absl::StatusOr<std::string> n = scheduler->scheduler->GroupName(FromC(handle));
    if (!n.ok()) return FromStatus(n.status(), error);
    return Output(*n, name, name_len, error);
  });
}

int32_t hived_node_count(const hived_scheduler* scheduler) {
  return scheduler == nullptr ? 0 : scheduler->scheduler->NodeCount();
}

// The scheduler's names are std::strings that live until ApplyConfig: NUL-terminated.
const char* hived_node_name(const hived_scheduler* scheduler, int32_t node) {
  if (scheduler == nullptr) return "";
  const std::string_view n = scheduler->scheduler->NodeName(node);
  return n.empty() ? "" : n.data();
}

const char* hived_chain_name(const hived_scheduler* scheduler, int32_t chain) {
  if (scheduler == nullptr) return "";
  const std::string_view n = scheduler->scheduler->ChainName(chain);
  return n.empty() ? "" : n.data();
}

hived_outcome hived_fast_result_outcome(const hived_fast_result* result) {
  if (result == nullptr) return HIVED_OUTCOME_WAITING;
  return static_cast<hived_outcome>(result->result.outcome);
}

hived_reason_code hived_fast_result_reason_code(const hived_fast_result* result) {
  if (result == nullptr) return HIVED_REASON_NONE;
  return static_cast<hived_reason_code>(result->result.detail.code);
}

const char* hived_fast_result_reason(const hived_fast_result* result) {
  return result == nullptr ? "" : result->result.detail.reason.c_str();
}

hived_group_handle hived_fast_result_handle(const hived_fast_result* result) {
  return ToC(result == nullptr ? hived::GroupHandle() : result->result.handle);
}

int32_t hived_fast_result_chain(const hived_fast_result* result) {
  return result == nullptr ? -1 : result->result.chain;
}

size_t hived_fast_result_pod_count(const hived_fast_result* result) {
  return result == nullptr ? 0 : result->result.pods.size();
}

int32_t hived_fast_result_pod_node(const hived_fast_result* result, size_t pod) {
  const hived::FastPod* p = PodAt(result, pod);
  return p == nullptr ? -1 : p->node;
}

int32_t hived_fast_result_pod_first_leaf(const hived_fast_result* result, size_t pod) {
  const hived::FastPod* p = PodAt(result, pod);
  if (p == nullptr || p->leaf_count == 0 || !LeavesInRange(result, *p)) return -1;
  return result->result.leaves[static_cast<size_t>(p->leaf_begin)];
}

int32_t hived_fast_result_pod_leaf_count(const hived_fast_result* result, size_t pod) {
  const hived::FastPod* p = PodAt(result, pod);
  return p == nullptr ? 0 : p->leaf_count;
}

const int32_t* hived_fast_result_pod_leaves(const hived_fast_result* result, size_t pod,
                                            size_t* count) {
  if (count != nullptr) *count = 0;
  const hived::FastPod* p = PodAt(result, pod);
  if (p == nullptr || !LeavesInRange(result, *p)) return nullptr;
  if (count != nullptr) *count = static_cast<size_t>(p->leaf_count);
  return result->result.leaves.data() + p->leaf_begin;
}

}  // extern "C"

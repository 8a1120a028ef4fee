// capi/capi_internal.h: what the C interface's sources (hived_c.cc: configs, schedulers,
// requests, results and the calls that change state; hived_c_state.cc: release, health,
// saved state, group records and views; hived_c_pods.cc: pods, timed reservations, the
// journal and live config change; hived_c_fast.cc: the fast path) share: the handle types
// behind hived_c.h's opaque pointers, the error and output conventions, and the JSON shapes
// of the views.
#ifndef HIVED_CAPI_CAPI_INTERNAL_H_
#define HIVED_CAPI_CAPI_INTERNAL_H_

#include <cstddef>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "hived/cluster_spec.h"
#include "hived/hived_c.h"
#include "hived/journal.h"
#include "hived/schedule_result.h"
#include "hived/scheduler.h"
#include "hived/state.h"
#include "hived/status_view.h"
#include "nlohmann/json.hpp"

struct hived_config {
  hived::ClusterSpec spec;
};

namespace hived::capi {
// A C callback as a journal sink (hived_journal_start).
class CallbackSink final : public hived::JournalSink {
 public:
  CallbackSink(hived_journal_append_fn append, void* user_data)
      : append_(append), user_data_(user_data) {}
  absl::Status Append(std::string_view frame) override;

 private:
  hived_journal_append_fn append_;
  void* user_data_;
};
}  // namespace hived::capi

// The sink is declared first so that it outlives the scheduler that may point to it.
struct hived_scheduler {
  std::unique_ptr<hived::capi::CallbackSink> journal_sink;  // the started journal's, if any
  std::unique_ptr<hived::Scheduler> scheduler;
};

struct hived_request {
  hived::GroupRequest request;
};

// A schedule result plus, per pod, nothing more: the C accessors read the C++ values in
// place (their strings are NUL-terminated by std::string).
struct hived_result {
  hived::ScheduleResult result;
};

namespace hived::capi {

using Json = nlohmann::ordered_json;

// `j` as compact JSON, invalid UTF-8 replaced.
std::string Dump(const Json& j);
// Sets `*error` (when `error` is not NULL) to a malloc'd copy of `message`; returns `code`.
hived_code Fail(char** error, hived_code code, std::string_view message);
// HIVED_OK, or `status`'s code with its message in `*error`.
hived_code FromStatus(const absl::Status& status, char** error);
// HIVED_INVALID_ARGUMENT: "function: argument is NULL".
hived_code NullArgument(char** error, const char* function, const char* argument);
// Hands `text` to the caller through `out` and `out_len`.
hived_code Output(std::string_view text, char** out, size_t* out_len, char** error);
void FillInfo(const hived::AllocateInfo& info, hived_allocate_info* out);
void ClearInfo(hived_allocate_info* out);
Json GroupJson(const hived::GroupStatus& g);
Json PlacementJson(const hived::Placement& placement);
// {"groups":[{"name","path","outcome","reason"}...],"unknownNodes":[...],"notes":[...]}
Json RestoreReportJson(const hived::RestoreReport& report);
// A malloc'd NUL-terminated copy of `text`; nullptr when out of memory.
char* CopyOut(std::string_view text);
// `s`, or "" for NULL.
std::string Str(const char* s);
Json LeavesJson(const hived::LeafCounts& c);
Json VirtualCellJson(const hived::VirtualCellStatus& c);

// Runs `body` (returning hived_code) with every exception turned into a code.
template <typename Body>
hived_code Guard(char** error, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return Fail(error, HIVED_RESOURCE_EXHAUSTED, "out of memory");
  } catch (const std::exception& e) {
    return Fail(error, HIVED_INTERNAL, absl::StrCat("unexpected exception: ", e.what()));
  } catch (...) {
    return Fail(error, HIVED_INTERNAL, "unexpected exception");
  }
}

// hived_schedule and hived_schedule_timed (named `function` in messages): checks the
// arguments, then Scheduler::Schedule of `request` in `phase` (with `time` when not NULL)
// into `result`, which is emptied on an error.
hived_code ScheduleInto(const char* function, hived_scheduler* scheduler,
                        const hived_request* request, int phase, const hived::ReservationTime* time,
                        hived_result* result, char** error);

// The scheduler of a view call, or an error.
template <typename View>
hived_code JsonView(const hived_scheduler* scheduler, const char* function, char** json,
                    size_t* json_len, char** error, View&& view) {
  if (scheduler == nullptr) return NullArgument(error, function, "scheduler");
  if (json == nullptr) return NullArgument(error, function, "json");
  return Guard(error, [&]() -> hived_code {
    absl::StatusOr<Json> j = view(*scheduler->scheduler);
    if (!j.ok()) return FromStatus(j.status(), error);
    return Output(Dump(*j), json, json_len, error);
  });
}

}  // namespace hived::capi

#endif  // HIVED_CAPI_CAPI_INTERNAL_H_

// The C interface's calls added by issue 29 (include/hived/hived_c.h): pods, timed
// reservations and their expiry, the journal with a C callback sink, and live config
// change. Same conventions as hived_c.cc (capi/capi_internal.h).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "capi_internal.h"
#include "hived/hived_c.h"
#include "hived/journal.h"
#include "hived/scheduler.h"
#include "hived/state.h"

namespace hived::capi {

absl::Status CallbackSink::Append(std::string_view frame) {
  const int rc = append_(user_data_, frame.data(), frame.size());
  if (rc == 0) return absl::OkStatus();
  return absl::UnavailableError(absl::StrCat("the C journal sink returned ", rc));
}

}  // namespace hived::capi

namespace {

using hived::capi::ClearInfo;
using hived::capi::Dump;
using hived::capi::Fail;
using hived::capi::FillInfo;
using hived::capi::FromStatus;
using hived::capi::Guard;
using hived::capi::Json;
using hived::capi::NullArgument;
using hived::capi::Output;
using hived::capi::Str;

hived::Pod ToPod(const hived_pod_desc& d) {
  hived::Pod pod;
  pod.name = Str(d.name);
  pod.uid = Str(d.uid);
  pod.leaf_cell_number = d.leaf_cell_number;
  pod.node = Str(d.node);
  pod.first_leaf_index = d.first_leaf_index;
  return pod;
}

void ClearPodAllocation(hived_pod_allocation* out) {
  if (out == nullptr) return;
  out->slot = -1;
  out->started_gang = 0;
  ClearInfo(&out->info);
}

void FillPodAllocation(const hived::PodAllocation& a, hived_pod_allocation* out) {
  if (out == nullptr) return;
  out->slot = a.pod.index;
  out->started_gang = a.started_gang ? 1 : 0;
  FillInfo(a.info, &out->info);
}

}  // namespace

extern "C" {

hived_code hived_allocate_pod(hived_scheduler* scheduler, const hived_request* request,
                              const hived_result* result, const hived_pod_desc* pod,
                              hived_pod_allocation* out, char** error) {
  constexpr const char* kFn = "hived_allocate_pod";
  ClearPodAllocation(out);
  if (scheduler == nullptr) return NullArgument(error, kFn, "scheduler");
  if (request == nullptr) return NullArgument(error, kFn, "request");
  if (result == nullptr) return NullArgument(error, kFn, "result");
  if (pod == nullptr) return NullArgument(error, kFn, "pod");
  return Guard(error, [&] {
    absl::StatusOr<hived::PodAllocation> a =
        scheduler->scheduler->AllocatePod(request->request, result->result.placement, ToPod(*pod));
    if (!a.ok()) return FromStatus(a.status(), error);
    FillPodAllocation(*a, out);
    return HIVED_OK;
  });
}

hived_code hived_release_pod(hived_scheduler* scheduler, const char* group, const char* pod,
                             int* gang_released, char** error) {
  constexpr const char* kFn = "hived_release_pod";
  if (gang_released != nullptr) *gang_released = 0;
  if (scheduler == nullptr) return NullArgument(error, kFn, "scheduler");
  if (group == nullptr) return NullArgument(error, kFn, "group");
  if (pod == nullptr) return NullArgument(error, kFn, "pod");
  return Guard(error, [&] {
    absl::StatusOr<hived::PodRelease> r = scheduler->scheduler->ReleasePod(group, pod);
    if (!r.ok()) return FromStatus(r.status(), error);
    if (gang_released != nullptr) *gang_released = *r == hived::PodRelease::kGang ? 1 : 0;
    return HIVED_OK;
  });
}

hived_code hived_pod_json(const hived_scheduler* scheduler, const char* group, const char* pod,
                          char** json, size_t* json_len, char** error) {
  constexpr const char* kFn = "hived_pod_json";
  if (scheduler == nullptr) return NullArgument(error, kFn, "scheduler");
  if (group == nullptr) return NullArgument(error, kFn, "group");
  if (pod == nullptr) return NullArgument(error, kFn, "pod");
  if (json == nullptr) return NullArgument(error, kFn, "json");
  return Guard(error, [&] {
    absl::StatusOr<hived::PodStatus> p = scheduler->scheduler->GetPod(group, pod);
    if (!p.ok()) return FromStatus(p.status(), error);
    hived::Placement one;
    one.pods.push_back(p->placement);
    Json placement = hived::capi::PlacementJson(one)["pods"][0];
    const Json j = {{"group", p->group},
                    {"name", p->name},
                    {"uid", p->uid},
                    {"index", p->index},
                    {"placement", std::move(placement)}};
    return Output(Dump(j), json, json_len, error);
  });
}

hived_code hived_recover_pod(hived_scheduler* scheduler, const char* record_json, size_t record_len,
                             const hived_pod_desc* pod, hived_pod_allocation* out, char** error) {
  constexpr const char* kFn = "hived_recover_pod";
  ClearPodAllocation(out);
  if (scheduler == nullptr) return NullArgument(error, kFn, "scheduler");
  if (record_json == nullptr) return NullArgument(error, kFn, "record_json");
  if (pod == nullptr) return NullArgument(error, kFn, "pod");
  return Guard(error, [&] {
    absl::StatusOr<hived::GroupRecord> record =
        hived::GroupRecordFromJson(std::string_view(record_json, record_len));
    if (!record.ok()) return FromStatus(record.status(), error);
    absl::StatusOr<hived::PodAllocation> a = scheduler->scheduler->RecoverPod(*record, ToPod(*pod));
    if (!a.ok()) return FromStatus(a.status(), error);
    FillPodAllocation(*a, out);
    return HIVED_OK;
  });
}

hived_code hived_schedule_timed(hived_scheduler* scheduler, const hived_request* request, int phase,
                                int64_t now, int has_deadline, int64_t deadline,
                                hived_result* result, char** error) {
  hived::ReservationTime time;
  time.now = now;
  if (has_deadline != 0) time.deadline = deadline;
  return hived::capi::ScheduleInto("hived_schedule_timed", scheduler, request, phase, &time, result,
                                   error);
}

hived_code hived_expire_reservations(hived_scheduler* scheduler, int64_t now, char** json,
                                     size_t* json_len, char** error) {
  constexpr const char* kFn = "hived_expire_reservations";
  if (scheduler == nullptr) return NullArgument(error, kFn, "scheduler");
  return Guard(error, [&] {
    const std::vector<hived::ExpiredReservation> expired =
        scheduler->scheduler->ExpireReservations(now);
    if (json == nullptr) return HIVED_OK;
    Json j = Json::array();
    for (const hived::ExpiredReservation& e : expired) {
      j.push_back({{"group", e.group},
                   {"state", hived::GroupStateName(e.state)},
                   {"reservedAt", e.reserved_at},
                   {"deadline", e.deadline}});
    }
    return Output(Dump(j), json, json_len, error);
  });
}

hived_code hived_journal_start(hived_scheduler* scheduler, hived_journal_append_fn append,
                               void* user_data, char** state, size_t* state_len, uint64_t* sequence,
                               char** error) {
  constexpr const char* kFn = "hived_journal_start";
  if (scheduler == nullptr) return NullArgument(error, kFn, "scheduler");
  if (append == nullptr) return NullArgument(error, kFn, "append");
  if (state == nullptr) return NullArgument(error, kFn, "state");
  if (sequence == nullptr) return NullArgument(error, kFn, "sequence");
  return Guard(error, [&] {
    auto sink = std::make_unique<hived::capi::CallbackSink>(append, user_data);
    absl::StatusOr<hived::JournalCheckpoint> cp = scheduler->scheduler->StartJournal(sink.get());
    if (!cp.ok()) return FromStatus(cp.status(), error);
    // The scheduler now writes to `sink`; the previous sink (if any) is no longer used.
    scheduler->journal_sink = std::move(sink);
    *sequence = cp->sequence;
    return Output(cp->state, state, state_len, error);
  });
}

hived_code hived_journal_stop(hived_scheduler* scheduler, char** error) {
  if (scheduler == nullptr) return NullArgument(error, "hived_journal_stop", "scheduler");
  return Guard(error, [&] {
    scheduler->scheduler->StopJournal();
    scheduler->journal_sink.reset();
    return HIVED_OK;
  });
}

hived_code hived_journal_status(const hived_scheduler* scheduler, char** error) {
  if (scheduler == nullptr) return NullArgument(error, "hived_journal_status", "scheduler");
  return Guard(error, [&] { return FromStatus(scheduler->scheduler->JournalStatus(), error); });
}

hived_code hived_journal_sequence(const hived_scheduler* scheduler, uint64_t* sequence,
                                  char** error) {
  constexpr const char* kFn = "hived_journal_sequence";
  if (scheduler == nullptr) return NullArgument(error, kFn, "scheduler");
  if (sequence == nullptr) return NullArgument(error, kFn, "sequence");
  *sequence = scheduler->scheduler->JournalSequence();
  return HIVED_OK;
}

hived_code hived_apply_journal(hived_scheduler* scheduler, const char* journal, size_t journal_len,
                               char** call_errors, char** error) {
  constexpr const char* kFn = "hived_apply_journal";
  if (scheduler == nullptr) return NullArgument(error, kFn, "scheduler");
  if (journal == nullptr && journal_len > 0) return NullArgument(error, kFn, "journal");
  return Guard(error, [&] {
    const std::string_view bytes =
        journal == nullptr ? std::string_view() : std::string_view(journal, journal_len);
    absl::StatusOr<hived::JournalContents> contents = hived::ReadJournal(bytes);
    if (!contents.ok()) return FromStatus(contents.status(), error);
    if (contents->torn_tail_bytes > 0) {
      return Fail(error, HIVED_INVALID_ARGUMENT,
                  absl::StrCat(kFn, ": the last ", contents->torn_tail_bytes,
                               " bytes are not a whole record; nothing applied"));
    }
    std::string failed;
    hived_code code = HIVED_OK;
    for (const hived::JournalRecord& record : contents->records) {
      std::string call_error;
      const absl::Status s = scheduler->scheduler->ApplyJournalRecord(record, &call_error);
      if (!s.ok()) {
        code = FromStatus(s, error);
        break;
      }
      if (!call_error.empty()) {
        absl::StrAppend(&failed, failed.empty() ? "" : "\n", "record ", record.sequence, " (",
                        hived::JournalOpName(record.op), "): ", call_error);
      }
    }
    if (call_errors != nullptr) {
      const hived_code out = Output(failed, call_errors, nullptr, error);
      if (code == HIVED_OK) code = out;
    }
    return code;
  });
}

hived_code hived_recover_from_journal(const hived_config* config, const char* state,
                                      size_t state_len, uint64_t sequence, const char* journal,
                                      size_t journal_len, hived_scheduler** out, char** report_json,
                                      char** error) {
  constexpr const char* kFn = "hived_recover_from_journal";
  if (config == nullptr) return NullArgument(error, kFn, "config");
  if (state == nullptr && state_len > 0) return NullArgument(error, kFn, "state");
  if (journal == nullptr && journal_len > 0) return NullArgument(error, kFn, "journal");
  if (out == nullptr) return NullArgument(error, kFn, "out");
  return Guard(error, [&] {
    hived::JournalCheckpoint cp;
    if (state_len > 0) cp.state.assign(state, state_len);
    cp.sequence = sequence;
    hived::JournalRecoveryReport report;
    absl::StatusOr<std::unique_ptr<hived::Scheduler>> s = hived::Scheduler::RecoverFromJournal(
        config->spec, cp,
        journal == nullptr ? std::string_view() : std::string_view(journal, journal_len), &report);
    if (!s.ok()) return FromStatus(s.status(), error);
    if (report_json != nullptr) {
      const Json j = {{"lastSequence", report.last_sequence},
                      {"recordsApplied", report.records_applied},
                      {"tornTailBytes", report.torn_tail_bytes},
                      {"failed", report.failed},
                      {"restore", hived::capi::RestoreReportJson(report.restore)}};
      const hived_code code = Output(Dump(j), report_json, nullptr, error);
      if (code != HIVED_OK) return code;
    }
    *out = new hived_scheduler{nullptr, std::move(*s)};
    return HIVED_OK;
  });
}

hived_code hived_apply_config(hived_scheduler* scheduler, const hived_config* config,
                              int apply_stranded, char** report_json, char** error) {
  constexpr const char* kFn = "hived_apply_config";
  if (scheduler == nullptr) return NullArgument(error, kFn, "scheduler");
  if (config == nullptr) return NullArgument(error, kFn, "config");
  return Guard(error, [&] {
    hived::ApplyConfigOptions options;
    if (apply_stranded != 0) options.stranded = hived::ApplyConfigOptions::Stranded::kApply;
    absl::StatusOr<hived::RestoreReport> report =
        scheduler->scheduler->ApplyConfig(config->spec, options);
    if (!report.ok()) return FromStatus(report.status(), error);
    if (report_json == nullptr) return HIVED_OK;
    return Output(Dump(hived::capi::RestoreReportJson(*report)), report_json, nullptr, error);
  });
}

}  // extern "C"

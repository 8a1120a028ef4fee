// Per-job and timeline CSVs and the summary table: JobsCsv, TimelineCsv and SummaryTable of
// sim/metrics/metrics.h.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/common/csv.h"
#include "sim/metrics/metrics.h"

namespace hived::sim {
namespace {

std::string CsvQuote(std::string_view s) {
  if (s.find_first_of(",\"\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c == '\n' ? ' ' : c;
  }
  out += "\"";
  return out;
}

std::string Hours(double seconds) { return FormatFixed(seconds / 3600.0, 2); }

// Appends `s` as a CSV field (quoted as CsvQuote does), without a temporary when plain.
void AppendCsvField(std::string* out, std::string_view s) {
  // A plain loop: find_first_of over a set costs a search of the set per character.
  const bool plain =
      std::none_of(s.begin(), s.end(), [](char c) { return c == ',' || c == '"' || c == '\n'; });
  if (plain) {
    out->append(s);
  } else {
    out->append(CsvQuote(s));
  }
}

// Appends `v` in decimal, as absl::StrAppend writes it, through a stack buffer.
void AppendInt(std::string* out, int64_t v) {
  char digits[24];
  out->append(digits, std::to_chars(digits, digits + sizeof(digits), v).ptr);
}

// Appends `v` when `present`; an empty field otherwise.
void AppendIf(std::string* out, bool present, int64_t v) {
  if (present) AppendInt(out, v);
}

}  // namespace

void AppendJobRow(std::string* row, std::string_view id, std::string_view vc, const SimJob& job,
                  const JobRecord& rec, const std::vector<std::string>& nodes) {
  std::string& out = *row;
  AppendCsvField(&out, id);
  out += ',';
  AppendCsvField(&out, vc);
  out += ',';
  AppendInt(&out, job.priority);
  out += ',';
  AppendInt(&out, job.gpus);
  out += ',';
  for (size_t m = 0; m < job.members.size(); ++m) {
    if (m > 0) out += '+';
    AppendInt(&out, job.members[m].pod_number);
    out += 'x';
    AppendInt(&out, job.members[m].leaf_cell_number);
  }
  out += ',';
  AppendInt(&out, rec.submit);
  out += ',';
  AppendIf(&out, rec.first_start >= 0, rec.first_start);
  out += ',';
  AppendIf(&out, rec.end >= 0, rec.end);
  out += ',';
  AppendIf(&out, rec.first_start >= 0, rec.first_start - rec.submit);
  out += ',';
  AppendIf(&out, rec.end >= 0, rec.end - rec.submit);
  out += ',';
  out += JobStateName(rec.state);
  out += ',';
  AppendInt(&out, rec.preemptions);
  out += ',';
  AppendInt(&out, rec.failures);
  out += ',';
  const int64_t lost = rec.gpu_seconds_lost() + rec.failure_gpu_seconds_lost();
  if (lost == 0) {
    out += "0.000";  // what FormatFixed writes for 0, without formatting
  } else {
    out += FormatFixed(static_cast<double>(lost) / 3600.0);
  }
  out += rec.opportunistic ? ",1," : ",0,";
  for (size_t n = 0; n < rec.nodes.size(); ++n) {
    if (n > 0) out += ';';
    out += nodes[static_cast<size_t>(rec.nodes[n])];
  }
  out += ',';
  AppendCsvField(&out, rec.reason());
  out += '\n';
}

std::string JobsCsv(const EngineResult& result, const Trace& trace,
                    const std::vector<std::string>& nodes) {
  std::string out(kJobsCsvHeader);
  // Rows are written in place (no per-row temporaries): this runs once per job.
  out.reserve(result.jobs.size() * 96 + out.size());
  for (size_t j = 0; j < result.jobs.size(); ++j) {
    const TraceJob& t = trace.jobs[j];
    AppendJobRow(&out, t.id, t.vc, result.jobs[j], result.records[j], nodes);
  }
  return out;
}

std::string TimelineCsv(const EngineResult& result, const SpecInfo& info) {
  std::string out = "time,used_gpus,utilisation,fragmented_free_gpus,running_jobs,queued_jobs";
  for (int32_t v = 0; v < info.vc_count(); ++v) absl::StrAppend(&out, ",queued_", info.vc_name(v));
  out += "\n";
  const double total = static_cast<double>(std::max<int64_t>(1, result.total_gpus));
  for (const TimelineRow& row : result.timeline) {
    absl::StrAppend(&out, row.time, ",", row.used_gpus, ",",
                    FormatFixed(static_cast<double>(row.used_gpus) / total, 4), ",",
                    row.fragmented_free_gpus, ",", row.running_jobs, ",", row.queued_jobs);
    for (int64_t q : row.queued_per_vc) absl::StrAppend(&out, ",", q);
    out += "\n";
  }
  return out;
}

std::string SummaryTable(const Summary& s) {
  std::string out = absl::StrFormat(
      "policy %s, queue %s: %d jobs (%d completed, %d queued, %d running, %d rejected)%s\n"
      "cluster: %d GPUs, utilisation %s%%, allocation rate %s%%, fragmentation %s%%, "
      "%d scheduling decisions\n"
      "window [%d, %d) s: utilisation %s%% of %d GPUs, useful %s%%, lost %s GPU-hours\n",
      s.info.policy, s.info.queue, s.all.submitted, s.all.completed, s.all.queued, s.all.running,
      s.all.rejected, s.accounting_ok ? "" : "  ACCOUNTING MISMATCH", s.total_gpus,
      FormatFixed(100 * s.utilisation, 1), FormatFixed(100 * s.allocation_rate, 1),
      FormatFixed(100 * s.fragmentation, 1), s.schedule_calls, s.window.start, s.window.end,
      FormatFixed(100 * s.window.utilisation, 1), s.window.cluster_gpus,
      FormatFixed(100 * s.window.useful_utilisation, 1),
      FormatFixed(s.window.lost_gpu_hours + s.window.failure_lost_gpu_hours, 1));
  out += absl::StrFormat("%-12s %6s %7s %7s %5s %9s %9s %9s %9s %6s %9s\n", "vc", "gpus", "jobs",
                         "done", "rej", "wait-mean", "wait-p95", "wait-max", "jct-mean", "preem",
                         "anomaly");
  auto row = [&out](const GroupSummary& g) {
    out += absl::StrFormat(
        "%-12s %6d %7d %7d %5d %8sh %8sh %8sh %8sh %6d %9s\n", g.name.substr(0, 12),
        g.reserved_gpus, g.submitted, g.completed, g.rejected, Hours(g.queuing_delay.mean),
        Hours(static_cast<double>(g.queuing_delay.p95)),
        Hours(static_cast<double>(g.queuing_delay.max)), Hours(g.jct.mean), g.preemptions,
        g.sharing_anomaly ? Hours(*g.sharing_anomaly) + "h" : "-");
  };
  for (const GroupSummary& g : s.vcs) row(g);
  row(s.all);
  if (s.all.sharing_anomaly) {
    out += "anomaly = mean wait minus in a private cluster (> 0 = waits longer than private)\n";
  }
  if (s.all.censored_wait.count > 0) {
    out += absl::StrFormat(
        "%d jobs not started by the end (censored; not in the waits above): waited at least "
        "%sh on average\n",
        s.all.censored_wait.count, Hours(s.all.censored_wait.mean));
  }
  if (!s.rejection_reasons.empty()) {
    out += "rejected jobs by reason:\n";
    for (size_t i = 0; i < s.rejection_reasons.size() && i < 5; ++i) {
      out += absl::StrFormat("  %7d  %s\n", s.rejection_reasons[i].second,
                             s.rejection_reasons[i].first);
    }
  }
  return out;
}

}  // namespace hived::sim

#include "sim/cli/run_options.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "sim/common/command_util.h"
#include "sim/common/csv.h"
#include "sim/common/json.h"

namespace hived::sim {
namespace {

std::string_view Sv(absl::string_view s) { return std::string_view(s.data(), s.size()); }

// A duration: integer seconds, or a number with an `m` or `h` suffix.
std::optional<Time> ParseDuration(std::string_view text) {
  double unit = 1;
  if (!text.empty() && (text.back() == 'm' || text.back() == 'h')) {
    unit = text.back() == 'm' ? 60 : 3600;
    text.remove_suffix(1);
  }
  std::optional<double> v = ParseDouble(text);
  if (!v || !(*v >= 0) || *v * unit > 1e15) return std::nullopt;
  return static_cast<Time>(std::llround(*v * unit));
}

}  // namespace

absl::Status ScaleLoad(double k, Trace* trace) {
  if (!(k >= 0.001 && k <= 1000)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--load-scale ", k, " is outside [0.001, 1000]"));
  }
  if (k == 1 || trace->jobs.empty()) return absl::OkStatus();
  const Time first = trace->jobs.front().submit_time;
  for (TraceJob& j : trace->jobs) {
    const double offset = static_cast<double>(j.submit_time - first) / k;
    j.submit_time = first + static_cast<Time>(std::llround(offset));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::pair<Time, Time>> ParseWindow(std::string_view text) {
  std::vector<absl::string_view> parts = absl::StrSplit(Av(text), ',');
  auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("--window '", Av(text), "' is not START,END in seconds (END > START)"));
  };
  if (parts.size() != 2) return bad();
  std::pair<Time, Time> out{-1, -1};
  Time* sides[2] = {&out.first, &out.second};
  for (size_t i = 0; i < 2; ++i) {
    if (parts[i].empty()) continue;
    std::optional<Time> t = ParseDuration(Sv(parts[i]));
    if (!t) return bad();
    *sides[i] = *t;
  }
  if (out.first >= 0 && out.second >= 0 && out.second <= out.first) return bad();
  return out;
}

absl::StatusOr<std::vector<Time>> ParseSloList(std::string_view text) {
  std::vector<Time> out;
  for (absl::string_view item : absl::StrSplit(Av(text), ',')) {
    std::optional<Time> t = ParseDuration(Sv(item));
    if (!t) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--slo item '", item, "' is not a duration (seconds, or a number with m or h)"));
    }
    out.push_back(*t);
  }
  return out;
}

absl::StatusOr<std::vector<int64_t>> ParseMaxCapacity(std::string_view text, const SpecInfo& info) {
  std::vector<int64_t> out(static_cast<size_t>(info.vc_count()), -1);
  if (text.find('=') == std::string_view::npos) {
    std::optional<double> f = ParseDouble(text);
    if (!f || !(*f > 0 && *f <= 1)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--max-capacity '", Av(text), "' is neither a fraction in (0, 1] nor VC=GPUS,..."));
    }
    for (int64_t& m : out) {
      m = static_cast<int64_t>(std::floor(*f * static_cast<double>(info.TotalGpus())));
    }
    return out;
  }
  for (absl::string_view item : absl::StrSplit(Av(text), ',')) {
    std::vector<absl::string_view> kv = absl::StrSplit(item, absl::MaxSplits('=', 1));
    const int32_t vc = kv.size() == 2 ? info.VcIndex(std::string(kv[0])) : -1;
    std::optional<int64_t> gpus = kv.size() == 2 ? ParseInt(Sv(kv[1])) : std::nullopt;
    if (vc < 0 || !gpus || *gpus < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--max-capacity item '", item, "' is not VC=GPUS with a VC of the config"));
    }
    out[static_cast<size_t>(vc)] = *gpus;
  }
  return out;
}

std::string CheckRunLimits(double mtbf, double mttr, int64_t timeline_interval, int64_t horizon,
                           int64_t max_input_mb) {
  const double max_hours = static_cast<double>(kMaxTimeSeconds) / 3600.0;
  constexpr double kMinHours = 1.0 / 60;  // one minute: shorter gives a failure storm
  for (const auto& [name, hours] :
       {std::pair<const char*, double>{"--mtbf", mtbf}, {"--mttr", mttr}}) {
    if (hours != 0 && (hours < kMinHours || hours > max_hours)) {
      return absl::StrCat(name, " must be between ", FormatFixed(kMinHours, 4), " and ",
                          FormatFixed(max_hours, 0), " hours (1 minute .. 100 years)");
    }
  }
  if (timeline_interval > kMaxTimeSeconds) {
    return absl::StrCat("--timeline-interval must be at most ", kMaxTimeSeconds, " s (100 years)");
  }
  if (horizon < -1 || horizon > kMaxTimeSeconds) {
    return absl::StrCat("--horizon must be -1 (none) or 0..", kMaxTimeSeconds, " s (100 years)");
  }
  if (max_input_mb < 0 || max_input_mb > 1024) {
    return "--max-input-mb must be 1..1024 (0 = the defaults)";
  }
  return "";
}

}  // namespace hived::sim

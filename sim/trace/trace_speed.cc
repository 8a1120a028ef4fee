#include "sim/trace/trace_speed.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "sim/common/csv.h"

namespace hived::sim {

absl::StatusOr<std::vector<std::pair<std::string, double>>> ParseSpeedFactors(
    const std::string& flag, const std::string& text) {
  std::vector<std::pair<std::string, double>> out;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    const std::string item(absl::StripAsciiWhitespace(part));
    const size_t eq = item.find('=');
    std::optional<double> f;
    if (eq != std::string::npos && eq > 0) f = ParseDouble(item.substr(eq + 1));
    if (!f || !std::isfinite(*f) || *f < 1 / kMaxSpeedFactor || *f > kMaxSpeedFactor) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", flag, ": '", item, "' is not NAME=F with F in [0.001, 1000] (2 = twice as fast)"));
    }
    const std::string name = item.substr(0, eq);
    for (const auto& [other, x] : out) {
      if (other == name) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", flag, ": '", name, "' is given twice; give it once"));
      }
    }
    out.emplace_back(name, *f);
  }
  return out;
}

absl::Status ApplyVcSpeeds(const std::vector<std::pair<std::string, double>>& speeds,
                           Trace* trace) {
  if (speeds.empty()) return absl::OkStatus();
  std::set<std::string> present;
  for (const TraceJob& j : trace->jobs) present.insert(j.vc.str());
  std::map<std::string, double> by_vc;
  for (const auto& [vc, f] : speeds) {
    if (present.count(vc) == 0) {
      std::vector<std::string> names(present.begin(), present.end());
      if (names.size() > 30) {
        names.resize(30);
        names.push_back("...");
      }
      return absl::InvalidArgumentError(
          absl::StrCat("--vc-speed: no job of the trace has VC '", vc,
                       "' (VCs with jobs: ", absl::StrJoin(names, ", "), ")"));
    }
    by_vc[vc] = f;
  }
  for (TraceJob& j : trace->jobs) {
    auto it = by_vc.find(j.vc.str());
    if (it == by_vc.end() || it->second == 1) continue;
    const double d = std::round(static_cast<double>(j.duration) / it->second);
    j.duration = std::max<Time>(1, static_cast<Time>(std::min(d, 1e15)));
  }
  return absl::OkStatus();
}

double SpeedRatio(const std::vector<std::pair<std::string, double>>& type_speeds,
                  const std::string& from, const std::string& to) {
  double f = 1, t = 1;
  for (const auto& [type, s] : type_speeds) {
    if (type == from) f = s;
    if (type == to) t = s;
  }
  return t / f;
}

}  // namespace hived::sim

// The plan command's pure helpers: reading a target ("p95_wait<=1h"), the sizes a k-section
// round probes, and the sized config's VC names kept strings for any YAML reader (plan.h).
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "sim/common/csv.h"
#include "sim/common/flags.h"
#include "sim/planning/plan.h"
#include "sim/planning/plan_search.h"

namespace hived::sim {

bool PlanTarget::Meets(double v) const {
  switch (op) {
    case Op::kLe:
      return v <= value;
    case Op::kLt:
      return v < value;
    case Op::kGe:
      return v >= value;
    case Op::kGt:
      return v > value;
  }
  return false;
}

namespace {

// "1h", "30 min", "95%", "90": the value in the summary's units (seconds, fractions).
std::optional<double> ParseValueWithUnit(std::string value) {
  value = std::string(absl::StripAsciiWhitespace(value));
  double scale = 1;
  static const std::pair<const char*, double> kUnits[] = {
      {"min", 60}, {"ms", 0.001}, {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}, {"%", 0.01}};
  for (const auto& [unit, factor] : kUnits) {
    if (absl::EndsWith(value, unit)) {
      const std::string number = value.substr(0, value.size() - std::strlen(unit));
      if (ParseDouble(std::string(absl::StripAsciiWhitespace(number)))) {
        value = std::string(absl::StripAsciiWhitespace(number));
        scale = factor;
        break;
      }
    }
  }
  const std::optional<double> v = ParseDouble(value);
  if (!v || !std::isfinite(*v)) return std::nullopt;
  return *v * scale;
}

}  // namespace

absl::StatusOr<PlanTarget> ParsePlanTarget(const std::string& text) {
  PlanTarget t;
  t.text = text;
  const size_t at = text.find_first_of("<>");
  auto bad = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--target '", text, "': ", what, " (expected METRIC<=VALUE[unit], e.g. p95_wait<=1h)"));
  };
  if (at == std::string::npos) return bad("no <= or >=");
  t.metric = std::string(absl::StripAsciiWhitespace(text.substr(0, at)));
  if (t.metric.empty()) return bad("no metric before the comparison");
  // slo_attainment@T: the share of the VC's jobs waiting at most T (the run's slo[T].share).
  if (absl::StartsWith(t.metric, "slo_attainment@")) {
    const std::string threshold = t.metric.substr(std::strlen("slo_attainment@"));
    const std::optional<double> secs = ParseValueWithUnit(threshold);
    if (!secs || *secs < 1 || *secs > 1e9 || absl::EndsWith(threshold, "%")) {
      return bad(absl::StrCat("'", threshold,
                              "' is not a wait threshold (slo_attainment@T takes a time, "
                              "e.g. slo_attainment@1h>=95%)"));
    }
    t.slo_seconds = std::llround(*secs);  // the run measures whole seconds
    t.metric = absl::StrCat("slo[", t.slo_seconds, "].share");
  }
  const bool less = text[at] == '<';
  const bool or_equal = at + 1 < text.size() && text[at + 1] == '=';
  t.op = less ? (or_equal ? PlanTarget::Op::kLe : PlanTarget::Op::kLt)
              : (or_equal ? PlanTarget::Op::kGe : PlanTarget::Op::kGt);
  const std::string value(absl::StripAsciiWhitespace(text.substr(at + (or_equal ? 2 : 1))));
  const std::optional<double> v = ParseValueWithUnit(value);
  if (!v) return bad(absl::StrCat("'", value, "' is not a number"));
  if (*v < 0) {
    return bad(absl::StrCat("'", value,
                            "' is negative; waits, anomalies and shares are never below 0, so "
                            "no size could be told apart from another"));
  }
  t.value = *v;
  return t;
}

namespace {

// True when a plain YAML scalar `name` might be read as something other than a string (a
// number, bool, null, ...) by YAML 1.1 or 1.2 readers, or holds characters that need quotes.
bool NeedsQuotes(const std::string& name) {
  if (name.empty() || name.front() == '-' || name.front() == '.' || name.front() == '+') {
    return true;
  }
  for (char c : name) {
    if (!(absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'))
      return true;
  }
  // Integers (1_000 too), hex, octal and floats with or without exponent: numbers to some
  // YAML reader.
  static const std::regex kNumber(
      "[0-9_]+|0[xX][0-9a-fA-F_]+|0[oO]?[0-7_]+|[0-9_]*\\.?[0-9_]+([eE][-+]?[0-9]+)?|"
      "[0-9_]+\\.[0-9_]*([eE][-+]?[0-9]+)?");
  if (std::regex_match(name, kNumber)) return true;
  static const char* const kWords[] = {"y",   "n",    "yes", "no",  "true", "false", "on",
                                       "off", "null", "nan", "inf", ".nan", ".inf"};
  for (const char* w : kWords) {
    if (absl::EqualsIgnoreCase(name, w)) return true;
  }
  return false;
}

}  // namespace

std::string YamlWithStringVcNames(const std::string& yaml) {
  std::string out;
  bool in_vcs = false;
  for (absl::string_view line : absl::StrSplit(yaml, '\n')) {
    std::string l(line);
    if (!l.empty() && l.front() != ' ' && l.front() != '#') in_vcs = l == "virtualClusters:";
    if (in_vcs && l.size() > 3 && l.compare(0, 2, "  ") == 0 && l[2] != ' ' && l[2] != '"' &&
        l[2] != '\'' && l.back() == ':') {
      const std::string name = l.substr(2, l.size() - 3);
      if (NeedsQuotes(name)) {
        std::string quoted = "\"";
        for (char c : name) {
          if (c == '"' || c == '\\') quoted += '\\';
          quoted += c;
        }
        l = absl::StrCat("  ", quoted, "\":");
      }
    }
    out += l;
    out += '\n';
  }
  out.pop_back();  // the newline after the last piece (the input's own, if it had one)
  return out;
}

std::vector<int64_t> NextProbeSizes(int64_t lo, int64_t hi, int64_t k) {
  std::vector<int64_t> out;
  const int64_t inside = hi - lo - 1;
  if (inside <= 0) return out;
  k = std::min(std::max<int64_t>(k, 1), inside);
  for (int64_t j = 1; j <= k; ++j) {
    const int64_t s = lo + static_cast<int64_t>(
                               std::llround(static_cast<double>(j) * static_cast<double>(hi - lo) /
                                            static_cast<double>(k + 1)));
    const int64_t c = std::clamp(s, lo + 1, hi - 1);
    if (out.empty() || out.back() != c) out.push_back(c);
  }
  return out;
}

int CheckAddVc(const FlagParser& p, const std::string& name, const ClusterSpec& base,
               const TraceTransforms& t) {
  for (const VirtualClusterSpec& v : base.virtual_clusters) {
    if (v.name == name) {
      return p.UsageError(
          absl::StrCat("--add-vc ", name, ": VC ", name, " is already in the config; use --vc"));
    }
  }
  bool has_jobs = false;
  for (const TenantSpec& tenant : t.tenants) {
    if (tenant.vc != name) continue;
    if (tenant.per_day == 0 && tenant.like.empty()) {
      return p.UsageError(absl::StrCat(
          "--add-vc ", name, ": --add-tenant '", name,
          "' gives a load relative to the VC's size, so its jobs would grow with every probe; "
          "give it in absolute terms: '",
          name, ":per-day=N[,sizes=1:90/8:10]' or '", name, ":like=VC,scale=K'"));
    }
    has_jobs = true;
  }
  for (const auto& [from, to] : t.rename_vcs) has_jobs |= to == name;
  if (!has_jobs) {
    return p.UsageError(absl::StrCat("--add-vc ", name, ": no job would be in VC ", name,
                                     "; give its workload with --add-tenant '", name,
                                     ":per-day=N' or '", name,
                                     ":like=VC,scale=K' (or --rename-vcs OLD=", name, ")"));
  }
  return -1;
}

int ParseVcCellTypes(const FlagParser& p, const std::string& cell_type,
                     const std::vector<std::string>& vcs, const std::string& vc,
                     std::string* default_type, std::map<std::string, std::string>* vc_types) {
  for (absl::string_view part : absl::StrSplit(cell_type, ',', absl::SkipWhitespace())) {
    const std::string item(absl::StripAsciiWhitespace(part));
    const size_t eq = item.find('=');
    if (eq == std::string::npos) {
      if (!default_type->empty()) {
        return p.UsageError(absl::StrCat("--cell-type: two default types, '", *default_type,
                                         "' and '", item, "' (give VC=TYPE for one VC)"));
      }
      *default_type = item;
      continue;
    }
    const std::string name = item.substr(0, eq), type = item.substr(eq + 1);
    if (name.empty() || type.empty()) {
      return p.UsageError(absl::StrCat("--cell-type: '", item, "' is not TYPE or VC=TYPE"));
    }
    if (std::find(vcs.begin(), vcs.end(), name) == vcs.end()) {
      return p.UsageError(absl::StrCat(
          "--cell-type: '", item, "' names VC '", name, "', which this plan does not size (",
          vc.empty() ? "not a VC of the config with cells" : absl::StrCat("--vc is ", vc), ")"));
    }
    (*vc_types)[name] = type;
  }
  return -1;
}

}  // namespace hived::sim

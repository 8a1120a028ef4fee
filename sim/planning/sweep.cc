#include "sim/planning/sweep.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "sim/cluster/spec_edit.h"
#include "sim/common/csv.h"
#include "sim/planning/sweep_runner.h"

namespace hived::sim {
namespace {

constexpr char kGridHeader[] = "hived-sim sweep grid v1";

const char* KindName(SweepAxis::Kind k) {
  switch (k) {
    case SweepAxis::Kind::kScale:
      return "scale";
    case SweepAxis::Kind::kScaleVc:
      return "scale-vc";
    case SweepAxis::Kind::kVcCells:
      return "vc-cells";
    case SweepAxis::Kind::kRacks:
      return "racks";
    case SweepAxis::Kind::kRunFlag:
      return "run-flag";
  }
  return "?";
}

std::optional<SweepAxis::Kind> KindFromName(const std::string& s) {
  for (SweepAxis::Kind k :
       {SweepAxis::Kind::kScale, SweepAxis::Kind::kScaleVc, SweepAxis::Kind::kVcCells,
        SweepAxis::Kind::kRacks, SweepAxis::Kind::kRunFlag}) {
    if (s == KindName(k)) return k;
  }
  return std::nullopt;
}

}  // namespace

int64_t SweepGrid::RunCount() const {
  int64_t n = 1;
  for (const SweepAxis& a : axes) {
    n = std::min<int64_t>(n * static_cast<int64_t>(a.values.size()), int64_t{1} << 62);
  }
  return n;
}

std::vector<size_t> SweepGrid::Coordinates(int64_t run) const {
  std::vector<size_t> out(axes.size());
  for (size_t i = axes.size(); i-- > 0;) {
    const auto n = static_cast<int64_t>(axes[i].values.size());
    out[i] = static_cast<size_t>(run % n);
    run /= n;
  }
  return out;
}

std::string SweepGrid::Describe(int64_t run) const {
  const std::vector<size_t> c = Coordinates(run);
  std::vector<std::string> parts;
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i].values.size() > 1)
      parts.push_back(absl::StrCat(axes[i].name, "=", axes[i].values[c[i]]));
  }
  return parts.empty() ? std::string("the only run") : absl::StrJoin(parts, " ");
}

std::vector<std::string> SweepGrid::AxisNames() const {
  std::vector<std::string> out;
  for (const SweepAxis& a : axes) out.push_back(a.name);
  return out;
}

std::string SweepGrid::Fingerprint() const {
  std::string out = absl::StrCat(kGridHeader, "\nconfig\t", config, "\ntrace\t", trace,
                                 "\nformat\t", format, "\nfixed");
  for (const std::string& a : fixed_args) absl::StrAppend(&out, "\t", a);
  out += "\n";
  for (const SweepAxis& a : axes) {
    absl::StrAppend(&out, "axis\t", a.name, "\t", KindName(a.kind), "\t", a.target, "\t",
                    a.unit_type);
    for (const std::string& v : a.values) absl::StrAppend(&out, "\t", v);
    out += "\n";
  }
  return out;
}

absl::StatusOr<SweepGrid> ParseGridFingerprint(const std::string& text, const std::string& file) {
  SweepGrid g;
  LineReader lines(text);
  std::string_view line;
  auto bad = [&](const char* what) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ":", lines.line_number(), ": not a sweep grid file (", what, ")"));
  };
  if (!lines.Next(&line) || line != kGridHeader) return bad("missing header");
  while (lines.Next(&line)) {
    if (IsBlank(line)) continue;
    std::vector<std::string> f = absl::StrSplit(Av(line), '\t');
    if (f[0] == "config" && f.size() == 2) {
      g.config = f[1];
    } else if (f[0] == "trace" && f.size() == 2) {
      g.trace = f[1];
    } else if (f[0] == "format" && f.size() == 2) {
      g.format = f[1];
    } else if (f[0] == "fixed") {
      g.fixed_args.assign(f.begin() + 1, f.end());
    } else if (f[0] == "axis" && f.size() >= 6) {
      SweepAxis a;
      a.name = f[1];
      const std::optional<SweepAxis::Kind> k = KindFromName(f[2]);
      if (!k) return bad("unknown axis kind");
      a.kind = *k;
      a.target = f[3];
      a.unit_type = f[4];
      a.values.assign(f.begin() + 5, f.end());
      g.axes.push_back(std::move(a));
    } else {
      return bad("unknown line");
    }
  }
  return g;
}

absl::StatusOr<ClusterSpec> BuildRunSpec(const SweepGrid& grid, const ClusterSpec& base,
                                         int64_t run) {
  ClusterSpec spec = base;
  const std::vector<size_t> c = grid.Coordinates(run);
  for (size_t i = 0; i < grid.axes.size(); ++i) {
    const SweepAxis& a = grid.axes[i];
    const std::string& v = a.values[c[i]];
    absl::Status s;
    switch (a.kind) {
      case SweepAxis::Kind::kScale:
      case SweepAxis::Kind::kScaleVc: {
        const std::optional<double> f = ParseDouble(v);
        s = f ? ScaleVcs(&spec, a.target, *f) : absl::InvalidArgumentError("not a number");
        break;
      }
      case SweepAxis::Kind::kVcCells: {
        const std::optional<int64_t> n = ParseInt(v);
        s = n ? SetVcUnits(&spec, a.target, a.unit_type, *n)
              : absl::InvalidArgumentError("not an integer");
        break;
      }
      case SweepAxis::Kind::kRacks: {
        const std::optional<int64_t> n = ParseInt(v);
        s = n ? AddTopCells(&spec, a.target, *n) : absl::InvalidArgumentError("not an integer");
        break;
      }
      case SweepAxis::Kind::kRunFlag:
        break;
    }
    if (!s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(a.name, "=", v, ": ", s.message()));
    }
  }
  if (absl::Status s = FitPhysicalCluster(&spec); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(grid.Describe(run), ": the edited config is not valid:\n", s.message()));
  }
  return spec;
}

std::vector<std::string> RunArgs(const SweepGrid& grid, int64_t run) {
  std::vector<std::string> out{"run", "--trace", grid.trace, "--format", grid.format, "--quiet"};
  out.insert(out.end(), grid.fixed_args.begin(), grid.fixed_args.end());
  const std::vector<size_t> c = grid.Coordinates(run);
  for (size_t i = 0; i < grid.axes.size(); ++i) {
    if (grid.axes[i].kind == SweepAxis::Kind::kRunFlag) {
      out.push_back(absl::StrCat("--", grid.axes[i].target, "=", grid.axes[i].values[c[i]]));
    }
  }
  return out;
}

std::optional<SweepShard> ParseSweepShard(const std::string& text) {
  const size_t slash = text.find('/');
  if (slash == std::string::npos) return std::nullopt;
  const std::optional<int64_t> i = ParseInt(text.substr(0, slash));
  const std::optional<int64_t> n = ParseInt(text.substr(slash + 1));
  if (!i || !n || *n < 1 || *i < 0 || *i >= *n || *n > 1'000'000) return std::nullopt;
  return SweepShard{*i, *n};
}

}  // namespace hived::sim

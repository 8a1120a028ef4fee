// A sweep's results: rows from each run's summary, sweep.csv and summary.csv written and read
// back, the per-group summary with confidence intervals, metric names resolved. Declared in
// sim/planning/sweep.h.
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
#include "sim/planning/sweep.h"
#include "sim/planning/sweep_runner.h"
namespace hived::sim {
namespace {

bool IsSeedAxis(const std::string& name) { return name == "seed"; }

// Metric columns: per-VC names (no ':') first, then "section:name", each sorted.
bool MetricBefore(const std::string& a, const std::string& b) {
  const bool sa = a.find(':') != std::string::npos;
  const bool sb = b.find(':') != std::string::npos;
  if (sa != sb) return !sa;
  return a < b;
}

// Flattens numbers and booleans. Objects nest with '.'; an array of objects is keyed by
// each element's first member ("slo": [{"seconds": 3600, "share": 0.9}] gives
// `slo[3600].share`), so per-threshold and per-class lists become columns too.
void Flatten(const nlohmann::ordered_json& value, const std::string& prefix,
             std::map<std::string, std::string>* out) {
  if (value.is_object()) {
    for (auto it = value.begin(); it != value.end(); ++it) {
      Flatten(it.value(), prefix.empty() ? it.key() : absl::StrCat(prefix, ".", it.key()), out);
    }
  } else if (value.is_array()) {
    for (const nlohmann::ordered_json& e : value) {
      if (!e.is_object() || e.empty()) continue;
      const nlohmann::ordered_json& first = e.begin().value();
      const std::string key = first.is_string() ? first.get<std::string>() : first.dump();
      nlohmann::ordered_json rest = e;
      rest.erase(e.begin().key());
      Flatten(rest, absl::StrCat(prefix, "[", key, "]"), out);
    }
  } else if (value.is_number()) {
    (*out)[prefix] = value.dump();
  } else if (value.is_boolean()) {
    (*out)[prefix] = value.get<bool>() ? "1" : "0";
  }
}

// Splits one CSV line with RFC 4180 quoting; false on an unterminated quote.
bool SplitQuoted(std::string_view line, std::vector<std::string>* fields) {
  fields->clear();
  std::string cur;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cur += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields->push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  fields->push_back(std::move(cur));
  return !quoted;
}

std::string Num(double v) { return absl::StrFormat("%.10g", v); }

}  // namespace

std::string CsvQuote(const std::string& field) {
  if (field.find_first_of(",\"\n\r") == std::string::npos) return field;
  std::string out = "\"";
  for (char c : field) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

absl::StatusOr<std::vector<SweepRow>> RowsFromSummary(const std::string& json,
                                                      const std::string& file, int64_t run,
                                                      const std::vector<std::string>& params) {
  nlohmann::ordered_json doc =
      nlohmann::ordered_json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object() || !doc.contains("overall") ||
      !doc["overall"].is_object() || !doc.contains("vcs") || !doc["vcs"].is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file, ": not a hived-sim summary (no 'overall' object and 'vcs' list)"));
  }
  std::map<std::string, std::string> sections;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (it.key() == "overall" || it.key() == "vcs" || it.key() == "run") continue;
    if (!it.value().is_object()) continue;
    std::map<std::string, std::string> flat;
    Flatten(it.value(), "", &flat);
    for (auto& [k, v] : flat) sections[absl::StrCat(it.key(), ":", k)] = std::move(v);
  }
  std::vector<SweepRow> rows;
  auto add = [&](const nlohmann::ordered_json& group, const std::string& fallback) {
    SweepRow row;
    row.run = run;
    row.params = params;
    row.vc = group.contains("name") && group["name"].is_string() ? group["name"].get<std::string>()
                                                                 : fallback;
    Flatten(group, "", &row.metrics);
    row.metrics.insert(sections.begin(), sections.end());
    rows.push_back(std::move(row));
  };
  add(doc["overall"], "all");
  for (const nlohmann::ordered_json& vc : doc["vcs"]) {
    if (vc.is_object()) add(vc, "?");
  }
  return rows;
}

std::string SweepCsv(const std::vector<std::string>& axis_names, std::vector<SweepRow> rows) {
  std::stable_sort(rows.begin(), rows.end(),
                   [](const SweepRow& a, const SweepRow& b) { return a.run < b.run; });
  std::set<std::string> names;
  for (const SweepRow& r : rows) {
    for (const auto& [k, v] : r.metrics) names.insert(k);
  }
  std::vector<std::string> metrics(names.begin(), names.end());
  std::sort(metrics.begin(), metrics.end(), MetricBefore);
  std::string out = "run";
  for (const std::string& a : axis_names) absl::StrAppend(&out, ",", CsvQuote(a));
  out += ",vc";
  for (const std::string& m : metrics) absl::StrAppend(&out, ",", CsvQuote(m));
  out += "\n";
  for (const SweepRow& r : rows) {
    absl::StrAppend(&out, r.run);
    for (const std::string& p : r.params) absl::StrAppend(&out, ",", CsvQuote(p));
    absl::StrAppend(&out, ",", CsvQuote(r.vc));
    for (const std::string& m : metrics) {
      auto it = r.metrics.find(m);
      absl::StrAppend(&out, ",", it == r.metrics.end() ? "" : CsvQuote(it->second));
    }
    out += "\n";
  }
  return out;
}

absl::StatusOr<std::vector<SweepRow>> ParseSweepCsv(const std::string& text,
                                                    const std::string& file,
                                                    const std::vector<std::string>& axis_names) {
  LineReader lines(text);
  std::string_view line;
  std::vector<std::string> header, f;
  auto bad = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat(file, ":", lines.line_number(), ": ", what));
  };
  if (!lines.Next(&line) || !SplitQuoted(line, &header)) return bad("missing or bad header");
  std::vector<std::string> expected{"run"};
  expected.insert(expected.end(), axis_names.begin(), axis_names.end());
  expected.push_back("vc");
  if (header.size() < expected.size() ||
      !std::equal(expected.begin(), expected.end(), header.begin())) {
    return bad(absl::StrCat("header does not start with the grid's columns: ",
                            absl::StrJoin(expected, ",")));
  }
  std::vector<SweepRow> rows;
  while (lines.Next(&line)) {
    if (IsBlank(line)) continue;
    if (!SplitQuoted(line, &f)) return bad("unterminated quote");
    if (f.size() != header.size()) {
      return bad(absl::StrCat(f.size(), " fields, the header has ", header.size()));
    }
    SweepRow r;
    const std::optional<int64_t> run = ParseInt(f[0]);
    if (!run || *run < 0) return bad(absl::StrCat("run '", f[0], "' is not a run number"));
    r.run = *run;
    r.params.assign(f.begin() + 1, f.begin() + 1 + static_cast<std::ptrdiff_t>(axis_names.size()));
    r.vc = f[expected.size() - 1];
    for (size_t i = expected.size(); i < f.size(); ++i) {
      if (!f[i].empty()) r.metrics[header[i]] = f[i];
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

double StudentT975(int64_t df) {
  static constexpr double kT[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                  2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                  2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                  2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  if (df < 1) return 0;
  if (df <= 30) return kT[df - 1];
  if (df < 40) return 2.042;  // the next tabulated df below: conservative
  if (df < 60) return 2.021;
  if (df < 120) return 2.000;
  return 1.980;
}

std::vector<SummaryGroup> SummarizeRows(const std::vector<std::string>& axis_names,
                                        const std::vector<SweepRow>& rows) {
  std::vector<SweepRow> sorted = rows;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const SweepRow& a, const SweepRow& b) { return a.run < b.run; });
  std::vector<SummaryGroup> groups;
  std::map<std::pair<std::vector<std::string>, std::string>, size_t> index;
  std::vector<std::map<std::string, std::vector<double>>> values;
  for (const SweepRow& r : sorted) {
    std::vector<std::string> key;
    for (size_t i = 0; i < axis_names.size() && i < r.params.size(); ++i) {
      if (!IsSeedAxis(axis_names[i])) key.push_back(r.params[i]);
    }
    auto [it, inserted] = index.try_emplace({key, r.vc}, groups.size());
    if (inserted) {
      groups.push_back({key, r.vc, {}});
      values.emplace_back();
    }
    for (const auto& [m, v] : r.metrics) {
      const std::optional<double> d = ParseDouble(v);
      if (d) values[it->second][m].push_back(*d);
    }
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    for (const auto& [m, xs] : values[g]) {
      MetricStats s;
      s.n = static_cast<int64_t>(xs.size());
      double sum = 0;
      for (double x : xs) sum += x;
      s.mean = sum / static_cast<double>(s.n);
      if (s.n >= 2) {
        double ss = 0;
        for (double x : xs) ss += (x - s.mean) * (x - s.mean);
        const double sd = std::sqrt(ss / static_cast<double>(s.n - 1));
        s.ci95 = StudentT975(s.n - 1) * sd / std::sqrt(static_cast<double>(s.n));
      }
      groups[g].metrics[m] = s;
    }
  }
  return groups;
}

std::string SummaryCsv(const std::vector<std::string>& axis_names,
                       const std::vector<SummaryGroup>& groups) {
  std::string out;
  for (const std::string& a : axis_names) {
    if (!IsSeedAxis(a)) absl::StrAppend(&out, CsvQuote(a), ",");
  }
  out += "vc,metric,n,mean,ci95\n";
  for (const SummaryGroup& g : groups) {
    std::vector<std::string> names;
    for (const auto& [m, s] : g.metrics) names.push_back(m);
    std::sort(names.begin(), names.end(), MetricBefore);
    for (const std::string& m : names) {
      const MetricStats& s = g.metrics.at(m);
      for (const std::string& p : g.params) absl::StrAppend(&out, CsvQuote(p), ",");
      absl::StrAppend(&out, CsvQuote(g.vc), ",", CsvQuote(m), ",", s.n, ",", Num(s.mean), ",",
                      s.ci95 ? Num(*s.ci95) : "", "\n");
    }
  }
  return out;
}

std::optional<std::string> ResolveMetric(const std::string& name,
                                         const std::vector<std::string>& available) {
  auto has = [&](const std::string& m) {
    return std::find(available.begin(), available.end(), m) != available.end();
  };
  if (has(name)) return name;
  static const std::map<std::string, std::vector<std::string>> kAliases = {
      {"p95_wait", {"queuing_delay.p95", "p95_queuing_delay"}},
      {"p99_wait", {"queuing_delay.p99"}},
      {"p50_wait", {"queuing_delay.p50"}},
      {"mean_wait", {"queuing_delay.mean", "mean_queuing_delay"}},
      {"max_wait", {"queuing_delay.max"}},
      {"mean_jct", {"jct.mean"}},
      {"p95_jct", {"jct.p95"}},
      {"anomaly", {"sharing_anomaly", "anomaly.mean", "sharing_anomaly.mean"}},
      {"slo_attainment",
       {"slo.attainment", "slo_attainment.fraction", "slo.attained_fraction", "slo_met"}},
      {"utilisation", {"cluster:utilisation"}},
      {"utilization", {"cluster:utilisation"}},
  };
  auto it = kAliases.find(name);
  if (it != kAliases.end()) {
    for (const std::string& m : it->second) {
      if (has(m)) return m;
    }
  }
  if (name == "slo_attainment") {  // the share of jobs meeting the one SLO threshold
    std::optional<std::string> only;
    for (const std::string& m : available) {
      if (absl::StartsWith(m, "slo[") && absl::EndsWith(m, "].share")) {
        if (only) return std::nullopt;  // several thresholds: name one, slo[S].share
        only = m;
      }
    }
    if (only) return only;
  }
  // A unique metric whose last component is the name (e.g. "attainment").
  std::optional<std::string> match;
  for (const std::string& m : available) {
    const size_t cut = m.find_last_of(".:");
    if (cut != std::string::npos && m.substr(cut + 1) == name) {
      if (match) return std::nullopt;
      match = m;
    }
  }
  return match;
}

std::string SummaryText(const std::vector<std::string>& axis_names,
                        const std::vector<SummaryGroup>& groups, bool all_vcs) {
  std::vector<std::string> names;
  for (const std::string& a : axis_names) {
    if (!IsSeedAxis(a)) names.push_back(a);
  }
  struct Column {
    const char* title;
    const char* metric;
    double scale;
  };
  const Column columns[] = {{"mean wait h", "mean_wait", 1 / 3600.0},
                            {"p95 wait h", "p95_wait", 1 / 3600.0},
                            {"anomaly h", "anomaly", 1 / 3600.0},
                            {"util %", "utilisation", 100.0}};
  std::vector<std::vector<std::string>> table;
  std::vector<std::string> head = names;
  head.push_back("vc");
  head.push_back("seeds");
  for (const Column& c : columns) head.push_back(c.title);
  table.push_back(head);
  for (const SummaryGroup& g : groups) {
    if (!all_vcs && g.vc != "all") continue;
    std::vector<std::string> row = g.params;
    row.push_back(g.vc);
    std::vector<std::string> available;
    int64_t seeds = 0;
    for (const auto& [m, s] : g.metrics) {
      available.push_back(m);
      seeds = std::max(seeds, s.n);
    }
    row.push_back(absl::StrCat(seeds));
    for (const Column& c : columns) {
      const std::optional<std::string> m = ResolveMetric(c.metric, available);
      if (!m) {
        row.push_back("-");
        continue;
      }
      const MetricStats& s = g.metrics.at(*m);
      std::string cell = absl::StrFormat("%.2f", s.mean * c.scale);
      if (s.ci95) absl::StrAppend(&cell, " ±", absl::StrFormat("%.2f", *s.ci95 * c.scale));
      row.push_back(cell);
    }
    table.push_back(std::move(row));
  }
  std::vector<size_t> width(head.size(), 0);
  for (const auto& row : table) {
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : table) {
    for (size_t i = 0; i < row.size(); ++i) {
      absl::StrAppend(&out, i ? "  " : "", row[i], std::string(width[i] - row[i].size(), ' '));
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "\n";
  }
  out +=
      "(mean across seeds ± 95% confidence half-width, Student t; anomaly = mean wait minus "
      "under private)\n";
  return out;
}

absl::Status WriteSweepResults(const std::string& dir, const SweepGrid& grid,
                               const std::vector<SweepRow>& rows) {
  const std::filesystem::path d(dir);
  const std::vector<std::string> axes = grid.AxisNames();
  const std::vector<SummaryGroup> groups = SummarizeRows(axes, rows);
  for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{
           {"grid.txt", grid.Fingerprint()},
           {"sweep.csv", SweepCsv(axes, rows)},
           {"summary.csv", SummaryCsv(axes, groups)},
           {"summary.txt", SummaryText(axes, groups, /*all_vcs=*/true)}}) {
    if (absl::Status s = WriteFileAtomically((d / name).string(), text); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace hived::sim

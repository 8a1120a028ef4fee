// hived-sim compare, N-way: labelled runs (--label per run, in order) or a sweep's CSV.
// Prints the key metrics side by side (cluster, then per VC) and, with --out, draws one
// clustered bar chart per key metric: a group per VC, a bar per run.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "hived/config.h"
#include "sim/cluster/spec_edit.h"
#include "sim/cluster/spec_info.h"
#include "sim/common/csv.h"
#include "sim/common/flags.h"
#include "sim/common/json.h"
#include "sim/planning/plan.h"
#include "sim/planning/plan_cost.h"
#include "sim/planning/planning_commands.h"
#include "sim/planning/sweep.h"
#include "sim/planning/sweep_runner.h"
#include "sim/trace/trace_reader.h"

namespace hived::sim {
namespace {

namespace fs = std::filesystem;

// One column of the comparison: a run, or a sweep point (mean over its seeds).
struct Series {
  std::string label;
  std::vector<std::string> vcs;                                 // "all" first
  std::map<std::string, std::map<std::string, double>> values;  // vc -> metric -> value
  std::map<std::string, std::map<std::string, double>> ci95;    // sweep points: half-widths
  std::string config;  // the config it ran on (for --price: each VC's GPU type), if known
};

int Fail(absl::string_view message) {
  std::fprintf(stderr, "hived-sim compare: %.*s\n", static_cast<int>(message.size()),
               message.data());
  return kExitFailed;
}

absl::StatusOr<Series> SeriesFromRun(const std::string& path, const std::string& label) {
  fs::path file(path);
  if (fs::is_directory(file)) file /= "summary.json";
  std::string text;
  if (absl::Status s = ReadFileToString(file.string(), &text); !s.ok()) return s;
  absl::StatusOr<std::vector<SweepRow>> rows = RowsFromSummary(text, file.string(), 0, {});
  if (!rows.ok()) return rows.status();
  Series s;
  s.label = label;
  if (absl::StatusOr<JsonValue> json = ParseJson(text, file.string()); json.ok()) {
    if (const JsonValue* run = json->Find("run")) s.config = run->StringOr("config", "");
  }
  for (const SweepRow& r : *rows) {
    s.vcs.push_back(r.vc);
    for (const auto& [m, v] : r.metrics) {
      if (const std::optional<double> d = ParseDouble(v)) s.values[r.vc][m] = *d;
    }
  }
  return s;
}

absl::StatusOr<std::vector<Series>> SeriesFromSweepCsv(const std::string& path) {
  std::string text;
  if (absl::Status s = ReadFileToString(path, &text); !s.ok()) return s;
  const std::string header = text.substr(0, text.find('\n'));
  const std::vector<std::string> cols = absl::StrSplit(header, ',');
  const auto vc_col = std::find(cols.begin(), cols.end(), "vc");
  if (cols.empty() || cols[0] != "run" || vc_col == cols.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ":1: not a sweep CSV (header must start run,...,vc)"));
  }
  const std::vector<std::string> axes(cols.begin() + 1, vc_col);
  absl::StatusOr<std::vector<SweepRow>> rows = ParseSweepCsv(text, path, axes);
  if (!rows.ok()) return rows.status();
  const std::vector<SummaryGroup> groups = SummarizeRows(axes, *rows);
  // Label by the axes (seed excluded) that take more than one value.
  std::vector<std::string> names;
  for (const std::string& a : axes) {
    if (a != "seed") names.push_back(a);
  }
  std::vector<std::set<std::string>> distinct(names.size());
  for (const SummaryGroup& g : groups) {
    for (size_t i = 0; i < g.params.size() && i < names.size(); ++i)
      distinct[i].insert(g.params[i]);
  }
  std::vector<Series> out;
  std::map<std::vector<std::string>, size_t> index;
  for (const SummaryGroup& g : groups) {
    auto [it, inserted] = index.try_emplace(g.params, out.size());
    if (inserted) {
      std::vector<std::string> parts;
      for (size_t i = 0; i < g.params.size() && i < names.size(); ++i) {
        if (distinct[i].size() > 1) parts.push_back(absl::StrCat(names[i], "=", g.params[i]));
      }
      out.push_back(
          {parts.empty() ? std::string("sweep") : absl::StrJoin(parts, " "), {}, {}, {}, {}});
    }
    Series& s = out[it->second];
    s.vcs.push_back(g.vc);
    for (const auto& [m, st] : g.metrics) {
      s.values[g.vc][m] = st.mean;
      if (st.ci95) s.ci95[g.vc][m] = *st.ci95;
    }
  }
  return out;
}

std::string ReadFirstLine(const std::string& path) {
  std::string text;
  if (!ReadFileToString(path, &text).ok()) return "";
  return text.substr(0, text.find('\n'));
}

std::optional<double> Value(const Series& s, const std::string& vc, const std::string& metric) {
  auto v = s.values.find(vc);
  if (v == s.values.end()) return std::nullopt;
  std::vector<std::string> names;
  for (const auto& [m, x] : v->second) names.push_back(m);
  const std::optional<std::string> m = ResolveMetric(metric, names);
  if (!m) return std::nullopt;
  return v->second.at(*m);
}

struct KeyMetric {
  const char* title;
  const char* metric;
  double scale;
  const char* chart;  // file name of its chart, or null
};
constexpr KeyMetric kKeyMetrics[] = {
    {"mean wait (h)", "mean_wait", 1 / 3600.0, "mean_wait_by_vc"},
    {"p95 wait (h)", "p95_wait", 1 / 3600.0, "p95_wait_by_vc"},
    {"anomaly (h)", "anomaly", 1 / 3600.0, "anomaly_by_vc"},
    {"utilisation (%)", "utilisation", 100, nullptr},
    {"completed", "completed", 1, nullptr},
    {"rejected", "rejected", 1, nullptr},
    {"preemptions", "preemptions", 1, nullptr},
};

bool IsTimeName(const std::string& m) {
  for (const char* w : {"wait", "delay", "jct", "anomaly"}) {
    if (m.find(w) != std::string::npos) return true;
  }
  return false;
}

std::string Cell(const std::optional<double>& v, double scale) {
  return v ? absl::StrFormat("%.2f", *v * scale) : "-";
}

std::string Table(const std::vector<Series>& series) {
  std::string out;
  for (size_t i = 0; i < series.size(); ++i) {
    out += absl::StrFormat("[%d] %s\n", i + 1, series[i].label);
  }
  out += absl::StrFormat("\n%-18s", "all");
  for (size_t i = 0; i < series.size(); ++i)
    out += absl::StrFormat(" %10s", absl::StrCat("[", i + 1, "]"));
  out += "\n";
  for (const KeyMetric& k : kKeyMetrics) {
    out += absl::StrFormat("%-18s", k.title);
    for (const Series& s : series)
      out += absl::StrFormat(" %10s", Cell(Value(s, "all", k.metric), k.scale));
    out += "\n";
  }
  std::vector<std::string> vcs;
  for (const Series& s : series) {
    for (const std::string& vc : s.vcs) {
      if (vc != "all" && std::find(vcs.begin(), vcs.end(), vc) == vcs.end()) vcs.push_back(vc);
    }
  }
  for (size_t k = 0; k < 3; ++k) {
    out += absl::StrFormat("\n%-18s", absl::StrCat("VC ", kKeyMetrics[k].title));
    for (size_t i = 0; i < series.size(); ++i)
      out += absl::StrFormat(" %10s", absl::StrCat("[", i + 1, "]"));
    out += "\n";
    for (const std::string& vc : vcs) {
      out += absl::StrFormat("%-18s", vc.substr(0, 18));
      for (const Series& s : series) {
        out += absl::StrFormat(" %10s",
                               Cell(Value(s, vc, kKeyMetrics[k].metric), kKeyMetrics[k].scale));
      }
      out += "\n";
    }
  }
  return out;
}

absl::Status Charts(const std::string& dir, const std::vector<Series>& series) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", dir, ": ", ec.message()));
  std::vector<std::string> vcs;
  for (const Series& s : series) {
    for (const std::string& vc : s.vcs) {
      if (std::find(vcs.begin(), vcs.end(), vc) == vcs.end()) vcs.push_back(vc);
    }
  }
  for (const KeyMetric& k : kKeyMetrics) {
    if (k.chart == nullptr) continue;
    std::string data = "vc";
    for (const Series& s : series) absl::StrAppend(&data, " ", GnuplotQuote(s.label));
    data += "\n";
    // A VC with a value missing in some series is marked '*' (its bar is left out); zeros
    // are a black line on the axis. When the values span more than 100x (one large VC
    // flattens the rest) and none is negative, the axis is logarithmic, zeros drawn as short
    // bars at the floor (the smallest positive value / 10; the axis starts at half of it).
    bool any = false, missing = false, negative = false;
    double lo = 0, hi = 0;
    for (const std::string& vc : vcs) {
      for (const Series& s : series) {
        if (const std::optional<double> v = Value(s, vc, k.metric)) {
          const double x = *v * k.scale;
          negative |= x < 0;
          if (x > 0) lo = lo == 0 ? x : std::min(lo, x);
          hi = std::max(hi, x);
        }
      }
    }
    const bool log_axis = !negative && lo > 0 && hi > 100 * lo;
    const double floor = lo / 10;
    for (const std::string& vc : vcs) {
      std::string row;
      bool gap = false;
      for (const Series& s : series) {
        const std::optional<double> v = Value(s, vc, k.metric);
        any |= v.has_value();
        gap |= !v.has_value();
        const double x = v ? *v * k.scale : 0;
        row += v ? absl::StrFormat(" %.6g", log_axis ? std::max(x, floor) : x) : " -";
      }
      missing |= gap;
      data += GnuplotQuote(gap ? vc + " *" : vc) + row + "\n";
    }
    const std::string name = k.chart;
    if (!any) {  // e.g. the anomaly of runs without the private baseline
      std::fprintf(stderr, "hived-sim compare: no %s in these runs: %s.png not drawn\n", k.metric,
                   name.c_str());
      continue;
    }
    // The notes go in a second title line: nothing else is free on a narrow chart.
    std::string title = k.title;
    if (missing || log_axis) {
      absl::StrAppend(
          &title, "\\n", missing ? "* = no value in some runs (no bar)" : "",
          missing && log_axis ? "; " : "",
          log_axis ? "log scale (one VC dwarfs the rest); zeros drawn at the floor" : "");
    }
    const std::string script = absl::StrCat(
        "set terminal pngcairo size ",
        std::clamp<size_t>(18 * vcs.size() * series.size() + 240, 800, 1600), ",560\nset output ",
        GnuplotQuote(name + ".png"), "\nset title ", GnuplotQuote(title),
        "\nset style data histogram\nset style histogram clustered gap 1\nset style fill solid "
        "0.8 border -1\nset xtics rotate by -45 noenhanced\nset key noenhanced outside "
        "bottom center horizontal\nset grid y\nset ylabel ",
        GnuplotQuote(k.title), "\nset xzeroaxis lt -1\nset bmargin 8\nset datafile missing '-'\n",
        log_axis
            ? absl::StrCat("set logscale y\nset format y '%g'\nset yrange [", floor / 2, ":*]\n")
            : "",
        "plot for [i=2:", series.size() + 1, "] ", GnuplotQuote(name + ".dat"),
        " using i:xtic(1) title columnheader(i)\n");
    if (absl::Status s = RenderGnuplot(dir, name, data, script); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// Which series meet `target` for every VC, cheapest (fewest reserved GPUs) first; "surely"
// when the 95% interval of every VC's value is on the right side of the target.
std::string TargetTable(
    const std::vector<Series>& series, const PlanTarget& target,
    const std::vector<std::pair<std::string, double>>& prices,
    const std::vector<std::map<std::string, std::map<std::string, int64_t>>>& gpus_by_type) {
  struct Point {
    const Series* s;
    double gpus;
    double usd = 0;
    bool priced = true;
    std::string worst_vc;
    double worst = 0, worst_ci = 0;
    bool meets = true, surely = true;
    bool all_ci = true, spread = false;  // every VC has an interval; some interval is > 0
  };
  const bool upper = target.op == PlanTarget::Op::kLe || target.op == PlanTarget::Op::kLt;
  std::vector<Point> points;
  for (const Series& s : series) {
    Point p{&s, 0, 0, true, "", 0, 0, true, true, true, false};
    bool any = false;
    const size_t si = static_cast<size_t>(&s - series.data());
    for (const std::string& vc : s.vcs) {
      if (vc == "all") continue;
      const double gpus = Value(s, vc, "reserved_gpus").value_or(0);
      p.gpus += gpus;
      if (!prices.empty()) {
        if (si < gpus_by_type.size()) {
          if (auto t = gpus_by_type[si].find(vc); t != gpus_by_type[si].end()) {
            for (const auto& [leaf, n] : t->second) {
              std::optional<double> price;
              for (const auto& [type, usd] : prices) {
                if (type == leaf) price = usd;
              }
              if (price) {
                p.usd += static_cast<double>(n) * *price;
              } else if (n > 0) {
                p.priced = false;
              }
            }
          }
        }
      }
      auto vals = s.values.find(vc);
      std::vector<std::string> names;
      for (const auto& [m, v] : vals->second) names.push_back(m);
      const std::optional<std::string> m = ResolveMetric(target.metric, names);
      if (!m) continue;
      const double v = vals->second.at(*m);
      double ci = 0;
      if (auto c = s.ci95.find(vc); c != s.ci95.end() && c->second.count(*m)) {
        ci = c->second.at(*m);
        p.spread |= ci > 0;
      } else {
        p.all_ci = false;
      }
      const double rejected = Value(s, vc, "rejected").value_or(0);
      const bool meets = target.Meets(v) && rejected == 0;
      p.meets &= meets;
      p.surely &= meets && target.Meets(upper ? v + ci : v - ci);
      if (!any || (upper ? v > p.worst : v < p.worst)) {
        p.worst_vc = vc;
        p.worst = v;
        p.worst_ci = ci;
      }
      any = true;
    }
    if (!any) p.meets = p.surely = false;
    // "95% sure" needs intervals (two seeds or more) that are not all zero: identical seeds
    // say nothing about how sure the answer is (sweep --bootstrap resamples the trace).
    if (!p.all_ci || !p.spread) p.surely = false;
    points.push_back(p);
  }
  const bool by_money = !prices.empty();
  std::stable_sort(points.begin(), points.end(), [&](const Point& a, const Point& b) {
    if (by_money && a.priced != b.priced) return a.priced;
    return by_money ? a.usd < b.usd : a.gpus < b.gpus;
  });
  std::string out = absl::StrFormat("\ntarget %s for every VC, cheapest first%s:\n", target.text,
                                    by_money ? " (by USD per hour of the reserved GPUs)" : "");
  out += absl::StrFormat("%-40s %9s %s%-24s %s\n", "point", "reserved",
                         by_money ? "    USD/h " : "", "worst VC (mean ±95%)", "meets");
  const Point* best = nullptr;
  const Point* sure = nullptr;  // the cheapest meeting it with 95% confidence
  bool no_spread = false, any_spread = false;
  for (const Point& p : points) {
    const std::string worst = absl::StrFormat("%s %.3g±%.2g", p.worst_vc,
                                              p.worst / (IsTimeName(target.metric) ? 3600 : 1),
                                              p.worst_ci / (IsTimeName(target.metric) ? 3600 : 1));
    const std::string usd = !by_money  ? ""
                            : p.priced ? absl::StrFormat("%9.2f ", p.usd)
                                       : absl::StrFormat("%9s ", "no price");
    out += absl::StrFormat("%-40s %9.0f %s%-24s %s\n", p.s->label.substr(0, 40), p.gpus, usd, worst,
                           p.surely               ? "yes (95% sure)"
                           : !p.meets             ? "no"
                           : p.all_ci && p.spread ? "yes (on the mean, not 95% sure)"
                           : p.all_ci             ? "yes (seeds change nothing: no interval)"
                                                  : "yes (on the mean)");
    no_spread |= p.meets && p.all_ci && !p.spread;
    any_spread |= p.all_ci && p.spread;
    if (best == nullptr && p.meets) best = &p;
    if (sure == nullptr && p.surely) sure = &p;
  }
  const auto name = [&](const Point& p) {
    return absl::StrFormat("%s (%.0f reserved GPUs%s)", p.s->label, p.gpus,
                           by_money && p.priced ? absl::StrFormat(", $%.2f/h", p.usd) : "");
  };
  out += best ? absl::StrCat("cheapest meeting the target: ", name(*best), "\n")
              : "no point of the sweep meets the target for every VC\n";
  // Met on the mean only, where there are intervals: which point meets it with 95% confidence.
  if (best != nullptr && !best->surely && any_spread) {
    out += sure ? absl::StrCat("cheapest meeting it with 95% confidence: ", name(*sure), "\n")
                : "no point meets it with 95% confidence\n";
  }
  if (no_spread) {
    out +=
        "(seeds change nothing here, so the ±0 is no confidence: rerun the sweep with "
        "--bootstrap days to resample the trace per seed)\n";
  }
  if (IsTimeName(target.metric)) out += "(times in hours)\n";
  return out;
}

}  // namespace

bool WantsMultiCompare(int argc, char** argv) {
  int positional = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") return false;
    if (a == "--label" || a == "--out" || a == "--target" || absl::StartsWith(a, "--label=") ||
        absl::StartsWith(a, "--out=") || absl::EndsWith(a, ".csv")) {
      return true;
    }
    if (!absl::StartsWith(a, "--")) ++positional;
  }
  return positional != 2;
}

int CompareMultiCommand(int argc, char** argv) {
  // --label may repeat: collect them in order before the flag parser sees the rest.
  std::vector<std::string> labels, rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--label" && i + 1 < argc) {
      labels.push_back(argv[++i]);
    } else if (absl::StartsWith(a, "--label=")) {
      labels.push_back(a.substr(8));
    } else {
      rest.push_back(a);
    }
  }
  std::vector<char*> ptrs;
  for (std::string& a : rest) ptrs.push_back(a.data());
  std::string out;
  FlagParser p("hived-sim compare", "[--label L] RUN... | [--label L] SWEEP.csv...  [--out DIR]",
               "Compares runs side by side: two or more run folders (or summary.json files),\n"
               "each named by the --label given before it in order (default: its policy and\n"
               "path), or sweeps' sweep.csv (one column per grid point, mean over seeds;\n"
               "several sweeps' points side by side, each labelled by its sweep's --label).\n"
               "Prints the key metrics overall and per VC; with --out draws\n"
               "mean_wait_by_vc.png, p95_wait_by_vc.png and anomaly_by_vc.png.");
  p.String("out", &out, "DIR", "draw the comparison charts into DIR (needs gnuplot)");
  std::string target_text;
  p.String("target", &target_text, "METRIC<=VALUE",
           "which runs meet the target for every VC, cheapest first (e.g. p95_wait<=1h)");
  std::string price_text;
  p.String("price", &price_text, "TYPE=USD,...",
           "with --target: rank by USD per hour of the reserved GPUs (USD per GPU-hour of each "
           "leaf type; each VC's type from the config its run used)");
  std::string label_help;
  p.String("label", &label_help, "L", "label of the next run (repeat per run)");
  std::vector<std::string> inputs;
  if (int code = p.Parse(static_cast<int>(ptrs.size()), ptrs.data(), &inputs); code >= 0) {
    return code;
  }
  if (inputs.empty()) return p.UsageError("needs runs or a sweep CSV");
  std::optional<PlanTarget> target;
  if (!target_text.empty()) {
    absl::StatusOr<PlanTarget> t = ParsePlanTarget(target_text);
    if (!t.ok()) return p.UsageError(t.status().message());
    target = *t;
  }
  absl::StatusOr<std::vector<std::pair<std::string, double>>> prices = ParsePrices(price_text);
  if (!prices.ok()) return p.UsageError(prices.status().message());
  if (!prices->empty() && !target)
    return p.UsageError("--price ranks the --target table: give --target");
  if (labels.size() > inputs.size()) {
    return p.UsageError(absl::StrCat(labels.size(), " --label for ", inputs.size(), " runs"));
  }
  // Sweep CSVs (one, or several side by side, e.g. a sweep per GPU type of a moved VC) or
  // runs; each CSV's points are priced on its own base config (its first run's).
  const bool csvs = absl::EndsWith(inputs[0], ".csv");
  std::vector<Series> series;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (absl::EndsWith(inputs[i], ".csv") != csvs) {
      return p.UsageError("compare sweep CSVs with sweep CSVs and runs with runs, not both");
    }
    const std::string label = i < labels.size() ? labels[i] : inputs[i];
    if (csvs) {
      absl::StatusOr<std::vector<Series>> s = SeriesFromSweepCsv(inputs[i]);
      if (!s.ok()) return Fail(s.status().message());
      if (!prices->empty() && absl::StrContains(ReadFirstLine(inputs[i]), "move-vc")) {
        return p.UsageError(
            absl::StrCat("--price: ", inputs[i],
                         " moves VCs between types per point (a move-vc axis); "
                         "compare its runs by folder, or a sweep per type, instead"));
      }
      const std::string config =
          (fs::path(inputs[i]).parent_path() / "runs" / "000000" / "config.yaml").string();
      for (Series& point : *s) {
        point.config = config;
        // Several CSVs (or a --label): each point says which sweep it is from.
        if (inputs.size() > 1 || i < labels.size()) {
          point.label = point.label == "sweep" ? label : absl::StrCat(label, ": ", point.label);
        }
        series.push_back(std::move(point));
      }
      continue;
    }
    absl::StatusOr<Series> s = SeriesFromRun(inputs[i], label);
    if (!s.ok()) return Fail(s.status().message());
    series.push_back(std::move(*s));
  }
  std::fputs(Table(series).c_str(), stdout);
  std::vector<std::map<std::string, std::map<std::string, int64_t>>> gpus_by_type;
  if (!prices->empty()) {
    for (Series& s : series) {
      absl::StatusOr<std::map<std::string, std::map<std::string, int64_t>>> t =
          VcGpusByType(s.config);
      if (!t.ok()) return Fail(t.status().message());
      gpus_by_type.push_back(std::move(*t));
    }
  }
  if (target) std::fputs(TargetTable(series, *target, *prices, gpus_by_type).c_str(), stdout);
  if (!out.empty()) {
    if (absl::Status s = Charts(out, series); !s.ok()) return Fail(s.message());
    std::fprintf(stderr, "wrote %s/{mean_wait,p95_wait,anomaly}_by_vc.png\n", out.c_str());
  }
  return kExitOk;
}

}  // namespace hived::sim

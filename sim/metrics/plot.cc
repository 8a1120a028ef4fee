#include "sim/metrics/plot.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "sim/common/csv.h"
#include "sim/common/json.h"

namespace hived::sim {
namespace {

constexpr char kTerminal[] = "set terminal pngcairo size 1100,620 noenhanced font 'sans,11'\n";
// VCs per panel of the delay CDF; more VCs get more panels (small multiples), never dropped.
constexpr size_t kCdfVcsPerPanel = 8;
// Zero bars are a black line on a grey dashed zero axis; missing values ('-') leave a gap.
constexpr char kBarStyle[] =
    "set style data histograms\nset style histogram clustered gap 1\n"
    "set style fill solid 0.8 border lt -1\nset boxwidth 0.9\nset grid ytics\n"
    "set xtics rotate by -45\nset xlabel 'virtual cluster'\n"
    "set xzeroaxis lt 1 lc rgb 'grey50' dt 2 lw 1\nset datafile missing '-'\n"
    "set key outside right top vertical\n"
    "set label 1 'a 0 is a black line on the axis; a gap is missing data (no baseline)' "
    "at screen 0.99,0.02 right font ',9'\n";

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

absl::Status WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path.string()));
  return absl::OkStatus();
}

absl::Status Render(const std::filesystem::path& dir, const std::string& name,
                    const std::string& data, const std::string& script) {
  if (absl::Status s = WriteFile(dir / (name + ".dat"), data); !s.ok()) return s;
  if (absl::Status s = WriteFile(dir / (name + ".gp"), script); !s.ok()) return s;
  const std::string cmd = absl::StrCat("cd ", ShellQuote(dir.string()), " && gnuplot ",
                                       ShellQuote(name + ".gp"), " 2>", ShellQuote(name + ".log"));
  if (std::system(cmd.c_str()) != 0) {
    // The log is in the staged folder, which a failed command removes: quote it here.
    std::ifstream log(dir / (name + ".log"), std::ios::binary);
    std::string text(2000, '\0');
    log.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<size_t>(std::max<std::streamsize>(0, log.gcount())));
    return absl::InternalError(
        absl::StrCat("gnuplot failed on ", name, ".gp", text.empty() ? "" : ":\n", text));
  }
  std::error_code ec;
  std::filesystem::remove(dir / (name + ".log"), ec);
  return absl::OkStatus();
}

std::string Days(Time t) { return FormatFixed(static_cast<double>(t) / 86400.0, 4); }

// Quote a label for gnuplot data files.
std::string Label(std::string_view s) {
  std::string out = "\"";
  for (char c : s) out += c == '"' ? '\'' : c;
  return out + "\"";
}

}  // namespace

bool GnuplotAvailable() { return std::system("gnuplot --version >/dev/null 2>&1") == 0; }

absl::Status PlotRun(const std::string& dir_name, const Summary& summary,
                     const EngineResult& result, PlotDelays* plot_delays, const SpecInfo& info,
                     const EngineResult* baseline) {
  if (!GnuplotAvailable()) {
    return absl::FailedPreconditionError("--plot needs gnuplot, which is not installed");
  }
  const std::filesystem::path dir(dir_name);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", dir_name, ": ", ec.message()));
  const std::string policy = summary.info.policy;

  // 1. Utilisation over time.
  {
    std::string data = "# days utilisation fragmentation (fractions of all GPUs)\n";
    const double total = static_cast<double>(std::max<int64_t>(1, result.total_gpus));
    for (const TimelineRow& r : result.timeline) {
      absl::StrAppend(&data, Days(r.time), " ",
                      FormatFixed(static_cast<double>(r.used_gpus) / total, 4), " ",
                      FormatFixed(static_cast<double>(r.fragmented_free_gpus) / total, 4), "\n");
    }
    std::string plot = absl::StrCat(
        "plot 'utilisation.dat' index 0 using 1:($2*100) with lines lw 2 title '", policy,
        ": utilisation', '' index 0 using 1:($3*100) with lines "
        "lw 1 title '",
        policy, ": fragmented free GPUs'");
    if (baseline) {
      data += "\n\n# private baseline\n";
      const double btotal = static_cast<double>(std::max<int64_t>(1, baseline->total_gpus));
      for (const TimelineRow& r : baseline->timeline) {
        absl::StrAppend(&data, Days(r.time), " ",
                        FormatFixed(static_cast<double>(r.used_gpus) / btotal, 4), " ",
                        FormatFixed(static_cast<double>(r.fragmented_free_gpus) / btotal, 4), "\n");
      }
      plot += ", '' index 1 using 1:($2*100) with lines lw 1 dt 2 title 'private: utilisation'";
    }
    const std::string script = absl::StrCat(
        kTerminal, "set output 'utilisation.png'\n", "set title 'GPU utilisation over time (",
        policy, ", ", result.total_gpus, " GPUs)'\n",
        "set xlabel 'time since first submission (days)'\nset ylabel '% of GPUs'\n",
        "set yrange [0:105]\nset grid\nset key outside bottom center horizontal\n", plot, "\n");
    if (absl::Status s = Render(dir, "utilisation", data, script); !s.ok()) return s;
  }

  // 2. Queuing-delay CDF of every VC, busiest first, in panels of kCdfVcsPerPanel.
  {
    std::vector<std::vector<int64_t>>& delays = plot_delays->by_vc();
    std::vector<int32_t> order;
    for (int32_t v = 0; v < info.vc_count(); ++v) {
      if (!delays[static_cast<size_t>(v)].empty()) order.push_back(v);
    }
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
      return delays[static_cast<size_t>(a)].size() > delays[static_cast<size_t>(b)].size();
    });
    std::string data;
    std::string plot;
    int index = 0;
    const size_t panels =
        std::max<size_t>(1, (order.size() + kCdfVcsPerPanel - 1) / kCdfVcsPerPanel);
    for (int32_t v : order) {
      if (index > 0 && static_cast<size_t>(index) % kCdfVcsPerPanel == 0) {
        absl::StrAppend(&plot, "\nset title 'VCs ", index + 1, "-",
                        std::min(order.size(), static_cast<size_t>(index) + kCdfVcsPerPanel),
                        "'\n");
        plot += "plot ";
      } else if (index > 0) {
        plot += ", ";
      } else {
        plot += "plot ";
      }
      std::vector<int64_t>& d = delays[static_cast<size_t>(v)];
      std::sort(d.begin(), d.end());
      absl::StrAppend(&data, "# ", info.vc_name(v), " (", d.size(), " jobs)\n");
      // At most ~400 points per VC: the CDF at evenly spaced ranks, plus the maximum.
      const size_t step = std::max<size_t>(1, d.size() / 400);
      for (size_t i = 0; i < d.size(); i += step) {
        absl::StrAppend(
            &data, FormatFixed(static_cast<double>(std::max<int64_t>(d[i], 1)) / 3600.0, 5), " ",
            FormatFixed(static_cast<double>(i + 1) / static_cast<double>(d.size()), 5), "\n");
      }
      absl::StrAppend(&data,
                      FormatFixed(static_cast<double>(std::max<int64_t>(d.back(), 1)) / 3600.0, 5),
                      " 1.00000\n\n\n");
      absl::StrAppend(&plot, "'delay_cdf.dat' index ", index, " using 1:2 with steps lw 2 title ",
                      Label(absl::StrCat(info.vc_name(v), " (", d.size(), " jobs)")));
      ++index;
    }
    if (index == 0) {
      data = "0.001 1\n";
      plot = "plot 'delay_cdf.dat' using 1:2 with points title 'no job started'";
    }
    const size_t rows = (panels + 1) / 2;
    const std::string script = absl::StrCat(
        "set terminal pngcairo size ", panels > 1 ? 1400 : 1100, ",", 520 * rows,
        " noenhanced font 'sans,10'\n", "set output 'delay_cdf.png'\n",
        panels > 1 ? absl::StrCat("set multiplot layout ", rows, ",2 title 'Queuing delay CDF ",
                                  "per VC (", policy, "; started jobs; under 1 s drawn at 1 s)'\n",
                                  "set title 'VCs 1-", kCdfVcsPerPanel, "'\n")
                   : absl::StrCat("set title 'Queuing delay CDF per VC (", policy,
                                  "; started jobs; under 1 s drawn at 1 s)'\n"),
        "set xlabel 'queuing delay (hours, log scale)'\nset ylabel 'fraction of started jobs'\n",
        "set logscale x\nset yrange [0:1.02]\nset grid\nset key outside right top vertical\n", plot,
        "\n", panels > 1 ? "unset multiplot\n" : "");
    if (absl::Status s = Render(dir, "delay_cdf", data, script); !s.ok()) return s;
  }

  // 3. Sharing anomaly per VC.
  {
    std::string data = "# vc anomaly_hours mean_delay_hours private_mean_delay_hours\n";
    bool any = false;
    for (const GroupSummary& g : summary.vcs) {
      if (g.sharing_anomaly) any = true;
      auto hours = [](const std::optional<double>& v) {
        return v ? FormatFixed(*v / 3600.0, 4) : std::string("-");
      };
      absl::StrAppend(&data, Label(g.name), " ", hours(g.sharing_anomaly), " ",
                      FormatFixed(g.queuing_delay.mean / 3600.0, 4), " ",
                      hours(g.baseline_mean_queuing_delay), "\n");
    }
    if (!any && summary.vcs.empty()) data += "\"(no VC)\" - - -\n";
    const std::string script = absl::StrCat(
        kTerminal, "set output 'anomaly.png'\n", "set title \"Sharing anomaly per VC under ",
        policy,
        "\\nmean queuing delay minus under private (> 0 = waits longer than in a private "
        "cluster)\"\n",
        kBarStyle, "set ylabel 'hours'\n", "plot 'anomaly.dat' using 2:xtic(1) title 'anomaly (",
        policy, ")', '' using 3 title 'mean delay (", policy,
        ")', '' using 4 title 'mean delay (private)'\n");
    if (absl::Status s = Render(dir, "anomaly", data, script); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status PlotRuns(const std::string& dir_name, const std::vector<PlotInput>& runs) {
  if (!GnuplotAvailable()) {
    return absl::FailedPreconditionError("plot needs gnuplot, which is not installed");
  }
  const std::filesystem::path dir(dir_name);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("cannot create ", dir_name, ": ", ec.message()));
  // VC names in the order of the first run.
  std::vector<std::string> vcs;
  for (const PlotInput& r : runs) {
    for (const GroupSummary& g : r.summary.vcs) {
      if (std::find(vcs.begin(), vcs.end(), g.name) == vcs.end()) vcs.push_back(g.name);
    }
  }
  auto find = [](const Summary& s, const std::string& vc) -> const GroupSummary* {
    for (const GroupSummary& g : s.vcs) {
      if (g.name == vc) return &g;
    }
    return nullptr;
  };
  // Anomaly and mean delay per VC per run.
  std::string anomaly = "vc";
  std::string delay = "vc";
  for (const PlotInput& r : runs) {
    absl::StrAppend(&anomaly, " ", Label(r.label));
    absl::StrAppend(&delay, " ", Label(r.label));
  }
  absl::StrAppend(&delay, " \"private\"\n");
  anomaly += "\n";
  for (const std::string& vc : vcs) {
    absl::StrAppend(&anomaly, Label(vc));
    absl::StrAppend(&delay, Label(vc));
    std::optional<double> base;
    for (const PlotInput& r : runs) {
      const GroupSummary* g = find(r.summary, vc);
      absl::StrAppend(&anomaly, " ",
                      g && g->sharing_anomaly ? FormatFixed(*g->sharing_anomaly / 3600.0, 4) : "-");
      absl::StrAppend(&delay, " ", g ? FormatFixed(g->queuing_delay.mean / 3600.0, 4) : "-");
      if (g && g->baseline_mean_queuing_delay && !base) base = *g->baseline_mean_queuing_delay;
    }
    absl::StrAppend(&delay, " ", base ? FormatFixed(*base / 3600.0, 4) : "-", "\n");
    anomaly += "\n";
  }
  const std::string common = absl::StrCat(kBarStyle, "set key autotitle columnhead\n");
  {
    // Runs without a private baseline (--baseline none) have no anomaly: gnuplot cannot
    // autoscale a chart without points, so give it ranges and say why it is empty.
    const bool any = std::any_of(runs.begin(), runs.end(), [](const PlotInput& r) {
      return std::any_of(r.summary.vcs.begin(), r.summary.vcs.end(),
                         [](const GroupSummary& g) { return g.sharing_anomaly.has_value(); });
    });
    const std::string empty =
        any ? ""
            : absl::StrCat(
                  "set xrange [-0.5:",
                  FormatFixed(static_cast<double>(std::max<size_t>(1, vcs.size())) - 0.5, 1),
                  "]\nset yrange [-1:1]\nset label 2 'no anomaly to draw: no run has a "
                  "private baseline (run --baseline private)' at graph 0.5,0.5 center\n");
    const std::string script = absl::StrCat(
        kTerminal, "set output 'anomaly_by_policy.png'\n",
        "set title 'Sharing anomaly per VC: mean queuing delay minus under private (> 0 = "
        "waits longer than in a private cluster)'\n",
        common, empty, "set ylabel 'anomaly (hours)'\n", "plot for [i=2:", runs.size() + 1,
        "] 'anomaly_by_policy.dat' using i:xtic(1)\n");
    if (absl::Status s = Render(dir, "anomaly_by_policy", anomaly, script); !s.ok()) return s;
  }
  {
    const std::string script =
        absl::StrCat(kTerminal, "set output 'delay_by_policy.png'\n",
                     "set title 'Mean queuing delay per VC under each policy'\n", common,
                     "set ylabel 'mean queuing delay (hours)'\n", "plot for [i=2:", runs.size() + 2,
                     "] 'delay_by_policy.dat' using i:xtic(1)\n");
    if (absl::Status s = Render(dir, "delay_by_policy", delay, script); !s.ok()) return s;
  }
  {
    std::string data;
    std::string plot;
    int index = 0;
    for (const PlotInput& r : runs) {
      if (r.timeline_csv.empty()) continue;
      absl::StrAppend(&data, "# ", r.label, "\n");
      bool header = true;
      for (absl::string_view line : absl::StrSplit(Av(r.timeline_csv), '\n', absl::SkipEmpty())) {
        if (header) {
          header = false;
          continue;
        }
        std::vector<absl::string_view> f = absl::StrSplit(line, ',');
        if (f.size() < 3) continue;
        auto t = ParseInt(std::string_view(f[0].data(), f[0].size()));
        if (!t) continue;
        absl::StrAppend(&data, Days(*t), " ", f[2], "\n");
      }
      data += "\n\n";
      absl::StrAppend(&plot, index ? ", " : "plot ", "'utilisation_by_policy.dat' index ", index,
                      " using 1:($2*100) with lines lw 2 title ", Label(r.label));
      ++index;
    }
    if (index > 0) {
      const std::string script = absl::StrCat(
          kTerminal, "set output 'utilisation_by_policy.png'\n",
          "set title 'GPU utilisation over time per policy'\n",
          "set xlabel 'time since first submission (days)'\nset ylabel '% of GPUs'\n",
          "set yrange [0:105]\nset grid\nset key outside bottom center horizontal\n", plot, "\n");
      if (absl::Status s = Render(dir, "utilisation_by_policy", data, script); !s.ok()) return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace hived::sim

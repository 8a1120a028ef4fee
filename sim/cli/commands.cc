// hived-sim gen-trace, gen-cluster, compare and plot (sim/cli/commands.h); `run` is in
// sim/cli/run_command.cc.
#include "sim/cli/commands.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string_view>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "hived/config.h"
#include "sim/cli/run_options.h"
#include "sim/cluster/gen_cluster.h"
#include "sim/common/command_util.h"
#include "sim/common/csv.h"
#include "sim/common/flags.h"
#include "sim/common/json.h"
#include "sim/common/output_dir.h"
#include "sim/engine/engine.h"
#include "sim/metrics/metrics.h"
#include "sim/metrics/plot.h"
#include "sim/planning/planning_commands.h"
#include "sim/policies/scheduler_backend.h"
#include "sim/trace/gen_trace.h"
#include "sim/trace/node_events.h"
#include "sim/trace/trace_reader.h"
#include "sim/trace/trace_transform.h"

namespace hived::sim {

int GenTraceCommand(int argc, char** argv) {
  std::string config, out, mix;
  GenTraceOptions o;
  int64_t seed = 1, max_duration = o.max_duration;
  double median = o.median_duration, p90 = o.p90_duration;
  FlagParser p("hived-sim gen-trace", "--config FILE [options]",
               "Writes a seeded synthetic trace in the own CSV format, shaped like the Philly\n"
               "trace: mostly 1-GPU jobs, log-normal durations (median 1,144 s, p90 11,266 s),\n"
               "VCs weighted by their virtual cells' GPUs, Poisson arrivals at a rate\n"
               "giving the asked-for offered load.");
  p.String("config", &config, "FILE", "cluster config whose VCs the jobs use");
  p.String("out", &out, "FILE", "output file (default stdout)");
  p.Int("jobs", &o.jobs, "number of jobs (default 2000)");
  p.Int("seed", &seed, "random seed (default 1)");
  p.Double("load", &o.load, "offered load per VC: GPU-seconds / (VC GPUs x span) (default 0.8)");
  p.Double("arrival-rate", &o.arrival_rate_per_hour, "jobs per hour (overrides --load)");
  p.Double("median-duration", &median, "median job duration, seconds (default 1144)");
  p.Double("p90-duration", &p90, "90th percentile duration, seconds (default 11266)");
  p.Int("max-duration", &max_duration, "longest job, seconds (default 172800 = 2 days)");
  p.Double("opportunistic-share", &o.opportunistic_share,
           "fraction of jobs at priority -1 (default 0)");
  p.String("vc-mix", &mix, "VC=W,...", "VC weights (default: GPUs of the VCs' virtual cells)");
  std::vector<std::string> args;
  if (int code = p.Parse(argc, argv, &args); code >= 0) return code;
  if (!args.empty()) return p.UsageError(absl::StrCat("unexpected argument '", args[0], "'"));
  if (config.empty()) return p.UsageError("--config is required");
  if (o.jobs < 1 || o.jobs > kMaxGeneratedJobs) {
    return p.UsageError(absl::StrCat("--jobs must be in 1..", kMaxGeneratedJobs, ", got ", o.jobs));
  }
  if (max_duration > kMaxTimeSeconds) {  // what the trace readers accept (README "Limits")
    return p.UsageError(absl::StrCat("--max-duration must be at most ", kMaxTimeSeconds, " s"));
  }
  o.seed = static_cast<uint64_t>(seed);
  o.max_duration = max_duration;
  o.median_duration = median;
  o.p90_duration = p90;
  if (!mix.empty()) {
    for (absl::string_view item : absl::StrSplit(Av(mix), ',', absl::SkipEmpty())) {
      std::vector<absl::string_view> kv = absl::StrSplit(item, '=');
      std::optional<double> w;
      if (kv.size() == 2) w = ParseDouble(std::string_view(kv[1].data(), kv[1].size()));
      if (!w) return p.UsageError(absl::StrCat("--vc-mix item '", item, "' is not VC=WEIGHT"));
      o.vc_weights.emplace_back(std::string(kv[0]), *w);
    }
  }
  const char* kCmd = "hived-sim gen-trace";
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecFile(config);
  if (!spec.ok()) return Fail(kCmd, spec.status().message());
  // Rows are written as they are drawn: memory does not grow with --jobs. The file is
  // opened at the first chunk, so bad options leave no file behind.
  std::ofstream file;
  auto write = [&](std::string_view chunk) {
    if (out.empty()) {
      std::fwrite(chunk.data(), 1, chunk.size(), stdout);
      return absl::OkStatus();
    }
    if (!file.is_open()) file.open(out, std::ios::binary);
    file.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    return file ? absl::OkStatus() : absl::InternalError(absl::StrCat("cannot write ", out));
  };
  if (absl::Status s = WriteGeneratedTrace(SpecInfo(*spec), o, write); !s.ok()) {
    return Fail(kCmd, s.message());
  }
  if (!out.empty()) {
    file.close();
    if (!file) return Fail(kCmd, absl::StrCat("cannot write ", out));
  }
  return kExitOk;
}

int GenClusterCommand(int argc, char** argv) {
  GenClusterOptions o;
  int64_t racks = o.racks, per_rack = o.nodes_per_rack, vcs = o.vcs;
  std::string out;
  FlagParser p("hived-sim gen-cluster", "[options]",
               "Writes a generated cluster config (HiveD YAML) for scale tests: racks of 8-GPU\n"
               "nodes (2 sockets x 2 PCIe switches x 2 GPUs) and VCs sharing the nodes with\n"
               "Zipf-like shares. The default is 100,032 GPUs and 100 VCs.");
  p.Int("racks", &racks, "racks (default 1563)");
  p.Int("nodes-per-rack", &per_rack, "nodes per rack (default 8)");
  p.Int("vcs", &vcs, "virtual clusters (default 100)");
  p.Double("reserve", &o.reserve, "fraction of nodes reserved by VCs (default 0.95)");
  p.Double("skew", &o.skew, "VC i gets a share ~ 1/(i+1)^skew (default 1; 0 = equal)");
  p.String("out", &out, "FILE", "output file (default stdout)");
  std::vector<std::string> args;
  if (int code = p.Parse(argc, argv, &args); code >= 0) return code;
  if (!args.empty()) return p.UsageError(absl::StrCat("unexpected argument '", args[0], "'"));
  if (racks < 1 || racks > 1000000 || per_rack < 1 || per_rack > 1000 || vcs < 1 || vcs > 100000) {
    return p.UsageError(absl::StrCat("need --racks in 1..1000000 (got ", racks,
                                     "), --nodes-per-rack in 1..1000 (got ", per_rack,
                                     ") and --vcs in 1..100000 (got ", vcs, ")"));
  }
  o.racks = static_cast<int32_t>(racks);
  o.nodes_per_rack = static_cast<int32_t>(per_rack);
  o.vcs = static_cast<int32_t>(vcs);
  absl::StatusOr<std::string> yaml = GenerateClusterYaml(o);
  if (!yaml.ok()) return p.UsageError(yaml.status().message());
  if (out.empty()) {
    std::fwrite(yaml->data(), 1, yaml->size(), stdout);
    return kExitOk;
  }
  if (absl::Status s = WriteTextFile(out, *yaml); !s.ok()) {
    return Fail("hived-sim gen-cluster", s.message());
  }
  return kExitOk;
}

namespace {

// Loads DIR/summary.json, or the file itself, at most `max_input_mb` (0 = default) big.
absl::StatusOr<Summary> LoadSummary(const std::string& path, std::string* timeline_csv,
                                    int64_t max_input_mb) {
  std::filesystem::path file(path);
  if (std::filesystem::is_directory(file)) file /= "summary.json";
  std::string text;
  if (absl::Status s = ReadInputFile(
          file.string(), {MaxInputBytes(max_input_mb, kDefaultMaxSummaryBytes), "summary"}, &text);
      !s.ok()) {
    return s;
  }
  absl::StatusOr<JsonValue> json = ParseJson(text, file.string());
  if (!json.ok()) return json.status();
  absl::StatusOr<Summary> s = SummaryFromJson(*json);
  if (!s.ok())
    return absl::InvalidArgumentError(absl::StrCat(file.string(), ": ", s.status().message()));
  if (timeline_csv) {
    const std::filesystem::path timeline = file.parent_path() / "timeline.csv";
    // A missing timeline only leaves its chart empty; an unreadable or oversized one fails.
    absl::Status read = ReadInputFile(
        timeline.string(), {MaxInputBytes(max_input_mb, kDefaultMaxTraceBytes), "timeline"},
        timeline_csv);
    if (absl::IsNotFound(read)) {
      timeline_csv->clear();
    } else if (!read.ok()) {
      return read;
    }
  }
  return s;
}

std::string H(double seconds) { return FormatFixed(seconds / 3600.0, 2); }
std::string Opt(const std::optional<double>& v) { return v ? H(*v) : "-"; }

}  // namespace

int CompareCommand(int argc, char** argv) {
  if (WantsMultiCompare(argc, argv)) return CompareMultiCommand(argc, argv);
  FlagParser p("hived-sim compare", "A B",
               "Prints two run summaries side by side: cluster figures, then per VC the mean\n"
               "and p95 queuing delay, the sharing anomaly and preemptions under each. A and B\n"
               "are summary.json files or the --out folders of two runs. Times in hours.");
  int64_t max_input_mb = 0;
  p.Int("max-input-mb", &max_input_mb, MaxInputHelp());
  std::vector<std::string> args;
  if (int code = p.Parse(argc, argv, &args); code >= 0) return code;
  if (args.size() != 2) return p.UsageError("needs exactly two summaries (A B)");
  if (std::string e = CheckRunLimits(0, 0, 0, -1, max_input_mb); !e.empty()) {
    return p.UsageError(e);
  }
  const char* kCmd = "hived-sim compare";
  absl::StatusOr<Summary> a = LoadSummary(args[0], nullptr, max_input_mb);
  if (!a.ok()) return Fail(kCmd, a.status().message());
  absl::StatusOr<Summary> b = LoadSummary(args[1], nullptr, max_input_mb);
  if (!b.ok()) return Fail(kCmd, b.status().message());
  auto name = [](const Summary& s) {
    return absl::StrCat(s.info.policy, s.info.opportunistic_overflow ? "+overflow" : "");
  };
  const std::string la = absl::StrCat("A=", name(*a));
  const std::string lb = absl::StrCat("B=", name(*b));
  std::string out =
      absl::StrFormat("A: %s (%s)\nB: %s (%s)\n\n", args[0], name(*a), args[1], name(*b));
  out += absl::StrFormat("%-26s %14s %14s\n", "cluster", la, lb);
  auto pct = [](double v) { return FormatFixed(100 * v, 1) + "%"; };
  out += absl::StrFormat("%-26s %14s %14s\n", "window utilisation", pct(a->window.utilisation),
                         pct(b->window.utilisation));
  out += absl::StrFormat("%-26s %14s %14s\n", "  useful (minus lost)",
                         pct(a->window.useful_utilisation), pct(b->window.useful_utilisation));
  out +=
      absl::StrFormat("%-26s %14s %14s\n", "  lost GPU-hours",
                      FormatFixed(a->window.lost_gpu_hours + a->window.failure_lost_gpu_hours, 1),
                      FormatFixed(b->window.lost_gpu_hours + b->window.failure_lost_gpu_hours, 1));
  out += absl::StrFormat("%-26s %14s %14s\n", "utilisation over the run", pct(a->utilisation),
                         pct(b->utilisation));
  out += absl::StrFormat("%-26s %14s %14s\n", "allocation rate", pct(a->allocation_rate),
                         pct(b->allocation_rate));
  out += absl::StrFormat("%-26s %14s %14s\n", "fragmentation", pct(a->fragmentation),
                         pct(b->fragmentation));
  out += absl::StrFormat("%-26s %14d %14d\n", "jobs completed", a->all.completed, b->all.completed);
  out += absl::StrFormat("%-26s %14d %14d\n", "jobs rejected", a->all.rejected, b->all.rejected);
  out += absl::StrFormat("%-26s %14s %14s\n", "mean queuing delay (h)",
                         H(a->all.queuing_delay.mean), H(b->all.queuing_delay.mean));
  out += absl::StrFormat("%-26s %14s %14s\n", "p95 queuing delay (h)",
                         H(static_cast<double>(a->all.queuing_delay.p95)),
                         H(static_cast<double>(b->all.queuing_delay.p95)));
  out +=
      absl::StrFormat("%-26s %14s %14s\n", "mean JCT (h)", H(a->all.jct.mean), H(b->all.jct.mean));
  out +=
      absl::StrFormat("%-26s %14d %14d\n", "preemptions", a->all.preemptions, b->all.preemptions);
  out += absl::StrFormat("%-26s %14s %14s\n", "anomaly (h)", Opt(a->all.sharing_anomaly),
                         Opt(b->all.sharing_anomaly));
  auto worst = [](const Summary& s) {
    std::optional<double> w;
    for (const GroupSummary& g : s.vcs) {
      if (g.sharing_anomaly && (!w || *g.sharing_anomaly > *w)) w = g.sharing_anomaly;
    }
    return w;
  };
  out += absl::StrFormat("%-26s %14s %14s\n", "largest VC anomaly (h)", Opt(worst(*a)),
                         Opt(worst(*b)));
  out +=
      absl::StrFormat("\n%-12s %7s | %9s %9s %9s %6s | %9s %9s %9s %6s\n", "vc", "jobs", "A-mean",
                      "A-p95", "A-anom", "A-pre", "B-mean", "B-p95", "B-anom", "B-pre");
  std::vector<std::string> names;
  for (const GroupSummary& g : a->vcs) names.push_back(g.name);
  for (const GroupSummary& g : b->vcs) {
    if (std::find(names.begin(), names.end(), g.name) == names.end()) names.push_back(g.name);
  }
  auto find = [](const Summary& s, const std::string& n) -> const GroupSummary* {
    for (const GroupSummary& g : s.vcs) {
      if (g.name == n) return &g;
    }
    return nullptr;
  };
  for (const std::string& n : names) {
    const GroupSummary* ga = find(*a, n);
    const GroupSummary* gb = find(*b, n);
    auto cells = [](const GroupSummary* g) {
      if (!g) return absl::StrFormat("%9s %9s %9s %6s", "-", "-", "-", "-");
      return absl::StrFormat("%9s %9s %9s %6d", H(g->queuing_delay.mean),
                             H(static_cast<double>(g->queuing_delay.p95)), Opt(g->sharing_anomaly),
                             g->preemptions);
    };
    out += absl::StrFormat("%-12s %7d | %s | %s\n", n.substr(0, 12),
                           ga ? ga->submitted : (gb ? gb->submitted : 0), cells(ga), cells(gb));
  }
  out +=
      "\nanomaly = mean queuing delay minus under the private baseline (hours; > 0 = waits "
      "longer than in a private cluster)\n";
  std::fputs(out.c_str(), stdout);
  return kExitOk;
}

int PlotCommand(int argc, char** argv) {
  std::string out = "plots";
  FlagParser p("hived-sim plot", "RUN... [--out DIR]",
               "Draws charts comparing runs (their --out folders or summary.json files): the\n"
               "sharing anomaly per VC per policy, the mean queuing delay per VC per policy\n"
               "(with the private baseline), and utilisation over time. Needs gnuplot.");
  p.String("out", &out, "DIR", "where to write the PNGs (default ./plots)");
  int64_t max_input_mb = 0;
  p.Int("max-input-mb", &max_input_mb, MaxInputHelp());
  std::vector<std::string> args;
  if (int code = p.Parse(argc, argv, &args); code >= 0) return code;
  if (args.empty()) return p.UsageError("needs at least one run");
  if (std::string e = CheckRunLimits(0, 0, 0, -1, max_input_mb); !e.empty()) {
    return p.UsageError(e);
  }
  const char* kCmd = "hived-sim plot";
  std::vector<PlotInput> runs;
  for (const std::string& a : args) {
    PlotInput in;
    absl::StatusOr<Summary> s = LoadSummary(a, &in.timeline_csv, max_input_mb);
    if (!s.ok()) return Fail(kCmd, s.status().message());
    in.summary = std::move(*s);
    in.label = in.summary.info.policy;
    for (const PlotInput& r : runs) {
      if (r.label == in.label) in.label = absl::StrCat(in.label, " (", a, ")");
    }
    runs.push_back(std::move(in));
  }
  // The charts are staged and renamed into place together: whole or absent.
  std::vector<std::string> layout;
  for (const char* chart : {"anomaly_by_policy", "delay_by_policy", "utilisation_by_policy"}) {
    for (const char* ext : {".png", ".gp", ".dat", ".log"}) {
      layout.push_back(absl::StrCat(chart, ext));
    }
  }
  absl::StatusOr<std::unique_ptr<OutputDir>> outputs = OutputDir::Open(out, layout);
  if (!outputs.ok()) return Fail(kCmd, outputs.status().message());
  absl::StatusOr<std::filesystem::path> staged = (*outputs)->StageFolder("");
  if (!staged.ok()) return Fail(kCmd, staged.status().message());
  if (absl::Status s = PlotRuns(staged->string(), runs); !s.ok()) return Fail(kCmd, s.message());
  if (absl::Status s = (*outputs)->Commit(); !s.ok()) return Fail(kCmd, s.message());
  std::fprintf(stderr, "wrote %s/{anomaly_by_policy,delay_by_policy,utilisation_by_policy}.png\n",
               out.c_str());
  return kExitOk;
}

}  // namespace hived::sim

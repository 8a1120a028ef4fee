// hived-sim run (sim/cli/commands.h): flags, inputs, the policy's replay and the private
// baseline's, outputs.

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "hived/config.h"
#include "sim/cli/commands.h"
#include "sim/cli/run_openb.h"
#include "sim/cli/run_options.h"
#include "sim/cli/run_stream.h"
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
#include "sim/policies/policy_registry.h"
#include "sim/policies/scheduler_backend.h"
#include "sim/trace/gen_trace.h"
#include "sim/trace/node_events.h"
#include "sim/trace/trace_order.h"
#include "sim/trace/trace_reader.h"
#include "sim/trace/trace_transform.h"

namespace hived::sim {
namespace {

// Everything `run --out DIR` may write (OutputDir clears these names of an earlier run).
std::vector<std::string> RunLayout() {
  std::vector<std::string> layout;
  for (const char* folder : {"", "baseline-private/"}) {
    for (const char* file : {"summary.json", "jobs.csv", "timeline.csv"}) {
      layout.push_back(absl::StrCat(folder, file));
    }
  }
  for (const char* chart : {"utilisation", "delay_cdf", "anomaly"}) {
    for (const char* ext : {".png", ".gp", ".dat", ".log"}) {
      layout.push_back(absl::StrCat("plots/", chart, ext));
    }
  }
  return layout;
}

}  // namespace

namespace {

// `run` and its alias `openb-replay` (`default_format` openb): one parser, one path per format.
int RunReplayCommand(int argc, char** argv, const std::string& command,
                     std::string_view default_format) {
  std::string config, trace_path, format(default_format), out_dir,
      queue_name = "fifo", node_events_path, window_text, slo_text, max_capacity_text,
      placement_name = "pack", max_memory_text;
  int64_t seed = 1, check_every = 0, horizon = -1, timeline_interval = 0, warmup = 0,
          reclaim_after = -1, max_input_mb = 0;
  double mtbf = 0, mttr = 0, load_scale = 1;
  bool resume = false, overflow = false, skip_bad = false, plot = false, quiet = false;
  std::string policy_name(PolicyKindName(PolicyKind::kHived));
  const std::string private_name(PolicyKindName(PolicyKind::kPrivate));
  std::string baseline = private_name;
  // openb-replay's own form first: it needs no --format.
  const bool openb_default = default_format == "openb";
  FlagParser p(command,
               openb_default ? "--nodes NODES.csv --pods PODS.csv --out DIR [options]\n"
                               "       --format hived|philly --config FILE --trace FILE [options]"
                             : "--config FILE --trace FILE [options]\n"
                               "       --format openb --nodes NODES.csv --pods PODS.csv --out DIR "
                               "[options]",
               "Replays a job trace against a cluster config under a sharing policy and reports\n"
               "per-VC queuing delay, JCT, preemptions, utilisation, fragmentation and the\n"
               "sharing anomaly (the policy's mean queuing delay minus the private baseline's).\n"
               "Without --out the summary goes to stdout only.\n"
               "--format openb replays an openb pod list in time instead: pods arrive at their\n"
               "creation time, run as long as they ran in the trace (at the speeds of the\n"
               "--sharing model) and leave; a pod that fits nowhere waits. It writes\n"
               "DIR/summary.json, DIR/timeline.csv and DIR/pods.csv and takes only --policy (a\n"
               "placement policy), --seed, --sharing, --skip-bad-rows, --quiet and the options\n"
               "marked openb, time-slice, mps and tgs below (`openb-replay` is its alias).\n"
               "Sharing policies (--policy):\n" +
                   PolicyTable(PolicyModel::kJobs) +
                   "\nPlacement policies of --format openb (--policy):\n" +
                   PolicyTable(PolicyModel::kPods));
  p.String("config", &config, "FILE", "cluster config (HiveD YAML)");
  p.String("trace", &trace_path, "FILE", "job trace (CSV)");
  p.String("format", &format, "hived|philly|openb",
           absl::StrCat("trace format (default ", format,
                        "; hived: the own CSV); openb: an openb node and pod list (--nodes, "
                        "--pods) replayed in time with GPU sharing models (--sharing)"));
  std::string sharing = "exclusive";
  p.String("sharing", &sharing, "MODE",
           "how jobs share a GPU; hived and philly traces ask for whole GPUs, so exclusive "
           "(the only choice there); openb: ideal (default), exclusive, time-slice, mps, tgs "
           "or mig (sim/engine/sharing_model.h)");
  p.String("policy", &policy_name, "P",
           absl::StrCat("sharing policy (default ", policy_name,
                        "), or openb's placement policy (default ", policy_name,
                        ": the library); listed above"));
  p.String("max-capacity", &max_capacity_text, "F|VC=GPUS,...",
           absl::StrCat(JobPoliciesTaking(kPolicyTakesMaxCapacity),
                        ": a VC's maximum GPUs (default the whole cluster)"));
  p.String("placement", &placement_name, "pack|first-fit|spread",
           absl::StrCat(JobPoliciesTaking(kPolicyTakesPlacement),
                        ": node choice: HiveD's packing (default), the first node with room, or "
                        "the least used node (YARN's multi-node placement)"));
  p.Int("reclaim-after", &reclaim_after,
        absl::StrCat(JobPoliciesTaking(kPolicyTakesReclaimAfter),
                     ": YARN's preemption monitor; an owner within its guarantee preempts "
                     "borrowers after waiting this many seconds (default off)"));
  p.Double("load-scale", &load_scale,
           "divide inter-arrival times by X (X > 1 = heavier load; default 1)");
  p.String("window", &window_text, "START,END",
           "measurement window, seconds (default: submit span + longest job)");
  p.Int("warmup", &warmup, "jobs submitted in the window's first N seconds are not measured");
  p.String("slo", &slo_text, "T,...", "queuing-delay targets, e.g. 10m,1h (default 10m,1h)");
  p.String("queue", &queue_name, "easy|fifo|strict|backfill", "per-VC queue policy (default fifo)");
  p.String("baseline", &baseline, absl::StrCat(private_name, "|none"),
           absl::StrCat("also replay the ", private_name, " baseline for the anomaly (default ",
                        private_name, "; in parallel)"));
  p.String("out", &out_dir, "DIR",
           "write summary.json, jobs.csv, timeline.csv (and baseline-private/)");
  p.Int("seed", &seed,
        "seed for the failure model (default 1); openb: of the random policy (default 42)");
  p.Bool("resume", &resume, "preempted or killed jobs resume from progress (default: restart)");
  p.Bool("opportunistic-overflow", &overflow,
         "run a VC's waiting guaranteed jobs opportunistically on idle cells");
  p.String("node-events", &node_events_path, "FILE", "node failures: CSV time,node,state(down|up)");
  p.Double("mtbf", &mtbf, "mean time between failures per node, hours (with --mttr)");
  p.Double("mttr", &mttr, "mean time to repair, hours");
  p.Int("check-invariants", &check_every, "run the scheduler's CheckInvariants every N events");
  p.Int("horizon", &horizon, "stop at this time (seconds); jobs left are counted queued/running");
  p.Int("timeline-interval", &timeline_interval,
        "starting seconds between timeline.csv rows (default auto; at most 4096 rows, "
        "the interval doubles as needed)");
  p.Bool("skip-bad-rows", &skip_bad, "skip bad trace rows (reported) instead of failing");
  p.String("max-memory", &max_memory_text, "SIZE",
           absl::StrCat("replay memory budget, e.g. 512M, 2G (default: a quarter of RAM, at most "
                        "1G; here ",
                        DefaultMaxMemoryBytes() / kMiB,
                        "M): a trace whose replay fits is read whole (any row order); a larger "
                        "one is streamed (a hived-format one must be sorted by submit_time)"));
  p.Int("max-input-mb", &max_input_mb,
        absl::StrCat(MaxInputHelp(), "; for the trace, a fixed cap instead of --max-memory"));
  p.Bool("plot", &plot, "draw PNG charts into OUT/plots with gnuplot (needs --out)");
  p.Bool("quiet", &quiet, "no progress bar or timing on stderr");
  TraceTransformFlags transform_flags;
  RegisterTraceTransformFlags(&p, &transform_flags);
  OpenbRunFlags openb_flags;
  AddOpenbRunFlags(&p, &openb_flags);
  std::vector<std::string> args;
  if (int code = p.Parse(argc, argv, &args); code >= 0) return code;
  if (!args.empty()) return p.UsageError(absl::StrCat("unexpected argument '", args[0], "'"));
  const bool openb = format == "openb";
  if (default_format == "openb" && !openb) {
    return p.UsageError(absl::StrCat("--format ", format,
                                     ": this command replays openb pod "
                                     "lists; job traces: hived-sim run"));
  }
  if (std::string flag = FlagNotTaken(p, openb); !flag.empty()) {
    return p.UsageError(
        openb ? absl::StrCat(flag, " does not apply to --format openb (a pod list's replay)")
              : absl::StrCat(flag, " applies to --format openb only"));
  }
  if (openb) {
    return RunOpenbReplay(p, command,
                          {openb_flags, policy_name, p.Given("sharing") ? sharing : "ideal",
                           out_dir, p.Given("seed") ? seed : 42, skip_bad});
  }
  if (config.empty()) return p.UsageError("--config is required");
  if (trace_path.empty()) return p.UsageError("--trace is required");
  if (sharing != "exclusive") {
    return p.UsageError(absl::StrCat(
        "--sharing ", sharing, ": jobs of a ", format,
        " trace ask for whole GPUs, which run exclusive; the sharing models (time-slice, mps, "
        "tgs, mig) replay fractional jobs: --format openb --nodes NODES.csv --pods PODS.csv"));
  }
  absl::StatusOr<TraceTransforms> transforms = ParseTraceTransforms(transform_flags);
  if (!transforms.ok()) return p.UsageError(transforms.status().message());
  absl::StatusOr<TraceFormat> fmt = ParseTraceFormat(format);
  if (!fmt.ok()) return p.UsageError(fmt.status().message());
  absl::StatusOr<PolicyKind> policy = ParsePolicyKind(policy_name);
  if (!policy.ok()) return p.UsageError(policy.status().message());
  absl::StatusOr<QueueKind> queue = ParseQueueKind(queue_name);
  if (!queue.ok()) return p.UsageError(queue.status().message());
  if (baseline != private_name && baseline != "none") {
    return p.UsageError(absl::StrCat("--baseline must be ", private_name, " or none"));
  }
  if ((mtbf > 0) != (mttr > 0) || mtbf < 0 || mttr < 0) {
    return p.UsageError("--mtbf and --mttr go together and must be positive");
  }
  if (std::string e = CheckRunLimits(mtbf, mttr, timeline_interval, horizon, max_input_mb);
      !e.empty()) {
    return p.UsageError(e);
  }
  if (plot && out_dir.empty()) return p.UsageError("--plot needs --out");
  if (check_every < 0 || timeline_interval < 0 || warmup < 0) {
    return p.UsageError("--check-invariants, --timeline-interval and --warmup must be >= 0");
  }
  std::pair<Time, Time> window{-1, -1};
  if (!window_text.empty()) {
    absl::StatusOr<std::pair<Time, Time>> w = ParseWindow(window_text);
    if (!w.ok()) return p.UsageError(w.status().message());
    window = *w;
  }
  std::vector<Time> slo = {600, 3600};
  if (!slo_text.empty()) {
    absl::StatusOr<std::vector<Time>> v = ParseSloList(slo_text);
    if (!v.ok()) return p.UsageError(v.status().message());
    slo = std::move(*v);
  }
  absl::StatusOr<NodePlacement> placement = ParseNodePlacement(placement_name);
  if (!placement.ok()) return p.UsageError(placement.status().message());
  // Each policy option only where the registry says the policy takes it.
  const PolicyInfo& policy_info = PolicyOf(*policy);
  for (const auto& [given, option, flag] :
       {std::tuple{*placement != NodePlacement::kPack, kPolicyTakesPlacement, "--placement"},
        std::tuple{reclaim_after >= 0, kPolicyTakesReclaimAfter, "--reclaim-after"},
        std::tuple{!max_capacity_text.empty(), kPolicyTakesMaxCapacity, "--max-capacity"}}) {
    if (given && !policy_info.Takes(option)) {
      return p.UsageError(absl::StrCat(flag, " applies to ", JobPoliciesTaking(option), " only"));
    }
  }
  const std::string_view kCmd = command;
  // The output folder is opened first: it clears an earlier run's outputs (a failed run must
  // not leave them looking current) and fails fast when it cannot be written.
  std::unique_ptr<OutputDir> outputs;
  if (!out_dir.empty()) {
    if (absl::Status s =
            OutputDir::CheckInputs(out_dir, RunLayout(), {config, trace_path, node_events_path});
        !s.ok()) {
      return p.UsageError(s.message());
    }
    absl::StatusOr<std::unique_ptr<OutputDir>> opened = OutputDir::Open(out_dir, RunLayout());
    if (!opened.ok()) return Fail(kCmd, opened.status().message());
    outputs = std::move(*opened);
  }

  const auto wall_start = std::chrono::steady_clock::now();
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecFile(config);
  if (!spec.ok()) return Fail(kCmd, spec.status().message());
  if (absl::Status s = ApplyVcMoves(*transforms, &*spec); !s.ok()) {
    return Fail(kCmd, absl::StrCat(config, ": ", s.message()));
  }
  const SpecInfo info(*spec);
  PolicyOptions policy_options;
  policy_options.reclaim_after = reclaim_after;
  policy_options.placement = *placement;
  if (!max_capacity_text.empty()) {
    absl::StatusOr<std::vector<int64_t>> m = ParseMaxCapacity(max_capacity_text, info);
    if (!m.ok()) return p.UsageError(m.status().message());
    policy_options.max_capacity = std::move(*m);
  }
  std::vector<NodeEvent> node_events;
  if (!node_events_path.empty()) {
    absl::StatusOr<std::vector<NodeEvent>> ev = ReadNodeEventsFile(
        node_events_path, MaxInputBytes(max_input_mb, kDefaultMaxNodeEventsBytes));
    if (!ev.ok()) return Fail(kCmd, ev.status().message());
    node_events = std::move(*ev);
  }

  RunInfo run_info;
  run_info.queue = std::string(QueueKindName(*queue));
  run_info.config = config;
  run_info.trace = trace_path;
  run_info.format = format;
  run_info.seed = static_cast<uint64_t>(seed);
  run_info.resume = resume;
  run_info.opportunistic_overflow = overflow;
  run_info.load_scale = load_scale;
  run_info.warmup = warmup;
  run_info.slo_seconds = slo;
  EngineOptions options;
  options.queue = *queue;
  options.resume = resume;
  options.opportunistic_overflow = overflow;
  options.check_invariants_every = check_every;
  options.timeline_interval = timeline_interval;
  options.horizon = horizon;
  options.mtbf_hours = mtbf;
  options.mttr_hours = mttr;
  options.seed = static_cast<uint64_t>(seed);
  options.window_start = window.first;
  options.window_end = window.second;
  bool streamed = false;
  // The trace's size against the memory budget (issue 28 item 3): read whole when its replay
  // fits (--max-input-mb, when given, is the old fixed byte cap instead); otherwise a larger
  // trace must be sorted by submit time, checked in chunks without loading it.
  int64_t trace_max_bytes = MaxInputBytes(max_input_mb, kDefaultMaxTraceBytes);
  if (max_input_mb == 0) {
    int64_t budget = DefaultMaxMemoryBytes();
    if (!max_memory_text.empty()) {
      absl::StatusOr<int64_t> m = ParseByteSize(max_memory_text);
      if (!m.ok()) return p.UsageError(absl::StrCat("--max-memory: ", m.status().message()));
      budget = *m;
    }
    trace_max_bytes = MaxInMemoryTraceBytes(budget);
    std::error_code size_error;
    const std::uintmax_t size = std::filesystem::file_size(trace_path, size_error);
    if (!size_error &&
        ChooseTraceReadPath(static_cast<int64_t>(size), budget) == TraceReadPath::kStream) {
      auto mb = [](double bytes) { return absl::StrFormat("%.1f MB", bytes / kMiB); };
      const std::string need = absl::StrCat(
          "its replay needs about ",
          mb(static_cast<double>(size) * static_cast<double>(kReplayBytesPerTraceByte)),
          " read whole, more than --max-memory ", mb(static_cast<double>(budget)));
      // A Philly trace is sorted by its stream (sim/trace/philly_stream.h).
      if (*fmt == TraceFormat::kHived) {
        if (absl::Status s = CheckTraceSorted(trace_path); !s.ok()) return Fail(kCmd, s.message());
      }
      // Sorted: streamed into the replay (sim/cli/run_stream.h), with what it cannot do
      // refused first.
      if (!transforms->empty()) {
        return Fail(kCmd, absl::StrCat(trace_path,
                                       ": the trace transforms (--only-vcs ...) need the trace "
                                       "read whole, and ",
                                       need, ": raise --max-memory"));
      }
      streamed = true;
    }
  } else if (!max_memory_text.empty()) {
    return p.UsageError("--max-memory and --max-input-mb exclude each other");
  }
  // Both paths replay through the same sinks (sim/cli/run_stream.h): no per-job records.
  ReplayRun run;
  run.policy = *policy;
  run.spec = &*spec;
  run.info = &info;
  run.trace_path = trace_path;
  run.format = *fmt;
  run.skip_bad_rows = skip_bad;
  run.load_scale = load_scale;
  run.node_events = &node_events;
  run.options = options;
  run.with_baseline = baseline == private_name && *policy != PolicyKind::kPrivate;
  run.outputs = outputs.get();
  run.out_dir = out_dir;
  run.plot = plot;
  run.quiet = quiet;
  run.wall_start = wall_start;
  if (streamed) {
    Trace unused;  // the flag's range, checked as for a trace read whole
    if (absl::Status s = ScaleLoad(load_scale, &unused); !s.ok()) return p.UsageError(s.message());
    run.run_info = run_info;
    run.policy_options = policy_options;
    return RunReplays(std::move(run));
  }
  absl::StatusOr<Trace> trace = ReadTraceFile(trace_path, *fmt, {skip_bad, trace_max_bytes});
  if (!trace.ok()) return Fail(kCmd, trace.status().message());
  if (absl::Status s = ScaleLoad(load_scale, &*trace); !s.ok()) return p.UsageError(s.message());
  for (const std::string& w : trace->warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  if (absl::Status s =
          ApplyTraceTransforms(*transforms, *spec, static_cast<uint64_t>(seed), &*trace);
      !s.ok()) {
    return Fail(kCmd, absl::StrCat(trace_path, ": ", s.message()));
  }
  const size_t warned = trace->warnings.size();
  if (absl::Status s = CheckPinnedCells(info, skip_bad, &*trace); !s.ok()) {
    return Fail(kCmd, s.message());
  }
  for (size_t i = warned; i < trace->warnings.size(); ++i) {
    std::fprintf(stderr, "warning: %s\n", trace->warnings[i].c_str());
  }
  run_info.skipped_rows = trace->skipped_rows;
  run.run_info = run_info;
  run.policy_options = policy_options;  // the pinned cells come from the trace's facts
  run.trace = &*trace;
  return RunReplays(std::move(run));
}

}  // namespace

int RunCommand(int argc, char** argv) {
  return RunReplayCommand(argc, argv, "hived-sim run", "hived");
}

int OpenbReplayCommand(int argc, char** argv) {
  return RunReplayCommand(argc, argv, "hived-sim openb-replay", "openb");
}

}  // namespace hived::sim

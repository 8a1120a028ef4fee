#include "sim/planning/plan.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "hived/config.h"
#include "sim/cluster/spec_edit.h"
#include "sim/cluster/spec_info.h"
#include "sim/common/csv.h"
#include "sim/common/flags.h"
#include "sim/engine/queue_policy.h"
#include "sim/planning/plan_cost.h"
#include "sim/planning/plan_output.h"
#include "sim/planning/plan_search.h"
#include "sim/planning/planning_commands.h"
#include "sim/planning/sweep.h"
#include "sim/planning/sweep_runner.h"
#include "sim/policies/policy_registry.h"
#include "sim/policies/scheduler_backend.h"
#include "sim/trace/trace_reader.h"
#include "sim/trace/trace_speed.h"
#include "sim/trace/trace_transform.h"

namespace hived::sim {

namespace {

namespace fs = std::filesystem;

int Fail(absl::string_view message) {
  std::fprintf(stderr, "hived-sim plan: %.*s\n", static_cast<int>(message.size()), message.data());
  return kExitFailed;
}

}  // namespace

int PlanCommand(int argc, char** argv) {
  std::string config, trace, format = "hived", vc, add_vc, target_text, cell_type, out = "plan-out";
  std::string policy(PolicyKindName(PolicyKind::kHived)), queue = "fifo", run_args;
  std::string price_text, speed_text, try_types, resample_by;
  int64_t jobs = DefaultJobs(), min_size = 1, max_size = 0, seed = 1, min_jobs = 20, resamples = 0;
  double load_scale = 1;
  bool all_vcs = false, resume = false, one_by_one = false;
  TraceTransformFlags transform_flags;
  FlagParser p("hived-sim plan", "--config FILE --trace FILE (--vc NAME | --all-vcs) --target T",
               "Finds the smallest reservation of a VC (or of every VC) whose replay meets a\n"
               "target, e.g. --target 'p95_wait<=1h', by k-section over sizes (each probe a\n"
               "full replay, --jobs probes at once). Writes OUT/sized.yaml (a valid config),\n"
               "OUT/report.txt, OUT/report.csv and OUT/plan-VC.png. See docs/planning.md.");
  p.String("config", &config, "FILE", "cluster config (HiveD YAML)");
  p.String("trace", &trace, "FILE", "job trace");
  p.String("format", &format, "hived|philly", "trace format (default hived)");
  p.String("vc", &vc, "NAME", "the VC to size (others unchanged)");
  p.Bool("all-vcs", &all_vcs, "size every VC, then the physical cluster to host them");
  p.String("add-vc", &add_vc, "NAME",
           "size a VC the config does not have yet, in cells of --cell-type; its jobs come "
           "from --add-tenant 'NAME:per-day=N,...' or 'NAME:like=VC,scale=K' (absolute, not "
           "load=) or --rename-vcs");
  p.Bool("one-by-one", &one_by_one,
         "--all-vcs: size the VCs one after another instead of in joint rounds (one replay "
         "probing every VC at once; only under --policy hived, where a VC's waits depend on "
         "its own reservation: use this with opportunistic jobs or failures)");
  p.Bool("resume", &resume,
         "continue a killed plan in --out: finished probes (same config and arguments) are "
         "read, not run again; the outputs equal an uninterrupted run's");
  p.String("target", &target_text, "METRIC<=VALUE",
           "e.g. p95_wait<=1h, mean_wait<=30m, anomaly<=0.1h, slo_attainment@1h>=95% (share "
           "of jobs waiting at most 1 h)");
  p.String("cell-type", &cell_type, "[VC=]PATH,...",
           "size in cells of this dotted type: PATH for every VC, VC=PATH for one (default: "
           "the lowest type the VC reserves)");
  p.Int("min", &min_size, "smallest size to consider (default 1)");
  p.Int("max", &max_size,
        "largest size to consider (default: from max(4 x now, now + 4), doubled while no "
        "size meets, up to 4 x the cluster's GPUs)");
  p.Int("min-jobs", &min_jobs,
        "skip (and report) a VC whose metric rests on fewer jobs (default 20: a p95 over "
        "fewer is nearly their maximum)");
  p.Int("jobs", &jobs, "probes at once (default: the number of cores)");
  p.String("out", &out, "DIR", "output folder (default plan-out)");
  p.String("policy", &policy, JobPolicyNames("|"),
           absl::StrCat("sharing policy of the probes (default ", policy, ")"));
  p.String("queue", &queue, "NAME", "queue policy of the probes (default fifo)");
  p.Int("seed", &seed, "seed of the probes (default 1)");
  p.Double("load-scale", &load_scale,
           "every probe's load: inter-arrival times divided by X (X > 1 = heavier; default 1)");
  p.String("run-args", &run_args, "ARGS", "more `run` flags for every probe");
  p.String("price", &price_text, "TYPE=USD,...",
           "USD per GPU-hour of each GPU leaf type (e.g. K80=0.45,A100=3.1): costs in the "
           "report, and --try-types ranks by money");
  p.String("gpu-speed", &speed_text, "TYPE=F,...",
           "speed of each GPU leaf type (a type not listed: 1; 2 = twice as fast): a VC moved "
           "(--move-vc, --try-types) runs its jobs speed(new)/speed(old) x as fast");
  p.String("try-types", &try_types, "PATH,...",
           "with --vc: plan the VC on each cell type path (moved there, sized in its cells) "
           "and keep the cheapest that meets the target");
  p.Int("resamples", &resamples,
        "how sure: replay the sized config on N resampled traces (seeds seed+1..seed+N) and "
        "report per VC the share meeting the target (default 0: none)");
  p.String("resample-by", &resample_by, "days|weeks|jobs",
           "--resamples' block bootstrap (default: --bootstrap's unit, else days)");
  RegisterTraceTransformFlags(&p, &transform_flags);
  std::vector<std::string> args;
  if (int code = p.Parse(argc, argv, &args); code >= 0) return code;
  if (!args.empty()) return p.UsageError(absl::StrCat("unexpected argument '", args[0], "'"));
  if (config.empty() || trace.empty()) return p.UsageError("--config and --trace are required");
  if (!add_vc.empty() && !vc.empty()) {
    return p.UsageError(absl::StrCat("--add-vc ", add_vc, " sizes VC ", add_vc,
                                     ": give it alone or with --all-vcs, not with --vc ", vc));
  }
  if (!add_vc.empty() && !all_vcs) vc = add_vc;
  if (vc.empty() == !all_vcs) {
    return p.UsageError("give exactly one of --vc NAME, --add-vc NAME and --all-vcs");
  }
  if (target_text.empty()) return p.UsageError("--target is required");
  // sized.yaml's date: SOURCE_DATE_EPOCH when set (reproducible outputs), else now.
  const absl::StatusOr<std::string> date =
      PlanDate(std::getenv("SOURCE_DATE_EPOCH"), static_cast<int64_t>(std::time(nullptr)));
  if (!date.ok()) return p.UsageError(date.status().message());
  absl::StatusOr<PlanTarget> target = ParsePlanTarget(target_text);
  if (!target.ok()) return p.UsageError(target.status().message());
  if (jobs < 1 || jobs > 4096) return p.UsageError("--jobs must be 1..4096");
  if (min_jobs < 0) return p.UsageError("--min-jobs must be >= 0");
  if (resamples < 0 || resamples > 10000) return p.UsageError("--resamples must be 0..10000");
  if (resample_by.empty()) {
    resample_by = transform_flags.bootstrap.empty() ? "days" : transform_flags.bootstrap;
  }
  if (resample_by != "days" && resample_by != "weeks" && resample_by != "jobs") {
    return p.UsageError(absl::StrCat("--resample-by ", resample_by, ": days, weeks or jobs"));
  }
  if (!transform_flags.bootstrap.empty() && resample_by != transform_flags.bootstrap) {
    return p.UsageError("--resample-by differs from --bootstrap: give one unit");
  }
  if (!(load_scale > 0) || !std::isfinite(load_scale) || load_scale > 1e6) {
    return p.UsageError(absl::StrCat("--load-scale ", load_scale,
                                     ": must be a number > 0 (1.5 = 1.5x the arrivals)"));
  }
  if (load_scale != 1 && absl::StrContains(run_args, "load-scale")) {
    return p.UsageError("--load-scale is given twice (also in --run-args); give it once");
  }
  if (min_size < 1 || max_size < 0 || (max_size > 0 && max_size < min_size) ||
      max_size > (int64_t{1} << 24)) {
    return p.UsageError("--min must be >= 1 and --max >= --min (at most 2^24)");
  }
  if (!ParseTraceFormat(format).ok()) {
    return p.UsageError(absl::StrCat("unknown --format ", format));
  }
  if (!ParsePolicyKind(policy).ok()) {
    return p.UsageError(absl::StrCat("unknown --policy ", policy, " (", JobPolicyNames(", "), ")"));
  }
  if (!ParseQueueKind(queue).ok()) return p.UsageError(absl::StrCat("unknown --queue ", queue));
  absl::StatusOr<TraceTransforms> transforms = ParseTraceTransforms(transform_flags);
  if (!transforms.ok()) return p.UsageError(transforms.status().message());
  CostModel cost;
  if (absl::StatusOr<std::vector<std::pair<std::string, double>>> prices = ParsePrices(price_text);
      prices.ok()) {
    cost.prices = std::move(*prices);
  } else {
    return p.UsageError(prices.status().message());
  }
  if (absl::StatusOr<std::vector<std::pair<std::string, double>>> speeds =
          ParseSpeedFactors("gpu-speed", speed_text);
      speeds.ok()) {
    cost.speeds = std::move(*speeds);
  } else {
    return p.UsageError(speeds.status().message());
  }
  const std::vector<std::string> type_paths =
      absl::StrSplit(try_types, ',', absl::SkipWhitespace());
  if (!type_paths.empty() && (vc.empty() || all_vcs || !add_vc.empty())) {
    return p.UsageError("--try-types plans one VC: give it with --vc NAME");
  }
  for (const auto& [moved, to] : transforms->move_vcs) {
    if (!type_paths.empty() && moved == vc) {
      return p.UsageError(absl::StrCat("--try-types moves VC ", vc,
                                       " to each type; drop --move-vc ", moved, "=", to));
    }
  }

  PlanContext ctx;
  ctx.exe = SelfExe();
  ctx.trace = trace;
  ctx.format = format;
  ctx.target = *target;
  ctx.jobs = static_cast<int>(jobs);
  ctx.min_jobs = min_jobs;
  ctx.out = out;
  ctx.resume = resume;
  absl::StatusOr<ClusterSpec> base = LoadClusterSpecFile(config);
  if (!base.ok()) return Fail(base.status().message());
  const ClusterSpec unmoved = *base;
  // A moved VC is planned on its new cell type: probes resize the moved config (their child
  // runs re-apply the move, which then changes nothing, and rewrite the trace).
  if (absl::Status s = ApplyVcMoves(*transforms, &*base); !s.ok()) {
    return Fail(absl::StrCat(config, ": ", s.message()));
  }
  ctx.base = std::move(*base);
  // --gpu-speed: a moved VC's jobs run faster or slower on its new type (`--vc-speed`).
  if (absl::StatusOr<std::vector<std::string>> speeds =
          MovedVcSpeeds(cost, unmoved, ctx.base, transforms->move_vcs);
      !speeds.ok()) {
    return p.UsageError(absl::StrCat("--gpu-speed: ", speeds.status().message()));
  } else if (!speeds->empty()) {
    if (!transform_flags.vc_speed.empty()) transform_flags.vc_speed += ",";
    transform_flags.vc_speed += absl::StrJoin(*speeds, ",");
    if (absl::StatusOr<TraceTransforms> t = ParseTraceTransforms(transform_flags); !t.ok()) {
      return p.UsageError(
          absl::StrCat(t.status().message(), " (--gpu-speed sets it for moved VCs)"));
    }
  }
  if (!cost.prices.empty()) {
    for (const std::string& path : type_paths) {
      const std::string leaf = VcLeafType(ctx.base, path);
      if (!leaf.empty() && !cost.UsdPerHour(leaf, 1)) {
        return p.UsageError(absl::StrCat("--price has no price for GPU type ", leaf,
                                         " (of --try-types ", path, "); add ", leaf,
                                         "=USD_PER_GPU_HOUR"));
      }
    }
  }
  if (std::error_code ec; !fs::is_regular_file(trace, ec)) {
    return Fail(absl::StrCat(trace, ": no such trace file"));
  }
  // The anomaly needs the private baseline; other targets skip it (half the work).
  const bool needs_baseline = target->metric.find("anomaly") != std::string::npos;
  ctx.fixed_args = {
      absl::StrCat("--baseline=",
                   Av(needs_baseline ? PolicyKindName(PolicyKind::kPrivate) : "none")),
      absl::StrCat("--policy=", policy), absl::StrCat("--queue=", queue),
      absl::StrCat("--seed=", seed)};
  // slo_attainment@T needs the probes to measure that threshold (--run-args may add more).
  if (target->slo_seconds > 0) {
    ctx.fixed_args.push_back(absl::StrCat("--slo=", target->slo_seconds));
  }
  if (load_scale != 1) ctx.fixed_args.push_back(absl::StrCat("--load-scale=", load_scale));
  for (const std::string& a : TraceTransformArgs(transform_flags)) ctx.fixed_args.push_back(a);
  for (absl::string_view a : absl::StrSplit(run_args, ' ', absl::SkipWhitespace())) {
    ctx.fixed_args.emplace_back(a);
  }
  std::vector<std::string> vcs;
  if (all_vcs) {
    for (const VirtualClusterSpec& v : ctx.base.virtual_clusters) {
      if (!v.virtual_cells.empty()) vcs.push_back(v.name);
    }
    if (!add_vc.empty()) vcs.push_back(add_vc);
  } else {
    vcs.push_back(vc);
  }
  if (!add_vc.empty()) {
    if (int code = CheckAddVc(p, add_vc, ctx.base, *transforms); code >= 0) return code;
  }
  // --cell-type: TYPE (every VC) and VC=TYPE (that VC), comma-separated.
  std::string default_type;
  std::map<std::string, std::string> vc_types;
  if (int code = ParseVcCellTypes(p, cell_type, vcs, all_vcs ? "" : vc, &default_type, &vc_types);
      code >= 0) {
    return code;
  }
  auto type_of = [&](const std::string& name) {
    auto it = vc_types.find(name);
    return it != vc_types.end() ? it->second : default_type;
  };
  if (!add_vc.empty()) {
    // The new VC enters the base config at one cell; each probe sets its size.
    if (type_of(add_vc).empty()) {
      return p.UsageError(absl::StrCat("--add-vc ", add_vc, " needs a cell type: --cell-type PATH",
                                       all_vcs ? absl::StrCat(" or ", add_vc, "=PATH") : "",
                                       " (e.g. P100-RACK.P100-NODE)"));
    }
    if (absl::Status s = SetVcUnits(&ctx.base, add_vc, type_of(add_vc), 1); !s.ok()) {
      return p.UsageError(
          absl::StrCat("--add-vc ", add_vc, " in '", type_of(add_vc), "': ", s.message()));
    }
    ctx.new_vcs.insert(add_vc);
  }
  for (const std::string& name : vcs) {
    if (absl::StatusOr<VcUnits> u = GetVcUnits(ctx.base, name, type_of(name)); !u.ok()) {
      return u.status().code() == absl::StatusCode::kNotFound
                 ? p.UsageError(absl::StrCat("--vc: ", u.status().message()))
                 : p.UsageError(absl::StrCat("--cell-type: VC ", name, " in '", type_of(name),
                                             "': ", u.status().message(),
                                             all_vcs ? " (give VC=TYPE for this VC)" : ""));
    }
  }
  std::error_code ec;
  fs::create_directories(ctx.out, ec);
  if (ec) return Fail(absl::StrCat("cannot create ", out, ": ", ec.message()));

  std::string report =
      absl::StrFormat("hived-sim plan: config %s, trace %s (%s), policy %s%s\n\n", config, trace,
                      format, policy, load_scale != 1 ? absl::StrCat(", load x", load_scale) : "");
  std::string csv = "vc,size,gpus,metric,value,rejected,meets,chosen\n";
  ClusterSpec sized = ctx.base;
  bool all_met = true;
  std::vector<std::string> skipped, results, sized_vcs;
  std::vector<PlanMdRow> md_rows;
  std::string heat_source;  // the jobs.csv the wait heatmaps are drawn from
  // --try-types: the VC planned on each type; the cheapest meeting is the plan kept.
  std::optional<VcPlan> tried;
  // --all-vcs under hived: every VC searched at once, in joint rounds.
  const bool joint = all_vcs && !one_by_one && policy == PolicyKindName(PolicyKind::kHived);
  std::map<std::string, VcPlan> joint_plans;
  if (joint) {
    std::vector<std::string> types;
    for (const std::string& name : vcs) types.push_back(type_of(name));
    absl::StatusOr<std::vector<VcPlan>> plans =
        PlanVcsJointly(&ctx, vcs, types, min_size, max_size);
    if (!plans.ok()) {
      if (plans.status().code() == absl::StatusCode::kInvalidArgument &&
          absl::StrContains(plans.status().message(), "--target")) {
        return p.UsageError(plans.status().message());
      }
      return Fail(plans.status().message());
    }
    for (VcPlan& plan : *plans) joint_plans[plan.vc] = std::move(plan);
  }
  if (!type_paths.empty()) {
    absl::StatusOr<TypeChoice> choice =
        PlanAcrossTypes(ctx, cost, vc, type_paths, min_size, max_size);
    if (!choice.ok()) {
      return choice.status().code() == absl::StatusCode::kInvalidArgument
                 ? p.UsageError(choice.status().message())
                 : Fail(choice.status().message());
    }
    const std::string section = TypeChoiceReport(ctx, vc, *choice) + "\n";
    std::fputs(section.c_str(), stdout);
    report += section;
    TypeOption& kept = choice->options[static_cast<size_t>(std::max(choice->best, 0))];
    kept.ctx.out = ctx.out;
    ctx = std::move(kept.ctx);
    sized = ctx.base;
    tried = std::move(kept.plan);
  }
  for (const std::string& name : vcs) {
    absl::StatusOr<VcPlan> plan = tried ? std::move(*tried)
                                  : joint
                                      ? std::move(joint_plans[name])
                                      : PlanOneVc(&ctx, name, type_of(name), min_size, max_size);
    if (!plan.ok()) {
      if (plan.status().code() == absl::StatusCode::kInvalidArgument &&
          absl::StrContains(plan.status().message(), "--target")) {
        return p.UsageError(plan.status().message());
      }
      return Fail(plan.status().message());
    }
    if (!plan->skipped.empty()) {
      const std::string section =
          absl::StrFormat("VC %s: target %s (metric %s)\n%s", name, ctx.target.text,
                          ctx.resolved_metric, plan->skipped);
      std::fputs(section.c_str(), stdout);
      std::fflush(stdout);
      report += section + "\n";
      skipped.push_back(name);
      md_rows.push_back(
          {name, "", "", absl::StrCat("skipped: ", plan->jobs, " jobs"), "", "", "", ""});
      continue;
    }
    const std::string section =
        PlanReport(ctx, *plan) +
        (plan->chosen ? CostLine(cost, VcLeafType(ctx.base, plan->current.unit_type),
                                 *plan->chosen * plan->leaves_per_unit,
                                 plan->current.units * plan->leaves_per_unit)
                      : std::string());
    std::fputs(section.c_str(), stdout);
    std::fflush(stdout);
    report += section + "\n";
    csv += ReportCsvRows(ctx, *plan);
    PlanChart(ctx, *plan);
    md_rows.push_back(MdRow(ctx, cost, *plan));
    // The probes' jobs.csv but the chosen one's (the heatmap of a single VC reads it).
    for (const auto& [size, probe] : plan->probes) {
      std::error_code rm_ec;
      if (plan->chosen && size == *plan->chosen && !all_vcs) {
        heat_source = (fs::path(probe.dir) / "out" / "jobs.csv").string();
      } else if (!joint) {
        fs::remove(fs::path(probe.dir) / "out" / "jobs.csv", rm_ec);
      }
    }
    if (!plan->chosen) {
      all_met = false;
      results.push_back(absl::StrCat("VC ", name, ": no size meets the target; kept at ",
                                     plan->current.units, " ", plan->current.unit_type));
      continue;
    }
    sized_vcs.push_back(name);
    results.push_back(absl::StrCat("VC ", name, ": ", *plan->chosen, " ", plan->current.unit_type,
                                   ctx.new_vcs.count(name) > 0
                                       ? std::string(" (new)")
                                       : absl::StrCat(" (was ", plan->current.units, ")")));
    if (absl::Status s = SetVcUnits(&sized, name, plan->current.unit_type, *plan->chosen);
        !s.ok()) {
      return Fail(s.message());
    }
  }
  if (absl::Status s = FitPhysicalCluster(&sized); !s.ok()) return Fail(s.message());
  if (all_vcs) {
    TrimPhysicalCluster(&sized);
    const std::string phys = PhysicalChangeText(ctx.base, sized);
    std::fputs(phys.c_str(), stdout);
    report += phys;
  }
  const std::string sized_path = (ctx.out / "sized.yaml").string();
  if (absl::Status s = CheckSpec(sized); !s.ok()) {
    return Fail(absl::StrCat("the sized config does not validate (a bug):\n", s.message()));
  }
  const std::string command = PlanCommandLine(argc, argv);
  std::string trace_bytes;
  if (absl::Status s = ReadFileToString(trace, &trace_bytes); !s.ok()) return Fail(s.message());
  const std::string header =
      SizedHeader(command, *date, ctx, trace_bytes, results, price_text, speed_text, skipped);
  std::string input_text;
  (void)ReadFileToString(config, &input_text);  // unreadable: no comments to keep
  for (absl::Status s : {WriteFileAtomically(sized_path, SizedYamlText(header, input_text, sized)),
                         WriteFileAtomically((ctx.out / "report.csv").string(), csv)}) {
    if (!s.ok()) return Fail(s.message());
  }
  if (all_vcs) {
    absl::StatusOr<std::string> confirm =
        ConfirmSized(&ctx, sized_path, vcs, skipped, joint_plans, &all_met);
    if (!confirm.ok()) return Fail(confirm.status().message());
    std::fputs(confirm->c_str(), stdout);
    report += *confirm;
  }
  // --resamples: how sure each sized VC's answer is, over resampled traces.
  if (absl::StatusOr<std::string> sure =
          ResampleSection(&ctx, sized, sized_vcs, resamples, resample_by, seed, &md_rows);
      !sure.ok()) {
    return Fail(sure.status().message());
  } else {
    std::fputs(sure->c_str(), stdout);
    report += *sure;
  }
  std::string tail =
      absl::StrCat("sized config: ", sized_path, " (validates; replay it with `hived-sim run`)\n");
  if (!skipped.empty()) {
    tail += absl::StrCat(
        "skipped (fewer than --min-jobs ", min_jobs,
        " jobs behind the metric; kept at their size): ", absl::StrJoin(skipped, ", "), "\n");
  }
  std::fputs(tail.c_str(), stdout);
  report += tail;
  if (ctx.reused > 0) {
    std::fprintf(stderr, "hived-sim plan: --resume: %lld finished probe(s) read, not run again\n",
                 static_cast<long long>(ctx.reused));
  }
  if (all_vcs) heat_source = (ctx.out / "confirm" / "out" / "jobs.csv").string();
  if (!heat_source.empty()) {
    if (absl::StatusOr<std::vector<std::string>> drawn =
            WaitHeatmaps(heat_source, vcs, ctx.out.string());
        !drawn.ok()) {
      std::fprintf(stderr, "hived-sim plan: no wait heatmaps: %s\n",
                   std::string(drawn.status().message()).c_str());
    }
  }
  for (absl::Status s :
       {WriteFileAtomically((ctx.out / "report.txt").string(), report),
        WriteReportMd(ctx.out.string(), command, ctx.target.text, md_rows, vcs, report)}) {
    if (!s.ok()) return Fail(s.message());
  }
  if (!all_vcs && !skipped.empty()) {
    return Fail(absl::StrCat("VC ", vc,
                             " was not sized: too few jobs behind the metric (see "
                             "above); --min-jobs 0 sizes it anyway"));
  }
  if (!all_met) {
    return Fail(
        "no size meets the target for every VC (see the report); the sized config keeps "
        "those VCs as they were");
  }
  return kExitOk;
}

}  // namespace hived::sim

#include "sim/cli/run_stream.h"

#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "sim/common/command_util.h"
#include "sim/engine/stream_feed.h"
#include "sim/metrics/jobs_csv_writer.h"
#include "sim/metrics/plot.h"
#include "sim/policies/policy_registry.h"

namespace hived::sim {
namespace {

constexpr const char* kCmd = "hived-sim run";

// Hands each finished job to the summary and, when there are, to jobs.csv and the delay chart.
class ResultsSink : public JobSink {
 public:
  ResultsSink(SummaryBuilder* summary, JobsCsvWriter* csv, PlotDelays* delays)
      : summary_(summary), csv_(csv), delays_(delays) {}
  absl::Status Add(const FinishedJob& job) override {
    summary_->Add(job);
    if (delays_ != nullptr) delays_->Add(job);
    return csv_ != nullptr ? csv_->Add(job) : absl::OkStatus();
  }

 private:
  SummaryBuilder* summary_;
  JobsCsvWriter* csv_;
  PlotDelays* delays_;
};

struct Replayed {
  EngineResult result;  // without jobs and records
  Summary summary;
  std::optional<PlotDelays> delays;  // with --plot
};

// One replay of the trace; jobs.csv into `csv_folder` when not empty, the delay chart's
// data with `plot_delays`. `sorted`: the pre-pass's stream of a streamed trace when its rows
// can be read again without the file (a Philly trace's, sorted once), else null.
absl::StatusOr<Replayed> ReplayOne(PolicyKind policy, const ReplayRun& run, const TraceFacts& facts,
                                   const JobStream* sorted, const PolicyOptions& policy_options,
                                   EngineOptions options, const std::filesystem::path& csv_folder,
                                   bool plot_delays) {
  auto fail = [&](const absl::Status& s) {
    return absl::Status(s.code(),
                        absl::StrCat(Av(PolicyKindName(policy)), " replay failed: ", s.message()));
  };
  absl::StatusOr<std::unique_ptr<ClusterBackend>> backend =
      MakeSchedulerBackend(policy, *run.spec, static_cast<int32_t>(facts.jobs), policy_options);
  if (!backend.ok()) {
    return absl::Status(backend.status().code(),
                        absl::StrCat("cannot build the ", Av(PolicyKindName(policy)),
                                     " scheduler: ", backend.status().message()));
  }
  std::unique_ptr<JobFeed> feed;
  if (run.trace != nullptr) {
    feed = std::make_unique<TraceFeed>(*run.trace);
  } else {
    StreamFeedOptions feed_options;
    feed_options.format = run.format;
    feed_options.skip_bad_rows = run.skip_bad_rows;
    feed_options.load_scale = run.load_scale;
    // The pre-pass checked the ids; with skipped rows the feed must skip the same ones.
    feed_options.check_duplicate_ids = run.skip_bad_rows;
    absl::StatusOr<std::unique_ptr<TraceFileFeed>> file_feed =
        TraceFileFeed::Open(run.trace_path, *run.info, feed_options, sorted);
    if (!file_feed.ok()) return fail(file_feed.status());
    feed = std::move(*file_feed);
  }
  Replayed out;
  if (plot_delays) out.delays.emplace(*run.info);
  RunInfo run_info = run.run_info;
  run_info.policy = std::string(PolicyKindName(policy));
  SummaryBuilder summary(*run.info, run_info);
  std::optional<JobsCsvWriter> csv;
  if (!csv_folder.empty()) csv.emplace(csv_folder / "jobs.csv", &(*backend)->nodes());
  ResultsSink sink(&summary, csv ? &*csv : nullptr, out.delays ? &*out.delays : nullptr);
  Engine engine(*run.info, backend->get(), std::move(options));
  absl::StatusOr<EngineResult> result = engine.Run(feed.get(), facts, *run.node_events, &sink);
  if (!result.ok()) return fail(result.status());
  if (csv) {
    if (absl::Status s = csv->Finish(); !s.ok()) return s;
  }
  out.result = std::move(*result);
  backend->reset();
  out.summary = summary.Finish(out.result, facts.jobs);
  return out;
}

}  // namespace

int RunReplays(ReplayRun run) {
  TraceFacts facts;
  std::unique_ptr<const JobStream> sorted;  // read again by each replay
  const char* streamed = "";
  if (run.trace != nullptr) {
    facts = FactsOf(*run.trace);
  } else {
    StreamFeedOptions scan_options;
    scan_options.format = run.format;
    scan_options.skip_bad_rows = run.skip_bad_rows;
    scan_options.load_scale = run.load_scale;
    absl::StatusOr<TraceScan> scan = ScanTraceFile(run.trace_path, *run.info, scan_options);
    if (!scan.ok()) return Fail(kCmd, scan.status().message());
    for (const std::string& w : scan->warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
    facts = std::move(scan->facts);
    run.run_info.skipped_rows = scan->skipped_rows;
    sorted = std::move(scan->stream);
    streamed = " (streamed)";
  }
  run.policy_options.named_pinned_cells = facts.named_pinned_cells;

  std::filesystem::path main_folder, base_folder;
  if (run.outputs != nullptr) {
    for (auto [folder, name] : {std::pair{&main_folder, ""}, {&base_folder, "baseline-private"}}) {
      if (folder == &base_folder && !run.with_baseline) continue;
      absl::StatusOr<std::filesystem::path> staged = run.outputs->StageFolder(name);
      if (!staged.ok()) return Fail(kCmd, staged.status().message());
      *folder = *staged;
    }
  }
  absl::StatusOr<Replayed> base = absl::UnknownError("not run");
  std::thread base_thread;
  if (run.with_baseline) {
    base_thread = std::thread([&] {
      base = ReplayOne(PolicyKind::kPrivate, run, facts, sorted.get(), {}, run.options, base_folder,
                       false);
    });
  }
  ProgressBar bar(absl::StrCat("replaying ", facts.jobs, " jobs", streamed));
  EngineOptions main_options = run.options;
  if (!run.quiet) main_options.progress = [&bar](double f) { bar.Update(f); };
  absl::StatusOr<Replayed> main =
      ReplayOne(run.policy, run, facts, sorted.get(), run.policy_options, main_options, main_folder,
                run.plot);
  if (base_thread.joinable()) base_thread.join();
  bar.Clear();
  if (!main.ok()) return Fail(kCmd, main.status().message());
  if (run.policy == PolicyKind::kPrivate) {
    AddBaseline(main->summary, &main->summary);
  } else if (run.with_baseline) {
    if (!base.ok()) return Fail(kCmd, base.status().message());
    AddBaseline(base->summary, &main->summary);
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - run.wall_start).count();
  std::fputs(SummaryTable(main->summary).c_str(), stdout);
  std::fflush(stdout);
  if (run.outputs != nullptr) {
    for (absl::Status s :
         {run.outputs->Write("summary.json", SummaryToJson(main->summary)),
          run.outputs->Write("timeline.csv", TimelineCsv(main->result, *run.info))}) {
      if (!s.ok()) return Fail(kCmd, s.message());
    }
    if (run.with_baseline) {
      base->summary.all.sharing_anomaly.reset();
      for (absl::Status s :
           {run.outputs->Write("baseline-private/summary.json", SummaryToJson(base->summary)),
            run.outputs->Write("baseline-private/timeline.csv",
                               TimelineCsv(base->result, *run.info))}) {
        if (!s.ok()) return Fail(kCmd, s.message());
      }
    }
    if (run.plot) {
      absl::StatusOr<std::filesystem::path> plots = run.outputs->StageFolder("plots");
      if (!plots.ok()) return Fail(kCmd, plots.status().message());
      if (absl::Status s = PlotRun(plots->string(), main->summary, main->result, &*main->delays,
                                   *run.info, run.with_baseline ? &base->result : nullptr);
          !s.ok()) {
        return Fail(kCmd, s.message());
      }
    }
    if (absl::Status s = run.outputs->Commit(); !s.ok()) return Fail(kCmd, s.message());
    if (!run.quiet) {
      std::fprintf(stderr, "wrote %s/{summary.json,jobs.csv,timeline.csv}%s%s\n",
                   run.out_dir.c_str(), run.with_baseline ? ", baseline-private/" : "",
                   run.plot ? ", plots/" : "");
    }
  }
  if (!run.quiet) {
    const double jobs = static_cast<double>(facts.jobs) * (run.with_baseline ? 2 : 1);
    const double decisions = static_cast<double>(
        main->result.schedule_calls + (run.with_baseline ? base->result.schedule_calls : 0));
    std::fprintf(stderr,
                 "replayed %lld jobs%s under %s%s in %.2f s wall (%.0f jobs/s, %.0f "
                 "scheduling decisions/s)\n",
                 static_cast<long long>(facts.jobs), streamed,
                 std::string(PolicyKindName(run.policy)).c_str(),
                 run.with_baseline
                     ? absl::StrCat(" and ", Av(PolicyKindName(PolicyKind::kPrivate))).c_str()
                     : "",
                 wall, jobs / std::max(wall, 1e-9), decisions / std::max(wall, 1e-9));
  }
  if (!main->summary.accounting_ok) {
    return Fail(kCmd,
                "job accounting mismatch: submitted != completed + queued + running + "
                "rejected (a simulator bug)");
  }
  return kExitOk;
}

}  // namespace hived::sim

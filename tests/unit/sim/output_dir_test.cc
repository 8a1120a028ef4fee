// OutputDir (sim/common/output_dir.h) and `run --out`: a run's outputs are whole or absent, and an
// earlier run's files never look like this run's.
#include "sim/common/output_dir.h"

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "sim/cli/commands.h"
#include "sim/metrics/plot.h"
#include "support/catch.h"
#include "support/testdata.h"
#include "unit/sim/hostile_test_util.h"
#include "unit/sim/sim_test_util.h"

namespace hived::sim {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::RunArgs;
using testing::ScratchDir;
using testing::TestPath;
using testing::WriteFile;

const std::vector<std::string> kLayout = {"summary.json", "jobs.csv", "sub/a.txt", "plots/p.png"};

// Every entry under `dir`, relative, sorted.
std::vector<std::string> Listing(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    out.push_back(fs::relative(e.path(), dir).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_CASE("OutputDir: outputs appear only at Commit, all together", "[sim][unit]") {
  ScratchDir dir("outdir");
  {
    absl::StatusOr<std::unique_ptr<OutputDir>> out = OutputDir::Open(dir.path(), kLayout);
    REQUIRE(out.ok());
    REQUIRE((*out)->Write("summary.json", "{}").ok());
    REQUIRE((*out)->Write("sub/a.txt", "a").ok());
    absl::StatusOr<fs::path> plots = (*out)->StageFolder("plots");
    REQUIRE(plots.ok());
    WriteFile((*plots / "p.png").string(), "png");
    CHECK_FALSE(fs::exists(dir.path() / "summary.json"));  // only a temporary so far
    CHECK_FALSE((*out)->Write("other.txt", "x").ok());     // not in the layout
    REQUIRE((*out)->Commit().ok());
  }
  CHECK(Listing(dir.path()) ==
        std::vector<std::string>{"plots", "plots/p.png", "sub", "sub/a.txt", "summary.json"});
  CHECK(ReadFile(dir / "summary.json") == "{}");
}

TEST_CASE("OutputDir: without Commit nothing of the run is left, and Open cleared the old run",
          "[sim][unit]") {
  ScratchDir dir("outdir");
  WriteFile(dir / "summary.json", "old");
  WriteFile(dir / "notes.txt", "the user's");
  fs::create_directories(dir.path() / "sub");
  WriteFile(dir / "sub/a.txt", "old");
  WriteFile(dir / ".jobs.csv.tmp-1", "a killed run's temporary");
  {
    absl::StatusOr<std::unique_ptr<OutputDir>> out = OutputDir::Open(dir.path(), kLayout);
    REQUIRE(out.ok());
    CHECK(Listing(dir.path()) == std::vector<std::string>{"notes.txt"});
    REQUIRE((*out)->Write("summary.json", "new").ok());
    REQUIRE((*out)->Write("sub/a.txt", "new").ok());
    REQUIRE((*out)->StageFolder("plots").ok());
    // A write that fails: its temporary's name is taken by a folder.
    fs::create_directories(dir.path() / ".jobs.csv.tmp-" += std::to_string(getpid()));
    CHECK_FALSE((*out)->Write("jobs.csv", "x").ok());
    fs::remove(dir.path() / (".jobs.csv.tmp-" + std::to_string(getpid())));
  }
  CHECK(Listing(dir.path()) == std::vector<std::string>{"notes.txt"});
}

TEST_CASE("OutputDir: a layout name taken by a folder is refused before anything is removed",
          "[sim][unit]") {
  ScratchDir dir("outdir");
  WriteFile(dir / "summary.json", "old");
  fs::create_directories(dir.path() / "jobs.csv" / "inside");
  absl::StatusOr<std::unique_ptr<OutputDir>> out = OutputDir::Open(dir.path(), kLayout);
  REQUIRE_FALSE(out.ok());
  CHECK(std::string(out.status().message()).find("jobs.csv exists and is not a file") !=
        std::string::npos);
  CHECK(ReadFile(dir / "summary.json") == "old");
  // A user's file inside an output subfolder keeps the folder.
  ScratchDir dir2("outdir");
  fs::create_directories(dir2.path() / "sub");
  WriteFile(dir2 / "sub/mine.txt", "x");
  WriteFile(dir2 / "sub/a.txt", "old");
  REQUIRE(OutputDir::Open(dir2.path(), kLayout).ok());
  CHECK(Listing(dir2.path()) == std::vector<std::string>{"sub", "sub/mine.txt"});
}

TEST_CASE("OutputDir: the output folder itself can be staged (plot's charts)", "[sim][unit]") {
  ScratchDir dir("outdir");
  WriteFile(dir / "chart.png", "old");
  fs::create_directories(dir.path() / ".staging.tmp-1");  // a killed run's staging folder
  WriteFile(dir / ".staging.tmp-1/chart.png", "killed");
  WriteFile(dir / "keep.txt", "the user's");
  {
    absl::StatusOr<std::unique_ptr<OutputDir>> out =
        OutputDir::Open(dir.path(), {"chart.png", "chart.gp"});
    REQUIRE(out.ok());
    CHECK(Listing(dir.path()) == std::vector<std::string>{"keep.txt"});
    absl::StatusOr<fs::path> staged = (*out)->StageFolder("");
    REQUIRE(staged.ok());
    WriteFile((*staged / "chart.png").string(), "new");
    WriteFile((*staged / "chart.gp").string(), "script");
    WriteFile((*staged / "scratch.tmp").string(), "not in the layout: dropped");
    REQUIRE((*out)->Commit().ok());
  }
  CHECK(Listing(dir.path()) == std::vector<std::string>{"chart.gp", "chart.png", "keep.txt"});
  CHECK(ReadFile(dir / "chart.png") == "new");
}

TEST_CASE("OutputDir: a folder Open created is removed without Commit and kept with it",
          "[sim][unit]") {
  ScratchDir dir("outdir");
  WriteFile(dir / "notes.txt", "the user's");
  {
    absl::StatusOr<std::unique_ptr<OutputDir>> out = OutputDir::Open(dir / "a/b/", kLayout);
    REQUIRE(out.ok());
    REQUIRE(fs::is_directory(dir.path() / "a" / "b"));
    REQUIRE((*out)->Write("sub/a.txt", "new").ok());
  }
  CHECK(Listing(dir.path()) == std::vector<std::string>{"notes.txt"});
  // A folder that existed before stays, and so does one holding a user's file.
  fs::create_directories(dir.path() / "kept");
  { REQUIRE(OutputDir::Open(dir / "kept/new", kLayout).ok()); }
  CHECK(Listing(dir.path()) == std::vector<std::string>{"kept", "notes.txt"});
  {
    absl::StatusOr<std::unique_ptr<OutputDir>> out = OutputDir::Open(dir / "c", kLayout);
    REQUIRE(out.ok());
    WriteFile(dir / "c/mine.txt", "x");
  }
  CHECK(fs::exists(dir.path() / "c" / "mine.txt"));
  {
    absl::StatusOr<std::unique_ptr<OutputDir>> out = OutputDir::Open(dir / "d", kLayout);
    REQUIRE(out.ok());
    REQUIRE((*out)->Write("summary.json", "new").ok());
    REQUIRE((*out)->Commit().ok());
  }
  CHECK(ReadFile(dir / "d/summary.json") == "new");
}

int Run(const std::string& out, std::vector<std::string> extra = {},
        const std::string& trace = TestPath("traces/policies.csv")) {
  std::vector<std::string> args = {
      "run", "--config", TestPath("sim/small.yaml"), "--trace", trace, "--out", out, "--quiet"};
  args.insert(args.end(), extra.begin(), extra.end());
  return RunArgs(RunCommand, args);
}

TEST_CASE("run --out: an unwritable jobs.csv fails the run and leaves no other output",
          "[sim][unit]") {
  ScratchDir dir("run");
  fs::create_directories(dir.path() / "jobs.csv" / "x");  // cannot become a file
  CHECK(Run(dir.path().string()) == 1);
  CHECK_FALSE(fs::exists(dir.path() / "summary.json"));
  CHECK_FALSE(fs::exists(dir.path() / "timeline.csv"));
  CHECK_FALSE(fs::exists(dir.path() / "baseline-private"));
}

TEST_CASE("run --out: a failed rerun leaves none of the previous run's files", "[sim][unit]") {
  ScratchDir dir("run");
  REQUIRE(Run(dir.path().string()) == 0);
  CHECK(Listing(dir.path()) ==
        std::vector<std::string>{"baseline-private", "baseline-private/jobs.csv",
                                 "baseline-private/summary.json", "baseline-private/timeline.csv",
                                 "jobs.csv", "summary.json", "timeline.csv"});
  WriteFile(dir / "bad.csv",
            "job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration\n"
            "j,-1,A,0,1,1,,10\n");
  CHECK(Run(dir.path().string(), {}, dir / "bad.csv") == 1);
  CHECK(Listing(dir.path()) == std::vector<std::string>{"bad.csv"});
}

TEST_CASE("run --out refuses to clear an output name that is one of its inputs", "[sim][unit]") {
  ScratchDir dir("run");
  const std::string trace = dir / "jobs.csv";
  WriteFile(trace, ReadFile(TestPath("traces/policies.csv")));
  CHECK(Run(dir.path().string(), {}, trace) == 2);
  CHECK(ReadFile(trace) == ReadFile(TestPath("traces/policies.csv")));
  CHECK(Listing(dir.path()) == std::vector<std::string>{"jobs.csv"});
}

TEST_CASE("run --out --baseline none removes an earlier run's baseline-private/", "[sim][unit]") {
  ScratchDir dir("run");
  REQUIRE(Run(dir.path().string()) == 0);
  REQUIRE(fs::exists(dir.path() / "baseline-private" / "summary.json"));
  REQUIRE(Run(dir.path().string(), {"--baseline", "none"}) == 0);
  CHECK(Listing(dir.path()) ==
        std::vector<std::string>{"jobs.csv", "summary.json", "timeline.csv"});
}

TEST_CASE("compare and plot refuse hostile summaries with a located error", "[sim][unit]") {
  ScratchDir dir("compare");
  REQUIRE(Run(dir / "a") == 0);
  const std::string good = dir / "a";
  CHECK(RunArgs(CompareCommand, {"compare", good, good}) == 0);
  WriteFile(dir / "deep.json", std::string(10000, '['));
  WriteFile(dir / "huge.json",
            "{\"schema\": \"hived-sim.summary/1\", \"overall\": "
            "{\"submitted\": 1e300}}");
  for (const std::string& bad :
       {dir / "deep.json", dir / "huge.json", std::string("/dev/zero"), dir / "missing.json"}) {
    CAPTURE(bad);
    CHECK(RunArgs(CompareCommand, {"compare", good, bad}) == 1);
  }
  CHECK(RunArgs(CompareCommand, {"compare", good, good, "--max-input-mb", "-1"}) == 2);
  // An oversized timeline fails plot instead of silently drawing an empty chart.
  WriteFile(dir / "a/timeline.csv", std::string(2 * 1024 * 1024, '\n'));
  CHECK(RunArgs(PlotCommand, {"plot", good, "--out", dir / "p", "--max-input-mb", "1"}) == 1);
  CHECK_FALSE(fs::exists(dir.path() / "p" / "anomaly_by_policy.png"));
}

TEST_CASE("plot draws runs without a private baseline (no anomaly) instead of failing",
          "[sim][unit]") {
  if (!GnuplotAvailable()) HIVED_SKIP_TEST("gnuplot is not installed");
  ScratchDir dir("plot");
  REQUIRE(Run(dir / "a", {"--baseline", "none"}) == 0);
  REQUIRE(Run(dir / "b", {"--baseline", "none", "--policy", "quota"}) == 0);
  CHECK(RunArgs(PlotCommand, {"plot", dir / "a", dir / "b", "--out", dir / "p"}) == 0);
  CHECK(fs::file_size(dir.path() / "p" / "anomaly_by_policy.png") > 0);
  CHECK(ReadFile(dir / "p/anomaly_by_policy.gp").find("no anomaly to draw") != std::string::npos);
}

TEST_CASE("PlotRuns: a gnuplot failure quotes gnuplot's log (its folder is gone after)",
          "[sim][unit]") {
  ScratchDir dir("plot");
  fs::create_directories(dir.path() / "bin");
  WriteFile(dir / "bin/gnuplot",
            "#!/bin/sh\n[ \"$1\" = --version ] && exit 0\necho 'line 3: boom' >&2\nexit 1\n");
  fs::permissions(dir.path() / "bin" / "gnuplot", fs::perms::owner_all);
  const char* old_path = std::getenv("PATH");
  const std::string saved = old_path ? old_path : "";
  ::setenv("PATH", (dir / "bin").c_str(), 1);
  PlotInput run;
  run.label = "a";
  const absl::Status s = PlotRuns(dir / "p", {run});
  ::setenv("PATH", saved.c_str(), 1);
  REQUIRE_FALSE(s.ok());
  CHECK(std::string(s.message()) == "gnuplot failed on anomaly_by_policy.gp:\nline 3: boom\n");
}

TEST_CASE("run and openb-replay on a bad input leave no output folder behind", "[sim][unit]") {
  ScratchDir dir("run");
  WriteFile(dir / "bad.csv",
            "job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration\n"
            "j,-1,A,0,1,1,,10\n");
  CHECK(Run(dir / "out/run", {}, dir / "bad.csv") == 1);
  CHECK(Run(dir / "out/missing", {}, dir / "missing.csv") == 1);
  WriteFile(dir / "pods.csv", "name,cpu_milli\n");
  CHECK(
      RunArgs(OpenbReplayCommand, {"openb-replay", "--nodes", TestPath("openb/nodes.csv"), "--pods",
                                   dir / "pods.csv", "--out", dir / "out/openb", "--quiet"}) == 1);
  CHECK(Listing(dir.path()) == std::vector<std::string>{"bad.csv", "pods.csv"});
}

}  // namespace
}  // namespace hived::sim

// Cost and GPU speed in capacity planning (issue 31, item 3): the `--vc-speed` trace
// transform, `plan --gpu-speed` for a moved VC, `plan --price` and `--try-types`.
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "planning_test_util.h"
#include "sim/planning/plan_output.h"
#include "sim/trace/trace_speed.h"
#include "sim/trace/trace_transform.h"
#include "support/catch.h"

namespace hived::sim {
namespace {

using testing::ReadAll;

Trace ThreeJobs() {
  Trace t;
  for (const auto& [id, vc, duration] : std::vector<std::tuple<std::string, std::string, Time>>{
           {"a", "x", 3600}, {"b", "y", 3600}, {"c", "x", 3}}) {
    TraceJob j;
    j.id = JobId(id);
    j.vc = t.Intern(vc);
    j.pods = 1;
    j.gpus_per_pod = 1;
    j.total_gpus = 1;
    j.duration = duration;
    t.jobs.push_back(j);
  }
  return t;
}

TEST_CASE("VcSpeed: divides the VC's durations by F and leaves other VCs alone",
          "[sim][planning][unit]") {
  Trace t = ThreeJobs();
  REQUIRE(ApplyVcSpeeds({{"x", 2}}, &t).ok());
  CHECK(t.jobs[0].duration == 1800);
  CHECK(t.jobs[1].duration == 3600);
  CHECK(t.jobs[2].duration == 2);  // 1.5 s rounds to 2
  REQUIRE(ApplyVcSpeeds({{"x", 1000}}, &t).ok());
  CHECK(t.jobs[2].duration == 1);  // never below 1 s
  SECTION("slower is longer") {
    Trace u = ThreeJobs();
    REQUIRE(ApplyVcSpeeds({{"y", 0.5}}, &u).ok());
    CHECK(u.jobs[1].duration == 7200);
  }
  SECTION("a VC without jobs is an error naming the VCs present") {
    Trace u = ThreeJobs();
    const absl::Status s = ApplyVcSpeeds({{"zz", 2}}, &u);
    CHECK(std::string(s.message()) ==
          "--vc-speed: no job of the trace has VC 'zz' (VCs with "
          "jobs: x, y)");
    CHECK(u.jobs[0].duration == 3600);
  }
  SECTION("the flag parses and bad items are refused") {
    TraceTransformFlags f;
    f.vc_speed = "x=2,y=0.5";
    absl::StatusOr<TraceTransforms> ok = ParseTraceTransforms(f);
    REQUIRE(ok.ok());
    CHECK(ok->vc_speeds.size() == 2);
    CHECK(TraceTransformArgs(f).back() == "--vc-speed=x=2,y=0.5");
    for (const char* bad : {"x", "x=0", "x=-1", "x=abc", "x=2000", "x=2,x=3", "=2"}) {
      CAPTURE(bad);
      f.vc_speed = bad;
      CHECK(!ParseTraceTransforms(f).ok());
    }
  }
  CHECK(SpeedRatio({{"K80", 1}, {"A100", 4}}, "K80", "A100") == 4);
  CHECK(SpeedRatio({{"A100", 4}}, "P100", "V100") == 1);
}

TEST_CASE("WaitByHour: mean wait per submission hour and day, -1 where no job was submitted",
          "[sim][planning][unit]") {
  const std::string csv =
      "job_id,vc,priority,gpus,pods,submit,first_start,end,queuing_delay\n"
      "a,x,0,1,1,0,0,10,0\n"
      "b,x,0,1,1,1800,3600,3700,1800\n"
      "c,x,0,1,1,90000,93600,93700,3600\n"  // day 1, hour 1
      "d,y,0,1,1,0,7200,7300,7200\n";
  const std::vector<std::vector<double>> g = WaitByHour(csv, "x");
  REQUIRE(g.size() == 7);
  REQUIRE(g[0].size() == 24);
  CHECK(g[0][0] == 900);  // (0 + 1800) / 2: a zero wait is a value, not a blank
  CHECK(g[1][1] == 3600);
  CHECK(g[0][1] == -1);  // no job
  CHECK(g[6][23] == -1);
  CHECK(WaitByHour(csv, "y")[0][0] == 7200);
  CHECK(WaitByHour(csv, "none")[0][0] == -1);
}

TEST_CASE("InputComments: the input config's leading comments, marked as the input's",
          "[sim][planning][unit]") {
  CHECK(InputComments("# Sized for X.\n#\n# 15 VCs.\nphysicalCluster:\n# inner\n") ==
        "# Input config comments (they describe the input, not this file):\n# | Sized for X.\n"
        "# | \n# | 15 VCs.\n");
  CHECK(InputComments("physicalCluster:\n# inner\n").empty());
}

#ifdef HIVED_SIM_EXE
using testing::RunSim;
using testing::TempDir;

const char* kTwoTypes =
    " --config tests/testdata/sim/two-chains.yaml --trace "
    "tests/testdata/planning/two-types-trace.csv";

// jobs.csv: job id -> (end - first_start, queuing_delay).
std::map<std::string, std::pair<double, double>> RunTimes(const std::string& file) {
  std::map<std::string, std::pair<double, double>> out;
  std::istringstream in(ReadAll(file));
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> cols = absl::StrSplit(line, ',');
  auto col = [&](const std::string& name) {
    return static_cast<size_t>(std::find(cols.begin(), cols.end(), name) - cols.begin());
  };
  while (std::getline(in, line)) {
    const std::vector<std::string> f = absl::StrSplit(line, ',');
    if (f.size() < cols.size()) continue;
    out[f[col("job_id")]] = {std::stod(f[col("end")]) - std::stod(f[col("first_start")]),
                             std::stod(f[col("queuing_delay")])};
  }
  return out;
}

TEST_CASE("Plan: --gpu-speed halves a moved VC's durations in the replay (issue 31)",
          "[sim][planning][unit]") {
  TempDir tmp("plan-speed");
  // `old` moved to A100 nodes at the same size (its 12 K80 GPUs -> 2 A100 nodes) with and
  // without the A100 twice as fast: the plan's probes carry --vc-speed old=2.
  const std::string args = std::string("plan --min-jobs 1 --min 2 --max 2") + kTwoTypes +
                           " --vc old --move-vc old=A100-RACK.A100-NODE"
                           " --cell-type A100-RACK.A100-NODE --target 'p95_wait<=9h'";
  const testing::SimResult fast =
      RunSim(args + " --gpu-speed K80=1,A100=2 --out " + (tmp / "fast"), tmp / "log");
  INFO(fast.output);
  REQUIRE(fast.exit_code == 0);
  const std::string probe_args = ReadAll(tmp / "fast/probes/old/2/args.txt");
  CHECK(absl::StrContains(probe_args, "--vc-speed=old=2\n"));
  const testing::SimResult same = RunSim(args + " --out " + (tmp / "same"), tmp / "log");
  REQUIRE(same.exit_code == 0);
  CHECK(!absl::StrContains(ReadAll(tmp / "same/probes/old/2/args.txt"), "vc-speed"));
  // Replay the moved config both ways: durations halve, waits do not grow.
  const std::string run = std::string("run --config ") + (tmp / "fast/sized.yaml") +
                          " --trace tests/testdata/planning/two-types-trace.csv --quiet "
                          "--move-vc old=A100-RACK.A100-NODE --baseline none";
  REQUIRE(RunSim(run + " --vc-speed old=2 --out " + (tmp / "r2"), tmp / "log").exit_code == 0);
  REQUIRE(RunSim(run + " --out " + (tmp / "r1"), tmp / "log").exit_code == 0);
  const auto twice = RunTimes(tmp / "r2/jobs.csv");
  const auto once = RunTimes(tmp / "r1/jobs.csv");
  REQUIRE(twice.size() == 9);
  REQUIRE(once.size() == 9);
  double wait2 = 0, wait1 = 0;
  for (const auto& [id, times] : once) {
    CAPTURE(id);
    if (id[0] == 'o') {
      CHECK(times.first == 3600);
      CHECK(twice.at(id).first == 1800);
      CHECK(twice.at(id).second <= times.second);
      wait2 += twice.at(id).second;
      wait1 += times.second;
    } else {
      CHECK(twice.at(id).first == times.first);  // the other VC is unchanged
    }
  }
  CHECK(wait2 < wait1);  // two nodes hold 4 jobs: the second wave waits 0.5 h, not 1 h
}

TEST_CASE("Plan: --try-types with --price keeps the cheaper type when both meet (issue 31)",
          "[sim][planning][unit]") {
  TempDir tmp("plan-price");
  // Eight 1-h 4-GPU jobs, p95 <= 1 h. On K80 (4-GPU nodes): 4 nodes = 16 GPUs. On A100
  // (8-GPU nodes, twice as fast: 0.5-h jobs): 2 nodes = 16 GPUs (1 node: waits up to 1.5 h).
  const std::string args = std::string("plan --min-jobs 1") + kTwoTypes +
                           " --vc old --target 'p95_wait<=1h' --gpu-speed A100=2"
                           " --try-types K80-RACK.K80-NODE,A100-RACK.A100-NODE --price ";
  SECTION("K80 cheaper") {
    const testing::SimResult r = RunSim(args + "K80=0.5,A100=3 --out " + (tmp / "k"), tmp / "log");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(absl::StrContains(r.output,
                            "K80-RACK.K80-NODE                 1      4     16         "
                            "8.00        1.000 h  <- cheapest meeting"));
    CHECK(absl::StrContains(r.output, "A100-RACK.A100-NODE               2      2     16"));
    const std::string sized = ReadAll(tmp / "k/sized.yaml");
    CHECK(absl::StrContains(sized, "# Prices (USD per GPU-hour): K80=0.5,A100=3"));
    CHECK(absl::StrContains(r.output, "cost: 16 K80 GPUs x $0.50/GPU-h = $8.00/h"));
    const std::string md = ReadAll(tmp / "k/report.md");
    CHECK(absl::StrContains(md, "| `old` | K80-RACK.K80-NODE | 3 | 4 | 16 | 1.000 h | $8.00/h |"));
    CHECK(absl::StrContains(md, "![wait-old.png](wait-old.png)"));
    CHECK(std::filesystem::exists(tmp / "k/wait-old.png"));
  }
  SECTION("A100 cheaper") {
    const testing::SimResult r = RunSim(args + "K80=5,A100=1 --out " + (tmp / "a"), tmp / "log");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(absl::StrContains(r.output, "16.00        0.500 h  <- cheapest meeting"));
    CHECK(absl::StrContains(r.output, "cost: 16 A100 GPUs x $1.00/GPU-h = $16.00/h"));
    CHECK(absl::StrContains(ReadAll(tmp / "a/sized.yaml"), "A100-RACK.A100-NODE"));
  }
  SECTION("a type without a price is a usage error") {
    const testing::SimResult r = RunSim(args + "K80=5 --out " + (tmp / "x"), tmp / "log");
    CHECK(r.exit_code == 2);
    CHECK(absl::StrContains(r.output, "--price has no price for GPU type A100"));
  }
}
TEST_CASE("Compare: --price ranks the runs meeting --target by money (issue 31)",
          "[sim][planning][unit]") {
  TempDir tmp("compare-price");
  // Two sized configs of VC old: 4 K80 nodes (16 GPUs) and 2 A100 nodes (16 GPUs), both
  // meeting p95 <= 1 h (the A100 one with its jobs twice as fast); `fast` has 8 A100 GPUs.
  const std::string plan = std::string("plan --min-jobs 1") + kTwoTypes +
                           " --vc old --target 'p95_wait<=1h' --gpu-speed A100=2 --try-types ";
  REQUIRE(RunSim(plan + "K80-RACK.K80-NODE --out " + (tmp / "k"), tmp / "log").exit_code == 0);
  REQUIRE(RunSim(plan + "A100-RACK.A100-NODE --out " + (tmp / "a"), tmp / "log").exit_code == 0);
  const std::string run = " --trace tests/testdata/planning/two-types-trace.csv --quiet";
  REQUIRE(
      RunSim("run --config " + (tmp / "k/sized.yaml") + run + " --out " + (tmp / "rk"), tmp / "log")
          .exit_code == 0);
  REQUIRE(RunSim("run --config " + (tmp / "a/sized.yaml") + run + " --vc-speed old=2 --out " +
                     (tmp / "ra"),
                 tmp / "log")
              .exit_code == 0);
  const std::string compare = "compare --label k80 " + (tmp / "rk") + " --label a100 " +
                              (tmp / "ra") + " --target 'p95_wait<=1h' --price ";
  const testing::SimResult cheap_k80 = RunSim(compare + "K80=0.5,A100=3", tmp / "log");
  INFO(cheap_k80.output);
  REQUIRE(cheap_k80.exit_code == 0);
  // old keeps its pinned K80 node (4 GPUs) too. k80: 20 x 0.5 + 8 x 3 = 34; a100: 24 x 3 + 4 x 0.5
  // = 74.
  CHECK(absl::StrContains(cheap_k80.output,
                          "cheapest meeting the target: k80 (28 reserved "
                          "GPUs, $34.00/h)"));
  const testing::SimResult cheap_a100 = RunSim(compare + "K80=5,A100=1", tmp / "log");
  INFO(cheap_a100.output);
  // k80: 20 x 5 + 8 = 108; a100: 24 + 4 x 5 = 44.
  CHECK(absl::StrContains(cheap_a100.output,
                          "cheapest meeting the target: a100 (28 reserved "
                          "GPUs, $44.00/h)"));
  CHECK(RunSim(compare + "K80=x", tmp / "log").exit_code == 2);
}

TEST_CASE("Compare: bootstrap sweeps per GPU type say how sure the cheaper type is (issue 31)",
          "[sim][planning][unit]") {
  TempDir tmp("compare-sure");
  // VC old sized on K80 (4 nodes) and on twice-as-fast A100 (2 nodes), as above; then each
  // sized config is replayed over resampled traces (--bootstrap days, a sweep per type) and
  // the two sweeps are compared side by side, ranked by money.
  const std::string plan = std::string("plan --min-jobs 1") + kTwoTypes +
                           " --vc old --target 'p95_wait<=1h' --gpu-speed A100=2 --try-types ";
  REQUIRE(RunSim(plan + "K80-RACK.K80-NODE --out " + (tmp / "k"), tmp / "log").exit_code == 0);
  REQUIRE(RunSim(plan + "A100-RACK.A100-NODE --out " + (tmp / "a"), tmp / "log").exit_code == 0);
  // Day 0: the eight 1-h jobs at once; day 1: two. Resampled days differ, so do the waits.
  {
    std::ofstream t(tmp / "days.csv");
    t << "job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration\n";
    for (int i = 0; i < 8; ++i) t << "o" << i << ",0,old,0,1,4,,3600\n";
    t << "f1,0,fast,0,1,8,,3601\n";
    for (int i = 0; i < 2; ++i) t << "p" << i << ",90000,old,0,1,4,,3600\n";
  }
  const auto sweep = [&](const std::string& config, const std::string& trace,
                         const std::string& extra, const std::string& out) {
    return RunSim("sweep --config " + (tmp / config) + " --trace " + trace +
                      " --bootstrap days --seeds 1-6 --jobs 2 --run-args '--baseline none'" +
                      extra + " --out " + (tmp / out),
                  tmp / "log")
        .exit_code;
  };
  const std::string compare = " --target 'p95_wait<=1h' --price K80=0.5,A100=3";
  SECTION("a trace whose days differ: intervals, and 95% sure only inside the target") {
    REQUIRE(sweep("k/sized.yaml", tmp / "days.csv", "", "sk") == 0);
    REQUIRE(sweep("a/sized.yaml", tmp / "days.csv", " --vc-speed old=2", "sa") == 0);
    const testing::SimResult r = RunSim("compare --label k80 " + (tmp / "sk/sweep.csv") +
                                            " --label a100 " + (tmp / "sa/sweep.csv") + compare,
                                        tmp / "log");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(absl::StrContains(r.output,
                            "cheapest meeting the target: k80 (28 reserved GPUs, $34.00/h)"));
    // k80 is cheaper and meets the target on the mean (p95 0.67 h), but one resample in six
    // has its 1-h waits: not 95% sure (until the fix it said "seeds change nothing"). a100,
    // twice as fast, is inside the target with 95% confidence.
    CHECK(absl::StrContains(r.output, "yes (on the mean, not 95% sure)"));
    CHECK(absl::StrContains(r.output,
                            "a100                                            28     74.00 old "
                            "0.333±0.27          yes (95% sure)"));
    CHECK(absl::StrContains(
        r.output, "cheapest meeting it with 95% confidence: a100 (28 reserved GPUs, $74.00/h)"));
    CHECK_FALSE(absl::StrContains(r.output, "seeds change nothing"));
  }
  SECTION("a trace whose days are alike: no interval, said so") {
    const std::string same =
        std::string(HIVED_SOURCE_DIR) + "/tests/testdata/planning/two-types-trace.csv";
    REQUIRE(sweep("k/sized.yaml", same, "", "sk") == 0);
    REQUIRE(sweep("a/sized.yaml", same, " --vc-speed old=2", "sa") == 0);
    const testing::SimResult r = RunSim("compare --label k80 " + (tmp / "sk/sweep.csv") +
                                            " --label a100 " + (tmp / "sa/sweep.csv") + compare,
                                        tmp / "log");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(absl::StrContains(r.output, "yes (seeds change nothing: no interval)"));
    CHECK_FALSE(absl::StrContains(r.output, "95% sure"));
    CHECK_FALSE(absl::StrContains(r.output, "95% confidence"));
    CHECK(absl::StrContains(r.output,
                            "cheapest meeting the target: k80 (28 reserved GPUs, $34.00/h)"));
  }
  SECTION("runs and sweep CSVs do not mix") {
    REQUIRE(sweep("k/sized.yaml", tmp / "days.csv", "", "sk") == 0);
    CHECK(RunSim("compare " + (tmp / "sk/sweep.csv") + " " + (tmp / "sk/runs/000000/out") + compare,
                 tmp / "log")
              .exit_code == 2);
  }
}

TEST_CASE("Plan: --all-vcs in joint rounds gives the one-by-one probes and answers (issue 31)",
          "[sim][planning][unit]") {
  TempDir tmp("plan-joint");
  for (const char* jobs : {"1", "3"}) {
    CAPTURE(jobs);
    const std::string args = std::string("plan --min-jobs 1") + kTwoTypes +
                             " --all-vcs --target 'p95_wait<=1h' --jobs " + jobs;
    const testing::SimResult joint = RunSim(args + " --out " + (tmp / "j"), tmp / "log");
    INFO(joint.output);
    REQUIRE(joint.exit_code == 0);
    const testing::SimResult one = RunSim(args + " --one-by-one --out " + (tmp / "o"), tmp / "log");
    REQUIRE(one.exit_code == 0);
    CHECK(absl::StrContains(joint.output, "chosen: 4 cells (16 GPUs; now 3)"));
    CHECK(ReadAll(tmp / "j/report.csv") == ReadAll(tmp / "o/report.csv"));
    auto body = [](const std::string& file) {  // the report without the output folder
      const std::string text = ReadAll(file);
      return text.substr(0, text.find("sized config:"));
    };
    CHECK(body(tmp / "j/report.txt") == body(tmp / "o/report.txt"));
    CHECK(!absl::StrContains(joint.output, "differs from its probe"));
    // Joint: one folder per replay of a round, not one per VC and size.
    CHECK(std::filesystem::exists(tmp / "j/probes/round0-0/out/summary.json"));
    CHECK(std::filesystem::exists(tmp / "o/probes/old"));
  }
}
#endif

}  // namespace
}  // namespace hived::sim

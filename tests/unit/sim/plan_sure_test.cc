// How sure a plan's sizes are (issue 31 item 4): `plan --resamples N` replays the sized config
// on N resampled traces (a block bootstrap over days) and reports per VC the share meeting
// the target.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "planning_test_util.h"
#include "sim/planning/plan_search.h"
#include "support/catch.h"

namespace hived::sim {
namespace {

using testing::ReadAll;
using testing::RunSim;
using testing::TempDir;

TEST_CASE("Plan: a resample's arguments replace the seed and add the bootstrap once",
          "[sim][planning][unit]") {
  CHECK(ResampleArgs({"--baseline=none", "--seed=1", "--vc-speed=a=2"}, "days", 3) ==
        std::vector<std::string>{"--baseline=none", "--vc-speed=a=2", "--bootstrap=days",
                                 "--seed=3"});
  // A plan already on a resampled trace keeps its unit.
  CHECK(ResampleArgs({"--bootstrap=weeks", "--seed=1"}, "weeks", 7) ==
        std::vector<std::string>{"--bootstrap=weeks", "--seed=7"});
}

TEST_CASE("Plan: SurenessLevel is the value 95% of the resamples do at least as well as",
          "[sim][planning][unit]") {
  VcSureness s;
  for (int i = 1; i <= 20; ++i) s.values.push_back(static_cast<double>(i));
  PlanTarget le;
  le.op = PlanTarget::Op::kLe;
  CHECK(*SurenessLevel(le, s) == 19);  // nearest rank: the 19th of 20
  PlanTarget ge;
  ge.op = PlanTarget::Op::kGe;
  CHECK(*SurenessLevel(ge, s) == 2);
  s.values.push_back(std::nullopt);
  CHECK_FALSE(SurenessLevel(le, s).has_value());
}

TEST_CASE("Plan: --all-vcs --resamples says how sure each VC's size is (issue 31)",
          "[sim][planning][unit]") {
  TempDir tmp("plan-sure");
  // Day 0: eight 1-h jobs of VC old at once; day 1: two. VC fast: one job a day, never
  // waiting. Resampled days change old's waits (two copies of day 0 wait more) but not fast's.
  {
    std::ofstream t(tmp / "days.csv");
    t << "job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration\n";
    for (int i = 0; i < 8; ++i) t << "o" << i << ",0,old,0,1,4,,3600\n";
    t << "f0,0,fast,0,1,8,,3600\n";
    for (int i = 0; i < 2; ++i) t << "p" << i << ",90000,old,0,1,4,,3600\n";
    t << "f1,90000,fast,0,1,8,,3600\n";
  }
  const std::string cmd = "plan --config tests/testdata/sim/two-chains.yaml --trace " +
                          (tmp / "days.csv") +
                          " --all-vcs --min-jobs 1 --target 'mean_wait<=0.45h' --jobs 2 "
                          "--resamples 8 --out ";
  const testing::SimResult r = RunSim(cmd + (tmp / "p"), tmp / "log");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(absl::StrContains(r.output,
                          "how sure: the sized config replayed on 8 resampled traces "
                          "(--bootstrap days, seeds 2-9)"));
  // fast never waits: every resample meets. old's size (4 nodes: mean 0.4 h on the trace)
  // misses in the resamples with day 0 twice (mean 0.5 h).
  CHECK(
      absl::StrContains(r.output, "  VC           meets in                  95% level  verdict\n"));
  CHECK(absl::StrContains(
      r.output, "  fast         8 of 8 (100%)               0.000 h  meets in every resample\n"));
  const size_t old_at = r.output.find("\n  old          ");
  REQUIRE(old_at != std::string::npos);
  const std::string old_line =
      r.output.substr(old_at + 1, r.output.find('\n', old_at + 1) - old_at);
  CHECK_FALSE(absl::StrContains(old_line, "8 of 8"));
  CHECK(absl::StrContains(old_line, "0.500 h  NOT 95% sure"));
  CHECK(absl::StrContains(r.output, "needs more to be sure"));
  // Which resample misses, so it can be planned on (--bootstrap days --seed S).
  CHECK(absl::StrContains(r.output, "  old misses with seed(s) "));
  CHECK_FALSE(absl::StrContains(r.output, "  fast misses"));
  const std::string md = ReadAll(tmp / "p/report.md");
  CHECK(absl::StrContains(md, "| meets in resamples; 95% level |"));
  CHECK(absl::StrContains(md, " 8 of 8 (100%); 95%: 0.000 h |"));
  // Deterministic for a fixed seed: a second plan reports the same.
  const testing::SimResult again = RunSim(cmd + (tmp / "q"), tmp / "log");
  REQUIRE(again.exit_code == 0);
  const std::string report = ReadAll(tmp / "p/report.txt");
  const std::string report2 = ReadAll(tmp / "q/report.txt");
  const auto section = [](const std::string& text) {
    const size_t at = text.find("how sure");
    return text.substr(at, text.find("sized config:") - at);
  };
  CHECK(section(report) == section(report2));
  CHECK(absl::StrContains(section(report), "  old          7 of 8 (88%)"));
  // A trace whose days are alike resamples to itself: every VC meets in every resample.
  const testing::SimResult same = RunSim(
      "plan --config tests/testdata/sim/two-chains.yaml --trace "
      "tests/testdata/planning/two-types-trace.csv --vc old --min-jobs 1 "
      "--target 'p95_wait<=1h' --resamples 4 --out " +
          (tmp / "s"),
      tmp / "log");
  INFO(same.output);
  REQUIRE(same.exit_code == 0);
  CHECK(absl::StrContains(same.output, "  old          4 of 4 (100%)"));
  CHECK(RunSim(cmd + (tmp / "x") + " --resample-by months", tmp / "log").exit_code == 2);
  CHECK(RunSim(cmd + (tmp / "x") + " --resample-by jobs --bootstrap days", tmp / "log").exit_code ==
        2);
}

TEST_CASE("Plan chart: values spanning far past the target go on a log axis (issue 31)",
          "[sim][planning][unit]") {
  if (std::system("gnuplot --version >/dev/null 2>&1") != 0) return;  // charts need gnuplot
  TempDir tmp("plan-log");
  const std::string cmd =
      "plan --config tests/testdata/planning/small.yaml --trace "
      "tests/testdata/planning/small-trace.csv --vc a --min-jobs 1 --out ";
  // VC a's p95 goes from 5 h (1 node) to 0 (6 nodes): 300 x a 1-min target, a log axis with
  // the zeros at the floor (target / 100), said on the chart.
  REQUIRE(RunSim(cmd + (tmp / "log") + " --target 'p95_wait<=1m'", tmp / "out").exit_code == 0);
  const std::string log_gp = ReadAll(tmp / "log/plan-a.gp");
  CHECK(absl::StrContains(log_gp, "set logscale y\nset format y '%g'\nset yrange [5.55556e-05:*]"));
  CHECK(absl::StrContains(log_gp, "\\nlog scale; values below target/100 drawn at target/100"));
  CHECK(absl::StrContains(ReadAll(tmp / "log/plan-a.dat"), "6 0.000166667 1\n"));
  CHECK(std::filesystem::exists(tmp / "log/plan-a.png"));
  // 5 h against a 1-h target: a linear axis from 0.
  REQUIRE(RunSim(cmd + (tmp / "lin") + " --target 'p95_wait<=1h'", tmp / "out").exit_code == 0);
  const std::string lin_gp = ReadAll(tmp / "lin/plan-a.gp");
  CHECK_FALSE(absl::StrContains(lin_gp, "logscale"));
  CHECK(absl::StrContains(lin_gp, "set yrange [0:*]"));
}

TEST_CASE("Compare chart: a VC dwarfing the rest puts the bars on a log axis (issue 31)",
          "[sim][planning][unit]") {
  if (std::system("gnuplot --version >/dev/null 2>&1") != 0) return;  // charts need gnuplot
  TempDir tmp("compare-log");
  // VC a: six 1-h jobs on one node, a mean wait of 2.5 h; VC b: two 10-s jobs on its node,
  // a mean wait of 5 s: 1800x apart.
  {
    std::ofstream t(tmp / "t.csv");
    t << "job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration\n";
    for (int i = 0; i < 6; ++i) t << "a" << i << ",0,a,0,1,2,,3600\n";
    for (int i = 0; i < 2; ++i) t << "b" << i << ",0,b,0,1,2,,10\n";
  }
  REQUIRE(RunSim("run --config tests/testdata/planning/small.yaml --quiet --baseline none "
                 "--trace " +
                     (tmp / "t.csv") + " --out " + (tmp / "r"),
                 tmp / "log")
              .exit_code == 0);
  const testing::SimResult r = RunSim("compare --label x " + (tmp / "r") + " --label y " +
                                          (tmp / "r") + " --out " + (tmp / "charts"),
                                      tmp / "log");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const std::string gp = ReadAll(tmp / "charts/mean_wait_by_vc.gp");
  CHECK(absl::StrContains(gp, "set logscale y"));
  CHECK(absl::StrContains(gp, "log scale (one VC dwarfs the rest)"));
  CHECK(std::filesystem::exists(tmp / "charts/mean_wait_by_vc.png"));
}

}  // namespace
}  // namespace hived::sim

#include "sim/planning/sweep.h"

#include "absl/strings/match.h"
#include "planning_test_util.h"
#include "support/catch.h"

namespace hived::sim {
namespace {

using testing::ReadAll;

SweepGrid Grid() {
  SweepGrid g;
  g.config = "c.yaml";
  g.trace = "t.csv";
  g.axes = {{SweepAxis::Kind::kScale, "scale", "", "", {"0.5", "1"}},
            {SweepAxis::Kind::kRunFlag, "policy", "policy", "", {"hived", "quota", "private"}},
            {SweepAxis::Kind::kRunFlag, "seed", "seed", "", {"1", "2"}}};
  return g;
}

TEST_CASE("Sweep: runs are numbered in grid order with the seed fastest", "[sim][planning][unit]") {
  const SweepGrid g = Grid();
  CHECK(g.RunCount() == 12);
  CHECK(g.Coordinates(0) == std::vector<size_t>{0, 0, 0});
  CHECK(g.Coordinates(1) == std::vector<size_t>{0, 0, 1});
  CHECK(g.Coordinates(7) == std::vector<size_t>{1, 0, 1});
  CHECK(g.Describe(7) == "scale=1 policy=hived seed=2");
  const std::vector<std::string> args = RunArgs(g, 5);
  CHECK(args.back() == "--seed=2");
  CHECK(args[args.size() - 2] == "--policy=private");
  absl::StatusOr<SweepGrid> back = ParseGridFingerprint(g.Fingerprint(), "grid.txt");
  REQUIRE(back.ok());
  CHECK(back->Fingerprint() == g.Fingerprint());
  CHECK(!ParseGridFingerprint("nonsense\n", "grid.txt").ok());
}

TEST_CASE("Sweep: a summary flattens into rows that survive a CSV round trip",
          "[sim][planning][unit]") {
  const std::string json = R"({"schema": "x", "run": {"policy": "hived"},
    "cluster": {"utilisation": 0.5, "total_gpus": 8},
    "accounting": {"balanced": true},
    "overall": {"name": "all", "queuing_delay": {"mean": 1.5, "p95": 3}, "sharing_anomaly": null},
    "vcs": [{"name": "a,b", "queuing_delay": {"mean": 2.25, "p95": 4}, "new_metric": 7,
             "slo": [{"seconds": 3600, "met": 3, "share": 0.75}, {"seconds": 60, "met": 1}],
             "by_size": [{"gpus": "2-4", "p95": 9}]}]})";
  absl::StatusOr<std::vector<SweepRow>> rows = RowsFromSummary(json, "s.json", 3, {"x,y", "1"});
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 2);
  CHECK((*rows)[0].vc == "all");
  CHECK((*rows)[0].metrics.at("queuing_delay.p95") == "3");
  CHECK((*rows)[0].metrics.count("sharing_anomaly") == 0);  // null: an empty cell
  CHECK((*rows)[1].metrics.at("new_metric") == "7");
  CHECK((*rows)[1].metrics.at("slo[3600].share") == "0.75");
  CHECK((*rows)[1].metrics.at("slo[60].met") == "1");
  CHECK((*rows)[1].metrics.at("by_size[2-4].p95") == "9");
  CHECK((*rows)[1].metrics.at("cluster:utilisation") == "0.5");
  CHECK((*rows)[1].metrics.at("accounting:balanced") == "1");
  const std::vector<std::string> axes{"scale", "seed"};
  const std::string csv = SweepCsv(axes, *rows);
  CHECK(absl::StartsWith(csv, "run,scale,seed,vc,by_size[2-4].p95,new_metric,queuing_delay.mean,"));
  absl::StatusOr<std::vector<SweepRow>> back = ParseSweepCsv(csv, "sweep.csv", axes);
  REQUIRE(back.ok());
  CHECK(SweepCsv(axes, *back) == csv);
  CHECK((*back)[1].vc == "a,b");
  CHECK((*back)[0].params[0] == "x,y");
  CHECK(!ParseSweepCsv(csv, "sweep.csv", {"other"}).ok());
  CHECK(!RowsFromSummary("{}", "s.json", 0, {}).ok());
}

TEST_CASE("Sweep: the summary gives the mean and a Student t interval across seeds",
          "[sim][planning][unit]") {
  CHECK(StudentT975(1) == Approx(12.706));
  CHECK(StudentT975(4) == Approx(2.776));
  CHECK(StudentT975(1000) == Approx(1.98));
  std::vector<SweepRow> rows;
  for (int seed = 0; seed < 5; ++seed) {
    rows.push_back({seed, {"1", std::to_string(seed)}, "all", {{"m", std::to_string(seed * 2)}}});
  }
  const std::vector<SummaryGroup> g = SummarizeRows({"scale", "seed"}, rows);
  REQUIRE(g.size() == 1);
  const MetricStats& s = g[0].metrics.at("m");
  CHECK(s.n == 5);
  CHECK(s.mean == Approx(4));
  // sd of 0,2,4,6,8 = sqrt(10); half-width = t(4) * sd / sqrt(5).
  REQUIRE(s.ci95.has_value());
  CHECK(*s.ci95 == Approx(2.776 * std::sqrt(10.0) / std::sqrt(5.0)));
  CHECK(absl::StrContains(SummaryCsv({"scale", "seed"}, g), "1,all,m,5,4,"));
}

TEST_CASE("Sweep: metric aliases resolve to whatever keys the summary has",
          "[sim][planning][unit]") {
  const std::vector<std::string> today{"queuing_delay.p95", "queuing_delay.mean", "sharing_anomaly",
                                       "cluster:utilisation"};
  CHECK(ResolveMetric("p95_wait", today) == "queuing_delay.p95");
  CHECK(ResolveMetric("mean_wait", today) == "queuing_delay.mean");
  CHECK(ResolveMetric("anomaly", today) == "sharing_anomaly");
  CHECK(ResolveMetric("utilisation", today) == "cluster:utilisation");
  CHECK(!ResolveMetric("slo_attainment", today).has_value());
  CHECK(ResolveMetric("slo_attainment", {"slo.attainment"}) == "slo.attainment");
  CHECK(ResolveMetric("slo_attainment", {"slo[3600].share", "slo[3600].met"}) == "slo[3600].share");
  CHECK(!ResolveMetric("slo_attainment", {"slo[3600].share", "slo[60].share"}).has_value());
  CHECK(ResolveMetric("p95_wait", {"p95_wait", "queuing_delay.p95"}) == "p95_wait");
}

#ifdef HIVED_SIM_EXE
using testing::RunSim;
using testing::TempDir;

const char kGridArgs[] =
    "--config tests/testdata/planning/small.yaml --trace tests/testdata/planning/small-trace.csv"
    " --policy hived,quota --vc-cells 'a=1,2,3' --seeds 1-2 --add-tenant 'b:jobs=20,load=0.5'";

TEST_CASE("Sweep: results do not depend on --jobs, and merged shards equal the whole sweep",
          "[sim][planning][unit]") {
  TempDir tmp("sweep");
  const std::string base = std::string("sweep ") + kGridArgs;
  REQUIRE(RunSim(base + " --jobs 1 --out " + (tmp / "j1"), tmp / "log1").exit_code == 0);
  REQUIRE(RunSim(base + " --jobs 3 --out " + (tmp / "j3"), tmp / "log3").exit_code == 0);
  for (int i = 0; i < 3; ++i) {
    const std::string shard = std::to_string(i) + "/3";
    REQUIRE(
        RunSim(base + " --jobs 2 --shard " + shard + " --out " + (tmp / ("s" + std::to_string(i))),
               tmp / "logs")
            .exit_code == 0);
  }
  const testing::SimResult merged = RunSim(
      "merge --out " + (tmp / "m") + " " + (tmp / "s2") + " " + (tmp / "s0") + " " + (tmp / "s1"),
      tmp / "logm");
  INFO(merged.output);
  REQUIRE(merged.exit_code == 0);
  for (const char* f : {"grid.txt", "sweep.csv", "summary.csv", "summary.txt"}) {
    CAPTURE(f);
    const std::string whole = ReadAll(tmp / ("j1/" + std::string(f)));
    CHECK(!whole.empty());
    CHECK(whole == ReadAll(tmp / ("j3/" + std::string(f))));
    CHECK(whole == ReadAll(tmp / ("m/" + std::string(f))));
  }
  // 2 policies x 3 sizes x 2 seeds = 12 runs, 3 rows each (all, a, b) + the header.
  const std::string csv = ReadAll(tmp / "j1/sweep.csv");
  CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 12 * 3);

  SECTION("a shard missing or given twice is an error") {
    CHECK(RunSim("merge --out " + (tmp / "m2") + " " + (tmp / "s0") + " " + (tmp / "s1"),
                 tmp / "logm2")
              .exit_code == 1);
    CHECK(RunSim("merge --out " + (tmp / "m3") + " " + (tmp / "s0") + " " + (tmp / "s0") + " " +
                     (tmp / "s1"),
                 tmp / "logm3")
              .exit_code == 1);
  }
  SECTION("--resume reruns only unfinished runs and gives the same result") {
    std::filesystem::remove_all(tmp / "j1/runs/000004/out");
    std::filesystem::remove(tmp / "j1/sweep.csv");
    CHECK(RunSim(base + " --out " + (tmp / "j1"), tmp / "logr0").exit_code == 1);  // no --resume
    const testing::SimResult other =
        RunSim(base + " --seeds 1-3 --resume --out " + (tmp / "j1"), tmp / "logr1");
    CHECK(other.exit_code == 1);  // another grid in the same folder
    CHECK(absl::StrContains(other.output, "holds a different grid"));
    const testing::SimResult r = RunSim(base + " --resume --out " + (tmp / "j1"), tmp / "logr");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(absl::StrContains(r.output, "1 runs in"));
    CHECK(absl::StrContains(r.output, "11 already finished"));
    CHECK(ReadAll(tmp / "j1/sweep.csv") == ReadAll(tmp / "j3/sweep.csv"));
  }
}

TEST_CASE("Sweep: bad grids are refused before anything runs", "[sim][planning][unit]") {
  TempDir tmp("sweep-bad");
  const std::string base = std::string("sweep ") + kGridArgs + " --out " + (tmp / "o");
  testing::SimResult r = RunSim(base + " --max-runs 11", tmp / "log");
  CHECK(r.exit_code == 2);
  CHECK(absl::StrContains(r.output, "12 runs (3 x 2 x 1 x 2), more than --max-runs 11"));
  CHECK(!std::filesystem::exists(tmp / "o"));
  CHECK(RunSim(base + " --policy magic", tmp / "log").exit_code == 2);
  CHECK(RunSim(base + " --shard 3/3", tmp / "log").exit_code == 2);
  CHECK(RunSim(base + " --vc-cells 'a=x'", tmp / "log").exit_code == 2);
  r = RunSim(base + " --vc-cells 'ghost=1'", tmp / "log");
  CHECK(r.exit_code == 1);
  CHECK(absl::StrContains(r.output, "ghost"));
  // A run that fails fails the sweep with the run's own error.
  r = RunSim(std::string("sweep ") + kGridArgs + " --only-vcs nope --out " + (tmp / "o2"),
             tmp / "log");
  CHECK(r.exit_code == 1);
  CHECK(absl::StrContains(r.output, "no job of the trace has VC 'nope'"));
  CHECK(absl::StrContains(r.output, "--resume"));
}

TEST_CASE("Sweep: a grid file gives the same sweep as the flags", "[sim][planning][unit]") {
  TempDir tmp("sweep-grid");
  {
    std::ofstream grid(tmp / "grid.yaml");
    grid << "# a small grid\nconfig: tests/testdata/planning/small.yaml\n"
            "trace: tests/testdata/planning/small-trace.csv\npolicy: [hived, quota]\n"
            "vc-cells: \"a=1,2,3\"\nseeds: 1-2\nadd-tenant: 'b:jobs=20,load=0.5'\n";
  }
  REQUIRE(RunSim("sweep --grid " + (tmp / "grid.yaml") + " --out " + (tmp / "g"), tmp / "l1")
              .exit_code == 0);
  REQUIRE(
      RunSim(std::string("sweep ") + kGridArgs + " --out " + (tmp / "f"), tmp / "l2").exit_code ==
      0);
  CHECK(ReadAll(tmp / "g/sweep.csv") == ReadAll(tmp / "f/sweep.csv"));
  {
    std::ofstream grid(tmp / "bad.yaml");
    grid << "config: x.yaml\ncolour: blue\n";
  }
  const testing::SimResult r =
      RunSim("sweep --grid " + (tmp / "bad.yaml") + " --out " + (tmp / "b"), tmp / "l3");
  CHECK(r.exit_code == 2);
  CHECK(absl::StrContains(r.output, "bad.yaml:2: unknown key 'colour'"));
}
#endif

}  // namespace
}  // namespace hived::sim

// The sharing models of the time-based replay (sim/engine/sharing_model.h): each mode's speeds by
// hand, and the replay's progress under them (two pods on one GPU, a neighbour leaving).
#include "sim/engine/sharing_model.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "sim/cli/commands.h"
#include "sim/common/flags.h"
#include "sim/openb/openb_replay.h"
#include "sim/policies/fill_cluster.h"
#include "support/catch.h"
#include "unit/sim/openb_test_util.h"
#include "unit/sim/sim_test_util.h"

namespace hived::sim {
namespace {

std::vector<double> Speeds(SharingMode mode, const std::vector<GpuTenant>& tenants,
                           SharingParams params = {}) {
  std::vector<double> speeds;
  SharingRates(mode, params, tenants, &speeds);
  REQUIRE(speeds.size() == tenants.size());
  for (double s : speeds) {
    CHECK(s > 0);
    CHECK(s <= 1);
  }
  return speeds;
}

TEST_CASE("SharingRates: each mode's speeds, by hand", "[sim][sharing][unit]") {
  const std::vector<GpuTenant> pair = {{0.6, false}, {0.4, true}};
  // ideal, exclusive, mig: always full speed.
  for (SharingMode m : {SharingMode::kIdeal, SharingMode::kExclusive, SharingMode::kMig}) {
    CHECK(Speeds(m, pair) == std::vector<double>{1.0, 1.0});
  }
  // time-slice: 1 - 2/30 of the GPU for two pods, max-min fair: 0.4 gets all it needs,
  // 0.6 gets the 0.5333 left (0.8889 of its need); both pay 1% for unified memory.
  std::vector<double> ts = Speeds(SharingMode::kTimeSlice, pair);
  CHECK(ts[0] == Approx((1 - 2.0 / 30 - 0.4) / 0.6 * 0.99));
  CHECK(ts[1] == Approx(0.99));
  CHECK(Speeds(SharingMode::kTimeSlice, {{0.6, false}})[0] == Approx(0.99));  // alone
  // Three equal pods of 0.5 (oversubscribed in time): 0.9333 / 3 each of 0.5 needed.
  for (double s : Speeds(SharingMode::kTimeSlice, {{0.5, false}, {0.5, false}, {0.5, false}})) {
    CHECK(s == Approx((1 - 2.0 / 30) / 3 / 0.5 * 0.99));
  }
  SharingParams no_switch;
  no_switch.switch_s = 0;
  no_switch.uvm_slowdown = 0;
  CHECK(Speeds(SharingMode::kTimeSlice, pair, no_switch) == std::vector<double>{1.0, 1.0});
  // mps: 1 / (1 + 0.25 x the neighbours' demand).
  std::vector<double> mps = Speeds(SharingMode::kMps, pair);
  CHECK(mps[0] == Approx(1 / (1 + 0.25 * 0.4)));
  CHECK(mps[1] == Approx(1 / (1 + 0.25 * 0.6)));
  CHECK(Speeds(SharingMode::kMps, {{0.6, false}})[0] == 1.0);
  // tgs: production at 0.99 next to an opportunistic pod, which gets the 0.4 left.
  std::vector<double> tgs = Speeds(SharingMode::kTgs, pair);
  CHECK(tgs[0] == Approx(0.99));
  CHECK(tgs[1] == 1.0);
  CHECK(Speeds(SharingMode::kTgs, {{0.6, false}, {0.4, false}}) == std::vector<double>{1.0, 1.0});
  // Two opportunistic pods of 0.3 next to 0.6 of production: 0.4 left, 0.2 each.
  std::vector<double> opp = Speeds(SharingMode::kTgs, {{0.6, false}, {0.3, true}, {0.3, true}});
  CHECK(opp[1] == Approx(0.2 / 0.3));
  CHECK(opp[2] == Approx(0.2 / 0.3));
}

TEST_CASE("SharingRequestMilli and the parameters' ranges", "[sim][sharing][unit]") {
  CHECK(SharingRequestMilli(SharingMode::kExclusive, 300) == 1000);
  CHECK(SharingRequestMilli(SharingMode::kMps, 300) == 300);
  CHECK(SharingRequestMilli(SharingMode::kMig, 100) == 142);   // 1g
  CHECK(SharingRequestMilli(SharingMode::kMig, 143) == 285);   // 1/7 = 142.9 < 143: 2g
  CHECK(SharingRequestMilli(SharingMode::kMig, 470) == 571);   // 4g
  CHECK(SharingRequestMilli(SharingMode::kMig, 600) == 1000);  // no 5g: the whole GPU
  CHECK(SharingRequestMilli(SharingMode::kMig, 1000) == 1000);
  CHECK(SharingRequestMilli(SharingMode::kMig, 0) == 0);
  CHECK(7 * SharingRequestMilli(SharingMode::kMig, 100) <= 1000);
  CHECK(CheckSharingParams({}).empty());
  SharingParams bad;
  bad.switch_s = 30;
  CHECK_FALSE(CheckSharingParams(bad).empty());
  bad = {};
  bad.quantum_s = 0;
  CHECK_FALSE(CheckSharingParams(bad).empty());
  bad = {};
  bad.uvm_slowdown = 1;
  CHECK_FALSE(CheckSharingParams(bad).empty());
  for (SharingMode m : kAllSharingModes) CHECK(ParseSharingMode(SharingModeName(m)) == m);
  CHECK_FALSE(ParseSharingMode("gang").has_value());
}

// Replays `rows` on one node with one GPU under `mode`.
PodSummary Replay(const std::string& rows, SharingMode mode) {
  OpenbReplayOptions options;
  options.sharing = mode;
  return testing::ReplayOnOneGpu(rows, options);
}

TEST_CASE("ReplayOpenb --sharing: two pods on one GPU, a neighbour leaving mid-run",
          "[sim][sharing][unit]") {
  // a (0.6, production) and b (0.4, BE) arrive at 0, each with 100 s of work; the trace ends
  // at 1000 (c, CPU-only, holds it open).
  const std::string rows =
      "a,1000,10,1,600,,LS,Succeeded,0,100,0\n"
      "b,1000,10,1,400,,BE,Succeeded,0,100,0\n"
      "c,1000,10,0,0,,LS,Succeeded,0,1000,0\n";
  SECTION("ideal: the trace's runtimes") {
    const PodSummary r = Replay(rows, SharingMode::kIdeal);
    CHECK(r.runs[0].end == 100);
    CHECK(r.runs[1].end == 100);
    CHECK(r.slowed_pods == 0);
    CHECK(r.max_degree == 2);
    CHECK(r.mean_degree == 2.0);  // the GPU was busy 100 s, always with both
    CHECK(r.runs[0].max_degree == 2);
    CHECK(r.runs[2].max_degree == 0);  // CPU-only
  }
  SECTION(
      "time-slice: b at 0.99 ends at ceil(101.01) = 102; a at 0.88 until then (89.76 "
      "done), then alone at 0.99: 10.24 / 0.99 = 10.34, ends at 113") {
    const PodSummary r = Replay(rows, SharingMode::kTimeSlice);
    CHECK(r.runs[1].end == 102);
    CHECK(r.runs[0].end == 113);
    CHECK(r.runs[0].slowdown == Approx(1.13));
    CHECK(r.slowed_pods == 2);
    CHECK(r.max_slowdown == Approx(1.13));
  }
  SECTION(
      "mps: a at 1/1.1, b at 1/1.15: b needs 115 s; a's 110 s end first, at 110; b "
      "did 110/1.15 = 95.65, then alone at 1: ends at 115") {
    const PodSummary r = Replay(rows, SharingMode::kMps);
    CHECK(r.runs[0].end == 110);
    CHECK(r.runs[1].end == 115);
  }
  SECTION(
      "tgs: the opportunistic b at full speed ends at 100; a at 0.99 did 99 by then and "
      "ends at 101, alone") {
    const PodSummary r = Replay(rows, SharingMode::kTgs);
    CHECK(r.runs[1].end == 100);
    CHECK(r.runs[0].end == 101);
  }
  SECTION("mig: 0.6 needs a 7g instance (no 5g), so b's 3g (428) waits for a") {
    const PodSummary r = Replay(rows, SharingMode::kMig);
    CHECK(r.runs[0].end == 100);
    CHECK(r.runs[1].start == 100);
    CHECK(r.runs[1].end == 200);
    CHECK(r.runs[1].slowdown == 1.0);  // waiting is not slowdown
    CHECK(r.max_degree == 1);
  }
  SECTION("exclusive: each pod takes the whole GPU") {
    const PodSummary r = Replay(rows, SharingMode::kExclusive);
    CHECK(r.runs[1].start == 100);
    CHECK(r.runs[1].end == 200);
  }
}

TEST_CASE("ReplayOpenb --sharing: a neighbour arriving mid-run slows a running pod",
          "[sim][sharing][unit]") {
  // mps: a (0.5) alone from 0 to 50 (50 done), then b (0.5) arrives: both at 1/1.125.
  // a's 50 left take 56.25 s: ends at ceil = 107. b did 57 x 0.8889 = 50.67 by 107, then
  // alone: 49.33 s, ends at 157. A Pending pod (d) on the GPU slows them too but leaves at
  // its deletion time, whatever its speed.
  const std::string rows =
      "a,1000,10,1,500,,LS,Succeeded,0,100,0\n"
      "b,1000,10,1,500,,LS,Succeeded,50,150,50\n"
      "c,1000,10,0,0,,LS,Succeeded,0,1000,0\n";
  const PodSummary r = Replay(rows, SharingMode::kMps);
  CHECK(r.runs[0].end == 107);
  CHECK(r.runs[1].end == 157);
  CHECK(r.runs[0].slowdown == Approx(1.07));
  const PodSummary p = Replay(
      "a,1000,10,1,500,,LS,Succeeded,0,100,0\n"
      "d,1000,10,1,500,,BE,Pending,0,40,\n"
      "c,1000,10,0,0,,LS,Succeeded,0,1000,0\n",
      SharingMode::kMps);
  // a at 1/1.125 until 40 (35.56 done), then alone: 64.44 more, ends at ceil(104.44) = 105.
  CHECK(p.runs[1].end == 40);
  CHECK(p.runs[1].slowdown == 0);  // Pending: not measured
  CHECK(p.runs[0].end == 105);
  CHECK(p.slowdown_pods == 1);
}

TEST_CASE("ReplayOpenb --sharing: the default openb pod list under every mode",
          "[sim][sharing][unit]") {
  const std::optional<FillInputs> in = testing::LoadPublishedOpenb("default");
  if (!in) return;
  for (SharingMode mode : kAllSharingModes) {
    INFO(SharingModeName(mode));
    OpenbReplayOptions options;
    options.sharing = mode;
    absl::StatusOr<PodSummary> r =
        testing::ReplayOpenbSummary(in->nodes, in->pods, in->fill_pods, options);
    REQUIRE(r.ok());
    CHECK(r->placed + r->never_placed == 8152);
    CHECK(r->slowdown_pods > 6000);
    CHECK(r->mean_slowdown >= 1.0);
    CHECK(r->mean_degree >= 1.0);
    int64_t measured = 0;
    for (size_t i = 0; i < r->runs.size(); ++i) {
      const PodRun& run = r->runs[i];
      if (run.slowdown > 0) {
        ++measured;
        REQUIRE(run.slowdown >= 1.0);  // a pod never runs faster than its trace runtime
        REQUIRE(run.max_degree >= (in->fill_pods[i].num_gpu > 0 ? 1 : 0));
      }
    }
    CHECK(measured >= r->slowdown_pods);  // CPU-only pods are measured but not summarised
    switch (mode) {
      case SharingMode::kIdeal:
      case SharingMode::kMig:
        CHECK(r->max_slowdown == 1.0);
        break;
      case SharingMode::kExclusive:
        CHECK(r->max_slowdown == 1.0);
        CHECK(r->max_degree == 1);
        break;
      case SharingMode::kTimeSlice:  // every GPU pod pays for unified memory
        CHECK(r->slowed_pods == r->slowdown_pods);
        break;
      case SharingMode::kMps:
      case SharingMode::kTgs:
        CHECK(r->slowed_pods > 0);
        CHECK(r->slowed_pods < r->slowdown_pods);
        break;
    }
  }
}

// Runs `hived-sim openb-replay ARGS...`; returns the exit code.
int ReplayCommand(std::vector<std::string> args) {
  args.insert(args.begin(), "openb-replay");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return OpenbReplayCommand(static_cast<int>(argv.size()), argv.data());
}

TEST_CASE(
    "hived-sim openb-replay --sharing: writes the sharing figures and pods.csv, and bad "
    "parameters exit with usage",
    "[sim][sharing][unit]") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("hived_sharing_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::string nodes = testing::TestPath("openb/nodes.csv");
  const std::string pods = testing::TestPath("openb/pods.csv");
  REQUIRE(ReplayCommand({"--nodes", nodes, "--pods", pods, "--sharing", "time-slice", "--quantum",
                         "10", "--out", (dir / "ok").string()}) == kExitOk);
  std::ifstream in(dir / "ok" / "summary.json");
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json summary = nlohmann::json::parse(text.str());
  CHECK(summary["policy"] == "hived");
  CHECK(summary["sharing"]["mode"] == "time-slice");
  CHECK(summary["sharing"]["quantum_s"] == 10.0);
  CHECK(summary["sharing"]["slowdown"]["mean"].get<double>() >= 1.0);
  CHECK(summary["sharing"]["gpu_sharing_degree"]["max"].get<int>() >= 1);
  std::ifstream csv(dir / "ok" / "pods.csv");
  std::string header;
  std::getline(csv, header);
  CHECK(header == "name,placed,node,start,end,wait,work,runtime,slowdown,max_sharing_degree");

  const std::string out = (dir / "bad").string();
  for (const std::vector<std::string>& bad : {std::vector<std::string>{"--sharing", "gang"},
                                              {"--sharing", "time-slice", "--switch-cost", "30"},
                                              {"--quantum", "0"},
                                              {"--uvm-slowdown", "1"},
                                              {"--mps-interference", "-1"},
                                              {"--tgs-production-slowdown", "nan"}}) {
    std::vector<std::string> args = {"--nodes", nodes, "--pods", pods, "--out", out};
    args.insert(args.end(), bad.begin(), bad.end());
    INFO(bad[0]);
    CHECK(ReplayCommand(args) == kExitUsage);
  }
  CHECK_FALSE(std::filesystem::exists(out));
  std::filesystem::remove_all(dir);
}

// Runs `hived-sim run ARGS...`; returns the exit code.
int RunCli(std::vector<std::string> args) {
  args.insert(args.begin(), "run");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return RunCommand(static_cast<int>(argv.size()), argv.data());
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_CASE(
    "hived-sim run --format openb --sharing: the openb replay, and whole-GPU traces only "
    "exclusive",
    "[sim][sharing][unit]") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("hived_run_sharing_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::string nodes = testing::TestPath("openb/nodes.csv");
  const std::string pods = testing::TestPath("openb/pods.csv");
  REQUIRE(RunCli({"--format", "openb", "--nodes", nodes, "--pods", pods, "--sharing", "mps",
                  "--out", (dir / "run").string()}) == kExitOk);
  REQUIRE(ReplayCommand({"--nodes", nodes, "--pods", pods, "--sharing", "mps", "--out",
                         (dir / "replay").string()}) == kExitOk);
  CHECK(ReadFile(dir / "run" / "pods.csv") == ReadFile(dir / "replay" / "pods.csv"));
  const nlohmann::json summary = nlohmann::json::parse(ReadFile(dir / "run" / "summary.json"));
  CHECK(summary["sharing"]["mode"] == "mps");
  REQUIRE(RunCli({"--format=openb", "--nodes", nodes, "--pods", pods, "--out",
                  (dir / "eq").string()}) == kExitOk);
  // A whole-GPU trace runs exclusive; any other mode is a usage error that says what to use.
  const std::string config = testing::TestPath("../../config/examples/two-racks.yaml");
  const std::string trace = testing::TestPath("traces/two-racks-default.csv");
  CHECK(RunCli({"--config", config, "--trace", trace, "--sharing", "time-slice", "--quiet"}) ==
        kExitUsage);
  CHECK(RunCli({"--config", config, "--trace", trace, "--sharing", "exclusive", "--quiet"}) ==
        kExitOk);
  std::filesystem::remove_all(dir);
}

TEST_CASE("hived-sim run: each format takes only its own options and names the one it does not",
          "[sim][sharing][unit]") {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("hived_run_openb_flags_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::string nodes = testing::TestPath("openb/nodes.csv");
  const std::string pods = testing::TestPath("openb/pods.csv");
  const std::string out = (dir / "bad").string();
  const std::string config = testing::TestPath("../../config/examples/two-racks.yaml");
  const std::string trace = testing::TestPath("traces/two-racks-default.csv");
  // Options of job replays are usage errors with --format openb, and the openb ones without.
  for (const std::vector<std::string>& extra : {std::vector<std::string>{"--queue", "fifo"},
                                                {"--config", config},
                                                {"--mtbf", "10"},
                                                {"--only-vcs", "prod"},
                                                {"--baseline", "none"}}) {
    std::vector<std::string> args = {"--format", "openb", "--nodes", nodes,
                                     "--pods",   pods,    "--out",   out};
    args.insert(args.end(), extra.begin(), extra.end());
    INFO(extra[0]);
    CHECK(RunCli(args) == kExitUsage);
  }
  for (const std::vector<std::string>& extra : {std::vector<std::string>{"--nodes", nodes},
                                                {"--quantum", "10"},
                                                {"--sample-seconds", "600"}}) {
    std::vector<std::string> args = {"--config", config, "--trace", trace, "--quiet"};
    args.insert(args.end(), extra.begin(), extra.end());
    INFO(extra[0]);
    CHECK(RunCli(args) == kExitUsage);
  }
  // A placement policy is no job policy and a job policy no placement policy.
  CHECK(RunCli({"--config", config, "--trace", trace, "--policy", "fgd", "--quiet"}) == kExitUsage);
  CHECK(RunCli({"--format", "openb", "--nodes", nodes, "--pods", pods, "--out", out, "--policy",
                "yarn-cs"}) == kExitUsage);
  // The alias replays openb lists only.
  CHECK(ReplayCommand({"--format", "hived", "--nodes", nodes, "--pods", pods, "--out", out}) ==
        kExitUsage);
  CHECK_FALSE(std::filesystem::exists(out));
  // The defaults that differ by format (--seed 42 and --sharing ideal for openb) are the
  // alias's: the same outputs without the flags as with them.
  REQUIRE(RunCli({"--format", "openb", "--nodes", nodes, "--pods", pods, "--policy", "random",
                  "--out", (dir / "defaults").string()}) == kExitOk);
  REQUIRE(ReplayCommand({"--nodes", nodes, "--pods", pods, "--policy", "random", "--seed", "42",
                         "--sharing", "ideal", "--out", (dir / "given").string()}) == kExitOk);
  for (const char* file : {"summary.json", "timeline.csv", "pods.csv"}) {
    INFO(file);
    CHECK(ReadFile(dir / "defaults" / file) == ReadFile(dir / "given" / file));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("FlagParser: Given names the flags the command line set, with either spelling",
          "[sim][unit]") {
  FlagParser p("t", "", "");
  std::string a = "x", b;
  int64_t n = 0;
  p.String("alpha", &a, "A", "");
  p.String("beta", &b, "B", "");
  p.Int("count", &n, "");
  std::vector<std::string> argv_text = {"t", "--beta=1", "--count", "3", "pos"};
  std::vector<char*> argv;
  for (std::string& s : argv_text) argv.push_back(s.data());
  std::vector<std::string> rest;
  REQUIRE(p.Parse(static_cast<int>(argv.size()), argv.data(), &rest) == -1);
  CHECK(p.Given("beta"));
  CHECK(p.Given("count"));
  CHECK_FALSE(p.Given("alpha"));  // still its default
  CHECK(a == "x");
  CHECK(p.given() == std::vector<std::string>{"beta", "count"});
  CHECK(rest == std::vector<std::string>{"pos"});
}

}  // namespace
}  // namespace hived::sim

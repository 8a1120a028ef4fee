// Issue 31 item 2: tenants and growth as they arrive. Per-VC growth (`--vc-load-scale`),
// tenants in absolute terms (`per-day=`, `like=`), and `plan --add-vc` / `plan --resume`.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "hived/config.h"
#include "planning_test_util.h"
#include "sim/cluster/spec_edit.h"
#include "sim/trace/trace_growth.h"
#include "sim/trace/trace_transform.h"
#include "sim_test_util.h"
#include "support/catch.h"

namespace hived::sim {
namespace {

using testing::LoadSpec;
using testing::ReadAll;

Trace Jobs(const std::vector<std::pair<std::string, Time>>& vc_and_time) {
  Trace t;
  int n = 0;
  for (const auto& [vc, time] : vc_and_time) {
    TraceJob j;
    j.id = "j" + std::to_string(n++);
    j.vc = t.Intern(vc);
    j.submit_time = time;
    j.pods = 1;
    j.gpus_per_pod = 1;
    j.total_gpus = 1;
    j.duration = 60;
    t.jobs.push_back(j);
  }
  return t;
}

// `count` jobs of `vc` an hour apart, and one job of "b" at every half hour.
Trace Hourly(const std::string& vc, int count) {
  std::vector<std::pair<std::string, Time>> v;
  for (int i = 0; i < count; ++i) {
    v.emplace_back(vc, Time{3600} * i);
    v.emplace_back("b", Time{3600} * i + 1800);
  }
  return Jobs(v);
}

size_t CountVc(const Trace& t, const std::string& vc) {
  size_t n = 0;
  for (const TraceJob& j : t.jobs) n += j.vc == vc ? 1 : 0;
  return n;
}

bool Sorted(const Trace& t) {
  for (size_t i = 1; i < t.jobs.size(); ++i) {
    if (t.jobs[i].submit_time < t.jobs[i - 1].submit_time) return false;
  }
  return true;
}

absl::StatusOr<TraceTransforms> Parse(TraceTransformFlags f) { return ParseTraceTransforms(f); }

TEST_CASE("Growth: a VC at x K keeps its span, sizes and other VCs, and changes only its rate",
          "[sim][planning][unit]") {
  const Trace base = Hourly("a", 100);
  for (double k : {2.0, 3.0, 1.5, 0.5}) {
    CAPTURE(k);
    Trace t = base;
    ScaleVcLoad("a", k, 7, &t);
    CHECK(Sorted(t));
    CHECK(CountVc(t, "b") == 100);
    const double n = static_cast<double>(CountVc(t, "a"));
    CHECK(n >= 100 * k * 0.8);
    CHECK(n <= 100 * k * 1.2);
    if (k == std::floor(k)) CHECK(n == 100 * k);  // whole K: exactly K copies of each
    Time first = -1, last = 0;
    for (const TraceJob& j : t.jobs) {
      if (j.vc != "a") continue;
      if (first < 0) first = j.submit_time;
      last = j.submit_time;
      CHECK(j.duration == 60);
      CHECK(j.total_gpus == 1);
    }
    // Same days: the copies sit between a job and the VC's next one.
    CHECK(first <= 3600);
    CHECK(last <= 99 * 3600 + 3600);
    // The other VC's jobs are untouched, in the same order.
    std::vector<std::string> b_ids;
    for (const TraceJob& j : t.jobs) {
      if (j.vc == "b") b_ids.emplace_back(j.id.view());
    }
    CHECK(b_ids.front() == "j1");
    CHECK(b_ids.back() == "j199");
    // Deterministic for a seed.
    Trace again = base;
    ScaleVcLoad("a", k, 7, &again);
    REQUIRE(again.jobs.size() == t.jobs.size());
    for (size_t i = 0; i < t.jobs.size(); ++i) {
      CHECK(t.jobs[i].id.view() == again.jobs[i].id.view());
      CHECK(t.jobs[i].submit_time == again.jobs[i].submit_time);
    }
  }
  // x 2: job i and its copy half way to job i + 1, with distinct ids.
  Trace t = Jobs({{"a", 0}, {"a", 100}});
  ScaleVcLoad("a", 2, 1, &t);
  REQUIRE(t.jobs.size() == 4);
  CHECK(t.jobs[0].submit_time == 0);
  CHECK(t.jobs[1].submit_time == 50);
  CHECK(std::string(t.jobs[1].id.view()) == "j0-x1");
  CHECK(t.jobs[2].submit_time == 100);
  CHECK(t.jobs[3].submit_time == 150);  // the last job uses the VC's mean gap
  // x 1 changes nothing.
  Trace same = base;
  ScaleVcLoad("a", 1, 1, &same);
  CHECK(same.jobs.size() == base.jobs.size());
}

TEST_CASE("Growth: --vc-load-scale is a trace transform with checked values",
          "[sim][planning][unit]") {
  const ClusterSpec spec = LoadSpec("planning/small.yaml");
  TraceTransformFlags f;
  f.vc_load_scale = "a=2";
  absl::StatusOr<TraceTransforms> t = Parse(f);
  REQUIRE(t.ok());
  Trace trace = Hourly("a", 10);
  REQUIRE(ApplyTraceTransforms(*t, spec, 1, &trace).ok());
  CHECK(CountVc(trace, "a") == 20);
  CHECK(TraceTransformArgs(f) == std::vector<std::string>{"--vc-load-scale=a=2"});
  for (const char* bad : {"a", "a=0", "a=-1", "a=x", "a=1001", "a=2,a=3"}) {
    CAPTURE(bad);
    f.vc_load_scale = bad;
    absl::Status s = Parse(f).status();
    CHECK(s.code() == absl::StatusCode::kInvalidArgument);
    CHECK(absl::StrContains(s.message(), "--vc-load-scale"));
  }
  f.vc_load_scale = "nobody=2";
  t = Parse(f);
  REQUIRE(t.ok());
  trace = Hourly("a", 10);
  absl::Status s = ApplyTraceTransforms(*t, spec, 1, &trace);
  CHECK(absl::StrContains(s.message(), "no job of the trace has VC 'nobody'"));
}

// The jobs of tenant `vc` after the transforms, as (time, GPUs, duration) rows.
std::vector<std::tuple<Time, int32_t, Time>> TenantJobs(const ClusterSpec& spec,
                                                        const std::string& tenant,
                                                        const std::string& vc) {
  TraceTransformFlags f;
  f.add_tenant = tenant;
  absl::StatusOr<TraceTransforms> t = Parse(f);
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  Trace trace = Hourly("a", 48);
  absl::Status s = ApplyTraceTransforms(*t, spec, 3, &trace);
  INFO(s.ToString());
  REQUIRE(s.ok());
  std::vector<std::tuple<Time, int32_t, Time>> out;
  for (const TraceJob& j : trace.jobs) {
    if (j.vc == vc) out.emplace_back(j.submit_time, j.total_gpus, j.duration);
  }
  return out;
}

TEST_CASE("Growth: an absolute tenant's load does not change with its VC's size (issue 31)",
          "[sim][planning][unit]") {
  ClusterSpec one = LoadSpec("planning/small.yaml");
  REQUIRE(SetVcUnits(&one, "n", "RACK.NODE", 1).ok());
  ClusterSpec four = one;
  REQUIRE(SetVcUnits(&four, "n", "RACK.NODE", 4).ok());
  SECTION("per-day: a Poisson rate and a gang-size mix") {
    const std::string tenant = "n:per-day=24,sizes=1:50/2:50";
    const auto small = TenantJobs(one, tenant, "n");
    CHECK(small == TenantJobs(four, tenant, "n"));
    // 24 a day over the real trace's 47.5 h.
    CHECK(small.size() == 48);
    for (const auto& [t, gpus, d] : small) CHECK((gpus == 1 || gpus == 2));
    // The relative form grows with the VC: more GPUs, the same jobs arrive faster.
    CHECK(TenantJobs(one, "n:jobs=40", "n") != TenantJobs(four, "n:jobs=40", "n"));
  }
  SECTION("like=VC,scale=K: another VC's real jobs x K") {
    const auto copy = TenantJobs(one, "n:like=a,scale=2", "n");
    CHECK(copy == TenantJobs(four, "n:like=a,scale=2", "n"));
    CHECK(copy.size() == 96);
    CHECK(TenantJobs(one, "n:like=a", "n").size() == 48);
  }
  SECTION("bad forms say what goes with what") {
    TraceTransformFlags f;
    for (const auto& [bad, why] :
         std::map<std::string, std::string>{{"n:per-day=10,load=0.5", "exclude each other"},
                                            {"n:scale=2", "scale= goes with like=VC"},
                                            {"n:like=a,jobs=5", "takes only scale= and seed="},
                                            {"n:sizes=1:1", "go with per-day=N"},
                                            {"n:per-day=0", "per-day=N with 0 < N"},
                                            {"n:per-day=5,sizes=1:0", "every weight"},
                                            {"n:per-day=5,sizes=a:1", "sizes=G:W"},
                                            {"n:like=a,scale=0", "scale=K"}}) {
      CAPTURE(bad);
      f.add_tenant = bad;
      absl::Status s = Parse(f).status();
      CHECK(s.code() == absl::StatusCode::kInvalidArgument);
      CHECK(absl::StrContains(s.message(), why));
    }
    f.add_tenant = "n:like=nobody";
    absl::StatusOr<TraceTransforms> t = Parse(f);
    REQUIRE(t.ok());
    Trace trace = Hourly("a", 4);
    CHECK(absl::StrContains(ApplyTraceTransforms(*t, one, 1, &trace).message(),
                            "no job of the trace has VC 'nobody'"));
  }
}

TEST_CASE("Bootstrap: resampled days keep a trace of alike days and vary one that is not",
          "[sim][planning][unit]") {
  // Alike: every day the same two jobs.
  std::vector<std::pair<std::string, Time>> alike, varied;
  for (int d = 0; d < 10; ++d) {
    alike.emplace_back("a", Time{86400} * d);
    alike.emplace_back("a", Time{86400} * d + 100);
    for (int k = 0; k <= d; ++k) varied.emplace_back("a", Time{86400} * d + k);
  }
  auto times = [](const Trace& t) {
    std::vector<Time> v;
    for (const TraceJob& j : t.jobs) v.push_back(j.submit_time);
    return v;
  };
  const Trace a = Jobs(alike), v = Jobs(varied);
  std::set<size_t> counts;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    Trace t = a;
    BootstrapTrace(86400, seed, &t);
    CHECK(times(t) == times(a));
    Trace u = v;
    BootstrapTrace(86400, seed, &u);
    CHECK(Sorted(u));
    counts.insert(u.jobs.size());
    std::set<std::string> ids;
    for (const TraceJob& j : u.jobs) ids.emplace(j.id.view());
    CHECK(ids.size() == u.jobs.size());  // a day drawn twice keeps unique ids
    Trace again = v;
    BootstrapTrace(86400, seed, &again);
    CHECK(times(again) == times(u));
    Trace by_job = v;
    BootstrapTrace(0, seed, &by_job);
    CHECK(by_job.jobs.size() == v.jobs.size());
    CHECK(Sorted(by_job));
  }
  CHECK(counts.size() > 1);  // the days drawn differ with the seed
  TraceTransformFlags f;
  f.bootstrap = "months";
  CHECK(absl::StrContains(Parse(f).status().message(), "--bootstrap: 'months' is not days"));
}

#ifdef HIVED_SIM_EXE
using testing::RunSim;
using testing::TempDir;

const char kSmall[] =
    "--config tests/testdata/planning/small.yaml --trace tests/testdata/planning/small-trace.csv";

TEST_CASE("Plan: --vc-load-scale grows one VC's jobs in the probes (issue 31)",
          "[sim][planning][unit]") {
  TempDir tmp("plan-vc-growth");
  // a's six one-hour jobs at time 0 need 3 nodes for p95 <= 1 h; twice as many need 6, and
  // b's growth changes nothing for a.
  const std::string plan = std::string("plan --min-jobs 1 ") + kSmall +
                           " --vc a --target 'p95_wait<=1h' --jobs 2 --out " + (tmp / "p");
  testing::SimResult r = RunSim(plan + " --vc-load-scale a=2", tmp / "log");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(absl::StrContains(r.output, "chosen: 6 cells (12 GPUs; now 1)"));
  r = RunSim(plan + " --vc-load-scale b=3", tmp / "log");
  REQUIRE(r.exit_code == 0);
  CHECK(absl::StrContains(r.output, "chosen: 3 cells (6 GPUs; now 1)"));
  CHECK(RunSim(plan + " --vc-load-scale a=0", tmp / "log").exit_code == 2);
}

TEST_CASE("Plan: --add-vc sizes a VC the config does not have (issue 31)",
          "[sim][planning][unit]") {
  TempDir tmp("plan-add-vc");
  // `n` gets a copy of a's six one-hour jobs: the answer is a's, 3 nodes.
  const std::string out = tmp / "p";
  testing::SimResult r = RunSim(std::string("plan --min-jobs 1 ") + kSmall +
                                    " --add-vc n --cell-type RACK.NODE --add-tenant 'n:like=a' "
                                    "--target 'p95_wait<=1h' --jobs 2 --out " +
                                    out,
                                tmp / "log");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(absl::StrContains(r.output, "VC n: target p95_wait<=1h"));
  CHECK(absl::StrContains(r.output, "chosen: 3 cells (6 GPUs; now 0)"));
  const std::string sized = ReadAll(out + "/sized.yaml");
  CHECK(absl::StrContains(sized, "# VC n: 3 RACK.NODE (new)\n"));
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecFile(out + "/sized.yaml");
  REQUIRE(spec.ok());
  bool found = false;
  for (const VirtualClusterSpec& v : spec->virtual_clusters) {
    if (v.name == "n") found = v.virtual_cells.at(0).cell_number == 3;
  }
  CHECK(found);
  // Usage errors naming the flag and the fix.
  for (const auto& [args, why] : std::map<std::string, std::string>{
           {"--add-vc a --cell-type RACK.NODE --add-tenant 'a:like=b'", "already in the config"},
           {"--add-vc n --add-tenant 'n:like=a'", "needs a cell type"},
           {"--add-vc n --cell-type RACK.NODE", "no job would be in VC n"},
           {"--add-vc n --cell-type RACK.NODE --add-tenant 'n:jobs=10'", "absolute terms"},
           {"--add-vc n --vc a --cell-type RACK.NODE --add-tenant 'n:like=a'", "not with --vc"}}) {
    CAPTURE(args);
    r = RunSim(std::string("plan ") + kSmall + " --target 'p95_wait<=1h' --out " + (tmp / "e") +
                   " " + args,
               tmp / "log");
    CHECK(r.exit_code == 2);
    CHECK(absl::StrContains(r.output, why));
  }
}

TEST_CASE("Plan: --resume reads the finished probes and gives the same outputs (issue 31)",
          "[sim][planning][unit]") {
  TempDir tmp("plan-resume");
  namespace fs = std::filesystem;
  const std::string args = std::string("plan --min-jobs 1 ") + kSmall +
                           " --vc a --target 'p95_wait<=1h' --jobs 1 --out ";
  const std::string whole = tmp / "whole", killed = tmp / "killed";
  REQUIRE(RunSim(args + whole, tmp / "log").exit_code == 0);
  // A plan killed after some probes: its last probes and reports never happened, one probe
  // was cut off while it wrote its summary.
  REQUIRE(RunSim(args + killed, tmp / "log").exit_code == 0);
  for (const char* f : {"report.txt", "report.csv", "sized.yaml"}) fs::remove(killed + "/" + f);
  std::vector<std::string> sizes;
  for (const auto& e : fs::directory_iterator(killed + "/probes/a")) {
    sizes.push_back(e.path().filename().string());
  }
  std::sort(sizes.begin(), sizes.end(),
            [](const std::string& x, const std::string& y) { return std::stoi(x) < std::stoi(y); });
  REQUIRE(sizes.size() >= 3);
  fs::remove_all(killed + "/probes/a/" + sizes[1]);
  std::ofstream(killed + "/probes/a/" + sizes[2] + "/out/summary.json", std::ios::trunc) << "{";
  const std::string kept = killed + "/probes/a/" + sizes[0] + "/out/summary.json";
  const auto stamp = fs::last_write_time(kept);
  const testing::SimResult r = RunSim(args + killed + " --resume", tmp / "log");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(absl::StrContains(r.output, "--resume: " + std::to_string(sizes.size() - 2) +
                                        " finished probe(s) read, not run again"));
  CHECK(fs::last_write_time(kept) == stamp);  // not run again
  for (const char* f : {"report.csv", "sized.yaml"}) {
    CAPTURE(f);
    CHECK(absl::StrReplaceAll(ReadAll(killed + "/" + f), {{killed, "OUT"}}) ==
          absl::StrReplaceAll(ReadAll(whole + "/" + f), {{whole, "OUT"}}));
  }
  CHECK(absl::StrReplaceAll(ReadAll(killed + "/report.txt"), {{killed, "OUT"}}) ==
        absl::StrReplaceAll(ReadAll(whole + "/report.txt"), {{whole, "OUT"}}));
  // A probe of another config is run again, not read: here every probe (other --seed).
  const testing::SimResult other = RunSim(args + killed + " --resume --seed 2", tmp / "log");
  CHECK(other.exit_code == 0);
  CHECK(!absl::StrContains(other.output, "--resume:"));
}

// The ci95 of queuing_delay.mean of VC a in a sweep's summary.csv.
std::string Ci95(const std::string& summary_csv) {
  for (absl::string_view line : absl::StrSplit(summary_csv, '\n')) {
    if (absl::StrContains(line, ",a,queuing_delay.mean,")) {
      return std::string(line.substr(line.rfind(',') + 1));
    }
  }
  return "missing";
}

TEST_CASE("Bootstrap: a deterministic replay's interval is non-zero only when the trace varies",
          "[sim][planning][unit]") {
  TempDir tmp("bootstrap");
  std::string varied = "job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration\n";
  std::string alike = varied;
  for (int d = 0; d < 8; ++d) {
    for (int k = 0; k < 1 + (d % 4) * 2; ++k) {
      absl::StrAppend(&varied, "v", d, "-", k, ",", d * 86400, ",a,0,1,2,,3600\n");
    }
    for (int k = 0; k < 3; ++k) {
      absl::StrAppend(&alike, "s", d, "-", k, ",", d * 86400, ",a,0,1,2,,3600\n");
    }
  }
  std::ofstream(tmp / "varied.csv") << varied;
  std::ofstream(tmp / "alike.csv") << alike;
  const std::string sweep =
      "sweep --config tests/testdata/planning/small.yaml --seeds 1-4 --jobs 2 "
      "--run-args --baseline=none ";
  for (const auto& [trace, bootstrap, nonzero] :
       std::vector<std::tuple<std::string, std::string, bool>>{
           {"varied", "", false}, {"varied", "days", true}, {"alike", "days", false}}) {
    CAPTURE(trace, bootstrap);
    const std::string out = tmp / (trace + bootstrap);
    const testing::SimResult r =
        RunSim(sweep + "--trace " + (tmp / (trace + ".csv")) + " --out " + out +
                   (bootstrap.empty() ? "" : " --bootstrap " + bootstrap),
               tmp / "log");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const std::string ci = Ci95(ReadAll(out + "/summary.csv"));
    CHECK(ci != "missing");
    CHECK((std::stod(ci) > 0) == nonzero);
  }
  // The grid file takes the new transforms as keys.
  std::ofstream(tmp / "grid.yaml")
      << "config: tests/testdata/planning/small.yaml\ntrace: " << (tmp / "varied.csv")
      << "\nseeds: 1-2\nbootstrap: days\nvc-load-scale: a=2\n"
         "run-args: --baseline=none\n";
  const testing::SimResult grid =
      RunSim("sweep --grid " + (tmp / "grid.yaml") + " --out " + (tmp / "grid"), tmp / "log");
  INFO(grid.output);
  CHECK(grid.exit_code == 0);
  // compare --target: identical seeds are not "95% sure"; bootstrapped seeds can be.
  testing::SimResult r =
      RunSim("compare " + (tmp / "varied/sweep.csv") + " --target 'p95_wait<=100h'", tmp / "log");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(absl::StrContains(r.output, "yes (seeds change nothing: no interval)"));
  CHECK(absl::StrContains(r.output, "--bootstrap days"));
  CHECK(!absl::StrContains(r.output, "95% sure"));
  r = RunSim("compare " + (tmp / "varieddays/sweep.csv") + " --target 'p95_wait<=100h'",
             tmp / "log");
  CHECK(absl::StrContains(r.output, "yes (95% sure)"));
}
TEST_CASE("Compare charts: a missing value is marked, not drawn as a zero (issue 31)",
          "[sim][planning][unit]") {
  if (std::system("gnuplot --version >/dev/null 2>&1") != 0) return;  // charts need gnuplot
  TempDir tmp("compare-charts");
  const std::string run = std::string("run ") + kSmall + " --quiet --out ";
  REQUIRE(RunSim(run + (tmp / "with"), tmp / "log").exit_code == 0);
  REQUIRE(RunSim(run + (tmp / "without") + " --baseline=none", tmp / "log").exit_code == 0);
  const testing::SimResult r =
      RunSim("compare --label with " + (tmp / "with") + " --label without " + (tmp / "without") +
                 " --out " + (tmp / "charts"),
             tmp / "log");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  // The run without the private baseline has no anomaly: its cells are '-' (a gap), and the
  // VC's label says so.
  const std::string dat = ReadAll(tmp / "charts/anomaly_by_vc.dat");
  CHECK(absl::StrContains(dat, "\"a *\" 0 -\n"));
  const std::string gp = ReadAll(tmp / "charts/anomaly_by_vc.gp");
  CHECK(absl::StrContains(gp, "set datafile missing '-'"));
  CHECK(absl::StrContains(gp, "* = no value in some runs (no bar)"));
  CHECK(absl::StrContains(gp, "set xzeroaxis"));
  CHECK(std::filesystem::exists(tmp / "charts/anomaly_by_vc.png"));
  // The per-run anomaly chart: a title in two lines (one line was clipped at both ends) and
  // the footnote at the right, clear of the centred axis label.
  REQUIRE(RunSim(run + (tmp / "plot") + " --plot", tmp / "log").exit_code == 0);
  const std::string anomaly = ReadAll(tmp / "plot/plots/anomaly.gp");
  CHECK(absl::StrContains(anomaly, "set title \"Sharing anomaly per VC under hived\\nmean"));
  CHECK(absl::StrContains(anomaly, "at screen 0.99,0.02 right"));
  // Both runs have every wait: nothing marked.
  CHECK(!absl::StrContains(ReadAll(tmp / "charts/mean_wait_by_vc.dat"), "*"));
}
#endif

}  // namespace
}  // namespace hived::sim

// The FGD fill experiment: cluster model, fragmentation measure, policies, workload draws
// (sim/policies/fill_cluster.h, sim/policies/fgd_frag.h, sim/policies/fill_policy.h,
// sim/openb/fill_experiment.h).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "sim/common/flags.h"
#include "sim/openb/fill_experiment.h"
#include "sim/policies/fgd_frag.h"
#include "sim/policies/fill_cluster.h"
#include "sim/policies/fill_hived.h"
#include "sim/policies/fill_policy.h"
#include "sim/trace/openb_config.h"
#include "sim/trace/openb_reader.h"
#include "support/catch.h"
#include "unit/sim/openb_test_util.h"
#include "unit/sim/sim_test_util.h"

namespace hived::sim {
namespace {

OpenbNodeList MakeNodes(const std::string& rows) { return testing::MakeOpenbNodes(rows); }

FillPod Pod(int64_t cpu, int32_t num_gpu, int32_t milli, int64_t memory = 0) {
  return testing::MakeFillPod(cpu, num_gpu, milli, memory);
}

std::vector<int32_t> Feasible(const FillCluster& c, const FillPod& pod) {
  std::vector<int32_t> out;
  for (int32_t n = 0; n < c.node_count(); ++n) {
    if (c.Fits(n, pod)) out.push_back(n);
  }
  return out;
}

// Places `pod` on node `n` by best fit, as a way to set up a state.
void Put(FillCluster* c, int32_t n, const FillPod& pod) {
  REQUIRE(c->Fits(n, pod));
  c->Place(pod, n, c->BestFitGpus(n, pod));
  REQUIRE(c->CheckInvariants().ok());
}

FillChoice Choose(PolicyKind kind, FillCluster* c, const FillPod& pod,
                  const FragMeasure* frag = nullptr, std::mt19937_64* rng = nullptr) {
  std::unique_ptr<FillPolicy> policy = MakeFillPolicy(kind, {rng, frag, 1}, c->node_count());
  return policy->Choose(*c, pod, Feasible(*c, pod));
}

TEST_CASE("FillCluster: enforces model, GPU share, CPU and memory, and says why nothing fits",
          "[sim][fill][unit]") {
  FillCluster c(MakeNodes("a,8000,1000,2,T4\nb,4000,500,1,V100\n"));
  CHECK(c.capacity_milli() == 3000);
  FillPod share = Pod(1000, 1, 600, 100);
  Put(&c, 0, share);
  CHECK(c.gpu_left(0)[0] == 400);
  CHECK(c.allocated_milli() == 600);
  // A second 600 share goes to the other T4 GPU (best fit skips the 400 one).
  CHECK(c.BestFitGpus(0, share) == 0b10);
  FillPod v100_only = Pod(1000, 1, 500);
  v100_only.model_mask = 0b10;  // models: T4 = 0, V100 = 1
  CHECK_FALSE(c.Fits(0, v100_only));
  CHECK(c.Fits(1, v100_only));
  CHECK(c.WhyNoFit(Pod(1000, 2, 1000)) == FillFailure::kGpu);       // a's GPU 0 is shared
  CHECK(c.WhyNoFit(Pod(1000, 4, 1000)) == FillFailure::kGpuModel);  // no node has 4 GPUs
  CHECK(c.WhyNoFit(Pod(9000, 1, 100)) == FillFailure::kCpu);
  CHECK(c.WhyNoFit(Pod(1000, 1, 100, 2000)) == FillFailure::kMemory);
  Put(&c, 1, Pod(4000, 1, 1000, 500));
  CHECK(c.node(1).version == 2);
  CHECK_FALSE(c.Fits(1, Pod(0, 0, 0, 1)));  // memory exhausted, even for a CPU-only pod
  CHECK(c.CheckInvariants().ok());
}

TEST_CASE("FragMeasure: a hand-computed node", "[sim][fill][unit]") {
  // Typical pods from a workload of 4: two of (1 CPU, 500 milli), one of (4 CPUs, 2 GPUs),
  // one CPU-only (2 CPUs): weights 0.5, 0.25, 0.25.
  std::vector<FillPod> workload = {Pod(1000, 1, 500), Pod(1000, 1, 500), Pod(4000, 2, 1000),
                                   Pod(2000, 0, 0)};
  const std::vector<TypicalPod> typical = TypicalPods(workload, 1.0);
  REQUIRE(typical.size() == 3);
  CHECK(typical[0].weight == 0.5);
  CHECK(typical[0].gpu_milli == 500);
  const FragMeasure frag(typical, 1);
  // Node: 3 CPUs left, GPUs free 1000, 300, 700, 1000 (3000 milli).
  const int32_t gpus[] = {1000, 300, 700, 1000};
  // CPU-only pod: all 3000 count (x 0.25 = 750). 500-milli pod fits: only the 300 GPU is
  // too small (x 0.5 = 150). Two-GPU pod: GPUs fit but 4 CPUs do not: all 3000 (x 0.25).
  CHECK(frag.NodeFrag(0, 3000, gpus, 4) == Approx(750 + 150 + 750));
  // With 4 CPUs left the two-GPU pod fits and leaves 300 + 700 too small... no: it needs
  // 1000-milli GPUs, so the 300 and 700 GPUs are fragments for it (x 0.25 = 250).
  CHECK(frag.NodeFrag(0, 4000, gpus, 4) == Approx(750 + 150 + 250));
  // A node without free milli has none; a node of a model nobody may use is all fragment.
  const int32_t full[] = {0, 0};
  CHECK(frag.NodeFrag(0, 4000, full, 2) == 0);
  std::vector<FillPod> t4_only = {Pod(1000, 1, 500)};
  t4_only[0].model_mask = 0b1;
  const FragMeasure other(TypicalPods(t4_only, 1.0), 2);
  const int32_t one[] = {1000};
  CHECK(other.NodeFrag(1, 8000, one, 1) == 1000);
  CHECK(other.NodeFrag(0, 8000, one, 1) == 0);

  SECTION("coverage keeps the most popular shapes and renormalises") {
    const std::vector<TypicalPod> top = TypicalPods(workload, 0.5);
    REQUIRE(top.size() == 1);
    CHECK(top[0].weight == 1.0);
  }
}

TEST_CASE(
    "FragMeasure and StrandedMeasure: weights sum to 1, and each part of a node's measure stays "
    "within its free milli",
    "[sim][fill][unit]") {
  std::mt19937_64 rng(static_cast<uint64_t>(GENERATE(1, 2, 3, 4, 5)));
  const int32_t shares[] = {0, 50, 230, 470, 810, 1000};
  std::vector<FillPod> workload;
  for (int i = 0; i < 200; ++i) {
    const int32_t share = shares[UniformIndex(rng, 6)];
    const int32_t count =
        share == 1000 ? static_cast<int32_t>(1 + UniformIndex(rng, 4)) : share > 0;
    FillPod p = Pod(static_cast<int64_t>(UniformIndex(rng, 16)) * 1000, count, share,
                    static_cast<int64_t>(UniformIndex(rng, 64)) * 1024);
    p.model_mask = UniformIndex(rng, 3) == 0 ? 0b01 : ~uint64_t{0};
    workload.push_back(p);
  }
  const std::vector<TypicalPod> typical = TypicalPods(workload, 0.95);
  double sum = 0;
  for (const TypicalPod& t : typical) {
    CHECK(t.weight > 0);
    sum += t.weight;
  }
  CHECK(sum == Approx(1.0));
  const FragMeasure frag(typical, 2);
  const StrandedMeasure stranded(workload, 0.95, 2);
  for (int i = 0; i < 500; ++i) {
    int32_t gpus[8];
    int64_t free = 0;
    for (int32_t& g : gpus) {
      g = static_cast<int32_t>(UniformIndex(rng, 1001));
      free += g;
    }
    const int32_t model = static_cast<int32_t>(UniformIndex(rng, 2));
    const int64_t cpu = static_cast<int64_t>(UniformIndex(rng, 20)) * 1000;
    const int64_t memory = static_cast<int64_t>(UniformIndex(rng, 256)) * 1024;
    const double f = frag.NodeFrag(model, cpu, gpus, 8);
    REQUIRE(f >= -1e-9);
    REQUIRE(f <= static_cast<double>(free) + 1e-6);
    // hived's measure (fill_hived.h): the shape part and the resource part each.
    const double shape = stranded.ShapePart(model, cpu, memory, gpus, 8);
    const double all = stranded.Of(model, cpu, memory, gpus, 8);
    REQUIRE(shape >= -1e-9);
    REQUIRE(shape <= static_cast<double>(free) + 1e-6);
    REQUIRE(all - shape >= -1e-9);
    REQUIRE(all - shape <= static_cast<double>(free) + 1e-6);
  }
}

TEST_CASE("best-fit: the node left with the least CPU and GPU, then the tightest GPU",
          "[sim][fill][unit]") {
  FillCluster c(MakeNodes("a,96000,1000,8,G2\nb,96000,1000,8,G2\n"));
  for (int i = 0; i < 6; ++i) Put(&c, 1, Pod(1000, 1, 1000));
  Put(&c, 1, Pod(1000, 1, 300));  // b: GPU 6 has 700 free, GPU 7 is free
  const FillChoice choice = Choose(PolicyKind::kBestFit, &c, Pod(1000, 1, 600));
  CHECK(choice.node == 1);
  CHECK(choice.gpus == uint64_t{1} << 6);  // 700 free beats 1000 free
}

TEST_CASE("dot-product: the node whose free vector aligns least with the request",
          "[sim][fill][unit]") {
  // a: 128 CPUs and 1 GPU; b: 16 CPUs and 8 GPUs. A CPU-heavy pod (32 CPUs, 0.1 GPU):
  // a: 1 x 0.25 + (1000/8000) x (100/8000) = 0.2516 -> 100 x (1 - 0.1258) = 87;
  // b: 0.125 x 0.25 + 1 x 0.0125 = 0.04375 -> 97. b wins.
  FillCluster c(MakeNodes("a,128000,1000,1,T4\nb,64000,1000,8,T4\n"));
  CHECK(Choose(PolicyKind::kDotProduct, &c, Pod(32000, 1, 100)).node == 1);
}

TEST_CASE("gpu-packing: shared GPUs first, then free GPUs of used nodes, then empty nodes",
          "[sim][fill][unit]") {
  FillCluster c(
      MakeNodes("empty,64000,1000,4,T4\nwhole,64000,1000,4,T4\nshared,64000,1000,4,T4\n"));
  Put(&c, 1, Pod(1000, 1, 1000));  // whole: one GPU taken
  Put(&c, 2, Pod(1000, 1, 500));   // shared: GPU 0 has 500 free
  const FillChoice share = Choose(PolicyKind::kGpuPacking, &c, Pod(1000, 1, 300));
  CHECK(share.node == 2);
  CHECK(share.gpus == 0b1);
  // A whole GPU cannot use a shared one: a used node's free GPU (score 49) beats an empty
  // node (33 - 4 = 29); "whole" comes first on the tie with "shared".
  CHECK(Choose(PolicyKind::kGpuPacking, &c, Pod(1000, 1, 1000)).node == 1);
  // CPU-only pods score 0 everywhere: the first node.
  CHECK(Choose(PolicyKind::kGpuPacking, &c, Pod(1000, 0, 0)).node == 0);
}

TEST_CASE("gpu-clustering: pods of the same kind together", "[sim][fill][unit]") {
  FillCluster c(MakeNodes("empty,64000,1000,4,T4\nshares,64000,1000,4,T4\nones,64000,1000,4,T4\n"));
  std::unique_ptr<FillPolicy> policy =
      MakeFillPolicy(PolicyKind::kGpuClustering, {}, c.node_count());
  auto place = [&](int32_t n, const FillPod& pod) {
    const FillChoice choice{n, c.BestFitGpus(n, pod)};
    c.Place(pod, n, choice.gpus);
    policy->Placed(c, pod, choice);
  };
  place(1, Pod(1000, 1, 200));
  place(2, Pod(1000, 1, 1000));
  const FillPod share = Pod(1000, 1, 300);
  CHECK(policy->Choose(c, share, Feasible(c, share)).node == 1);
  const FillPod one = Pod(1000, 1, 1000);
  CHECK(policy->Choose(c, one, Feasible(c, one)).node == 2);
  const FillPod two = Pod(1000, 2, 1000);  // a new kind: the unused node (base + 25)
  CHECK(policy->Choose(c, two, Feasible(c, two)).node == 0);
}

TEST_CASE("random: uniform over feasible nodes, the same choices for the same seed",
          "[sim][fill][unit]") {
  FillCluster c(MakeNodes("a,8000,1000,2,T4\nb,8000,1000,2,T4\nc,100,1000,2,T4\n"));
  const FillPod pod = Pod(1000, 1, 500);
  std::mt19937_64 rng1(7), rng2(7);
  int counts[3] = {0, 0, 0};
  for (int i = 0; i < 200; ++i) {
    const FillChoice a = Choose(PolicyKind::kRandom, &c, pod, nullptr, &rng1);
    const FillChoice b = Choose(PolicyKind::kRandom, &c, pod, nullptr, &rng2);
    REQUIRE(a.node == b.node);
    REQUIRE(a.gpus == b.gpus);
    ++counts[a.node];
  }
  CHECK(counts[0] > 50);
  CHECK(counts[1] > 50);
  CHECK(counts[2] == 0);  // c lacks the CPU
}

TEST_CASE("fgd: prefers the placement that keeps free shares usable, unlike best fit",
          "[sim][fill][unit]") {
  // Every typical pod asks 600 milli. a is empty; b has 600 free on its only GPU.
  FillCluster c(MakeNodes("a,8000,1000,1,T4\nb,8000,1000,1,T4\n"));
  Put(&c, 1, Pod(1000, 1, 400));
  const FragMeasure frag(TypicalPods({Pod(1000, 1, 600)}, 1.0), 1);
  const FillPod pod = Pod(1000, 1, 400);
  // On a: 1000 -> 600 free, still usable: no change, score int(100 x sigmoid(0)) = 50.
  // On b: 600 -> 200 free, a fragment: +200, score int(100 x sigmoid(-0.2)) = 45.
  CHECK(Choose(PolicyKind::kFgd, &c, pod, &frag).node == 0);
  CHECK(Choose(PolicyKind::kBestFit, &c, pod).node == 1);

  SECTION("fgd-exact tells apart what the rounded score ties") {
    // a has 650 free, b 640. A 100 pod leaves 550 or 540, fragments for 600-pods: +550 or
    // +540, both int(100 x sigmoid(-0.55 or -0.54)) = 36. fgd takes the first node on the
    // tie; fgd-exact the smaller growth, b.
    FillCluster d(MakeNodes("a,8000,1000,1,T4\nb,8000,1000,1,T4\n"));
    Put(&d, 0, Pod(1000, 1, 350));
    Put(&d, 1, Pod(1000, 1, 360));
    CHECK(Choose(PolicyKind::kFgd, &d, Pod(1000, 1, 100), &frag).node == 0);
    CHECK(Choose(PolicyKind::kFgdExact, &d, Pod(1000, 1, 100), &frag).node == 1);
  }
  SECTION("within a node it takes the GPU that leaves no fragment, the first on ties") {
    FillCluster d(MakeNodes("a,8000,1000,3,T4\n"));
    Put(&d, 0, Pod(1000, 1, 300));  // GPUs free: 700, 1000, 1000
    // A 200 pod on GPU 0 leaves 500, a fragment for 600-pods (+500: score 37); on GPU 1 or
    // 2 it leaves 800, still usable (score 50). GPU 1, the first of the tied ones.
    CHECK(Choose(PolicyKind::kFgd, &d, Pod(1000, 1, 200), &frag).gpus == 0b10);
    // Using a GPU that is already a fragment lowers the fragmentation: a 500 pod on a GPU
    // with 500 free wins over a free GPU.
    FillCluster e(MakeNodes("a,8000,1000,2,T4\n"));
    Put(&e, 0, Pod(1000, 1, 500));
    CHECK(Choose(PolicyKind::kFgd, &e, Pod(1000, 1, 500), &frag).gpus == 0b01);
  }
}

TEST_CASE(
    "DrawFillWorkload: reaches the demand, is fixed by the seed, keeps the list once "
    "in artifact mode",
    "[sim][fill][unit]") {
  std::vector<FillPod> pods = {Pod(1000, 1, 500), Pod(1000, 1, 1000), Pod(1000, 0, 0),
                               Pod(2000, 2, 1000)};
  for (size_t i = 0; i < pods.size(); ++i) pods[i].source = static_cast<int32_t>(i);
  auto sources = [](const std::vector<FillPod>& w) {
    std::vector<int32_t> s;
    for (const FillPod& p : w) s.push_back(p.source);
    return s;
  };
  auto demand = [](const std::vector<FillPod>& w) {
    int64_t d = 0;
    for (const FillPod& p : w) d += p.TotalGpuMilli();
    return d;
  };
  const int64_t capacity = 20000;
  absl::StatusOr<std::vector<FillPod>> a =
      DrawFillWorkload(pods, capacity, 1.3, FillWorkload::kSample, 42);
  absl::StatusOr<std::vector<FillPod>> b =
      DrawFillWorkload(pods, capacity, 1.3, FillWorkload::kSample, 42);
  absl::StatusOr<std::vector<FillPod>> other =
      DrawFillWorkload(pods, capacity, 1.3, FillWorkload::kSample, 43);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  REQUIRE(other.ok());
  CHECK(sources(*a) == sources(*b));
  CHECK(sources(*a) != sources(*other));
  CHECK(demand(*a) >= 26000);
  CHECK(demand(*a) < 26000 + 2000);  // stops at the draw that reaches the target

  absl::StatusOr<std::vector<FillPod>> art =
      DrawFillWorkload(pods, capacity, 1.3, FillWorkload::kArtifact, 42);
  REQUIRE(art.ok());
  std::vector<int32_t> head = sources(*art);
  head.resize(pods.size());
  std::sort(head.begin(), head.end());
  CHECK(head == std::vector<int32_t>{0, 1, 2, 3});  // the whole list first, shuffled
  CHECK(demand(*art) >= 26000);

  CHECK_FALSE(DrawFillWorkload({Pod(1000, 0, 0)}, capacity, 1.3, FillWorkload::kSample, 1).ok());
  CHECK_FALSE(DrawFillWorkload(pods, capacity, 0, FillWorkload::kSample, 1).ok());
  CHECK_FALSE(DrawFillWorkload(pods, capacity, 11, FillWorkload::kSample, 1).ok());
}

TEST_CASE("RunFill: accounts for every pod and draws one curve point per percent",
          "[sim][fill][unit]") {
  const OpenbNodeList nodes = MakeNodes("a,16000,100000,4,T4\nb,16000,100000,2,V100\n");
  absl::StatusOr<OpenbPodList> list = ParseOpenbPods(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
      "p0,2000,10,1,300\np1,4000,10,1,1000\np2,1000,10,0,0\np3,8000,10,2,1000\n",
      "pods.csv");
  REQUIRE(list.ok());
  absl::StatusOr<std::vector<FillPod>> pods = MakeFillPods(*list, nodes);
  REQUIRE(pods.ok());
  for (PolicyKind kind : testing::kEveryPodPolicy) {
    INFO(PolicyKindName(kind));
    FillOptions options;
    options.policy = kind;
    absl::StatusOr<FillRun> run = RunFill(nodes, *pods, options, 42);
    INFO(run.status().ToString());
    REQUIRE(run.ok());
    CHECK(run->placed_pods + run->failed_pods == run->arrived_pods);
    CHECK(run->allocated_milli <= run->capacity_milli);
    CHECK(run->arrived_milli >= 7800);
    REQUIRE(run->curve.size() == 130);
    CHECK(run->curve.back().arrived_demand == Approx(1.3));
    CHECK(run->curve.back().allocation_ratio == Approx(run->allocation_ratio));
    int64_t failed = 0;
    for (int64_t f : run->failed_by_reason) failed += f;
    CHECK(failed == run->failed_pods);
    absl::StatusOr<FillRun> again = RunFill(nodes, *pods, options, 42);
    REQUIRE(again.ok());
    CHECK(again->allocated_milli == run->allocated_milli);
  }
}

TEST_CASE("RunFill: on the openb default trace FGD beats best fit and random",
          "[sim][fill][unit]") {
  const std::optional<FillInputs> in = testing::LoadPublishedOpenb("default");
  if (!in) return;
  double ratio[3] = {};
  int i = 0;
  for (PolicyKind kind : {PolicyKind::kRandom, PolicyKind::kBestFit, PolicyKind::kFgd}) {
    FillOptions options;
    options.policy = kind;
    absl::StatusOr<FillRun> run = RunFill(in->nodes, in->fill_pods, options, 42);
    REQUIRE(run.ok());
    ratio[i++] = run->allocation_ratio;
  }
  CAPTURE(ratio[0], ratio[1], ratio[2]);
  CHECK(ratio[0] < ratio[1]);
  CHECK(ratio[1] < ratio[2]);
  CHECK(ratio[2] > 0.94);
}

// Runs `hived-sim fill ARGS...`; returns the exit code.
int Fill(std::vector<std::string> args) {
  args.insert(args.begin(), "fill");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  return FillCommand(static_cast<int>(argv.size()), argv.data());
}

std::string Slurp(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_CASE("hived-sim fill: writes summary.json and curve.csv, and bad input exits non-zero",
          "[sim][fill][unit]") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("hived_fill_test_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::string nodes = testing::TestPath("openb/nodes.csv");
  const std::string pods = testing::TestPath("openb/pods.csv");
  REQUIRE(Fill({"--nodes", nodes, "--pods", pods, "--format", "openb", "--seeds", "1..3",
                "--policy", "best-fit", "--out", (dir / "ok").string()}) == kExitOk);
  const nlohmann::json summary = nlohmann::json::parse(Slurp(dir / "ok" / "summary.json"));
  CHECK(summary["policy"] == "best-fit");
  CHECK(summary["per_seed"].size() == 3);
  CHECK(summary["allocation_ratio"].get<double>() > 0);
  CHECK(summary["allocation_ratio"].get<double>() <= 1);
  CHECK(summary["pod_list"]["censored_running"] == 2);
  CHECK(summary["pod_list"]["gpu_spec_with_unknown_model"] == 1);
  const std::string curve = Slurp(dir / "ok" / "curve.csv");
  CHECK(curve.rfind("arrived_demand,", 0) == 0);
  CHECK(std::count(curve.begin(), curve.end(), '\n') == 131);  // header + 130 percent steps
  // Deterministic: the same seeds write the same summary.
  REQUIRE(Fill({"--nodes", nodes, "--pods", pods, "--format", "openb", "--seeds", "1..3",
                "--policy", "best-fit", "--out", (dir / "again").string()}) == kExitOk);
  CHECK(Slurp(dir / "again" / "summary.json") == Slurp(dir / "ok" / "summary.json"));

  const std::string out = (dir / "bad").string();
  CHECK(Fill({"--nodes", nodes, "--pods", pods, "--format", "philly", "--out", out}) == kExitUsage);
  CHECK(Fill({"--nodes", nodes, "--pods", pods, "--format", "openb", "--policy", "first-fit",
              "--out", out}) == kExitUsage);
  CHECK(Fill({"--nodes", nodes, "--pods", pods, "--format", "openb", "--seeds", "9..3", "--out",
              out}) == kExitUsage);
  CHECK(Fill({"--nodes", nodes, "--pods", pods, "--format", "openb", "--seed", "1", "--seeds",
              "1..2", "--out", out}) == kExitUsage);
  CHECK(Fill({"--nodes", nodes, "--pods", pods, "--format", "openb", "--inflate", "0", "--out",
              out}) == kExitUsage);
  CHECK(Fill({"--nodes", pods, "--pods", pods, "--format", "openb", "--out", out}) ==
        kExitFailed);  // a pod list as the node list: header error
  CHECK(Fill({"--nodes", nodes, "--pods", testing::TestPath("openb/absent.csv"), "--format",
              "openb", "--out", out}) == kExitFailed);
  CHECK_FALSE(std::filesystem::exists(out));
  std::filesystem::remove_all(dir);
}

// Regression: fill wrote summary.json and then failed on curve.csv, leaving half its outputs
// (and an earlier run's summary looked current). Outputs are now whole or absent.
TEST_CASE("hived-sim fill: a failed write leaves no output and keeps the user's inputs",
          "[sim][fill][unit]") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("hived_fill_atomic_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const std::string nodes = testing::TestPath("openb/nodes.csv");
  const std::string pods = testing::TestPath("openb/pods.csv");
  std::filesystem::create_directories(dir / "curve.csv");  // a folder where a file must go
  CHECK(Fill({"--nodes", nodes, "--pods", pods, "--format", "openb", "--seed", "1", "--out",
              dir.string()}) == kExitFailed);
  CHECK_FALSE(std::filesystem::exists(dir / "summary.json"));
  CHECK(std::filesystem::is_directory(dir / "curve.csv"));
  // An input that is one of the outputs would be cleared before it is read: refused.
  std::filesystem::remove_all(dir / "curve.csv");
  std::filesystem::copy_file(pods, dir / "curve.csv");
  CHECK(Fill({"--nodes", nodes, "--pods", (dir / "curve.csv").string(), "--format", "openb",
              "--seed", "1", "--out", dir.string()}) == kExitFailed);
  CHECK(Slurp(dir / "curve.csv") == Slurp(pods));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hived::sim

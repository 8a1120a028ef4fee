#include "sim/metrics/fill_summary.h"

#include <string>

#include "sim/common/json.h"
#include "support/catch.h"

namespace hived::sim {
namespace {

TEST_CASE("FillSummaryJson: spreads over the seeds and the lists' facts in nlohmann's layout",
          "[sim][unit]") {
  OpenbNodeList nodes;
  nodes.nodes.resize(3);
  nodes.gpu_nodes = 2;
  nodes.total_gpus = 16;
  nodes.models = {"V100"};
  nodes.model_gpus = {16};
  OpenbPodStats pods;
  pods.pods = 10;
  pods.total_gpu_milli = 8000;
  FillSummary s;
  s.nodes_file = "n.csv";
  s.pods_file = "p.csv";
  s.policy = "hived";
  s.inflate = 1.3;
  s.workload = "sample";
  s.typical_coverage = 0.95;
  s.seeds = {42, 43};
  for (uint64_t seed : s.seeds) {
    FillSeedFigures f;
    f.seed = seed;
    f.allocation_ratio = seed == 42 ? 0.5 : 1.0;
    f.failed_pods = seed == 42 ? 2 : 4;
    f.failed_by_reason = {{"no_gpu", f.failed_pods}};
    s.per_seed.push_back(f);
  }
  s.failed_all_seeds = {{"no_gpu", 6}};
  s.capacity_milli = 16000;
  s.nodes = &nodes;
  s.pods = &pods;
  const std::string json = FillSummaryJson(s);
  absl::StatusOr<JsonValue> v = ParseJson(json, "summary.json");
  REQUIRE(v.ok());
  CHECK(v->NumberOr("allocation_ratio", -1) == 0.75);
  const JsonValue* spread = v->Find("failed_pods");
  REQUIRE(spread != nullptr);
  CHECK(spread->NumberOr("mean", -1) == 3.0);
  CHECK(spread->NumberOr("min", -1) == 2.0);
  CHECK(spread->NumberOr("max", -1) == 4.0);
  CHECK(v->Find("pod_list")->NumberOr("gpu_demand", -1) == 0.5);
  CHECK(v->Find("per_seed")->array.size() == 2);
  // nlohmann-json's dump(2): two-space indents, arrays one element a line, doubles exact.
  CHECK(json.find("\"seeds\": [\n    42,\n    43\n  ],") != std::string::npos);
  CHECK(json.find("\"inflate\": 1.3,") != std::string::npos);
  CHECK(json.find("\"failed_pods\": {\n    \"mean\": 3.0,") != std::string::npos);
  CHECK(json.back() == '\n');
}

TEST_CASE("SpreadOf: sample standard deviation and none for one value", "[sim][unit]") {
  const FillSpread one = SpreadOf({2.0});
  CHECK(one.stddev == 0.0);
  CHECK(one.mean == 2.0);
  const FillSpread two = SpreadOf({1.0, 3.0});
  CHECK(two.mean == 2.0);
  CHECK(two.stddev == Approx(1.41421356));
  CHECK(SpreadOf({}).max == 0.0);
}

}  // namespace
}  // namespace hived::sim

// The openb readers and the config generator (sim/trace/openb_reader.h, sim/trace/openb_config.h).
#include <algorithm>
#include <string>

#include "hived/config.h"
#include "sim/trace/openb_config.h"
#include "sim/trace/openb_reader.h"
#include "support/catch.h"
#include "unit/sim/openb_test_util.h"
#include "unit/sim/sim_test_util.h"

namespace hived::sim {
namespace {

using testing::TestPath;

constexpr char kPodHeader[] =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,"
    "deletion_time,scheduled_time\n";
constexpr char kNodeHeader[] = "sn,cpu_milli,memory_mib,gpu,model\n";

std::string ErrorOf(const absl::Status& s) { return std::string(s.message()); }

OpenbNodeList Nodes() {
  absl::StatusOr<OpenbNodeList> nodes = ReadOpenbNodesFile(TestPath("openb/nodes.csv"));
  INFO(nodes.status().ToString());
  REQUIRE(nodes.ok());
  return *nodes;
}

TEST_CASE("ParseOpenbNodes: reads nodes, models in order of appearance and GPU totals",
          "[sim][openb][unit]") {
  const OpenbNodeList nodes = Nodes();
  REQUIRE(nodes.nodes.size() == 3);
  CHECK(nodes.gpu_nodes == 2);
  CHECK(nodes.total_gpus == 6);
  CHECK(nodes.models == std::vector<std::string>{"T4", "V100"});
  CHECK(nodes.model_gpus == std::vector<int64_t>{2, 4});
  CHECK(nodes.nodes[2].gpus == 0);
  CHECK(nodes.nodes[2].model.empty());
  CHECK(nodes.nodes[1].cpu_milli == 64000);
  CHECK(nodes.nodes[1].line == 3);
}

TEST_CASE("ParseOpenbPods: counts every quirk of the 11-column layout", "[sim][openb][unit]") {
  absl::StatusOr<OpenbPodList> pods = ReadOpenbPodsFile(TestPath("openb/pods.csv"));
  INFO(pods.status().ToString());
  REQUIRE(pods.ok());
  const OpenbPodStats& st = pods->stats;
  CHECK(st.pods == 5);
  CHECK(st.has_times);
  CHECK(st.cpu_only == 1);
  CHECK(st.sharing == 2);
  CHECK(st.whole_gpu == 2);
  CHECK(st.total_gpu_milli == 500 + 1000 + 2000 + 250);
  CHECK(st.zero_memory == 1);
  CHECK(st.duplicate_spec == 1);
  CHECK(st.pending == 1);
  CHECK(st.trace_end == 100);
  CHECK(st.censored == 2);  // p0 and p3: Running, deleted at the trace end
  CHECK(st.with_gpu_spec == 2);
  const OpenbPod& p1 = pods->pods[1];
  CHECK(p1.gpu_spec == std::vector<std::string>{"T4"});  // "T4|T4" deduplicated
  CHECK(p1.qos == OpenbQos::kLS);
  const OpenbPod& p2 = pods->pods[2];
  CHECK(p2.phase == OpenbPhase::kPending);
  CHECK_FALSE(p2.scheduled_time.has_value());
  CHECK(p2.creation_time == 20);

  // A spec naming one known and one unknown model is accepted and counted.
  REQUIRE(CheckPodSpecs(&*pods, Nodes()).ok());
  CHECK(pods->stats.unknown_spec_model == 1);
}

TEST_CASE("ParseOpenbPods: the 5-column multigpu layout has no qos, phase or times",
          "[sim][openb][unit]") {
  absl::StatusOr<OpenbPodList> pods = ReadOpenbPodsFile(TestPath("openb/pods-5col.csv"));
  INFO(pods.status().ToString());
  REQUIRE(pods.ok());
  CHECK_FALSE(pods->stats.has_times);
  REQUIRE(pods->pods.size() == 3);
  CHECK(pods->pods[1].num_gpu == 4);
  CHECK(pods->pods[1].qos == OpenbQos::kUnknown);
  CHECK_FALSE(pods->pods[1].creation_time.has_value());
  CHECK(pods->stats.censored == 0);
  CHECK(pods->stats.pending == 0);
}

TEST_CASE("ParseOpenbPods: bad rows are located errors, all reported at once",
          "[sim][openb][unit]") {
  struct Case {
    std::string row;
    std::string expected;  // "file:line:column: message" part
  };
  const Case cases[] = {
      {"a,1000,10,1,0,,BE,Running,0,1,0", "f.csv:2:13: GPU share outside 1..1000"},
      {"a,1000,10,1,1001,,BE,Running,0,1,0", "f.csv:2:13: GPU share outside 1..1000"},
      {"a,1000,10,2,500,,BE,Running,0,1,0", "f.csv:2:13: a pod of 2 GPUs takes whole GPUs"},
      {"a,1000,10,0,100,,BE,Running,0,1,0", "f.csv:2:13: a CPU-only pod (num_gpu 0)"},
      {"a,-5,10,1,100,,BE,Running,0,1,0", "f.csv:2:3: cpu_milli must be an integer"},
      {"a,1000,10,65,1000,,BE,Running,0,1,0", "f.csv:2:11: num_gpu must be an integer in 0..64"},
      {"a,1000,10,1,100,,XX,Running,0,1,0", "f.csv:2:18: unknown qos 'XX'"},
      {"a,1000,10,1,100,,BE,Gone,0,1,0", "f.csv:2:21: unknown pod_phase 'Gone'"},
      {"a,1000,10,1,100,,BE,Running,5,1,5", "f.csv:2:31: deletion_time 1 is before"},
      {"a,1000,10,1,100,,BE,Running,0,1,", "f.csv:2:33: only Pending pods may lack"},
      {"a,1000,10,1,100,T4||V100,BE,Running,0,1,0", "f.csv:2:20: empty model name in gpu_spec"},
      {"a,1000,10,1,100,,BE,Running,0,1", "f.csv:2:1: expected 11 columns"},
      {",1000,10,1,100,,BE,Running,0,1,0", "f.csv:2:1: empty pod name"},
  };
  for (const Case& c : cases) {
    INFO(c.row);
    absl::StatusOr<OpenbPodList> pods =
        ParseOpenbPods(std::string(kPodHeader) + c.row + "\n", "f.csv");
    REQUIRE_FALSE(pods.ok());
    CHECK(pods.status().code() == absl::StatusCode::kInvalidArgument);
    INFO(ErrorOf(pods.status()));
    CHECK(ErrorOf(pods.status()).find(c.expected) != std::string::npos);
  }
  SECTION("every bad row is listed, and --skip-bad-rows counts them instead") {
    const std::string text = std::string(kPodHeader) +
                             "a,1,1,1,2000,,BE,Running,0,1,0\n"
                             "b,1,1,1,500,,BE,Running,0,1,0\n"
                             "b,1,1,1,500,,BE,Running,0,1,0\n";
    absl::StatusOr<OpenbPodList> pods = ParseOpenbPods(text, "f.csv");
    REQUIRE_FALSE(pods.ok());
    CHECK(ErrorOf(pods.status()).find("f.csv:2:") != std::string::npos);
    CHECK(ErrorOf(pods.status()).find("f.csv:4:1: duplicate pod name 'b' (first on line 3)") !=
          std::string::npos);
    absl::StatusOr<OpenbPodList> skipped = ParseOpenbPods(text, "f.csv", /*skip_bad_rows=*/true);
    REQUIRE(skipped.ok());
    CHECK(skipped->pods.size() == 1);
    CHECK(skipped->stats.skipped_rows == 2);
    CHECK_FALSE(skipped->warnings.empty());
  }
  SECTION("a wrong header or an empty file is an error even when skipping") {
    CHECK_FALSE(ParseOpenbPods("name,cpu\n", "f.csv", true).ok());
    CHECK_FALSE(ParseOpenbPods("", "f.csv", true).ok());
    CHECK_FALSE(ParseOpenbPods(kPodHeader, "f.csv").ok());  // no pods
  }
}

TEST_CASE("ParseOpenbNodes: bad rows are located errors", "[sim][openb][unit]") {
  const std::pair<std::string, std::string> cases[] = {
      {"n,1000,10,2,", "f.csv:2:13: a node with GPUs needs a model"},
      {"n,1000,10,0,T4", "f.csv:2:13: model 'T4' given for a node without GPUs"},
      {"n,1000,10,99,T4", "f.csv:2:11: gpu must be an integer in 0..64"},
      {"n,x,10,1,T4", "f.csv:2:3: cpu_milli must be an integer"},
      {"n,1000,10,1", "f.csv:2:1: expected 5 columns"},
  };
  for (const auto& [row, expected] : cases) {
    INFO(row);
    absl::StatusOr<OpenbNodeList> nodes =
        ParseOpenbNodes(std::string(kNodeHeader) + row + "\n", "f.csv");
    REQUIRE_FALSE(nodes.ok());
    CHECK(ErrorOf(nodes.status()).find(expected) != std::string::npos);
  }
  absl::StatusOr<OpenbNodeList> dup =
      ParseOpenbNodes(std::string(kNodeHeader) + "n,1000,10,1,T4\nn,1000,10,1,T4\n", "f.csv");
  REQUIRE_FALSE(dup.ok());
  CHECK(ErrorOf(dup.status()).find("f.csv:3:1: duplicate node name 'n'") != std::string::npos);
  CHECK(ReadOpenbNodesFile(TestPath("openb/absent.csv")).status().code() ==
        absl::StatusCode::kNotFound);
}

TEST_CASE("openb readers: a binary header is quoted escaped in the error", "[sim][openb][unit]") {
  const std::string garbage = std::string("\x01\xff\xfe") + "sn;x\n";
  for (const absl::Status& s :
       {ParseOpenbNodes(garbage, "f.csv").status(), ParseOpenbPods(garbage, "f.csv").status()}) {
    const std::string error = ErrorOf(s);
    INFO(error);
    CHECK(error.find("f.csv:1:1: not an openb") != std::string::npos);
    CHECK(error.find("got '\\x01\\xff\\xfesn;x'") != std::string::npos);
    CHECK(std::none_of(error.begin(), error.end(), [](char c) {
      return static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f;
    }));
  }
}

TEST_CASE("CheckPodSpecs: a gpu_spec naming no model of the cluster is a located error",
          "[sim][openb][unit]") {
  absl::StatusOr<OpenbPodList> pods = ParseOpenbPods(
      std::string(kPodHeader) + "a,1000,10,1,500,A100|H100,BE,Running,0,1,0\n", "pods.csv");
  REQUIRE(pods.ok());
  const absl::Status s = CheckPodSpecs(&*pods, Nodes());
  REQUIRE_FALSE(s.ok());
  CHECK(ErrorOf(s).find("pods.csv:2:17: gpu_spec of pod 'a' names no GPU model") !=
        std::string::npos);
  CHECK(ErrorOf(s).find("T4, V100") != std::string::npos);

  SECTION("with drop_unrunnable the pod is dropped, counted and reported, not silently lost") {
    absl::StatusOr<OpenbPodList> two = ParseOpenbPods(
        std::string(kPodHeader) +
            "a,1000,10,1,500,A100|H100,BE,Running,0,1,0\nb,1000,10,1,500,T4,BE,Running,0,1,0\n",
        "pods.csv");
    REQUIRE(two.ok());
    REQUIRE(CheckPodSpecs(&*two, Nodes(), /*drop_unrunnable=*/true).ok());
    REQUIRE(two->pods.size() == 1);
    CHECK(two->pods[0].name == "b");
    CHECK(two->stats.dropped_unknown_spec == 1);
    CHECK(two->stats.pods == 1);
    CHECK(two->stats.sharing == 1);
    CHECK(two->stats.with_gpu_spec == 1);
    CHECK(two->stats.total_gpu_milli == 500);
    REQUIRE_FALSE(two->warnings.empty());
    CHECK(two->warnings.front().find("pods.csv:2:17") != std::string::npos);
    // Dropping every pod leaves nothing to run: an error, and the list is left as it was.
    CHECK_FALSE(CheckPodSpecs(&*pods, Nodes(), /*drop_unrunnable=*/true).ok());
    CHECK(pods->pods.size() == 1);
    CHECK(pods->stats.pods == 1);
  }
}

TEST_CASE("BuildOpenbConfig: one chain per model and node size, loadable by the config loader",
          "[sim][openb][unit]") {
  absl::StatusOr<OpenbNodeList> nodes = ParseOpenbNodes(std::string(kNodeHeader) +
                                                            "a,1000,10,2,T4\n"
                                                            "b,1000,10,4,T4\n"
                                                            "c,1000,10,2,T4\n"
                                                            "d,1000,10,0,\n"
                                                            "e,1000,10,8,V100\n",
                                                        "n.csv");
  REQUIRE(nodes.ok());
  absl::StatusOr<OpenbConfig> config = BuildOpenbConfig(*nodes);
  INFO(config.status().ToString());
  REQUIRE(config.ok());
  CHECK(config->cpu_only_nodes == 1);
  REQUIRE(config->spec.cell_types.size() == 3);
  CHECK(config->spec.cell_types[0].name == "T4-2GPU-NODE");
  CHECK(config->spec.cell_types[0].child_cell_type == "T4");
  CHECK(config->spec.cell_types[1].child_cell_number == 4);
  CHECK(config->spec.physical_cells.size() == 4);
  REQUIRE(config->spec.virtual_clusters.size() == 1);
  CHECK(config->spec.virtual_clusters[0].virtual_cells[0].cell_number == 2);
  // The YAML (with its header comment) loads back to the same spec.
  absl::StatusOr<ClusterSpec> loaded = LoadClusterSpecString(config->yaml, "gen.yaml");
  INFO(loaded.status().ToString());
  REQUIRE(loaded.ok());
  CHECK(loaded->physical_cells.size() == 4);
  CHECK(ClusterSpecToYaml(*loaded) == ClusterSpecToYaml(config->spec));

  absl::StatusOr<OpenbNodeList> bad =
      ParseOpenbNodes(std::string(kNodeHeader) + "a,1000,10,2,T4.1\n", "n.csv");
  REQUIRE(bad.ok());
  CHECK(ErrorOf(BuildOpenbConfig(*bad).status()).find("n.csv:2:1: model 'T4.1'") !=
        std::string::npos);
}

TEST_CASE("openb readers: the published trace reads with the README's counts",
          "[sim][openb][unit]") {
  const std::string dir = testing::OpenbDir();
  absl::StatusOr<OpenbNodeList> gpu_nodes =
      ReadOpenbNodesFile(dir + "openb_node_list_gpu_node.csv");
  if (gpu_nodes.status().code() == absl::StatusCode::kNotFound) {
    HIVED_SKIP_TEST("the openb trace is not at " << dir);
  }
  REQUIRE(gpu_nodes.ok());
  CHECK(gpu_nodes->nodes.size() == 1213);
  CHECK(gpu_nodes->total_gpus == 6212);
  absl::StatusOr<OpenbNodeList> all_nodes =
      ReadOpenbNodesFile(dir + "openb_node_list_all_node.csv");
  REQUIRE(all_nodes.ok());
  CHECK(all_nodes->nodes.size() == 1523);
  CHECK(all_nodes->total_gpus == 6212);
  absl::StatusOr<OpenbPodList> pods = ReadOpenbPodsFile(dir + "openb_pod_list_default.csv");
  INFO(pods.status().ToString());
  REQUIRE(pods.ok());
  CHECK(pods->stats.pods == 8152);
  CHECK(pods->stats.cpu_only == 1088);
  CHECK(pods->stats.sharing == 3078);
  CHECK(pods->stats.zero_memory == 1);
  CHECK(pods->stats.censored == 34);
  CHECK(pods->stats.pending == 897);
  CHECK(pods->stats.with_gpu_spec == 0);
  for (const char* variant : {"cpu050", "cpu100", "gpushare40", "gpuspec10", "multigpu20"}) {
    INFO(variant);
    absl::StatusOr<OpenbPodList> v = ReadOpenbPodsFile(dir + "openb_pod_list_" + variant + ".csv");
    INFO(v.status().ToString());
    REQUIRE(v.ok());
    CHECK(CheckPodSpecs(&*v, *gpu_nodes).ok());
    for (const OpenbPod& p : v->pods) {  // the header's invariants (3)-(5)
      INFO(p.name);
      REQUIRE((p.gpu_milli == 0) == (p.num_gpu == 0));
      REQUIRE((p.num_gpu != 1 || (p.gpu_milli >= 1 && p.gpu_milli <= 1000)));
      REQUIRE((p.num_gpu <= 1 || p.gpu_milli == 1000));
      for (size_t i = 0; i < p.gpu_spec.size(); ++i) {
        REQUIRE_FALSE(p.gpu_spec[i].empty());
        for (size_t j = 0; j < i; ++j) REQUIRE(p.gpu_spec[i] != p.gpu_spec[j]);
      }
      if (p.creation_time) REQUIRE(*p.creation_time <= *p.deletion_time);
    }
    CHECK(v->stats.has_times == (std::string(variant) != "multigpu20"));
  }
  absl::StatusOr<OpenbConfig> config = BuildOpenbConfig(*all_nodes);
  REQUIRE(config.ok());
  CHECK(config->cpu_only_nodes == 310);
  CHECK(LoadClusterSpecString(config->yaml, "openb.yaml").ok());
}

}  // namespace
}  // namespace hived::sim

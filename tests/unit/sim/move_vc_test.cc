// "Move a VC to A100s" (issue 11): `MoveVc` re-expresses a VC's reservation in cells of
// another type and grows the cluster to fit; `--move-vc` rewrites the VC's typed jobs.
#include <string>

#include "hived/config.h"
#include "sim/cluster/spec_edit.h"
#include "sim/engine/engine.h"
#include "sim/policies/scheduler_backend.h"
#include "sim/trace/trace_reader.h"
#include "sim/trace/trace_transform.h"
#include "sim_test_util.h"
#include "support/catch.h"

namespace hived::sim {
namespace {

const VirtualClusterSpec& Vc(const ClusterSpec& spec, const std::string& name) {
  for (const VirtualClusterSpec& v : spec.virtual_clusters) {
    if (v.name == name) return v;
  }
  FAIL("no VC " << name);
  return spec.virtual_clusters.front();
}

TraceTransforms Moves(const std::string& text) {
  TraceTransformFlags flags;
  flags.move_vc = text;
  absl::StatusOr<TraceTransforms> t = ParseTraceTransforms(flags);
  INFO(t.status().ToString());
  REQUIRE(t.ok());
  return *t;
}

// two-chains.yaml: `old` = a K80 rack + a K80 node (12 GPUs) + pinned k3; `fast` = one of the
// two A100 nodes.
TEST_CASE("MoveVc: the same GPUs in whole cells of the target type, cells added to fit",
          "[sim][planning][unit]") {
  ClusterSpec spec = testing::LoadSpec("sim/two-chains.yaml");
  SECTION("to a leaf type: its node type; 12 GPUs -> 2 A100 nodes = one A100 rack") {
    absl::StatusOr<std::string> leaf = MoveVc(&spec, "old", "A100");
    REQUIRE(leaf.ok());
    CHECK(*leaf == "A100");
    const VirtualClusterSpec& v = Vc(spec, "old");
    REQUIRE(v.virtual_cells.size() == 1);
    CHECK(v.virtual_cells[0].cell_type == "A100-RACK");
    CHECK(v.virtual_cells[0].cell_number == 1);
    CHECK(v.pinned_cells.size() == 1);  // the pinned K80 node stays
    // 3 A100 nodes reserved (old's rack + fast's node) on 2: one rack copied, as add-racks.
    REQUIRE(spec.physical_cells.size() == 4);
    CHECK(spec.physical_cells[3].cell_type == "A100-RACK");
    CHECK(spec.physical_cells[3].cell_children[0].cell_address == "add1-a0");
    CHECK(ValidateClusterSpec(spec).empty());
    CHECK(Vc(spec, "fast").virtual_cells[0].cell_type == "A100-RACK.A100-NODE");
    SECTION("moving again changes nothing") {
      const ClusterSpec before = spec;
      REQUIRE(MoveVc(&spec, "old", "A100-RACK.A100-NODE").ok());
      CHECK(Vc(spec, "old").virtual_cells[0].cell_type == "A100-RACK");
      CHECK(spec.physical_cells.size() == before.physical_cells.size());
    }
  }
  SECTION("to a path: 12 GPUs in 16-GPU racks round up to one rack; 5 nodes = rack + node") {
    REQUIRE(MoveVc(&spec, "old", "A100-RACK").ok());
    CHECK(Vc(spec, "old").virtual_cells.size() == 1);
    CHECK(Vc(spec, "old").virtual_cells[0].cell_type == "A100-RACK");
    ClusterSpec k80 = testing::LoadSpec("sim/two-chains.yaml");
    REQUIRE(MoveVc(&k80, "fast", "K80").ok());  // 8 GPUs -> 2 K80 nodes = one K80 rack
    CHECK(Vc(k80, "fast").virtual_cells[0].cell_type == "K80-RACK");
    CHECK(ValidateClusterSpec(k80).empty());
  }
  SECTION("errors name what is wrong") {
    absl::StatusOr<std::string> bad = MoveVc(&spec, "old", "H100");
    REQUIRE(!bad.ok());
    CHECK(std::string(bad.status().message()) ==
          "'H100' is neither a leaf type nor a cell type path of the physical cluster (leaf "
          "types: K80, A100)");
    CHECK(MoveVc(&spec, "nope", "A100").status().code() == absl::StatusCode::kNotFound);
    CHECK(!MoveVc(&spec, "old", "A100-RACK.K80-NODE").ok());
    CHECK(!ParseTraceTransforms([] {
             TraceTransformFlags f;
             f.move_vc = "old";
             return f;
           }())
               .ok());
  }
}

TEST_CASE("MoveVc in the trace: the VC's typed jobs ask for the new type and run there",
          "[sim][planning][unit]") {
  ClusterSpec spec = testing::LoadSpec("sim/two-chains.yaml");
  const TraceTransforms moves = Moves("old=A100");
  REQUIRE(ApplyVcMoves(moves, &spec).ok());
  absl::StatusOr<Trace> trace = HivedTraceSource({}).Parse(
      "job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration,pinned_cell\n"
      "typed,0,old,0,1,8,K80,100,\n"
      "any,0,old,0,1,8,,100,\n"
      "pinned,0,old,0,1,4,K80,100,old-pin\n"
      "other,0,fast,0,1,8,A100,100,\n",
      "t.csv");
  REQUIRE(trace.ok());
  REQUIRE(ApplyTraceTransforms(moves, spec, 1, &*trace).ok());
  CHECK(trace->jobs[0].gpu_type == "A100");  // was K80: the VC has no K80 cells left
  CHECK(trace->jobs[1].gpu_type.empty());    // any type the VC has: now A100 only
  CHECK(trace->jobs[2].gpu_type == "K80");   // pinned cells do not move
  CHECK(trace->jobs[3].gpu_type == "A100");  // other VCs untouched

  // Replayed under hived: 8-GPU pods (larger than a K80 node) now run on A100 nodes.
  const SpecInfo info(spec);
  REQUIRE(CheckPinnedCells(info, false, &*trace).ok());
  auto backend = MakeSchedulerBackend(PolicyKind::kHived, spec, 4);
  REQUIRE(backend.ok());
  Engine engine(info, backend->get(), {});
  absl::StatusOr<EngineResult> r = engine.Run(*trace, {});
  REQUIRE(r.ok());
  const std::vector<std::string>& nodes = (*backend)->nodes();
  for (size_t j = 0; j < 4; ++j) {
    INFO(trace->jobs[j].id.str());
    CHECK(r->records[j].state == JobState::kCompleted);
    CHECK(r->records[j].first_start == 0);
    REQUIRE(r->records[j].nodes.size() == 1);
    const std::string node = nodes[static_cast<size_t>(r->records[j].nodes[0])];
    CHECK(node.find(j == 2 ? "k3" : "a") != std::string::npos);
  }
}

}  // namespace
}  // namespace hived::sim

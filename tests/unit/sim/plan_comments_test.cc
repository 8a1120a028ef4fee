// sized.yaml keeps the input config's comments (issue 31, item 5): the input's lines with only
// the values the plan changed edited in, checked to load to exactly the spec written before;
// the fallback when that cannot be done line by line; `plan --all-vcs --resume` in joint
// rounds gives the outputs of an uninterrupted run.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "hived/config.h"
#include "planning_test_util.h"
#include "sim/planning/plan.h"
#include "sim/planning/plan_output.h"
#include "support/catch.h"

namespace hived::sim {
namespace {

namespace fs = std::filesystem;
using testing::ReadAll;

std::string Example(const std::string& name) {
  return ReadAll(std::string(HIVED_SOURCE_DIR) + "/config/examples/" + name);
}

// Every line of `input` that holds a comment is in `out`, in the same order.
void CheckCommentsKept(const std::string& input, const std::string& out) {
  size_t at = 0;
  for (absl::string_view line : absl::StrSplit(input, '\n')) {
    if (line.find('#') == absl::string_view::npos) continue;
    const std::string comment(line.substr(line.find('#')));
    INFO(comment);
    const size_t found = out.find(comment, at);
    REQUIRE(found != std::string::npos);
    at = found + comment.size();
  }
}

// `spec` as sized.yaml's body was before issue 31 item 5.
std::string Today(const ClusterSpec& spec) {
  return YamlWithStringVcNames(ClusterSpecToYaml(spec));
}

// The merged text loads to exactly the spec today's output loads to.
void CheckSameSpec(const std::string& merged, const ClusterSpec& sized) {
  absl::StatusOr<ClusterSpec> got = LoadClusterSpecString(merged);
  absl::StatusOr<ClusterSpec> want = LoadClusterSpecString(Today(sized));
  INFO(got.status().ToString());
  REQUIRE(got.ok());
  REQUIRE(want.ok());
  CHECK(ClusterSpecToYaml(*got) == ClusterSpecToYaml(*want));
}

TEST_CASE("Plan comments: philly.yaml with VC sizes changed and racks removed and added",
          "[sim][planning][unit]") {
  const std::string input = Example("philly.yaml");
  absl::StatusOr<ClusterSpec> base = LoadClusterSpecString(input);
  REQUIRE(base.ok());
  REQUIRE(base->physical_cells.size() > 2);
  ClusterSpec sized = *base;
  // philly.yaml reserves 122 of its 128 nodes: one rack less for the first VC (8 nodes
  // fewer), one node more for the last.
  REQUIRE(sized.virtual_clusters.front().virtual_cells.front().cell_number == 3);
  sized.virtual_clusters.front().virtual_cells.front().cell_number = 2;
  sized.virtual_clusters.back().virtual_cells.front().cell_number += 1;
  REQUIRE(ValidateClusterSpec(sized).empty());
  SECTION("a rack removed") { sized.physical_cells.pop_back(); }
  SECTION("a rack added") {
    PhysicalCellSpec rack = sized.physical_cells.back();
    for (PhysicalCellSpec& node : rack.cell_children) node.cell_address += "-new";
    sized.physical_cells.push_back(rack);
  }
  REQUIRE(ValidateClusterSpec(sized).empty());
  const std::optional<std::string> merged = MergeIntoInput(input, Today(sized));
  REQUIRE(merged.has_value());
  CheckCommentsKept(input, *merged);
  CheckSameSpec(*merged, sized);
  // Only what changed differs: the input's first lines (its comments, the cell types) stay.
  CHECK(merged->substr(0, input.find("  physicalCells:")) ==
        input.substr(0, input.find("  physicalCells:")));
}

TEST_CASE("Plan comments: two-racks.yaml keeps its inline comments and pinned cells",
          "[sim][planning][unit]") {
  const std::string input = Example("two-racks.yaml");
  absl::StatusOr<ClusterSpec> base = LoadClusterSpecString(input);
  REQUIRE(base.ok());
  ClusterSpec sized = *base;
  for (VirtualClusterSpec& vc : sized.virtual_clusters) {
    if (vc.name == "research") vc.virtual_cells.front().cell_number = 1;
  }
  const std::optional<std::string> merged = MergeIntoInput(input, Today(sized));
  REQUIRE(merged.has_value());
  CheckCommentsKept(input, *merged);
  CheckSameSpec(*merged, sized);
  // Nothing changed: the input comes back byte for byte.
  CHECK(MergeIntoInput(input, Today(*base)) == input);
}

TEST_CASE("Plan comments: a shared HiveD config keeps its comments", "[sim][planning][unit]") {
  const std::string path = "/work/shared/hived-configs/design.yaml";
  if (!fs::exists(path)) {
    WARN(path + " not found: skipped");
    return;
  }
  const std::string input = ReadAll(path);
  absl::StatusOr<ClusterSpec> base = LoadClusterSpecString(input);
  REQUIRE(base.ok());
  ClusterSpec sized = *base;
  REQUIRE(!sized.virtual_clusters.empty());
  sized.virtual_clusters.front().virtual_cells.front().cell_number += 1;
  const std::string text = SizedYamlText("# header\n", input, sized);
  CheckSameSpec(text, sized);
  CHECK(!absl::StrContains(text, "could not be kept"));
  CheckCommentsKept(input, text);
}

TEST_CASE("Plan comments: falls back to the written spec when lines cannot be edited",
          "[sim][planning][unit]") {
  // Flow-style VC cells: the reader does not follow them, so the spec is written out.
  std::string input = Example("two-racks.yaml");
  absl::StatusOr<ClusterSpec> base = LoadClusterSpecString(input);
  REQUIRE(base.ok());
  const size_t vcs = input.find("virtualClusters:");
  input = input.substr(0, vcs) +
          "# inner comment\nvirtualClusters:\n  prod: {virtualCells: [{cellType: V100-RACK, "
          "cellNumber: 1}]}\n";
  base = LoadClusterSpecString(input);
  INFO(base.status().ToString());
  REQUIRE(base.ok());
  ClusterSpec sized = *base;
  sized.virtual_clusters.front().virtual_cells.front().cell_number = 2;
  CHECK(!MergeIntoInput(input, Today(sized)).has_value());
  const std::string text = SizedYamlText("# header\n", input, sized);
  CHECK(absl::StartsWith(text, "# header\n# The input config's comments could not be kept"));
  CHECK(absl::StrContains(text, "# Input config comments"));
  CHECK(absl::EndsWith(text, Today(sized)));
  CheckSameSpec(text, sized);
  // A value the edit would get wrong (an anchor) also falls back.
  CHECK(!MergeIntoInput("a: &x 1\n", "a: 2\n").has_value());
}

#ifdef HIVED_SIM_EXE
TEST_CASE("Plan comments: --all-vcs --resume in joint rounds gives the uninterrupted outputs",
          "[sim][planning][unit]") {
  testing::TempDir tmp("plan-resume");
  const std::string out = tmp / "p";
  const std::string cmd =
      "plan --min-jobs 1 --config tests/testdata/planning/small.yaml --trace "
      "tests/testdata/planning/small-trace.csv --all-vcs --target 'p95_wait<=1h' --out " +
      out;
  testing::SimResult r = testing::RunSim(cmd, tmp / "log");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const std::vector<std::string> files = {"sized.yaml", "report.csv", "report.txt", "report.md"};
  std::vector<std::string> first;
  for (const std::string& f : files) first.push_back(ReadAll(out + "/" + f));
  // Interrupted: the outputs and the last round's probes are gone.
  std::vector<fs::path> probes;
  for (const auto& e : fs::directory_iterator(out + "/probes")) probes.push_back(e.path());
  REQUIRE(probes.size() > 1);
  std::sort(probes.begin(), probes.end());
  fs::remove_all(probes.back());
  for (const std::string& f : files) fs::remove(out + "/" + f);
  r = testing::RunSim(cmd + " --resume", tmp / "log");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(absl::StrContains(r.output, "finished probe(s) read, not run again"));
  for (size_t i = 0; i < files.size(); ++i) {
    INFO(files[i]);
    CHECK(ReadAll(out + "/" + files[i]) == first[i]);
  }
}
#endif

}  // namespace
}  // namespace hived::sim

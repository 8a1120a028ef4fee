// Shared checks of the persisted-state fuzz targets (state_fuzz.cc, group_record_fuzz.cc,
// bind_info_fuzz.cc): the cluster they restore into (config/examples/two-racks.yaml, whose
// node names the seeds use), and the fixed point whatever the readers accept must reach
// after one restart (issue 29): SaveState(Restore(s1)) == s1 for s1 = SaveState(Restore(s)),
// with every invariant holding on the way. A violation traps, which libFuzzer reports.
#ifndef HIVED_TESTS_FUZZ_STATE_FUZZ_CHECK_H_
#define HIVED_TESTS_FUZZ_STATE_FUZZ_CHECK_H_

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "hived/config.h"
#include "hived/scheduler.h"
#include "hived/state.h"

namespace hived::fuzz {

inline constexpr char kTwoRacksYaml[] = R"yaml(
physicalCluster:
  cellTypes:
    V100-PCIE: {childCellType: V100, childCellNumber: 2}
    V100-SOCKET: {childCellType: V100-PCIE, childCellNumber: 2}
    V100-NODE: {childCellType: V100-SOCKET, childCellNumber: 2, isNodeLevel: true}
    V100-RACK: {childCellType: V100-NODE, childCellNumber: 4}
  physicalCells:
  - cellType: V100-RACK
    cellChildren:
    - cellAddress: rack0-node0
    - cellAddress: rack0-node1
    - cellAddress: rack0-node2
    - cellAddress: rack0-node3
  - cellType: V100-RACK
    cellChildren:
    - cellAddress: rack1-node0
    - cellAddress: rack1-node1
    - cellAddress: rack1-node2
    - cellAddress: rack1-node3
      pinnedCellId: research-node
virtualClusters:
  prod:
    virtualCells: [{cellType: V100-RACK, cellNumber: 1}]
  research:
    virtualCells: [{cellType: V100-RACK.V100-NODE, cellNumber: 2}]
    pinnedCells: [{pinnedCellId: research-node}]
  dev:
    virtualCells: [{cellType: V100-RACK.V100-NODE.V100-SOCKET, cellNumber: 1}]
  test:
    virtualCells: [{cellType: V100-RACK.V100-NODE.V100-SOCKET.V100-PCIE, cellNumber: 1}]
)yaml";

[[noreturn]] inline void Fail(const char* what, absl::string_view detail = {}) {
  std::fprintf(stderr, "fuzz check failed: %s\n%.*s\n", what, static_cast<int>(detail.size()),
               detail.data());
  __builtin_trap();
}

inline void Require(bool cond, const char* what, absl::string_view detail = {}) {
  if (!cond) Fail(what, detail);
}

inline const ClusterSpec& TwoRacks() {
  static const ClusterSpec* const spec = [] {
    absl::StatusOr<ClusterSpec> s = LoadClusterSpecString(kTwoRacksYaml, "two-racks.yaml");
    if (!s.ok()) Fail("the fuzz cluster does not load", s.status().message());
    return new ClusterSpec(*std::move(s));
  }();
  return *spec;
}

// An error of a reader: a code of misuse and a message that says something, of bounded
// size whatever the input (issue 29: at most ~100 bytes of the input are quoted).
inline void RequireReaderError(const absl::Status& status) {
  Require(status.code() == absl::StatusCode::kInvalidArgument, "error code",
          status.ToString().substr(0, 400));
  Require(!status.message().empty(), "empty error message");
  Require(status.message().size() <= 2048, "error message over 2048 bytes",
          status.message().substr(0, 400));
}

inline std::string SaveOrDie(const Scheduler& s) {
  Require(s.CheckInvariants().ok(), "invariants", s.CheckInvariants().message());
  absl::StatusOr<std::string> saved = s.SaveState();
  Require(saved.ok(), "SaveState failed");
  return *saved;
}

// `saved` was written by SaveState (on `spec`, the fuzz cluster unless a journal's config
// change moved it): it restores, and saving again gives the same bytes.
inline void RequireFixedPoint(const std::string& saved, const ClusterSpec& spec = TwoRacks()) {
  absl::StatusOr<std::unique_ptr<Scheduler>> again = Scheduler::Restore(spec, saved);
  Require(again.ok(), "a saved state does not restore", again.status().message());
  const std::string resaved = SaveOrDie(**again);
  if (resaved != saved) Fail("save -> restore -> save differs", saved + "\n---\n" + resaved);
}

}  // namespace hived::fuzz

#endif  // HIVED_TESTS_FUZZ_STATE_FUZZ_CHECK_H_

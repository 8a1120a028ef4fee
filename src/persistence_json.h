// src/persistence_json.h: the JSON form of `GroupRecord` and of a saved scheduler state
// (docs/state-format.md), with nlohmann-json. Internal: public headers never include
// nlohmann-json; the public entry points are in include/hived/state.h and scheduler.h.
//
// Invariants:
//  (1) Writing is deterministic: keys in a fixed order, optional keys written exactly when
//      they differ from their default, groups in the order given (SaveState: by name), so
//      write(read(write(x))) == write(x) byte for byte.
//  (2) Reading never throws and never recurses deeper than `kMaxJsonDepth`; every error is
//      kInvalidArgument naming the JSON path ("$.groups[3].placement.pods[0].physicalNode")
//      or, for malformed JSON, the line and column.
//  (3) Reading rejects unknown keys (a typo must not drop data silently), keys newer than
//      the document's version, and a state of another schema or of a version outside
//      kOldestStateVersion..kStateVersion.
//
// Thread safety: pure functions.
#ifndef HIVED_SRC_PERSISTENCE_JSON_H_
#define HIVED_SRC_PERSISTENCE_JSON_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "hived/state.h"
#include "src/share_choice.h"

namespace hived::internal {

inline constexpr int kMaxJsonDepth = 32;

// A virtual cell bound although no group uses anything below it: inside a pinned cell
// (kept once bound), mirroring a bad physical cell, or a doomed cell's subtree.
struct SavedBinding {
  std::string virtual_cell;   // "VC1/0/3"
  std::string physical_cell;  // the physical address, "0/r0n3"
  bool bad = false;           // bound because the physical cell is bad
};

// A MIG GPU's layout (cellalloc/mig_layout.h), version 3: its configured instances by
// ascending start, free or used (the pods' records say by whom), and its counters.
struct SavedMigLayout {
  std::string gpu;                                         // the GPU's physical address, "0/b0/1"
  std::vector<std::pair<std::string, int32_t>> instances;  // (profile, start)
  int64_t creations = 0;
  int64_t reconfigurations = 0;
};

// A whole saved state: the nodes marked bad, every running group and the bindings that
// history decided (valid only for the same cluster structure: `config`).
struct SavedState {
  std::string config;                       // fingerprint of the cells and VCs it was saved with
  std::vector<std::string> bad_nodes;       // config order
  std::vector<GroupRecord> groups;          // by name
  std::vector<SavedBinding> bindings;       // virtual cell id order: parents first
  std::vector<std::string> doomed;          // doomed preassigned cells, in their VC slots' order
  int64_t next_holder = 0;                  // GPU sharing: the number of the next holder group
  ShareChoice::Learning share_shapes;       // GPU sharing: the shapes the stranded rule learnt
  std::vector<SavedMigLayout> mig_layouts;  // version 3: every MIG GPU's layout, leaf id order
};

// The lowest version that holds `state`: 3 with a MIG layout, a MIG member or a CPU-only
// member, else 2 (so that a state without them is written as before).
int32_t VersionNeeded(const SavedState& state);

// One group per line, so saved states diff well.
std::string SavedStateToJson(const SavedState& state);
// Errors (kInvalidArgument): malformed JSON (line, column), another schema or version,
// a malformed record or a duplicate group (JSON path).
absl::StatusOr<SavedState> SavedStateFromJson(std::string_view text);

}  // namespace hived::internal

#endif  // HIVED_SRC_PERSISTENCE_JSON_H_

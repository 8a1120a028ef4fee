// hierarchy/spec_analysis.h: HiveD's cell hierarchy, derived once from a `ClusterSpec`.
//
// The bottom module of the library: it depends only on Abseil and the public plain data
// (hived/cluster_spec.h, and hived/config.h for `ConfigError` and the capacity table). Every
// rule that derives the hierarchy lives here and nowhere else:
//   - the type table (`AnalyzeCellTypes`): leaf types, levels, node levels, leaf counts;
//   - default addresses (`DefaultChildIndex`) and device indices (`ParseDeviceIndex`);
//   - the semantic checks and the capacity table (`AnalyzeClusterSpec`): chains, node names,
//     device indices, pinned cells, VC demands, without building the forest.
// Users: config/ (`ValidateClusterSpec`, `ComputeCapacityReport`, the YAML loader, which
// attaches file positions to the errors by their YAML paths), cellalloc/ (the forest build,
// which trusts a spec this module accepted) and `hived::DescribeCluster` (for sim/).
//
// Invariants: (1) a spec without errors from `AnalyzeClusterSpec` has every type `usable`,
// exactly one node level per chain, unique nodes per chain and device indices per node, and
// at most `kMaxPhysicalCells` cells; (2) counts saturate at `kSaturated`, never overflow.
//
// Not thread-safe per call object; the functions keep no global state.
#ifndef HIVED_HIERARCHY_SPEC_ANALYSIS_H_
#define HIVED_HIERARCHY_SPEC_ANALYSIS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "hived/cluster_spec.h"
#include "hived/config.h"

namespace hived::hierarchy {

// Bounds that keep validation (and the forest built after it) small and fast on any input.
inline constexpr int64_t kMaxPhysicalCells = int64_t{1} << 20;  // cells of all levels
inline constexpr int32_t kMaxLevels = 32;                       // levels in one chain
inline constexpr int64_t kSaturated = int64_t{1} << 60;         // counts stop growing here

// Multiplies non-negative counts, saturating at `kSaturated`.
int64_t SatMul(int64_t a, int64_t b);
int64_t SatAdd(int64_t a, int64_t b);

// One cell type: defined in `cellTypes`, or a leaf type (referenced, not defined).
struct TypeInfo {
  std::string name;
  int32_t spec_index = -1;   // index in `ClusterSpec::cell_types`; -1 for a leaf type
  int32_t child = -1;        // index of the child type; -1 for a leaf type
  int32_t child_number = 0;  // `childCellNumber`
  bool is_node_level = false;
  // The fields below are meaningful only when `usable`: the type and everything below it
  // are well defined (no cycle, positive child numbers, at most `kMaxLevels` levels).
  bool usable = false;
  int32_t level = 0;        // 1 for a leaf type
  bool has_node = false;    // at or above node level
  int32_t node_levels = 0;  // node-level types from this type down to its leaf
  int32_t leaf = -1;        // the leaf type below
  int64_t leaf_count = 0;   // leaves in one full cell (saturating)
  int64_t cell_count = 0;   // cells of all levels in one full cell (saturating)
};

struct TypeTable {
  std::vector<TypeInfo> types;                     // defined types in config order, then leaf types
  std::unordered_map<std::string, int32_t> index;  // lookup only, never iterated
  int32_t Find(const std::string& name) const;
  // Type `t`'s ancestors-to-leaf path: t, child(t), ..., leaf. REQUIRES: types[t].usable.
  std::vector<int32_t> PathDown(int32_t t) const;
};

// Length of the valid UTF-8 sequence starting at `text[i]`, or 0 when it is not one (bad
// lead or continuation bytes, overlong forms, surrogates, beyond U+10FFFF).
size_t Utf8SequenceLength(std::string_view text, size_t i);
// True when all of `text` is valid UTF-8. Names (types, addresses, pinned ids, VCs) must be.
bool IsValidUtf8(std::string_view text);

// A leaf's device index: its address, decimal digits only, within int32.
bool ParseDeviceIndex(std::string_view text, int32_t* out);

// HiveD's default address of child `k` of a cell (`inferPhysicalCellSpec`): a top-level
// cell's default is its index in `physicalCells`; a child's is
// `parent_index * childCellNumber + k`, with the parent index reset to 0 at a node-level
// cell (so device indices restart on each node). Saturates at `kSaturated`.
int64_t DefaultChildIndex(int64_t parent_index, bool parent_is_node_level, int32_t child_number,
                          int64_t k);

// Builds the type table and checks the cell-type rules (names, child numbers, cycles, depth).
// `max_levels` bounds the hierarchy (validation uses `kMaxLevels`; the forest, which also
// serves specs built in code, allows deeper ones).
TypeTable AnalyzeCellTypes(const ClusterSpec& spec, std::vector<ConfigError>* errors,
                           int32_t max_levels = kMaxLevels);

// Everything the rules derive from a spec.
struct Analysis {
  TypeTable types;
  CapacityReport capacity;
};

// Runs every semantic rule; appends errors (YAML paths, no positions) to `errors` when it is
// not null. Never throws on any spec.
Analysis AnalyzeClusterSpec(const ClusterSpec& spec, std::vector<ConfigError>* errors);

// Levenshtein distance, for suggestions.
size_t EditDistance(std::string_view a, std::string_view b);
// "did you mean `x`?" for the closest candidate within a small distance of `name`, else "".
std::string DidYouMean(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace hived::hierarchy

#endif  // HIVED_HIERARCHY_SPEC_ANALYSIS_H_

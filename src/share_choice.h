// src/share_choice.h: the fragmentation-aware measure the sharing component chooses nodes by
// (docs/gpu-sharing.md, "The library's rule"): a node's *stranded* GPU milli — free GPU milli
// that the pods to come will not be able to use.
//
// The library learns the pods to come from a deterministic running tally of the pods it
// admits (`Note`: the pods of every fractional, host or CPU-only group that starts to run, at
// its Allocate or Recover; never at Schedule, so Filtering changes nothing): the
// shapes (CPU, host memory, share per GPU, GPU count, allowed leaf types) and how often each
// was asked. The *typical* shapes are the most frequent ones covering 95% of the tally,
// weighted by frequency; they are rebuilt when the tally's pod count reaches a power of two
// (1, 2, 4, ...), so the measure changes O(log pods) times and every decision depends only on
// the calls before it.
//
// A node's stranded milli is the sum of two parts, both in GPU milli:
//  1. shapes: per typical GPU shape its leaf type may run, weight x (the free milli of the
//     GPUs too small for it if the shape fits the node — GPUs, CPU, memory — else all the
//     node's free milli);
//  2. resources: the free milli the node cannot feed with the CPU and memory it has left, at
//     the tally's own ratios (CPU per GPU milli, memory per GPU milli): max(0, free - CPU
//     left / ratio, free - memory left / ratio); 0 where the node declares no limit.
//
// Invariants: (1) 0 <= Stranded(n) <= 2 x the node's free milli, 0 without free milli;
// (2) the typical GPU shapes' weights are positive and sum to at most 1 (CPU-only shapes
//     count in the normalisation but strand nothing; none before the first Note);
// (3) the tally's counts sum to `noted()`;
// (4) `ChangeAt` equals `Change` for every choice (bit for bit; tested against it).
//
// Example:
//   ShareChoice c;
//   c.Note({4000, 8192, 500, 1, ~uint64_t{0}}, 1);
//   ShareChoice::NodeState n{0, 32000, 65536, {1000, 500}};
//   double before = c.Stranded(n);
//
// Thread safety: not thread-safe; the scheduler serialises.
#ifndef HIVED_SRC_SHARE_CHOICE_H_
#define HIVED_SRC_SHARE_CHOICE_H_

#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"

namespace hived {

class ShareChoice {
 public:
  // One pod's shape. `milli`: per GPU (1..1000; 1000 for whole GPUs), 0 for CPU-only pods.
  struct Shape {
    int64_t cpu = 0;
    int64_t memory = 0;
    int32_t milli = 0;
    int32_t gpus = 0;
    uint64_t types = ~uint64_t{0};  // bit t: may run on leaf type t (the forest's order)
  };
  // A node as the measure sees it. Negative CPU / memory left: no declared limit.
  struct NodeState {
    int32_t type = -1;  // the node's leaf type index; -1: none
    int64_t cpu_left = -1;
    int64_t memory_left = -1;
    absl::InlinedVector<int32_t, 8> free;  // per leaf: its free milli
  };

  // Counts `pods` pods of `shape` (pods > 0).
  void Note(const Shape& shape, int32_t pods);
  int64_t noted() const { return noted_; }
  // Bumped whenever the typical shapes are rebuilt (cached scores are stale then).
  uint32_t generation() const { return generation_; }

  double Stranded(const NodeState& node) const;
  // Stranded(after) - Stranded(before) for one pod of `shape` on `node` taking leaf `leaf`
  // (-1: no GPU; whole GPUs: the first `gpus` fully free leaves). REQUIRES: it fits.
  double Change(const NodeState& node, const Shape& shape, int32_t leaf) const;

  // Change() of one pod of `shape` on `node` for one choice there: `choice` i for leaf i of
  // the node (a share there; +inf where it does not fit), `kAnyFreeLeaf` for a share on a
  // fully free leaf, or for whole GPUs / no GPU (+inf where they do not fit). Cached per
  // (shape, node, choice) until the node's version (`Touch`), `core_used` (the scheduler's
  // used leaves on it) or the generation changes; `state` computes the node's state on a
  // miss. O(1) on a hit; a miss is O(typical shapes) (the node's counts, O(typical shapes x
  // leaves), are computed once per node and version and shared by every shape).
  static constexpr int32_t kAnyFreeLeaf = -1;
  struct Entry {
    uint32_t generation = 0;
    uint32_t version = 0;
    uint64_t core_used = ~uint64_t{0};
    double any = 0;              // kAnyFreeLeaf's change; NaN: not computed yet
    std::vector<double> leaves;  // a share's, per leaf (empty for other shapes); NaN: not yet
  };
  using ShapeCache = std::vector<Entry>;  // per node
  // The cache of one shape (found once per call, then used for every node).
  ShapeCache* CacheOf(const Shape& shape);
  double ChangeAt(ShapeCache* cache, const Shape& shape, uint32_t node, uint64_t core_used,
                  absl::FunctionRef<NodeState()> state, int32_t choice);
  // The node changed (a share, a GPU opened or closed, CPU or memory counted).
  void Touch(uint32_t node) {
    if (node >= version_.size()) version_.resize(node + 1, 0);
    ++version_[node];
  }

  absl::Status CheckInvariants() const;

  // The learned state, for SaveState: the tally now and the tally the typical shapes were
  // last rebuilt from (each sorted by shape). `Learn` puts a scheduler back exactly where
  // `Learned` found it (the same typical shapes, ratios and next rebuild), so decisions after
  // a restart are the same; `kInvalidArgument` for counts that are not positive.
  struct Count {
    Shape shape;
    int64_t pods = 0;
  };
  struct Learning {
    std::vector<Count> tally;
    std::vector<Count> at_rebuild;
  };
  Learning Learned() const;
  absl::Status Learn(const Learning& learning);

 private:
  using Key = std::tuple<int64_t, int64_t, int32_t, int32_t, uint64_t>;
  struct Typical {
    Shape shape;
    double weight = 0;
  };
  void Rebuild();

  // Sets the tally, its count and its sums to `counts` (no rebuild).
  absl::Status SetTally(const std::vector<Count>& counts);

  std::map<Key, int64_t> tally_;       // ordered: deterministic
  std::map<Key, int64_t> at_rebuild_;  // tally_ when typical_ was last rebuilt
  int64_t noted_ = 0;
  int64_t next_rebuild_ = 1;
  uint32_t generation_ = 0;
  std::vector<Typical> typical_;  // GPU shapes only; weights normalised over all typical
  double cpu_per_milli_ = 0;
  double memory_per_milli_ = 0;
  double cpu_sum_ = 0, memory_sum_ = 0, milli_sum_ = 0;
  std::vector<uint32_t> version_;  // per node
  std::map<Key, ShapeCache> cache_;
  // Per node, until it changes: its state, its stranded milli, and per typical shape the
  // counts Stranded sums over its leaves (leaves with at least the shape's milli free, and
  // the free milli of the others), so a choice's change is O(typical shapes), not
  // O(typical shapes x leaves) (invariant (4)).
  struct NodeCache {
    uint32_t generation = 0;
    uint32_t version = 0;
    uint64_t core_used = ~uint64_t{0};
    NodeState state;
    double before = 0;
    int64_t free = 0;             // the sum of state.free
    int32_t full = 0;             // leaves with all 1000 milli free
    std::vector<int32_t> enough;  // per typical shape (-1: the node's type may not run it)
    std::vector<int64_t> small;
  };
  // Stranded() of a node from its per-typical counts (`enough[t] < 0`: shape t not allowed),
  // with the same arithmetic in the same order, so the result is bit-identical.
  double StrandedFrom(int64_t cpu_left, int64_t memory_left, int64_t free, const int32_t* enough,
                      const int64_t* small) const;
  void Summarise(NodeCache* nc) const;
  // One choice's change on a node whose cache is current (ChangeAt's miss).
  double Compute(const NodeCache& nc, const Shape& shape, int32_t choice);
  std::vector<NodeCache> nodes_;  // per node: its state and stranded milli
  // Scratch of ChangeAt (no allocation per call).
  std::vector<int32_t> enough_scratch_;
  std::vector<int64_t> small_scratch_;
};

}  // namespace hived

#endif  // HIVED_SRC_SHARE_CHOICE_H_

// cellalloc/gpu_shares.h: the shares of GPUs (leaf cells) opened for sharing.
//
// A GPU opened for sharing holds fractional pods' shares: compute in thousandths of the GPU
// (`milli`, 1..1000 each) and optionally GPU memory (MiB). This component keeps, per open
// GPU, the sums of what its shares take and its memory capacity, and the open GPUs in leaf
// id order (so every search over them is deterministic). It knows nothing of groups, VCs or
// priorities: sharing/sharing.h owns who holds a GPU and whose shares are on it.
//
// Example:
//   GpuShares shares;
//   shares.Open(leaf, /*memory_capacity=*/16384);
//   if (shares.Fits(leaf, 470, 4096)) shares.Add(leaf, 470, 4096);
//   shares.Remove(leaf, 470, 4096);
//   if (shares.Empty(leaf)) shares.Close(leaf);
//
// Invariants (checked by CheckInvariants):
//  (1) per open GPU: 0 <= used_milli <= kGpuMilli, and 0 <= used_memory; used_memory <=
//      memory_capacity when the capacity is declared (> 0).
//  (2) per open GPU: shares == 0 if and only if used_milli == 0 (every share takes >= 1
//      milli), and used_memory == 0 when shares == 0.
//  (3) the sums over open GPUs (milli, shares) equal the running totals.
//
// Thread safety: not thread-safe; the scheduler serialises.
#ifndef HIVED_CELLALLOC_GPU_SHARES_H_
#define HIVED_CELLALLOC_GPU_SHARES_H_

#include <cstdint>

#include "absl/container/btree_map.h"
#include "absl/status/status.h"
#include "cellalloc/ids.h"

namespace hived::cellalloc {

// One GPU in thousandths.
inline constexpr int32_t kGpuMilli = 1000;

class GpuShares {
 public:
  struct Gpu {
    int32_t used_milli = 0;
    int64_t used_memory = 0;
    int64_t memory_capacity = 0;  // 0: not declared, no limit
    int32_t shares = 0;
  };

  // The mutators return false, changing nothing, when their condition does not hold.
  // Open: `leaf` is not open and memory_capacity >= 0.
  bool Open(CellId leaf, int64_t memory_capacity);
  // Close: `leaf` is open and Empty.
  bool Close(CellId leaf);
  bool IsOpen(CellId leaf) const { return gpus_.count(leaf.value()) > 0; }
  // REQUIRES: IsOpen(leaf). The reference lasts until the next Open or Close.
  const Gpu& gpu(CellId leaf) const { return gpus_.at(leaf.value()); }
  bool Empty(CellId leaf) const { return gpu(leaf).shares == 0; }
  // Whether one more share of `milli` (1..kGpuMilli) and `memory` (>= 0) fits the open GPU,
  // with `extra_milli`/`extra_memory` already promised to others (a gang's earlier pods).
  bool Fits(CellId leaf, int32_t milli, int64_t memory, int32_t extra_milli = 0,
            int64_t extra_memory = 0) const;
  // Add: `leaf` is open, 1 <= milli <= kGpuMilli, memory >= 0 and Fits(leaf, milli, memory).
  bool Add(CellId leaf, int32_t milli, int64_t memory);
  // Remove: `leaf` holds a share of at least this size (the last share: exactly this size).
  // The caller removes only shares it added; the sums cannot tell shares apart.
  bool Remove(CellId leaf, int32_t milli, int64_t memory);

  // The open GPUs by leaf id (ascending): iterate with `for (const auto& [id, gpu] : open())`.
  // Open and Close invalidate iterators and references into it.
  const absl::btree_map<uint32_t, Gpu>& open() const { return gpus_; }
  int64_t total_milli() const { return total_milli_; }
  int64_t total_shares() const { return total_shares_; }

  absl::Status CheckInvariants() const;

 private:
  // A B-tree, not std::map: the choice of an open GPU scans them all on every fractional
  // Schedule (sharing/sharing_choice.cc), and a red-black tree's node-by-node walk was 12%
  // of `hived-sim fill`'s time.
  absl::btree_map<uint32_t, Gpu> gpus_;
  int64_t total_milli_ = 0;
  int64_t total_shares_ = 0;
};

}  // namespace hived::cellalloc

#endif  // HIVED_CELLALLOC_GPU_SHARES_H_

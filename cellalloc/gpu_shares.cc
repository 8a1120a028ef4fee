// GpuShares: per-GPU sums of shares (cellalloc/gpu_shares.h).
#include "cellalloc/gpu_shares.h"

#include "absl/strings/str_cat.h"

namespace hived::cellalloc {

bool GpuShares::Open(CellId leaf, int64_t memory_capacity) {
  if (memory_capacity < 0) return false;
  Gpu gpu;
  gpu.memory_capacity = memory_capacity;
  return gpus_.emplace(leaf.value(), gpu).second;
}

bool GpuShares::Close(CellId leaf) {
  auto it = gpus_.find(leaf.value());
  if (it == gpus_.end() || it->second.shares != 0) return false;
  gpus_.erase(it);
  return true;
}

bool GpuShares::Fits(CellId leaf, int32_t milli, int64_t memory, int32_t extra_milli,
                     int64_t extra_memory) const {
  const Gpu& g = gpu(leaf);
  if (g.used_milli + extra_milli + milli > kGpuMilli) return false;
  return g.memory_capacity == 0 || g.used_memory + extra_memory + memory <= g.memory_capacity;
}

bool GpuShares::Add(CellId leaf, int32_t milli, int64_t memory) {
  if (milli < 1 || milli > kGpuMilli || memory < 0 || !IsOpen(leaf)) return false;
  if (!Fits(leaf, milli, memory)) return false;
  Gpu& g = gpus_.at(leaf.value());
  g.used_milli += milli;
  g.used_memory += memory;
  ++g.shares;
  total_milli_ += milli;
  ++total_shares_;
  return true;
}

bool GpuShares::Remove(CellId leaf, int32_t milli, int64_t memory) {
  auto it = gpus_.find(leaf.value());
  if (it == gpus_.end()) return false;
  Gpu& g = it->second;
  if (g.shares == 0 || milli < 1 || memory < 0 || g.used_milli < milli || g.used_memory < memory ||
      (g.shares == 1 && (g.used_milli != milli || g.used_memory != memory))) {
    return false;
  }
  g.used_milli -= milli;
  g.used_memory -= memory;
  --g.shares;
  total_milli_ -= milli;
  --total_shares_;
  return true;
}

absl::Status GpuShares::CheckInvariants() const {
  int64_t milli = 0;
  int64_t shares = 0;
  for (const auto& [id, g] : gpus_) {
    const std::string where = absl::StrCat("gpu_shares: leaf ", id, ": ");
    if (g.used_milli < 0 || g.used_milli > kGpuMilli || g.used_memory < 0) {
      return absl::InternalError(
          absl::StrCat(where, "(1) used ", g.used_milli, " milli, ", g.used_memory, " MiB"));
    }
    if (g.memory_capacity > 0 && g.used_memory > g.memory_capacity) {
      return absl::InternalError(
          absl::StrCat(where, "(1) memory ", g.used_memory, " > capacity ", g.memory_capacity));
    }
    if ((g.shares == 0) != (g.used_milli == 0) || (g.shares == 0 && g.used_memory != 0)) {
      return absl::InternalError(absl::StrCat(where, "(2) ", g.shares, " shares hold ",
                                              g.used_milli, " milli, ", g.used_memory, " MiB"));
    }
    milli += g.used_milli;
    shares += g.shares;
  }
  if (milli != total_milli_ || shares != total_shares_) {
    return absl::InternalError(absl::StrCat("gpu_shares: (3) totals ", total_milli_, " milli, ",
                                            total_shares_, " shares; sums ", milli, ", ", shares));
  }
  return absl::OkStatus();
}

}  // namespace hived::cellalloc

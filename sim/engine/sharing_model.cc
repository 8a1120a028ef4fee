#include "sim/engine/sharing_model.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"

namespace hived::sim {
namespace {

constexpr int32_t kMilli = 1000;

// Max-min fair shares of `capacity` for the demands of `tenants[idx]`: each gets its demand
// if the ones smaller than it leave room, else an equal split of what is left. Writes
// min(1, share / demand) to `speeds[idx]`.
void WaterFill(const std::vector<GpuTenant>& tenants, std::vector<size_t> idx, double capacity,
               std::vector<double>* speeds) {
  std::stable_sort(idx.begin(), idx.end(),
                   [&](size_t a, size_t b) { return tenants[a].demand < tenants[b].demand; });
  double left = std::max(capacity, 0.0);
  for (size_t k = 0; k < idx.size(); ++k) {
    const double demand = tenants[idx[k]].demand;
    const double share = std::min(demand, left / static_cast<double>(idx.size() - k));
    left -= share;
    (*speeds)[idx[k]] = std::min(1.0, share / demand);
  }
}

}  // namespace

std::optional<SharingMode> ParseSharingMode(std::string_view name) {
  for (SharingMode m : kAllSharingModes) {
    if (SharingModeName(m) == name) return m;
  }
  return std::nullopt;
}

std::string_view SharingModeName(SharingMode mode) {
  switch (mode) {
    case SharingMode::kIdeal:
      return "ideal";
    case SharingMode::kExclusive:
      return "exclusive";
    case SharingMode::kTimeSlice:
      return "time-slice";
    case SharingMode::kMps:
      return "mps";
    case SharingMode::kTgs:
      return "tgs";
    case SharingMode::kMig:
      return "mig";
  }
  return "";
}

std::string CheckSharingParams(const SharingParams& p) {
  if (!(p.quantum_s > 0 && p.quantum_s <= 1e6)) return "--quantum must be in (0, 1e6] seconds";
  if (!(p.switch_s >= 0 && p.switch_s < p.quantum_s)) {
    return "--switch-cost must be in [0, quantum) seconds";
  }
  if (!(p.uvm_slowdown >= 0 && p.uvm_slowdown < 1)) return "--uvm-slowdown must be in [0, 1)";
  if (!(p.tgs_production_slowdown >= 0 && p.tgs_production_slowdown < 1)) {
    return "--tgs-production-slowdown must be in [0, 1)";
  }
  if (!(p.mps_interference >= 0 && p.mps_interference <= 100)) {
    return "--mps-interference must be in [0, 100]";
  }
  return "";
}

int32_t SharingRequestMilli(SharingMode mode, int32_t gpu_milli) {
  if (gpu_milli <= 0 || gpu_milli >= kMilli) return gpu_milli;
  if (mode == SharingMode::kExclusive) return kMilli;
  if (mode != SharingMode::kMig) return gpu_milli;
  for (int32_t slices : {1, 2, 3, 4}) {
    if (gpu_milli * 7 <= slices * kMilli) return slices * kMilli / 7;
  }
  return kMilli;  // 7g: the whole GPU
}

void SharingRates(SharingMode mode, const SharingParams& params,
                  const std::vector<GpuTenant>& tenants, std::vector<double>* speeds) {
  const size_t n = tenants.size();
  speeds->assign(n, 1.0);
  std::vector<size_t> all(n);
  std::iota(all.begin(), all.end(), size_t{0});
  switch (mode) {
    case SharingMode::kIdeal:
    case SharingMode::kExclusive:
    case SharingMode::kMig:
      return;
    case SharingMode::kTimeSlice: {
      const double capacity = n > 1 ? 1.0 - params.switch_s / params.quantum_s : 1.0;
      WaterFill(tenants, all, capacity, speeds);
      for (double& s : *speeds) s *= 1.0 - params.uvm_slowdown;
      return;
    }
    case SharingMode::kMps: {
      double total = 0;
      for (const GpuTenant& t : tenants) total += t.demand;
      for (size_t i = 0; i < n; ++i) {
        (*speeds)[i] = 1.0 / (1.0 + params.mps_interference * (total - tenants[i].demand));
      }
      return;
    }
    case SharingMode::kTgs: {
      std::vector<size_t> opportunistic;
      double production = 0;
      for (size_t i = 0; i < n; ++i) {
        if (tenants[i].opportunistic) {
          opportunistic.push_back(i);
        } else {
          production += tenants[i].demand;
        }
      }
      if (opportunistic.empty()) return;
      for (size_t i = 0; i < n; ++i) {
        if (!tenants[i].opportunistic) (*speeds)[i] = 1.0 - params.tgs_production_slowdown;
      }
      WaterFill(tenants, opportunistic, 1.0 - production, speeds);
      return;
    }
  }
}

}  // namespace hived::sim

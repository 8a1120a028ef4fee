// sim/engine/sharing_model.h: how fast pods that share a GPU progress, for the time-based replay of
// openb pod lists (`hived-sim openb-replay --sharing MODE`, openb_replay.h).
//
// A pod's *demand* d is the share of one GPU it asked for (openb's gpu_milli / 1000): the
// trace's runtime is its runtime when it gets d of a GPU's compute (speed 1.0). The modes:
//   ideal       every pod at speed 1 whatever its neighbours (the trace's own runtimes; the
//               behaviour of the replay before sharing models existed).
//   exclusive   no sharing: a sharing pod's request is rounded up to a whole GPU; speed 1.
//   time-slice  NvShare: pods on a GPU take turns of `quantum_s` seconds holding the whole
//               GPU, releasing it early when idle, so each gets the GPU time it needs when
//               the demands fit and a max-min fair share of it when they do not; with two or
//               more pods, every turn loses `switch_s` to paging the next pod in, so the GPU
//               offers 1 - switch_s / quantum_s; every pod pays `uvm_slowdown` for the
//               managed (unified) memory NvShare forces, which is also what lets pods
//               oversubscribe GPU memory (openb has no GPU-memory column, so oversubscription
//               itself cannot be told apart and is not modelled beyond that cost).
//   mps         NVIDIA MPS: pods run at the same time, each on its share of the SMs, slowed
//               by interference: speed 1 / (1 + mps_interference x the neighbours' demand).
//   tgs         TGS: production pods (qos other than BE) run at 1 - tgs_production_slowdown
//               when an opportunistic pod (qos BE) shares their GPU, else 1; opportunistic
//               pods get what production leaves, 1 - the production demand, max-min fair.
//   mig         MIG: a sharing pod gets the smallest A100 instance whose compute slices
//               (1g, 2g, 3g, 4g, 7g of 7) cover its demand; its request becomes that instance
//               (142, 285, 428, 571 or 1000 milli: k/7 rounded down, so 7 x 1g fit); isolated,
//               speed 1. Only compute slices are checked: memory slices and start positions
//               (which forbid e.g. 3g + 3g + 1g on a real A100) are not.
// A pod on several GPUs (only whole GPUs, each alone) progresses at its slowest GPU's speed.
//
// Invariants: (1) every speed is in (0, 1]; (2) with one pod on a GPU, its speed depends on
// the mode's fixed costs only (time-slice: 1 - uvm_slowdown; others 1); (3) SharingRates is
// deterministic and O(k log k) for k pods on the GPU.
//
// Thread safety: free functions without shared state.
#ifndef HIVED_SIM_ENGINE_SHARING_MODEL_H_
#define HIVED_SIM_ENGINE_SHARING_MODEL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hived::sim {

enum class SharingMode { kIdeal, kExclusive, kTimeSlice, kMps, kTgs, kMig };
inline constexpr SharingMode kAllSharingModes[] = {SharingMode::kIdeal,     SharingMode::kExclusive,
                                                   SharingMode::kTimeSlice, SharingMode::kMps,
                                                   SharingMode::kTgs,       SharingMode::kMig};

std::optional<SharingMode> ParseSharingMode(std::string_view name);
std::string_view SharingModeName(SharingMode mode);

// The parameters, their defaults and sources (docs/gpu-sharing.md lists them too).
struct SharingParams {
  double quantum_s = 30;           // NvShare's default time quantum
  double switch_s = 2;             // paging a pod in per turn: NvShare says "a few seconds"; ours
  double uvm_slowdown = 0.01;      // NvShare: forcing managed memory costs about 1%
  double mps_interference = 0.25;  // ours: with one neighbour of demand 1, 20% slower (Gandiva
                                   // reports ~19% for two packed jobs; secondary source)
  double tgs_production_slowdown = 0.01;  // ours: TGS reports "little impact", no number
};

// Checks ranges: quantum_s > 0, 0 <= switch_s < quantum_s, slowdowns in [0, 1), interference
// in [0, 100]. Returns an error message, or "" when fine.
std::string CheckSharingParams(const SharingParams& params);

// The GPU request (milli) a pod asking `gpu_milli` of one GPU places under `mode`.
int32_t SharingRequestMilli(SharingMode mode, int32_t gpu_milli);

struct GpuTenant {
  double demand = 0;           // share of the GPU, (0, 1]
  bool opportunistic = false;  // tgs: qos BE
};

// The speed of each of `tenants` (the pods on one GPU), written to `speeds` (resized).
void SharingRates(SharingMode mode, const SharingParams& params,
                  const std::vector<GpuTenant>& tenants, std::vector<double>* speeds);

}  // namespace hived::sim

#endif  // HIVED_SIM_ENGINE_SHARING_MODEL_H_

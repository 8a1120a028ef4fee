#include "sim/policies/fgd_frag.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace hived::sim {

std::vector<TypicalPod> TypicalPods(const std::vector<FillPod>& workload, double coverage) {
  using Shape = std::tuple<int64_t, int32_t, int32_t, uint64_t>;  // cpu, share, count, mask
  std::map<Shape, int64_t> counts;                                // ordered: deterministic
  for (const FillPod& p : workload) {
    ++counts[Shape{p.cpu_milli, p.gpu_milli, p.num_gpu, p.model_mask}];
  }
  std::vector<std::pair<int64_t, Shape>> order;
  order.reserve(counts.size());
  for (const auto& [shape, count] : counts) order.emplace_back(count, shape);
  // Most popular first; ties: larger shape first.
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a > b; });
  const double total = static_cast<double>(workload.size());
  const double wanted = coverage * total;
  std::vector<TypicalPod> typical;
  double covered = 0;
  for (const auto& [count, shape] : order) {
    if (covered >= wanted && !typical.empty()) break;
    TypicalPod t;
    std::tie(t.cpu_milli, t.gpu_milli, t.num_gpu, t.model_mask) = shape;
    t.weight = static_cast<double>(count);
    covered += t.weight;
    typical.push_back(t);
  }
  for (TypicalPod& t : typical) t.weight /= covered;
  return typical;
}

FragMeasure::FragMeasure(const std::vector<TypicalPod>& typical, int32_t model_count)
    : whole_weight_(static_cast<size_t>(model_count) + 1, 0.0),
      groups_(static_cast<size_t>(model_count) + 1) {
  // Slot `model_count` stands for nodes without GPUs (model -1).
  for (int32_t m = 0; m <= model_count; ++m) {
    std::map<std::pair<int32_t, int32_t>, std::vector<std::pair<int64_t, double>>> by_shape;
    for (const TypicalPod& t : typical) {
      const bool accessible = t.gpu_milli > 0 && m < model_count && (t.model_mask >> m & 1U) != 0;
      if (!accessible) {
        whole_weight_[static_cast<size_t>(m)] += t.weight;
      } else {
        by_shape[{t.gpu_milli, t.num_gpu}].emplace_back(t.cpu_milli, t.weight);
      }
    }
    for (auto& [key, pods] : by_shape) {
      std::sort(pods.begin(), pods.end());
      Group g;
      g.gpu_milli = key.first;
      g.num_gpu = key.second;
      for (const auto& [cpu, w] : pods) {
        g.total += w;
        g.cpu.push_back(cpu);
        g.cum.push_back(g.total);
      }
      groups_[static_cast<size_t>(m)].push_back(std::move(g));
    }
  }
}

double FragMeasure::NodeFrag(int32_t model, int64_t cpu_left, const int32_t* gpu_left,
                             int32_t gpus) const {
  int64_t free = 0;
  for (int32_t i = 0; i < gpus; ++i) free += gpu_left[i];
  if (free == 0) return 0.0;
  const size_t slot = model < 0 ? whole_weight_.size() - 1 : static_cast<size_t>(model);
  const double total = static_cast<double>(free);
  double frag = whole_weight_[slot] * total;
  for (const Group& g : groups_[slot]) {
    int32_t enough = 0;
    int64_t small = 0;
    for (int32_t i = 0; i < gpus; ++i) {
      if (gpu_left[i] >= g.gpu_milli) {
        ++enough;
      } else {
        small += gpu_left[i];
      }
    }
    if (enough < g.num_gpu) {
      frag += g.total * total;
      continue;
    }
    // Pods of this group whose CPU the node has: cpu[0..k).
    const size_t k =
        static_cast<size_t>(std::upper_bound(g.cpu.begin(), g.cpu.end(), cpu_left) - g.cpu.begin());
    const double fit = k == 0 ? 0.0 : g.cum[k - 1];
    frag += fit * static_cast<double>(small) + (g.total - fit) * total;
  }
  return frag;
}

}  // namespace hived::sim

#include "sim/policies/fill_hived.h"

#include <algorithm>
#include <array>
#include <limits>
#include <map>
#include <tuple>
#include <utility>

namespace hived::sim {

StrandedMeasure::StrandedMeasure(const std::vector<FillPod>& workload, double coverage,
                                 int32_t model_count)
    : models_(static_cast<size_t>(std::max(model_count, 0))) {
  // The typical shapes: most popular first, ties to the larger shape (deterministic).
  using Key = std::tuple<int64_t, int64_t, int32_t, int32_t, uint64_t>;  // cpu mem share n mask
  std::map<Key, int64_t> counts;
  double cpu = 0, memory = 0, gpu = 0;
  for (const FillPod& p : workload) {
    ++counts[Key{p.cpu_milli, p.memory_mib, p.gpu_milli, p.num_gpu, p.model_mask}];
    cpu += static_cast<double>(p.cpu_milli);
    memory += static_cast<double>(p.memory_mib);
    gpu += static_cast<double>(p.TotalGpuMilli());
  }
  if (gpu > 0) {
    cpu_per_milli_ = cpu / gpu;
    memory_per_milli_ = memory / gpu;
  }
  std::vector<std::pair<int64_t, Key>> order;
  order.reserve(counts.size());
  for (const auto& [key, count] : counts) order.emplace_back(count, key);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a > b; });
  const double wanted = coverage * static_cast<double>(workload.size());
  double covered = 0;
  size_t typical = 0;
  while (typical < order.size() && (covered < wanted || typical == 0)) {
    covered += static_cast<double>(order[typical++].first);
  }
  for (int32_t m = 0; m < model_count; ++m) {
    Model& mod = models_[static_cast<size_t>(m)];
    for (size_t k = 0; k < typical; ++k) {
      const auto& [cpu_milli, memory_mib, share, count, mask] = order[k].second;
      if (share == 0 || (mask >> m & 1U) == 0) continue;
      auto it = std::find(mod.shares.begin(), mod.shares.end(), share);
      if (it == mod.shares.end()) it = mod.shares.insert(mod.shares.end(), share);
      mod.pods.push_back({cpu_milli, memory_mib, count,
                          static_cast<int32_t>(it - mod.shares.begin()),
                          static_cast<double>(order[k].first) / covered});
    }
  }
}

double StrandedMeasure::ShapePart(int32_t model, int64_t cpu_left, int64_t memory_left,
                                  const int32_t* gpu_left, int32_t gpus) const {
  if (model < 0 || static_cast<size_t>(model) >= models_.size()) return 0;
  const Model& mod = models_[static_cast<size_t>(model)];
  int64_t free = 0;
  for (int32_t i = 0; i < gpus; ++i) free += gpu_left[i];
  if (free == 0) return 0;
  // Per distinct share: GPUs with that much free, and the free milli of the others.
  // Workloads have a few dozen distinct typical shares; beyond kCached they are recounted.
  constexpr size_t kCached = 64;
  std::array<int32_t, kCached> enough{};
  std::array<int64_t, kCached> small{};
  auto count = [&](int32_t share, int32_t* e, int64_t* sm) {
    for (int32_t i = 0; i < gpus; ++i) {
      if (gpu_left[i] >= share) {
        ++*e;
      } else {
        *sm += gpu_left[i];
      }
    }
  };
  const size_t cached = std::min(mod.shares.size(), kCached);
  for (size_t s = 0; s < cached; ++s) count(mod.shares[s], &enough[s], &small[s]);
  double stranded = 0;
  for (const Typical& t : mod.pods) {
    const size_t s = static_cast<size_t>(t.share_index);
    int32_t e = 0;
    int64_t sm = 0;
    if (s < cached) {
      e = enough[s];
      sm = small[s];
    } else {
      count(mod.shares[s], &e, &sm);
    }
    const bool fits = e >= t.count && cpu_left >= t.cpu && memory_left >= t.memory;
    stranded += t.weight * static_cast<double>(fits ? sm : free);
  }
  return stranded;
}

double StrandedMeasure::Of(int32_t model, int64_t cpu_left, int64_t memory_left,
                           const int32_t* gpu_left, int32_t gpus) const {
  int64_t free = 0;
  for (int32_t i = 0; i < gpus; ++i) free += gpu_left[i];
  if (free == 0) return 0;
  const double total = static_cast<double>(free);
  double unfed = 0;  // free milli beyond what the CPU and memory left can feed
  if (cpu_per_milli_ > 0) {
    unfed = std::max(unfed, total - static_cast<double>(cpu_left) / cpu_per_milli_);
  }
  if (memory_per_milli_ > 0) {
    unfed = std::max(unfed, total - static_cast<double>(memory_left) / memory_per_milli_);
  }
  return ShapePart(model, cpu_left, memory_left, gpu_left, gpus) + unfed;
}

namespace {

class HivedPolicy : public FillPolicy {
 public:
  HivedPolicy(const std::vector<FillPod>& workload, double coverage, int32_t model_count,
              int32_t shape_count, int32_t node_count)
      : measure_(workload, coverage, model_count),
        node_count_(node_count),
        cache_(static_cast<size_t>(shape_count) * static_cast<size_t>(node_count)),
        before_(static_cast<size_t>(node_count)) {}

  FillChoice Choose(const FillCluster& c, const FillPod& pod,
                    const std::vector<int32_t>& feasible) override {
    FillChoice choice;
    double best = std::numeric_limits<double>::infinity();
    int64_t best_free = 0;
    for (int32_t n : feasible) {
      const Entry& e = Get(c, n, pod);
      if (e.change > best) continue;
      const int64_t free = c.FreeMilli(n);
      if (e.change == best && free >= best_free) continue;
      best = e.change;
      best_free = free;
      choice = {n, e.gpus};
    }
    return choice;
  }

 private:
  struct Entry {
    uint32_t version = 0;  // node versions start at 1: 0 is never valid
    double change = 0;     // stranded milli after - before
    uint64_t gpus = 0;
  };
  struct Before {
    uint32_t version = 0;
    double stranded = 0;
  };

  // The cached entry of `pod`'s shape on node `n`, recomputed when the node has changed.
  const Entry& Get(const FillCluster& c, int32_t n, const FillPod& pod) {
    Entry& e = cache_[static_cast<size_t>(pod.shape) * static_cast<size_t>(node_count_) +
                      static_cast<size_t>(n)];
    if (e.version != c.node(n).version) {
      e = Score(c, n, pod);
      e.version = c.node(n).version;
    }
    return e;
  }

  double StrandedBefore(const FillCluster& c, int32_t n) {
    Before& b = before_[static_cast<size_t>(n)];
    if (b.version != c.node(n).version) {
      const FillCluster::Node& nd = c.node(n);
      b.stranded = measure_.Of(nd.model, nd.cpu_left, nd.memory_left, c.gpu_left(n), nd.gpus);
      b.version = nd.version;
    }
    return b.stranded;
  }

  Entry Score(const FillCluster& c, int32_t n, const FillPod& pod) {
    const FillCluster::Node& nd = c.node(n);
    const double before = StrandedBefore(c, n);
    const int64_t cpu_after = nd.cpu_left - pod.cpu_milli;
    const int64_t memory_after = nd.memory_left - pod.memory_mib;
    Entry e;
    e.change = std::numeric_limits<double>::infinity();
    int32_t tightest = kMilliPerGpu + 1;  // free milli left on the chosen GPU (sharing pods)
    c.ForEachGpuChoice(n, pod, [&](uint64_t gpus, const int32_t* after) {
      const double s = measure_.Of(nd.model, cpu_after, memory_after, after, nd.gpus) - before;
      int32_t left = 0;
      for (int32_t i = 0; i < nd.gpus && pod.IsSharing(); ++i) {
        if (gpus >> i & 1U) left = after[i];
      }
      if (s < e.change || (s == e.change && left < tightest)) {
        e.change = s;
        e.gpus = gpus;
        tightest = left;
      }
    });
    return e;
  }

  StrandedMeasure measure_;
  int32_t node_count_;
  std::vector<Entry> cache_;  // [shape][node]
  std::vector<Before> before_;
};

}  // namespace

std::unique_ptr<FillPolicy> MakeHivedFillPolicy(const std::vector<FillPod>& workload,
                                                double coverage, int32_t model_count,
                                                int32_t shape_count, int32_t node_count) {
  return std::make_unique<HivedPolicy>(workload, coverage, model_count, shape_count, node_count);
}

}  // namespace hived::sim

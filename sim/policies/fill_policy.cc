#include "sim/policies/fill_policy.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <utility>

#include "sim/policies/fill_hived.h"
#include "sim/policies/fill_library.h"

namespace hived::sim {
namespace {

constexpr double kMaxSpecCpu = 128000;  // the simulator's normalisers
constexpr double kMaxSpecGpu = 8000;
constexpr int64_t kMaxScore = 100;

// The feasible node with the highest `score(n)`; the first one on ties.
template <typename Score>
int32_t ArgMax(const std::vector<int32_t>& feasible, Score score) {
  int32_t best = feasible.front();
  int64_t best_score = score(best);
  for (size_t i = 1; i < feasible.size(); ++i) {
    const int64_t s = score(feasible[i]);
    if (s > best_score) {
      best_score = s;
      best = feasible[i];
    }
  }
  return best;
}

// Best fit (Tetris-style weighted leftovers).
// Assumes: CPU and GPU matter equally. Algorithm: score = 100 x (1 - (0.5 x CPU left after /
// 128 CPUs + 0.5 x GPU milli left after / 8 GPUs)), truncated; the GPU is the fitting one
// with the least free milli. Ties: first node.
class BestFitPolicy : public FillPolicy {
 public:
  FillChoice Choose(const FillCluster& c, const FillPod& pod,
                    const std::vector<int32_t>& feasible) override {
    const int32_t n = ArgMax(feasible, [&](int32_t i) {
      const double cpu = static_cast<double>(c.node(i).cpu_left - pod.cpu_milli) / kMaxSpecCpu;
      const double gpu = static_cast<double>(c.FreeMilli(i) - pod.TotalGpuMilli()) / kMaxSpecGpu;
      return static_cast<int64_t>((1.0 - (0.5 * cpu + 0.5 * gpu)) * kMaxScore);
    });
    return {n, c.BestFitGpus(n, pod)};
  }
};

// Dot product (Tetris's alignment): the smaller the dot product of the normalised free vector
// (CPU left / 128 CPUs, GPU milli left / 8 GPUs) and the request vector, the better.
// score = 100 x (1 - dot / 2), truncated; GPU by best fit. Ties: first node.
class DotProductPolicy : public FillPolicy {
 public:
  FillChoice Choose(const FillCluster& c, const FillPod& pod,
                    const std::vector<int32_t>& feasible) override {
    const double pod_cpu = static_cast<double>(pod.cpu_milli) / kMaxSpecCpu;
    const double pod_gpu = static_cast<double>(pod.TotalGpuMilli()) / kMaxSpecGpu;
    const int32_t n = ArgMax(feasible, [&](int32_t i) {
      const double dot = static_cast<double>(c.node(i).cpu_left) / kMaxSpecCpu * pod_cpu +
                         static_cast<double>(c.FreeMilli(i)) / kMaxSpecGpu * pod_gpu;
      return static_cast<int64_t>(kMaxScore * (1.0 - dot / 2.0));
    });
    return {n, c.BestFitGpus(n, pod)};
  }
};

// GPU packing: prefer (1) GPUs already shared, then (2) free GPUs on nodes already in use,
// then (3) nodes with every GPU free. Scores, from the simulator: (1) 100 - (sum over the
// GPUs used of their free percentage) / 10, at least 50; (2) 50 - free GPUs used, at least 33;
// (3) max(33 - free GPUs, free GPUs). CPU-only pods score 0 everywhere (first node). The GPUs
// used are the fitting ones with the least free milli.
class GpuPackingPolicy : public FillPolicy {
 public:
  FillChoice Choose(const FillCluster& c, const FillPod& pod,
                    const std::vector<int32_t>& feasible) override {
    if (pod.num_gpu == 0) return {feasible.front(), 0};
    const int32_t n = ArgMax(feasible, [&](int32_t i) { return Score(c, i, pod); });
    return {n, c.BestFitGpus(n, pod)};
  }

 private:
  static int64_t Score(const FillCluster& c, int32_t n, const FillPod& pod) {
    const int32_t gpus = c.node(n).gpus;
    const int32_t fully_free = c.FullyFreeGpus(n);
    if (fully_free == gpus) return std::max<int64_t>(kMaxScore / 3 - fully_free, fully_free);
    // Take GPUs least free first (stable on index).
    const int32_t* left = c.gpu_left(n);
    std::array<int32_t, kMaxGpusPerNode> order{};
    for (int32_t i = 0; i < gpus; ++i) order[static_cast<size_t>(i)] = i;
    std::stable_sort(order.begin(), order.begin() + gpus,
                     [&](int32_t a, int32_t b) { return left[a] < left[b]; });
    int32_t need = pod.num_gpu;
    int32_t free_used = 0;
    int64_t free_pct = 0;
    for (int32_t k = 0; k < gpus && need > 0; ++k) {
      const int32_t g = order[static_cast<size_t>(k)];
      if (left[g] < pod.gpu_milli) continue;
      --need;
      free_used += left[g] == kMilliPerGpu ? 1 : 0;
      free_pct += int64_t{left[g]} * 100 / kMilliPerGpu;
    }
    if (free_used > 0) return std::max<int64_t>(kMaxScore / 2 - free_used, kMaxScore / 3);
    return std::max<int64_t>(kMaxScore - free_pct / 10, kMaxScore / 2);
  }
};

// GPU clustering: pods of the same kind together. A pod's kind is "sharing" or "k whole
// GPUs". Scores (base = 25 x (8000 - node's free milli) / 8000, integer): a node running only
// this kind, base + 75; this kind among others, base + 50; an unused node, base + 25; other
// kinds only, base. CPU-only pods score 0 (first node). GPU by best fit.
class GpuClusteringPolicy : public FillPolicy {
 public:
  explicit GpuClusteringPolicy(int32_t node_count) : kinds_(static_cast<size_t>(node_count)) {}

  FillChoice Choose(const FillCluster& c, const FillPod& pod,
                    const std::vector<int32_t>& feasible) override {
    if (pod.num_gpu == 0) return {feasible.front(), 0};
    const int32_t kind = Kind(pod);
    const int32_t n = ArgMax(feasible, [&](int32_t i) {
      const int64_t base = kMaxScore / 4 * (static_cast<int64_t>(kMaxSpecGpu) - c.FreeMilli(i)) /
                           static_cast<int64_t>(kMaxSpecGpu);
      const std::vector<std::pair<int32_t, int32_t>>& k = kinds_[static_cast<size_t>(i)];
      const bool same =
          std::any_of(k.begin(), k.end(), [&](const auto& e) { return e.first == kind; });
      if (same) return base + (k.size() == 1 ? kMaxScore * 3 / 4 : kMaxScore / 2);
      return base + (k.empty() ? kMaxScore / 4 : 0);
    });
    return {n, c.BestFitGpus(n, pod)};
  }
  void Placed(const FillCluster& /*c*/, const FillPod& pod, const FillChoice& choice) override {
    if (pod.num_gpu > 0) Count(choice.node, Kind(pod), +1);
  }
  void Removed(const FillCluster& /*c*/, const FillPod& pod, const FillChoice& choice) override {
    if (pod.num_gpu > 0) Count(choice.node, Kind(pod), -1);
  }

 private:
  static int32_t Kind(const FillPod& pod) { return pod.IsSharing() ? 0 : pod.num_gpu; }
  // Adds `delta` pods of `kind` on node `n`; a kind with no pod left is forgotten.
  void Count(int32_t n, int32_t kind, int32_t delta) {
    std::vector<std::pair<int32_t, int32_t>>& k = kinds_[static_cast<size_t>(n)];
    auto it = std::find_if(k.begin(), k.end(), [&](const auto& e) { return e.first == kind; });
    if (it == k.end()) it = k.insert(k.end(), {kind, 0});
    it->second += delta;
    if (it->second == 0) k.erase(it);
  }
  // Per node: (kind, pods of that kind), kinds in order of first arrival.
  std::vector<std::vector<std::pair<int32_t, int32_t>>> kinds_;
};

// Random: a feasible node uniformly at random; a sharing pod takes a uniformly random fitting
// GPU, a whole-GPU pod the first free ones.
class RandomPolicy : public FillPolicy {
 public:
  explicit RandomPolicy(std::mt19937_64* rng) : rng_(rng) {}
  FillChoice Choose(const FillCluster& c, const FillPod& pod,
                    const std::vector<int32_t>& feasible) override {
    const int32_t n = feasible[UniformIndex(*rng_, feasible.size())];
    if (!pod.IsSharing()) return {n, pod.num_gpu == 0 ? 0 : c.FirstFreeGpus(n, pod)};
    uint64_t chosen = 0;
    uint64_t seen = 0;
    for (int32_t i = 0; i < c.node(n).gpus; ++i) {
      if (c.gpu_left(n)[i] < pod.gpu_milli) continue;
      if (UniformIndex(*rng_, ++seen) == 0) chosen = uint64_t{1} << i;
    }
    return {n, chosen};
  }

 private:
  std::mt19937_64* rng_;
};

// FGD (fragmentation gradient descent): place where the node's fragmentation (fgd_frag.h)
// grows least. Score = int(100 x sigmoid((frag before - frag after) / 1000)), as the
// published simulator computes it, so nodes within about 40 milli of each other tie and the
// first node wins. A sharing pod tries each fitting GPU (lowest index on ties); whole GPUs are
// the first free ones. A node's score for a pod shape is cached until the node changes.
class FgdPolicy : public FillPolicy {
 public:
  // `exact`: score by the fragmentation change itself, without the sigmoid and rounding.
  FgdPolicy(const FragMeasure* frag, int32_t shape_count, int32_t node_count, bool exact)
      : exact_(exact),
        frag_(frag),
        node_count_(node_count),
        cache_(static_cast<size_t>(shape_count) * static_cast<size_t>(node_count)),
        before_(static_cast<size_t>(node_count)) {}

  FillChoice Choose(const FillCluster& c, const FillPod& pod,
                    const std::vector<int32_t>& feasible) override {
    FillChoice best;
    double best_score = -std::numeric_limits<double>::infinity();
    for (int32_t n : feasible) {
      Entry& e = cache_[static_cast<size_t>(pod.shape) * static_cast<size_t>(node_count_) +
                        static_cast<size_t>(n)];
      if (e.version != c.node(n).version) {
        e = Score(c, n, pod);
        e.version = c.node(n).version;
      }
      if (e.score > best_score) {
        best_score = e.score;
        best = {n, e.gpus};
      }
    }
    return best;
  }

 private:
  struct Entry {
    uint32_t version = 0;  // node versions start at 1: 0 is never valid
    double score = 0;
    uint64_t gpus = 0;
  };
  struct Before {
    uint32_t version = 0;
    double frag = 0;
  };

  double FragBefore(const FillCluster& c, int32_t n) {
    Before& b = before_[static_cast<size_t>(n)];
    if (b.version != c.node(n).version) {
      const FillCluster::Node& nd = c.node(n);
      b.frag = frag_->NodeFrag(nd.model, nd.cpu_left, c.gpu_left(n), nd.gpus);
      b.version = nd.version;
    }
    return b.frag;
  }

  double ScoreOf(double decrease) const {
    if (exact_) return decrease;
    return static_cast<double>(
        static_cast<int32_t>(1.0 / (1.0 + std::exp(-decrease / 1000.0)) * kMaxScore));
  }

  Entry Score(const FillCluster& c, int32_t n, const FillPod& pod) {
    const FillCluster::Node& nd = c.node(n);
    const double before = FragBefore(c, n);
    const int64_t cpu_after = nd.cpu_left - pod.cpu_milli;
    Entry e;
    e.score = -std::numeric_limits<double>::infinity();
    c.ForEachGpuChoice(n, pod, [&](uint64_t gpus, const int32_t* after) {
      const double s = ScoreOf(before - frag_->NodeFrag(nd.model, cpu_after, after, nd.gpus));
      if (s > e.score) {  // the first GPU on ties
        e.score = s;
        e.gpus = gpus;
      }
    });
    return e;
  }

  bool exact_;
  const FragMeasure* frag_;
  int32_t node_count_;
  std::vector<Entry> cache_;  // [shape][node]
  std::vector<Before> before_;
};

}  // namespace

uint64_t UniformIndex(std::mt19937_64& rng, uint64_t n) {
  // Reject the low 2^64 mod n values so every residue is equally likely.
  const uint64_t threshold = (0 - n) % n;
  while (true) {
    const uint64_t x = rng();
    if (x >= threshold) return x % n;
  }
}

namespace {
// A policy that could not be made: declines every pod, and Check says why.
class DeclinePolicy : public FillPolicy {
 public:
  explicit DeclinePolicy(absl::Status error) : error_(std::move(error)) {}
  FillChoice Choose(const FillCluster&, const FillPod&, const std::vector<int32_t>&) override {
    return {};
  }
  absl::Status Check() const override { return error_; }

 private:
  absl::Status error_;
};
}  // namespace

// The registry's factories, one per policy (declared in policy_registry.cc, which also
// defines MakeFillPolicy).

std::unique_ptr<FillPolicy> MakeLibraryFill(const FillPolicyContext& context,
                                            int32_t /*node_count*/) {
  absl::StatusOr<std::unique_ptr<FillPolicy>> p =
      context.nodes != nullptr ? MakeLibraryFillPolicy(*context.nodes)
                               : absl::InvalidArgumentError("policy hived needs the node list");
  if (p.ok()) return *std::move(p);
  return std::make_unique<DeclinePolicy>(p.status());
}

std::unique_ptr<FillPolicy> MakeHivedModelFill(const FillPolicyContext& context,
                                               int32_t node_count) {
  // Without a workload: no typical pods and no resource ratios (every change 0: ties).
  return MakeHivedFillPolicy(
      context.workload != nullptr ? *context.workload : std::vector<FillPod>{},
      context.typical_coverage, context.model_count, context.shape_count, node_count);
}

std::unique_ptr<FillPolicy> MakeBestFitFill(const FillPolicyContext& /*context*/,
                                            int32_t /*node_count*/) {
  return std::make_unique<BestFitPolicy>();
}

std::unique_ptr<FillPolicy> MakeGpuPackingFill(const FillPolicyContext& /*context*/,
                                               int32_t /*node_count*/) {
  return std::make_unique<GpuPackingPolicy>();
}

std::unique_ptr<FillPolicy> MakeGpuClusteringFill(const FillPolicyContext& /*context*/,
                                                  int32_t node_count) {
  return std::make_unique<GpuClusteringPolicy>(node_count);
}

std::unique_ptr<FillPolicy> MakeDotProductFill(const FillPolicyContext& /*context*/,
                                               int32_t /*node_count*/) {
  return std::make_unique<DotProductPolicy>();
}

std::unique_ptr<FillPolicy> MakeRandomFill(const FillPolicyContext& context,
                                           int32_t /*node_count*/) {
  return std::make_unique<RandomPolicy>(context.rng);
}

std::unique_ptr<FillPolicy> MakeFgdFill(const FillPolicyContext& context, int32_t node_count) {
  return std::make_unique<FgdPolicy>(context.frag, context.shape_count, node_count,
                                     /*exact=*/false);
}

std::unique_ptr<FillPolicy> MakeFgdExactFill(const FillPolicyContext& context, int32_t node_count) {
  return std::make_unique<FgdPolicy>(context.frag, context.shape_count, node_count,
                                     /*exact=*/true);
}

}  // namespace hived::sim

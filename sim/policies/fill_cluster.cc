#include "sim/policies/fill_cluster.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace hived::sim {
namespace {

// A broken precondition is a bug in a policy, never bad input: abort loudly.
void Require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fill: internal error: %s\n", what);
  std::abort();
}

}  // namespace

std::string_view FillFailureName(FillFailure reason) {
  switch (reason) {
    case FillFailure::kGpuModel:
      return "no_node_of_model";
    case FillFailure::kGpu:
      return "gpu";
    case FillFailure::kCpu:
      return "cpu";
    case FillFailure::kDeclined:
      return "declined";
    case FillFailure::kMemory:
      return "memory";
  }
  return "";
}

absl::StatusOr<std::vector<FillPod>> MakeFillPods(const OpenbPodList& list,
                                                  const OpenbNodeList& nodes) {
  if (nodes.models.size() > 64) {
    return absl::InvalidArgumentError(absl::StrCat(
        nodes.file, ": ", nodes.models.size(), " GPU models; the fill model handles at most 64"));
  }
  std::vector<FillPod> pods;
  pods.reserve(list.pods.size());
  for (size_t i = 0; i < list.pods.size(); ++i) {
    const OpenbPod& p = list.pods[i];
    FillPod f;
    f.cpu_milli = p.cpu_milli;
    f.memory_mib = p.memory_mib;
    f.num_gpu = p.num_gpu;
    f.gpu_milli = p.gpu_milli;
    f.source = static_cast<int32_t>(i);
    if (p.gpu_spec.empty()) {
      f.model_mask = ~uint64_t{0};
    } else {
      for (size_t m = 0; m < nodes.models.size(); ++m) {
        if (std::find(p.gpu_spec.begin(), p.gpu_spec.end(), nodes.models[m]) != p.gpu_spec.end()) {
          f.model_mask |= uint64_t{1} << m;
        }
      }
    }
    pods.push_back(f);
  }
  return pods;
}

FillCluster::FillCluster(const OpenbNodeList& list) {
  nodes_.reserve(list.nodes.size());
  for (const OpenbNode& n : list.nodes) {
    Node node;
    node.cpu = node.cpu_left = n.cpu_milli;
    node.memory = node.memory_left = n.memory_mib;
    node.gpus = n.gpus;
    node.first_gpu = static_cast<int32_t>(gpu_left_.size());
    if (n.gpus > 0) {
      node.model = static_cast<int32_t>(std::find(list.models.begin(), list.models.end(), n.model) -
                                        list.models.begin());
    }
    gpu_left_.insert(gpu_left_.end(), static_cast<size_t>(n.gpus), kMilliPerGpu);
    capacity_milli_ += int64_t{kMilliPerGpu} * n.gpus;
    nodes_.push_back(node);
  }
}

int64_t FillCluster::FreeMilli(int32_t n) const {
  const int32_t* g = gpu_left(n);
  int64_t sum = 0;
  for (int32_t i = 0; i < node(n).gpus; ++i) sum += g[i];
  return sum;
}

int32_t FillCluster::FullyFreeGpus(int32_t n) const {
  const int32_t* g = gpu_left(n);
  int32_t free = 0;
  for (int32_t i = 0; i < node(n).gpus; ++i) free += g[i] == kMilliPerGpu ? 1 : 0;
  return free;
}

bool FillCluster::ModelAllowed(int32_t n, const FillPod& pod) const {
  const Node& nd = node(n);
  if (pod.num_gpu == 0) return true;
  return nd.model >= 0 && (pod.model_mask >> nd.model & 1U) != 0;
}

bool FillCluster::FitsGpu(int32_t n, const FillPod& pod) const {
  if (pod.num_gpu == 0) return true;
  const int32_t* g = gpu_left(n);
  int32_t enough = 0;
  for (int32_t i = 0; i < node(n).gpus; ++i) {
    if (g[i] >= pod.gpu_milli && ++enough >= pod.num_gpu) return true;
  }
  return false;
}

bool FillCluster::Fits(int32_t n, const FillPod& pod) const {
  const Node& nd = node(n);
  return nd.cpu_left >= pod.cpu_milli && nd.memory_left >= pod.memory_mib && ModelAllowed(n, pod) &&
         FitsGpu(n, pod);
}

FillFailure FillCluster::WhyNoFit(const FillPod& pod) const {
  bool model = false, gpu = false, cpu = false;
  for (int32_t n = 0; n < node_count(); ++n) {
    if (!ModelAllowed(n, pod) || node(n).gpus < pod.num_gpu) continue;
    model = true;
    if (!FitsGpu(n, pod)) continue;
    gpu = true;
    if (node(n).cpu_left < pod.cpu_milli) continue;
    cpu = true;
    break;  // every earlier check passed on this node: the answer is kMemory
  }
  if (!model) return FillFailure::kGpuModel;
  if (!gpu) return FillFailure::kGpu;
  if (!cpu) return FillFailure::kCpu;
  return FillFailure::kMemory;
}

uint64_t FillCluster::FirstFreeGpus(int32_t n, const FillPod& pod) const {
  const int32_t* g = gpu_left(n);
  uint64_t mask = 0;
  int32_t need = pod.num_gpu;
  for (int32_t i = 0; i < node(n).gpus && need > 0; ++i) {
    if (g[i] == kMilliPerGpu) {
      mask |= uint64_t{1} << i;
      --need;
    }
  }
  return mask;
}

uint64_t FillCluster::BestFitGpus(int32_t n, const FillPod& pod) const {
  if (pod.num_gpu == 0) return 0;
  if (!pod.IsSharing()) return FirstFreeGpus(n, pod);
  const int32_t* g = gpu_left(n);
  int32_t best = -1;
  for (int32_t i = 0; i < node(n).gpus; ++i) {
    if (g[i] >= pod.gpu_milli && (best < 0 || g[i] < g[best])) best = i;
  }
  return best < 0 ? 0 : uint64_t{1} << best;
}

void FillCluster::ForEachGpuChoice(
    int32_t n, const FillPod& pod,
    absl::FunctionRef<void(uint64_t gpus, const int32_t* after)> visit) const {
  const int32_t gpus = node(n).gpus;
  const int32_t* left = gpu_left(n);
  std::array<int32_t, kMaxGpusPerNode> after{};
  std::copy(left, left + gpus, after.begin());
  if (!pod.IsSharing()) {
    const uint64_t taken = pod.num_gpu == 0 ? 0 : FirstFreeGpus(n, pod);
    for (int32_t i = 0; i < gpus; ++i) {
      if (taken >> i & 1U) after[static_cast<size_t>(i)] -= pod.gpu_milli;
    }
    visit(taken, after.data());
    return;
  }
  for (int32_t i = 0; i < gpus; ++i) {
    if (left[i] < pod.gpu_milli) continue;
    bool tried = false;
    for (int32_t j = 0; j < i && !tried; ++j) tried = left[j] == left[i];
    if (tried) continue;
    after[static_cast<size_t>(i)] = left[i] - pod.gpu_milli;
    visit(uint64_t{1} << i, after.data());
    after[static_cast<size_t>(i)] = left[i];
  }
}

void FillCluster::Place(const FillPod& pod, int32_t n, uint64_t gpus) {
  Node& nd = nodes_[static_cast<size_t>(n)];
  Require(nd.cpu_left >= pod.cpu_milli && nd.memory_left >= pod.memory_mib,
          "placing a pod on a node without its CPU or memory");
  nd.cpu_left -= pod.cpu_milli;
  nd.memory_left -= pod.memory_mib;
  int32_t taken = 0;
  for (int32_t i = 0; i < nd.gpus; ++i) {
    if ((gpus >> i & 1U) == 0) continue;
    int32_t& left = gpu_left_[static_cast<size_t>(nd.first_gpu) + static_cast<size_t>(i)];
    Require(left >= pod.gpu_milli, "placing a pod on a GPU without its share");
    left -= pod.gpu_milli;
    ++taken;
  }
  Require(taken == pod.num_gpu, "the chosen GPUs do not match the pod's GPU count");
  allocated_milli_ += pod.TotalGpuMilli();
  ++nd.version;
}

void FillCluster::Remove(const FillPod& pod, int32_t n, uint64_t gpus) {
  Node& nd = nodes_[static_cast<size_t>(n)];
  nd.cpu_left += pod.cpu_milli;
  nd.memory_left += pod.memory_mib;
  Require(nd.cpu_left <= nd.cpu && nd.memory_left <= nd.memory,
          "removing a pod gives back more CPU or memory than the node has");
  int32_t given = 0;
  for (int32_t i = 0; i < nd.gpus; ++i) {
    if ((gpus >> i & 1U) == 0) continue;
    int32_t& left = gpu_left_[static_cast<size_t>(nd.first_gpu) + static_cast<size_t>(i)];
    left += pod.gpu_milli;
    Require(left <= kMilliPerGpu, "removing a pod gives a GPU more than 1000 milli");
    ++given;
  }
  Require(given == pod.num_gpu, "the removed GPUs do not match the pod's GPU count");
  allocated_milli_ -= pod.TotalGpuMilli();
  ++nd.version;
}

absl::Status FillCluster::CheckInvariants() const {
  int64_t free = 0;
  for (int32_t n = 0; n < node_count(); ++n) {
    const Node& nd = node(n);
    if (nd.cpu_left < 0 || nd.cpu_left > nd.cpu || nd.memory_left < 0 ||
        nd.memory_left > nd.memory) {
      return absl::InternalError(absl::StrCat("node ", n, ": CPU or memory out of range"));
    }
    for (int32_t i = 0; i < nd.gpus; ++i) {
      const int32_t left = gpu_left(n)[i];
      if (left < 0 || left > kMilliPerGpu) {
        return absl::InternalError(absl::StrCat("node ", n, " GPU ", i, ": free milli ", left));
      }
      free += left;
    }
  }
  if (capacity_milli_ - free != allocated_milli_) {
    return absl::InternalError(absl::StrCat("allocated ", allocated_milli_, " != capacity ",
                                            capacity_milli_, " - free ", free));
  }
  return absl::OkStatus();
}

}  // namespace hived::sim

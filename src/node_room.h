// src/node_room.h: node CPU and host memory as a placement constraint (issue 27 item 3).
// The caller that knows the nodes' accounting (Sharing: declared and used CPU milli and host
// memory per node) hands it to the scheduler's `Decide` as const input with what each pod of
// the request takes; the node choice then never picks a node that cannot hold the pods placed
// on it, counting the request's earlier pods on the same node (as `TakenLeaves` counts
// leaves). Nothing is tried and undone for lack of CPU.
//
// Example:
//   NodeRoom room{&cpu, &cpu_used, &memory, &memory_used, {500, 500}, {1024, 1024}};
//   core->Schedule(holder_request, phase, &room);
//
// Invariants: the four vectors have one entry per node (NodeId value); a declared amount of
// 0 means the node declares none (unlimited); `pod_cpu` and `pod_memory` have one entry per
// pod of the request in the order of the parsed request's `needs` (pods ascending by leaf
// count, ties in member order: `PodsInNeedsOrder`; a holder's pods all need one leaf, so
// this is its pods' order). The scheduler's placement lists the pods in that order too.
//
// Thread safety: a value read during one decision; callers serialize.
#ifndef HIVED_SRC_NODE_ROOM_H_
#define HIVED_SRC_NODE_ROOM_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "hived/schedule_result.h"

namespace hived {

// The request's pods (indices in member order: member 0's pods first) in the order of the
// parsed request's `needs` and of the scheduler's placement: ascending by leaf count, ties in
// member order. `needs[k]` is the leaf count of pod `PodsInNeedsOrder(r)[k]`. (request.cc)
std::vector<uint32_t> PodsInNeedsOrder(const GroupRequest& r);

struct NodeRoom {
  const std::vector<int64_t>* cpu = nullptr;  // per node: declared CPU milli (0: none)
  const std::vector<int64_t>* cpu_used = nullptr;
  const std::vector<int64_t>* memory = nullptr;  // per node: declared host memory (0: none)
  const std::vector<int64_t>* memory_used = nullptr;
  // Per node: what the request's other pods (not in `pod_cpu`) take already (Sharing: its
  // pods placed on open GPUs); may be null.
  const std::map<uint32_t, std::pair<int64_t, int64_t>>* taken = nullptr;
  std::vector<int64_t> pod_cpu;  // per pod, in `needs` order
  std::vector<int64_t> pod_memory;

  // Whether node `n` holds `cpu` more CPU milli and `memory` more host memory.
  bool Fits(uint32_t n, int64_t more_cpu, int64_t more_memory) const {
    if (taken != nullptr) {
      auto it = taken->find(n);
      if (it != taken->end()) {
        more_cpu += it->second.first;
        more_memory += it->second.second;
      }
    }
    const int64_t c = (*cpu)[n], m = (*memory)[n];
    return (c == 0 || (*cpu_used)[n] + more_cpu <= c) &&
           (m == 0 || (*memory_used)[n] + more_memory <= m);
  }
  int64_t PodCpu(size_t k) const { return k < pod_cpu.size() ? pod_cpu[k] : 0; }
  int64_t PodMemory(size_t k) const { return k < pod_memory.size() ? pod_memory[k] : 0; }
};

}  // namespace hived

#endif  // HIVED_SRC_NODE_ROOM_H_

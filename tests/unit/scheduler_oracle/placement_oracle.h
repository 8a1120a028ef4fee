// tests/unit/scheduler_oracle/placement_oracle.h: an independent model of the node and leaf
// choice that include/hived/scheduler.h states (placement rules 2-5), for tests.
//
// It is written from the rules in that header and reads the scheduler only through the
// public views (`spec()`, `PhysicalCluster()`, `VirtualCluster()`, `Nodes()`), so it shares
// no code and no data structure with src/: a bug in the scheduler's node index, its health
// or suggestion bookkeeping, or its leaf choice shows up as a disagreement. It recomputes
// everything from scratch with a full sort per request (small clusters only).
//
// What it models:
//   - the nodes of a view: a VC's non-pinned virtual node-level cells of a chain in VC
//     order (a preassigned cell below node level counts as one node), or a chain's
//     physical nodes in config order;
//   - their order: healthy first, then suggested, then (VC) most used leaves first, or
//     (physical) most opportunistic leaves first, then fewest guaranteed leaves; then the
//     view's order;
//   - the greedy cursor over that order, pods sorted by leaf count ascending (stable);
//   - inside a physical node, the leaves of each pod (rule 5, free leaves only: what an
//     opportunistic request gets).
// It does not model binding (rule 6) beyond "a bound virtual node is its physical node".
//
// The scheduler-like type `S` needs the public view methods of `hived::Scheduler`; tests of
// internals pass `SchedulerImpl`, which has the same ones.
//
// A leaf counts as used when the views give it a priority (a group runs on it, also while
// it is being preempted); a reserved leaf nobody runs on is free, as in the rules.
#ifndef HIVED_TESTS_UNIT_SCHEDULER_ORACLE_PLACEMENT_ORACLE_H_
#define HIVED_TESTS_UNIT_SCHEDULER_ORACLE_PLACEMENT_ORACLE_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "hived/cluster_spec.h"
#include "hived/schedule_result.h"
#include "hived/status_view.h"
#include "hived/types.h"

namespace hived::oracle {

// One node of a view, as the rules see it.
struct Node {
  std::string name;           // physical node name, or the virtual cell's address
  std::string physical_node;  // the physical node (virtual view: empty when unbound)
  int32_t total = 0;          // leaves
  int32_t used = 0;           // leaves used by any group
  int32_t opportunistic = 0;  // leaves used at priority -1
  int32_t guaranteed = 0;     // leaves used at priority >= 0
  int32_t usable = 0;         // leaves a request may count (see BuildView)
  bool healthy = true;
  bool suggested = true;
};

// Levels of the chain's cell types: leaf = 1. Returns the node level of chain `chain`.
inline CellLevel NodeLevel(const ClusterSpec& spec, const std::string& chain) {
  std::map<std::string, const CellTypeSpec*> types;
  for (const CellTypeSpec& t : spec.cell_types) types[t.name] = &t;
  // Walk down from the chain; a type's level is the number of types below it (the leaf
  // type, not in `cell_types`, included) + 1.
  std::vector<const CellTypeSpec*> path;
  for (auto it = types.find(chain); it != types.end(); it = types.find(it->second->child_cell_type))
    path.push_back(it->second);
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i]->is_node_level) return static_cast<CellLevel>(path.size() - i + 1);
  }
  return static_cast<CellLevel>(path.size() + 1);  // no node level: the top is the node
}

// A node-level cell's node name: the last component of its address ("0/n0" -> "n0").
inline std::string NodeName(const PhysicalCellStatus& node) {
  return node.address.substr(node.address.rfind('/') + 1);
}

// The physical node name of every physical cell at or below node level, by address.
inline void MapNodes(const PhysicalCellStatus& c, const std::string& node,
                     std::map<std::string, std::string>* out) {
  std::string here = c.is_node_level ? NodeName(c) : node;
  if (!here.empty()) (*out)[c.address] = here;
  for (const PhysicalCellStatus& k : c.children) MapNodes(k, here, out);
}

// Leaves of a status tree, depth-first.
template <typename Cell>
void Leaves(const Cell& c, std::vector<const Cell*>* out) {
  if (c.children.empty()) {
    out->push_back(&c);
    return;
  }
  for (const Cell& k : c.children) Leaves(k, out);
}

// Counts a node's leaves. `q` is the request's priority; `pass1` counts only free leaves as
// usable, otherwise leaves used below `q` count too (a physical view always uses pass 1).
template <typename Cell>
void CountLeaves(const Cell& c, Priority q, bool pass1, Node* n) {
  std::vector<const Cell*> leaves;
  Leaves(c, &leaves);
  for (const Cell* l : leaves) {
    ++n->total;
    if (l->priority == kFreePriority) {  // unused (a reserved but unused leaf too)
      ++n->usable;
      continue;
    }
    ++n->used;
    if (l->priority == kOpportunisticPriority) {
      ++n->opportunistic;
    } else {
      ++n->guaranteed;
    }
    if (!pass1 && l->priority < q) ++n->usable;
  }
}

// Health of physical nodes by name.
template <typename S>
std::map<std::string, bool> NodeHealth(const S& s) {
  std::map<std::string, bool> out;
  for (const NodeStatus& n : s.Nodes()) out[n.name] = n.healthy;
  return out;
}

inline bool Suggested(const std::optional<std::vector<std::string>>& suggested,
                      const std::string& node) {
  if (!suggested) return true;
  return std::find(suggested->begin(), suggested->end(), node) != suggested->end();
}

// What the views of the whole cluster say, read once for several views.
struct Snapshot {
  std::vector<PhysicalCellStatus> physical;
  std::map<std::string, bool> health;          // by node name
  std::map<std::string, std::string> node_of;  // physical cell address -> node name
};

template <typename S>
Snapshot TakeSnapshot(const S& s) {
  Snapshot snap;
  snap.physical = s.PhysicalCluster();
  snap.health = NodeHealth(s);
  for (const PhysicalCellStatus& c : snap.physical) MapNodes(c, "", &snap.node_of);
  return snap;
}

// The nodes of a view. `vc` empty: the chain's physical nodes (only free leaves usable);
// otherwise the VC's non-pinned virtual nodes of the chain.
template <typename S>
std::vector<Node> BuildView(const S& s, const Snapshot& snap, const std::string& vc,
                            const std::string& chain, Priority q, bool pass1,
                            const std::optional<std::vector<std::string>>& sugg) {
  const std::map<std::string, bool>& health = snap.health;
  const std::vector<PhysicalCellStatus>& physical = snap.physical;
  std::vector<Node> out;
  if (vc.empty()) {
    std::vector<const PhysicalCellStatus*> nodes;
    std::vector<const PhysicalCellStatus*> stack;
    for (auto it = physical.rbegin(); it != physical.rend(); ++it) {
      if (it->cell_type == chain) stack.push_back(&*it);
    }
    while (!stack.empty()) {
      const PhysicalCellStatus* c = stack.back();
      stack.pop_back();
      if (c->is_node_level) {
        nodes.push_back(c);
        continue;
      }
      for (auto it = c->children.rbegin(); it != c->children.rend(); ++it) stack.push_back(&*it);
    }
    for (const PhysicalCellStatus* c : nodes) {
      Node n;
      n.name = NodeName(*c);
      n.physical_node = n.name;
      CountLeaves(*c, q, /*pass1=*/true, &n);
      n.healthy = health.at(n.name);
      n.suggested = Suggested(sugg, n.name);
      out.push_back(n);
    }
    return out;
  }
  const std::map<std::string, std::string>& node_of = snap.node_of;
  const ClusterSpec& spec = s.spec();
  const auto cluster = s.VirtualCluster(vc);
  if (!cluster.ok()) return out;
  // VirtualCluster lists the preassigned cells in VC order: virtualCells entries, each
  // repeated cellNumber times, then the pinned cells.
  std::vector<std::string> entry_chain;
  for (const VirtualClusterSpec& v : spec.virtual_clusters) {
    if (v.name != vc) continue;
    for (const VirtualCellSpec& e : v.virtual_cells) {
      for (int32_t i = 0; i < e.cell_number; ++i)
        entry_chain.push_back(e.cell_type.substr(0, e.cell_type.find('.')));
    }
  }
  const CellLevel node_level = NodeLevel(spec, chain);
  for (size_t i = 0; i < cluster->size() && i < entry_chain.size(); ++i) {
    const VirtualCellStatus& top = (*cluster)[i];
    if (entry_chain[i] != chain || !top.pinned_cell_id.empty()) continue;
    std::vector<const VirtualCellStatus*> nodes;
    std::vector<const VirtualCellStatus*> stack = {&top};
    while (!stack.empty()) {
      const VirtualCellStatus* c = stack.back();
      stack.pop_back();
      if (c->level <= node_level) {
        nodes.push_back(c);
        continue;
      }
      for (auto it = c->children.rbegin(); it != c->children.rend(); ++it) stack.push_back(&*it);
    }
    for (const VirtualCellStatus* c : nodes) {
      Node n;
      n.name = c->address;
      CountLeaves(*c, q, pass1, &n);
      if (!c->physical_cell.empty()) {
        n.physical_node = node_of.at(c->physical_cell);
        n.healthy = health.at(n.physical_node);
        n.suggested = Suggested(sugg, n.physical_node);
      }
      out.push_back(n);
    }
  }
  return out;
}

template <typename S>
std::vector<Node> BuildView(const S& s, const std::string& vc, const std::string& chain, Priority q,
                            bool pass1, const std::optional<std::vector<std::string>>& sugg) {
  return BuildView(s, TakeSnapshot(s), vc, chain, q, pass1, sugg);
}

// Why a node choice failed.
enum class Failure { kNone, kBadNode, kNonSuggestedNode, kNoCapacity };

struct Choice {
  Failure failure = Failure::kNone;
  std::vector<int32_t> pod_node;  // per pod (in `needs` order): position in the view
  int32_t blocking_node = -1;     // kBadNode / kNonSuggestedNode: the node that would fit
};

// Rules 3 and 4: the order of the view's nodes, then the greedy cursor. `needs` are the
// pods' leaf counts sorted ascending. `physical` selects the physical view's sort keys.
inline Choice ChooseNodes(const std::vector<Node>& nodes, const std::vector<int32_t>& needs,
                          bool physical) {
  std::vector<int32_t> order(nodes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  auto rank = [&](int32_t i) {
    const Node& n = nodes[static_cast<size_t>(i)];
    // Smaller sorts first.
    return std::make_tuple(n.healthy ? 0 : 1, n.suggested ? 0 : 1,
                           physical ? -n.opportunistic : -n.used, physical ? n.guaranteed : 0, i);
  };
  std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return rank(a) < rank(b); });
  Choice out;
  size_t cursor = 0;
  int32_t picked = 0;
  for (int32_t need : needs) {
    while (true) {
      if (cursor >= order.size()) {
        out.failure = Failure::kNoCapacity;
        return out;
      }
      const int32_t i = order[cursor];
      const Node& n = nodes[static_cast<size_t>(i)];
      if (n.usable - picked >= need) {
        if (!n.healthy || !n.suggested) {
          out.failure = n.healthy ? Failure::kNonSuggestedNode : Failure::kBadNode;
          out.blocking_node = i;
          return out;
        }
        out.pod_node.push_back(i);
        picked += need;
        break;
      }
      ++cursor;
      picked = 0;
    }
  }
  return out;
}

// Rule 5 for an opportunistic pod: the leaves (device indices, in placement order) that
// `need` free leaves of physical node `node` give, skipping `taken` device indices (earlier
// pods of the group), which this adds to.
inline std::vector<int32_t> ChooseFreeLeaves(const PhysicalCellStatus& node, int32_t need,
                                             std::set<int32_t>* taken) {
  std::vector<const PhysicalCellStatus*> all;
  Leaves(node, &all);
  std::map<const PhysicalCellStatus*, int32_t> index;
  for (size_t i = 0; i < all.size(); ++i) index[all[i]] = static_cast<int32_t>(i);
  auto free_leaves = [&](const PhysicalCellStatus& c) {
    std::vector<const PhysicalCellStatus*> leaves;
    Leaves(c, &leaves);
    std::vector<int32_t> out;
    for (const PhysicalCellStatus* l : leaves) {
      int32_t d = index.at(l);
      if (l->priority == kFreePriority && taken->count(d) == 0) out.push_back(d);
    }
    return out;
  };
  // Every cell of the node, depth-first; the best is the lowest level with enough free
  // leaves, then the most free leaves counted up to `need`, then the first.
  std::vector<const PhysicalCellStatus*> cells;
  std::vector<const PhysicalCellStatus*> stack = {&node};
  while (!stack.empty()) {
    const PhysicalCellStatus* c = stack.back();
    stack.pop_back();
    cells.push_back(c);
    for (auto it = c->children.rbegin(); it != c->children.rend(); ++it) stack.push_back(&*it);
  }
  const PhysicalCellStatus* best = nullptr;
  int32_t best_free = 0;
  for (const PhysicalCellStatus* c : cells) {
    const int32_t free = static_cast<int32_t>(free_leaves(*c).size());
    if (free < need) continue;
    const int32_t capped = std::min(free, need);
    if (best == nullptr || c->level < best->level ||
        (c->level == best->level && capped > best_free)) {
      best = c;
      best_free = capped;
    }
  }
  if (best == nullptr) return {};
  std::vector<int32_t> chosen = free_leaves(*best);
  chosen.resize(static_cast<size_t>(need));
  taken->insert(chosen.begin(), chosen.end());
  return chosen;
}

// The physical node-level cell named `name`, or nullptr.
inline const PhysicalCellStatus* FindNode(const std::vector<PhysicalCellStatus>& cells,
                                          const std::string& name) {
  for (const PhysicalCellStatus& c : cells) {
    if (c.is_node_level && NodeName(c) == name) return &c;
    if (const PhysicalCellStatus* found = FindNode(c.children, name)) return found;
  }
  return nullptr;
}

// Pods' leaf counts in placement order (rule 2: ascending, stable).
inline std::vector<int32_t> SortedNeeds(const std::vector<GroupMember>& members) {
  std::vector<GroupMember> sorted = members;
  std::stable_sort(sorted.begin(), sorted.end(), [](const GroupMember& a, const GroupMember& b) {
    return a.leaf_cell_number < b.leaf_cell_number;
  });
  std::vector<int32_t> needs;
  for (const GroupMember& m : sorted) {
    for (int32_t i = 0; i < m.pod_number; ++i) needs.push_back(m.leaf_cell_number);
  }
  return needs;
}

}  // namespace hived::oracle

#endif  // HIVED_TESTS_UNIT_SCHEDULER_ORACLE_PLACEMENT_ORACLE_H_

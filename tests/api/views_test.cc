// The filtered views and summary counters (issue 12 item 5) agree with the whole-cluster
// views they summarise, on random states of two configs (one with pinned cells, several
// chains and nodes shared by two chains); and the whole-cluster trees agree with each other
// (a physical cell's virtual cell is the virtual cell bound to it), which checks the
// addresses the trees build incrementally.
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "hived/config.h"
#include "hived/scheduler.h"
#include "support/catch.h"
#include "support/testdata.h"

namespace hived {
namespace {

bool SameTree(const PhysicalCellStatus& a, const PhysicalCellStatus& b) {
  if (a.cell_type != b.cell_type || a.address != b.address || a.level != b.level ||
      a.is_node_level != b.is_node_level || a.state != b.state || a.health != b.health ||
      a.priority != b.priority || a.vc != b.vc || a.virtual_cell != b.virtual_cell ||
      a.pinned_cell_id != b.pinned_cell_id || a.children.size() != b.children.size()) {
    return false;
  }
  for (size_t i = 0; i < a.children.size(); ++i) {
    if (!SameTree(a.children[i], b.children[i])) return false;
  }
  return true;
}

// Counts of leaves by state, the naive way.
struct Naive {
  LeafCounts leaves;
  int32_t nodes = 0, bad_nodes = 0;
};

void CountPhysical(const PhysicalCellStatus& c, Naive* n) {
  if (c.is_node_level) {
    ++n->nodes;
    n->bad_nodes += c.health == CellHealth::kBad ? 1 : 0;
  }
  if (!c.children.empty()) {
    for (const PhysicalCellStatus& k : c.children) CountPhysical(k, n);
    return;
  }
  LeafCounts& l = n->leaves;
  ++l.total;
  l.free += c.state == CellState::kFree ? 1 : 0;
  l.used += c.state == CellState::kUsed || c.state == CellState::kReserving ? 1 : 0;
  l.reserved += c.state == CellState::kReserved ? 1 : 0;
  l.opportunistic += c.state == CellState::kUsed && c.priority == kOpportunisticPriority ? 1 : 0;
  l.bad += c.health == CellHealth::kBad ? 1 : 0;
}

// A VC's virtual leaves: kUsed is its running groups'; kReserving and kReserved are held by
// its preempting groups.
void CountVirtual(const VirtualCellStatus& c, LeafCounts* l) {
  if (!c.children.empty()) {
    for (const VirtualCellStatus& k : c.children) CountVirtual(k, l);
    return;
  }
  ++l->total;
  l->free += c.state == CellState::kFree ? 1 : 0;
  l->used += c.state == CellState::kUsed ? 1 : 0;
  l->reserved += c.state == CellState::kReserving || c.state == CellState::kReserved ? 1 : 0;
}

// Per VC, the bad leaves inside physical cells bound to it (the nearest bound cell at or
// above the leaf names the VC).
void CountVcBad(const PhysicalCellStatus& c, const std::string& vc,
                std::map<std::string, int32_t>* bad) {
  const std::string& owner = c.vc.empty() ? vc : c.vc;
  if (c.children.empty()) {
    if (c.health == CellHealth::kBad && !owner.empty()) ++(*bad)[owner];
    return;
  }
  for (const PhysicalCellStatus& k : c.children) CountVcBad(k, owner, bad);
}

void MapPhysical(const PhysicalCellStatus& c, std::map<std::string, std::string>* p_to_v) {
  if (!c.virtual_cell.empty()) (*p_to_v)[c.address] = c.virtual_cell;
  for (const PhysicalCellStatus& k : c.children) MapPhysical(k, p_to_v);
}
void MapVirtual(const VirtualCellStatus& c, std::map<std::string, std::string>* p_to_v) {
  if (!c.physical_cell.empty()) (*p_to_v)[c.physical_cell] = c.address;
  for (const VirtualCellStatus& k : c.children) MapVirtual(k, p_to_v);
}

const PhysicalCellStatus* FindNode(const std::vector<PhysicalCellStatus>& cells,
                                   const std::string& node) {
  for (const PhysicalCellStatus& c : cells) {
    const std::string& a = c.address;
    if (c.is_node_level && a.size() >= node.size() &&
        a.compare(a.size() - node.size(), node.size(), node) == 0 &&
        (a.size() == node.size() || a[a.size() - node.size() - 1] == '/')) {
      return &c;
    }
    if (const PhysicalCellStatus* found = FindNode(c.children, node)) return found;
  }
  return nullptr;
}

// The flat table holds the trees' cells, depth first, field for field.
void CheckTableRows(const PhysicalClusterTable& t, const PhysicalCellStatus& c, int32_t parent,
                    size_t* next) {
  REQUIRE(*next < t.rows.size());
  const size_t i = (*next)++;
  const PhysicalCellRow& r = t.rows[i];
  CAPTURE(i, c.address);
  CHECK(r.parent == parent);
  CHECK(t.Address(i) == c.address);
  CHECK(t.cell_types[static_cast<size_t>(r.cell_type)] == c.cell_type);
  CHECK(r.level == c.level);
  CHECK(r.is_node_level == c.is_node_level);
  CHECK(r.state == c.state);
  CHECK(r.health == c.health);
  CHECK(r.priority == c.priority);
  CHECK((r.vc < 0 ? std::string() : t.vcs[static_cast<size_t>(r.vc)]) == c.vc);
  CHECK(t.Text(r.virtual_cell) == c.virtual_cell);
  CHECK(t.Text(r.pinned_cell_id) == c.pinned_cell_id);
  REQUIRE(static_cast<size_t>(r.num_children) == c.children.size());
  for (const PhysicalCellStatus& k : c.children) {
    CheckTableRows(t, k, static_cast<int32_t>(i), next);
  }
}

void CheckViews(const Scheduler& s, const ClusterSpec& spec) {
  const std::vector<PhysicalCellStatus> cluster = s.PhysicalCluster();
  const PhysicalClusterTable table = s.PhysicalClusterAsTable();
  size_t next = 0;
  for (const PhysicalCellStatus& c : cluster) CheckTableRows(table, c, -1, &next);
  CHECK(next == table.rows.size());
  // Physical and virtual trees name each other's cells.
  std::map<std::string, std::string> from_physical, from_virtual;
  for (const PhysicalCellStatus& c : cluster) MapPhysical(c, &from_physical);
  for (const VirtualClusterSpec& vc : spec.virtual_clusters) {
    const absl::StatusOr<std::vector<VirtualCellStatus>> cells = s.VirtualCluster(vc.name);
    REQUIRE(cells.ok());
    for (const VirtualCellStatus& c : *cells) MapVirtual(c, &from_virtual);
  }
  CHECK(from_physical == from_virtual);

  // Chains: the chain view is the whole view's slice; the summary counts its leaves.
  const std::vector<ChainSummary> chains = s.ChainSummaries();
  int64_t top_cells = 0;
  for (const ChainSummary& sum : chains) {
    CAPTURE(sum.chain);
    absl::StatusOr<std::vector<PhysicalCellStatus>> tops = s.PhysicalChain(sum.chain);
    REQUIRE(tops.ok());
    Naive naive;
    for (const PhysicalCellStatus& top : *tops) {
      CountPhysical(top, &naive);
      bool found = false;
      for (const PhysicalCellStatus& c : cluster) found = found || SameTree(c, top);
      CHECK(found);
    }
    top_cells += static_cast<int64_t>(tops->size());
    CHECK(sum.leaves.total == naive.leaves.total);
    CHECK(sum.leaves.free == naive.leaves.free);
    CHECK(sum.leaves.used == naive.leaves.used);
    CHECK(sum.leaves.reserved == naive.leaves.reserved);
    CHECK(sum.leaves.opportunistic == naive.leaves.opportunistic);
    CHECK(sum.leaves.bad == naive.leaves.bad);
    CHECK(sum.nodes == naive.nodes);
    CHECK(sum.bad_nodes == naive.bad_nodes);
    CHECK(sum.leaves.free + sum.leaves.used + sum.leaves.reserved == sum.leaves.total);
    absl::StatusOr<ChainSummary> one = s.GetChainSummary(sum.chain);
    REQUIRE(one.ok());
    CHECK(one->leaves.used == sum.leaves.used);
  }
  CHECK(top_cells == static_cast<int64_t>(cluster.size()));

  // VCs: the summaries over its chains count its virtual leaves.
  const std::vector<VcSummary> vcs = s.VcSummaries();
  std::map<std::string, int32_t> opportunistic, bad;
  for (const PhysicalCellStatus& c : cluster) CountVcBad(c, "", &bad);
  for (const VcUsage& u : s.VcUsages()) opportunistic[u.vc] += u.opportunistic_used_leaf_cells;
  for (const VirtualClusterSpec& vc : spec.virtual_clusters) {
    CAPTURE(vc.name);
    LeafCounts naive;
    const absl::StatusOr<std::vector<VirtualCellStatus>> cells = s.VirtualCluster(vc.name);
    REQUIRE(cells.ok());
    for (const VirtualCellStatus& c : *cells) CountVirtual(c, &naive);
    LeafCounts sum;
    int32_t opp = 0;
    absl::StatusOr<std::vector<VcSummary>> one = s.GetVcSummary(vc.name);
    REQUIRE(one.ok());
    size_t rows = 0;
    for (const VcSummary& v : vcs) {
      if (v.vc != vc.name) continue;
      CHECK(v.leaves.free + v.leaves.used + v.leaves.reserved == v.leaves.total);
      sum.total += v.leaves.total;
      sum.free += v.leaves.free;
      sum.used += v.leaves.used;
      sum.reserved += v.leaves.reserved;
      sum.bad += v.leaves.bad;
      opp += v.opportunistic_used_leaf_cells;
      REQUIRE(rows < one->size());
      CHECK((*one)[rows].chain == v.chain);
      CHECK((*one)[rows].leaves.used == v.leaves.used);
      ++rows;
    }
    CHECK(rows == one->size());
    CHECK(sum.total == naive.total);
    CHECK(sum.free == naive.free);
    CHECK(sum.used == naive.used);
    CHECK(sum.reserved == naive.reserved);
    CHECK(sum.bad == bad[vc.name]);
    CHECK(opp == opportunistic[vc.name]);
  }

  // Nodes: the node views are the whole views' entries.
  const std::vector<NodeStatus> nodes = s.Nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (i > 0 && nodes[i - 1].name == nodes[i].name) continue;
    CAPTURE(nodes[i].name);
    absl::StatusOr<std::vector<NodeStatus>> one = s.GetNode(nodes[i].name);
    REQUIRE(one.ok());
    REQUIRE(!one->empty());
    for (size_t k = 0; k < one->size(); ++k) {
      REQUIRE(i + k < nodes.size());
      CHECK((*one)[k].name == nodes[i + k].name);
      CHECK((*one)[k].free_leaf_cells == nodes[i + k].free_leaf_cells);
      CHECK((*one)[k].healthy == nodes[i + k].healthy);
    }
    absl::StatusOr<std::vector<PhysicalCellStatus>> cells = s.PhysicalNode(nodes[i].name);
    REQUIRE(cells.ok());
    REQUIRE(cells->size() == one->size());
    const PhysicalCellStatus* whole = FindNode(cluster, nodes[i].name);
    REQUIRE(whole != nullptr);
    CHECK(SameTree(*whole, (*cells)[0]));
  }
}

// Random steps: schedule (both phases, all priorities, lazy), allocate, release victims,
// cancel, release, flip node health; the views are checked every few steps.
void RandomWalk(const std::string& config, uint64_t seed, int steps) {
  absl::StatusOr<ClusterSpec> spec = LoadClusterSpecFile(config);
  REQUIRE(spec.ok());
  absl::StatusOr<std::unique_ptr<Scheduler>> created = Scheduler::Create(*spec);
  REQUIRE(created.ok());
  Scheduler& s = **created;
  std::mt19937_64 rng(seed);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  std::vector<std::string> node_names;
  for (const NodeStatus& n : s.Nodes()) node_names.push_back(n.name);
  std::vector<GroupRequest> live;
  int64_t id = 0;
  for (int step = 0; step < steps; ++step) {
    const size_t dice = pick(100);
    if (dice < 50) {
      GroupRequest req;
      req.name = absl::StrCat("g", id++);
      req.vc = spec->virtual_clusters[pick(spec->virtual_clusters.size())].name;
      req.priority = static_cast<Priority>(pick(4)) - 1;
      req.lazy_preemption = pick(3) == 0;
      req.members = {{static_cast<int32_t>(1 + pick(2)), static_cast<int32_t>(1) << pick(4)}};
      absl::StatusOr<ScheduleResult> r =
          s.Schedule(req, pick(4) == 0 ? Phase::kFiltering : Phase::kPreempting);
      if (!r.ok()) continue;
      if (r->outcome == Outcome::kPlaced && s.Allocate(req, r->placement).ok()) {
        live.push_back(req);
      }
      if (r->outcome == Outcome::kPreempting && pick(2) == 0) {
        for (const std::string& v : r->victims) (void)s.Release(v);
      }
    } else if (dice < 80 && !live.empty()) {
      const size_t i = pick(live.size());
      (void)s.Release(live[i].name);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (dice < 88) {
      for (const GroupStatus& g : s.Groups()) {
        if (g.state == GroupState::kPreempting && pick(2) == 0) {
          REQUIRE(s.CancelPreemption(g.name).ok());
        }
      }
    } else {
      // Two draws in separate statements: argument evaluation order is unspecified, and
      // gcc and clang differ, which made the sequence depend on the compiler.
      const auto& node = node_names[pick(node_names.size())];
      REQUIRE(s.SetNodeHealthy(node, pick(3) != 0).ok());
    }
    if (step % 7 == 0) {
      CAPTURE(seed, step);
      CheckViews(s, *spec);
      REQUIRE(s.CheckInvariants().ok());
    }
  }
}

TEST_CASE("Views: filtered views and summaries agree with the whole views on random states",
          "[api][views]") {
  for (const char* config : {"sched-two-racks-4vc.yaml", "hived-configs/design.yaml"}) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      CAPTURE(config, seed);
      RandomWalk(testing::TestdataPath(config), seed, 300);
    }
  }
}

TEST_CASE("Views: unknown nodes, chains and VCs are kNotFound", "[api][views]") {
  absl::StatusOr<ClusterSpec> spec =
      LoadClusterSpecFile(testing::TestdataPath("sched-two-racks-4vc.yaml"));
  REQUIRE(spec.ok());
  absl::StatusOr<std::unique_ptr<Scheduler>> s = Scheduler::Create(*spec);
  REQUIRE(s.ok());
  CHECK((*s)->GetNode("nope").status().code() == absl::StatusCode::kNotFound);
  CHECK((*s)->PhysicalNode("nope").status().code() == absl::StatusCode::kNotFound);
  CHECK((*s)->PhysicalChain("nope").status().code() == absl::StatusCode::kNotFound);
  CHECK((*s)->GetChainSummary("nope").status().code() == absl::StatusCode::kNotFound);
  CHECK((*s)->GetVcSummary("nope").status().code() == absl::StatusCode::kNotFound);
  CHECK((*s)->GetNode("r0n0").ok());
  CHECK((*s)->GetChainSummary("GRACK").ok());
  CHECK((*s)->GetVcSummary("v1").ok());
}

}  // namespace
}  // namespace hived

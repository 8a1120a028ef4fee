// ShareChoice (src/share_choice.h): the running tally of pod shapes and the stranded measure.
#include "src/share_choice.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"

namespace hived {

namespace {
constexpr double kCoverage = 0.95;  // as FGD's typical pods

// A node's two counts for one shape: its leaves with at least `milli` free (`enough`) and
// the free milli of the others (`small`).
struct Counts {
  int32_t enough = 0;
  int64_t small = 0;
};
Counts CountFor(absl::Span<const int32_t> free, int32_t milli) {
  Counts c;
  for (int32_t f : free) {
    if (f >= milli) {
      ++c.enough;
    } else {
      c.small += f;
    }
  }
  return c;
}
}  // namespace

void ShareChoice::Note(const Shape& s, int32_t pods) {
  if (pods <= 0) return;
  tally_[Key{s.cpu, s.memory, s.milli, s.gpus, s.types}] += pods;
  noted_ += pods;
  cpu_sum_ += static_cast<double>(s.cpu) * pods;
  memory_sum_ += static_cast<double>(s.memory) * pods;
  milli_sum_ += static_cast<double>(s.milli) * s.gpus * pods;
  if (noted_ >= next_rebuild_) {
    while (next_rebuild_ <= noted_) next_rebuild_ *= 2;
    Rebuild();
  }
}

void ShareChoice::Rebuild() {
  ++generation_;
  at_rebuild_ = tally_;
  std::vector<std::pair<int64_t, Key>> order;
  order.reserve(tally_.size());
  for (const auto& [key, count] : tally_) order.emplace_back(count, key);
  // Most frequent first; ties to the larger shape (deterministic).
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a > b; });
  const double wanted = kCoverage * static_cast<double>(noted_);
  double covered = 0;
  size_t k = 0;
  while (k < order.size() && (covered < wanted || k == 0)) {
    covered += static_cast<double>(order[k++].first);
  }
  typical_.clear();
  for (size_t i = 0; i < k; ++i) {
    const auto& [cpu, memory, milli, gpus, types] = order[i].second;
    if (milli == 0) continue;  // CPU-only shapes strand no GPU by shape
    typical_.push_back(
        {{cpu, memory, milli, gpus, types}, static_cast<double>(order[i].first) / covered});
  }
  cpu_per_milli_ = milli_sum_ > 0 ? cpu_sum_ / milli_sum_ : 0;
  memory_per_milli_ = milli_sum_ > 0 ? memory_sum_ / milli_sum_ : 0;
}

double ShareChoice::Stranded(const NodeState& n) const {
  int64_t free = 0;
  for (int32_t f : n.free) free += f;
  if (free == 0) return 0;
  const double total = static_cast<double>(free);
  double stranded = 0;
  for (const Typical& t : typical_) {
    if (n.type < 0 || (t.shape.types >> n.type & 1U) == 0) continue;
    const auto [enough, small] = CountFor(n.free, t.shape.milli);
    const bool fits = enough >= t.shape.gpus && (n.cpu_left < 0 || n.cpu_left >= t.shape.cpu) &&
                      (n.memory_left < 0 || n.memory_left >= t.shape.memory);
    stranded += t.weight * static_cast<double>(fits ? small : free);
  }
  double unfed = 0;
  if (cpu_per_milli_ > 0 && n.cpu_left >= 0) {
    unfed = std::max(unfed, total - static_cast<double>(n.cpu_left) / cpu_per_milli_);
  }
  if (memory_per_milli_ > 0 && n.memory_left >= 0) {
    unfed = std::max(unfed, total - static_cast<double>(n.memory_left) / memory_per_milli_);
  }
  return stranded + unfed;
}

double ShareChoice::Change(const NodeState& node, const Shape& shape, int32_t leaf) const {
  NodeState after = node;
  if (after.cpu_left >= 0) after.cpu_left -= shape.cpu;
  if (after.memory_left >= 0) after.memory_left -= shape.memory;
  if (shape.milli > 0 && shape.milli < 1000 && leaf >= 0) {
    after.free[static_cast<size_t>(leaf)] -= shape.milli;
  } else if (shape.gpus > 0) {
    int32_t left = shape.gpus;
    for (int32_t& f : after.free) {
      if (left > 0 && f == 1000) {
        f = 0;
        --left;
      }
    }
  }
  return Stranded(after) - Stranded(node);
}

ShareChoice::ShapeCache* ShareChoice::CacheOf(const Shape& shape) {
  return &cache_[Key{shape.cpu, shape.memory, shape.milli, shape.gpus, shape.types}];
}

double ShareChoice::StrandedFrom(int64_t cpu_left, int64_t memory_left, int64_t free,
                                 const int32_t* enough, const int64_t* small) const {
  // Stranded(), term for term: the same sums in the same order.
  if (free == 0) return 0;
  const double total = static_cast<double>(free);
  double stranded = 0;
  for (size_t i = 0; i < typical_.size(); ++i) {
    if (enough[i] < 0) continue;
    const Typical& t = typical_[i];
    const bool fits = enough[i] >= t.shape.gpus && (cpu_left < 0 || cpu_left >= t.shape.cpu) &&
                      (memory_left < 0 || memory_left >= t.shape.memory);
    stranded += t.weight * static_cast<double>(fits ? small[i] : free);
  }
  double unfed = 0;
  if (cpu_per_milli_ > 0 && cpu_left >= 0) {
    unfed = std::max(unfed, total - static_cast<double>(cpu_left) / cpu_per_milli_);
  }
  if (memory_per_milli_ > 0 && memory_left >= 0) {
    unfed = std::max(unfed, total - static_cast<double>(memory_left) / memory_per_milli_);
  }
  return stranded + unfed;
}

void ShareChoice::Summarise(NodeCache* nc) const {
  const NodeState& n = nc->state;
  nc->free = 0;
  nc->full = 0;
  for (int32_t f : n.free) {
    nc->free += f;
    nc->full += f == 1000 ? 1 : 0;
  }
  nc->enough.assign(typical_.size(), -1);
  nc->small.assign(typical_.size(), 0);
  for (size_t i = 0; i < typical_.size(); ++i) {
    const Typical& t = typical_[i];
    if (n.type < 0 || (t.shape.types >> n.type & 1U) == 0) continue;
    const auto [enough, small] = CountFor(n.free, t.shape.milli);
    nc->enough[i] = enough;
    nc->small[i] = small;
  }
  nc->before =
      StrandedFrom(n.cpu_left, n.memory_left, nc->free, nc->enough.data(), nc->small.data());
}

double ShareChoice::ChangeAt(ShapeCache* cache, const Shape& shape, uint32_t node,
                             uint64_t core_used, absl::FunctionRef<NodeState()> state,
                             int32_t choice) {
  ShapeCache& per_node = *cache;
  if (node >= per_node.size()) per_node.resize(node + 1);
  if (node >= version_.size()) version_.resize(node + 1, 0);
  if (node >= nodes_.size()) nodes_.resize(node + 1);
  Entry& e = per_node[node];
  NodeCache& nc = nodes_[node];
  const bool current =
      e.generation == generation_ && e.version == version_[node] && e.core_used == core_used;
  if (!current) {
    // The node's state, stranded milli and counts, shared by every shape until it changes.
    if (nc.generation != generation_ || nc.version != version_[node] || nc.core_used != core_used) {
      nc.state = state();
      Summarise(&nc);
      nc.generation = generation_;
      nc.version = version_[node];
      nc.core_used = core_used;
    }
    const double unknown = std::numeric_limits<double>::quiet_NaN();
    e.any = unknown;
    if (shape.milli > 0 && shape.milli < 1000) {
      e.leaves.assign(nc.state.free.size(), unknown);
    } else {
      e.leaves.clear();
    }
    e.generation = generation_;
    e.version = version_[node];
    e.core_used = core_used;
  }
  if (choice != kAnyFreeLeaf && static_cast<size_t>(choice) >= e.leaves.size()) {
    return std::numeric_limits<double>::infinity();  // whole GPUs or no GPU: one choice only
  }
  double& c = choice == kAnyFreeLeaf ? e.any : e.leaves[static_cast<size_t>(choice)];
  if (std::isnan(c)) c = Compute(nc, shape, choice);
  return c;
}

double ShareChoice::Compute(const NodeCache& nc, const Shape& shape, int32_t choice) {
  const NodeState& n = nc.state;
  const double inf = std::numeric_limits<double>::infinity();
  const bool room = (n.cpu_left < 0 || n.cpu_left >= shape.cpu) &&
                    (n.memory_left < 0 || n.memory_left >= shape.memory) &&
                    (shape.gpus == 0 || (n.type >= 0 && (shape.types >> n.type & 1U) != 0));
  if (!room) return inf;
  const int64_t cpu_left = n.cpu_left >= 0 ? n.cpu_left - shape.cpu : n.cpu_left;
  const int64_t memory_left = n.memory_left >= 0 ? n.memory_left - shape.memory : n.memory_left;
  const size_t kinds = typical_.size();
  enough_scratch_.resize(kinds);
  small_scratch_.resize(kinds);
  int32_t* enough = enough_scratch_.data();
  int64_t* small = small_scratch_.data();
  if (shape.milli > 0 && shape.milli < 1000) {
    // A share on one leaf: only that leaf's term of each count moves. Every fully free
    // leaf gives the same change, so kAnyFreeLeaf is that of one (inf without any).
    int32_t f = 0;
    if (choice == kAnyFreeLeaf) {
      if (nc.full == 0) return inf;
      f = 1000;
    } else {
      f = n.free[static_cast<size_t>(choice)];
    }
    if (f < shape.milli) return inf;
    const int32_t g = f - shape.milli;
    for (size_t k = 0; k < kinds; ++k) {
      const int32_t tm = typical_[k].shape.milli;
      enough[k] = nc.enough[k] < 0 ? -1 : nc.enough[k] - (f >= tm ? 1 : 0) + (g >= tm ? 1 : 0);
      small[k] = nc.small[k] - (f < tm ? f : 0) + (g < tm ? g : 0);
    }
    return StrandedFrom(cpu_left, memory_left, nc.free - shape.milli, enough, small) - nc.before;
  }
  // Whole GPUs or no GPU: only the last choice; the first `gpus` fully free leaves go from
  // 1000 to 0 milli free.
  if (choice != kAnyFreeLeaf || shape.gpus > nc.full) return inf;
  const int32_t gpus = std::max(shape.gpus, 0);
  for (size_t k = 0; k < kinds; ++k) {
    const int32_t tm = typical_[k].shape.milli;
    enough[k] =
        nc.enough[k] < 0 ? -1 : nc.enough[k] + gpus * ((0 >= tm ? 1 : 0) - (1000 >= tm ? 1 : 0));
    small[k] = nc.small[k] - int64_t{gpus} * (1000 < tm ? 1000 : 0);
  }
  return StrandedFrom(cpu_left, memory_left, nc.free - int64_t{1000} * gpus, enough, small) -
         nc.before;
}

ShareChoice::Learning ShareChoice::Learned() const {
  auto counts = [](const std::map<Key, int64_t>& m) {
    std::vector<Count> out;
    out.reserve(m.size());
    for (const auto& [key, pods] : m) {
      const auto& [cpu, memory, milli, gpus, types] = key;
      out.push_back({{cpu, memory, milli, gpus, types}, pods});
    }
    return out;
  };
  return {counts(tally_), counts(at_rebuild_)};
}

absl::Status ShareChoice::SetTally(const std::vector<Count>& counts) {
  tally_.clear();
  noted_ = 0;
  cpu_sum_ = memory_sum_ = milli_sum_ = 0;
  for (const Count& c : counts) {
    if (c.pods <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("a learned shape counts ", c.pods, " pods (must be positive)"));
    }
    const Shape& s = c.shape;
    tally_[Key{s.cpu, s.memory, s.milli, s.gpus, s.types}] += c.pods;
    noted_ += c.pods;
    cpu_sum_ += static_cast<double>(s.cpu) * static_cast<double>(c.pods);
    memory_sum_ += static_cast<double>(s.memory) * static_cast<double>(c.pods);
    milli_sum_ += static_cast<double>(s.milli) * s.gpus * static_cast<double>(c.pods);
  }
  return absl::OkStatus();
}

absl::Status ShareChoice::Learn(const Learning& learning) {
  // The typical shapes as the last rebuild made them, then the tally as it grew since.
  if (absl::Status s = SetTally(learning.at_rebuild); !s.ok()) return s;
  next_rebuild_ = 1;
  if (noted_ > 0) {
    while (next_rebuild_ <= noted_) next_rebuild_ *= 2;
    Rebuild();
  } else {
    ++generation_;
    at_rebuild_.clear();
    typical_.clear();
    cpu_per_milli_ = memory_per_milli_ = 0;
  }
  return SetTally(learning.tally);
}

absl::Status ShareChoice::CheckInvariants() const {
  int64_t sum = 0;
  for (const auto& [key, count] : tally_) sum += count;
  if (sum != noted_) {
    return absl::InternalError(
        absl::StrCat("share choice: (3) tally sums to ", sum, ", not ", noted_));
  }
  double w = 0;
  for (const Typical& t : typical_) {
    if (!(t.weight > 0)) return absl::InternalError("share choice: (2) a typical weight <= 0");
    w += t.weight;
  }
  if (w > 1 + 1e-9)
    return absl::InternalError(absl::StrCat("share choice: (2) weights sum to ", w));
  return absl::OkStatus();
}

}  // namespace hived

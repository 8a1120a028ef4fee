// ShareChoice's learnt state (src/share_choice.h): Learned() then Learn() into a fresh
// choice puts it exactly where it was — the same stranded measure now and after more
// requests — which is what makes a restart keep the sharing decisions (regression: before
// the shapes were saved, a restored scheduler placed shares differently).
#include "src/share_choice.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <limits>
#include <random>
#include <vector>

namespace hived {
namespace {

ShareChoice::Shape RandomShape(std::mt19937_64* rng) {
  std::uniform_int_distribution<int> pick(0, 5);
  const int32_t millis[] = {100, 250, 500, 1000, 1000, 0};
  const int k = pick(*rng);
  return {4000 * (1 + pick(*rng)), 8192 * pick(*rng), millis[k], millis[k] == 0 ? 0 : 1 + k / 3,
          k == 2 ? uint64_t{1} : ~uint64_t{0}};
}

ShareChoice::NodeState Node(int32_t a, int32_t b) {
  ShareChoice::NodeState n;
  n.type = 0;
  n.cpu_left = 24000;
  n.memory_left = 65536;
  n.free = {a, b, 1000, 0};
  return n;
}

bool SameLearning(const ShareChoice::Learning& a, const ShareChoice::Learning& b) {
  auto same = [](const std::vector<ShareChoice::Count>& x,
                 const std::vector<ShareChoice::Count>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      const auto& p = x[i].shape;
      const auto& q = y[i].shape;
      if (p.cpu != q.cpu || p.memory != q.memory || p.milli != q.milli || p.gpus != q.gpus ||
          p.types != q.types || x[i].pods != y[i].pods) {
        return false;
      }
    }
    return true;
  };
  return same(a.tally, b.tally) && same(a.at_rebuild, b.at_rebuild);
}

TEST_CASE("ShareChoice: Learn(Learned()) restores the measure now and after more notes") {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    ShareChoice a;
    const int before = static_cast<int>(seed * 7 % 90);  // 0 (nothing learnt) .. 89 notes
    for (int i = 0; i < before; ++i) a.Note(RandomShape(&rng), 1 + static_cast<int32_t>(i % 3));
    ShareChoice b;
    REQUIRE(b.Learn(a.Learned()).ok());
    REQUIRE(SameLearning(a.Learned(), b.Learned()));
    REQUIRE(b.noted() == a.noted());
    REQUIRE(b.CheckInvariants().ok());
    for (int i = 0; i < 200; ++i) {  // across several rebuilds (powers of two)
      INFO("seed " << seed << " step " << i);
      const ShareChoice::NodeState n = Node(static_cast<int32_t>(i * 37 % 1001), 500);
      REQUIRE(a.Stranded(n) == b.Stranded(n));
      const ShareChoice::Shape s = RandomShape(&rng);
      a.Note(s, 1);
      b.Note(s, 1);
    }
    REQUIRE(SameLearning(a.Learned(), b.Learned()));
  }
}

// Invariant (4): the cached, incremental ChangeAt equals the reference Change (which copies
// the node and recomputes Stranded over every leaf) bit for bit, for every choice, across
// random notes (rebuilds), node changes (Touch) and shapes, including cache hits.
TEST_CASE("ShareChoice: ChangeAt equals Change for every choice after random operations",
          "[sharing][property]") {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    CAPTURE(seed);
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<int> coin(0, 9);
    ShareChoice c;
    constexpr uint32_t kNodes = 4;
    std::vector<ShareChoice::NodeState> nodes(kNodes);
    auto random_node = [&](uint32_t i) {
      ShareChoice::NodeState n;
      n.type = static_cast<int32_t>(i % 3) - 1;  // -1 (none), 0, 1
      n.cpu_left = i == 1 ? -1 : 2000 * coin(rng);
      n.memory_left = i == 2 ? -1 : 4096 * coin(rng);
      const int leaves = 1 + coin(rng) % 8;
      const int32_t levels[] = {0, 0, 1000, 1000, 1000, 500, 250, 900, 100, 999};
      for (int l = 0; l < leaves; ++l) n.free.push_back(levels[coin(rng)]);
      return n;
    };
    for (uint32_t i = 0; i < kNodes; ++i) nodes[i] = random_node(i);
    std::vector<ShareChoice::Shape> shapes;
    for (int i = 0; i < 6; ++i) shapes.push_back(RandomShape(&rng));
    for (int step = 0; step < 300; ++step) {
      INFO("step " << step);
      const int op = coin(rng);
      if (op < 2) {
        c.Note(RandomShape(&rng), 1 + coin(rng) % 3);
      } else if (op < 4) {
        const uint32_t i = static_cast<uint32_t>(coin(rng)) % kNodes;
        nodes[i] = random_node(i);
        c.Touch(i);
      }
      const ShareChoice::Shape& shape = shapes[static_cast<size_t>(coin(rng)) % shapes.size()];
      ShareChoice::ShapeCache* cache = c.CacheOf(shape);
      for (uint32_t i = 0; i < kNodes; ++i) {
        const ShareChoice::NodeState& n = nodes[i];
        auto state = [&] { return n; };
        const bool room = (n.cpu_left < 0 || n.cpu_left >= shape.cpu) &&
                          (n.memory_left < 0 || n.memory_left >= shape.memory) &&
                          (shape.gpus == 0 || (n.type >= 0 && (shape.types >> n.type & 1U) != 0));
        const bool share = shape.milli > 0 && shape.milli < 1000;
        const double inf = std::numeric_limits<double>::infinity();
        // Each leaf, then "any free leaf" / the whole-GPU choice, in a random order.
        std::vector<int32_t> choices;
        for (size_t l = 0; l < n.free.size(); ++l) choices.push_back(static_cast<int32_t>(l));
        choices.push_back(ShareChoice::kAnyFreeLeaf);
        std::shuffle(choices.begin(), choices.end(), rng);
        for (int32_t choice : choices) {
          CAPTURE(i, choice, shape.milli, shape.gpus);
          double want = inf;
          if (room && share) {
            int32_t leaf = choice;
            if (choice == ShareChoice::kAnyFreeLeaf) {
              leaf = -1;
              for (size_t l = 0; l < n.free.size() && leaf < 0; ++l) {
                if (n.free[l] == 1000) leaf = static_cast<int32_t>(l);
              }
            }
            if (leaf >= 0 && n.free[static_cast<size_t>(leaf)] >= shape.milli) {
              want = c.Change(n, shape, leaf);
            }
          } else if (room && choice == ShareChoice::kAnyFreeLeaf) {
            int32_t full = 0;
            for (int32_t f : n.free) full += f == 1000 ? 1 : 0;
            if (full >= shape.gpus) want = c.Change(n, shape, -1);
          }
          REQUIRE(c.ChangeAt(cache, shape, i, 0, state, choice) == want);
          REQUIRE(c.ChangeAt(cache, shape, i, 0, state, choice) == want);  // a hit
        }
      }
    }
  }
}

TEST_CASE("ShareChoice: Learn refuses a count that is not positive") {
  ShareChoice c;
  ShareChoice::Learning l;
  l.tally.push_back({{1000, 0, 500, 1, ~uint64_t{0}}, 0});
  REQUIRE(c.Learn(l).code() == absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hived

// ShareChoice's learnt state (src/share_choice.h): Learned() then Learn() into a fresh
// choice puts it exactly where it was — the same stranded measure now and after more
// requests — which is what makes a restart keep the sharing decisions (regression: before
// the shapes were saved, a restored scheduler placed shares differently).
#include "src/share_choice.h"

#include <catch2/catch.hpp>
#include <random>

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

TEST_CASE("ShareChoice: Learn refuses a count that is not positive") {
  ShareChoice c;
  ShareChoice::Learning l;
  l.tally.push_back({{1000, 0, 500, 1, ~uint64_t{0}}, 0});
  REQUIRE(c.Learn(l).code() == absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hived

// server/tests/random_gang.h: the seeded gangs the end-to-end drivers (crash_test.cc,
// loopback_test.cc) submit on HiveD's design config: a VC (and its leaf type), a priority
// (-1, 0, 0 or 50), 1, 2, 4 or 8 GPUs per pod and 1 to 3 pods, drawn in that order; and
// their choice between deleting a running gang and submitting a new one.
#ifndef HIVED_SERVER_TESTS_RANDOM_GANG_H_
#define HIVED_SERVER_TESTS_RANDOM_GANG_H_

#include <iterator>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "server/tests/test_pods.h"

namespace hived::server::testing {

struct RandomGang {
  std::string group;                 // "g<step>"
  std::vector<nlohmann::json> pods;  // "g<step>-<i>", uid "uid-g<step>-<i>"
};

inline RandomGang MakeRandomGang(std::mt19937& rng, int step) {
  static const int kGpus[] = {1, 2, 4, 8};
  const bool vc1 = rng() % 2 == 0;
  const std::string vc = vc1 ? "VC1" : "VC2";
  const std::string type = vc1 ? "DGX2-V100" : "DGX1-P100";
  const int priorities[] = {-1, 0, 0, 50};
  const int priority = priorities[rng() % 4];
  const int gpus = kGpus[rng() % 4];
  const int n = 1 + static_cast<int>(rng() % 3);
  RandomGang gang;
  gang.group = "g" + std::to_string(step);
  for (int i = 0; i < n; ++i) {
    std::string name = gang.group + "-" + std::to_string(i);
    gang.pods.push_back(
        MakePod(name, "uid-" + name, GangSpec(vc, priority, gang.group, n, gpus, type)));
  }
  return gang;
}

// A driver's step: when gangs run, with probability 3/10 the gang to delete (drawn among
// `active`'s keys, in key order); otherwise none (submit a new gang).
template <typename GangMap>
std::optional<std::string> GangToDelete(std::mt19937& rng, const GangMap& active) {
  if (active.empty() || rng() % 10 >= 3) return std::nullopt;
  auto it = active.begin();
  std::advance(it, static_cast<long>(rng() % active.size()));
  return it->first;
}

}  // namespace hived::server::testing

#endif  // HIVED_SERVER_TESTS_RANDOM_GANG_H_

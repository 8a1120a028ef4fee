// The random document mutation of the persistence tests' hostile-input cases: one to three
// edits (a byte replaced from `alphabet`, a run erased, a run of the document inserted).
#ifndef HIVED_TESTS_UNIT_PERSISTENCE_MUTATE_H_
#define HIVED_TESTS_UNIT_PERSISTENCE_MUTATE_H_

#include <random>
#include <string>

namespace hived::testing {

inline std::string Mutate(const std::string& state, const std::string& alphabet,
                          std::mt19937_64& rng) {
  std::string doc = state;
  for (int k = 1 + static_cast<int>(rng() % 3); k > 0; --k) {
    const size_t at = rng() % doc.size();
    switch (rng() % 3) {
      case 0:
        doc[at] = alphabet[rng() % alphabet.size()];
        break;
      case 1:
        doc.erase(at, 1 + rng() % 8);
        break;
      default:
        doc.insert(at, doc.substr(rng() % doc.size(), 1 + rng() % 40));
        break;
    }
    if (doc.empty()) doc = "{";
  }
  return doc;
}

}  // namespace hived::testing

#endif  // HIVED_TESTS_UNIT_PERSISTENCE_MUTATE_H_

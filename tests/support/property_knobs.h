// tests/support/property_knobs.h: seeds and step counts of the randomized tests, from the
// environment, so a long soak is one command:
//   HIVED_PROPERTY_SEEDS=200 HIVED_PROPERTY_STEPS=1000000 ctest --preset release -L ...
//
//   HIVED_PROPERTY_SEEDS        how many seeds each randomized test case runs
//   HIVED_PROPERTY_STEPS        random steps per seed (replaces each test's default)
//   HIVED_PROPERTY_SEED_OFFSET  added to every seed, to explore seeds CI never ran
//
// Unset means the test's own default (what CI runs). A value that is not a positive integer
// (a non-negative one for the offset) stops the test binary with a message naming the variable.
//
// Thread safety: reads the environment; call from the test thread.
#ifndef HIVED_TESTS_SUPPORT_PROPERTY_KNOBS_H_
#define HIVED_TESTS_SUPPORT_PROPERTY_KNOBS_H_

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

// True in a build with AddressSanitizer or ThreadSanitizer, where a random step costs about
// ten times as much: the slowest walks run fewer seeds there (the Debug build runs them all).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HIVED_TESTS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define HIVED_TESTS_SANITIZED 1
#endif
#endif

namespace hived::testing {

#ifdef HIVED_TESTS_SANITIZED
inline constexpr bool kSanitizedBuild = true;
#else
inline constexpr bool kSanitizedBuild = false;
#endif

// The value of environment variable `name` as an integer >= `min`, or `fallback` when unset.
inline int64_t EnvKnob(const char* name, int64_t fallback, int64_t min) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  const long long value = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < min) {
    std::fprintf(stderr, "%s=%s: expected an integer >= %lld\n", name, text,
                 static_cast<long long>(min));
    std::exit(2);
  }
  return value;
}

// Number of seeds a randomized test case runs (HIVED_PROPERTY_SEEDS, default `fallback`).
inline int64_t PropertySeeds(int64_t fallback) {
  return EnvKnob("HIVED_PROPERTY_SEEDS", fallback, 1);
}

// Random steps per seed (HIVED_PROPERTY_STEPS, default `fallback`).
inline int64_t PropertySteps(int64_t fallback) {
  return EnvKnob("HIVED_PROPERTY_STEPS", fallback, 1);
}

// The first seed of a test whose default first seed is `first` (plus HIVED_PROPERTY_SEED_OFFSET).
inline uint64_t PropertyFirstSeed(uint64_t first) {
  return first + static_cast<uint64_t>(EnvKnob("HIVED_PROPERTY_SEED_OFFSET", 0, 0));
}

// One past the last seed of a test whose defaults are `count` seeds from `first`.
inline uint64_t PropertySeedEnd(uint64_t first, int64_t count) {
  return PropertyFirstSeed(first) + static_cast<uint64_t>(PropertySeeds(count));
}

}  // namespace hived::testing

#endif  // HIVED_TESTS_SUPPORT_PROPERTY_KNOBS_H_

// sim/trace/trace_hash.h: the seeded hashes the trace transforms draw from (growth copies,
// thinning, bootstrap, added tenants): deterministic across machines and runs, never
// std::hash.
#ifndef HIVED_SIM_TRACE_TRACE_HASH_H_
#define HIVED_SIM_TRACE_TRACE_HASH_H_

#include <cstdint>
#include <string>

namespace hived::sim {

// SplitMix64 finaliser: a well-mixed 64-bit hash.
inline uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// FNV-1a of `s`.
inline uint64_t HashString(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return h;
}

}  // namespace hived::sim

#endif  // HIVED_SIM_TRACE_TRACE_HASH_H_

// hived/types.h: the quantities shared by every part of the API: cell levels and the
// priority constants HiveD uses. (The typed ids of the internals, `StrongId`, live in
// cellalloc/ids.h: no public signature uses them.)
//
// Example:
//   if (request.priority == hived::kOpportunisticPriority) ...
//
// Thread safety: plain values; safe to copy between threads.
#ifndef HIVED_TYPES_H_
#define HIVED_TYPES_H_

#include <cstdint>

namespace hived {

// A cell level: 1 is the leaf level, higher levels hold more leaves.
using CellLevel = int32_t;

// Group priority. 0..kMaxGuaranteedPriority are guaranteed (inside the VC's cells);
// kOpportunisticPriority runs on any idle cell and may be preempted by anyone.
using Priority = int32_t;
inline constexpr Priority kOpportunisticPriority = -1;
inline constexpr Priority kMinGuaranteedPriority = 0;
inline constexpr Priority kMaxGuaranteedPriority = 1000;
// The priority of a free cell: below every request's priority.
inline constexpr Priority kFreePriority = -2;

}  // namespace hived

#endif  // HIVED_TYPES_H_

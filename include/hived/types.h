// hived/types.h: typed ids and the quantities shared by every part of the API.
//
// Provides `StrongId<Tag, Rep>`, a typed wrapper around a small integer id (cells, nodes,
// chains, virtual clusters are all indexed by dense 32-bit ids), and the priority constants
// HiveD uses.
//
// Example:
//   hived::CellId cell(7);
//   if (!cell.IsNil()) Use(cell.value());
//
// Thread safety: plain values; safe to copy between threads.
#ifndef HIVED_TYPES_H_
#define HIVED_TYPES_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <utility>

namespace hived {

// A typed integer id. Ids of different `Tag`s do not convert into each other, so a
// `NodeId` cannot be passed where a `CellId` is expected. The all-ones value is Nil.
template <typename Tag, typename Rep = uint32_t>
class StrongId {
 public:
  using ValueType = Rep;

  constexpr StrongId() noexcept = default;
  constexpr explicit StrongId(Rep value) noexcept : value_(value) {}

  static constexpr StrongId Nil() noexcept { return StrongId(); }
  constexpr bool IsNil() const noexcept { return value_ == kNilValue; }
  constexpr Rep value() const noexcept { return value_; }

  friend constexpr bool operator==(StrongId a, StrongId b) noexcept { return a.value_ == b.value_; }
  friend constexpr bool operator!=(StrongId a, StrongId b) noexcept { return a.value_ != b.value_; }
  friend constexpr bool operator<(StrongId a, StrongId b) noexcept { return a.value_ < b.value_; }

  template <typename H>
  friend H AbslHashValue(H h, StrongId id) {
    return H::combine(std::move(h), id.value_);
  }

 private:
  static constexpr Rep kNilValue = std::numeric_limits<Rep>::max();
  Rep value_ = kNilValue;
};

using CellId = StrongId<struct CellTag>;
using NodeId = StrongId<struct NodeTag>;
using ChainId = StrongId<struct ChainTag>;
using VcId = StrongId<struct VcTag>;
using CellTypeId = StrongId<struct CellTypeTag>;

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

template <typename Tag, typename Rep>
struct std::hash<hived::StrongId<Tag, Rep>> {
  size_t operator()(hived::StrongId<Tag, Rep> id) const noexcept {
    return std::hash<Rep>()(id.value());
  }
};

#endif  // HIVED_TYPES_H_

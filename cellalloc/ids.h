// cellalloc/ids.h: typed ids of the library's internals. Cells, nodes, chains, cell types and
// virtual clusters are indexed by dense 32-bit ids; `StrongId<Tag, Rep>` keeps them apart.
// Internal (moved out of hived/types.h): no public signature uses them.
//
// Example:
//   hived::CellId cell(7);
//   if (!cell.IsNil()) Use(cell.value());
//
// Thread safety: plain values; safe to copy between threads.
#ifndef HIVED_CELLALLOC_IDS_H_
#define HIVED_CELLALLOC_IDS_H_

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

}  // namespace hived

template <typename Tag, typename Rep>
struct std::hash<hived::StrongId<Tag, Rep>> {
  size_t operator()(hived::StrongId<Tag, Rep> id) const noexcept {
    return std::hash<Rep>()(id.value());
  }
};

#endif  // HIVED_CELLALLOC_IDS_H_

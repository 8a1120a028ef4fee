// Health: doomed counts, deferred health work, and the search for a bad cell to doom.
#include "src/health.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace hived {

using cellalloc::ChainInfo;

Health::Health(const cellalloc::CellForest* forest, const cellalloc::BuddyAllocator* buddy)
    : forest_(forest), buddy_(buddy), doomed_(static_cast<size_t>(forest->num_chains()), 0) {}

void Health::MarkDirty(ChainId ch) {
  if (std::find(dirty_.begin(), dirty_.end(), ch) == dirty_.end()) dirty_.push_back(ch);
}

std::vector<ChainId> Health::TakeDirty() {
  std::vector<ChainId> chains;
  chains.swap(dirty_);
  return chains;
}

bool Health::ChainHasBadOrDoomed(ChainId ch) const {
  if (doomed_[ch.value()] > 0) return true;
  const ChainInfo& info = forest_->chain_info(ch);
  for (CellLevel l = 1; l <= info.top_level; ++l) {
    if (buddy_->bad_free(ch, l) > 0) return true;
  }
  return false;
}

CellId Health::FindBadFreeCell(ChainId ch, CellLevel l) const {
  const cellalloc::CellForest& f = *forest_;
  const CellLevel top = f.chain_info(ch).top_level;
  for (CellLevel k = l; k <= top; ++k) {
    for (CellId c = buddy_->FirstFree(ch, k); !c.IsNil(); c = buddy_->NextFree(c)) {
      if (buddy_->IsHealthy(c)) continue;
      CellId x = c;
      while (f.level(x) > l) {
        CellId next;
        for (int32_t j = 0; j < f.num_children(x); ++j) {
          if (!buddy_->IsHealthy(f.child(x, j))) {
            next = f.child(x, j);
            break;
          }
        }
        if (next.IsNil()) break;
        x = next;
      }
      if (f.level(x) == l) return x;
    }
  }
  return CellId::Nil();
}

absl::Status Health::CheckInvariants(const std::vector<int32_t>& doomed_per_chain) const {
  for (size_t i = 0; i < dirty_.size(); ++i) {
    if (std::find(dirty_.begin() + static_cast<std::ptrdiff_t>(i) + 1, dirty_.end(), dirty_[i]) !=
        dirty_.end()) {
      return absl::InternalError(absl::StrCat("(1) chain ", dirty_[i].value(), " dirty twice"));
    }
  }
  if (doomed_per_chain != doomed_) {
    for (size_t c = 0; c < doomed_.size(); ++c) {
      const int32_t want = c < doomed_per_chain.size() ? doomed_per_chain[c] : 0;
      if (doomed_[c] != want) {
        return absl::InternalError(
            absl::StrCat("(2) chain ", c, " counts ", doomed_[c], " doomed cells, not ", want));
      }
    }
    return absl::InternalError("(2) doomed counts cover the wrong number of chains");
  }
  if (!dirty_.empty() || !pending_bad_.empty()) {
    return absl::InternalError(
        absl::StrCat("(3) health work pending between calls: ", dirty_.size(), " dirty chains, ",
                     pending_bad_.size(), " cells awaiting mirroring"));
  }
  return absl::OkStatus();
}

}  // namespace hived

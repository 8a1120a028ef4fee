#include "src/group_table.h"

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "src/internal/strings.h"

namespace hived {

GroupId GroupTable::Find(std::string_view name) const {
  auto it = by_name_.find(ToAbsl(name));
  return it == by_name_.end() ? kNilId : it->second;
}

GroupId GroupTable::Add(std::string_view name) {
  GroupId g;
  if (!free_.empty()) {
    g = free_.back();
    free_.pop_back();
  } else {
    g = size_++;
    if (g % kChunk == 0) chunks_.push_back(std::make_unique<Group[]>(kChunk));
  }
  Group& grp = (*this)[g];
  grp.name.assign(name.data(), name.size());
  grp.alive = true;
  ++grp.generation;
  grp.reserved_at = kNoTime;
  grp.reservation_deadline = kNoTime;
  by_name_.emplace(grp.name, g);
  return g;
}

void GroupTable::Remove(GroupId g) {
  Group& grp = (*this)[g];
  by_name_.erase(absl::string_view(grp.name));
  grp.alive = false;
  grp.pleaves.clear();
  grp.vleaves.clear();
  grp.pods.reset();
  free_.push_back(g);
}

absl::Status GroupTable::CheckInvariants() const {
  size_t live = 0;
  for (GroupId g = 0; g < size_; ++g) {
    const Group& grp = (*this)[g];
    if (!grp.alive) {
      if (!grp.pleaves.empty() || !grp.vleaves.empty()) {
        return absl::InternalError(absl::StrCat("(3) dead group slot ", g, " holds leaves"));
      }
      if (grp.pods != nullptr) {
        return absl::InternalError(absl::StrCat("(4) dead group slot ", g, " holds pods"));
      }
      continue;
    }
    if (grp.pods != nullptr) {
      int32_t named = 0;
      std::vector<std::string_view> names;
      for (const PodSlot& slot : grp.pods->slots) {
        if (slot.name.empty()) continue;
        ++named;
        names.push_back(slot.name);
      }
      std::sort(names.begin(), names.end());
      if (named != grp.pods->allocated || named == 0 ||
          std::adjacent_find(names.begin(), names.end()) != names.end()) {
        return absl::InternalError(absl::StrCat("(4) group ", grp.name, " has ",
                                                grp.pods->allocated, " pods counted, ", named,
                                                " named (each name once, at least one)"));
      }
    }
    ++live;
    if (Find(grp.name) != g) {
      return absl::InternalError(absl::StrCat("(1) group ", grp.name, " is not indexed by name"));
    }
    if (grp.pleaves.size() != grp.vleaves.size()) {
      return absl::InternalError(absl::StrCat("(3) group ", grp.name, " leaf arrays differ"));
    }
  }
  for (const auto& [key, g] : by_name_) {
    if (g >= size_ || !(*this)[g].alive || key != (*this)[g].name) {
      return absl::InternalError(
          absl::StrCat("(1) the name index entry ", key, " is not live group ", g, "'s name"));
    }
  }
  if (by_name_.size() != live) {
    return absl::InternalError(
        absl::StrCat("(1) ", by_name_.size(), " names index ", live, " live groups"));
  }
  std::vector<GroupId> free = free_;
  std::sort(free.begin(), free.end());
  if (std::adjacent_find(free.begin(), free.end()) != free.end() || free.size() != size_ - live) {
    return absl::InternalError("(2) the free list does not hold exactly the dead slots");
  }
  for (GroupId g : free) {
    if (g >= size_ || (*this)[g].alive) {
      return absl::InternalError(absl::StrCat("(2) slot ", g, " is free but alive"));
    }
  }
  return absl::OkStatus();
}

}  // namespace hived

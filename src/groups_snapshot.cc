// The group list served to `Groups()` (src/groups_snapshot.h).
#include "src/groups_snapshot.h"

#include <algorithm>
#include <string_view>
#include <utility>

namespace hived {
namespace {

bool NameBefore(const std::shared_ptr<const GroupStatus>& g, std::string_view name) {
  return std::string_view(g->name) < name;
}

}  // namespace

std::shared_ptr<const GroupList> GroupsSnapshot::Latest() const {
  std::lock_guard<std::mutex> hold(mu_);
  return latest_;
}

std::shared_ptr<const GroupList> GroupsSnapshot::Advance(
    const std::shared_ptr<const GroupList>& base, Update update) {
  std::shared_ptr<const GroupList> out;
  if (!update.full && base != nullptr && base->version == update.version &&
      update.statuses.empty()) {
    out = base;
  } else {
    auto list = std::make_shared<GroupList>();
    list->version = update.version;
    if (update.full) {
      list->groups.reserve(update.statuses.size());
      for (GroupStatus& g : update.statuses) {
        list->groups.push_back(std::make_shared<const GroupStatus>(std::move(g)));
      }
    } else {
      // Merge by name: the base's groups, each changed one replaced, added or dropped.
      const std::vector<std::shared_ptr<const GroupStatus>>& old = base->groups;
      list->groups.reserve(old.size() + update.statuses.size());
      auto it = old.begin();
      for (GroupStatus& g : update.statuses) {
        const auto at = std::lower_bound(it, old.end(), std::string_view(g.name), NameBefore);
        list->groups.insert(list->groups.end(), it, at);
        it = at;
        if (it != old.end() && (*it)->name == g.name) ++it;  // replaced or gone
        if (g.state != GroupState::kAbsent) {
          list->groups.push_back(std::make_shared<const GroupStatus>(std::move(g)));
        }
      }
      list->groups.insert(list->groups.end(), it, old.end());
    }
    out = std::move(list);
  }
  std::lock_guard<std::mutex> hold(mu_);
  if (latest_ == nullptr || latest_->version < out->version) latest_ = out;
  return out;
}

std::vector<GroupStatus> GroupsSnapshot::All(const GroupList& list) {
  std::vector<GroupStatus> out;
  out.reserve(list.groups.size());
  for (const std::shared_ptr<const GroupStatus>& g : list.groups) out.push_back(*g);
  return out;
}

std::vector<GroupStatus> GroupsSnapshot::Page(const GroupList& list, std::string_view after,
                                              int32_t limit) {
  std::vector<GroupStatus> out;
  if (limit <= 0) return out;
  auto it =
      std::upper_bound(list.groups.begin(), list.groups.end(), after,
                       [](std::string_view name, const std::shared_ptr<const GroupStatus>& g) {
                         return name < std::string_view(g->name);
                       });
  for (; it != list.groups.end() && out.size() < static_cast<size_t>(limit); ++it) {
    out.push_back(**it);
  }
  return out;
}

}  // namespace hived

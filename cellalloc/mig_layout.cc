// MIG layouts: instances, the placement rule and the counters (cellalloc/mig_layout.h).
#include "cellalloc/mig_layout.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "cellalloc/gpu_shares.h"

namespace hived::cellalloc {
namespace {

uint64_t Span(int32_t start, int32_t width) {
  const uint64_t ones = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  return ones << start;
}

}  // namespace

void MigGeometry::Finish() {
  by_size.clear();
  for (int32_t i = 0; i < static_cast<int32_t>(profiles.size()); ++i) by_size.push_back(i);
  std::stable_sort(by_size.begin(), by_size.end(), [&](int32_t a, int32_t b) {
    const MigProfile& x = profiles[static_cast<size_t>(a)];
    const MigProfile& y = profiles[static_cast<size_t>(b)];
    if (x.memory != y.memory) return x.memory > y.memory;
    return x.compute > y.compute;
  });
}

int32_t MigGeometry::Find(std::string_view name) const {
  for (size_t i = 0; i < profiles.size(); ++i) {
    if (profiles[i].name == name) return static_cast<int32_t>(i);
  }
  return -1;
}

int32_t MigGeometry::Milli(int32_t profile) const {
  return profiles[static_cast<size_t>(profile)].compute * kGpuMilli / compute_slices;
}

uint64_t MigLayout::Covered() const {
  uint64_t mask = 0;
  for (const Instance& i : instances_) {
    mask |= Span(i.start, g_->profiles[static_cast<size_t>(i.profile)].memory);
  }
  return mask;
}

int32_t MigLayout::ConfiguredCompute() const {
  int32_t sum = 0;
  for (const Instance& i : instances_) sum += g_->profiles[static_cast<size_t>(i.profile)].compute;
  return sum;
}

int32_t MigLayout::used_compute() const {
  int32_t sum = 0;
  for (const Instance& i : instances_) {
    if (!i.owner.empty()) sum += g_->profiles[static_cast<size_t>(i.profile)].compute;
  }
  return sum;
}

bool MigLayout::CanCreate(int32_t profile, int32_t start) const {
  if (profile < 0 || profile >= static_cast<int32_t>(g_->profiles.size())) return false;
  const MigProfile& p = g_->profiles[static_cast<size_t>(profile)];
  if (std::find(p.starts.begin(), p.starts.end(), start) == p.starts.end()) return false;
  if (start < 0 || start + p.memory > g_->memory_slices) return false;
  if (ConfiguredCompute() + p.compute > g_->compute_slices) return false;
  return (Covered() & Span(start, p.memory)) == 0;
}

std::vector<int32_t> MigLayout::Placeable() const {
  const uint64_t covered = Covered();
  const int32_t compute_left = g_->compute_slices - ConfiguredCompute();
  std::vector<int32_t> out;
  for (const MigProfile& p : g_->profiles) {
    // Equal-length intervals: taking the earliest allowed start that fits is optimal.
    int32_t count = 0;
    int32_t end = 0;
    for (int32_t s : p.starts) {
      if (s < end || s + p.memory > g_->memory_slices) continue;
      if ((covered & Span(s, p.memory)) != 0) continue;
      ++count;
      end = s + p.memory;
    }
    out.push_back(std::min(count, p.compute > 0 ? compute_left / p.compute : 0));
  }
  return out;
}

std::optional<MigLayout::Choice> MigLayout::BestCreate(int32_t profile) const {
  const std::vector<int32_t> before = Placeable();
  std::optional<Choice> best;
  for (int32_t s : g_->profiles[static_cast<size_t>(profile)].starts) {
    if (!CanCreate(profile, s)) continue;
    MigLayout after = *this;
    after.instances_.push_back({profile, s, ""});
    const std::vector<int32_t> left = after.Placeable();
    Choice c;
    c.step = Step::kCreate;
    c.start = s;
    for (int32_t k : g_->by_size) {
      c.loss.push_back(before[static_cast<size_t>(k)] - left[static_cast<size_t>(k)]);
    }
    if (!best.has_value() || c.loss < best->loss) best = std::move(c);  // ties: lowest start
  }
  return best;
}

std::optional<MigLayout::Choice> MigLayout::Choose(int32_t profile) const {
  if (profile < 0 || profile >= static_cast<int32_t>(g_->profiles.size())) return std::nullopt;
  for (const Instance& i : instances_) {
    if (i.profile == profile && i.owner.empty()) {
      Choice c;
      c.step = Step::kReuse;
      c.start = i.start;
      c.loss.assign(g_->profiles.size(), 0);
      return c;
    }
  }
  std::optional<Choice> c = BestCreate(profile);
  if (c.has_value() || !Idle() || instances_.empty()) return c;
  c = MigLayout(g_).BestCreate(profile);
  if (c.has_value()) c->step = Step::kReconfigure;
  return c;
}

bool MigLayout::Take(int32_t profile, const Choice& c, const std::string& owner) {
  if (owner.empty()) return false;
  if (c.step == Step::kReuse) {
    for (Instance& i : instances_) {
      if (i.profile == profile && i.start == c.start && i.owner.empty()) {
        i.owner = owner;
        ++used_;
        return true;
      }
    }
    return false;
  }
  if (c.step == Step::kReconfigure) {
    if (!Idle()) return false;
    MigLayout empty(g_);
    if (!empty.CanCreate(profile, c.start)) return false;
    instances_.clear();
    ++reconfigurations_;
  } else if (!CanCreate(profile, c.start)) {
    return false;
  }
  Instance i{profile, c.start, owner};
  auto at = std::lower_bound(instances_.begin(), instances_.end(), c.start,
                             [](const Instance& x, int32_t s) { return x.start < s; });
  instances_.insert(at, std::move(i));
  ++used_;
  ++creations_;
  return true;
}

bool MigLayout::Free(int32_t profile, std::string_view owner) {
  for (auto it = instances_.rbegin(); it != instances_.rend(); ++it) {
    if (it->profile == profile && !it->owner.empty() && it->owner == owner) {
      it->owner.clear();
      --used_;
      return true;
    }
  }
  return false;
}

void MigLayout::FreeOwners(const std::vector<std::string>& owners) {
  for (Instance& i : instances_) {
    if (!i.owner.empty() && std::find(owners.begin(), owners.end(), i.owner) != owners.end()) {
      i.owner.clear();
      --used_;
    }
  }
}

std::string MigLayout::Restore(const std::vector<std::pair<int32_t, int32_t>>& instances,
                               int64_t creations, int64_t reconfigurations) {
  MigLayout l(g_);
  for (size_t k = 0; k < instances.size(); ++k) {
    const auto [profile, start] = instances[k];
    if (profile < 0 || profile >= static_cast<int32_t>(g_->profiles.size())) {
      return absl::StrCat("instance ", k, ": unknown profile");
    }
    const MigProfile& p = g_->profiles[static_cast<size_t>(profile)];
    if (!l.instances_.empty() && start <= l.instances_.back().start) {
      return absl::StrCat("instance ", k, " (", p.name, "@", start,
                          "): not after the previous instance's start");
    }
    if (std::find(p.starts.begin(), p.starts.end(), start) == p.starts.end()) {
      return absl::StrCat("instance ", k, " (", p.name, "@", start, "): ", start,
                          " is not an allowed start of profile ", p.name);
    }
    if (!l.CanCreate(profile, start)) {
      return absl::StrCat("instance ", k, " (", p.name, "@", start,
                          "): overlaps another instance or exceeds the GPU's slices");
    }
    l.instances_.push_back({profile, start, ""});
  }
  if (creations < static_cast<int64_t>(instances.size()) || reconfigurations < 0 ||
      reconfigurations > creations) {
    return absl::StrCat(creations, " creations and ", reconfigurations,
                        " reconfigurations cannot have made ", instances.size(),
                        " instances (at least one creation per instance, at most one "
                        "reconfiguration per creation)");
  }
  l.creations_ = creations;
  l.reconfigurations_ = reconfigurations;
  *this = std::move(l);
  return "";
}

std::string MigLayout::TakeAt(int32_t profile, int32_t start, const std::string& owner) {
  if (owner.empty() || profile < 0 || profile >= static_cast<int32_t>(g_->profiles.size())) {
    return "no such profile";
  }
  const MigProfile& p = g_->profiles[static_cast<size_t>(profile)];
  for (Instance& i : instances_) {
    if (i.start != start) continue;
    if (i.profile != profile) {
      return absl::StrCat("the GPU's instance at ", start, " is a ",
                          g_->profiles[static_cast<size_t>(i.profile)].name, ", not a ", p.name);
    }
    if (!i.owner.empty()) {
      return absl::StrCat("the ", p.name, " instance at ", start, " is used by ", i.owner);
    }
    i.owner = owner;
    ++used_;
    return "";
  }
  if (std::find(p.starts.begin(), p.starts.end(), start) == p.starts.end()) {
    return absl::StrCat(start, " is not an allowed start of profile ", p.name);
  }
  if (!CanCreate(profile, start)) {
    return absl::StrCat("a ", p.name, " instance at ", start,
                        " overlaps the GPU's configured instances or exceeds its slices");
  }
  Choice c;
  c.step = Step::kCreate;
  c.start = start;
  return Take(profile, c, owner) ? "" : "not created";
}

absl::Status MigLayout::CheckInvariants() const {
  uint64_t covered = 0;
  int32_t compute = 0;
  int32_t used = 0;
  int32_t last_start = -1;
  for (const Instance& i : instances_) {
    if (i.profile < 0 || i.profile >= static_cast<int32_t>(g_->profiles.size())) {
      return absl::InternalError(absl::StrCat("mig_layout: (1) unknown profile ", i.profile));
    }
    const MigProfile& p = g_->profiles[static_cast<size_t>(i.profile)];
    const std::string what = absl::StrCat("mig_layout: ", p.name, "@", i.start, ": ");
    if (std::find(p.starts.begin(), p.starts.end(), i.start) == p.starts.end()) {
      return absl::InternalError(absl::StrCat(what, "(1) not an allowed start"));
    }
    if (i.start < 0 || i.start + p.memory > g_->memory_slices) {
      return absl::InternalError(
          absl::StrCat(what, "(2) ends past memory slice ", g_->memory_slices - 1));
    }
    const uint64_t span = Span(i.start, p.memory);
    if ((covered & span) != 0 || i.start <= last_start) {
      return absl::InternalError(absl::StrCat(what, "(3) overlaps or is out of order"));
    }
    covered |= span;
    compute += p.compute;
    last_start = i.start;
    used += i.owner.empty() ? 0 : 1;
  }
  if (compute > g_->compute_slices) {
    return absl::InternalError(
        absl::StrCat("mig_layout: (3) ", compute, " compute slices of ", g_->compute_slices));
  }
  if (used != used_) {
    return absl::InternalError(absl::StrCat("mig_layout: (4) ", used, " used, counted ", used_));
  }
  if (reconfigurations_ > creations_) {
    return absl::InternalError(absl::StrCat("mig_layout: (5) ", reconfigurations_,
                                            " reconfigurations, ", creations_, " creations"));
  }
  return absl::OkStatus();
}

bool BetterChoice(const MigLayout::Choice& a, const MigLayout::Choice& b) {
  if (a.step != b.step) return a.step < b.step;
  return a.loss < b.loss;
}

void MigLayouts::AddGeometry(const std::string& type, MigGeometry geometry) {
  geometry.Finish();
  geometries_[type] = std::move(geometry);
}

const MigGeometry* MigLayouts::geometry(std::string_view type) const {
  auto it = geometries_.find(type);
  return it == geometries_.end() ? nullptr : &it->second;
}

MigLayout& MigLayouts::layout(CellId leaf, std::string_view type) {
  auto it = layouts_.find(leaf.value());
  if (it != layouts_.end()) return it->second;
  return layouts_.emplace(leaf.value(), MigLayout(geometry(type))).first->second;
}

const MigLayout* MigLayouts::find(CellId leaf) const {
  auto it = layouts_.find(leaf.value());
  return it == layouts_.end() ? nullptr : &it->second;
}

int32_t MigLayouts::Used(CellId leaf) const {
  if (layouts_.empty()) return 0;
  const MigLayout* l = find(leaf);
  return l == nullptr ? 0 : l->used();
}

absl::Status MigLayouts::CheckInvariants() const {
  for (const auto& [id, l] : layouts_) {
    if (absl::Status s = l.CheckInvariants(); !s.ok()) {
      return absl::InternalError(absl::StrCat("leaf ", id, ": ", s.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace hived::cellalloc

// cellalloc/mig_layout.h: MIG instances on GPUs (docs/gpu-sharing.md, "MIG").
//
// A MIG GPU has `compute_slices` compute slices and `memory_slices` memory slices (A100,
// H100: 7 and 8). An instance of a profile takes `compute` compute slices and the `memory`
// consecutive memory slices [start, start + memory), where start is one of the profile's
// allowed positions. A GPU's *layout* is its configured instances, each free or used by one
// pod (its owner: a group name). The layout model:
//  - a pod takes a free configured instance of its profile (kReuse: nothing changes);
//  - else a new instance is created in slices no configured instance covers (kCreate: the
//    running instances are untouched, as `nvidia-smi mig -cgi` leaves them);
//  - else, only when the GPU is idle (no instance used), its layout is destroyed and the
//    instance created on the empty GPU (kReconfigure: on a real GPU a drain; counted).
// Which start (Choose): the one that costs the least *placeability*, compared profile by
// profile from the largest down (memory slices, then compute, then config order):
// Placeable()[k] = how many more instances of profile k fit the unconfigured slices (no
// overlap, allowed starts, compute left); the loss of a choice is Placeable() before minus
// after; the lexicographically smallest loss wins, ties to the lowest start. E.g. on an
// A100 with 3g@0 used, a 1g.5gb goes to 6 (keeps 2g@4), not 4 or 5.
// MigLayouts keeps a layout per MIG GPU (created on first use, kept when the GPU closes:
// the hardware keeps its layout) and the geometries per leaf cell type; it knows nothing of
// VCs or holders (sharing/sharing_mig.h).
//
// Invariants (MigLayout::CheckInvariants, per layout):
//  (1) every instance's profile exists and starts at one of its allowed positions;
//  (2) every instance's memory slices lie within the GPU: start + memory <= memory_slices;
//  (3) instances never overlap in memory slices, and their compute slices sum to at most
//      compute_slices; instances are kept by ascending start;
//  (4) a used instance has an owner, a free one none; `used` counts the used instances;
//  (5) reconfigurations <= creations (every reconfiguration creates the instance it was for).
//
// Thread safety: not thread-safe; the scheduler serialises.
#ifndef HIVED_CELLALLOC_MIG_LAYOUT_H_
#define HIVED_CELLALLOC_MIG_LAYOUT_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "cellalloc/ids.h"

namespace hived::cellalloc {

struct MigProfile {
  std::string name;
  int32_t compute = 0;          // compute slices
  int32_t memory = 0;           // memory slices (consecutive)
  std::vector<int32_t> starts;  // allowed first memory slices, ascending
};

struct MigGeometry {
  int32_t compute_slices = 7;
  int32_t memory_slices = 8;
  std::vector<MigProfile> profiles;
  // Profile indices from the largest (memory, then compute, then config order): the order
  // in which losses are compared. Set by Finish().
  std::vector<int32_t> by_size;

  void Finish();
  int32_t Find(std::string_view name) const;  // -1 when absent
  // A profile's compute as thousandths of the GPU (floor: the instances' sum stays <= 1000).
  int32_t Milli(int32_t profile) const;
};

class MigLayout {
 public:
  struct Instance {
    int32_t profile = 0;
    int32_t start = 0;
    std::string owner;  // empty: free
  };
  enum class Step { kReuse = 0, kCreate = 1, kReconfigure = 2 };
  struct Choice {
    Step step = Step::kReuse;
    int32_t start = 0;
    std::vector<int32_t> loss;  // per profile in by_size order
  };

  explicit MigLayout(const MigGeometry* geometry) : g_(geometry) {}

  // Whether an instance of `profile` at `start` fits without touching a configured one.
  bool CanCreate(int32_t profile, int32_t start) const;
  // Per profile (geometry order): how many more instances fit the unconfigured slices.
  std::vector<int32_t> Placeable() const;
  // The best way to give one pod an instance of `profile`; nullopt when none (the GPU is
  // busy and has neither a free instance of it nor room).
  std::optional<Choice> Choose(int32_t profile) const;
  // Applies Choose's answer for `owner` (non-empty); false (nothing changed) when it does
  // not apply. Counts creations and reconfigurations.
  bool Take(int32_t profile, const Choice& c, const std::string& owner);
  // Frees one used instance of `profile` owned by `owner` (the highest start); false when
  // there is none. The instance stays configured.
  bool Free(int32_t profile, std::string_view owner);
  // Frees every instance owned by one of `owners` (a copy's what-if: evicted guests).
  void FreeOwners(const std::vector<std::string>& owners);
  // Persistence (docs/state-format.md, `migLayouts`). Restore: this layout becomes the saved
  // one, every instance free (the pods' records give the owners); an empty message when it
  // holds the invariants, else why not (the first bad instance's index and the reason; the
  // layout is unchanged). `instances`: (profile, start) pairs by ascending start.
  std::string Restore(const std::vector<std::pair<int32_t, int32_t>>& instances, int64_t creations,
                      int64_t reconfigurations);
  // Gives `owner` the instance of `profile` at `start`: the free configured one there, else
  // one created there when CanCreate (counted). Empty when done, else why not (nothing
  // changed). A restored pod's instance: where its record says, not where Choose would.
  std::string TakeAt(int32_t profile, int32_t start, const std::string& owner);

  const MigGeometry& geometry() const { return *g_; }
  const std::vector<Instance>& instances() const { return instances_; }
  int32_t used() const { return used_; }
  bool Idle() const { return used_ == 0; }
  int32_t used_compute() const;
  int64_t creations() const { return creations_; }
  int64_t reconfigurations() const { return reconfigurations_; }

  absl::Status CheckInvariants() const;

 private:
  uint64_t Covered() const;  // bit per memory slice covered by a configured instance
  int32_t ConfiguredCompute() const;
  // The best kCreate start on this layout (nullopt: none) and its loss.
  std::optional<Choice> BestCreate(int32_t profile) const;

  const MigGeometry* g_;
  std::vector<Instance> instances_;
  int32_t used_ = 0;
  int64_t creations_ = 0;
  int64_t reconfigurations_ = 0;
};

// Lexicographic order of choices across GPUs: step, then loss.
bool BetterChoice(const MigLayout::Choice& a, const MigLayout::Choice& b);

class MigLayouts {
 public:
  // Declares leaf cell type `type` a MIG type of `geometry` (Finish() is called).
  void AddGeometry(const std::string& type, MigGeometry geometry);
  // The geometry of `type`, nullptr when it is not a MIG type.
  const MigGeometry* geometry(std::string_view type) const;
  bool any() const { return !geometries_.empty(); }
  // The layout of `leaf` (a GPU of MIG type `type`): created empty on first use.
  MigLayout& layout(CellId leaf, std::string_view type);
  // nullptr while `leaf` has none.
  const MigLayout* find(CellId leaf) const;
  // Drops every layout (Restore replaces them with the saved ones).
  void ClearLayouts() { layouts_.clear(); }
  int32_t Used(CellId leaf) const;  // used instances on `leaf`; 0 without a layout
  const std::map<uint32_t, MigLayout>& layouts() const { return layouts_; }

  absl::Status CheckInvariants() const;

 private:
  std::map<std::string, MigGeometry, std::less<>> geometries_;  // nodes never move
  std::map<uint32_t, MigLayout> layouts_;
};

}  // namespace hived::cellalloc

#endif  // HIVED_CELLALLOC_MIG_LAYOUT_H_

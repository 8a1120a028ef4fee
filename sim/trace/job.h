// sim/trace/job.h: jobs as the simulator sees them, from a trace row to a resolved gang.
//
// A `TraceJob` is one row of a trace, as read. The engine resolves it against the cluster
// config into a `SimJob`: a VC index, the gang's members (pods x GPUs per pod) and an arrival
// key. Times are integer seconds since the earliest submission in the trace.
//
// Names that rows repeat (VC, leaf cell type, pinned cell) are interned: a row holds a `Name`
// (one pointer) into its trace's `NameTable`, so a million rows naming 100 VCs hold 100
// strings, not a million; the id is a `JobId` (a row is 80 bytes, not 168).
// Invariants: (1) a table stores each distinct text once and never changes or frees a stored
// text while it lives, so a `Name` or a view of it stays valid as long as the table;
// (2) every `Name` of a trace's rows is the empty name or one of `Trace::names`' texts; the
// copies of a `Trace` share its table (append-only), so a copy's names stay valid too.
//
// Thread safety: plain values; a `NameTable` (so `Trace::Intern`) is not thread-safe for
// interning, callers serialize; reading names is safe from any thread.
#ifndef HIVED_SIM_TRACE_JOB_H_
#define HIVED_SIM_TRACE_JOB_H_

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "hived/schedule_result.h"
#include "hived/types.h"

namespace hived::sim {

// Simulated time: integer seconds since the earliest submission of the trace.
using Time = int64_t;
// A job's index in the (sorted) trace; also its group name in the scheduler.
using JobIndex = int32_t;

// An interned name: a pointer to a text stored in a `NameTable` (or to the shared empty
// text). Compares, hashes and converts as the text it names.
class Name {
 public:
  Name() : text_(&EmptyText()) {}
  const std::string& str() const { return *text_; }
  std::string_view view() const { return *text_; }
  operator std::string_view() const { return *text_; }    // NOLINT: reads as its text
  operator const std::string&() const { return *text_; }  // NOLINT: likewise
  bool empty() const { return text_->empty(); }
  const char* data() const { return text_->data(); }
  size_t size() const { return text_->size(); }
  friend bool operator==(Name a, Name b) { return a.text_ == b.text_ || *a.text_ == *b.text_; }
  friend bool operator==(Name a, std::string_view b) { return *a.text_ == b; }
  friend bool operator==(std::string_view a, Name b) { return b == a; }
  friend bool operator!=(Name a, Name b) { return !(a == b); }
  friend bool operator!=(Name a, std::string_view b) { return !(a == b); }
  friend bool operator!=(std::string_view a, Name b) { return !(b == a); }
  friend bool operator<(Name a, Name b) { return *a.text_ < *b.text_; }
  template <typename H>
  friend H AbslHashValue(H h, Name n) {
    return H::combine(std::move(h), std::string_view(*n.text_));
  }

 private:
  friend class NameTable;
  explicit Name(const std::string* text) : text_(text) {}
  static const std::string& EmptyText() {
    static const std::string* const kEmpty = new std::string();
    return *kEmpty;
  }
  const std::string* text_;
};

// The distinct names of a trace, each stored once (invariant (1) above).
class NameTable {
 public:
  NameTable() = default;
  NameTable(const NameTable&) = delete;
  NameTable& operator=(const NameTable&) = delete;
  // The name of `text`, stored on first use; the empty text is the default `Name`.
  Name Intern(std::string_view text);
  size_t size() const { return texts_.size(); }

 private:
  std::deque<std::string> texts_;  // a deque: growing never moves a stored text
  absl::flat_hash_map<std::string_view, const std::string*> index_;  // views into texts_
};

// A job's id: up to 15 bytes inline (the ids of every shipped and generated trace), longer
// ones in a heap block of their own: 16 bytes a row instead of a std::string's 32.
// Invariant: `bytes_[kTag]` is the inline length (0..15), the text in `bytes_[0..len)`; or
// kOnHeap, with the block's address in `bytes_[0..8)` and the length in `bytes_[8..12)`.
class JobId {
 public:
  JobId() = default;
  JobId(std::string_view text) { Set(text); }  // NOLINT: an id is made from its text
  JobId(const JobId& o) { Set(o.view()); }
  JobId(JobId&& o) noexcept : bytes_(o.bytes_) { o.bytes_ = {}; }
  JobId& operator=(const JobId& o) {
    if (this != &o) Reset(o.view());
    return *this;
  }
  JobId& operator=(JobId&& o) noexcept {
    if (this != &o) {
      Free();
      bytes_ = o.bytes_;
      o.bytes_ = {};
    }
    return *this;
  }
  JobId& operator=(std::string_view text) {
    Reset(text);
    return *this;
  }
  ~JobId() { Free(); }
  void assign(const char* first, const char* last) {
    Reset(std::string_view(first, static_cast<size_t>(last - first)));
  }

  std::string_view view() const {
    if (!OnHeap()) return std::string_view(bytes_.data(), static_cast<size_t>(bytes_[kTag]));
    return std::string_view(HeapText(), HeapSize());
  }
  operator std::string_view() const { return view(); }  // NOLINT: reads as its text
  std::string str() const { return std::string(view()); }
  bool empty() const { return bytes_[kTag] == 0; }
  size_t size() const { return view().size(); }
  friend bool operator==(const JobId& a, const JobId& b) { return a.view() == b.view(); }
  friend bool operator==(const JobId& a, std::string_view b) { return a.view() == b; }
  friend bool operator!=(const JobId& a, const JobId& b) { return !(a == b); }
  friend bool operator!=(const JobId& a, std::string_view b) { return !(a == b); }

 private:
  static constexpr size_t kTag = 15;
  static constexpr char kOnHeap = static_cast<char>(0x7f);
  bool OnHeap() const { return bytes_[kTag] == kOnHeap; }
  const char* HeapText() const {
    const char* p = nullptr;
    std::memcpy(&p, bytes_.data(), sizeof(p));
    return p;
  }
  size_t HeapSize() const {
    uint32_t n = 0;
    std::memcpy(&n, bytes_.data() + 8, sizeof(n));
    return n;
  }
  // REQUIRES: the id is empty (fresh or freed).
  void Set(std::string_view text) {
    if (text.size() <= kTag) {
      std::memcpy(bytes_.data(), text.data(), text.size());
      bytes_[kTag] = static_cast<char>(text.size());
      return;
    }
    char* block = new char[text.size()];
    std::memcpy(block, text.data(), text.size());
    const auto n = static_cast<uint32_t>(text.size());
    std::memcpy(bytes_.data(), &block, sizeof(block));
    std::memcpy(bytes_.data() + 8, &n, sizeof(n));
    bytes_[kTag] = kOnHeap;
  }
  // Set, for a text that may view this id's own storage.
  void Reset(std::string_view text) {
    JobId fresh(text);
    *this = std::move(fresh);
  }
  void Free() {
    if (OnHeap()) delete[] HeapText();
    bytes_ = {};
  }
  std::array<char, 16> bytes_{};
};

// One trace row. `pods == 0` means "split `total_gpus` by the node size" (the Philly
// format gives only a gang size); otherwise the gang is `pods` x `gpus_per_pod`.
struct TraceJob {
  JobId id;              // job id from the trace, or "<file line>" when the format has none
  Time submit_time = 0;  // seconds since the earliest submission
  Name vc;
  Priority priority = 0;  // -1 opportunistic, 0..1000 guaranteed
  int32_t pods = 0;
  int32_t gpus_per_pod = 0;
  int32_t total_gpus = 0;
  Name gpu_type;      // leaf cell type; empty = any type the VC has
  Time duration = 0;  // run time in seconds, >= 1
  // HiveD's `pinnedCellId`: the job runs only in this pinned cell of its VC; empty = in the
  // VC's virtual cells.
  Name pinned_cell;
  // Where the row was read (0 for jobs not read from a file), for errors found later
  // (e.g. a pinned cell the config lacks): its line and the pinned_cell column.
  int32_t line = 0;
  int32_t pinned_column = 0;
};

// A trace after reading: jobs sorted stably by submit time, plus what the reader skipped
// and warned about.
struct Trace {
  std::vector<TraceJob> jobs;
  int64_t skipped_rows = 0;           // bad rows skipped with --skip-bad-rows
  std::vector<std::string> warnings;  // e.g. ignored extra columns, skipped rows (first few)
  std::string file;                   // the file read, for located errors; may be empty
  // The rows' names (invariant (2)); shared by copies of the trace.
  std::shared_ptr<NameTable> names = std::make_shared<NameTable>();
  Name Intern(std::string_view text) { return names->Intern(text); }
};

// Splits a gang of `total_gpus` into pods for nodes of `node_gpus` GPUs: full-node pods plus
// one remainder pod (12 GPUs on 8-GPU nodes -> 8 + 4; 24 -> 3 x 8; 4 -> 4). Members are
// ordered by GPUs per pod ascending, as `Placement` orders pods.
// REQUIRES: total_gpus > 0, node_gpus > 0.
// One member of a gang: `pod_number` pods of `leaf_cell_number` whole GPUs each, the two
// fields of `GroupMember` the simulator sets (the request is built from them): 8 bytes a
// member instead of 40.
struct GangMember {
  int32_t pod_number = 0;
  int32_t leaf_cell_number = 0;
};
// A gang's members, one or two: a row of `pods` x `gpus_per_pod` is one, a gang split by the
// node size is full-node pods plus a remainder (`SplitIntoPods`). Inline in 16 bytes, with
// no size field and no allocation per job.
// Invariant: the members are `slots_[0..size())`, each with pod_number >= 1; the slots
// after them have pod_number 0.
class GangMembers {
 public:
  static constexpr size_t kCapacity = 2;
  GangMembers() = default;
  // REQUIRES: at most kCapacity members, each with pod_number >= 1 (else: abort).
  GangMembers(std::initializer_list<GangMember> members) {
    for (const GangMember& m : members) push_back(m);
  }
  void push_back(GangMember m) {
    const size_t n = size();
    if (n == kCapacity || m.pod_number < 1) std::abort();  // a bug: see the REQUIRES
    slots_[n] = m;
  }
  void assign(const GangMember* first, const GangMember* last) {
    slots_ = {};
    for (; first != last; ++first) push_back(*first);
  }
  size_t size() const {
    if (slots_[1].pod_number != 0) return 2;
    return slots_[0].pod_number != 0 ? 1 : 0;
  }
  bool empty() const { return slots_[0].pod_number == 0; }
  const GangMember& operator[](size_t i) const { return slots_[i]; }
  const GangMember* begin() const { return slots_.data(); }
  const GangMember* end() const { return slots_.data() + size(); }

 private:
  std::array<GangMember, kCapacity> slots_{};
};
GangMembers SplitIntoPods(int32_t total_gpus, int32_t node_gpus);

// The distinct pinned cells the trace's jobs name, sorted.
std::vector<std::string> NamedPinnedCells(const Trace& trace);

}  // namespace hived::sim

#endif  // HIVED_SIM_TRACE_JOB_H_

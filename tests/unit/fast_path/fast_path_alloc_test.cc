// The fast path allocates no memory in a steady state (hived/fast_path.h, contract 6):
// `Release(handle)` never, and `ScheduleAndAllocate` of a kPlaced group once the scheduler
// has seen groups of that shape. This binary replaces the global operator new to count
// allocations while `counting` is set (this test binary only).
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "hived/config.h"
#include "hived/fast_path.h"
#include "hived/scheduler.h"
#include "support/catch.h"
#include "support/testdata.h"

namespace {
std::atomic<bool> counting{false};
std::atomic<int64_t> allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
// The nothrow forms too: one left to the runtime (or a sanitizer's) allocator would be freed
// by the `free` below, an alloc-dealloc mismatch under ASan (Catch2 uses them).
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1);
  return std::malloc(size == 0 ? 1 : size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return operator new(size, std::nothrow);
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace hived {
namespace {

// Allocations made by `f`.
template <typename F>
int64_t CountAllocations(F f) {
  allocations.store(0);
  counting.store(true);
  f();
  counting.store(false);
  return allocations.load();
}

// `capacity`: SchedulerOptions::change_log_capacity (a small ring wraps on every cycle).
std::unique_ptr<Scheduler> Make(int64_t capacity = int64_t{1} << 16) {
  absl::StatusOr<ClusterSpec> spec =
      LoadClusterSpecFile(testing::TestdataPath("sched-two-racks-4vc.yaml"));
  REQUIRE(spec.ok());
  SchedulerOptions options;
  options.change_log_capacity = capacity;
  absl::StatusOr<std::unique_ptr<Scheduler>> s = Scheduler::Create(*spec, options);
  REQUIRE(s.ok());
  return *std::move(s);
}

GroupRequest Request(const std::string& name, int32_t pods, int32_t gpus) {
  GroupRequest req;
  req.name = name;
  req.vc = "v1";
  req.members = {{pods, gpus}};
  return req;
}

TEST_CASE("FastPath: Release by handle allocates nothing", "[scheduler][unit]") {
  std::unique_ptr<Scheduler> s = Make();
  FastResult r;
  std::vector<GroupHandle> handles;
  // Round 0 warms the group table (its free list grows to 16 slots); round 1 is counted.
  for (int round = 0; round < 2; ++round) {
    handles.clear();
    for (int i = 0; i < 16; ++i) {
      REQUIRE(s->ScheduleAndAllocate(Request("job-" + std::to_string(i), 1, 1), &r).ok());
      REQUIRE(r.outcome == Outcome::kPlaced);
      handles.push_back(r.handle);
    }
    for (GroupHandle h : handles) {
      absl::Status st;
      const int64_t n = CountAllocations([&] { st = s->Release(h); });
      if (round == 1) CHECK(n == 0);
      CHECK(st.ok());
    }
  }
  CHECK(s->CheckInvariants().ok());
}

TEST_CASE("FastPath: a steady-state ScheduleAndAllocate and Release cycle allocates nothing",
          "[scheduler][unit]") {
  // The default change log, a small ring wrapping many times, none (capacity 0).
  const int64_t capacity = GENERATE(int64_t{1} << 16, int64_t{5}, int64_t{0});
  CAPTURE(capacity);
  std::unique_ptr<Scheduler> s = Make(capacity);
  FastResult r;
  const GroupRequest one = Request("cycle-a", 1, 1);
  const GroupRequest two = Request("cycle-b", 2, 4);
  auto cycle = [&] {
    for (const GroupRequest* req : {&one, &two}) {
      if (!s->ScheduleAndAllocate(*req, &r).ok() || r.outcome != Outcome::kPlaced) return false;
      if (!s->Release(r.handle).ok()) return false;
    }
    return true;
  };
  for (int i = 0; i < 8; ++i) REQUIRE(cycle());  // warm: slots, scratch, the result's vectors
  bool ok = false;
  CHECK(CountAllocations([&] {
          for (int i = 0; i < 100; ++i) ok = cycle();
        }) == 0);
  CHECK(ok);
}

}  // namespace
}  // namespace hived

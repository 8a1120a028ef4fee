// hived_schedule_and_allocate and hived_release_handle allocate no memory in a steady state
// (include/hived/hived_c.h "The fast path"; hived/fast_path.h contract 6), the binding
// included. This binary replaces the global operator new to count allocations while
// `counting` is set; it calls the library through hived_c.h only. Run from the source root.
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <new>

#include "hived/hived_c.h"

namespace {
std::atomic<bool> counting{false};
std::atomic<int64_t> allocations{0};
int failures = 0;

void Check(bool ok, const char* what, int line) {
  if (ok) return;
  std::fprintf(stderr, "line %d: CHECK failed: %s\n", line, what);
  ++failures;
}
#define CHECK(cond) Check((cond), #cond, __LINE__)

hived_request* MakeRequest(const char* name, int32_t pods, int32_t gpus) {
  hived_member member{};
  member.pod_number = pods;
  member.leaf_cell_number = gpus;
  hived_request_desc desc{};
  desc.name = name;
  desc.vc = "prod";
  desc.members = &member;
  desc.member_count = 1;
  hived_request* request = nullptr;
  if (hived_request_create(&desc, &request, nullptr) != HIVED_OK) return nullptr;
  return request;
}
}  // namespace

void* operator new(std::size_t size) {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1);
  return std::malloc(size == 0 ? 1 : size);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

int main() {
  hived_scheduler* s = nullptr;
  if (hived_scheduler_create_from_file("config/examples/two-racks.yaml", &s, nullptr) != HIVED_OK) {
    std::fprintf(stderr, "cannot create the scheduler\n");
    return 1;
  }
  hived_request* one = MakeRequest("cycle-a", 1, 1);
  hived_request* two = MakeRequest("cycle-b", 2, 4);
  hived_fast_result* r = hived_fast_result_create();
  CHECK(one != nullptr && two != nullptr && r != nullptr);
  auto cycle = [&] {
    for (const hived_request* req : {one, two}) {
      if (hived_schedule_and_allocate(s, req, r, nullptr) != HIVED_OK ||
          hived_fast_result_outcome(r) != HIVED_OUTCOME_PLACED) {
        return false;
      }
      size_t count = 0;
      if (hived_fast_result_pod_leaves(r, 0, &count) == nullptr || count == 0) return false;
      if (hived_node_name(s, hived_fast_result_pod_node(r, 0))[0] == '\0') return false;
      if (hived_release_handle(s, hived_fast_result_handle(r), nullptr) != HIVED_OK) return false;
    }
    return true;
  };
  for (int i = 0; i < 8; ++i) CHECK(cycle());  // warm: slots, scratch, the result's vectors
  bool ok = false;
  allocations.store(0);
  counting.store(true);
  for (int i = 0; i < 100; ++i) ok = cycle();
  counting.store(false);
  CHECK(ok);
  CHECK(allocations.load() == 0);
  if (allocations.load() != 0) {
    std::fprintf(stderr, "%lld allocations in 100 cycles\n",
                 static_cast<long long>(allocations.load()));
  }
  hived_fast_result_destroy(r);
  hived_request_destroy(two);
  hived_request_destroy(one);
  hived_scheduler_destroy(s);
  if (failures > 0) return 1;
  std::printf("capi_fast_alloc_test: all checks passed\n");
  return 0;
}

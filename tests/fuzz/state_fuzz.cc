// libFuzzer target for `Scheduler::Restore`, the saved-state reader (docs/state-format.md):
// any bytes give kInvalidArgument with a bounded message, or a scheduler whose invariants
// hold and whose saved state is a fixed point after one restart (tests/fuzz/state_fuzz_check.h).
// Groups may name nodes the fuzz cluster lacks (a renamed node: restored partial).
//
// Build and run: see tests/fuzz/README.md (seeds: tests/fuzz/corpus/state).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "tests/fuzz/state_fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using hived::fuzz::Require;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  hived::RestoreReport report;
  absl::StatusOr<std::unique_ptr<hived::Scheduler>> restored =
      hived::Scheduler::Restore(hived::fuzz::TwoRacks(), text, &report,
                                hived::RestoreOptions{hived::SpecMismatch::kRestoreAnyway});
  if (!restored.ok()) {
    hived::fuzz::RequireReaderError(restored.status());
    return 0;
  }
  for (const hived::RestoreReport::Group& g : report.groups) {
    Require(g.outcome == hived::RestoreOutcome::kKept || !g.reason.empty(),
            "a group not kept without a reason", g.name);
  }
  hived::fuzz::RequireFixedPoint(hived::fuzz::SaveOrDie(**restored));
  return 0;
}

// sim/policies/fill_library.h: `--policy hived` of the fill experiment and the openb replay: every
// pod goes through the library (hived::Scheduler) on the config `openb-config` generates (one VC
// `openb` reserving every node, nodes declaring CPU and host memory), so the figures are the
// library's. A pod becomes one group of VC `openb` at priority 0: a sharing pod a fractional
// member (its share, CPU, memory; `gpu_spec` as leaf_cell_types), a whole-GPU pod a whole
// member with CPU and memory (each allowed model tried in the node list's order), a CPU-only
// pod a CPU-only member (leafCellNumber 0). Schedule (Filtering) then Allocate; a pod the
// library does not place is declined (FillChoice::node -1; the run counts it by reason).
// The library decides the node itself, so it ignores `feasible`: RunFill only checks that
// some node fits (asking then) and passes just the first one it finds.
// Departures (the replay) Release the pod's group. The library's placement is mirrored on
// the fill model (node, GPUs), which checks it: a placement the model finds infeasible is an
// error (`Check`).
//
// Thread safety: not thread-safe; one policy per run.
#ifndef HIVED_SIM_POLICIES_FILL_LIBRARY_H_
#define HIVED_SIM_POLICIES_FILL_LIBRARY_H_

#include <memory>

#include "absl/status/statusor.h"
#include "sim/policies/fill_policy.h"
#include "sim/trace/openb_reader.h"

namespace hived::sim {

// Errors: those of BuildOpenbConfig and Scheduler::Create.
absl::StatusOr<std::unique_ptr<FillPolicy>> MakeLibraryFillPolicy(const OpenbNodeList& nodes);

}  // namespace hived::sim

#endif  // HIVED_SIM_POLICIES_FILL_LIBRARY_H_

// sim/job.h: jobs as the simulator sees them, from a trace row to a resolved gang.
//
// A `TraceJob` is one row of a trace, as read. The engine resolves it against the cluster
// config into a `SimJob`: a VC index, the gang's members (pods x GPUs per pod) and an arrival
// key. Times are integer seconds since the earliest submission in the trace.
//
// Thread safety: plain values.
#ifndef HIVED_SIM_JOB_H_
#define HIVED_SIM_JOB_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "hived/schedule_result.h"
#include "hived/types.h"

namespace hived::sim {

// Simulated time: integer seconds since the earliest submission of the trace.
using Time = int64_t;
// A job's index in the (sorted) trace; also its group name in the scheduler.
using JobIndex = int32_t;

// One trace row. `pods == 0` means "split `total_gpus` by the node size" (the Philly
// format gives only a gang size); otherwise the gang is `pods` x `gpus_per_pod`.
struct TraceJob {
  std::string id;        // job id from the trace, or "<file line>" when the format has none
  Time submit_time = 0;  // seconds since the earliest submission
  std::string vc;
  Priority priority = 0;  // -1 opportunistic, 0..1000 guaranteed
  int32_t pods = 0;
  int32_t gpus_per_pod = 0;
  int32_t total_gpus = 0;
  std::string gpu_type;  // leaf cell type; empty = any type the VC has
  Time duration = 0;     // run time in seconds, >= 1
  // HiveD's `pinnedCellId`: the job runs only in this pinned cell of its VC; empty = in the
  // VC's virtual cells.
  std::string pinned_cell;
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
// Inline up to two members (a gang of full nodes plus a remainder): no allocation per job.
using GangMembers = absl::InlinedVector<GangMember, 2>;
GangMembers SplitIntoPods(int32_t total_gpus, int32_t node_gpus);

// The distinct pinned cells the trace's jobs name, sorted.
std::vector<std::string> NamedPinnedCells(const Trace& trace);

}  // namespace hived::sim

#endif  // HIVED_SIM_JOB_H_

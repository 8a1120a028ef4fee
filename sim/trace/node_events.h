// sim/trace/node_events.h: reading node-event files (`hived-sim run --node-events`): a CSV with
// the header `time,node,state`, one node going `down` or coming `up` per row, times in the
// trace's seconds.
//
// Checks (limits of sim/common/csv.h): times in 0..`kMaxTimeSeconds`; node names valid UTF-8
// without control characters or surrounding blanks; the file is read bounded by a byte limit. Every
// bad row is an error "file:line:column: message" (the first 20, then a count);
// --skip-bad-rows does not apply to node events.
//
// Example:
//   absl::StatusOr<std::vector<NodeEvent>> events =
//       ReadNodeEventsFile("events.csv", kDefaultMaxNodeEventsBytes);
//
// Thread safety: stateless functions.
#ifndef HIVED_SIM_TRACE_NODE_EVENTS_H_
#define HIVED_SIM_TRACE_NODE_EVENTS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/trace/job.h"

namespace hived::sim {

// One line of a node-events file: at `time`, `node` goes down or comes up.
struct NodeEvent {
  Time time = 0;
  std::string node;
  bool up = false;
  int32_t line = 0;   // in the file, for errors
  std::string where;  // "file:line:column" of the node name, for errors
};

// Parses a node-events CSV; events sorted stably by time.
// Errors: kInvalidArgument, located.
absl::StatusOr<std::vector<NodeEvent>> ParseNodeEvents(std::string_view text,
                                                       std::string_view file_name);

// Reads (at most `max_bytes`, see `ReadInputFile`) and parses a node-events file.
// Errors: kNotFound when it cannot be opened; kInvalidArgument as above.
absl::StatusOr<std::vector<NodeEvent>> ReadNodeEventsFile(const std::string& path,
                                                          int64_t max_bytes);

}  // namespace hived::sim

#endif  // HIVED_SIM_TRACE_NODE_EVENTS_H_

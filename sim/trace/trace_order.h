// sim/trace/trace_order.h: which way `run` reads a job trace, and the check that a trace too
// large to hold is sorted by submit time (issue 28 item 3).
//
// A trace is read whole (today's path: any row order, sorted stably after parsing) when its
// estimated replay memory fits the memory budget (`--max-memory`, default
// `DefaultMaxMemoryBytes()`); otherwise it must be streamed, which needs its rows in submit
// time order. `CheckTraceSorted` scans the file in chunks (memory independent of its size)
// and names the first row out of order, with the command that sorts it:
//   t.csv:7:5: submit time 10 is before 20 (line 6): the trace is not sorted by submit_time
//   ...; sort it with: (head -1 t.csv; tail -n +2 t.csv | sort -t, -k2,2n -s) > t.sorted.csv
// (`sort` works on files larger than memory: it merges temporary files; `-s` keeps rows of
// equal times in file order, the order the in-memory path replays them in.)
//
// Thread safety: stateless functions.
#ifndef HIVED_SIM_TRACE_TRACE_ORDER_H_
#define HIVED_SIM_TRACE_TRACE_ORDER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sim/trace/trace_reader.h"

namespace hived::sim {

// Replay memory per byte of trace read whole: the file's text, the parsed jobs, the
// engine's per-job state and outputs, and the private baseline replayed beside it (README
// "Limits": a 16 MB trace of minimal rows peaked at 518 MB with the baseline, Debug build;
// the generated 1M-job trace, 31 MB, near 300 MB under hived alone, release build).
inline constexpr int64_t kReplayBytesPerTraceByte = 32;

// A quarter of the machine's physical memory, at most 1 GiB (and 1 GiB when it cannot be
// read): a trace up to 32 MB (the generated 1M-job trace, 31 MB) is read whole by default.
int64_t DefaultMaxMemoryBytes();

// "512M", "2G", "1.5GiB", "300MB", "1048576" (bytes) -> bytes; K/M/G/T are powers of 1024.
// kInvalidArgument for anything else, zero or negative.
absl::StatusOr<int64_t> ParseByteSize(std::string_view text);

// How a trace of `file_bytes` is read under `budget_bytes` of replay memory.
enum class TraceReadPath { kInMemory, kStream };
TraceReadPath ChooseTraceReadPath(int64_t file_bytes, int64_t budget_bytes);

// The largest trace file read whole under `budget_bytes`.
int64_t MaxInMemoryTraceBytes(int64_t budget_bytes);

// The shell command that sorts `path` (a header line, then rows) stably by its
// `column`-th (1-based) field, numerically, into `<path without .csv>.sorted.csv` (paths
// with characters a shell would read are single-quoted).
std::string SortTraceCommand(std::string_view path, int column);

// Scans a trace of the project's format in chunks and checks its rows are in
// non-decreasing submit_time order. OK when they are (and when the file is unusable in a way
// the reader reports with its own located error: no header, no submit_time column, bad
// times; those rows are not compared). kInvalidArgument
// "path:L:C: submit time X is before Y (line L'): ...; sort it with: <SortTraceCommand>"
// for the first row out of order; kNotFound when the file cannot be opened.
absl::Status CheckTraceSorted(const std::string& path);

}  // namespace hived::sim

#endif  // HIVED_SIM_TRACE_TRACE_ORDER_H_

// Benchmarks of the trace readers (issue 11 item 6): what reading a trace costs before a
// replay starts. Philly's real trace (82,247 rows, from ../shared beside the checkout) and a
// hived-format trace generated in memory; each iteration parses the text already in memory,
// so the file system is not measured.
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "sim/trace/trace_reader.h"

namespace {

using hived::sim::MakeTraceSource;
using hived::sim::ReadFileToString;
using hived::sim::Trace;
using hived::sim::TraceFormat;

// Parses `text` in `format` once per iteration; rows per second as the counter.
void ParseText(benchmark::State& state, const std::string& text, TraceFormat format) {
  const auto source = MakeTraceSource(format, {});
  int64_t rows = 0;
  for (auto _ : state) {
    absl::StatusOr<Trace> trace = source->Parse(text, "bench.csv");
    if (!trace.ok()) {
      state.SkipWithError(std::string(trace.status().message()).c_str());
      return;
    }
    rows = static_cast<int64_t>(trace->jobs.size());
    benchmark::DoNotOptimize(trace->jobs.data());
  }
  state.counters["rows"] = static_cast<double>(rows);
  state.counters["rows/s"] =
      benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_ParsePhilly(benchmark::State& state) {
  static const std::string path = absl::StrCat(HIVED_SHARED_DIR, "/traces/philly/philly.csv");
  std::string text;
  if (absl::Status s = ReadFileToString(path, &text); !s.ok()) {
    state.SkipWithError(absl::StrCat("no Philly trace: ", s.message()).c_str());
    return;
  }
  ParseText(state, text, TraceFormat::kPhilly);
}
BENCHMARK(BM_ParsePhilly)->Unit(benchmark::kMillisecond);

// 100,000 rows in the hived format, submit times out of order in blocks of 8 (as a merged
// trace is), three VCs, 1..8 GPUs.
void BM_ParseHived(benchmark::State& state) {
  std::string text = "job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration\n";
  for (int i = 0; i < 100000; ++i) {
    absl::StrAppend(&text, "j", i, ",", (i / 8) * 60 + (7 - i % 8) * 5, ",vc", i % 3, ",", i % 2,
                    ",1,", 1 + i % 8, ",,", 60 + i % 3600, "\n");
  }
  ParseText(state, text, TraceFormat::kHived);
}
BENCHMARK(BM_ParseHived)->Unit(benchmark::kMillisecond);

}  // namespace

// The journal (issue 29 goals: append <= 1 us per change; recovery of 100k GPUs and 50k
// groups from a checkpoint and its journal <= 0.5 s).
//  - BM_JournalEncode: one Schedule-and-Allocate-sized record (request and placement of an
//    8-GPU pod) framed into a reused buffer: the encoder's share of an append.
//  - BM_Cycle/{0,1}: a 1-GPU Schedule(kPreempting) + Allocate + Release cycle on a 1024-GPU
//    cluster, without (0) and with (1) a journal into a MemoryJournalSink (3 records per
//    cycle): the difference over 3 is the append cost per change as the façade pays it.
//  - BM_Recover: a 100k-GPU cluster, a checkpoint with 25k running 1-GPU groups, and a journal
//    of 25k more groups' Schedule + Allocate records (50k records): RecoverFromJournal.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "bench_scale.h"
#include "hived/journal.h"
#include "hived/scheduler.h"

namespace hived::bench {
namespace {

void BM_JournalEncode(benchmark::State& state) {
  JournalRecord r;
  r.op = JournalOp::kAllocate;
  r.fingerprint = 0x954b6b5e5aa5ac8aULL;
  r.request.name = "default/job-123456";
  r.request.vc = "vc3";
  r.request.members = {{1, 8}};
  r.placement.chain = "RACK";
  r.placement.pods = {{8,
                       "r1234n5",
                       {0, 1, 2, 3, 4, 5, 6, 7},
                       {"RACK", "RACK", "RACK", "RACK", "RACK", "RACK", "RACK", "RACK"},
                       "",
                       -1}};
  std::string buf;
  for (auto _ : state) {
    buf.clear();
    ++r.sequence;
    AppendJournalRecord(r, &buf);
    benchmark::DoNotOptimize(buf.data());
  }
  state.counters["bytes"] = static_cast<double>(buf.size());
}
BENCHMARK(BM_JournalEncode);

void BM_Cycle(benchmark::State& state) {
  const ClusterSpec spec = GeneratedCluster(1024, 4);
  auto s = Scheduler::Create(spec);
  MemoryJournalSink sink;
  if (state.range(0) == 1) (void)(*s)->StartJournal(&sink);
  GroupRequest req;
  req.name = "cycle";
  req.vc = "vc0";
  req.members = {{1, 1}};
  int64_t n = 0;
  for (auto _ : state) {
    absl::StatusOr<ScheduleResult> r = (*s)->Schedule(req, Phase::kPreempting);
    if (!r.ok() || !(*s)->Allocate(req, r->placement).ok() || !(*s)->Release(req.name).ok()) {
      state.SkipWithError("cycle failed");
      break;
    }
    if (++n % 4096 == 0) sink.Clear();
  }
}
BENCHMARK(BM_Cycle)->Arg(0)->Arg(1);

bool AddGroups(Scheduler* s, const ClusterSpec& spec, int64_t first, int64_t count) {
  GroupRequest req;
  req.members = {{1, 1}};
  for (int64_t i = first; i < first + count; ++i) {
    req.name = absl::StrCat("job", i);
    req.vc = spec.virtual_clusters[static_cast<size_t>(i) % spec.virtual_clusters.size()].name;
    absl::StatusOr<ScheduleResult> r = s->Schedule(req, Phase::kPreempting);
    if (!r.ok() || r->outcome != Outcome::kPlaced) return false;
    if (!s->Allocate(req, r->placement).ok()) return false;
  }
  return true;
}

void BM_Recover(benchmark::State& state) {
  const ClusterSpec spec = GeneratedCluster(100000, 8);
  auto s = Scheduler::Create(spec);
  if (!AddGroups(s->get(), spec, 0, 25000)) return state.SkipWithError("fill failed");
  MemoryJournalSink sink;
  absl::StatusOr<JournalCheckpoint> cp = (*s)->StartJournal(&sink);
  if (!AddGroups(s->get(), spec, 25000, 25000)) return state.SkipWithError("fill failed");
  for (auto _ : state) {
    JournalRecoveryReport report;
    auto back = Scheduler::RecoverFromJournal(spec, *cp, sink.data(), &report);
    if (!back.ok() || report.records_applied != 50000) return state.SkipWithError("recovery");
    benchmark::DoNotOptimize(back->get());
    state.PauseTiming();
    back->reset();  // not the destructor's time
    state.ResumeTiming();
  }
  state.counters["checkpoint_MiB"] = static_cast<double>(cp->state.size()) / (1 << 20);
  state.counters["journal_MiB"] = static_cast<double>(sink.data().size()) / (1 << 20);
}
BENCHMARK(BM_Recover)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
}  // namespace hived::bench

BENCHMARK_MAIN();

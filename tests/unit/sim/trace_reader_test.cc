#include "sim/trace/trace_reader.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "sim/cluster/spec_info.h"
#include "sim/common/csv.h"
#include "sim/engine/engine.h"
#include "sim/trace/job.h"
#include "sim/trace/trace_order.h"
#include "support/catch.h"
#include "support/testdata.h"
#include "unit/sim/sim_test_util.h"

namespace hived::sim {
namespace {

TEST_CASE("JobId holds what a std::string holds, inline up to 15 bytes, through random steps",
          "[sim][unit]") {
  // Model: a std::string per slot; texts of every length around the inline limit, copies,
  // moves, self-assignment and assignment from a view of the id itself.
  static_assert(sizeof(JobId) == 16);
  std::mt19937 rng(11);
  constexpr size_t kSlots = 5;
  std::vector<JobId> ids(kSlots);
  std::vector<std::string> model(kSlots);
  for (int step = 0; step < 5000; ++step) {
    const size_t i = rng() % kSlots;
    const size_t k = rng() % kSlots;
    switch (rng() % 5) {
      case 0: {
        const size_t len = rng() % 3 == 0 ? 13 + rng() % 5 : rng() % 40;  // 13..17 often
        std::string text(len, 'a');
        for (char& c : text) c = static_cast<char>('a' + rng() % 26);
        ids[i] = text;
        model[i] = text;
        break;
      }
      case 1:
        ids[i] = ids[k];
        model[i] = model[k];
        break;
      case 2:
        if (i != k) {
          ids[i] = std::move(ids[k]);
          model[i] = model[k];
          model[k].clear();
          CHECK(ids[k].empty());
        }
        break;
      case 3: {  // a suffix of its own text: the source is freed only after the copy
        const size_t cut = model[i].empty() ? 0 : rng() % model[i].size();
        ids[i] = ids[i].view().substr(cut);
        model[i] = model[i].substr(cut);
        break;
      }
      default: {
        JobId copy(ids[i]);
        const JobId moved(std::move(copy));
        CHECK(moved == ids[i]);
        break;
      }
    }
    for (size_t s = 0; s < kSlots; ++s) {
      REQUIRE(ids[s].view() == model[s]);
      CHECK(ids[s].size() == model[s].size());
      CHECK(ids[s].empty() == model[s].empty());
      CHECK(ids[s] == std::string_view(model[s]));
      CHECK(ids[s].str() == model[s]);
    }
  }
  JobId philly;
  const char text[] = "L123";
  philly.assign(text, text + 4);
  CHECK(philly == "L123");
}

TEST_CASE("NameTable: stores each text once, at an address that never moves", "[sim][unit]") {
  NameTable table;
  const Name empty = table.Intern("");
  CHECK(empty.empty());
  CHECK(empty == Name());  // the empty text is the default name, never stored
  CHECK(table.size() == 0);
  const Name a = table.Intern("vc-a");
  const char* at = a.data();
  for (int i = 0; i < 5000; ++i) table.Intern("vc" + std::to_string(i));  // growth moves nothing
  CHECK(table.size() == 5001);
  CHECK(a.data() == at);
  CHECK(a == "vc-a");
  CHECK(table.Intern("vc-a").data() == at);  // (1): stored once
  CHECK(table.Intern("vc17") == "vc17");
  CHECK(table.Intern("vc17") != a);
  CHECK(std::string_view("vc-a") == a);
}

TEST_CASE("Trace: copies share the name table, so their names outlive the original",
          "[sim][unit]") {
  Trace copy;
  {
    absl::StatusOr<Trace> t = HivedTraceSource({}).Parse(
        "job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration,pinned_cell\n"
        "j1,0,A,0,1,1,G,10,p1\nj2,1,A,0,1,1,,10,\nj3,2,B,0,1,1,G,10,\n",
        "t.csv");
    REQUIRE(t.ok());
    copy = *t;
    // Rows naming the same text share one stored name (2).
    CHECK(t->jobs[0].vc.data() == t->jobs[1].vc.data());
    CHECK(t->jobs[0].gpu_type.data() == t->jobs[2].gpu_type.data());
    CHECK(t->names->size() == 4);  // A, G, p1, B
  }
  REQUIRE(copy.jobs.size() == 3);
  CHECK(copy.jobs[0].vc == "A");
  CHECK(copy.jobs[0].pinned_cell == "p1");
  CHECK(copy.jobs[1].gpu_type.empty());
  CHECK(copy.jobs[2].vc == "B");
  CHECK(copy.Intern("A").data() == copy.jobs[0].vc.data());
}

TEST_CASE("SplitCsvLine: the reusing form clears and refills, like the returning one",
          "[sim][unit]") {
  std::vector<CsvField> fields;
  SplitCsvLine("a,bb,,c", &fields);
  REQUIRE(fields.size() == 4);
  CHECK(fields[1].text == "bb");
  CHECK(fields[1].column == 3);
  CHECK(fields[2].text.empty());
  SplitCsvLine("x", &fields);  // shorter: nothing of the previous row is left
  REQUIRE(fields.size() == 1);
  CHECK(fields[0].text == "x");
  CHECK(fields[0].column == 1);
  const std::vector<CsvField> again = SplitCsvLine("a,bb,,c");
  REQUIRE(again.size() == 4);
  CHECK(again[3].column == 7);
}

using testing::TestPath;

TEST_CASE(
    "HivedTraceSource: reads rows, sorts stably by submit time, warns once about extra columns",
    "[sim][unit]") {
  absl::StatusOr<Trace> trace =
      ReadTraceFile(TestPath("traces/own-good.csv"), TraceFormat::kHived, {});
  INFO(trace.status().ToString());
  REQUIRE(trace.ok());
  REQUIRE(trace->jobs.size() == 3);
  // j1 and j3 both at 10 keep their file order; j2 at 20 comes last.
  CHECK(trace->jobs[0].id == "j1");
  CHECK(trace->jobs[1].id == "j3");
  CHECK(trace->jobs[2].id == "j2");
  const TraceJob& j1 = trace->jobs[0];
  CHECK(j1.submit_time == 10);
  CHECK(j1.vc == "B");
  CHECK(j1.priority == -1);
  CHECK(j1.pods == 2);
  CHECK(j1.gpus_per_pod == 8);
  CHECK(j1.total_gpus == 16);
  CHECK(j1.gpu_type == "G");
  CHECK(j1.duration == 30);
  CHECK(trace->jobs[1].priority == 5);
  CHECK(trace->jobs[2].gpu_type.empty());
  REQUIRE(trace->warnings.size() == 1);
  CHECK(trace->warnings[0].find("ignoring unknown column(s) user") != std::string::npos);
  CHECK(trace->skipped_rows == 0);
}

TEST_CASE("HivedTraceSource: every bad row is an error naming file, line and column",
          "[sim][unit]") {
  const std::string path = TestPath("traces/own-bad.csv");
  absl::StatusOr<Trace> trace = ReadTraceFile(path, TraceFormat::kHived, {});
  REQUIRE_FALSE(trace.ok());
  CHECK(trace.status().code() == absl::StatusCode::kInvalidArgument);
  const std::string m(trace.status().message());
  CHECK(m.find(path + ":3:6: submit_time '-5' is not an integer in 0..3155760000") !=
        std::string::npos);
  CHECK(m.find(path + ":4:8: vc is empty") != std::string::npos);
  CHECK(m.find(path + ":5:10: priority '2000' is not an integer in -1..1000") != std::string::npos);
  CHECK(m.find(path + ":6:12: pods '0'") != std::string::npos);
  CHECK(m.find(path + ":7:17: duration 'ten'") != std::string::npos);
  CHECK(m.find(path + ":8:1: duplicate job_id 'ok1'") != std::string::npos);
  CHECK(m.find(path + ":9:10: expected at least 8 columns, found 3") != std::string::npos);
  CHECK(m.find("7 bad row(s)") != std::string::npos);
}

TEST_CASE("HivedTraceSource: --skip-bad-rows keeps the good rows and reports how many were skipped",
          "[sim][unit]") {
  absl::StatusOr<Trace> trace =
      ReadTraceFile(TestPath("traces/own-bad.csv"), TraceFormat::kHived, {/*skip_bad_rows=*/true});
  REQUIRE(trace.ok());
  REQUIRE(trace->jobs.size() == 1);
  CHECK(trace->jobs[0].id == "ok1");
  CHECK(trace->skipped_rows == 7);
  REQUIRE_FALSE(trace->warnings.empty());
  CHECK(trace->warnings.back().find("skipped 7 bad row(s)") != std::string::npos);
}

TEST_CASE("HivedTraceSource: a missing header column is an error", "[sim][unit]") {
  HivedTraceSource source({});
  absl::StatusOr<Trace> trace = source.Parse("job_id,submit_time,vc\nx,0,A\n", "t.csv");
  REQUIRE_FALSE(trace.ok());
  CHECK(std::string(trace.status().message()).find("t.csv:1:1: header lacks column(s) priority") !=
        std::string::npos);
  CHECK_FALSE(source.Parse("", "e.csv").ok());
}

TEST_CASE("trace readers: another format's header names the flag that reads it", "[sim][unit]") {
  const std::string philly = "timestamp,duration,num_gpus,gpu_time,cluster\n";
  const std::string own = "job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration\n";
  const std::string pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n";
  const std::string nodes = "sn,cpu_milli,memory_mib,gpu,model\n";
  auto error = [](const TraceSource& source, const std::string& text) {
    return std::string(source.Parse(text, "t.csv").status().message());
  };
  const HivedTraceSource hived({});
  const PhillyTraceSource philly_source({});
  CHECK(absl::EndsWith(error(hived, philly), "; this is a Philly trace: pass --format philly"));
  CHECK(absl::EndsWith(error(philly_source, own),
                       "; this is hived-sim's own trace format: pass --format hived"));
  CHECK(absl::EndsWith(error(hived, pods),
                       "; this is an openb pod list: pass --format openb "
                       "--nodes NODES.csv --pods PODS.csv"));
  CHECK(error(philly_source, nodes).find("this is an openb node list") != std::string::npos);
  // A header of no known format gets no hint.
  CHECK(absl::EndsWith(error(hived, "job_id,vc\n"), ")"));
}

TEST_CASE(
    "PhillyTraceSource: sorts stably, skips blank lines, converts times to seconds since the "
    "first submission",
    "[sim][unit]") {
  absl::StatusOr<Trace> trace =
      ReadTraceFile(TestPath("traces/philly-good.csv"), TraceFormat::kPhilly, {});
  INFO(trace.status().ToString());
  REQUIRE(trace.ok());
  REQUIRE(trace->jobs.size() == 4);
  CHECK(trace->jobs[0].vc == "vc2");  // 07:00:00 is the earliest
  CHECK(trace->jobs[0].submit_time == 0);
  CHECK(trace->jobs[0].total_gpus == 12);
  CHECK(trace->jobs[0].pods == 0);   // split later by the node size
  CHECK(trace->jobs[1].id == "L2");  // equal times keep file order: line 2, then line 5
  CHECK(trace->jobs[1].submit_time == 115);
  CHECK(trace->jobs[2].id == "L5");
  CHECK(trace->jobs[2].duration == 11);  // 10.5 s rounded up
  CHECK(trace->jobs[3].submit_time == 86400);
  CHECK(trace->jobs[3].priority == 0);
  CHECK(trace->warnings.empty());
}

TEST_CASE("PhillyTraceSource: bad rows are located errors", "[sim][unit]") {
  const std::string path = TestPath("traces/philly-bad.csv");
  absl::StatusOr<Trace> trace = ReadTraceFile(path, TraceFormat::kPhilly, {});
  REQUIRE_FALSE(trace.ok());
  const std::string m(trace.status().message());
  CHECK(m.find(path + ":3:1: timestamp '2017-13-09 07:01:55'") != std::string::npos);
  CHECK(m.find(path + ":4:21: duration '-3.0'") != std::string::npos);
  CHECK(m.find(path + ":5:26: num_gpus 'two'") != std::string::npos);
  CHECK(m.find(path + ":6:33: cluster (the VC) is empty") != std::string::npos);
  absl::StatusOr<Trace> skipped = ReadTraceFile(path, TraceFormat::kPhilly, {true});
  REQUIRE(skipped.ok());
  CHECK(skipped->jobs.size() == 1);
  CHECK(skipped->skipped_rows == 4);
}

TEST_CASE(
    "HivedTraceSource: random traces come out in std::stable_sort's order by submit time, ties "
    "in row order, at every span of times",
    "[sim][unit][property]") {
  // The reader's radix sort against the simple reference: a stable comparison sort of the
  // rows as read. Spans from one second (one pass, many ties) to the whole 100-year limit
  // (three passes), sorted, reversed and random inputs.
  std::mt19937_64 rng(11);
  const int64_t spans[] = {1, 7, 2047, 2048, 5'000'000, kMaxTimeSeconds};
  int traces = 0;
  for (int64_t span : spans) {
    for (int shape = 0; shape < 3; ++shape) {
      for (int round = 0; round < 20; ++round, ++traces) {
        const int rows = 1 + static_cast<int>(rng() % 400);
        std::vector<std::pair<int64_t, std::string>> expected;  // (time, id) in file order
        std::string text = "job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration\n";
        for (int r = 0; r < rows; ++r) {
          int64_t t = static_cast<int64_t>(rng() % static_cast<uint64_t>(span + 1));
          if (shape == 0) t = span * r / rows;           // sorted
          if (shape == 1) t = span * (rows - r) / rows;  // reversed
          const std::string id = "j" + std::to_string(r);
          expected.emplace_back(t, id);
          text += id + "," + std::to_string(t) + ",A,0,1,1,," + std::to_string(1 + r) + "\n";
        }
        absl::StatusOr<Trace> trace = HivedTraceSource({}).Parse(text, "r.csv");
        REQUIRE(trace.ok());
        std::stable_sort(expected.begin(), expected.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        REQUIRE(trace->jobs.size() == expected.size());
        for (size_t i = 0; i < expected.size(); ++i) {
          INFO("span " << span << ", shape " << shape << ", row " << i);
          REQUIRE(trace->jobs[i].submit_time == expected[i].first);
          REQUIRE(trace->jobs[i].id == expected[i].second);
          // The job moved whole: its duration was written from its row number.
          REQUIRE(trace->jobs[i].duration == 1 + std::stoi(expected[i].second.substr(1)));
        }
      }
    }
  }
  CHECK(traces == 360);
}

TEST_CASE(
    "PhillyTraceSource: rows of one day share its day count, and a bad date after a good one "
    "of the same day is still refused",
    "[sim][unit]") {
  // The reader keeps the last day it read; each row must still be checked as a whole.
  const std::string text =
      "timestamp,duration,num_gpus,gpu_time,cluster\n"
      "2017-10-09 07:00:00,10,1,10,a\n"
      "2017-10-09 07:00:05,10,1,10,a\n"   // same day: 5 s later
      "2017-10-09 24:00:00,10,1,10,a\n"   // same day, bad hour
      "2017-10-10 00:00:00,10,1,10,a\n"   // the next day
      "2017-02-29 00:00:00,10,1,10,a\n"   // not a leap year
      "2017-02-29 00:00:01,10,1,10,a\n"   // the same bad day again
      "2017-10-09 07:00:06,10,1,10,a\n";  // back to the first day
  absl::StatusOr<Trace> trace = PhillyTraceSource({/*skip_bad_rows=*/true}).Parse(text, "d.csv");
  REQUIRE(trace.ok());
  CHECK(trace->skipped_rows == 3);
  REQUIRE(trace->jobs.size() == 4);
  CHECK(trace->jobs[0].submit_time == 0);
  CHECK(trace->jobs[1].submit_time == 5);
  CHECK(trace->jobs[2].submit_time == 6);
  CHECK(trace->jobs[3].submit_time == 17 * 3600);
  absl::StatusOr<Trace> strict = PhillyTraceSource({}).Parse(text, "d.csv");
  REQUIRE_FALSE(strict.ok());
  const std::string m(strict.status().message());
  CHECK(m.find("d.csv:4:1: timestamp '2017-10-09 24:00:00'") != std::string::npos);
  CHECK(m.find("d.csv:6:1: timestamp '2017-02-29 00:00:00'") != std::string::npos);
  CHECK(m.find("d.csv:7:1: timestamp '2017-02-29 00:00:01'") != std::string::npos);
}

TEST_CASE("SplitIntoPods: full-node pods plus one remainder pod", "[sim][unit]") {
  static_assert(sizeof(GangMembers) == 16);
  static_assert(sizeof(SimJob) == 48);
  GangMembers empty;
  CHECK(empty.empty());
  CHECK(empty.size() == 0);
  CHECK(empty.begin() == empty.end());
  const GangMembers one = {{3, 8}};
  REQUIRE(one.size() == 1);
  CHECK(one[0].pod_number == 3);
  CHECK(one.end() - one.begin() == 1);
  auto members = SplitIntoPods(12, 8);
  REQUIRE(members.size() == 2);
  CHECK(members[0].pod_number == 1);
  CHECK(members[0].leaf_cell_number == 4);
  CHECK(members[1].pod_number == 1);
  CHECK(members[1].leaf_cell_number == 8);
  members = SplitIntoPods(24, 8);
  REQUIRE(members.size() == 1);
  CHECK(members[0].pod_number == 3);
  CHECK(members[0].leaf_cell_number == 8);
  members = SplitIntoPods(4, 8);
  REQUIRE(members.size() == 1);
  CHECK(members[0].pod_number == 1);
  CHECK(members[0].leaf_cell_number == 4);
}

TEST_CASE("TraceToCsv: writes the own format, which reads back to the same jobs", "[sim][unit]") {
  Trace trace = testing::LoadTrace("traces/own-good.csv");
  HivedTraceSource source({});
  absl::StatusOr<Trace> again = source.Parse(TraceToCsv(trace), "round-trip.csv");
  REQUIRE(again.ok());
  REQUIRE(again->jobs.size() == trace.jobs.size());
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    CHECK(again->jobs[i].id == trace.jobs[i].id);
    CHECK(again->jobs[i].submit_time == trace.jobs[i].submit_time);
    CHECK(again->jobs[i].total_gpus == trace.jobs[i].total_gpus);
    CHECK(again->jobs[i].duration == trace.jobs[i].duration);
  }
}

}  // namespace
}  // namespace hived::sim

namespace hived::sim {
namespace {

TEST_CASE("PhillyTraceSource: reads the real Philly trace, philly.yaml can place every job",
          "[sim][unit]") {
  const std::string path = ::hived::testing::SharedTracesDir() + "/philly/philly.csv";
  std::string text;
  if (!ReadFileToString(path, &text).ok()) HIVED_SKIP_TEST(path << " is absent");
  absl::StatusOr<Trace> trace = PhillyTraceSource({}).Parse(text, path);
  INFO(trace.status().ToString());
  REQUIRE(trace.ok());
  CHECK(trace->jobs.size() == 82247);
  CHECK(trace->skipped_rows == 0);
  CHECK(trace->jobs.front().submit_time == 0);
  // 2017-09-04 10:30:41 .. 2017-12-22 08:02:11.
  CHECK(trace->jobs.back().submit_time == 9408690);
  const ClusterSpec spec = testing::LoadSpec("../../config/examples/philly.yaml");
  SpecInfo info(spec);
  CHECK(info.vc_count() == 15);
  std::vector<SimJob> jobs;
  std::vector<RareString> reasons;
  ResolveJobs(*trace, info, &jobs, &reasons);
  int64_t rejected = 0;
  int64_t split = 0;
  for (size_t j = 0; j < jobs.size(); ++j) {
    if (!reasons[j].empty()) ++rejected;
    if (trace->jobs[j].total_gpus == 12) {
      ++split;
      REQUIRE(jobs[j].members.size() == 2);  // 4 + 8
    }
  }
  CHECK(rejected == 0);
  CHECK(split == 7);
}

// Writes `text` to a file of the test's own temporary folder; its path.
std::string WriteTempFile(const std::string& name, const std::string& text) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / absl::StrCat("hived-trace-order-", getpid());
  std::filesystem::create_directories(dir);
  const std::string path = (dir / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// Issue 28 item 3: a trace too large to read whole must be sorted; the check scans it in
// chunks and names the first row out of order with the command that sorts it.
TEST_CASE("CheckTraceSorted names the first row out of order and how to sort it", "[sim][unit]") {
  const std::string path = hived::testing::TestdataPath("traces/unsorted-small.csv");
  absl::Status s = CheckTraceSorted(path);
  REQUIRE(s.code() == absl::StatusCode::kInvalidArgument);
  const std::string message(s.message());
  // submit_time is the third column here: the error's column and sort's key follow it.
  CHECK(message.find(path + ":6:7: submit time 10 is before 20 (line 5)") == 0);
  CHECK(message.find(SortTraceCommand(path, 3)) != std::string::npos);
  CHECK(SortTraceCommand("t.csv", 2) ==
        "(head -1 t.csv; tail -n +2 t.csv | sort -t, -k2,2n -s) > t.sorted.csv");
  CHECK(SortTraceCommand("my traces/it's.csv", 3) ==
        "(head -1 'my traces/it'\\''s.csv'; tail -n +2 'my traces/it'\\''s.csv' | sort -t, -k3,3n "
        "-s) > 'my traces/it'\\''s.sorted.csv'");
  CHECK(CheckTraceSorted(hived::testing::TestdataPath("traces/two-racks-default.csv")).ok());
  CHECK(CheckTraceSorted("/nonexistent/t.csv").code() == absl::StatusCode::kNotFound);
}

TEST_CASE("CheckTraceSorted reads rows across chunk boundaries, CRLF and equal times",
          "[sim][unit]") {
  // About 3 MB: rows cross the 1 MB chunks; the one row out of order is the last.
  std::string text = "job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration\r\n";
  constexpr int kRows = 100000;
  for (int i = 0; i < kRows; ++i) {
    absl::StrAppend(&text, "job-with-a-long-identifier-", i, ",", i / 2, ",prod,0,1,1,,100\r\n");
  }
  const std::string sorted = WriteTempFile("sorted-big.csv", text);
  CHECK(CheckTraceSorted(sorted).ok());
  text += "late,3,prod,0,1,1,,100\r\n";
  const std::string unsorted = WriteTempFile("unsorted-big.csv", text);
  absl::Status s = CheckTraceSorted(unsorted);
  REQUIRE(!s.ok());
  CHECK(std::string(s.message())
            .find(absl::StrCat(":", kRows + 2, ":6: submit time 3 is before ", (kRows - 1) / 2,
                               " (line ", kRows + 1, ")")) != std::string::npos);
}

TEST_CASE("run's --max-memory: sizes and the read path they choose", "[sim][unit]") {
  CHECK(*ParseByteSize("512M") == 512 * kMiB);
  CHECK(*ParseByteSize("2g") == 2048 * kMiB);
  CHECK(*ParseByteSize("1.5GiB") == 1536 * kMiB);
  CHECK(*ParseByteSize("300MB") == 300 * kMiB);
  CHECK(*ParseByteSize("4096") == 4096);
  for (const char* bad : {"", "0", "-1M", "abc", "1X", "M", "1e30T"}) {
    INFO(bad);
    CHECK(!ParseByteSize(bad).ok());
  }
  const int64_t budget = 1024 * kMiB;
  CHECK(MaxInMemoryTraceBytes(budget) == 32 * kMiB);
  CHECK(ChooseTraceReadPath(32434261, budget) == TraceReadPath::kInMemory);  // gen 1M jobs
  CHECK(ChooseTraceReadPath(32 * kMiB, budget) == TraceReadPath::kInMemory);
  CHECK(ChooseTraceReadPath(32 * kMiB + 1, budget) == TraceReadPath::kStream);
  const int64_t def = DefaultMaxMemoryBytes();
  CHECK(def > 0);
  CHECK(def <= budget);
}

}  // namespace
}  // namespace hived::sim

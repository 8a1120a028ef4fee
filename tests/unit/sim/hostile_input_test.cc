// Issue 14: hostile and careless input to the simulator's readers and flags ends in a located
// error or a correct result, never undefined behaviour, overflow or unbounded memory.
#include <cmath>
#include <cstdint>
#include <string>

#include "nlohmann/json.hpp"
#include "sim/cli/commands.h"
#include "sim/common/csv.h"
#include "sim/common/json.h"
#include "sim/trace/node_events.h"
#include "sim/trace/trace_reader.h"
#include "support/catch.h"
#include "unit/sim/hostile_test_util.h"
#include "unit/sim/sim_test_util.h"

namespace hived::sim {
namespace {

using testing::RunArgs;
using testing::ScratchDir;
using testing::TestPath;
using testing::WriteFile;

constexpr char kHivedHeader[] =
    "job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration\n";
constexpr char kPhillyHeader[] = "timestamp,duration,num_gpus,gpu_time,cluster\n";

std::string Message(const absl::Status& s) { return std::string(s.message()); }

// The error message of a result that must have failed.
template <typename T>
std::string ErrorOf(const absl::StatusOr<T>& result) {
  REQUIRE_FALSE(result.ok());
  return Message(result.status());
}

bool Contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

absl::StatusOr<Trace> Hived(std::string_view body, TraceReadOptions options = {}) {
  return HivedTraceSource(options).Parse(absl::StrCat(kHivedHeader, Av(body)), "t.csv");
}

absl::StatusOr<Trace> Philly(std::string_view body) {
  return PhillyTraceSource({}).Parse(absl::StrCat(kPhillyHeader, Av(body)), "p.csv");
}

TEST_CASE("ParseInt: rejects values outside int64_t without undefined behaviour", "[sim][unit]") {
  CHECK(ParseInt("9223372036854775807") == INT64_MAX);
  CHECK(ParseInt("-9223372036854775808") == INT64_MIN);
  CHECK_FALSE(ParseInt("9223372036854775808").has_value());
  CHECK_FALSE(ParseInt("99999999999999999999").has_value());
  CHECK_FALSE(ParseInt("-99999999999999999999999").has_value());
  CHECK_FALSE(ParseInt("00000000000000000000000000000000000000000000000001x").has_value());
  CHECK(ParseInt("00000000000000000000000000000000000000000000000001") == 1);
  CHECK(ParseInt("+5") == 5);
  CHECK_FALSE(ParseInt("+-5").has_value());
  CHECK_FALSE(ParseInt("-").has_value());
  CHECK_FALSE(ParseInt("+").has_value());
  CHECK_FALSE(ParseInt(" 5").has_value());
}

TEST_CASE("Trace times beyond 100 years are located errors, and at the limit they cannot overflow",
          "[sim][unit]") {
  CHECK(Contains(ErrorOf(Hived("j,3155760001,A,0,1,1,,10\n")),
                 "t.csv:2:3: submit_time '3155760001' is not an integer "
                 "in 0..3155760000 (seconds, at most 100 years)"));
  CHECK(Contains(ErrorOf(Hived("j,0,A,0,1,1,,99999999999999999999999\n")),
                 "t.csv:2:14: duration '99999999999999999999999'"));
  // Both at the limit: the end time fits easily.
  absl::StatusOr<Trace> edge = Hived("j,3155760000,A,0,1,1,,3155760000\n");
  REQUIRE(edge.ok());
  const TraceJob& job = edge->jobs.at(0);
  CHECK(job.submit_time + job.duration == 2 * kMaxTimeSeconds);

  CHECK(Contains(ErrorOf(Philly("2017-10-09 07:01:55,1e10,1,1,vc\n")),
                 "p.csv:2:21: duration '1e10' is not a number"));
  // Two timestamps 200 years apart: the later one is located.
  CHECK(Contains(ErrorOf(Philly("1901-01-01 00:00:00,10,1,1,vc\n2101-01-01 00:00:00,10,1,1,vc\n")),
                 "p.csv:3:1: timestamp is more than 100 years"));
}

TEST_CASE("Philly timestamps must be real dates", "[sim][unit]") {
  CHECK(Contains(ErrorOf(Philly("2017-02-31 00:00:00,10,1,1,vc\n")),
                 "p.csv:2:1: timestamp '2017-02-31 00:00:00' is not a "
                 "real date"));
  CHECK_FALSE(Philly("2017-02-29 00:00:00,10,1,1,vc\n").ok());
  CHECK_FALSE(Philly("1900-02-29 00:00:00,10,1,1,vc\n").ok());
  CHECK_FALSE(Philly("2017-04-31 00:00:00,10,1,1,vc\n").ok());
  CHECK(Philly("2016-02-29 00:00:00,10,1,1,vc\n").ok());
  CHECK(Philly("2000-02-29 23:59:59,10,1,1,vc\n").ok());
  CHECK(Philly("2017-12-31 23:59:60,10,1,1,vc\n").ok());
}

TEST_CASE("Fields with surrounding blanks are named with a suggestion", "[sim][unit]") {
  absl::StatusOr<Trace> vc = Hived("j,0,prod ,0,1,1,,10\n");
  REQUIRE_FALSE(vc.ok());
  CHECK(Contains(Message(vc.status()),
                 "t.csv:2:5: vc 'prod ' has surrounding blanks: did you mean 'prod'?"));
  absl::StatusOr<Trace> number = Hived("j, 7,A,0,1,1,,10\n");
  REQUIRE_FALSE(number.ok());
  CHECK(Contains(Message(number.status()), "did you mean '7'?"));
  absl::StatusOr<Trace> header = HivedTraceSource({}).Parse(
      "job_id, submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration\n", "h.csv");
  REQUIRE_FALSE(header.ok());
  CHECK(Contains(Message(header.status()), "did you mean 'submit_time'?"));
  absl::StatusOr<Trace> quoted = Hived("\"j\",\"7\",A,0,1,1,,10\n");
  REQUIRE_FALSE(quoted.ok());
  CHECK(Contains(Message(quoted.status()),
                 "t.csv:2:1: job_id '\"j\"' is quoted, but traces are "
                 "plain CSV without quoting: did you mean 'j'?"));
  absl::StatusOr<Trace> quoted_number = Hived("j,\"7\",A,0,1,1,,10\n");
  REQUIRE_FALSE(quoted_number.ok());
  CHECK(
      Contains(Message(quoted_number.status()), "(it has surrounding quotes: did you mean '7'?)"));
  CHECK(Contains(ErrorOf(Philly("2017-10-09 07:01:55,10,1,1, vc1\n")), "did you mean 'vc1'?"));
}

TEST_CASE("Names must be valid UTF-8 without control characters", "[sim][unit]") {
  absl::StatusOr<Trace> bad = Hived("j,0,A\xC3(,0,1,1,,10\n");
  REQUIRE_FALSE(bad.ok());
  CHECK(
      Contains(Message(bad.status()), "t.csv:2:6: vc is not valid UTF-8 (byte 0xC3 at offset 1)"));
  CHECK_FALSE(Hived("j\x01,0,A,0,1,1,,10\n").ok());
  CHECK_FALSE(Hived("j,0,A,0,1,1,\xED\xA0\x80,10\n").ok());  // a surrogate
  CHECK_FALSE(Hived("j,0,\xC0\xAF,0,1,1,,10\n").ok());       // an overlong '/'
  absl::StatusOr<Trace> good = Hived("j\xC3\xA9,0,\xE6\x97\xA5,0,1,1,,10\n");
  REQUIRE(good.ok());
  CHECK(good->jobs.at(0).vc == "\xE6\x97\xA5");
  CHECK(FindInvalidUtf8("\xF4\x90\x80\x80") == 0u);  // above U+10FFFF
  CHECK_FALSE(FindInvalidUtf8("\xF0\x9F\x98\x80").has_value());
}

TEST_CASE("A UTF-8 byte-order mark is accepted and UTF-16 is named", "[sim][unit]") {
  absl::StatusOr<Trace> bom = HivedTraceSource({}).Parse(
      absl::StrCat("\xEF\xBB\xBF", kHivedHeader, "j,0,A,0,1,1,,10\n"), "bom.csv");
  REQUIRE(bom.ok());
  CHECK(bom->jobs.size() == 1);
  CHECK(PhillyTraceSource({})
            .Parse(absl::StrCat("\xEF\xBB\xBF", kPhillyHeader, "2017-10-09 07:01:55,1,1,1,v\n"),
                   "bom.csv")
            .ok());
  CHECK(ParseNodeEvents("\xEF\xBB\xBFtime,node,state\n1,n0,down\n", "ev.csv").ok());
  CHECK(Contains(ErrorOf(HivedTraceSource({}).Parse(std::string("\xFF\xFEj\0o\0", 6), "u16.csv")),
                 "u16.csv:1:1: the file is UTF-16LE"));
}

TEST_CASE("Node-event errors are located, bounded in time and do not suggest --skip-bad-rows",
          "[sim][unit]") {
  absl::StatusOr<std::vector<NodeEvent>> ev = ParseNodeEvents(
      "time,node,state\n99999999999999999999,n0,down\n1,n0 ,up\n3155760001,n0,up\n", "ev.csv");
  REQUIRE_FALSE(ev.ok());
  const std::string m = Message(ev.status());
  CHECK(Contains(m, "ev.csv:2:1: time '99999999999999999999' is not an integer"));
  CHECK(Contains(m, "ev.csv:3:3: node 'n0 ' has surrounding blanks: did you mean 'n0'?"));
  CHECK(Contains(m, "ev.csv:4:1: time '3155760001'"));
  CHECK_FALSE(Contains(m, "--skip-bad-rows"));
  // Trace errors still suggest it.
  CHECK(Contains(Message(Hived("j,x,A,0,1,1,,10\n").status()), "--skip-bad-rows"));
}

TEST_CASE("Readers refuse files over their limit while reading, with the flag to raise it",
          "[sim][unit]") {
  ScratchDir dir("limits");
  std::string text = kHivedHeader;
  for (int i = 0; i < 5000; ++i) absl::StrAppend(&text, "j", i, ",0,A,0,1,1,,10\n");
  WriteFile(dir / "big.csv", text);
  TraceReadOptions small;
  small.max_bytes = 64 * 1024;
  CHECK(Contains(ErrorOf(ReadTraceFile(dir / "big.csv", TraceFormat::kHived, small)),
                 "the trace is larger than the limit of 65536 bytes (raise it with "
                 "--max-input-mb)"));
  CHECK(ReadTraceFile(dir / "big.csv", TraceFormat::kHived, {}).ok());
  // An endless file without newlines stops at the line limit, after about 1 MB.
  absl::StatusOr<Trace> zero = ReadTraceFile("/dev/zero", TraceFormat::kHived, {});
  REQUIRE_FALSE(zero.ok());
  CHECK(Contains(Message(zero.status()), "/dev/zero:1:1: line is longer than the limit of 1 MB"));
  // An endless file of newlines stops at the size limit.
  WriteFile(dir / "lines.csv", std::string(100000, '\n'));
  CHECK_FALSE(ReadNodeEventsFile(dir / "lines.csv", 50000).ok());
  CHECK(ReadTraceFile(dir.path().string(), TraceFormat::kHived, {}).status().code() !=
        absl::StatusCode::kOk);  // a folder
  // Readers with a fixed limit (fill's and openb-replay's lists, sweep's grid) name no flag
  // their commands do not take.
  WriteFile(dir / "huge.csv", std::string(static_cast<size_t>(kDefaultMaxTraceBytes) + 1, '\n'));
  std::string text_out;
  const std::string fixed = Message(ReadFileToString(dir / "huge.csv", &text_out));
  CHECK(Contains(fixed, "huge.csv: the file is larger than the limit of 16 MB"));
  CHECK_FALSE(Contains(fixed, "--max-input-mb"));
}

TEST_CASE("Bad rows are listed up to a cap, then counted", "[sim][unit]") {
  std::string body;
  for (int i = 0; i < 1000; ++i) absl::StrAppend(&body, "j", i, ",x,A,0,1,1,,10\n");
  absl::StatusOr<Trace> trace = Hived(body);
  REQUIRE_FALSE(trace.ok());
  const std::string m = Message(trace.status());
  CHECK(Contains(m, "... and 980 more bad rows"));
  CHECK(Contains(m, "1000 bad row(s)"));
  CHECK(std::count(m.begin(), m.end(), '\n') == static_cast<int64_t>(kMaxListedErrors) + 1);
  // A megabyte-long bad field is quoted only in part.
  absl::StatusOr<Trace> long_field =
      Hived(absl::StrCat("j,", std::string(1000000, 'x'), ",A,0,1,1,,10\n"));
  REQUIRE_FALSE(long_field.ok());
  CHECK(Message(long_field.status()).size() < 1000);
  CHECK(Contains(Message(long_field.status()), "... (cut)"));
  // So are thousands of unknown header columns.
  std::string header = "job_id,submit_time,vc,priority,pods,gpus_per_pod,gpu_type,duration";
  for (int i = 0; i < 5000; ++i) absl::StrAppend(&header, ",extra", i);
  absl::StatusOr<Trace> wide = HivedTraceSource({}).Parse(header + "\n", "w.csv");
  REQUIRE(wide.ok());
  REQUIRE(wide->warnings.size() == 1);
  CHECK(Contains(wide->warnings[0], "extra19 and 4980 more"));
  // A header missing columns among thousands of padded ones hints only at the missing names.
  std::string padded = "job_id, vc ";
  for (int i = 0; i < 5000; ++i) absl::StrAppend(&padded, ", pad", i, " ");
  absl::StatusOr<Trace> missing = HivedTraceSource({}).Parse(padded + "\n", "m.csv");
  REQUIRE_FALSE(missing.ok());
  CHECK(Contains(Message(missing.status()), "did you mean 'vc'?"));
  CHECK(Message(missing.status()).size() < 1000);
}

TEST_CASE("JSON output is valid UTF-8 whatever bytes names hold", "[sim][unit]") {
  const std::string raw = "a\xC3(b\xFF\x01\x7F\"\\\xE6\x97\xA5\xF0\x9F";
  JsonWriter w;
  w.BeginObject();
  w.String("name", raw);
  w.EndObject();
  const std::string text = w.Finish();
  CHECK_FALSE(FindInvalidUtf8(text).has_value());
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  REQUIRE_FALSE(parsed.is_discarded());
  CHECK(parsed["name"].get<std::string>() ==
        "a\xEF\xBF\xBD(b\xEF\xBF\xBD\x01\x7F\"\\\xE6\x97\xA5\xEF\xBF\xBD\xEF\xBF\xBD");
  // Our own reader takes it back.
  CHECK(ParseJson(text, "w.json").ok());
}

TEST_CASE("JsonWriter Real writes doubles exactly as nlohmann-json does", "[sim][unit]") {
  // The pod replay's summary.json (sim/metrics/pod_summary.h) went from nlohmann-json to the
  // one writer: its figures must keep their bytes.
  const double values[] = {0,         1,     0.5, 0.1 + 0.2, 1e-05,   1e21,
                           -2.5e-300, 95.83, 1e6, 1e300,     2.0 / 3, 123456789012345.0};
  for (double v : values) {
    JsonWriter w;
    w.BeginObject();
    w.Real("x", v);
    w.EndObject();
    INFO(v);
    CHECK(w.Finish() == nlohmann::ordered_json({{"x", v}}).dump(2) + "\n");
  }
  JsonWriter w;
  w.BeginObject();
  w.Real("nan", std::nan(""));
  w.BeginObject("empty");
  w.EndObject();
  w.EndObject();
  CHECK(w.Finish() == "{\n  \"nan\": null,\n  \"empty\": {}\n}\n");
}

TEST_CASE("The summary reader locates malformed, deep, non-UTF-8 and out-of-range JSON",
          "[sim][unit]") {
  CHECK(Contains(Message(ParseJson("{\n\"a\": }", "x.json").status()), "x.json:2:6: "));
  absl::StatusOr<JsonValue> deep =
      ParseJson(std::string(100000, '[') + std::string(100000, ']'), "deep.json");
  REQUIRE_FALSE(deep.ok());
  CHECK(Contains(Message(deep.status()), "deep.json:1:65: nesting too deep"));
  CHECK_FALSE(ParseJson("{\"a\": \"\xC3(\"}", "u.json").ok());
  CHECK(Message(ParseJson("{\"a\": 1e999}", "n.json").status()) ==
        "n.json:1:11: number overflow parsing '1e999'");
  CHECK(Message(ParseJson("{\"a\": 1e300}", "n.json").status()) ==
        "n.json: number at a is out of range (beyond +-2^63)");
  // Every number must convert to the summary's int64_t fields without overflow.
  CHECK(Message(ParseJson("{\"vcs\": [{}, {\"q\": {\"p95\": -1e300}}]}", "n.json").status()) ==
        "n.json: number at vcs[1].q.p95 is out of range (beyond +-2^63)");
  CHECK_FALSE(ParseJson("[18446744073709551615]", "n.json").ok());
  CHECK(ParseJson("[9223372036854775807, -9223372036854775808]", "n.json").ok() == false);
  CHECK(ParseJson("[9223372036854774784, -9223372036854774784]", "n.json").ok());
  CHECK_FALSE(ParseJson("", "e.json").ok());
  std::string many = "{\"a\": [0";
  for (int i = 0; i < 1'000'000; ++i) many += ",0";
  many += "]}";
  CHECK(Message(ParseJson(many, "many.json").status()) ==
        "many.json: more than 1000000 values, at a[999998]");
  CHECK_FALSE(ParseJson("{} {}", "two.json").ok());
  absl::StatusOr<JsonValue> ok = ParseJson("{\"a\": [1, -2.5, \"\\u00e9\", null, true]}", "ok");
  REQUIRE(ok.ok());
  const JsonValue* a = ok->Find("a");
  REQUIRE(a != nullptr);
  REQUIRE(a->array.size() == 5);
  CHECK(a->array[1].number == -2.5);
  CHECK(a->array[2].string == "\xC3\xA9");
}

TEST_CASE("run refuses unusable --mtbf, --mttr, --timeline-interval, --horizon, --max-input-mb",
          "[sim][unit]") {
  const std::string config = TestPath("sim/small.yaml");
  const std::string trace = TestPath("traces/policies.csv");
  auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"run", "--config", config, "--trace", trace, "--quiet"};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunArgs(RunCommand, args);
  };
  CHECK(run({"--mtbf", "1e308", "--mttr", "1"}) == 2);
  CHECK(run({"--mtbf", "100", "--mttr", "1e-9"}) == 2);
  CHECK(run({"--timeline-interval", "9000000000000000000"}) == 2);
  CHECK(run({"--timeline-interval", "99999999999999999999"}) == 2);
  CHECK(run({"--horizon", "3155760001"}) == 2);
  CHECK(run({"--max-input-mb", "5000"}) == 2);
  CHECK(run({"--mtbf", "1000", "--mttr", "1", "--baseline", "none"}) == 0);
  // gen-trace cannot write durations the readers would refuse.
  CHECK(RunArgs(GenTraceCommand,
                {"gen-trace", "--config", config, "--max-duration", "3155760001"}) == 2);
}

}  // namespace
}  // namespace hived::sim

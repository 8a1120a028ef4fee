// hived-sim merge: the command line over sim/planning/sweep.h and
// sim/planning/sweep_runner.h.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "hived/config.h"
#include "sim/cluster/spec_edit.h"
#include "sim/common/command_util.h"
#include "sim/common/csv.h"
#include "sim/common/flags.h"
#include "sim/engine/queue_policy.h"
#include "sim/planning/planning_commands.h"
#include "sim/planning/sweep.h"
#include "sim/planning/sweep_runner.h"
#include "sim/policies/scheduler_backend.h"
#include "sim/trace/trace_reader.h"
#include "sim/trace/trace_transform.h"

namespace hived::sim {
namespace {

namespace fs = std::filesystem;

}  // namespace

int MergeCommand(int argc, char** argv) {
  std::string out;
  FlagParser p("hived-sim merge", "--out DIR SHARD_DIR...",
               "Combines the --out folders of the shards of one sweep (--shard I/N) into the\n"
               "result the unsharded sweep writes: grid.txt, sweep.csv, summary.csv and\n"
               "summary.txt, byte for byte. Every shard 0..N-1 must be given once.");
  p.String("out", &out, "DIR", "where to write the merged result");
  std::vector<std::string> dirs;
  if (int code = p.Parse(argc, argv, &dirs); code >= 0) return code;
  if (out.empty()) return p.UsageError("--out is required");
  if (dirs.empty()) return p.UsageError("needs the shards' folders");
  const char* kCmd = "hived-sim merge";
  std::string fingerprint;
  std::optional<SweepGrid> grid;
  std::map<int64_t, std::string> shard_dirs;
  int64_t count = 0;
  std::vector<SweepRow> rows;
  for (const std::string& d : dirs) {
    std::string text, shard_text, csv;
    const std::string grid_file = (fs::path(d) / "grid.txt").string();
    for (const auto& [file, into] :
         {std::pair{grid_file, &text}, std::pair{(fs::path(d) / "shard.txt").string(), &shard_text},
          std::pair{(fs::path(d) / "sweep.csv").string(), &csv}}) {
      if (absl::Status s = ReadFileToString(file, into); !s.ok()) {
        return Fail(kCmd, absl::StrCat(d, ": not a finished sweep shard (", s.message(), ")"));
      }
    }
    if (grid.has_value() && text != fingerprint) {
      return Fail(kCmd,
                  absl::StrCat(d, ": a different grid from ", dirs[0], " (their grid.txt differ)"));
    }
    if (!grid.has_value()) {
      absl::StatusOr<SweepGrid> g = ParseGridFingerprint(text, grid_file);
      if (!g.ok()) return Fail(kCmd, g.status().message());
      grid = std::move(*g);
      fingerprint = text;
    }
    const std::optional<SweepShard> shard =
        ParseSweepShard(std::string(absl::StripTrailingAsciiWhitespace(shard_text)));
    if (!shard) return Fail(kCmd, absl::StrCat(d, "/shard.txt: not I/N"));
    if (count != 0 && shard->count != count) {
      return Fail(kCmd, absl::StrCat(d, ": shard of ", shard->count, ", the others of ", count));
    }
    count = shard->count;
    if (!shard_dirs.emplace(shard->index, d).second) {
      return Fail(kCmd, absl::StrCat("shard ", shard->index, "/", count,
                                     " given twice: ", shard_dirs[shard->index], " and ", d));
    }
    absl::StatusOr<std::vector<SweepRow>> got =
        ParseSweepCsv(csv, (fs::path(d) / "sweep.csv").string(), grid->AxisNames());
    if (!got.ok()) return Fail(kCmd, got.status().message());
    for (const SweepRow& r : *got) {
      if (r.run % count != shard->index || r.run >= grid->RunCount()) {
        return Fail(kCmd, absl::StrCat(d, "/sweep.csv: run ", r.run, " is not in shard ",
                                       shard->index, "/", count));
      }
    }
    rows.insert(rows.end(), got->begin(), got->end());
  }
  std::vector<std::string> missing;
  for (int64_t i = 0; i < count; ++i) {
    if (shard_dirs.count(i) == 0) missing.push_back(absl::StrCat(i, "/", count));
  }
  if (!missing.empty()) {
    return Fail(kCmd, absl::StrCat("missing shards: ", absl::StrJoin(missing, ", ")));
  }
  std::set<int64_t> have;
  for (const SweepRow& r : rows) have.insert(r.run);
  if (static_cast<int64_t>(have.size()) != grid->RunCount()) {
    return Fail(kCmd, absl::StrCat("the shards hold ", have.size(), " of the grid's ",
                                   grid->RunCount(), " runs (an unfinished shard?)"));
  }
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) return Fail(kCmd, absl::StrCat("cannot create ", out, ": ", ec.message()));
  if (absl::Status s = WriteSweepResults(out, *grid, rows); !s.ok()) return Fail(kCmd, s.message());
  if (absl::Status s = WriteFileAtomically((fs::path(out) / "shard.txt").string(), "0/1\n");
      !s.ok()) {
    return Fail(kCmd, s.message());
  }
  std::fputs(SummaryText(grid->AxisNames(), SummarizeRows(grid->AxisNames(), rows), false).c_str(),
             stdout);
  std::fprintf(stderr, "merged %lld shards (%lld runs) into %s\n", static_cast<long long>(count),
               static_cast<long long>(grid->RunCount()), out.c_str());
  return kExitOk;
}

}  // namespace hived::sim

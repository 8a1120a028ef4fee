// hived-sim sweep: the command line over sim/planning/sweep.h and
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
#include "sim/policies/policy_registry.h"
#include "sim/policies/scheduler_backend.h"
#include "sim/trace/trace_reader.h"
#include "sim/trace/trace_transform.h"

namespace hived::sim {
namespace {

namespace fs = std::filesystem;

// Keys a grid file may set: the sweep's flags.
const char* const kGridKeys[] = {"config",
                                 "trace",
                                 "format",
                                 "policy",
                                 "queue",
                                 "seeds",
                                 "scale",
                                 "scale-vc",
                                 "vc-cells",
                                 "add-racks",
                                 "vary",
                                 "run-args",
                                 "only-vcs",
                                 "rename-vcs",
                                 "add-tenant",
                                 "vc-priority",
                                 "vc-opportunistic",
                                 "move-vc",
                                 "vc-load-scale",
                                 "bootstrap",
                                 "max-runs",
                                 "jobs",
                                 "out",
                                 "keep-runs",
                                 "resume",
                                 "shard"};

// Reads a grid file: `key: value` lines (a YAML subset), a value being a scalar or a flow
// list `[a, b]` (joined with ','); `#` starts a comment. Returns "--key=value" arguments.
absl::StatusOr<std::vector<std::string>> ReadGridFile(const std::string& path) {
  std::string text;
  if (absl::Status s = ReadFileToString(path, &text); !s.ok()) return s;
  std::vector<std::string> out;
  LineReader lines(text);
  std::string_view raw;
  while (lines.Next(&raw)) {
    auto bad = [&](const std::string& what) {
      return absl::InvalidArgumentError(absl::StrCat(path, ":", lines.line_number(), ": ", what));
    };
    std::string line(raw);
    for (size_t i = 0; i < line.size(); ++i) {
      if (line[i] == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) {
        line.resize(i);
        break;
      }
    }
    if (IsBlank(line)) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) return bad("expected 'key: value'");
    const std::string key(absl::StripAsciiWhitespace(line.substr(0, colon)));
    std::string value(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    if (std::find(std::begin(kGridKeys), std::end(kGridKeys), key) == std::end(kGridKeys)) {
      return bad(absl::StrCat(
          "unknown key '", key,
          "' (keys: ", absl::StrJoin(std::begin(kGridKeys), std::end(kGridKeys), ", "), ")"));
    }
    if (!value.empty() && value.front() == '[') {
      if (value.back() != ']') return bad("a list must end with ']' on the same line");
      std::vector<std::string> items;
      for (absl::string_view item :
           absl::StrSplit(value.substr(1, value.size() - 2), ',', absl::SkipWhitespace())) {
        items.emplace_back(absl::StripAsciiWhitespace(item));
      }
      value = absl::StrJoin(items, ",");
    }
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') &&
        value.back() == value.front()) {
      value = value.substr(1, value.size() - 2);
    }
    if (value.empty()) return bad(absl::StrCat("'", key, "' has no value"));
    out.push_back(absl::StrCat("--", key, "=", value));
  }
  return out;
}

// "a,b,c" (or "a|b|c" when the list holds '|', for values with commas).
std::vector<std::string> ListValues(const std::string& text) {
  const char sep = text.find('|') != std::string::npos ? '|' : ',';
  std::vector<std::string> out;
  for (absl::string_view v : absl::StrSplit(text, sep, absl::SkipWhitespace())) {
    out.emplace_back(absl::StripAsciiWhitespace(v));
  }
  return out;
}

// "1,2,5-8" -> 1,2,5,6,7,8.
constexpr size_t kMaxSeeds = 1'000'000;
absl::StatusOr<std::vector<std::string>> SeedValues(const std::string& text) {
  std::vector<std::string> out;
  for (const std::string& item : ListValues(text)) {
    const size_t dash = item.find('-', 1);
    std::optional<int64_t> a = ParseInt(item.substr(0, dash)), b = a;
    if (dash != std::string::npos) b = ParseInt(item.substr(dash + 1));
    if (!a || !b) {
      const bool digits =
          !item.empty() && item.find_first_not_of("0123456789-") == std::string::npos;
      return absl::InvalidArgumentError(absl::StrCat(
          "--seeds: '", item, "' ",
          digits ? "holds a number out of range (seeds are 0..2^63-1)" : "is not N or N-M",
          "; e.g. --seeds 1-10"));
    }
    if (*a < 0 || *b < *a) {
      return absl::InvalidArgumentError(
          absl::StrCat("--seeds: '", item, "': the range is empty (N-M needs 0 <= N <= M)"));
    }
    if (static_cast<uint64_t>(*b - *a) >= kMaxSeeds ||
        out.size() + static_cast<size_t>(*b - *a + 1) > kMaxSeeds) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--seeds: '", item, "' gives ", absl::StrCat(static_cast<uint64_t>(*b - *a) + 1),
          " seeds, over the limit of ", kMaxSeeds, " seeds in a sweep (each is a replay)"));
    }
    for (int64_t s = *a; s <= *b; ++s) out.push_back(absl::StrCat(s));
  }
  return out;
}

// "KEY=LIST;KEY=LIST" -> (KEY, values) pairs.
absl::StatusOr<std::vector<std::pair<std::string, std::vector<std::string>>>> KeyedLists(
    const char* flag, const std::string& text) {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  for (absl::string_view part : absl::StrSplit(text, ';', absl::SkipWhitespace())) {
    const std::string item(absl::StripAsciiWhitespace(part));
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, ": '", item, "' is not KEY=V1,V2,..."));
    }
    out.emplace_back(item.substr(0, eq), ListValues(item.substr(eq + 1)));
  }
  return out;
}

absl::Status CheckNumbers(const SweepAxis& axis, bool integer) {
  for (const std::string& v : axis.values) {
    const bool ok = integer ? ParseInt(v).has_value() : ParseDouble(v).has_value();
    if (!ok) {
      return absl::InvalidArgumentError(absl::StrCat("axis ", axis.name, ": '", v, "' is not ",
                                                     integer ? "an integer" : "a number"));
    }
  }
  return absl::OkStatus();
}

struct SweepFlags {
  std::string config, trace, format = "hived", queue = "fifo", seeds = "1";
  std::string policy{PolicyKindName(PolicyKind::kHived)};
  std::string scale, scale_vc, vc_cells, add_racks, vary, run_args;
  TraceTransformFlags transforms;
};

// Builds the grid from the flags; kInvalidArgument for a usage error.
absl::StatusOr<SweepGrid> BuildGrid(const SweepFlags& f) {
  SweepGrid g;
  g.config = f.config;
  g.trace = f.trace;
  g.format = f.format;
  if (!ParseTraceFormat(f.format).ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--format: unknown format '", f.format, "'"));
  }
  if (absl::StatusOr<TraceTransforms> t = ParseTraceTransforms(f.transforms); !t.ok()) {
    return t.status();
  }
  g.fixed_args = TraceTransformArgs(f.transforms);
  for (absl::string_view a : absl::StrSplit(f.run_args, ' ', absl::SkipWhitespace())) {
    g.fixed_args.emplace_back(a);
  }
  auto add = [&](SweepAxis a) -> absl::Status {
    if (a.values.empty()) return absl::InvalidArgumentError(absl::StrCat(a.name, ": no values"));
    for (const SweepAxis& b : g.axes) {
      if (b.name == a.name) {
        return absl::InvalidArgumentError(absl::StrCat("axis ", a.name, " given twice"));
      }
    }
    g.axes.push_back(std::move(a));
    return absl::OkStatus();
  };
  if (!f.scale.empty()) {
    SweepAxis a{SweepAxis::Kind::kScale, "scale", "", "", ListValues(f.scale)};
    if (absl::Status s = CheckNumbers(a, false); !s.ok()) return s;
    if (absl::Status s = add(std::move(a)); !s.ok()) return s;
  }
  absl::StatusOr<std::vector<std::pair<std::string, std::vector<std::string>>>> lists =
      KeyedLists("scale-vc", f.scale_vc);
  if (!lists.ok()) return lists.status();
  for (auto& [vc, values] : *lists) {
    SweepAxis a{SweepAxis::Kind::kScaleVc, absl::StrCat("scale:", vc), vc, "", values};
    if (absl::Status s = CheckNumbers(a, false); !s.ok()) return s;
    if (absl::Status s = add(std::move(a)); !s.ok()) return s;
  }
  lists = KeyedLists("vc-cells", f.vc_cells);
  if (!lists.ok()) return lists.status();
  for (auto& [key, values] : *lists) {
    const size_t at = key.find('@');
    SweepAxis a{SweepAxis::Kind::kVcCells, absl::StrCat("cells:", key), key.substr(0, at),
                at == std::string::npos ? "" : key.substr(at + 1), values};
    if (absl::Status s = CheckNumbers(a, true); !s.ok()) return s;
    if (absl::Status s = add(std::move(a)); !s.ok()) return s;
  }
  if (!f.add_racks.empty()) {
    const size_t eq = f.add_racks.find('=');
    const std::string chain = eq == std::string::npos ? "" : f.add_racks.substr(0, eq);
    SweepAxis a{SweepAxis::Kind::kRacks, chain.empty() ? "racks" : absl::StrCat("racks:", chain),
                chain, "",
                ListValues(eq == std::string::npos ? f.add_racks : f.add_racks.substr(eq + 1))};
    if (absl::Status s = CheckNumbers(a, true); !s.ok()) return s;
    if (absl::Status s = add(std::move(a)); !s.ok()) return s;
  }
  SweepAxis policy{SweepAxis::Kind::kRunFlag, "policy", "policy", "", ListValues(f.policy)};
  for (const std::string& v : policy.values) {
    if (absl::StatusOr<PolicyKind> k = ParsePolicyKind(v); !k.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--policy: ", k.status().message()));
    }
  }
  if (absl::Status s = add(std::move(policy)); !s.ok()) return s;
  SweepAxis queue{SweepAxis::Kind::kRunFlag, "queue", "queue", "", ListValues(f.queue)};
  for (const std::string& v : queue.values) {
    if (!ParseQueueKind(v).ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--queue: unknown queue '", v, "'"));
    }
  }
  if (absl::Status s = add(std::move(queue)); !s.ok()) return s;
  lists = KeyedLists("vary", f.vary);
  if (!lists.ok()) return lists.status();
  for (auto& [flag, values] : *lists) {
    const std::string name(absl::StripPrefix(flag, "--"));
    if (name == "config" || name == "out" || name == "trace" || name == "format" ||
        name == "seed" || name == "policy" || name == "queue") {
      return absl::InvalidArgumentError(
          absl::StrCat("--vary ", name, ": use the sweep's own flag for it"));
    }
    if (absl::Status s = add({SweepAxis::Kind::kRunFlag, name, name, "", values}); !s.ok()) {
      return s;
    }
  }
  absl::StatusOr<std::vector<std::string>> seeds = SeedValues(f.seeds);
  if (!seeds.ok()) return seeds.status();
  if (absl::Status s = add({SweepAxis::Kind::kRunFlag, "seed", "seed", "", *seeds}); !s.ok()) {
    return s;
  }
  return g;
}

std::string RunDirName(int64_t run) { return absl::StrFormat("%06d", run); }

// Removes the bulky per-job files of a finished run (summary.json stays).
void PruneRun(const fs::path& out) {
  std::error_code ec;
  for (const char* name : {"jobs.csv", "timeline.csv"}) {
    fs::remove(out / name, ec);
    fs::remove(out / "baseline-private" / name, ec);
  }
}

absl::StatusOr<std::vector<SweepRow>> ReadRunRows(const SweepGrid& grid, const fs::path& runs_dir,
                                                  int64_t run) {
  const fs::path file = runs_dir / RunDirName(run) / "out" / "summary.json";
  std::string text;
  if (absl::Status s = ReadFileToString(file.string(), &text); !s.ok()) return s;
  std::vector<std::string> params;
  const std::vector<size_t> c = grid.Coordinates(run);
  for (size_t i = 0; i < grid.axes.size(); ++i) params.push_back(grid.axes[i].values[c[i]]);
  return RowsFromSummary(text, file.string(), run, params);
}

}  // namespace

int SweepCommand(int argc, char** argv) {
  // A --grid file's keys come first, so flags on the command line override them.
  std::vector<std::string> expanded{argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    std::string path;
    if (a == "--grid" && i + 1 < argc) {
      path = argv[++i];
    } else if (absl::StartsWith(a, "--grid=")) {
      path = a.substr(7);
    } else {
      continue;
    }
    absl::StatusOr<std::vector<std::string>> keys = ReadGridFile(path);
    if (!keys.ok()) {
      std::fprintf(stderr, "hived-sim sweep: %s\n", std::string(keys.status().message()).c_str());
      return keys.status().code() == absl::StatusCode::kNotFound ? kExitFailed : kExitUsage;
    }
    expanded.insert(expanded.end(), keys->begin(), keys->end());
  }
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--grid") {
      ++i;
    } else if (!absl::StartsWith(a, "--grid=")) {
      expanded.push_back(a);
    }
  }
  std::vector<char*> args_ptr;
  for (std::string& a : expanded) args_ptr.push_back(a.data());

  SweepFlags f;
  std::string out, shard_text = "0/1", grid_path;
  int64_t jobs = DefaultJobs(), max_runs = 10000;
  bool resume = false, keep_runs = false;
  FlagParser p("hived-sim sweep", "--config FILE --trace FILE --out DIR [axes] [options]",
               "Runs a grid of replays (config variants x policies x queues x flags x seeds) as\n"
               "parallel child processes and writes a tidy CSV (one row per run x VC, every\n"
               "summary metric) and a summary with 95% confidence intervals across seeds.\n"
               "Lists are comma separated ('|' when values hold commas); several KEY=LIST\n"
               "axes of one flag are separated by ';'. See docs/planning.md.");
  p.String("grid", &grid_path, "FILE", "read flags from a YAML file (key: value or [list])");
  p.String("config", &f.config, "FILE", "base cluster config (HiveD YAML)");
  p.String("trace", &f.trace, "FILE", "job trace");
  p.String("format", &f.format, "hived|philly", "trace format (default hived)");
  p.String("out", &out, "DIR", "output folder (grid.txt, sweep.csv, summary.csv, runs/)");
  p.String("policy", &f.policy, "LIST",
           absl::StrCat("axis: sharing policies among ", JobPolicyNames(", "), " (default ",
                        f.policy, ")"));
  p.String("queue", &f.queue, "LIST", "axis: queue policies (default fifo)");
  p.String("seeds", &f.seeds, "LIST", "axis: seeds, N or N-M items (default 1)");
  p.String("scale", &f.scale, "LIST", "axis: scale every VC by these factors");
  p.String("scale-vc", &f.scale_vc, "VC=LIST;...", "axis: scale one VC by these factors");
  p.String("vc-cells", &f.vc_cells, "VC[@TYPE]=LIST;...",
           "axis: one VC at N cells of TYPE (default its lowest type); adds a missing VC");
  p.String("add-racks", &f.add_racks, "[CHAIN=]LIST",
           "axis: top-level cells added to a chain (negative removes; default first chain)");
  p.String("vary", &f.vary, "FLAG=LIST;...", "axis: any `run` flag, e.g. mtbf=0,100");
  p.String("run-args", &f.run_args, "ARGS",
           "fixed `run` flags for every run, e.g. --baseline=none");
  RegisterTraceTransformFlags(&p, &f.transforms);
  p.Int("jobs", &jobs, "runs at once (default: the number of cores)");
  p.String("shard", &shard_text, "I/N", "run only the I-th of N slices (0-based; merge after)");
  p.Int("max-runs", &max_runs, "refuse grids with more runs (default 10000)");
  p.Bool("resume", &resume, "continue an interrupted sweep in --out; finished runs are kept");
  p.Bool("keep-runs", &keep_runs, "keep each run's jobs.csv and timeline.csv");
  std::vector<std::string> positional;
  if (int code = p.Parse(static_cast<int>(args_ptr.size()), args_ptr.data(), &positional);
      code >= 0) {
    return code;
  }
  if (!positional.empty()) {
    return p.UsageError(absl::StrCat("unexpected argument '", positional[0], "'"));
  }
  if (f.config.empty() || f.trace.empty() || out.empty()) {
    return p.UsageError("--config, --trace and --out are required");
  }
  if (jobs < 1 || jobs > 4096) return p.UsageError("--jobs must be 1..4096");
  const std::optional<SweepShard> shard = ParseSweepShard(shard_text);
  if (!shard)
    return p.UsageError(absl::StrCat("--shard '", shard_text, "' is not I/N, 0 <= I < N"));
  absl::StatusOr<SweepGrid> grid = BuildGrid(f);
  if (!grid.ok()) return p.UsageError(grid.status().message());
  const int64_t total = grid->RunCount();
  if (total > max_runs) {
    std::vector<std::string> dims;
    for (const SweepAxis& a : grid->axes) dims.push_back(absl::StrCat(a.values.size()));
    return p.UsageError(absl::StrCat("the grid expands to ", total, " runs (",
                                     absl::StrJoin(dims, " x "), "), more than --max-runs ",
                                     max_runs, "; nothing was run"));
  }
  const char* kCmd = "hived-sim sweep";
  absl::StatusOr<ClusterSpec> base = LoadClusterSpecFile(f.config);
  if (!base.ok()) return Fail(kCmd, base.status().message());
  // Moved VCs first: the axes resize the moved config (each run re-applies the move, which
  // then changes nothing, and rewrites the trace).
  if (absl::StatusOr<TraceTransforms> t = ParseTraceTransforms(f.transforms); t.ok()) {
    if (absl::Status s = ApplyVcMoves(*t, &*base); !s.ok()) {
      return Fail(kCmd, absl::StrCat(f.config, ": ", s.message()));
    }
  }
  if (std::error_code ec; !fs::is_regular_file(f.trace, ec)) {
    return Fail(kCmd, absl::StrCat(f.trace, ": no such trace file"));
  }

  // The runs of this shard, their configs built (and validated) before anything runs.
  std::vector<int64_t> mine;
  for (int64_t r = shard->index; r < total; r += shard->count) mine.push_back(r);
  std::map<std::vector<size_t>, std::string> yaml_by_config;
  std::vector<std::string> yaml(mine.size());
  for (size_t i = 0; i < mine.size(); ++i) {
    std::vector<size_t> key = grid->Coordinates(mine[i]);
    for (size_t a = 0; a < key.size(); ++a) {
      if (grid->axes[a].kind == SweepAxis::Kind::kRunFlag) key[a] = 0;
    }
    auto it = yaml_by_config.find(key);
    if (it == yaml_by_config.end()) {
      absl::StatusOr<ClusterSpec> spec = BuildRunSpec(*grid, *base, mine[i]);
      if (!spec.ok()) return Fail(kCmd, spec.status().message());
      it = yaml_by_config.emplace(key, ClusterSpecToYaml(*spec)).first;
    }
    yaml[i] = it->second;
  }

  const fs::path dir(out);
  const fs::path runs_dir = dir / "runs";
  const std::string fingerprint = grid->Fingerprint();
  const std::string shard_line = absl::StrCat(shard->index, "/", shard->count, "\n");
  {
    std::string old;
    if (ReadFileToString((dir / "grid.txt").string(), &old).ok()) {
      if (!resume) {
        return Fail(kCmd, absl::StrCat(out,
                                       " already holds a sweep (grid.txt): pass --resume to "
                                       "finish it, or choose another --out"));
      }
      std::string old_shard;
      if (old != fingerprint || !ReadFileToString((dir / "shard.txt").string(), &old_shard).ok() ||
          old_shard != shard_line) {
        return Fail(kCmd, absl::StrCat("--resume: ", out,
                                       " holds a different grid or shard; use another --out"));
      }
    }
  }
  std::error_code ec;
  fs::create_directories(runs_dir, ec);
  if (ec) return Fail(kCmd, absl::StrCat("cannot create ", runs_dir.string(), ": ", ec.message()));
  for (absl::Status s : {WriteFileAtomically((dir / "grid.txt").string(), fingerprint),
                         WriteFileAtomically((dir / "shard.txt").string(), shard_line)}) {
    if (!s.ok()) return Fail(kCmd, s.message());
  }

  std::vector<ChildRun> children;
  std::vector<int64_t> child_run;
  int64_t skipped = 0;
  for (size_t i = 0; i < mine.size(); ++i) {
    const fs::path run_dir = runs_dir / RunDirName(mine[i]);
    if (resume && ReadRunRows(*grid, runs_dir, mine[i]).ok()) {
      ++skipped;
      continue;
    }
    fs::remove_all(run_dir / "out", ec);
    fs::create_directories(run_dir, ec);
    if (absl::Status s = WriteFileAtomically((run_dir / "config.yaml").string(), yaml[i]);
        !s.ok()) {
      return Fail(kCmd, s.message());
    }
    ChildRun c;
    c.args = RunArgs(*grid, mine[i]);
    c.args.insert(c.args.end(), {"--config", (run_dir / "config.yaml").string(), "--out",
                                 (run_dir / "out").string()});
    c.dir = run_dir.string();
    c.label = absl::StrCat("run ", mine[i], " (", grid->Describe(mine[i]), ")");
    children.push_back(std::move(c));
    child_run.push_back(mine[i]);
  }
  const auto start = std::chrono::steady_clock::now();
  absl::Status ran = RunChildren(SelfExe(), children, static_cast<int>(jobs), "sweep",
                                 [&](size_t i) -> absl::Status {
                                   if (!keep_runs) PruneRun(fs::path(children[i].dir) / "out");
                                   return absl::OkStatus();
                                 });
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!ran.ok()) {
    return Fail(kCmd, absl::StrCat(ran.message(), "\nfinished runs are kept: rerun with --resume"));
  }
  std::vector<SweepRow> rows;
  for (int64_t r : mine) {
    absl::StatusOr<std::vector<SweepRow>> got = ReadRunRows(*grid, runs_dir, r);
    if (!got.ok()) return Fail(kCmd, got.status().message());
    rows.insert(rows.end(), got->begin(), got->end());
  }
  if (absl::Status s = WriteSweepResults(out, *grid, rows); !s.ok()) return Fail(kCmd, s.message());
  std::fputs(SummaryText(grid->AxisNames(), SummarizeRows(grid->AxisNames(), rows), false).c_str(),
             stdout);
  std::fprintf(
      stderr,
      "%zu runs%s in %.2f s wall with --jobs %lld (%.2f runs/s); %lld already finished; "
      "wrote %s/{sweep.csv,summary.csv,summary.txt}\n",
      children.size(),
      shard->count > 1 ? absl::StrCat(" of shard ", shard->index, "/", shard->count).c_str() : "",
      wall, static_cast<long long>(jobs),
      static_cast<double>(children.size()) / std::max(wall, 1e-9), static_cast<long long>(skipped),
      out.c_str());
  return kExitOk;
}

}  // namespace hived::sim

#include "sim/planning/plan_output.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "hived/config.h"
#include "sim/cluster/spec_edit.h"
#include "sim/common/csv.h"
#include "sim/planning/plan.h"
#include "sim/planning/plan_cost.h"
#include "sim/planning/plan_search.h"
#include "sim/planning/sweep_runner.h"
#include "sim/trace/trace_reader.h"

namespace hived::sim {

namespace fs = std::filesystem;

std::vector<std::vector<double>> WaitByHour(const std::string& jobs_csv, const std::string& vc) {
  std::vector<std::vector<double>> sum(7, std::vector<double>(24, 0));
  std::vector<std::vector<int64_t>> n(7, std::vector<int64_t>(24, 0));
  size_t vc_col = 1, submit_col = 5, wait_col = 8;
  bool header = true;
  std::vector<CsvField> f;
  for (absl::string_view line : absl::StrSplit(jobs_csv, '\n', absl::SkipEmpty())) {
    SplitCsvLine(std::string_view(line.data(), line.size()), &f);
    if (header) {
      for (size_t i = 0; i < f.size(); ++i) {
        if (f[i].text == "vc") vc_col = i;
        if (f[i].text == "submit") submit_col = i;
        if (f[i].text == "queuing_delay") wait_col = i;
      }
      header = false;
      continue;
    }
    if (f.size() <= std::max({vc_col, submit_col, wait_col}) || f[vc_col].text != vc) continue;
    const std::optional<double> submit = ParseDouble(f[submit_col].text);
    const std::optional<double> wait = ParseDouble(f[wait_col].text);
    if (!submit || !wait || *submit < 0) continue;
    const auto hour = static_cast<int64_t>(*submit / 3600);
    const auto h = static_cast<size_t>(hour % 24), d = static_cast<size_t>((hour / 24) % 7);
    sum[d][h] += *wait;
    ++n[d][h];
  }
  for (size_t d = 0; d < 7; ++d) {
    for (size_t h = 0; h < 24; ++h) {
      sum[d][h] = n[d][h] > 0 ? sum[d][h] / static_cast<double>(n[d][h]) : -1;
    }
  }
  return sum;
}

absl::StatusOr<std::vector<std::string>> WaitHeatmaps(const std::string& jobs_csv_path,
                                                      const std::vector<std::string>& vcs,
                                                      const std::string& dir) {
  std::string text;
  if (absl::Status s = ReadFileToString(jobs_csv_path, &text); !s.ok()) return s;
  std::vector<std::string> drawn;
  for (const std::string& vc : vcs) {
    const std::vector<std::vector<double>> grid = WaitByHour(text, vc);
    bool any = false;
    std::string data = "# hour day mean_wait_hours (NaN: no jobs)\n";
    for (size_t d = 0; d < 7; ++d) {
      for (size_t h = 0; h < 24; ++h) {
        any |= grid[d][h] >= 0;
        absl::StrAppend(
            &data, h, " ", d, " ",
            grid[d][h] < 0 ? std::string("NaN") : absl::StrFormat("%.4f", grid[d][h] / 3600), "\n");
      }
      data += "\n";
    }
    if (!any) continue;
    const std::string name = absl::StrCat("wait-", vc);
    const std::string script = absl::StrCat(
        "set terminal pngcairo size 900,420\nset output ", GnuplotQuote(name + ".png"), "\n",
        "set termoption noenhanced\n", "set title ",
        GnuplotQuote(absl::StrCat("VC ", vc, ": mean queuing delay (hours) by submission hour")),
        "\n", "set xlabel 'hour since the trace''s first submission, mod 24'\n",
        "set ylabel 'day (from the first submission), mod 7'\n",
        "set xrange [-0.5:23.5]\nset yrange [-0.5:6.5]\nset xtics 0,2,23\nset ytics 0,1,6\n",
        "set cblabel 'mean wait (h)'\nset palette defined (0 '#ffffcc', 1 '#fd8d3c', 2 "
        "'#800026')\n",
        "set cbrange [0:*]\nset object 1 rectangle from graph 0,0 to graph 1,1 behind fc rgb "
        "'#dddddd'\n",
        "set label 1 'grey: no jobs submitted' at screen 0.01, screen 0.03\n", "plot ",
        GnuplotQuote(name + ".dat"), " using 1:2:3 with image notitle\n");
    if (absl::Status s = RenderGnuplot(dir, name, data, script); !s.ok()) {
      std::fprintf(stderr, "hived-sim plan: no heatmap for VC %s: %s\n", vc.c_str(),
                   std::string(s.message()).c_str());
      continue;
    }
    drawn.push_back(name + ".png");
  }
  return drawn;
}

std::string InputComments(const std::string& config_text) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(config_text, '\n')) {
    if (!absl::StartsWith(line, "#")) break;
    absl::StrAppend(&out, "# | ", absl::StripPrefix(absl::StripPrefix(line, "#"), " "), "\n");
  }
  if (out.empty()) return out;
  return absl::StrCat("# Input config comments (they describe the input, not this file):\n", out);
}

absl::Status WriteReportMd(const std::string& dir, const std::string& command,
                           const std::string& target, const std::vector<PlanMdRow>& rows,
                           const std::vector<std::string>& vcs, const std::string& report_txt) {
  // The "how sure" column only when the plan resampled the trace (--resamples).
  const bool sure =
      std::any_of(rows.begin(), rows.end(), [](const PlanMdRow& r) { return !r.sure.empty(); });
  std::string md = absl::StrCat("# Plan: ", target, "\n\n```\n", command, "\n```\n\n",
                                "| VC | sized in | now | chosen | GPUs | metric there | cost |",
                                sure ? " meets in resamples; 95% level |\n" : "\n",
                                "|---|---|---|---|---|---|---|", sure ? "---|\n" : "\n");
  for (const PlanMdRow& r : rows) {
    absl::StrAppend(&md, "| `", r.vc, "` | ", r.unit_type, " | ", r.now, " | ", r.chosen, " | ",
                    r.gpus, " | ", r.value, " | ", r.cost.empty() ? "–" : r.cost, " |",
                    sure ? absl::StrCat(" ", r.sure.empty() ? "–" : r.sure, " |") : "", "\n");
  }
  md += "\nThe sized config is `sized.yaml` beside this file; every probe is in `report.csv`.\n";
  for (const std::string& vc : vcs) {
    std::error_code ec;
    for (const std::string& png :
         {absl::StrCat("plan-", vc, ".png"), absl::StrCat("wait-", vc, ".png")}) {
      if (fs::exists(fs::path(dir) / png, ec)) {
        absl::StrAppend(&md, "\n![", png, "](", png, ")\n");
      }
    }
  }
  absl::StrAppend(&md, "\n## The full report\n\n```\n", report_txt, "```\n");
  return WriteFileAtomically((fs::path(dir) / "report.md").string(), md);
}

PlanMdRow MdRow(const PlanContext& ctx, const CostModel& cost, const VcPlan& plan) {
  PlanMdRow r{
      plan.vc, plan.current.unit_type, absl::StrCat(plan.current.units), "none meets", "", "", "",
      ""};
  if (!plan.chosen) return r;
  const int64_t gpus = *plan.chosen * plan.leaves_per_unit;
  r.chosen = absl::StrCat(*plan.chosen);
  r.gpus = absl::StrCat(gpus);
  const PlanProbe& p = plan.probes.at(*plan.chosen);
  r.value = p.value ? ShowValue(ctx.resolved_metric, *p.value) : "-";
  if (const std::optional<double> usd =
          cost.UsdPerHour(VcLeafType(ctx.base, plan.current.unit_type), gpus)) {
    r.cost = absl::StrFormat("$%.2f/h", *usd);
  }
  return r;
}

namespace {

// `arg` as a POSIX shell word (single quotes unless it is plain).
std::string ShellQuote(const std::string& arg) {
  const bool plain = !arg.empty() && arg.find_first_not_of(
                                         "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                         "0123456789_-./=,:@%+") == std::string::npos;
  if (plain) return arg;
  return absl::StrCat("'", absl::StrReplaceAll(arg, {{"'", "'\\''"}}), "'");
}

}  // namespace

std::string PlanCommandLine(int argc, char** argv) {
  std::vector<std::string> command{"hived-sim"};
  for (int i = 0; i < argc; ++i) {
    // A resumed plan's outputs equal the uninterrupted run's: --resume is not recorded.
    const std::string arg = argv[i];
    if (arg != "--resume" && arg != "--resume=true") command.push_back(ShellQuote(arg));
  }
  return absl::StrJoin(command, " ");
}

std::string PhysicalChangeText(const ClusterSpec& base, const ClusterSpec& sized) {
  std::string phys = "physical cluster for the sized VCs (HiveD's capacity rule):\n";
  const auto before = TopCellsPerChain(base);
  for (const auto& [chain, now] : TopCellsPerChain(sized)) {
    int64_t was = 0;
    for (const auto& [c, n] : before) {
      if (c == chain) was = n;
    }
    const int64_t nodes = NodesPerTopCell(sized, chain);
    absl::StrAppend(&phys, absl::StrFormat("  %s: %d top-level cells (was %d): %s%d (%s%d nodes)\n",
                                           chain, now, was, now >= was ? "+" : "", now - was,
                                           now >= was ? "+" : "", (now - was) * nodes));
  }
  for (const auto& [chain, was] : before) {
    bool kept = false;
    for (const auto& [c, n] : TopCellsPerChain(sized)) kept |= c == chain;
    if (!kept) absl::StrAppend(&phys, "  ", chain, ": all ", was, " top-level cells removed\n");
  }
  return phys;
}

std::string Fnv1a64Hex(absl::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return absl::StrFormat("%016x", h);
}

absl::StatusOr<std::string> PlanDate(const char* source_date_epoch, int64_t now) {
  int64_t t = now;
  if (source_date_epoch != nullptr) {
    const std::optional<int64_t> v = ParseInt(source_date_epoch);
    // Up to the year 9999, so the date keeps its four-digit year.
    if (!v || *v < 0 || *v > int64_t{253402300799}) {
      return absl::InvalidArgumentError(
          absl::StrCat("SOURCE_DATE_EPOCH '", source_date_epoch,
                       "' is not a number of seconds since 1970-01-01 UTC (0..253402300799); "
                       "unset it for the current date"));
    }
    t = *v;
  }
  const std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return std::string(buf);
}

std::string SizedHeader(const std::string& command, const std::string& date, const PlanContext& ctx,
                        absl::string_view trace_bytes, const std::vector<std::string>& results,
                        const std::string& price_text, const std::string& speed_text,
                        const std::vector<std::string>& skipped) {
  std::string header =
      absl::StrCat("# Sized by: ", command, "\n# Date: ", date, "\n# Trace: ", ctx.trace, " (",
                   ctx.format.empty() ? "hived" : ctx.format, "), ", trace_bytes.size(),
                   " bytes, FNV-1a 64 ", Fnv1a64Hex(trace_bytes), "\n# Target: ", ctx.target.text,
                   " (metric ", ctx.resolved_metric, ")\n");
  for (const std::string& r : results) absl::StrAppend(&header, "# ", r, "\n");
  if (!price_text.empty()) {
    absl::StrAppend(&header, "# Prices (USD per GPU-hour): ", price_text, "\n");
  }
  if (!speed_text.empty()) absl::StrAppend(&header, "# GPU speeds: ", speed_text, "\n");
  if (!skipped.empty()) {
    absl::StrAppend(&header, "# Skipped (too few jobs): ", absl::StrJoin(skipped, ", "), "\n");
  }
  return header;
}

namespace {

// One line of a block-style YAML text that holds a key or starts a sequence item.
struct YamlLine {
  size_t line = 0;
  size_t indent = 0;       // of the key (or of the "- " for an item)
  std::string path;        // "/physicalCluster/physicalCells/[3]/cellType"
  bool item = false;       // a "- " line's item entry (path ends in "[i]")
  std::string value;       // the scalar after "key: " (trailing comment cut), "" for a parent
  size_t value_begin = 0;  // in the line
  size_t value_end = 0;
};

size_t IndentOf(absl::string_view l) {
  size_t i = 0;
  while (i < l.size() && l[i] == ' ') ++i;
  return i;
}

bool Skipped(absl::string_view l) {
  const size_t i = IndentOf(l);
  return i == l.size() || l[i] == '#';
}

std::string Unquoted(absl::string_view k) {
  if (k.size() >= 2 && (k.front() == '"' || k.front() == '\'') && k.back() == k.front()) {
    k = k.substr(1, k.size() - 2);
  }
  return std::string(k);
}

// The keys and items of `lines` by path; nullopt for what this reader does not follow (flow
// collections spanning lines, block scalars, anchors, tabs, documents).
std::optional<std::vector<YamlLine>> YamlLines(const std::vector<std::string>& lines) {
  struct Frame {
    size_t indent;
    std::string path;
    bool item;
  };
  std::vector<Frame> stack;
  std::map<std::string, int64_t> items;
  std::vector<YamlLine> out;
  for (size_t n = 0; n < lines.size(); ++n) {
    const std::string& l = lines[n];
    if (Skipped(l)) continue;
    if (l.find('\t') != std::string::npos || absl::StartsWith(l, "---") ||
        absl::StartsWith(l, "...")) {
      return std::nullopt;
    }
    size_t at = IndentOf(l);
    auto parent = [&] { return stack.empty() ? std::string() : stack.back().path; };
    while (at + 1 < l.size() && l[at] == '-' && l[at + 1] == ' ') {
      while (!stack.empty() &&
             (stack.back().indent > at || (stack.back().indent == at && stack.back().item))) {
        stack.pop_back();
      }
      const std::string seq = parent();
      YamlLine y{n, at, absl::StrCat(seq, "/[", items[seq]++, "]"), true, "", 0, 0};
      out.push_back(y);
      stack.push_back({at, y.path, true});
      at += 2;
      while (at < l.size() && l[at] == ' ') ++at;
    }
    if (at >= l.size() || l[at] == '#') continue;
    // "key: value", "key:" or a scalar item.
    size_t colon = std::string::npos;
    for (size_t i = at; i < l.size(); ++i) {
      if (l[i] == '#' && i > at && l[i - 1] == ' ') break;
      if (l[i] == ':' && (i + 1 == l.size() || l[i + 1] == ' ')) {
        colon = i;
        break;
      }
    }
    if (colon == std::string::npos) continue;  // a scalar item: its item entry is enough
    while (!stack.empty() && stack.back().indent >= at &&
           !(stack.back().item && stack.back().indent < at)) {
      stack.pop_back();
    }
    YamlLine y;
    y.line = n;
    y.indent = at;
    y.path = absl::StrCat(
        parent(), "/",
        Unquoted(absl::StripTrailingAsciiWhitespace(absl::string_view(l).substr(at, colon - at))));
    size_t vb = colon + 1;
    while (vb < l.size() && l[vb] == ' ') ++vb;
    size_t ve = l.find(" #", vb);
    if (ve == std::string::npos) ve = l.size();
    while (ve > vb && l[ve - 1] == ' ') --ve;
    if (vb < l.size() && l[vb] == '#') ve = vb;
    y.value = l.substr(vb, ve - vb);
    if (absl::StartsWith(y.value, "|") || absl::StartsWith(y.value, ">") ||
        absl::StartsWith(y.value, "&") || absl::StartsWith(y.value, "*") ||
        absl::StartsWith(y.value, "<<")) {
      return std::nullopt;
    }
    y.value_begin = vb;
    y.value_end = ve;
    out.push_back(y);
    stack.push_back({at, y.path, false});
  }
  return out;
}

// The last line of the block that starts at `first` (indent `indent`): the line before the
// next content line at that indent or less, comments and blank lines before it left out.
size_t BlockEnd(const std::vector<std::string>& lines, size_t first, size_t indent) {
  size_t end = first;
  for (size_t n = first + 1; n < lines.size(); ++n) {
    if (Skipped(lines[n])) continue;
    if (IndentOf(lines[n]) <= indent) break;
    end = n;
  }
  return end;
}

}  // namespace

std::optional<std::string> MergeIntoInput(const std::string& input_text,
                                          const std::string& sized_yaml) {
  const std::vector<std::string> in = absl::StrSplit(input_text, '\n');
  const std::vector<std::string> want = absl::StrSplit(sized_yaml, '\n');
  const std::optional<std::vector<YamlLine>> a = YamlLines(in), b = YamlLines(want);
  if (!a || !b) return std::nullopt;
  std::map<std::string, const YamlLine*> have;
  for (const YamlLine& y : *a) have[y.path] = &y;
  std::map<std::string, const YamlLine*> wanted;
  for (const YamlLine& y : *b) wanted[y.path] = &y;
  std::vector<std::string> out = in;
  std::vector<bool> drop(in.size(), false);
  std::map<size_t, std::vector<std::string>> insert_after;  // input line -> lines to add
  // Changed scalars, in place.
  for (const YamlLine& y : *a) {
    auto it = wanted.find(y.path);
    if (y.item || it == wanted.end() || it->second->value == y.value) continue;
    if (y.value.empty() || it->second->value.empty()) return std::nullopt;
    out[y.line] = absl::StrCat(in[y.line].substr(0, y.value_begin), it->second->value,
                               in[y.line].substr(y.value_end));
  }
  // Items the sized config no longer has: their lines go.
  for (const YamlLine& y : *a) {
    if (!y.item || wanted.count(y.path) > 0) continue;
    for (size_t n = y.line; n <= BlockEnd(in, y.line, y.indent); ++n) drop[n] = true;
  }
  // Items the sized config adds: after the input's last item of that sequence, re-indented.
  size_t appended_to = 0;  // lines of `want` before this are inside an item already appended
  for (const YamlLine& y : *b) {
    if (!y.item || have.count(y.path) > 0 || y.line < appended_to) continue;
    const std::string seq = y.path.substr(0, y.path.rfind('/'));
    const YamlLine* last = nullptr;
    for (const YamlLine& x : *a) {
      if (x.item && x.path.substr(0, x.path.rfind('/')) == seq) last = &x;
    }
    if (last == nullptr) return std::nullopt;
    const size_t end = BlockEnd(in, last->line, last->indent);
    appended_to = BlockEnd(want, y.line, y.indent) + 1;
    for (size_t n = y.line; n < appended_to; ++n) {
      const absl::string_view l = want[n];
      const size_t i = IndentOf(l);
      if (i < y.indent) return std::nullopt;
      insert_after[end].push_back(
          absl::StrCat(std::string(last->indent + (i - y.indent), ' '), l.substr(i)));
    }
  }
  std::string text;
  for (size_t n = 0; n < out.size(); ++n) {
    if (!drop[n]) absl::StrAppend(&text, out[n], n + 1 < out.size() ? "\n" : "");
    if (auto it = insert_after.find(n); it != insert_after.end()) {
      if (n + 1 == out.size()) text += "\n";
      for (const std::string& l : it->second) absl::StrAppend(&text, l, "\n");
    }
  }
  text = YamlWithStringVcNames(text);
  // The check: the edited input loads to exactly the spec the sized config loads to.
  absl::StatusOr<ClusterSpec> got = LoadClusterSpecString(text, "sized.yaml");
  absl::StatusOr<ClusterSpec> ref = LoadClusterSpecString(sized_yaml, "sized.yaml");
  if (!got.ok() || !ref.ok() || ClusterSpecToYaml(*got) != ClusterSpecToYaml(*ref)) {
    return std::nullopt;
  }
  return text;
}

std::string SizedYamlText(const std::string& header, const std::string& input_text,
                          const ClusterSpec& sized) {
  const std::string today = YamlWithStringVcNames(ClusterSpecToYaml(sized));
  if (std::optional<std::string> merged = MergeIntoInput(input_text, today)) {
    return absl::StrCat(header, "# The input config follows, with the sized values edited in.\n",
                        *merged);
  }
  return absl::StrCat(header,
                      "# The input config's comments could not be kept (it could not be edited "
                      "line by line).\n",
                      InputComments(input_text), today);
}

}  // namespace hived::sim

#include "sim/planning/plan_output.h"

#include <cstdio>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "sim/common/csv.h"
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
  std::string md = absl::StrCat("# Plan: ", target, "\n\n```\n", command, "\n```\n\n",
                                "| VC | sized in | now | chosen | GPUs | metric there | cost |\n",
                                "|---|---|---|---|---|---|---|\n");
  for (const PlanMdRow& r : rows) {
    absl::StrAppend(&md, "| `", r.vc, "` | ", r.unit_type, " | ", r.now, " | ", r.chosen, " | ",
                    r.gpus, " | ", r.value, " | ", r.cost.empty() ? "–" : r.cost, " |\n");
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
      plan.vc, plan.current.unit_type, absl::StrCat(plan.current.units), "none meets", "", "", ""};
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

}  // namespace hived::sim

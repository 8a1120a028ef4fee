// `hived-sim validate`: see validate_command.h. Uses the public API (hived/config.h) and the
// bounded file reader of strict_yaml/.
#include "sim/cli/validate_command.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hived/config.h"
#include "sim/common/json.h"
#include "strict_yaml/strict_yaml.h"

namespace hived::sim {
namespace {

constexpr char kUsage[] =
    "usage: hived-sim validate CONFIG [--json]\n"
    "\n"
    "Checks a HiveD cluster config (physicalCluster + virtualClusters) and prints, per chain\n"
    "and level, the physical cells, the cells left after reservations at higher levels\n"
    "(available), each VC's reserved cells, their total and the slack. When the config is\n"
    "invalid, prints every error as `file:line:col: path: message (hint)`.\n"
    "\n"
    "options:\n"
    "  --json     print the report (or the errors) as JSON on stdout\n"
    "  --max-input-bytes N\n"
    "             refuse a config file larger than N bytes (default 64 MiB; checked while\n"
    "             reading)\n"
    "  -h, --help print this help\n"
    "\n"
    "exit status: 0 valid, 1 invalid or unreadable, 2 usage error\n";

std::string ErrorsJson(const std::vector<ConfigError>& errors) {
  std::string out = "[";
  for (size_t i = 0; i < errors.size(); ++i) {
    const ConfigError& e = errors[i];
    absl::StrAppend(&out, i == 0 ? "\n    " : ",\n    ", "{\"file\": ", JsonQuote(e.file),
                    ", \"line\": ", e.line, ", \"column\": ", e.column,
                    ", \"path\": ", JsonQuote(e.yaml_path), ", \"message\": ", JsonQuote(e.message),
                    ", \"hint\": ", JsonQuote(e.hint), "}");
  }
  absl::StrAppend(&out, errors.empty() ? "]" : "\n  ]");
  return out;
}

std::string ReportJson(const CapacityReport& report) {
  std::string out = "[";
  for (size_t c = 0; c < report.chains.size(); ++c) {
    const ChainCapacity& chain = report.chains[c];
    absl::StrAppend(&out, c == 0 ? "\n    " : ",\n    ", "{\"chain\": ", JsonQuote(chain.chain),
                    ", \"leafCellType\": ", JsonQuote(chain.leaf_cell_type),
                    ", \"topCells\": ", chain.top_cells, ", \"levels\": [");
    for (size_t l = 0; l < chain.levels.size(); ++l) {
      const CapacityLevel& level = chain.levels[l];
      absl::StrAppend(&out, l == 0 ? "\n      " : ",\n      ", "{\"level\": ", level.level,
                      ", \"cellType\": ", JsonQuote(level.cell_type),
                      ", \"isNodeLevel\": ", level.is_node_level ? "true" : "false",
                      ", \"physical\": ", level.physical_cells,
                      ", \"available\": ", level.available_cells, ", \"reserved\": {");
      for (size_t v = 0; v < report.vc_names.size(); ++v) {
        absl::StrAppend(&out, v == 0 ? "" : ", ", JsonQuote(report.vc_names[v]), ": ",
                        level.reserved[v]);
      }
      absl::StrAppend(&out, "}, \"totalReserved\": ", level.total_reserved,
                      ", \"slack\": ", level.slack, "}");
    }
    absl::StrAppend(&out, chain.levels.empty() ? "]}" : "\n    ]}");
  }
  absl::StrAppend(&out, report.chains.empty() ? "]" : "\n  ]");
  return out;
}

// A text table with right-aligned numeric columns.
std::string ReportText(const CapacityReport& report) {
  std::string out;
  for (const ChainCapacity& chain : report.chains) {
    absl::StrAppend(&out, "chain ", chain.chain, " (leaf cell type ", chain.leaf_cell_type, ", ",
                    chain.top_cells, " top-level cell", chain.top_cells == 1 ? "" : "s", ")\n");
    std::vector<std::string> header = {"level", "cell type", "physical", "available"};
    for (const std::string& vc : report.vc_names) header.push_back(vc);
    header.push_back("reserved");
    header.push_back("slack");
    std::vector<std::vector<std::string>> rows = {header};
    for (const CapacityLevel& level : chain.levels) {
      std::vector<std::string> row = {
          absl::StrCat(level.level), absl::StrCat(level.cell_type, level.is_node_level ? " *" : ""),
          absl::StrCat(level.physical_cells), absl::StrCat(level.available_cells)};
      for (int64_t r : level.reserved) row.push_back(absl::StrCat(r));
      row.push_back(absl::StrCat(level.total_reserved));
      row.push_back(absl::StrCat(level.slack));
      rows.push_back(std::move(row));
    }
    std::vector<size_t> width(header.size(), 0);
    for (const auto& row : rows) {
      for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
    }
    for (const auto& row : rows) {
      std::string line = " ";
      for (size_t i = 0; i < row.size(); ++i) {
        const std::string pad(width[i] - row[i].size(), ' ');
        // The cell type column is left-aligned, numbers right-aligned.
        absl::StrAppend(&line, " ", i == 1 ? row[i] + pad : pad + row[i]);
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      absl::StrAppend(&out, line, "\n");
    }
    absl::StrAppend(&out, "\n");
  }
  absl::StrAppend(&out,
                  "* node level. available: cells of the level not inside a cell reserved at a "
                  "higher level;\nslack = available - reserved (HiveD's top-down capacity "
                  "rule).\n");
  return out;
}

}  // namespace

int ValidateCommand(int argc, char** argv) {
  std::string path;
  bool json = false;
  ConfigLimits limits;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--json") {
      json = true;
    } else if (arg == "--max-input-bytes") {
      if (i + 1 >= argc || !absl::SimpleAtoi(argv[i + 1], &limits.max_input_bytes) ||
          limits.max_input_bytes <= 0) {
        std::fprintf(stderr, "hived-sim validate: --max-input-bytes needs a positive integer\n");
        return 2;
      }
      ++i;
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "hived-sim validate: unknown option '%s'\n\n%s", arg.c_str(), kUsage);
      return 2;
    } else if (path.empty()) {
      path = arg;
    } else {
      std::fprintf(stderr, "hived-sim validate: one CONFIG only, got '%s' too\n\n%s", arg.c_str(),
                   kUsage);
      return 2;
    }
  }
  if (path.empty()) {
    std::fprintf(stderr, "hived-sim validate: missing CONFIG\n\n%s", kUsage);
    return 2;
  }
  absl::StatusOr<std::string> contents =
      yaml_internal::ReadFileLimited(path, limits.max_input_bytes, "config");
  if (!contents.ok()) {
    std::fprintf(stderr, "hived-sim validate: cannot read '%s': %s\n", path.c_str(),
                 std::string(contents.status().message()).c_str());
    return 1;
  }
  const ConfigLoadResult result = LoadClusterSpecDetailed(*contents, path, limits);
  if (json) {
    std::string out = absl::StrCat("{\n  \"file\": ", JsonQuote(path),
                                   ",\n  \"valid\": ", result.ok() ? "true" : "false",
                                   ",\n  \"errors\": ", ErrorsJson(result.errors));
    if (result.ok()) {
      const CapacityReport report = ComputeCapacityReport(result.spec);
      absl::StrAppend(&out, ",\n  \"virtualClusters\": [");
      for (size_t v = 0; v < report.vc_names.size(); ++v) {
        absl::StrAppend(&out, v == 0 ? "" : ", ", JsonQuote(report.vc_names[v]));
      }
      absl::StrAppend(&out, "],\n  \"chains\": ", ReportJson(report));
    }
    absl::StrAppend(&out, "\n}\n");
    std::fputs(out.c_str(), stdout);
    return result.ok() ? 0 : 1;
  }
  if (!result.ok()) {
    for (const ConfigError& error : result.errors) {
      std::fprintf(stderr, "%s\n", error.ToString().c_str());
    }
    std::fprintf(stderr, "%s: %zu error%s\n", path.c_str(), result.errors.size(),
                 result.errors.size() == 1 ? "" : "s");
    return 1;
  }
  std::printf("%s: valid\n\n%s", path.c_str(),
              ReportText(ComputeCapacityReport(result.spec)).c_str());
  return 0;
}

}  // namespace hived::sim

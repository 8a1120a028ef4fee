#include "sim/trace/node_events.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "sim/common/csv.h"

namespace hived::sim {

absl::StatusOr<std::vector<NodeEvent>> ParseNodeEvents(std::string_view text,
                                                       std::string_view file_name) {
  if (absl::Status s = CheckUtf8Start(text, file_name); !s.ok()) return s;
  LineReader reader(text);
  std::string_view line;
  bool header = false;
  std::vector<NodeEvent> out;
  RowErrors errors(file_name, /*skip=*/false, /*skippable=*/false);
  while (reader.Next(&line)) {
    if (IsBlank(line) || line[0] == '#') continue;
    const int32_t ln = reader.line_number();
    std::vector<CsvField> f = SplitCsvLine(line);
    if (!header) {
      header = true;
      if (f.size() < 3 || f[0].text != "time" || f[1].text != "node" || f[2].text != "state") {
        std::string hint;
        for (size_t i = 0; i < f.size() && i < 3; ++i) absl::StrAppend(&hint, BlankHint(f[i].text));
        return absl::InvalidArgumentError(
            absl::StrCat(Av(file_name), ":", ln, ":1: expected the header time,node,state", hint));
      }
      continue;
    }
    if (f.size() < 3) {
      errors.Add(ln, static_cast<int32_t>(line.size()) + 1, "expected time,node,state");
      continue;
    }
    std::optional<int64_t> t = ParseTime(f[0].text);
    if (!t) {
      errors.Add(ln, f[0].column, TimeError("time", f[0].text));
      continue;
    }
    size_t offset = 0;
    if (std::optional<std::string> problem = CheckName(f[1].text, "node", &offset)) {
      errors.Add(ln, f[1].column + static_cast<int32_t>(offset), *problem);
      continue;
    }
    if (f[2].text != "down" && f[2].text != "up") {
      errors.Add(
          ln, f[2].column,
          absl::StrCat("state '", Av(f[2].text), "' is not down or up", BlankHint(f[2].text)));
      continue;
    }
    out.push_back(
        {*t, std::string(f[1].text), f[2].text == "up", ln, errors.Locate(ln, f[1].column)});
  }
  if (absl::Status s = errors.ToStatus(); !s.ok()) return s;
  std::stable_sort(out.begin(), out.end(),
                   [](const NodeEvent& a, const NodeEvent& b) { return a.time < b.time; });
  return out;
}

absl::StatusOr<std::vector<NodeEvent>> ReadNodeEventsFile(const std::string& path,
                                                          int64_t max_bytes) {
  std::string text;
  if (absl::Status s = ReadInputFile(path, {max_bytes, "node-events file"}, &text); !s.ok()) {
    return s;
  }
  return ParseNodeEvents(text, path);
}

}  // namespace hived::sim

#include "sim/trace/trace_order.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "sim/common/csv.h"
#include "sim/trace/trace_rows.h"

namespace hived::sim {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

int64_t DefaultMaxMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return kGiB;
  const int64_t physical = static_cast<int64_t>(pages) * static_cast<int64_t>(page_size);
  return std::min(physical / 4, kGiB);
}

absl::StatusOr<int64_t> ParseByteSize(std::string_view text) {
  std::string s = absl::AsciiStrToUpper(absl::string_view(text.data(), text.size()));
  int64_t unit = 1;
  for (std::string_view suffix : {"IB", "B"}) {
    if (s.size() > suffix.size() && absl::EndsWith(s, Av(suffix))) {
      s.resize(s.size() - suffix.size());
      break;
    }
  }
  if (!s.empty()) {
    const char last = s.back();
    const char* units = "KMGT";
    if (const char* at = std::strchr(units, last); at != nullptr && last != '\0') {
      unit = int64_t{1} << (10 * (at - units + 1));
      s.pop_back();
    }
  }
  double value = 0;
  if (s.empty() || !absl::SimpleAtod(s, &value) || !(value > 0) ||
      value * static_cast<double>(unit) >= 9.0e18) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", Av(text), "' is not a memory size (e.g. 512M, 2G, 1.5GiB)"));
  }
  return static_cast<int64_t>(value * static_cast<double>(unit));
}

int64_t MaxInMemoryTraceBytes(int64_t budget_bytes) {
  return std::max<int64_t>(budget_bytes / kReplayBytesPerTraceByte, 1);
}

TraceReadPath ChooseTraceReadPath(int64_t file_bytes, int64_t budget_bytes) {
  return file_bytes <= MaxInMemoryTraceBytes(budget_bytes) ? TraceReadPath::kInMemory
                                                           : TraceReadPath::kStream;
}

namespace {

// `text` as one shell word: as it is when it holds only safe characters, else single-quoted.
std::string ShellWord(std::string_view text) {
  const bool safe = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || std::strchr("/._-+:,@%=", c);
  });
  if (safe) return std::string(text);
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

}  // namespace

std::string SortTraceCommand(std::string_view path, int column) {
  std::string out(path);
  if (absl::EndsWith(absl::string_view(out), ".csv")) out.resize(out.size() - 4);
  out += ".sorted.csv";
  const std::string in = ShellWord(path);
  return absl::StrCat("(head -1 ", in, "; tail -n +2 ", in, " | sort -t, -k", column, ",", column,
                      "n -s) > ", ShellWord(out));
}

absl::Status CheckTraceSorted(const std::string& path) {
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) return absl::NotFoundError(absl::StrCat(path, ": cannot open file"));
  constexpr size_t kChunk = 1 << 20;
  std::vector<char> buffer(kChunk);
  std::string carry;  // a line split across chunks
  int32_t line_number = 0;
  size_t submit_column = kMissing;  // found in the header
  bool header = false;
  int64_t last_time = -1;
  int32_t last_line = 0;
  std::vector<CsvField> fields;
  absl::Status result = absl::OkStatus();
  bool done = false;
  auto on_line = [&](std::string_view line) {
    ++line_number;
    if (line_number == 1 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (IsBlank(line) || line[0] == '#') return;
    SplitCsvLine(line, &fields);
    if (!header) {
      header = true;
      for (size_t i = 0; i < fields.size(); ++i) {
        if (fields[i].text == "submit_time") submit_column = i;
      }
      if (submit_column == kMissing) done = true;  // the reader names the missing column
      return;
    }
    if (submit_column >= fields.size()) return;  // the reader reports short rows
    const CsvField& f = fields[submit_column];
    std::optional<int64_t> t = ParseTime(f.text);
    if (!t) return;  // the reader reports bad times
    if (*t < last_time) {
      result = absl::InvalidArgumentError(absl::StrCat(
          path, ":", line_number, ":", f.column, ": submit time ", *t, " is before ", last_time,
          " (line ", last_line,
          "): the trace is not sorted by submit_time, and it is too large to read whole "
          "under --max-memory (streamed traces must be sorted); sort it with: ",
          SortTraceCommand(path, static_cast<int>(submit_column) + 1),
          " (or raise --max-memory to read it whole)"));
      done = true;
      return;
    }
    last_time = *t;
    last_line = line_number;
  };
  while (!done) {
    const size_t got = std::fread(buffer.data(), 1, kChunk, file.get());
    if (got == 0) break;
    std::string_view chunk(buffer.data(), got);
    while (!done) {
      const size_t nl = chunk.find('\n');
      if (nl == std::string_view::npos) {
        carry.append(chunk);
        if (static_cast<int64_t>(carry.size()) > kMaxLineBytes) done = true;  // reader reports
        break;
      }
      if (carry.empty()) {
        on_line(chunk.substr(0, nl));
      } else {
        carry.append(chunk.substr(0, nl));
        on_line(carry);
        carry.clear();
      }
      chunk.remove_prefix(nl + 1);
    }
  }
  if (!done && !carry.empty()) on_line(carry);
  if (!result.ok()) return result;
  if (std::ferror(file.get()) != 0) {
    return absl::DataLossError(absl::StrCat(path, ": read error"));
  }
  return absl::OkStatus();
}

}  // namespace hived::sim

#include "sim/csv.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace hived::sim {
namespace {
constexpr size_t kMaxListed = 20;
}  // namespace

std::vector<CsvField> SplitCsvLine(std::string_view line) {
  std::vector<CsvField> fields;
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    size_t end = comma == std::string_view::npos ? line.size() : comma;
    fields.push_back({line.substr(start, end - start), static_cast<int32_t>(start + 1)});
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return fields;
}

bool LineReader::Next(std::string_view* line) {
  if (pos_ >= text_.size()) return false;
  size_t end = text_.find('\n', pos_);
  if (end == std::string_view::npos) end = text_.size();
  std::string_view l = text_.substr(pos_, end - pos_);
  if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
  *line = l;
  pos_ = end + 1;
  ++line_number_;
  return true;
}

bool IsBlank(std::string_view line) {
  for (char c : line) {
    if (c != ' ' && c != '\t') return false;
  }
  return true;
}

std::optional<int64_t> ParseInt(std::string_view text) {
  if (text.empty() || text.size() > 19) return std::nullopt;
  size_t i = 0;
  bool negative = false;
  if (text[0] == '-' || text[0] == '+') {
    negative = text[0] == '-';
    i = 1;
    if (text.size() == 1) return std::nullopt;
  }
  int64_t value = 0;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    value = value * 10 + (text[i] - '0');
  }
  return negative ? -value : value;
}

std::optional<double> ParseDouble(std::string_view text) {
  if (text.empty() || text.size() > 64) return std::nullopt;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E')) {
      return std::nullopt;
    }
  }
  std::string copy(text);
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || errno != 0 || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

std::string RowErrors::Locate(int32_t line, int32_t column) const {
  return absl::StrCat(file_name_, ":", line, ":", column);
}

void RowErrors::Add(int32_t line, int32_t column, std::string_view message) {
  ++count_;
  if (first_.size() < kMaxListed) {
    first_.push_back(absl::StrCat(Locate(line, column), ": ", Av(message)));
  }
}

absl::Status RowErrors::ToStatus() const {
  if (skip_ || count_ == 0) return absl::OkStatus();
  std::string text;
  for (const std::string& e : first_) absl::StrAppend(&text, e, "\n");
  if (count_ > static_cast<int64_t>(first_.size())) {
    absl::StrAppend(&text, "... and ", count_ - static_cast<int64_t>(first_.size()),
                    " more bad rows\n");
  }
  absl::StrAppend(&text, count_, " bad row(s); fix them or pass --skip-bad-rows to skip them");
  return absl::InvalidArgumentError(text);
}

std::vector<std::string> RowErrors::SkipWarnings() const {
  std::vector<std::string> out;
  if (count_ == 0) return out;
  for (size_t i = 0; i < first_.size() && i < 5; ++i) out.push_back("skipped: " + first_[i]);
  out.push_back(absl::StrCat(file_name_, ": skipped ", count_, " bad row(s)"));
  return out;
}

}  // namespace hived::sim

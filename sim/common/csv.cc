#include "sim/common/csv.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace hived::sim {
namespace {

constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

std::string Megabytes(int64_t bytes) {
  return bytes % kMiB == 0 ? absl::StrCat(bytes / kMiB, " MB") : absl::StrCat(bytes, " bytes");
}

bool IsBlankChar(char c) { return c == ' ' || c == '\t'; }

std::string_view TrimBlanks(std::string_view s) {
  while (!s.empty() && IsBlankChar(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlankChar(s.back())) s.remove_suffix(1);
  return s;
}

// `s` without one pair of surrounding double quotes, as a spreadsheet export writes them.
std::string_view Unquote(std::string_view s) {
  if (s.size() >= 2 && s.front() == '"' && s.back() == '"') return s.substr(1, s.size() - 2);
  return s;
}

}  // namespace

absl::Status ReadInputFile(const std::string& path, InputLimit limit, std::string* out) {
  out->clear();
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) return absl::NotFoundError(absl::StrCat(path, ": cannot open file"));
  // One buffer of the file's size when it has one within the limit: no regrowth copies.
  std::error_code size_error;
  const std::uintmax_t size = std::filesystem::file_size(path, size_error);
  if (!size_error && size <= static_cast<std::uintmax_t>(limit.max_bytes)) {
    out->reserve(static_cast<size_t>(size));
  }
  constexpr size_t kChunk = 64 * 1024;
  char buffer[kChunk];
  int64_t line_length = 0;  // bytes since the last '\n'
  int32_t line = 1;
  while (true) {
    const size_t got = std::fread(buffer, 1, kChunk, file.get());
    if (got == 0) break;
    if (static_cast<int64_t>(out->size() + got) > limit.max_bytes) {
      out->clear();
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": the ", Av(limit.what), " is larger than the limit of ",
          Megabytes(limit.max_bytes), limit.raisable ? " (raise it with --max-input-mb)" : ""));
    }
    // Line lengths from newline to newline (memchr), not byte by byte.
    const char* at = buffer;
    const char* const end = buffer + got;
    while (true) {
      const char* nl =
          static_cast<const char*>(std::memchr(at, '\n', static_cast<size_t>(end - at)));
      line_length += (nl != nullptr ? nl : end) - at;
      if (line_length > kMaxLineBytes) {
        out->clear();
        return absl::InvalidArgumentError(absl::StrCat(
            path, ":", line, ":1: line is longer than the limit of ", Megabytes(kMaxLineBytes)));
      }
      if (nl == nullptr) break;
      line_length = 0;
      ++line;
      at = nl + 1;
    }
    out->append(buffer, got);
  }
  if (std::ferror(file.get())) {
    out->clear();
    return absl::DataLossError(absl::StrCat(path, ": cannot read file"));
  }
  return absl::OkStatus();
}

std::vector<CsvField> SplitCsvLine(std::string_view line) {
  std::vector<CsvField> fields;
  SplitCsvLine(line, &fields);
  return fields;
}

void SplitCsvLine(std::string_view line, std::vector<CsvField>* fields) {
  fields->clear();
  size_t start = 0;
  while (true) {
    size_t comma = line.find(',', start);
    size_t end = comma == std::string_view::npos ? line.size() : comma;
    fields->push_back({line.substr(start, end - start), static_cast<int32_t>(start + 1)});
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
}

LineReader::LineReader(std::string_view text) : text_(text) {
  if (text_.substr(0, kUtf8Bom.size()) == kUtf8Bom) pos_ = kUtf8Bom.size();
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

absl::Status CheckUtf8Start(std::string_view text, std::string_view file_name) {
  const auto starts = [&](std::string_view bom) { return text.substr(0, bom.size()) == bom; };
  std::string_view encoding;
  // UTF-32 LE starts like UTF-16 LE: test it first.
  if (starts(std::string_view("\xFF\xFE\0\0", 4))) {
    encoding = "UTF-32LE";
  } else if (starts(std::string_view("\0\0\xFE\xFF", 4))) {
    encoding = "UTF-32BE";
  } else if (starts("\xFF\xFE")) {
    encoding = "UTF-16LE";
  } else if (starts("\xFE\xFF")) {
    encoding = "UTF-16BE";
  }
  if (encoding.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(Av(file_name), ":1:1: the file is ", Av(encoding),
                                                 " (it starts with a byte-order mark); save it "
                                                 "as UTF-8"));
}

bool IsBlank(std::string_view line) {
  for (char c : line) {
    if (!IsBlankChar(c)) return false;
  }
  return true;
}

std::optional<int64_t> ParseInt(std::string_view text) {
  if (text.size() >= 2 && text[0] == '+' && text[1] != '-') text.remove_prefix(1);
  if (text.empty()) return std::nullopt;
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::optional<double> ParseDouble(std::string_view text) {
  if (text.empty() || text.size() > 64) return std::nullopt;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || c == '.' || c == '-' || c == '+' || c == 'e' || c == 'E')) {
      return std::nullopt;
    }
  }
  // std::from_chars is correctly rounded like glibc's strtod, so where it reads the whole
  // field to a normal number (or an exact zero) the value is strtod's, without the copy and
  // locale work. Anything else (a leading '+', overflow, underflow, which strtod flags with
  // ERANGE) goes to strtod as before.
  double fast = 0;
  const auto [fast_end, fast_ec] = std::from_chars(text.data(), text.data() + text.size(), fast);
  if (fast_ec == std::errc() && fast_end == text.data() + text.size() && std::isfinite(fast)) {
    const bool exact_zero =
        fast == 0 && text.substr(0, text.find_first_of("eE")).find_first_of("123456789") ==
                         std::string_view::npos;
    if (exact_zero || std::fabs(fast) >= std::numeric_limits<double>::min()) return fast;
  }
  char copy[65];  // NUL-terminated for strtod; the size was checked above
  text.copy(copy, text.size());
  copy[text.size()] = '\0';
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(copy, &end);
  if (end != copy + text.size() || errno != 0 || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<size_t> FindInvalidUtf8(std::string_view text) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const auto continuation = [&](size_t i) { return i < text.size() && (byte(i) & 0xC0) == 0x80; };
  size_t i = 0;
  while (i < text.size()) {
    const unsigned char c = byte(i);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t length = 0;
    uint32_t code = 0;
    uint32_t min = 0;
    if ((c & 0xE0) == 0xC0) {
      length = 2;
      code = c & 0x1F;
      min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      length = 3;
      code = c & 0x0F;
      min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      length = 4;
      code = c & 0x07;
      min = 0x10000;
    } else {
      return i;
    }
    for (size_t k = 1; k < length; ++k) {
      if (!continuation(i + k)) return i;
      code = (code << 6) | (byte(i + k) & 0x3F);
    }
    if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return i;
    i += length;
  }
  return std::nullopt;
}

std::optional<std::string> CheckName(std::string_view text, std::string_view what, size_t* offset) {
  *offset = 0;
  if (text.empty()) return absl::StrCat(Av(what), " is empty");
  if (std::optional<size_t> bad = FindInvalidUtf8(text)) {
    *offset = *bad;
    return absl::StrFormat("%s is not valid UTF-8 (byte 0x%02X at offset %d)", Av(what),
                           static_cast<unsigned char>(text[*bad]), *bad);
  }
  const std::string_view trimmed = TrimBlanks(text);
  if (trimmed.size() != text.size()) {
    if (trimmed.empty()) return absl::StrCat(Av(what), " is only blanks");
    return absl::StrCat(Av(what), " '", Av(text), "' has surrounding blanks: did you mean '",
                        Av(trimmed), "'?");
  }
  if (const std::string_view unquoted = Unquote(text); unquoted.size() != text.size()) {
    return absl::StrCat(Av(what), " '", Av(text),
                        "' is quoted, but traces are plain CSV without quoting: did you mean '",
                        Av(unquoted), "'?");
  }
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7F) {
      *offset = i;
      return absl::StrFormat("%s contains the control character 0x%02X", Av(what), c);
    }
  }
  return std::nullopt;
}

std::string BlankHint(std::string_view text) {
  const std::string_view trimmed = TrimBlanks(text);
  const std::string_view unquoted = Unquote(trimmed);
  if (unquoted.size() == text.size() || unquoted.empty()) return "";
  return absl::StrCat(" (it has surrounding ",
                      unquoted.size() == trimmed.size() ? "blanks" : "quotes", ": did you mean '",
                      Av(unquoted), "'?)");
}

std::optional<int64_t> ParseTime(std::string_view text, int64_t min) {
  std::optional<int64_t> v = ParseInt(text);
  if (!v || *v < min || *v > kMaxTimeSeconds) return std::nullopt;
  return v;
}

std::string TimeError(std::string_view what, std::string_view text, int64_t min) {
  return absl::StrCat(Av(what), " '", Av(text), "' is not an integer in ", min, "..",
                      kMaxTimeSeconds, " (seconds, at most 100 years)", BlankHint(text));
}

std::string RowErrors::Locate(int32_t line, int32_t column) const {
  return absl::StrCat(file_name_, ":", line, ":", column);
}

void RowErrors::Add(int32_t line, int32_t column, std::string_view message) {
  ++count_;
  if (first_.size() < kMaxListedErrors) {
    // Messages quote the bad field, which may be a megabyte long: keep the list readable.
    constexpr size_t kMaxMessage = 300;
    const bool cut = message.size() > kMaxMessage;
    first_.push_back(absl::StrCat(Locate(line, column), ": ", Av(message.substr(0, kMaxMessage)),
                                  cut ? "... (cut)" : ""));
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
  absl::StrAppend(&text, count_, " bad row(s)",
                  skippable_ ? "; fix them or pass --skip-bad-rows to skip them" : "; fix them");
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

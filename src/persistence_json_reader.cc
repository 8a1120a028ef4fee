// Parsing saved states and group records (src/persistence_json_reader.h).
#include "src/persistence_json_reader.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "src/persistence_json.h"

namespace hived::internal {
namespace {

// What `ParseJson` checks before nlohmann's parser runs (it builds values recursively and
// holds every value and string in memory): the deepest nesting outside strings, the JSON
// values (counted as opening brackets, commas and colons, an upper bound), and the longest
// string with its offset. Stops early at the first limit passed.
struct Scan {
  int depth = 0;
  int64_t values = 1;
  size_t longest = 0, longest_at = 0;
};

Scan ScanJson(std::string_view text, int max_depth) {
  Scan scan;
  int depth = 0;
  bool in_string = false, escaped = false;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      if (i - start > scan.longest) {
        scan.longest = i - start;
        scan.longest_at = start;
        if (scan.longest > static_cast<size_t>(kMaxStateStringBytes)) return scan;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      start = i + 1;
    } else if (c == '[' || c == '{') {
      ++scan.values;
      if (++depth > scan.depth) scan.depth = depth;
      if (scan.depth > max_depth) return scan;
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ',' || c == ':') {
      if (++scan.values > kMaxStateJsonValues) return scan;
    }
  }
  return scan;
}

}  // namespace

std::string Quote(std::string_view s) {
  if (s.size() <= static_cast<size_t>(kMaxQuotedInputBytes)) return std::string(s);
  size_t n = static_cast<size_t>(kMaxQuotedInputBytes);
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;  // a whole character
  return absl::StrCat(ToAbsl(s.substr(0, n)), "... (", s.size(), " bytes)");
}

absl::StatusOr<Json> ParseJson(std::string_view text, std::string_view what) {
  if (text.size() > static_cast<size_t>(kMaxStateBytes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        ToAbsl(what), ": ", text.size(), " bytes, more than the limit of ", kMaxStateBytes));
  }
  const Scan scan = ScanJson(text, kMaxJsonDepth);
  if (scan.depth > kMaxJsonDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(what), ": nested deeper than ", kMaxJsonDepth, " levels"));
  }
  if (scan.longest > static_cast<size_t>(kMaxStateStringBytes)) {
    return absl::InvalidArgumentError(absl::StrCat(
        ToAbsl(what), ": a string of more than ", kMaxStateStringBytes, " bytes at byte ",
        scan.longest_at, ": ",
        ToAbsl(text.substr(scan.longest_at, static_cast<size_t>(kMaxQuotedInputBytes))), "..."));
  }
  if (scan.values > kMaxStateJsonValues) {
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(what), ": more than ", kMaxStateJsonValues, " JSON values"));
  }
  Json j = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_discarded()) return j;
  // Parse again with the SAX interface for the position (no exception is thrown).
  struct Sax : nlohmann::json_sax<Json> {
    std::string message;
    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return true; }
    bool key(string_t&) override { return true; }
    bool end_object() override { return true; }
    bool start_array(std::size_t) override { return true; }
    bool end_array() override { return true; }
    bool parse_error(std::size_t, const std::string&,
                     const nlohmann::detail::exception& ex) override {
      message = ex.what();
      return false;
    }
  } sax;
  Json::sax_parse(text.begin(), text.end(), &sax, nlohmann::detail::input_format_t::json,
                  /*strict=*/true);
  std::string message = sax.message;
  // "[json.exception.parse_error.101] parse error at line 1, column 5: ..." -> from "line".
  const size_t at = message.find("line ");
  if (at != std::string::npos) message = message.substr(at);
  // "...; last read: '<the input's last token>'": quoted, so at most ~100 bytes of it.
  constexpr std::string_view kLastRead = "last read: '";
  if (const size_t last = message.find(kLastRead); last != std::string::npos) {
    const size_t from = last + kLastRead.size();
    message = absl::StrCat(ToAbsl(std::string_view(message).substr(0, from)),
                           Quote(std::string_view(message).substr(from)));
  }
  return absl::InvalidArgumentError(
      absl::StrCat(ToAbsl(what), ": malformed JSON at ", message.empty() ? "?" : message));
}

}  // namespace hived::internal

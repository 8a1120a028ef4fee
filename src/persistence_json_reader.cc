// Parsing saved states and group records (src/persistence_json_reader.h).
#include "src/persistence_json_reader.h"

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "src/persistence_json.h"

namespace hived::internal {
namespace {

// The deepest nesting of `text` outside strings, stopping early past `limit`: nlohmann's
// parser builds values recursively, so depth is bounded before it runs.
int MaxDepth(std::string_view text, int limit) {
  int depth = 0, max = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max) max = depth;
      if (max > limit) return max;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return max;
}

}  // namespace

absl::StatusOr<Json> ParseJson(std::string_view text, std::string_view what) {
  if (MaxDepth(text, kMaxJsonDepth) > kMaxJsonDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(what), ": nested deeper than ", kMaxJsonDepth, " levels"));
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
  return absl::InvalidArgumentError(
      absl::StrCat(ToAbsl(what), ": malformed JSON at ", message.empty() ? "?" : message));
}

}  // namespace hived::internal

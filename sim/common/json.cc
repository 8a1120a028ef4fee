#include "sim/common/json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "sim/common/csv.h"

namespace hived::sim {

namespace {

// The length of the UTF-8 sequence a lead byte starts (1 for ASCII, 0 for a byte that cannot
// start one).
size_t Utf8Length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 0;
}

}  // namespace

std::string JsonQuote(std::string_view s) {
  std::string out = "\"";
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    const unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x80) {
      // Valid UTF-8 is copied; every byte of an invalid sequence becomes U+FFFD, so the
      // output is valid UTF-8 JSON whatever the input names held.
      const size_t length = Utf8Length(u);
      if (length > 0 && i + length <= s.size() && !FindInvalidUtf8(s.substr(i, length))) {
        out.append(s.substr(i, length));
        i += length;
      } else {
        out += "\\ufffd";
        ++i;
      }
      continue;
    }
    ++i;
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (u < 0x20 || u == 0x7F) {
          out += absl::StrFormat("\\u%04x", static_cast<int>(u));
        } else {
          out += c;
        }
    }
  }
  out += "\"";
  return out;
}

std::string FormatFixed(double value, int decimals) {
  if (!std::isfinite(value)) return "0";
  std::string s = absl::StrFormat("%.*f", decimals, value);
  if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

void JsonWriter::Key(std::string_view key) {
  if (!first_.empty()) {
    if (!first_.back()) out_ += ",";
    first_.back() = false;
    out_ += "\n";
    out_.append(2 * first_.size(), ' ');
  }
  if (!key.empty()) absl::StrAppend(&out_, JsonQuote(key), ": ");
}

void JsonWriter::BeginObject(std::string_view key) {
  Key(key);
  out_ += "{";
  first_.push_back(true);
}

void JsonWriter::EndObject() {
  const bool empty = first_.back();
  first_.pop_back();
  if (!empty) {
    out_ += "\n";
    out_.append(2 * first_.size(), ' ');
  }
  out_ += "}";
}

void JsonWriter::BeginArray(std::string_view key) {
  Key(key);
  out_ += "[";
  first_.push_back(true);
}

void JsonWriter::EndArray() {
  const bool empty = first_.back();
  first_.pop_back();
  if (!empty) {
    out_ += "\n";
    out_.append(2 * first_.size(), ' ');
  }
  out_ += "]";
}

void JsonWriter::Int(std::string_view key, int64_t value) {
  Key(key);
  absl::StrAppend(&out_, value);
}

void JsonWriter::Double(std::string_view key, double value) {
  Key(key);
  out_ += FormatFixed(value);
}

void JsonWriter::Real(std::string_view key, double value) {
  Key(key);
  out_ += nlohmann::json(value).dump();
}

void JsonWriter::String(std::string_view key, std::string_view value) {
  Key(key);
  out_ += JsonQuote(value);
}

void JsonWriter::Bool(std::string_view key, bool value) {
  Key(key);
  out_ += value ? "true" : "false";
}

void JsonWriter::Null(std::string_view key) {
  Key(key);
  out_ += "null";
}

std::string JsonWriter::Finish() {
  out_ += "\n";
  return std::move(out_);
}

const JsonValue* JsonValue::Find(std::string_view key) const {
  if (type != Type::kObject) return nullptr;
  for (const auto& [k, v] : object) {
    if (k == key) return &v;
  }
  return nullptr;
}

double JsonValue::NumberOr(std::string_view key, double fallback) const {
  const JsonValue* v = Find(key);
  return v && v->type == Type::kNumber ? v->number : fallback;
}

std::string JsonValue::StringOr(std::string_view key, std::string_view fallback) const {
  const JsonValue* v = Find(key);
  return v && v->type == Type::kString ? v->string : std::string(fallback);
}

namespace {

// Builds a `JsonValue` from nlohmann's SAX events, refusing documents nested deeper than
// `kMaxDepth` before they can cost memory or stack.
class ValueBuilder {
 public:
  using Json = nlohmann::json;
  static constexpr size_t kMaxDepth = 64;
  static constexpr size_t kNoPosition = static_cast<size_t>(-1);
  // A summary holds a few thousand values; this bounds the memory of any document (a
  // `JsonValue` is about 100 bytes) independently of the byte limit.
  static constexpr int64_t kMaxValues = 1'000'000;

  JsonValue& root() { return root_; }
  const std::string& error() const { return error_; }
  size_t error_position() const { return error_position_; }

  bool null() { return Put(JsonValue()); }
  bool boolean(bool value) {
    JsonValue v;
    v.type = JsonValue::Type::kBool;
    v.boolean = value;
    return Put(std::move(v));
  }
  bool number_integer(Json::number_integer_t value) { return Number(static_cast<double>(value)); }
  bool number_unsigned(Json::number_unsigned_t value) { return Number(static_cast<double>(value)); }
  bool number_float(Json::number_float_t value, const Json::string_t& /*text*/) {
    return Number(value);
  }
  bool string(Json::string_t& value) {
    JsonValue v;
    v.type = JsonValue::Type::kString;
    v.string = std::move(value);
    return Put(std::move(v));
  }
  bool binary(Json::binary_t& /*value*/) { return Fail("binary values are not JSON"); }
  bool start_object(size_t /*elements*/) { return Open(JsonValue::Type::kObject); }
  bool key(Json::string_t& value) {
    key_ = std::move(value);
    return true;
  }
  bool end_object() { return Close(); }
  bool start_array(size_t /*elements*/) { return Open(JsonValue::Type::kArray); }
  bool end_array() { return Close(); }
  bool parse_error(size_t position, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& ex) {
    // "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ..."
    // or "[json.exception.out_of_range.406] number overflow parsing '1e999'": our location
    // replaces nlohmann's.
    std::string_view what = ex.what();
    if (size_t id_end = what.find("] ");
        !what.empty() && what[0] == '[' && id_end != std::string_view::npos) {
      what.remove_prefix(id_end + 2);
    }
    if (size_t colon = what.find(": ");
        what.substr(0, 14) == "parse error at" && colon != std::string_view::npos) {
      what.remove_prefix(colon + 2);
    }
    error_ = std::string(what);
    error_position_ = position > 0 ? position - 1 : 0;
    return false;
  }

 private:
  bool Fail(std::string_view message) {
    error_ = std::string(message);
    return false;
  }
  // Where the next value goes, e.g. "vcs[3].queuing_delay.p95" ("(top)" for the root).
  std::string Path() const {
    std::string out;
    for (size_t i = 0; i < stack_.size(); ++i) {
      const JsonValue* parent = stack_[i];
      const bool last = i + 1 == stack_.size();
      if (parent->type == JsonValue::Type::kArray) {
        absl::StrAppend(&out, "[", last ? parent->array.size() : parent->array.size() - 1, "]");
      } else {
        absl::StrAppend(&out, out.empty() ? "" : ".", last ? key_ : parent->object.back().first);
      }
    }
    return out.empty() ? "(top)" : out;
  }
  bool Number(double value) {
    // Numbers past 2^63 in magnitude could not be converted to the summary's integer fields.
    if (!std::isfinite(value) || std::fabs(value) >= 0x1.0p63) {
      return Fail(absl::StrCat("number at ", Path(), " is out of range (beyond +-2^63)"));
    }
    JsonValue v;
    v.type = JsonValue::Type::kNumber;
    v.number = value;
    return Put(std::move(v));
  }
  // Places a finished value: as the root, an array element or an object member.
  JsonValue* Place(JsonValue&& v) {
    ++values_;
    if (stack_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    JsonValue* parent = stack_.back();
    if (parent->type == JsonValue::Type::kArray) {
      parent->array.push_back(std::move(v));
      return &parent->array.back();
    }
    parent->object.emplace_back(std::move(key_), std::move(v));
    return &parent->object.back().second;
  }
  bool TooMany() {
    if (values_ < kMaxValues) return false;
    Fail(absl::StrCat("more than ", kMaxValues, " values, at ", Path()));
    return true;
  }
  bool Put(JsonValue&& v) {
    if (TooMany()) return false;
    Place(std::move(v));
    return true;
  }
  bool Open(JsonValue::Type type) {
    if (stack_.size() >= kMaxDepth) return Fail("nesting too deep");
    if (TooMany()) return false;
    JsonValue v;
    v.type = type;
    stack_.push_back(Place(std::move(v)));
    return true;
  }
  bool Close() {
    stack_.pop_back();
    return true;
  }

  JsonValue root_;
  std::vector<JsonValue*> stack_;  // open containers; pointers stay valid: only the
                                   // innermost container grows
  std::string key_;
  int64_t values_ = 0;
  std::string error_;
  size_t error_position_ = kNoPosition;
};

// The offset of the first '[' or '{' (outside strings) nested deeper than kMaxDepth.
size_t DeepestOpening(std::string_view text) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > ValueBuilder::kMaxDepth) return i;
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;
    }
  }
  return 0;
}

}  // namespace

absl::StatusOr<JsonValue> ParseJson(std::string_view text, std::string_view file_name) {
  ValueBuilder builder;
  const bool ok = nlohmann::json::sax_parse(text.begin(), text.end(), &builder,
                                            nlohmann::json::input_format_t::json,
                                            /*strict=*/true, /*ignore_comments=*/false);
  if (ok) return std::move(builder.root());
  size_t position = builder.error_position();
  if (builder.error() == "nesting too deep") {
    position = DeepestOpening(text);
  } else if (position == ValueBuilder::kNoPosition) {
    // Refused by the builder (a number out of range, too many values): located by its path.
    return absl::InvalidArgumentError(absl::StrCat(Av(file_name), ": ", builder.error()));
  }
  int64_t line = 1;
  int64_t column = 1;
  for (size_t i = 0; i < position && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat(Av(file_name), ":", line, ":", column, ": ",
                   builder.error().empty() ? "invalid JSON" : builder.error()));
}

}  // namespace hived::sim

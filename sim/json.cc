#include "sim/json.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "sim/csv.h"

namespace hived::sim {

std::string JsonQuote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
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
        if (static_cast<unsigned char>(c) < 0x20) {
          out += absl::StrFormat("\\u%04x", static_cast<int>(c));
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

class Parser {
 public:
  Parser(std::string_view text, std::string_view file) : text_(text), file_(file) {}

  absl::StatusOr<JsonValue> Parse() {
    JsonValue v;
    if (!Value(&v, 0)) return Error();
    SkipSpace();
    if (pos_ != text_.size()) {
      message_ = "trailing characters after the JSON value";
      return Error();
    }
    return v;
  }

 private:
  absl::Status Error() const {
    int line = 1;
    int column = 1;
    for (size_t i = 0; i < err_pos_ && i < text_.size(); ++i) {
      if (text_[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    return absl::InvalidArgumentError(
        absl::StrCat(Av(file_), ":", line, ":", column, ": ", message_));
  }
  bool Fail(std::string_view message) {
    if (message_.empty()) {
      message_ = std::string(message);
      err_pos_ = pos_;
    }
    return false;
  }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\t' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }
  bool Literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return Fail("invalid literal");
    pos_ += word.size();
    return true;
  }
  bool String(std::string* out) {
    ++pos_;  // opening quote
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (c == '\\') {
        if (pos_ >= text_.size()) return Fail("unterminated string");
        char e = text_[pos_++];
        switch (e) {
          case 'n':
            *out += '\n';
            break;
          case 't':
            *out += '\t';
            break;
          case 'r':
            *out += '\r';
            break;
          case 'u':
            if (pos_ + 4 > text_.size()) return Fail("bad \\u escape");
            *out += '?';  // summaries only escape control characters
            pos_ += 4;
            break;
          default:
            *out += e;
        }
      } else {
        *out += c;
      }
    }
    if (pos_ >= text_.size()) return Fail("unterminated string");
    ++pos_;
    return true;
  }
  bool Value(JsonValue* v, int depth) {
    if (depth > 64) return Fail("nesting too deep");
    SkipSpace();
    if (pos_ >= text_.size()) return Fail("unexpected end of input");
    const char c = text_[pos_];
    if (c == '{') {
      v->type = JsonValue::Type::kObject;
      ++pos_;
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        return true;
      }
      while (true) {
        SkipSpace();
        if (pos_ >= text_.size() || text_[pos_] != '"') return Fail("expected a key string");
        std::string key;
        if (!String(&key)) return false;
        SkipSpace();
        if (pos_ >= text_.size() || text_[pos_] != ':') return Fail("expected ':'");
        ++pos_;
        JsonValue member;
        if (!Value(&member, depth + 1)) return false;
        v->object.emplace_back(std::move(key), std::move(member));
        SkipSpace();
        if (pos_ < text_.size() && text_[pos_] == ',') {
          ++pos_;
          continue;
        }
        if (pos_ < text_.size() && text_[pos_] == '}') {
          ++pos_;
          return true;
        }
        return Fail("expected ',' or '}'");
      }
    }
    if (c == '[') {
      v->type = JsonValue::Type::kArray;
      ++pos_;
      SkipSpace();
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        return true;
      }
      while (true) {
        JsonValue element;
        if (!Value(&element, depth + 1)) return false;
        v->array.push_back(std::move(element));
        SkipSpace();
        if (pos_ < text_.size() && text_[pos_] == ',') {
          ++pos_;
          continue;
        }
        if (pos_ < text_.size() && text_[pos_] == ']') {
          ++pos_;
          return true;
        }
        return Fail("expected ',' or ']'");
      }
    }
    if (c == '"') {
      v->type = JsonValue::Type::kString;
      return String(&v->string);
    }
    if (c == 't' || c == 'f') {
      v->type = JsonValue::Type::kBool;
      v->boolean = c == 't';
      return Literal(c == 't' ? "true" : "false");
    }
    if (c == 'n') return Literal("null");
    size_t end = pos_;
    while (end < text_.size() &&
           std::string_view("+-0123456789.eE").find(text_[end]) != std::string_view::npos) {
      ++end;
    }
    auto number = ParseDouble(text_.substr(pos_, end - pos_));
    if (end == pos_ || !number) return Fail("invalid value");
    v->type = JsonValue::Type::kNumber;
    v->number = *number;
    pos_ = end;
    return true;
  }

  std::string_view text_;
  std::string_view file_;
  size_t pos_ = 0;
  size_t err_pos_ = 0;
  std::string message_;
};

}  // namespace

absl::StatusOr<JsonValue> ParseJson(std::string_view text, std::string_view file_name) {
  return Parser(text, file_name).Parse();
}

}  // namespace hived::sim

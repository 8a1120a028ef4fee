// sim/common/json.h: a tiny JSON writer with fixed formatting (byte-identical output for equal
// input) and a reader for summaries (`hived-sim compare`, `plot`) built on nlohmann-json's
// SAX parser.
//
// Invariants (checked in tests/unit/sim/hostile_input_test.cc and the summary fuzzer):
//   1. The writer's output is valid UTF-8 JSON for any input strings: control characters are
//      escaped and each byte of an invalid UTF-8 sequence becomes U+FFFD.
//   2. The reader refuses invalid UTF-8, nesting deeper than 64, more than 1,000,000 values
//      and numbers beyond +-2^63 with a located error; it never recurses, so any bytes end in
//      an error or a value of bounded size.
//
// Thread safety: plain values.
#ifndef HIVED_SIM_COMMON_JSON_H_
#define HIVED_SIM_COMMON_JSON_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace hived::sim {

// Writes pretty-printed JSON: two-space indent, keys in call order, doubles with 3
// decimals (`Double`) or exact (`Real`).
class JsonWriter {
 public:
  void BeginObject(std::string_view key = {});
  void EndObject();
  void BeginArray(std::string_view key = {});
  void EndArray();
  void Int(std::string_view key, int64_t value);
  void Double(std::string_view key, double value);
  // The shortest digits that read back as `value`, as nlohmann-json writes a double
  // (`0.5`, `1.0`, `1e-05`); NaN and infinities as `null`.
  void Real(std::string_view key, double value);
  void String(std::string_view key, std::string_view value);
  void Bool(std::string_view key, bool value);
  void Null(std::string_view key);
  // Array elements.
  void IntElement(int64_t value) { Int({}, value); }
  void StringElement(std::string_view value) { String({}, value); }
  std::string Finish();

 private:
  void Key(std::string_view key);
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
};

// `s` as a JSON string literal (invariant 1).
std::string JsonQuote(std::string_view s);
// Fixed 3-decimal formatting, "-0.000" normalised to "0.000".
std::string FormatFixed(double value, int decimals = 3);

// A parsed JSON value.
struct JsonValue {
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };
  Type type = Type::kNull;
  bool boolean = false;
  double number = 0;
  std::string string;
  std::vector<JsonValue> array;
  std::vector<std::pair<std::string, JsonValue>> object;  // in file order

  // Member lookup; nullptr when absent or not an object.
  const JsonValue* Find(std::string_view key) const;
  double NumberOr(std::string_view key, double fallback) const;
  std::string StringOr(std::string_view key, std::string_view fallback) const;
};

// Errors: kInvalidArgument "<file>:<line>:<column>: message".
absl::StatusOr<JsonValue> ParseJson(std::string_view text, std::string_view file_name);

}  // namespace hived::sim

#endif  // HIVED_SIM_COMMON_JSON_H_

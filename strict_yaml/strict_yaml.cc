#include "strict_yaml/strict_yaml.h"

#include <yaml-cpp/anchor.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <exception>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "hierarchy/spec_analysis.h"

namespace hived::yaml_internal {
namespace {

YAML::Mark MarkAt(std::string_view text, size_t offset) {
  YAML::Mark mark;
  mark.pos = static_cast<int>(std::min<size_t>(offset, std::numeric_limits<int>::max()));
  mark.line = 0;
  mark.column = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++mark.line;
      mark.column = 0;
    } else {
      ++mark.column;
    }
  }
  return mark;
}

// Counts events and documents; throws `Stop` to end parsing early.
class EventCounter : public YAML::EventHandler {
 public:
  struct Stop {};
  explicit EventCounter(int64_t max_nodes) : max_nodes_(max_nodes) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ > 1) {
      second_document_ = mark;
      throw Stop{};
    }
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { Count(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { Count(mark); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    Count(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    Count(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Count(mark);
  }
  void OnMapEnd() override {}

  int64_t documents() const { return documents_; }
  bool too_many() const { return too_many_; }
  const YAML::Mark& stop_mark() const { return too_many_ ? too_many_mark_ : second_document_; }

 private:
  void Count(const YAML::Mark& mark) {
    if (++events_ <= max_nodes_) return;
    too_many_ = true;
    too_many_mark_ = mark;
    throw Stop{};
  }

  int64_t max_nodes_;
  int64_t events_ = 0;
  int64_t documents_ = 0;
  bool too_many_ = false;
  YAML::Mark too_many_mark_;
  YAML::Mark second_document_;
};

}  // namespace

absl::StatusOr<std::string> ReadFileLimited(const std::string& path, int64_t max_bytes,
                                            std::string_view what_view) {
  const std::string what(what_view);  // absl::StrCat takes absl::string_view, not std's
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(absl::StrCat("cannot open ", what, " file `", path, "`"));
  }
  std::string text;
  constexpr size_t kChunk = size_t{1} << 16;
  std::string chunk(kChunk, '\0');
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(kChunk));
    const auto got = static_cast<size_t>(in.gcount());
    if (static_cast<int64_t>(text.size() + got) > max_bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ":1:1: the ", what, " file is larger than ", max_bytes,
                       " bytes (raise the limit if this input is expected)"));
    }
    text.append(chunk.data(), got);
  }
  if (in.bad()) {
    return absl::NotFoundError(absl::StrCat("cannot read ", what, " file `", path, "`"));
  }
  return text;
}

std::optional<Problem> CheckText(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) {
      return Problem{MarkAt(text, i),
                     absl::StrFormat("control character 0x%02x is not allowed in YAML", c),
                     "save the file as plain UTF-8 text"};
    }
    const size_t length = hierarchy::Utf8SequenceLength(text, i);
    if (length == 0) {
      return Problem{MarkAt(text, i), absl::StrFormat("byte 0x%02x is not valid UTF-8", c),
                     "names and text must be UTF-8; save the file as UTF-8"};
    }
    i += length;
  }
  return std::nullopt;
}

ParsedDocument ParseDocument(std::string_view text, int64_t max_nodes) {
  ParsedDocument doc;
  if (std::optional<Problem> problem = CheckText(text)) {
    doc.problem = std::move(problem);
    return doc;
  }
  try {
    const std::string copy(text);
    std::istringstream stream(copy);
    YAML::Parser parser(stream);
    EventCounter counter(max_nodes);
    try {
      while (parser.HandleNextDocument(counter)) {
      }
    } catch (const EventCounter::Stop&) {
    }
    if (counter.too_many()) {
      doc.problem = Problem{counter.stop_mark(),
                            absl::StrCat("the file has more than ", max_nodes, " YAML nodes"),
                            "split the input, or raise the node limit if it is expected"};
      return doc;
    }
    if (counter.documents() == 0) {
      doc.empty = true;
      return doc;
    }
    if (counter.documents() > 1) {
      doc.problem = Problem{counter.stop_mark(), "the file holds more than one YAML document",
                            "remove the `---` separators; one file is one document"};
    }
    doc.root = YAML::Load(copy);
    doc.has_root = true;
  } catch (const YAML::Exception& e) {
    doc.has_root = false;
    doc.problem = Problem{e.mark, absl::StrCat("invalid YAML: ", e.msg), ""};
  } catch (const std::exception& e) {
    doc.has_root = false;
    doc.problem = Problem{YAML::Mark(), absl::StrCat("cannot read the YAML: ", e.what()), ""};
  }
  return doc;
}

const char* KindName(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return "a scalar";
    case YAML::NodeType::Null:
      return "null";
    default:
      return "nothing";
  }
}

bool IsPlain(const YAML::Node& node) { return node.Tag() == "?"; }

std::string Quote(std::string_view text) {
  constexpr size_t kMax = 60;
  if (text.size() <= kMax) return absl::StrCat("`", std::string(text), "`");
  return absl::StrCat("`", std::string(text.substr(0, kMax)), "...`");
}

std::optional<int64_t> ParseInteger(std::string_view text, int64_t min, int64_t max,
                                    Problem* problem) {
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  const size_t digits = i;
  bool ok = i < text.size();
  bool overflow = false;
  uint64_t value = 0;
  for (; ok && i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') {
      ok = false;
      break;
    }
    if (value > (uint64_t{1} << 63) / 10) {
      overflow = true;
    } else {
      value = value * 10 + static_cast<uint64_t>(text[i] - '0');
    }
  }
  if (!ok) {
    problem->message = absl::StrCat("expected an integer, got ", Quote(text));
    problem->hint = "";
    return std::nullopt;
  }
  if (text[digits] == '0' && text.size() > digits + 1) {
    problem->message = absl::StrCat("integer ", Quote(text),
                                    " has a leading zero, which YAML 1.1 and HiveD read as octal");
    problem->hint = "write the number without leading zeros";
    return std::nullopt;
  }
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  int64_t signed_value = 0;
  if (!overflow && value <= limit) {
    signed_value = negative ? static_cast<int64_t>(0 - value) : static_cast<int64_t>(value);
  }
  if (overflow || value > limit || signed_value < min || signed_value > max) {
    problem->message =
        absl::StrCat("integer ", Quote(text), " is out of range [", min, ", ", max, "]");
    problem->hint = "";
    return std::nullopt;
  }
  return signed_value;
}

std::optional<bool> ParseBool(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "true" || lower == "yes" || lower == "on" || lower == "y") return true;
  if (lower == "false" || lower == "no" || lower == "off" || lower == "n") return false;
  return std::nullopt;
}

std::string ErrorCap::Summary() const {
  if (dropped_ == 0) return "";
  return absl::StrCat("... and ", dropped_, " more error", dropped_ == 1 ? "" : "s",
                      " (only the first ", max_, " are shown)");
}

}  // namespace hived::yaml_internal

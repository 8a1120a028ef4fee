// Documentation that shows code shows code that is compiled and run (issue 12 item 8):
//  - the example at the top of hived/scheduler.h is header_example_test.cc's marked region;
//  - every C++ block of docs/integration.md preceded by `<!-- snippet: FILE NAME -->` is the
//    region NAME of FILE (examples/manager/...), which CI builds and runs against the
//    installed package.
// A region in a source file is the lines between `// [snippet: NAME]` and `// [end snippet]`,
// compared after removing their common indentation.
#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "support/catch.h"

namespace hived {
namespace {

std::vector<std::string> ReadLines(const std::string& relative) {
  std::ifstream in(std::string(HIVED_SOURCE_DIR) + "/" + relative);
  REQUIRE(in.good());
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> Dedent(std::vector<std::string> lines) {
  size_t common = std::string::npos;
  for (const std::string& l : lines) {
    const size_t first = l.find_first_not_of(' ');
    if (first != std::string::npos) common = std::min(common, first);
  }
  if (common == std::string::npos) return lines;
  for (std::string& l : lines) l = l.size() >= common ? l.substr(common) : std::string();
  return lines;
}

std::string Trimmed(const std::string& s) {
  const size_t b = s.find_first_not_of(' ');
  return b == std::string::npos ? std::string() : s.substr(b, s.find_last_not_of(' ') - b + 1);
}

// The region NAME of a source file; fails the test when it is missing or unterminated.
std::vector<std::string> Region(const std::string& file, const std::string& name) {
  const std::vector<std::string> lines = ReadLines(file);
  const std::string open = "// [snippet: " + name + "]";
  auto begin = std::find_if(lines.begin(), lines.end(),
                            [&](const std::string& l) { return Trimmed(l) == open; });
  INFO(file << ": no line `" << open << "`");
  REQUIRE(begin != lines.end());
  auto end = std::find_if(begin + 1, lines.end(),
                          [](const std::string& l) { return Trimmed(l) == "// [end snippet]"; });
  REQUIRE(end != lines.end());
  return Dedent(std::vector<std::string>(begin + 1, end));
}

// Lines differing between two blocks, for a readable failure.
std::string Diff(const std::vector<std::string>& want, const std::vector<std::string>& got) {
  std::string out;
  for (size_t i = 0; i < std::max(want.size(), got.size()); ++i) {
    const std::string w = i < want.size() ? want[i] : "<none>";
    const std::string g = i < got.size() ? got[i] : "<none>";
    if (w != g) out += "line " + std::to_string(i + 1) + ": code `" + w + "`, doc `" + g + "`\n";
  }
  return out;
}

void CheckHeaderExample(const std::string& header_file, const std::string& region) {
  const std::vector<std::string> header = ReadLines(header_file);
  auto start = std::find_if(header.begin(), header.end(),
                            [](const std::string& l) { return l.rfind("// Example", 0) == 0; });
  REQUIRE(start != header.end());
  std::vector<std::string> shown;
  for (auto it = start + 1; it != header.end() && it->rfind("//   ", 0) == 0; ++it) {
    shown.push_back(it->substr(5));
  }
  const std::vector<std::string> compiled = Region("tests/api/header_example_test.cc", region);
  INFO(Diff(compiled, shown));
  CHECK(shown == compiled);
}

TEST_CASE("Snippets: the header examples are the compiled ones", "[api][unit]") {
  CheckHeaderExample("include/hived/scheduler.h", "scheduler.h example");
  CheckHeaderExample("include/hived/cluster_spec.h", "cluster_spec.h example");
}

TEST_CASE("Snippets: docs/integration.md quotes the example manager verbatim", "[api][unit]") {
  const std::vector<std::string> doc = ReadLines("docs/integration.md");
  int checked = 0;
  for (size_t i = 0; i < doc.size(); ++i) {
    const std::string marker = "<!-- snippet: ";
    if (doc[i].rfind(marker, 0) != 0) continue;
    const size_t close = doc[i].find(" -->");
    REQUIRE(close != std::string::npos);
    const std::string spec = doc[i].substr(marker.size(), close - marker.size());
    const size_t space = spec.find(' ');
    REQUIRE(space != std::string::npos);
    const std::string file = spec.substr(0, space);
    const std::string name = spec.substr(space + 1);
    CAPTURE(i + 1, file, name);
    REQUIRE(i + 1 < doc.size());
    REQUIRE(doc[i + 1] == "```cpp");
    std::vector<std::string> shown;
    size_t j = i + 2;
    for (; j < doc.size() && doc[j] != "```"; ++j) shown.push_back(doc[j]);
    REQUIRE(j < doc.size());
    const std::vector<std::string> code = Region(file, name);
    INFO(Diff(code, shown));
    CHECK(shown == code);
    ++checked;
  }
  CHECK(checked >= 6);  // the guide's walk through the example
}

}  // namespace
}  // namespace hived

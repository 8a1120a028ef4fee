// Every public enum has a lower-case name, through its *Name function, operator<< and
// AbslStringify (issue 12 item 6).
#include <set>
#include <sstream>
#include <string>

#include "hived/schedule_result.h"
#include "hived/status_view.h"
#include "support/catch.h"

namespace hived {
namespace {

// A minimal AbslStringify sink, so the overloads are tested whatever Abseil's version
// (Debian 12's Abseil predates StrCat support for AbslStringify).
struct StringSink {
  std::string text;
  void Append(const char* s) { text += s; }
};

template <typename E>
std::string Stringified(E value) {
  StringSink sink;
  AbslStringify(sink, value);
  return sink.text;
}

template <typename E>
std::string Streamed(E value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// Every enumerator 0..count-1 has its own lower-case name, the same through all three ways.
template <typename E, typename NameFn>
void CheckAllNamed(int count, NameFn name) {
  std::set<std::string> seen;
  for (int i = 0; i < count; ++i) {
    const E value = static_cast<E>(i);
    const std::string n = name(value);
    CAPTURE(i, n);
    CHECK(n != "unknown");
    CHECK(n.find_first_not_of("abcdefghijklmnopqrstuvwxyz-") == std::string::npos);
    CHECK(seen.insert(n).second);
    CHECK(Streamed(value) == n);
    CHECK(Stringified(value) == n);
  }
  CHECK(std::string(name(static_cast<E>(count))) == "unknown");  // out of range: no UB
}

TEST_CASE("Public names: every enumerator of every public enum has one", "[api][unit]") {
  CheckAllNamed<Outcome>(4, OutcomeName);
  CheckAllNamed<Phase>(2, PhaseName);
  CheckAllNamed<ReasonCode>(11, ReasonCodeName);
  CheckAllNamed<GroupState>(6, GroupStateName);
  CheckAllNamed<CellState>(4, CellStateName);
  CheckAllNamed<CellHealth>(2, CellHealthName);
}

TEST_CASE("Public names: the documented spellings", "[api][unit]") {
  CHECK(std::string(OutcomeName(Outcome::kPlaced)) == "placed");
  CHECK(std::string(PhaseName(Phase::kFiltering)) == "filtering");
  CHECK(std::string(ReasonCodeName(ReasonCode::kInsufficientCapacity)) == "insufficient-capacity");
  CHECK(std::string(ReasonCodeName(ReasonCode::kLazyDowngrade)) == "lazy-downgrade");
  CHECK(std::string(GroupStateName(GroupState::kBeingPreempted)) == "being-preempted");
  CHECK(std::string(GroupStateName(GroupState::kReserved)) == "reserved");
  CHECK(std::string(CellStateName(CellState::kReserved)) == "reserved");
  CHECK(std::string(CellHealthName(CellHealth::kBad)) == "bad");
  static_assert(OutcomeName(Outcome::kWaiting)[0] == 'w', "names are usable at compile time");
}

}  // namespace
}  // namespace hived

// A journal frame around any body (tests/unit/persistence/journal_test.cc): a correct size
// and CRC-32, as a hostile writer would make it, to reach the reader's field checks.
#ifndef HIVED_TESTS_UNIT_PERSISTENCE_JOURNAL_FRAME_H_
#define HIVED_TESTS_UNIT_PERSISTENCE_JOURNAL_FRAME_H_

#include <string>

namespace hived::testing {

std::string Frame(const std::string& body);

}  // namespace hived::testing

#endif  // HIVED_TESTS_UNIT_PERSISTENCE_JOURNAL_FRAME_H_

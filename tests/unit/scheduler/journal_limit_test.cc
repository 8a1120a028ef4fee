// The size check of an ApplyConfig journal record (src/journal_hook.h, `ConfigRecordYaml`) on
// small limits: the façade refuses an ApplyConfig whose record would be over
// `kMaxJournalRecordBytes` before the change (tests/unit/persistence/journal_config_test.cc),
// and here the same check is exact to the byte without writing 16 MiB of YAML.
#include <cstdint>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "hived/config.h"
#include "src/journal_hook.h"
#include "support/catch.h"
#include "support/example_spec.h"

namespace hived {
namespace {

TEST_CASE("Journal: an ApplyConfig record is sized exactly against its limit", "[journal][unit]") {
  const ClusterSpec spec = testing::ExampleSpec("two-racks.yaml");
  const std::string yaml = ClusterSpecToYaml(spec);
  const int64_t fits = static_cast<int64_t>(yaml.size()) + 32;  // the body's other fields
  absl::StatusOr<std::string> r = ConfigRecordYaml(spec, fits);
  REQUIRE(r.ok());
  CHECK(*r == yaml);
  r = ConfigRecordYaml(spec, fits - 1);  // the names fit, the YAML does not
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(r.status().message(),
                          absl::StrCat("over the limit of ", fits - 1,
                                       " bytes (the spec's YAML is ", yaml.size(), " bytes)")));
  r = ConfigRecordYaml(spec, 64);  // the names alone are over: no YAML written
  CHECK(r.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(absl::StrContains(r.status().message(), "the spec's names alone are"));
  CHECK(ConfigRecordYaml(spec, -1).status().code() == absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace hived

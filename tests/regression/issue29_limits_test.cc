// Regression (issue 29, "Restore trusts too much"): the persisted-state readers accepted a
// 200 MB group name (1.2 GB RSS), quoted a 200 MB value whole in an error message, and
// `ImportHivedBindInfo` spent 33 s and 1.44 GB on a 200 MB YAML scalar. The limits of
// hived/state.h are now checked before the work: each hostile input is refused quickly with
// kInvalidArgument, and no message quotes more than ~100 bytes of the input.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "hived/config.h"
#include "hived/scheduler.h"
#include "hived/state.h"
#include "support/catch.h"

namespace hived {
namespace {

const ClusterSpec& Spec() {
  static const ClusterSpec* const spec = [] {
    absl::StatusOr<ClusterSpec> s =
        LoadClusterSpecFile(std::string(HIVED_SOURCE_DIR) + "/config/examples/two-racks.yaml");
    REQUIRE(s.ok());
    return new ClusterSpec(*s);
  }();
  return *spec;
}

std::string Record(const std::string& name, const std::string& node = "rack0-node0") {
  return absl::StrCat(R"({"name":")", name,
                      R"(","virtualCluster":"prod","priority":0,"members":[{"podNumber":1,)",
                      R"("leafCellNumber":1}],"state":"allocated","placement":{"cellChain":)",
                      R"("V100-RACK","pods":[{"leafCellNumber":1,"physicalNode":")", node,
                      R"(","physicalLeafCellIndices":[0]}]}})");
}

std::string State(const std::string& groups) {
  return absl::StrCat(R"({"schema":"hived.scheduler-state","version":2,"badNodes":[],)",
                      R"("doomedCells":[],"groups":[)", groups, R"(],"bindings":[]})");
}

// Refused with kInvalidArgument, a message containing `want`, of bounded size. (How fast
// is not a unit test's business: the messages name the byte where reading stopped.)
void RequireRefused(const absl::Status& status, const std::string& want) {
  CAPTURE(status.ToString().substr(0, 600));
  REQUIRE(status.code() == absl::StatusCode::kInvalidArgument);
  const std::string message(status.message());
  CHECK(message.find(want) != std::string::npos);
  CHECK(message.size() <= 300);
}

absl::Status RestoreStatus(const std::string& state) {
  absl::StatusOr<std::unique_ptr<Scheduler>> s = Scheduler::Restore(Spec(), state);
  return s.status();
}

TEST_CASE("Regression: Restore refuses names, strings and documents over the limits",
          "[persistence][regression]") {
  SECTION("a name of 253 bytes is fine, 254 is not") {
    REQUIRE(RestoreStatus(State(Record(std::string(253, 'g')))).ok());
    RequireRefused(RestoreStatus(State(Record(std::string(254, 'g')))),
                   "$.groups[0].name: 254 bytes, more than the limit of 253 for a name");
    RequireRefused(RestoreStatus(State(Record("g", std::string(300, 'n')))),
                   "physicalNode: 300 bytes, more than the limit of 253");
  }
  SECTION("a 200 MB group name is refused before the JSON is parsed") {
    RequireRefused(RestoreStatus(State(Record(std::string(200 << 20, 'g')))),
                   "saved state: a string of more than 65536 bytes at byte 96: gggg");
  }
  SECTION("a 1 MB unknown key is quoted in 100 bytes") {
    std::string key(60000, 'k');
    RequireRefused(
        RestoreStatus(absl::StrCat(R"({"schema":"hived.scheduler-state",")", key, R"(":1})")),
        "$.kkkk");
  }
  SECTION("a malformed document's last token is quoted in 100 bytes") {
    RequireRefused(RestoreStatus(absl::StrCat(R"({"schema":tru)", std::string(60000, 'e'))),
                   "malformed JSON at line 1");
  }
  SECTION("another schema is quoted in 100 bytes") {  // (a string, not a name: no name limit)
    RequireRefused(RestoreStatus(absl::StrCat(R"({"schema":")", std::string(200, 's'),
                                              R"(","version":2,"groups":[]})")),
                   "$.schema: expected hived.scheduler-state, got ssss");
  }
  SECTION("more JSON values than the limit are refused before parsing") {
    std::string many = "[";
    many.reserve(static_cast<size_t>(kMaxStateJsonValues) * 2 + 8);
    for (int64_t i = 0; i <= kMaxStateJsonValues; ++i) many += "0,";
    many += "0]";
    RequireRefused(RestoreStatus(many), "saved state: more than 33554432 JSON values");
  }
  SECTION("a document over the size limit is refused unread") {
    const std::string huge(static_cast<size_t>(kMaxStateBytes) + 1, ' ');
    RequireRefused(RestoreStatus(huge), "saved state: 268435457 bytes, more than the limit");
  }
}

TEST_CASE("Regression: GroupRecordFromJson applies the same limits", "[persistence][regression]") {
  REQUIRE(GroupRecordFromJson(Record("job")).ok());
  RequireRefused(GroupRecordFromJson(Record(std::string(254, 'g'))).status(), "$.name: 254 bytes");
  RequireRefused(GroupRecordFromJson(Record(std::string(100 << 20, 'g'))).status(),
                 "group record: a string of more than 65536 bytes");
}

constexpr char kBindInfo[] = R"(node: rack0-node2
cellChain: V100-RACK
affinityGroupBindInfo:
- podPlacements:
  - physicalNode: NODE
    physicalLeafCellIndices: [0]
)";

std::string BindInfo(const std::string& node) {
  std::string text = kBindInfo;
  return text.replace(text.find("NODE"), 4, node);
}

TEST_CASE("Regression: ImportHivedBindInfo refuses annotations and names over the limits",
          "[persistence][regression]") {
  REQUIRE(ImportHivedBindInfo(BindInfo("rack0-node2")).ok());
  SECTION("a 200 MB scalar is refused before the YAML is read") {
    RequireRefused(ImportHivedBindInfo(BindInfo(std::string(200 << 20, 'n'))).status(),
                   "pod-bind-info: 209715331 bytes, more than the limit of 262144");
    RequireRefused(
        ImportHivedBindInfo(BindInfo("rack0-node2"), std::string(300 << 10, ' ')).status(),
        "pod-scheduling-spec: 307200 bytes, more than the limit of 262144");
  }
  SECTION("a name over 253 bytes") {
    RequireRefused(ImportHivedBindInfo(BindInfo(std::string(254, 'n'))).status(),
                   "affinityGroupBindInfo[0].podPlacements[0].physicalNode: 254 bytes, more "
                   "than the limit of 253 for a name");
    RequireRefused(
        ImportHivedBindInfo(BindInfo("rack0-node2"),
                            absl::StrCat("virtualCluster: ", std::string(1000, 'v'), "\n"))
            .status(),
        "pod-scheduling-spec:1:17: virtualCluster: 1000 bytes");
  }
  SECTION("a long scalar that is not an integer is quoted in ~100 bytes") {
    std::string text = kBindInfo;
    text.replace(text.find("[0]"), 3, absl::StrCat("[", std::string(100000, '7'), "x]"));
    text.replace(text.find("NODE"), 4, "rack0-node2");
    RequireRefused(ImportHivedBindInfo(text).status(), "physicalLeafCellIndices[0]: ");
  }
}

}  // namespace
}  // namespace hived

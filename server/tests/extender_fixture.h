// server/tests/extender_fixture.h: what the extender's in-process tests share: a binder
// recording binds as the API server would apply them, an extender on HiveD's design config,
// and reading its answers.
#ifndef HIVED_SERVER_TESTS_EXTENDER_FIXTURE_H_
#define HIVED_SERVER_TESTS_EXTENDER_FIXTURE_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "hived/config.h"
#include "hived/scheduler.h"
#include "nlohmann/json.hpp"
#include "server/extender.h"
#include "server/tests/test_pods.h"
#include "support/catch.h"

namespace hived::server::testing {

using nlohmann::json;

// Records binds as the API server would apply them.
class RecordingBinder : public hived::server::Binder {
 public:
  absl::Status Bind(const std::string& ns, const std::string& name, const std::string& uid,
                    const std::string& node,
                    const std::map<std::string, std::string>& annotations) override {
    if (fail) return absl::UnavailableError("API server down");
    calls.push_back({ns + "/" + name, uid, node, annotations});
    return absl::OkStatus();
  }
  struct Call {
    std::string pod;
    std::string uid;
    std::string node;
    std::map<std::string, std::string> annotations;
  };
  std::vector<Call> calls;
  bool fail = false;
};

inline std::unique_ptr<Extender> NewExtender(RecordingBinder* binder,
                                             hived::server::ExtenderOptions options = {}) {
  auto spec = hived::LoadClusterSpecFile(hived::server::testing::DesignConfig());
  REQUIRE(spec.ok());
  auto scheduler = hived::Scheduler::Create(*spec);
  REQUIRE(scheduler.ok());
  auto ext = std::make_unique<Extender>(*std::move(scheduler), std::move(options), binder);
  ext->SetReady();
  return ext;
}

inline json Body(const HttpReply& r) {
  json body = json::parse(r.body, nullptr, false);
  REQUIRE_FALSE(body.is_discarded());
  return body;
}

// The node a filter chose; "" when it did not bind.
inline std::string ChosenNode(const HttpReply& r) {
  REQUIRE(r.status == 200);
  json body = Body(r);
  if (!body["NodeNames"].is_array() || body["NodeNames"].empty()) return "";
  REQUIRE(body["NodeNames"].size() == 1);
  return body["NodeNames"][0];
}

inline std::string UserErrorOf(const HttpReply& r) {
  CHECK(r.status == 400);
  json body = Body(r);
  std::string message = body.is_string() ? body.get<std::string>() : body.value("Error", "");
  CHECK(message.rfind(hived::server::kUserErrorPrefix, 0) == 0);
  return message;
}

// Filters and binds `pod`; the node.
inline std::string FilterAndBind(Extender& ext, const json& pod) {
  std::string node = ChosenNode(ext.Filter(FilterArgs(pod)));
  REQUIRE_FALSE(node.empty());
  HttpReply bound = ext.Bind(BindArgs(pod, node));
  REQUIRE(bound.status == 200);
  return node;
}

}  // namespace hived::server::testing

#endif  // HIVED_SERVER_TESTS_EXTENDER_FIXTURE_H_

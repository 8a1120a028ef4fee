// deploy/: the ConfigMap holds a HiveD config the library loads, and the kube-scheduler
// configuration in it (and its copy in deploy/) calls the extender as HiveD's deployment does.
#include <fstream>
#include <sstream>
#include <string>

#include "hived/config.h"
#include "support/catch.h"
#include "yaml-cpp/yaml.h"

namespace {

std::string Read(const std::string& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void CheckSchedulerConfig(const YAML::Node& config) {
  CHECK(config["kind"].as<std::string>() == "KubeSchedulerConfiguration");
  CHECK(config["profiles"][0]["schedulerName"].as<std::string>() == "hivedscheduler");
  const YAML::Node& ext = config["extenders"][0];
  CHECK(ext["urlPrefix"].as<std::string>() == "http://127.0.0.1:30096/v1/extender");
  CHECK(ext["filterVerb"].as<std::string>() == "filter");
  CHECK(ext["preemptVerb"].as<std::string>() == "preempt");
  CHECK(ext["bindVerb"].as<std::string>() == "bind");
  CHECK(ext["httpTimeout"].as<std::string>() == "5s");
  CHECK(ext["nodeCacheCapable"].as<bool>());
  CHECK_FALSE(ext["ignorable"].as<bool>());
  CHECK(ext["managedResources"][0]["name"].as<std::string>() ==
        "hivedscheduler.microsoft.com/pod-scheduling-enable");
  CHECK(ext["managedResources"][0]["ignoredByScheduler"].as<bool>());
}

}  // namespace

TEST_CASE("deploy: the ConfigMap's HiveD config loads and listens where kube-scheduler calls",
          "[server][unit]") {
  std::string dir = std::string(HIVED_SOURCE_DIR) + "/deploy/";
  YAML::Node map = YAML::Load(Read(dir + "configmap.yaml"));
  std::string hived = map["data"]["hivedscheduler.yaml"].as<std::string>();
  auto spec = hived::LoadClusterSpecString(hived, "configmap.yaml:hivedscheduler.yaml");
  INFO((spec.ok() ? "" : std::string(spec.status().message())));
  CHECK(spec.ok());
  CHECK(YAML::Load(hived)["webServerAddress"].as<std::string>() == ":30096");
  CheckSchedulerConfig(YAML::Load(map["data"]["kube-scheduler-config.yaml"].as<std::string>()));
  CheckSchedulerConfig(YAML::Load(Read(dir + "kube-scheduler-config.yaml")));
  // The Deployment mounts that ConfigMap and points CONFIG at the HiveD config.
  std::string deployment = Read(dir + "deployment.yaml");
  CHECK(deployment.find("name: hived-scheduler-config") != std::string::npos);
  CHECK(deployment.find("value: /etc/hived/hivedscheduler.yaml") != std::string::npos);
  CHECK(deployment.find("path: /readyz") != std::string::npos);
}

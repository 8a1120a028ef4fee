// server/tests/test_pods.h: Kubernetes v1 Pod objects as kube-scheduler sends them, with
// HiveD's annotations (as in HiveD's examples), for the server's tests.
#ifndef HIVED_SERVER_TESTS_TEST_PODS_H_
#define HIVED_SERVER_TESTS_TEST_PODS_H_

#include <algorithm>
#include <string>
#include <vector>

#include "hived/config.h"
#include "hived/scheduler.h"
#include "nlohmann/json.hpp"
#include "support/testdata.h"

namespace hived::server::testing {

inline std::string DesignConfig() { return hived::testing::HivedConfigsDir() + "/design.yaml"; }

// A pending pod opted in to HiveD (resource limit pod-scheduling-enable: 1) with the spec
// annotation `spec_yaml`.
inline nlohmann::json MakePod(const std::string& name, const std::string& uid,
                              const std::string& spec_yaml, bool opt_in = true) {
  nlohmann::json limits = {{"nvidia.com/gpu", "0"}};
  if (opt_in) limits["hivedscheduler.microsoft.com/pod-scheduling-enable"] = "1";
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name},
        {"namespace", "default"},
        {"uid", uid},
        {"annotations", {{"hivedscheduler.microsoft.com/pod-scheduling-spec", spec_yaml}}}}},
      {"spec",
       {{"schedulerName", "default-scheduler"},
        {"containers",
         {{{"name", "main"}, {"image", "ubuntu:22.04"}, {"resources", {{"limits", limits}}}}}}}},
      {"status", {{"phase", "Pending"}}}};
}

// A gang member's spec: `pods` pods of `gpus` leaf cells in VC `vc` at `priority`.
inline std::string GangSpec(const std::string& vc, int priority, const std::string& group, int pods,
                            int gpus, const std::string& leaf_type = "") {
  std::string s = "virtualCluster: " + vc + "\npriority: " + std::to_string(priority) + "\n";
  if (!leaf_type.empty()) s += "leafCellType: " + leaf_type + "\n";
  s += "leafCellNumber: " + std::to_string(gpus) + "\naffinityGroup:\n  name: " + group +
       "\n  members:\n  - podNumber: " + std::to_string(pods) +
       "\n    leafCellNumber: " + std::to_string(gpus) + "\n";
  return s;
}

// Every node of the design config, in name order: kube-scheduler's candidates when all its
// own filters pass.
inline const std::vector<std::string>& DesignNodes() {
  static const std::vector<std::string> nodes = [] {
    std::vector<std::string> names;
    auto spec = hived::LoadClusterSpecFile(DesignConfig());
    if (!spec.ok()) return names;
    auto scheduler = hived::Scheduler::Create(*spec);
    if (!scheduler.ok()) return names;
    for (const hived::NodeStatus& n : (*scheduler)->Nodes()) names.push_back(n.name);
    std::sort(names.begin(), names.end());
    return names;
  }();
  return nodes;
}

// kube-scheduler's ExtenderArgs with nodeCacheCapable: true (by default every node is a
// candidate, so HiveD's force bind for a decided node outside the candidates stays off).
inline std::string FilterArgs(const nlohmann::json& pod,
                              const std::vector<std::string>& nodes = DesignNodes()) {
  return nlohmann::json{{"Pod", pod}, {"NodeNames", nodes}}.dump();
}

inline std::string PreemptArgs(const nlohmann::json& pod) {
  return nlohmann::json{
      {"Pod", pod},
      {"NodeNameToMetaVictims",
       {{"1.0.0.0", {{"Pods", nlohmann::json::array()}, {"NumPDBViolations", 0}}},
        {"1.0.0.1", {{"Pods", nlohmann::json::array()}, {"NumPDBViolations", 0}}}}}}
      .dump();
}

inline std::string BindArgs(const nlohmann::json& pod, const std::string& node) {
  return nlohmann::json{{"PodName", pod["metadata"]["name"]},
                        {"PodNamespace", pod["metadata"]["namespace"]},
                        {"PodUID", pod["metadata"]["uid"]},
                        {"Node", node}}
      .dump();
}

}  // namespace hived::server::testing

#endif  // HIVED_SERVER_TESTS_TEST_PODS_H_

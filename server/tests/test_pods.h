// server/tests/test_pods.h: Kubernetes v1 Pod objects as kube-scheduler sends them, with
// HiveD's annotations (as in HiveD's examples), for the server's tests.
#ifndef HIVED_SERVER_TESTS_TEST_PODS_H_
#define HIVED_SERVER_TESTS_TEST_PODS_H_

#include <string>

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

// kube-scheduler's ExtenderArgs with nodeCacheCapable: true.
inline std::string FilterArgs(const nlohmann::json& pod, const std::vector<std::string>& nodes = {
                                                             "1.0.0.0", "1.0.0.1", "1.0.0.2"}) {
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

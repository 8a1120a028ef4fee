// The extender's routes on HiveD's design config, called directly with kube-scheduler's
// payloads (Kubernetes v1 Pods with HiveD's annotations): filter → bind, gangs built from
// their pods, filter → preempt → delete victims → filter → bind, bad input, inspect, recovery.
#include "server/extender.h"

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "hived/config.h"
#include "hived/scheduler.h"
#include "server/tests/extender_fixture.h"
#include "server/tests/test_pods.h"
#include "support/catch.h"

namespace {

using hived::server::Extender;
using hived::server::HttpReply;
using hived::server::testing::BindArgs;
using hived::server::testing::Body;
using hived::server::testing::ChosenNode;
using hived::server::testing::FilterAndBind;
using hived::server::testing::FilterArgs;
using hived::server::testing::GangSpec;
using hived::server::testing::MakePod;
using hived::server::testing::NewExtender;
using hived::server::testing::PreemptArgs;
using hived::server::testing::RecordingBinder;
using hived::server::testing::UserErrorOf;
using nlohmann::json;

}  // namespace

TEST_CASE("Extender: filter chooses a node and bind writes HiveD's annotations", "[server][unit]") {
  RecordingBinder binder;
  auto ext = NewExtender(&binder);
  json pod = MakePod("job1-0", "uid-1", GangSpec("VC2", 0, "job1", 1, 8, "DGX1-P100"));
  std::string node = ChosenNode(ext->Filter(FilterArgs(pod)));
  CHECK((node == "1.0.0.0" || node == "1.0.0.1" || node == "1.0.0.2"));
  // A Binding pod filtered again gets the same node.
  CHECK(ChosenNode(ext->Filter(FilterArgs(pod))) == node);
  HttpReply bound = ext->Bind(BindArgs(pod, node));
  REQUIRE(bound.status == 200);
  REQUIRE(binder.calls.size() == 1);
  const auto& a = binder.calls[0].annotations;
  CHECK(binder.calls[0].node == node);
  CHECK(a.at("hivedscheduler.microsoft.com/pod-leaf-cell-isolation") == "0,1,2,3,4,5,6,7");
  // HiveD's record, as the library writes it (`ExportHivedBindInfo`).
  const std::string& info = a.at("hivedscheduler.microsoft.com/pod-bind-info");
  auto record = hived::ImportHivedBindInfo(info);
  REQUIRE(record.ok());
  CHECK(record->placement.chain == "3-DGX1-P100-NODE");
  REQUIRE(record->placement.pods.size() == 1);
  CHECK(record->placement.pods[0].node == node);
  CHECK(record->placement.pods[0].leaf_cell_indices ==
        std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(record->placement.pods[0].preassigned_cell_types[0] == "DGX1-P100-NODE");
  // Inspect: HiveD's AffinityGroup shape.
  json group = Body(ext->Inspect("/v1/inspect/affinitygroups/job1"));
  CHECK(group["metadata"]["name"] == "job1");
  CHECK(group["status"]["vc"] == "VC2");
  CHECK(group["status"]["state"] == "Allocated");
  CHECK(group["status"]["physicalPlacement"][node].size() == 8);
  CHECK(group["status"]["allocatedPods"] == json::array({"uid-1"}));
  CHECK(group["status"]["virtualPlacement"].size() == 1);
  CHECK(Body(ext->Inspect("/v1/inspect/affinitygroups/"))["items"].size() == 1);
  CHECK(ext->scheduler().CheckInvariants().ok());
}

TEST_CASE("Extender: a gang is built from its pods as they arrive", "[server][unit]") {
  RecordingBinder binder;
  auto ext = NewExtender(&binder);
  std::string spec = GangSpec("VC2", 0, "gang", 2, 4, "DGX1-P100");
  json p0 = MakePod("gang-0", "g0", spec);
  json p1 = MakePod("gang-1", "g1", spec);
  json p2 = MakePod("gang-2", "g2", spec);
  std::string n0 = FilterAndBind(*ext, p0);
  std::string n1 = FilterAndBind(*ext, p1);
  CHECK(binder.calls[0].annotations.at("hivedscheduler.microsoft.com/pod-leaf-cell-isolation") !=
        binder.calls[1].annotations.at("hivedscheduler.microsoft.com/pod-leaf-cell-isolation"));
  // Both pods carry the whole gang's placement.
  const std::string& info0 =
      binder.calls[0].annotations.at("hivedscheduler.microsoft.com/pod-bind-info");
  const std::string& info1 =
      binder.calls[1].annotations.at("hivedscheduler.microsoft.com/pod-bind-info");
  CHECK(info0.substr(info0.find("affinityGroupBindInfo")) ==
        info1.substr(info1.find("affinityGroupBindInfo")));
  // A third pod is one more than the gang has.
  std::string e = UserErrorOf(ext->Filter(FilterArgs(p2)));
  CHECK(e.find("Requesting more pods than the configured number for 4 leaf cells (2 pods) in "
               "affinity group gang") != std::string::npos);
  // Deleting one pod keeps the gang; deleting both releases it.
  ext->OnPodDeleted(p0);
  CHECK(ext->scheduler().GetGroup("gang").state == hived::GroupState::kAllocated);
  ext->OnPodDeleted(p1);
  CHECK(ext->scheduler().GetGroup("gang").state == hived::GroupState::kAbsent);
  CHECK(ext->scheduler().CheckInvariants().ok());
}

TEST_CASE("Extender: a pod that cannot fit waits with HiveD's reason", "[server][unit]") {
  RecordingBinder binder;
  auto ext = NewExtender(&binder);
  json big = MakePod("big-0", "b0", GangSpec("VC2", 0, "big", 4, 8, "DGX1-P100"));
  HttpReply r = ext->Filter(FilterArgs(big));
  REQUIRE(r.status == 200);
  json body = Body(r);
  CHECK(body["NodeNames"].empty());
  std::string reason = body["FailedNodes"]["hivedscheduler"];
  CHECK(reason.rfind("Pod is waiting for preemptible or free resource to appear: ", 0) == 0);
  CHECK(ext->scheduler().Groups().empty());
}

TEST_CASE("Extender: filter → preempt → delete victims → filter → bind", "[server][unit]") {
  RecordingBinder binder;
  auto ext = NewExtender(&binder);
  std::string low_spec = GangSpec("VC2", 0, "low", 2, 8, "DGX1-P100");
  json l0 = MakePod("low-0", "l0", low_spec);
  json l1 = MakePod("low-1", "l1", low_spec);
  FilterAndBind(*ext, l0);
  FilterAndBind(*ext, l1);
  json h0 = MakePod("high-0", "h0", GangSpec("VC2", 100, "high", 1, 8, "DGX1-P100"));
  // Filter: the victims' nodes fail, naming the preemptible pods.
  HttpReply f = ext->Filter(FilterArgs(h0));
  json fb = Body(f);
  REQUIRE(fb["NodeNames"].empty());
  REQUIRE_FALSE(fb["FailedNodes"].contains("hivedscheduler"));
  REQUIRE(fb["FailedNodes"].size() >= 1);
  for (auto& [node, message] : fb["FailedNodes"].items()) {
    CHECK(message.get<std::string>().rfind("node(" + node + ") has preemptible Pods: [", 0) == 0);
  }
  // Preempt: the victims, the whole low gang.
  HttpReply p = ext->Preempt(PreemptArgs(h0));
  REQUIRE(p.status == 200);
  json victims = Body(p)["NodeNameToMetaVictims"];
  std::set<std::string> uids;
  for (auto& [node, v] : victims.items()) {
    for (const json& pod : v["Pods"]) uids.insert(pod["UID"].get<std::string>());
  }
  CHECK(uids == std::set<std::string>{"l0", "l1"});
  CHECK(ext->scheduler().GetGroup("high").state == hived::GroupState::kPreempting);
  json inspected = Body(ext->Inspect("/v1/inspect/affinitygroups/high"));
  CHECK(inspected["status"]["state"] == "Preempting");
  CHECK(inspected["status"]["preemptingPods"] == json::array({"h0"}));
  CHECK(Body(ext->Inspect("/v1/inspect/affinitygroups/low"))["status"]["state"] ==
        "BeingPreempted");
  // While the victims run, filter waits.
  CHECK(ChosenNode(ext->Filter(FilterArgs(h0))).empty());
  ext->OnPodDeleted(l0);
  ext->OnPodDeleted(l1);
  std::string node = FilterAndBind(*ext, h0);
  CHECK_FALSE(node.empty());
  CHECK(ext->scheduler().GetGroup("high").state == hived::GroupState::kAllocated);
  CHECK(ext->scheduler().GetGroup("low").state == hived::GroupState::kAbsent);
  std::string metrics = ext->Metrics();
  CHECK(metrics.find("hived_extender_preemptions_total 1\n") != std::string::npos);
  CHECK(metrics.find("hived_extender_victim_pods_total 2\n") != std::string::npos);
  CHECK(ext->scheduler().CheckInvariants().ok());
}

TEST_CASE("Extender: bad input is a 4xx with a clear message and changes nothing",
          "[server][unit]") {
  RecordingBinder binder;
  auto ext = NewExtender(&binder);
  json ok_pod = MakePod("ok-0", "ok", GangSpec("VC2", 0, "ok", 1, 4, "DGX1-P100"));
  std::string node = FilterAndBind(*ext, ok_pod);
  // Filtered, not yet bound: its Kubernetes bind fails below.
  json unbound = MakePod("ub-0", "ub", GangSpec("VC2", 0, "ub", 1, 1, "DGX1-P100"));
  std::string unbound_node = ChosenNode(ext->Filter(FilterArgs(unbound)));
  REQUIRE_FALSE(unbound_node.empty());
  std::string before = Body(ext->Inspect("/v1/inspect/clusterstatus")).dump();

  CHECK(UserErrorOf(ext->Filter("{not json")).find("not a JSON") != std::string::npos);
  CHECK(UserErrorOf(ext->Filter("[]")).find("not a JSON") != std::string::npos);
  CHECK(UserErrorOf(ext->Filter(R"({"NodeNames": []})")).find("no Pod") != std::string::npos);
  CHECK(UserErrorOf(ext->Preempt("{")).find("not a JSON") != std::string::npos);
  CHECK(UserErrorOf(ext->Bind("{")).find("not a JSON") != std::string::npos);
  // Unknown VC.
  json vc = MakePod("vc-0", "vc", GangSpec("NOPE", 0, "vc", 1, 1));
  CHECK(UserErrorOf(ext->Filter(FilterArgs(vc))).find("NOPE") != std::string::npos);
  CHECK(UserErrorOf(ext->Preempt(PreemptArgs(vc))).find("NOPE") != std::string::npos);
  // A spec breaking HiveD's rules; a pod not opted in.
  json rule = MakePod("r-0", "r", "virtualCluster: VC2\nleafCellNumber: -1\n");
  CHECK(UserErrorOf(ext->Filter(FilterArgs(rule))).find("LeafCellNumber is non-positive") !=
        std::string::npos);
  json off = MakePod("off-0", "off", GangSpec("VC2", 0, "off", 1, 1), /*opt_in=*/false);
  CHECK(UserErrorOf(ext->Filter(FilterArgs(off))).find("pod-scheduling-enable") !=
        std::string::npos);
  // A bind for a pod never filtered; to another node than decided; missing fields.
  json never = MakePod("never-0", "never", GangSpec("VC2", 0, "never", 1, 1));
  CHECK(UserErrorOf(ext->Bind(BindArgs(never, "1.0.0.0"))).find("never filtered") !=
        std::string::npos);
  std::string other = node == "1.0.0.0" ? "1.0.0.1" : "1.0.0.0";
  CHECK(UserErrorOf(ext->Bind(BindArgs(ok_pod, other))).find("is decided to node") !=
        std::string::npos);
  CHECK(UserErrorOf(ext->Bind(R"({"PodName": "x"})")).find("needs PodName") != std::string::npos);
  // A pod bound already is not bound again: answered as done, no Kubernetes call.
  CHECK(ext->Bind(BindArgs(ok_pod, node)).status == 200);
  CHECK(binder.calls.size() == 1);

  CHECK(Body(ext->Inspect("/v1/inspect/clusterstatus")).dump() == before);
  CHECK(ext->scheduler().Groups().size() == 2);
  // A failed Kubernetes bind is a platform error (500). The pod keeps its allocation (the
  // bind decided it): kube-scheduler's retry filters it to the same node and binds it once.
  binder.fail = true;
  HttpReply down = ext->Bind(BindArgs(unbound, unbound_node));
  CHECK(down.status == 500);
  CHECK(Body(down)["Error"].get<std::string>().rfind(hived::server::kPlatformErrorPrefix, 0) == 0);
  binder.fail = false;
  CHECK(ChosenNode(ext->Filter(FilterArgs(unbound))) == unbound_node);
  CHECK(ext->Bind(BindArgs(unbound, unbound_node)).status == 200);
  CHECK(binder.calls.size() == 2);
  CHECK(ext->scheduler().GetGroup("ub").state == hived::GroupState::kAllocated);
  CHECK(ext->scheduler().CheckInvariants().ok());
  CHECK(ext->Metrics().find("hived_extender_api_errors_total{kind=\"filter-user-error\"}") !=
        std::string::npos);
}

TEST_CASE("Extender: not ready before recovery", "[server][unit]") {
  auto spec = hived::LoadClusterSpecFile(hived::server::testing::DesignConfig());
  REQUIRE(spec.ok());
  Extender ext(*hived::Scheduler::Create(*spec), {}, nullptr);
  json pod = MakePod("a", "a", GangSpec("VC2", 0, "a", 1, 1));
  CHECK(ext.Filter(FilterArgs(pod)).status == 503);
  CHECK(ext.Preempt(PreemptArgs(pod)).status == 503);
  CHECK(ext.Bind(BindArgs(pod, "1.0.0.0")).status == 503);
  CHECK(ext.Inspect("/v1/inspect/affinitygroups/").status == 200);
}

TEST_CASE("Extender: inspect routes answer in HiveD's shapes", "[server][unit]") {
  RecordingBinder binder;
  auto ext = NewExtender(&binder);
  json status = Body(ext->Inspect("/v1/inspect/clusterstatus"));
  REQUIRE(status["physicalCluster"].is_array());
  const json& top = status["physicalCluster"][0];
  CHECK(top.contains("leafCellType"));
  for (const char* key :
       {"cellType", "isNodeLevel", "cellAddress", "cellState", "cellHealthiness", "cellPriority"}) {
    CHECK(top.contains(key));
  }
  CHECK(top["cellState"] == "Free");
  CHECK(top["cellHealthiness"] == "Healthy");
  CHECK(status["virtualClusters"].contains("VC1"));
  CHECK(status["virtualClusters"].contains("VC2"));
  CHECK(Body(ext->Inspect("/v1/inspect/clusterstatus/physicalcluster")) ==
        status["physicalCluster"]);
  CHECK(Body(ext->Inspect("/v1/inspect/clusterstatus/virtualclusters/")) ==
        status["virtualClusters"]);
  CHECK(Body(ext->Inspect("/v1/inspect/clusterstatus/virtualclusters/VC2")) ==
        status["virtualClusters"]["VC2"]);
  CHECK(UserErrorOf(ext->Inspect("/v1/inspect/clusterstatus/virtualclusters/NOPE"))
            .find("VC NOPE does not exist") != std::string::npos);
  CHECK(UserErrorOf(ext->Inspect("/v1/inspect/affinitygroups/none")).find("does not exist") !=
        std::string::npos);
  CHECK(ext->Inspect("/v1/inspect/other").status == 404);
  // Bad nodes show as Bad.
  ext->OnNodeHealth("1.0.0.1", false);
  json physical = Body(ext->Inspect("/v1/inspect/clusterstatus/physicalcluster"));
  CHECK(physical.dump().find("\"cellHealthiness\":\"Bad\"") != std::string::npos);
}

TEST_CASE("Extender: recovery from bind info rebuilds the same state", "[server][unit]") {
  RecordingBinder binder;
  auto first = NewExtender(&binder);
  std::vector<json> pods = {
      MakePod("a-0", "a0", GangSpec("VC2", 0, "a", 2, 4, "DGX1-P100")),
      MakePod("a-1", "a1", GangSpec("VC2", 0, "a", 2, 4, "DGX1-P100")),
      MakePod("b-0", "b0", GangSpec("VC2", -1, "b", 1, 2, "DGX1-P100")),
      MakePod("c-0", "c0", "virtualCluster: VC1\npriority: 5\ngpuType: DGX2-V100\ngpuNumber: 16\n"),
  };
  // Recovered from hived's record (the same virtual cells), from the record as the previous
  // server version wrote it (gangs allocated whole: no pods in it), and from HiveD's bind
  // info alone (pods bound by HiveD: HiveD's rule, the same cells here as nothing else
  // competes).
  enum class Written { kRecord, kPreviousVersion, kHivedOnly };
  Written written = GENERATE(Written::kRecord, Written::kPreviousVersion, Written::kHivedOnly);
  CAPTURE(static_cast<int>(written));
  for (json& pod : pods) {
    std::string node = FilterAndBind(*first, pod);
    // The API server applies the binding: node name and annotations.
    pod["spec"]["nodeName"] = node;
    pod["status"]["phase"] = "Running";
    for (const auto& [k, v] : binder.calls.back().annotations) {
      pod["metadata"]["annotations"][k] = v;
    }
    CHECK(pod["metadata"]["annotations"].contains(hived::server::kAnnotationGroupRecord));
  }
  for (json& pod : pods) {
    json& annotations = pod["metadata"]["annotations"];
    if (written == Written::kHivedOnly) annotations.erase(hived::server::kAnnotationGroupRecord);
    if (written != Written::kPreviousVersion) continue;
    auto spec = hived::server::ParseSchedulingSpec(*hived::server::ParsePod(pod));
    REQUIRE(spec.ok());
    auto record = first->scheduler().GetGroupRecord(spec->affinity_group_name);
    REQUIRE(record.ok());
    record->pods.clear();
    annotations[hived::server::kAnnotationGroupRecord] = hived::GroupRecordToJson(*record);
  }
  json pending = MakePod("d-0", "d0", GangSpec("VC2", 0, "d", 1, 1));  // never bound: ignored
  std::vector<json> listed = pods;
  listed.push_back(pending);

  RecordingBinder binder2;
  auto spec = hived::LoadClusterSpecFile(hived::server::testing::DesignConfig());
  Extender second(*hived::Scheduler::Create(*spec), {}, &binder2);
  hived::server::RecoveryReport report = second.Recover(listed);
  CHECK(report.problems.empty());
  CHECK(report.pods_recovered == 4);
  CHECK(report.groups_recovered == 3);
  second.SetReady();
  CHECK(Body(second.Inspect("/v1/inspect/affinitygroups/")) ==
        Body(first->Inspect("/v1/inspect/affinitygroups/")));
  CHECK(Body(second.Inspect("/v1/inspect/clusterstatus")) ==
        Body(first->Inspect("/v1/inspect/clusterstatus")));
  CHECK(second.Metrics().find("hived_extender_pods_recovered_total 4\n") != std::string::npos);
  // A recovered pod filtered again keeps its node; deleting the gang's pods releases it.
  CHECK(ChosenNode(second.Filter(FilterArgs(pods[0]))) == pods[0]["spec"]["nodeName"]);
  second.OnPodDeleted(pods[0]);
  second.OnPodDeleted(pods[1]);
  CHECK(second.scheduler().GetGroup("a").state == hived::GroupState::kAbsent);
  CHECK(second.scheduler().CheckInvariants().ok());
}

TEST_CASE("Extender: a preemptor deleted while preempting gives up its reservation",
          "[server][unit]") {
  RecordingBinder binder;
  auto ext = NewExtender(&binder);
  std::string low_spec = GangSpec("VC2", 0, "low", 2, 8, "DGX1-P100");
  json l0 = MakePod("low-0", "l0", low_spec);
  json l1 = MakePod("low-1", "l1", low_spec);
  FilterAndBind(*ext, l0);
  FilterAndBind(*ext, l1);
  json h0 = MakePod("high-0", "h0", GangSpec("VC2", 100, "high", 1, 8, "DGX1-P100"));
  REQUIRE(Body(ext->Preempt(PreemptArgs(h0)))["NodeNameToMetaVictims"].size() >= 1);
  REQUIRE(ext->scheduler().GetGroup("high").state == hived::GroupState::kPreempting);
  ext->OnPodDeleted(h0);
  CHECK(ext->scheduler().GetGroup("high").state == hived::GroupState::kAbsent);
  CHECK(ext->scheduler().GetGroup("low").state == hived::GroupState::kAllocated);
  CHECK(ext->scheduler().CheckInvariants().ok());
}

TEST_CASE("Extender: waitingPodSchedulingBlockMilliSec delays a waiting answer", "[server][unit]") {
  auto spec = hived::LoadClusterSpecFile(hived::server::testing::DesignConfig());
  REQUIRE(spec.ok());
  hived::server::ExtenderOptions options;
  options.waiting_block_ms = 150;
  Extender ext(*hived::Scheduler::Create(*spec), options, nullptr);
  ext.SetReady();
  json big = MakePod("big-0", "b0", GangSpec("VC2", 0, "big", 4, 8, "DGX1-P100"));
  auto start = std::chrono::steady_clock::now();
  HttpReply r = ext.Filter(FilterArgs(big));
  auto elapsed = std::chrono::steady_clock::now() - start;
  CHECK(Body(r)["FailedNodes"].contains("hivedscheduler"));
  CHECK(elapsed >= std::chrono::milliseconds(150));
}

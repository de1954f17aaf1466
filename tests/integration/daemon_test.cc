// `gantry serve` against the real API server. Each test runs its own daemon with a
// scheduler name of its own, on nodes labelled for it, so that tests sharing the server
// cannot take each other's pods or room.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <thread>

#include "tests/integration/daemon_process.h"
#include "tests/integration/testenv.h"

namespace gantry::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

TestEnv& Env() {
  return TestEnv::Get();
}

json Pod(const std::string& ns, const std::string& name, const std::string& scheduler, int gpus,
         const std::string& test, json annotations = json::object()) {
  json requests = {{"cpu", "500m"}, {"memory", "1Gi"}};
  if (gpus > 0) requests["nvidia.com/gpu"] = std::to_string(gpus);
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", ns}, {"annotations", annotations}}},
              {"spec",
               {{"schedulerName", scheduler},
                {"nodeSelector", {{"gantry-test", test}}},
                {"containers",
                 {{{"name", "main"},
                   {"image", "busybox"},
                   {"resources",
                    {{"requests", requests},
                     {"limits", gpus > 0 ? json{{"nvidia.com/gpu", std::to_string(gpus)}}
                                         : json::object()}}}}}}}}};
  return pod;
}

void MustCreate(const json& object) {
  auto r = Env().Apply(object);
  ASSERT_TRUE(r.ok()) << r.status().message();
}

void Nodes(const std::string& test, int count, int gpus) {
  for (int i = 0; i < count; ++i) {
    auto r = Env().CreateNode(test + "-node-" + std::to_string(i), gpus, "32", "256Gi",
                              {{"gantry-test", test}});
    ASSERT_TRUE(r.ok()) << r.status().message();
  }
}

std::vector<json> PodsIn(const std::string& ns) {
  auto r = Env().Call("GET", "/api/v1/namespaces/" + ns + "/pods");
  if (!r.ok()) return {};
  return (*r)["items"].get<std::vector<json>>();
}

int BoundIn(const std::string& ns) {
  int n = 0;
  for (const json& p : PodsIn(ns)) n += p["spec"].contains("nodeName") ? 1 : 0;
  return n;
}

// "Scheduled" events gantry wrote, per pod.
std::map<std::string, int> ScheduledEvents(const std::string& ns) {
  std::map<std::string, int> out;
  auto r =
      Env().Call("GET", "/api/v1/namespaces/" + ns + "/events?fieldSelector=reason%3DScheduled");
  if (!r.ok()) return out;
  for (const json& e : (*r)["items"]) out[e["involvedObject"]["name"].get<std::string>()]++;
  return out;
}

std::vector<json> EventsFor(const std::string& ns, const std::string& name) {
  auto r = Env().Call(
      "GET", "/api/v1/namespaces/" + ns + "/events?fieldSelector=involvedObject.name%3D" + name);
  if (!r.ok()) return {};
  return (*r)["items"].get<std::vector<json>>();
}

// No node holds more GPUs than it has: the check that a pod bound twice, or two pods
// given the same room, would fail.
void ExpectNoOvercommit(const std::string& ns, int gpus_per_node) {
  std::map<std::string, int> used;
  for (const json& p : PodsIn(ns)) {
    if (!p["spec"].contains("nodeName")) continue;
    const json& limits = p["spec"]["containers"][0]["resources"]["limits"];
    int g = limits.contains("nvidia.com/gpu")
                ? std::stoi(limits["nvidia.com/gpu"].get<std::string>())
                : 0;
    used[p["spec"]["nodeName"].get<std::string>()] += g;
  }
  for (const auto& [node, g] : used) EXPECT_LE(g, gpus_per_node) << node;
}

TEST(Daemon, BindsOnePodAndWritesTheSharedGpuDevice) {
  const std::string test = "one";
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  Nodes(test, 1, 4);
  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  MustCreate(Pod(test, "whole", "gantry-" + test, 2, test));
  MustCreate(Pod(test, "half", "gantry-" + test, 0, test, {{"gantry.dev/gpu-fraction", "0.5"}}));
  ASSERT_TRUE(TestEnv::WaitFor([&] { return BoundIn(test) == 2; }, seconds(20))) << daemon.Log();
  auto half = Env().Call("GET", "/api/v1/namespaces/one/pods/half");
  ASSERT_TRUE(half.ok());
  EXPECT_EQ((*half)["spec"]["nodeName"], "one-node-0");
  const json& annotations = (*half)["metadata"]["annotations"];
  ASSERT_TRUE(annotations.contains("gantry.dev/gpu-devices")) << half->dump();
  int device = std::stoi(annotations["gantry.dev/gpu-devices"].get<std::string>());
  EXPECT_GE(device, 0);
  EXPECT_LT(device, 4);
  // A pod alone is no gang: autoscalers may move it as they like.
  EXPECT_FALSE(annotations.contains("karpenter.sh/do-not-disrupt")) << half->dump();
  ASSERT_TRUE(TestEnv::WaitFor([&] { return ScheduledEvents(test).size() == 2; }, seconds(10)));
  EXPECT_EQ(ScheduledEvents(test)["whole"], 1);
}

TEST(Daemon, GangBindsNothingUntilAllFitThenEverything) {
  const std::string test = "gang";
  const Status crds = Env().EnsureGantryCrds();
  ASSERT_TRUE(crds.ok()) << crds.message();
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  Nodes(test, 2, 3);  // room for 6 one-GPU pods
  MustCreate({{"apiVersion", "scheduling.volcano.sh/v1beta1"},
              {"kind", "PodGroup"},
              {"metadata", {{"name", "train"}, {"namespace", test}}},
              {"spec", {{"minMember", 8}}}});
  for (int i = 0; i < 8; ++i) {
    MustCreate(Pod(test, "worker-" + std::to_string(i), "gantry-" + test, 1, test,
                   {{"scheduling.k8s.io/group-name", "train"}}));
  }
  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  // The PodGroup says why, and the pods carry PodScheduled=False.
  json group;
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        auto r = Env().Call("GET",
                            "/apis/scheduling.volcano.sh/v1beta1/namespaces/gang/podgroups/train");
        if (!r.ok() || !(*r).contains("status") || !(*r)["status"].contains("conditions"))
          return false;
        group = *r;
        return true;
      },
      seconds(20)))
      << daemon.Log();
  EXPECT_EQ(group["status"]["phase"], "Pending");
  std::string message = group["status"]["conditions"][0]["message"];
  EXPECT_NE(message.find("minMember 8"), std::string::npos) << message;
  EXPECT_NE(message.find("2 short"), std::string::npos) << message;
  EXPECT_EQ(BoundIn(test), 0);
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        // Short of room: Unschedulable, so that an autoscaler adds a node.
        for (const json& p : PodsIn(test)) {
          if (PodScheduledMessage(p).find("minMember") == std::string::npos ||
              PodScheduledField(p, "reason") != "Unschedulable") {
            return false;
          }
        }
        return true;
      },
      seconds(10)));
  // Room for two more: all eight go.
  auto r = Env().CreateNode("gang-node-2", 2, "32", "256Gi", {{"gantry-test", test}});
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(TestEnv::WaitFor([&] { return BoundIn(test) == 8; }, seconds(20))) << daemon.Log();
  ExpectNoOvercommit(test, 3);
  // Each member came bound with the annotations that keep autoscalers from taking its
  // node while the gang runs (autoscaler.protectGangs, on by default).
  for (const json& p : PodsIn(test)) {
    const json annotations = p["metadata"].value("annotations", json::object());
    EXPECT_EQ(annotations.value("karpenter.sh/do-not-disrupt", ""), "true") << p.dump();
    EXPECT_EQ(annotations.value("cluster-autoscaler.kubernetes.io/safe-to-evict", ""), "false");
  }
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        auto g = Env().Call("GET",
                            "/apis/scheduling.volcano.sh/v1beta1/namespaces/gang/podgroups/train");
        return g.ok() && (*g)["status"]["phase"] == "Running" && (*g)["status"]["running"] == 8;
      },
      seconds(10)));
}

// Four nodes of the test under one `outer` domain: nodes 0 and 1 (2 GPUs each) in `inner`
// domain PREFIX1, nodes 2 and 3 (4 GPUs each) in PREFIX2.
void TwoDomainsOfNodes(const std::string& test, const std::string& outer, const std::string& inner,
                       const std::string& prefix) {
  for (int i = 0; i < 4; ++i) {
    const bool first = i < 2;
    auto r = Env().CreateNode(
        test + "-node-" + std::to_string(i), first ? 2 : 4, "32", "256Gi",
        {{"gantry-test", test}, {outer, "o1"}, {inner, prefix + (first ? "1" : "2")}});
    ASSERT_TRUE(r.ok()) << r.status().message();
  }
}

// Every pod of the test is bound in TwoDomainsOfNodes' second domain.
void ExpectAllInTheSecondDomain(const std::string& test) {
  for (const json& p : PodsIn(test)) {
    const std::string node = p["spec"]["nodeName"];
    EXPECT_TRUE(node == test + "-node-2" || node == test + "-node-3")
        << p["metadata"]["name"] << " on " << node;
  }
}

// Topology (issue 13): levels from topologyKeys; a Volcano PodGroup's networkTopology
// (hard, tier 1: the innermost level, leaf) keeps its gang inside one leaf; pods with
// Kueue's podset-required-topology annotation wait when no leaf has room, naming the level.
// Leaf l1 has two 2-GPU nodes, l2 two 4-GPU nodes: binpack alone would start the 2-GPU
// gang on l1's fuller nodes and span both leaves.
TEST(Daemon, AGangWithARequiredTopologyStaysInsideOneLeaf) {
  const std::string test = "topology";
  const Status crds = Env().EnsureGantryCrds();
  ASSERT_TRUE(crds.ok()) << crds.message();
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  const std::string spine = test + "-spine", leaf = test + "-leaf";
  TwoDomainsOfNodes(test, spine, leaf, "l");
  MustCreate(
      {{"apiVersion", "scheduling.volcano.sh/v1beta1"},
       {"kind", "PodGroup"},
       {"metadata", {{"name", "train"}, {"namespace", test}}},
       {"spec",
        {{"minMember", 4}, {"networkTopology", {{"mode", "hard"}, {"highestTierAllowed", 1}}}}}});
  for (int i = 0; i < 4; ++i) {
    MustCreate(Pod(test, "train-" + std::to_string(i), "gantry-" + test, 2, test,
                   {{"scheduling.k8s.io/group-name", "train"}}));
  }
  DaemonProcess daemon(
      test, DaemonConfig("gantry-" + test) + "topologyKeys: [" + spine + ", " + leaf + "]\n",
      "d-" + test);
  ASSERT_TRUE(TestEnv::WaitFor([&] { return BoundIn(test) == 4; }, seconds(20))) << daemon.Log();
  ExpectAllInTheSecondDomain(test);
  // Three more 2-GPU pods that must share a leaf: l1 has 4 GPUs free, l2 none.
  MustCreate({{"apiVersion", "scheduling.volcano.sh/v1beta1"},
              {"kind", "PodGroup"},
              {"metadata", {{"name", "more"}, {"namespace", test}}},
              {"spec", {{"minMember", 3}}}});
  for (int i = 0; i < 3; ++i) {
    MustCreate(Pod(test, "more-" + std::to_string(i), "gantry-" + test, 2, test,
                   {{"scheduling.k8s.io/group-name", "more"},
                    {"kueue.x-k8s.io/podset-required-topology", leaf}}));
  }
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        auto pod = Env().Call("GET", "/api/v1/namespaces/" + test + "/pods/more-0");
        return pod.ok() &&
               PodScheduledMessage(*pod).find("must stay inside one " + leaf) != std::string::npos;
      },
      seconds(20)))
      << daemon.Log();
  EXPECT_EQ(BoundIn(test), 4);
}

// Kueue's Topology object (its upstream CRD, from ../shared/upstream-crds/) gives the
// levels when the configuration names none: a gang of pods with Kueue's required-topology
// annotation stays inside one rack of it. Rack r1 has two 2-GPU nodes, r2 two 4-GPU
// nodes: packing alone would start on r1's fuller nodes.
TEST(Daemon, AKueueTopologyGivesTheLevels) {
  const std::string test = "kueue-topology";
  const Status crds = Env().EnsureGantryCrds();
  ASSERT_TRUE(crds.ok()) << crds.message();
  const Status kueue =
      Env().EnsureUpstreamCrd("topologies.kueue.x-k8s.io", "kueue.x-k8s.io_topologies.yaml");
  ASSERT_TRUE(kueue.ok()) << kueue.message();
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  const std::string block = test + "-block", rack = test + "-rack";
  auto topology =
      Env().Call("POST", "/apis/kueue.x-k8s.io/v1beta1/topologies",
                 {{"apiVersion", "kueue.x-k8s.io/v1beta1"},
                  {"kind", "Topology"},
                  {"metadata", {{"name", test}}},
                  {"spec", {{"levels", {{{"nodeLabel", block}}, {{"nodeLabel", rack}}}}}}});
  ASSERT_TRUE(topology.ok()) << topology.status().message();
  TwoDomainsOfNodes(test, block, rack, "r");
  MustCreate({{"apiVersion", "scheduling.volcano.sh/v1beta1"},
              {"kind", "PodGroup"},
              {"metadata", {{"name", "train"}, {"namespace", test}}},
              {"spec", {{"minMember", 4}}}});
  for (int i = 0; i < 4; ++i) {
    MustCreate(Pod(test, "train-" + std::to_string(i), "gantry-" + test, 2, test,
                   {{"scheduling.k8s.io/group-name", "train"},
                    {"kueue.x-k8s.io/podset-required-topology", rack}}));
  }
  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  ASSERT_TRUE(TestEnv::WaitFor([&] { return BoundIn(test) == 4; }, seconds(20))) << daemon.Log();
  ExpectAllInTheSecondDomain(test);
  // Other tests' daemons read Topology objects too.
  auto removed = Env().Call("DELETE", "/apis/kueue.x-k8s.io/v1beta1/topologies/" + test);
  EXPECT_TRUE(removed.ok()) << removed.status().message();
}

TEST(Daemon, QueueCapabilityIsNeverExceeded) {
  const std::string test = "capped";
  const Status crds = Env().EnsureGantryCrds();
  ASSERT_TRUE(crds.ok()) << crds.message();
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  Nodes(test, 1, 8);
  MustCreate({{"apiVersion", "scheduling.volcano.sh/v1beta1"},
              {"kind", "Queue"},
              {"metadata", {{"name", "capped-queue"}}},
              {"spec", {{"weight", 1}, {"capability", {{"nvidia.com/gpu", 2}}}}}});
  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  for (int i = 0; i < 4; ++i) {
    MustCreate(Pod(test, "p-" + std::to_string(i), "gantry-" + test, 1, test,
                   {{"gantry.dev/queue", "capped-queue"}}));
  }
  ASSERT_TRUE(TestEnv::WaitFor([&] { return BoundIn(test) == 2; }, seconds(20))) << daemon.Log();
  // The other two wait, saying why; none is bound later. Their reason is not
  // Unschedulable, which autoscalers read as "a node would help": none would.
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        int explained = 0;
        for (const json& p : PodsIn(test)) {
          if (!p["spec"].contains("nodeName") &&
              PodScheduledMessage(p).find("capped-queue") != std::string::npos &&
              PodScheduledField(p, "reason") == "QueueLimit") {
            explained++;
          }
        }
        return explained == 2;
      },
      seconds(10)))
      << daemon.Log();
  std::this_thread::sleep_for(seconds(2));
  EXPECT_EQ(BoundIn(test), 2);
}

TEST(Daemon, MalformedPodGroupGetsAnEventAndOthersStillRun) {
  const std::string test = "badgroup";
  const Status crds = Env().EnsureGantryCrds();
  ASSERT_TRUE(crds.ok()) << crds.message();
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  Nodes(test, 1, 4);
  MustCreate({{"apiVersion", "scheduling.volcano.sh/v1beta1"},
              {"kind", "PodGroup"},
              {"metadata", {{"name", "broken"}, {"namespace", test}}},
              {"spec", {{"minMember", -3}}}});
  MustCreate(Pod(test, "grouped", "gantry-" + test, 1, test,
                 {{"scheduling.k8s.io/group-name", "broken"}}));
  MustCreate(Pod(test, "alone", "gantry-" + test, 1, test));
  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  ASSERT_TRUE(TestEnv::WaitFor([&] { return BoundIn(test) == 1; }, seconds(20))) << daemon.Log();
  auto alone = Env().Call("GET", "/api/v1/namespaces/badgroup/pods/alone");
  ASSERT_TRUE(alone.ok());
  EXPECT_TRUE((*alone)["spec"].contains("nodeName"));
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        for (const json& e : EventsFor(test, "broken")) {
          if (e["reason"] == "InvalidPodGroup" &&
              e["message"].get<std::string>().find("spec.minMember") != std::string::npos) {
            return true;
          }
        }
        return false;
      },
      seconds(10)))
      << daemon.Log();
  std::this_thread::sleep_for(seconds(1));
  EXPECT_EQ(BoundIn(test), 1);
}

TEST(Daemon, LeavesOtherSchedulersPodsAloneButCountsThem) {
  const std::string test = "others";
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  Nodes(test, 1, 2);
  json theirs = Pod(test, "theirs", "default-scheduler", 2, test);
  theirs["spec"]["nodeName"] = "others-node-0";
  MustCreate(theirs);
  MustCreate(Pod(test, "unbound-theirs", "default-scheduler", 0, test));
  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  MustCreate(Pod(test, "mine", "gantry-" + test, 1, test));
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        auto p = Env().Call("GET", "/api/v1/namespaces/others/pods/mine");
        return p.ok() && PodScheduledMessage(*p).find("nvidia.com/gpu") != std::string::npos;
      },
      seconds(20)))
      << daemon.Log();
  EXPECT_EQ(BoundIn(test), 1);  // only theirs, where it was
  auto unbound = Env().Call("GET", "/api/v1/namespaces/others/pods/unbound-theirs");
  ASSERT_TRUE(unbound.ok());
  EXPECT_FALSE((*unbound)["spec"].contains("nodeName"));
  EXPECT_EQ(PodScheduledMessage(*unbound), "");
}

// A pod asking for this many GPUs (a string, as the API takes it).
json WithGpuCount(json pod, const std::string& count) {
  json& resources = pod["spec"]["containers"][0]["resources"];
  resources["requests"]["nvidia.com/gpu"] = count;
  resources["limits"]["nvidia.com/gpu"] = count;
  return pod;
}

TEST(Daemon, NeverOvercommitsBesideUnreadableBoundPodsOrForWrappingGpuCounts) {
  const std::string test = "overcommit";
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  Nodes(test, 1, 8);
  ASSERT_TRUE(Env().CreateNode(test + "-no-gpus", 0, "32", "256Gi", {{"gantry-test", test}}).ok());
  // Another scheduler's pod, bound, holding all 8 GPUs, with what gantry cannot schedule
  // by: a matchFields affinity and a malformed device annotation. It still counts.
  json theirs = Pod(test, "theirs", "default-scheduler", 8, test,
                    {{"gantry.dev/gpu-devices", "all,of,them"}});
  theirs["spec"]["nodeName"] = test + "-node-0";
  theirs["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        ["nodeSelectorTerms"] = json::parse(R"([{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": ["overcommit-node-0"]}]}])");
  MustCreate(theirs);
  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  const std::string scheduler = "gantry-" + test;
  MustCreate(Pod(test, "one", scheduler, 1, test));
  // As int32: 1 GPU (bound to the node of 8), 0 GPUs (bound to the node of none).
  MustCreate(WithGpuCount(Pod(test, "wraps-to-one", scheduler, 1, test), "4294967297"));
  MustCreate(WithGpuCount(Pod(test, "wraps-to-zero", scheduler, 1, test), "4294967296"));
  auto message_of = [&](const std::string& name) {
    auto p = Env().Call("GET", "/api/v1/namespaces/" + test + "/pods/" + name);
    return p.ok() ? PodScheduledMessage(*p) : "";
  };
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        return message_of("one").find("nvidia.com/gpu") != std::string::npos &&
               message_of("wraps-to-one").find("4294967297") != std::string::npos &&
               message_of("wraps-to-zero").find("4294967296") != std::string::npos;
      },
      seconds(20)))
      << message_of("one") << "\n"
      << message_of("wraps-to-one") << "\n"
      << daemon.Log();
  EXPECT_NE(message_of("wraps-to-one").find("256"), std::string::npos)
      << message_of("wraps-to-one");
  bool event = false;
  for (const json& e : EventsFor(test, "wraps-to-one")) {
    event = event || (e["reason"] == "FailedScheduling" &&
                      e["message"].get<std::string>().find("4294967297") != std::string::npos);
  }
  EXPECT_TRUE(event);
  // A few more cycles: still only theirs is bound.
  std::this_thread::sleep_for(seconds(2));
  EXPECT_EQ(BoundIn(test), 1);
  EXPECT_TRUE(daemon.running());
}

TEST(Daemon, RecoversFromAnApiServerRestartWithoutDoubleBinding) {
  const std::string test = "restart";
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  Nodes(test, 4, 8);
  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  for (int i = 0; i < 15; ++i)
    MustCreate(Pod(test, "a-" + std::to_string(i), "gantry-" + test, 1, test));
  ASSERT_TRUE(TestEnv::WaitFor([&] { return BoundIn(test) == 15; }, seconds(20))) << daemon.Log();
  ASSERT_TRUE(Env().RestartApiServer().ok());
  for (int i = 0; i < 15; ++i)
    MustCreate(Pod(test, "b-" + std::to_string(i), "gantry-" + test, 1, test));
  ASSERT_TRUE(TestEnv::WaitFor([&] { return BoundIn(test) == 30; }, seconds(40))) << daemon.Log();
  ExpectNoOvercommit(test, 8);
  ASSERT_TRUE(TestEnv::WaitFor([&] { return ScheduledEvents(test).size() == 30; }, seconds(10)));
  for (const auto& [pod, n] : ScheduledEvents(test)) EXPECT_EQ(n, 1) << pod;
  EXPECT_TRUE(daemon.running());
}

TEST(Daemon, KilledAndRestartedMidStreamBindsEveryPodOnce) {
  const std::string test = "killed";
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  Nodes(test, 4, 8);
  auto first =
      std::make_unique<DaemonProcess>(test + "-1", DaemonConfig("gantry-" + test), "d1-" + test);
  std::atomic<bool> done{false};
  std::thread creator([&] {
    for (int i = 0; i < 32; ++i) {
      auto r = Env().Apply(Pod(test, "p-" + std::to_string(i), "gantry-" + test, 1, test));
      EXPECT_TRUE(r.ok()) << r.status().message();
      std::this_thread::sleep_for(milliseconds(40));
    }
    done = true;
  });
  ASSERT_TRUE(TestEnv::WaitFor([&] { return BoundIn(test) >= 5; }, seconds(20))) << first->Log();
  first->Kill();
  int bound_at_kill = BoundIn(test);
  DaemonProcess second(test + "-2", DaemonConfig("gantry-" + test), "d2-" + test);
  creator.join();
  ASSERT_TRUE(TestEnv::WaitFor([&] { return BoundIn(test) == 32; }, seconds(30))) << second.Log();
  EXPECT_LT(bound_at_kill, 32);
  ExpectNoOvercommit(test, 8);
  // A Scheduled event is written after its bind, so a kill may lose one: at most one each.
  for (const auto& [pod, n] : ScheduledEvents(test)) EXPECT_LE(n, 1) << pod;
}

TEST(Daemon, OnlyTheLeaderBindsAndTheOtherTakesOver) {
  const std::string test = "leader";
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  Nodes(test, 2, 8);
  const std::string config = DaemonConfig("gantry-" + test, "gantry-" + test);
  auto a = std::make_unique<DaemonProcess>(test + "-a", config, "replica-a");
  DaemonProcess b(test + "-b", config, "replica-b");
  for (int i = 0; i < 6; ++i)
    MustCreate(Pod(test, "first-" + std::to_string(i), "gantry-" + test, 1, test));
  ASSERT_TRUE(TestEnv::WaitFor([&] { return BoundIn(test) == 6; }, seconds(30)))
      << a->Log() << b.Log();
  auto lease =
      Env().Call("GET", "/apis/coordination.k8s.io/v1/namespaces/default/leases/gantry-" + test);
  ASSERT_TRUE(lease.ok()) << lease.status().message();
  const std::string leader = (*lease)["spec"]["holderIdentity"];
  ASSERT_TRUE(leader == "replica-a" || leader == "replica-b") << leader;
  // Every Scheduled event came from the leader.
  auto events =
      Env().Call("GET", "/api/v1/namespaces/leader/events?fieldSelector=reason%3DScheduled");
  ASSERT_TRUE(events.ok());
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        events =
            Env().Call("GET", "/api/v1/namespaces/leader/events?fieldSelector=reason%3DScheduled");
        return events.ok() && (*events)["items"].size() == 6;
      },
      seconds(10)));
  for (const json& e : (*events)["items"]) EXPECT_EQ(e["reportingInstance"], leader);
  // The leader dies without a word; the other takes over after the lease runs out.
  if (leader == "replica-a") {
    a->Kill();
  } else {
    b.Kill();
  }
  for (int i = 0; i < 6; ++i)
    MustCreate(Pod(test, "second-" + std::to_string(i), "gantry-" + test, 1, test));
  ASSERT_TRUE(TestEnv::WaitFor([&] { return BoundIn(test) == 12; }, seconds(30)))
      << a->Log() << b.Log();
  ExpectNoOvercommit(test, 8);
  lease =
      Env().Call("GET", "/apis/coordination.k8s.io/v1/namespaces/default/leases/gantry-" + test);
  ASSERT_TRUE(lease.ok());
  EXPECT_NE((*lease)["spec"]["holderIdentity"], leader);
}

}  // namespace
}  // namespace gantry::testing

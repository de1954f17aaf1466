// Preempt and reclaim in `gantry serve` against the real API server: evictions through the
// Eviction API, the victims' Preempted events, the preemptors' nominatedNodeName, and
// PodDisruptionBudgets. No kubelet runs, so an evicted pod stays terminating until the
// test deletes it for good (as a kubelet would once its containers stopped).
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>
#include <thread>

#include "tests/integration/daemon_process.h"
#include "tests/integration/testenv.h"

namespace gantry::testing {
namespace {

using json = nlohmann::json;
using std::chrono::seconds;

TestEnv& Env() {
  return TestEnv::Get();
}

std::string Config(const std::string& test) {
  return "schedulerName: gantry-" + test +
         "\n"
         "schedulePeriod: 500ms\n"
         "bindWorkers: 4\n"
         "listenAddress: 127.0.0.1:0\n"
         "pageAddress: \"\"\n"  // page_test.cc runs one
         "leaderElection: {enabled: false}\n"
         "engine:\n"
         "  actions: [enqueue, allocate, preempt, reclaim, backfill]\n"
         "  plugins: [priority, gang, drf, proportion, disruptionbudget, predicates, binpack]\n";
}

json Pod(const std::string& test, const std::string& name, int gpus,
         json annotations = json::object(), json labels = json::object(),
         const std::string& priority_class = "") {
  json requests = {{"cpu", "500m"}, {"memory", "1Gi"}, {"nvidia.com/gpu", std::to_string(gpus)}};
  json spec = {
      {"schedulerName", "gantry-" + test},
      {"nodeSelector", {{"gantry-test", test}}},
      {"containers",
       {{{"name", "main"},
         {"image", "busybox"},
         {"resources",
          {{"requests", requests}, {"limits", {{"nvidia.com/gpu", std::to_string(gpus)}}}}}}}}};
  if (!priority_class.empty()) spec["priorityClassName"] = priority_class;
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", name}, {"namespace", test}, {"annotations", annotations}, {"labels", labels}}},
          {"spec", spec}};
}

// The API server's Priority admission reads PriorityClasses from its informer: a pod
// created just after its class may be refused ("no PriorityClass with name ... was
// found") until the informer has it, so that refusal is tried again for a while.
void MustCreate(const json& object) {
  auto r = Env().Apply(object);
  for (int i = 0; i < 50 && !r.ok() &&
                  r.status().message().find("no PriorityClass with name") != std::string::npos;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    r = Env().Apply(object);
  }
  ASSERT_TRUE(r.ok()) << r.status().message();
}

void PriorityClass(const std::string& name, int value) {
  MustCreate({{"apiVersion", "scheduling.k8s.io/v1"},
              {"kind", "PriorityClass"},
              {"metadata", {{"name", name}}},
              {"value", value}});
}

std::vector<json> PodsIn(const std::string& ns) {
  auto r = Env().Call("GET", "/api/v1/namespaces/" + ns + "/pods");
  if (!r.ok()) return {};
  return (*r)["items"].get<std::vector<json>>();
}

json PodNamed(const std::string& ns, const std::string& name) {
  auto r = Env().Call("GET", "/api/v1/namespaces/" + ns + "/pods/" + name);
  return r.ok() ? *r : json();
}

bool Terminating(const json& pod) {
  return pod.contains("metadata") && pod["metadata"].contains("deletionTimestamp");
}

bool Bound(const json& pod) {
  return pod.contains("spec") && pod["spec"].contains("nodeName");
}

// Pod names, of those that match.
std::set<std::string> Names(const std::string& ns, const std::function<bool(const json&)>& match) {
  std::set<std::string> out;
  for (const json& p : PodsIn(ns)) {
    if (match(p)) out.insert(p["metadata"]["name"].get<std::string>());
  }
  return out;
}

std::set<std::string> TerminatingIn(const std::string& ns) {
  return Names(ns, Terminating);
}

std::set<std::string> BoundAndRunning(const std::string& ns) {
  return Names(ns, [](const json& p) { return Bound(p) && !Terminating(p); });
}

std::string NominatedNode(const json& pod) {
  if (!pod.contains("status")) return "";
  return pod["status"].value("nominatedNodeName", "");
}

std::string PodScheduledMessage(const json& pod) {
  if (!pod.contains("status") || !pod["status"].contains("conditions")) return "";
  for (const json& c : pod["status"]["conditions"]) {
    if (c["type"] == "PodScheduled" && c["status"] == "False") return c.value("message", "");
  }
  return "";
}

std::vector<json> EventsFor(const std::string& ns, const std::string& name) {
  auto r = Env().Call(
      "GET", "/api/v1/namespaces/" + ns + "/events?fieldSelector=involvedObject.name%3D" + name);
  if (!r.ok()) return {};
  return (*r)["items"].get<std::vector<json>>();
}

std::string EventMessage(const std::string& ns, const std::string& name,
                         const std::string& reason) {
  for (const json& e : EventsFor(ns, name)) {
    if (e.value("reason", "") == reason) return e.value("message", "");
  }
  return "";
}

// What a kubelet does once an evicted pod's containers stopped: the pod goes for good.
void FinishTerminating(const std::string& ns) {
  for (const std::string& name : TerminatingIn(ns)) {
    auto r = Env().Call(
        "DELETE", "/api/v1/namespaces/" + ns + "/pods/" + name,
        json{{"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"gracePeriodSeconds", 0}});
    EXPECT_TRUE(r.ok()) << r.status().message();
  }
}

// A case's namespace, its one node of `gpus` GPUs and its two priority classes, TEST-low
// (10) and TEST-high (1000). Call it inside ASSERT_NO_FATAL_FAILURE.
void CaseWithOneNode(const std::string& test, int gpus) {
  const Status crds = Env().EnsureGantryCrds();
  ASSERT_TRUE(crds.ok()) << crds.message();
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  ASSERT_TRUE(
      Env().CreateNode(test + "-node-0", gpus, "32", "256Gi", {{"gantry-test", test}}).ok());
  PriorityClass(test + "-low", 10);
  PriorityClass(test + "-high", 1000);
}

TEST(Preempt, AHigherPriorityPodEvictsALowerOneInItsQueueAndWaitsForItsRoom) {
  const std::string test = "preempt-priority";
  ASSERT_NO_FATAL_FAILURE(CaseWithOneNode(test, 4));
  DaemonProcess daemon(test, Config(test), "d-" + test);
  MustCreate(Pod(test, "low-0", 2, json::object(), json::object(), test + "-low"));
  MustCreate(Pod(test, "low-1", 2, json::object(), json::object(), test + "-low"));
  ASSERT_TRUE(TestEnv::WaitFor([&] { return BoundAndRunning(test).size() == 2; }, seconds(20)))
      << daemon.Log();
  MustCreate(Pod(test, "high", 2, json::object(), json::object(), test + "-high"));
  // One victim, no more; the preemptor is nominated to the node it waits on.
  ASSERT_TRUE(TestEnv::WaitFor([&] { return TerminatingIn(test).size() == 1; }, seconds(20)))
      << daemon.Log();
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] { return NominatedNode(PodNamed(test, "high")) == test + "-node-0"; }, seconds(10)))
      << daemon.Log();
  const std::string victim = *TerminatingIn(test).begin();
  ASSERT_TRUE(TestEnv::WaitFor([&] { return !EventMessage(test, victim, "Preempted").empty(); },
                               seconds(10)));
  EXPECT_NE(EventMessage(test, victim, "Preempted").find("high"), std::string::npos)
      << EventMessage(test, victim, "Preempted");
  std::this_thread::sleep_for(seconds(2));
  EXPECT_EQ(TerminatingIn(test).size(), 1u) << daemon.Log();  // not evicted again, nor another
  EXPECT_FALSE(Bound(PodNamed(test, "high")));                // the room is still held
  FinishTerminating(test);
  ASSERT_TRUE(TestEnv::WaitFor([&] { return Bound(PodNamed(test, "high")); }, seconds(20)))
      << daemon.Log();
  EXPECT_EQ(BoundAndRunning(test).size(), 2u);
}

// A queue at its capability preempts its own lower-priority work, though the node has room:
// the capability alone makes the room (Volcano's "preempt low priority job in same queue").
TEST(Preempt, AQueueAtItsCapabilityPreemptsItsLowerPriorityPod) {
  const std::string test = "preempt-capped";
  ASSERT_NO_FATAL_FAILURE(CaseWithOneNode(test, 8));
  MustCreate({{"apiVersion", "scheduling.volcano.sh/v1beta1"},
              {"kind", "Queue"},
              {"metadata", {{"name", test}}},
              {"spec", {{"weight", 1}, {"capability", {{"nvidia.com/gpu", 2}}}}}});
  const json in_queue = {{"gantry.dev/queue", test}};
  DaemonProcess daemon(test, Config(test), "d-" + test);
  MustCreate(Pod(test, "low-0", 1, in_queue, json::object(), test + "-low"));
  MustCreate(Pod(test, "low-1", 1, in_queue, json::object(), test + "-low"));
  ASSERT_TRUE(TestEnv::WaitFor([&] { return BoundAndRunning(test).size() == 2; }, seconds(20)))
      << daemon.Log();
  MustCreate(Pod(test, "high", 1, in_queue, json::object(), test + "-high"));
  // A victim's room counts as its queue's once it terminates (as Volcano counts a releasing
  // task), and the node has room: the preemptor is bound beside it.
  ASSERT_TRUE(TestEnv::WaitFor([&] { return TerminatingIn(test).size() == 1; }, seconds(20)))
      << daemon.Log();
  ASSERT_TRUE(TestEnv::WaitFor([&] { return Bound(PodNamed(test, "high")); }, seconds(20)))
      << daemon.Log();
  std::this_thread::sleep_for(seconds(2));
  EXPECT_EQ(TerminatingIn(test).size(), 1u) << daemon.Log();  // one victim, no more
  EXPECT_EQ(BoundAndRunning(test).size(), 2u);                // the capability: 2 GPUs
  EXPECT_TRUE(BoundAndRunning(test).contains("high"));
}

TEST(Preempt, ADisruptionBudgetBlocksTheEvictionUntilItAllowsOne) {
  const std::string test = "preempt-pdb";
  ASSERT_NO_FATAL_FAILURE(CaseWithOneNode(test, 4));
  // No disruption controller runs: the budget's status stays unwritten, older than its
  // spec, so that the Eviction API would refuse (429) and gantry does not try.
  json pdb = {
      {"apiVersion", "policy/v1"},
      {"kind", "PodDisruptionBudget"},
      {"metadata", {{"name", "guard"}, {"namespace", test}}},
      {"spec", {{"minAvailable", 1}, {"selector", {{"matchLabels", {{"app", "guarded"}}}}}}}};
  auto created =
      Env().Call("POST", "/apis/policy/v1/namespaces/" + test + "/poddisruptionbudgets", pdb);
  ASSERT_TRUE(created.ok()) << created.status().message();
  DaemonProcess daemon(test, Config(test), "d-" + test);
  MustCreate(Pod(test, "low", 4, json::object(), {{"app", "guarded"}}, test + "-low"));
  ASSERT_TRUE(TestEnv::WaitFor([&] { return BoundAndRunning(test).size() == 1; }, seconds(20)))
      << daemon.Log();
  MustCreate(Pod(test, "high", 4, json::object(), json::object(), test + "-high"));
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        return PodScheduledMessage(PodNamed(test, "high")).find(test + "/guard") !=
               std::string::npos;
      },
      seconds(20)))
      << daemon.Log() << PodScheduledMessage(PodNamed(test, "high"));
  EXPECT_TRUE(TerminatingIn(test).empty());
  // The budget allows one now (as the disruption controller would write it).
  auto current =
      Env().Call("GET", "/apis/policy/v1/namespaces/" + test + "/poddisruptionbudgets/guard");
  ASSERT_TRUE(current.ok()) << current.status().message();
  json status = {{"observedGeneration", (*current)["metadata"]["generation"]},
                 {"disruptionsAllowed", 1},
                 {"currentHealthy", 1},
                 {"desiredHealthy", 0},
                 {"expectedPods", 1}};
  (*current)["status"] = status;
  auto written = Env().Call(
      "PUT", "/apis/policy/v1/namespaces/" + test + "/poddisruptionbudgets/guard/status", *current);
  ASSERT_TRUE(written.ok()) << written.status().message();
  ASSERT_TRUE(TestEnv::WaitFor([&] { return TerminatingIn(test).size() == 1; }, seconds(20)))
      << daemon.Log();
  FinishTerminating(test);
  ASSERT_TRUE(TestEnv::WaitFor([&] { return Bound(PodNamed(test, "high")); }, seconds(20)))
      << daemon.Log();
}

TEST(Preempt, AGangVictimIsEvictedWhole) {
  const std::string test = "preempt-gang";
  ASSERT_NO_FATAL_FAILURE(CaseWithOneNode(test, 4));
  MustCreate({{"apiVersion", "scheduling.volcano.sh/v1beta1"},
              {"kind", "PodGroup"},
              {"metadata", {{"name", "train"}, {"namespace", test}}},
              {"spec", {{"minMember", 4}, {"priorityClassName", test + "-low"}}}});
  DaemonProcess daemon(test, Config(test), "d-" + test);
  for (int i = 0; i < 4; ++i) {
    MustCreate(Pod(test, "worker-" + std::to_string(i), 1,
                   {{"scheduling.k8s.io/group-name", "train"}}, json::object(), test + "-low"));
  }
  ASSERT_TRUE(TestEnv::WaitFor([&] { return BoundAndRunning(test).size() == 4; }, seconds(20)))
      << daemon.Log();
  MustCreate(Pod(test, "high", 1, json::object(), json::object(), test + "-high"));
  // One GPU is enough, but taking one worker would leave the gang below its minMember.
  ASSERT_TRUE(TestEnv::WaitFor([&] { return TerminatingIn(test).size() == 4; }, seconds(20)))
      << daemon.Log() << TerminatingIn(test).size();
  FinishTerminating(test);
  ASSERT_TRUE(TestEnv::WaitFor([&] { return Bound(PodNamed(test, "high")); }, seconds(20)))
      << daemon.Log();
}

// A native PodGroup (scheduling.k8s.io/v1beta1) with disruptionMode: all, one 4-GPU pod on
// each of two nodes, minCount 1: a high-priority pod needs one node, and one pod's going
// would keep the group at its minCount, but the group is disrupted whole; it is told first
// (DisruptionTarget), as kube-scheduler tells it.
TEST(Preempt, ANativeGroupThatIsDisruptedWholeLosesAllItsPods) {
  const std::string test = "preempt-native-all";
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  for (int i = 0; i < 2; ++i) {
    const std::string node = test + "-node-" + std::to_string(i);
    ASSERT_TRUE(Env().CreateNode(node, 4, "32", "256Gi", {{"gantry-test", test}}).ok());
  }
  MustCreate({{"apiVersion", "scheduling.k8s.io/v1beta1"},
              {"kind", "PodGroup"},
              {"metadata", {{"name", "wide"}, {"namespace", test}}},
              {"spec",
               {{"schedulingPolicy", {{"gang", {{"minCount", 1}}}}},
                {"disruptionMode", {{"all", json::object()}}}}}});
  DaemonProcess daemon(test, Config(test), "d-" + test);
  for (int i = 0; i < 2; ++i) {
    json pod = Pod(test, "wide-" + std::to_string(i), 4);
    pod["spec"]["schedulingGroup"] = {{"podGroupName", "wide"}};
    MustCreate(pod);
  }
  ASSERT_TRUE(TestEnv::WaitFor([&] { return BoundAndRunning(test).size() == 2; }, seconds(20)))
      << daemon.Log();
  PriorityClass(test + "-high", 1000);
  MustCreate(Pod(test, "high", 4, json::object(), json::object(), test + "-high"));
  ASSERT_TRUE(TestEnv::WaitFor([&] { return TerminatingIn(test).size() == 2; }, seconds(20)))
      << daemon.Log() << TerminatingIn(test).size();
  auto group =
      Env().Call("GET", "/apis/scheduling.k8s.io/v1beta1/namespaces/" + test + "/podgroups/wide");
  ASSERT_TRUE(group.ok()) << group.status().message();
  bool told = false;
  for (const json& c : group->value("/status/conditions"_json_pointer, json::array())) {
    told |= c.value("type", "") == "DisruptionTarget" && c.value("status", "") == "True" &&
            c.value("reason", "") == "PreemptionByScheduler";
  }
  EXPECT_TRUE(told) << group->dump(1);
  FinishTerminating(test);
  ASSERT_TRUE(TestEnv::WaitFor([&] { return Bound(PodNamed(test, "high")); }, seconds(20)))
      << daemon.Log();
}

TEST(Reclaim, AQueueTakesBackExactlyItsDeservedShareFromOneThatBorrowedTheCluster) {
  const std::string test = "reclaim";
  const Status crds = Env().EnsureGantryCrds();
  ASSERT_TRUE(crds.ok()) << crds.message();
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  ASSERT_TRUE(Env().CreateNode(test + "-node-0", 4, "32", "256Gi", {{"gantry-test", test}}).ok());
  for (const char* q : {"reclaim-lender", "reclaim-owner"}) {
    MustCreate({{"apiVersion", "scheduling.volcano.sh/v1beta1"},
                {"kind", "Queue"},
                {"metadata", {{"name", q}}},
                // Other tests' nodes are in the cluster too: the share each deserves of
                // this test's 4 GPUs is said outright.
                {"spec", {{"weight", 1}, {"deserved", {{"nvidia.com/gpu", 2}}}}}});
  }
  DaemonProcess daemon(test, Config(test), "d-" + test);
  for (int i = 0; i < 4; ++i) {
    MustCreate(
        Pod(test, "lender-" + std::to_string(i), 1, {{"gantry.dev/queue", "reclaim-lender"}}));
  }
  ASSERT_TRUE(TestEnv::WaitFor([&] { return BoundAndRunning(test).size() == 4; }, seconds(20)))
      << daemon.Log();
  for (int i = 0; i < 4; ++i) {
    MustCreate(Pod(test, "owner-" + std::to_string(i), 1, {{"gantry.dev/queue", "reclaim-owner"}}));
  }
  // Weights 1:1 on 4 GPUs: the owner deserves 2, and takes back 2, no more.
  ASSERT_TRUE(TestEnv::WaitFor([&] { return TerminatingIn(test).size() == 2; }, seconds(20)))
      << daemon.Log();
  for (const std::string& name : TerminatingIn(test)) EXPECT_EQ(name.rfind("lender-", 0), 0u);
  FinishTerminating(test);
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        return Names(test, [](const json& p) {
                 return Bound(p) &&
                        p["metadata"]["name"].get<std::string>().rfind("owner-", 0) == 0;
               }).size() == 2;
      },
      seconds(20)))
      << daemon.Log();
  std::this_thread::sleep_for(seconds(3));
  EXPECT_TRUE(TerminatingIn(test).empty()) << daemon.Log();  // no loop: it stays 2:2
  EXPECT_EQ(BoundAndRunning(test).size(), 4u);
}

}  // namespace
}  // namespace gantry::testing

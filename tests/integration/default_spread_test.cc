// `gantry serve` spreading pods by kube-scheduler's default constraints: the selector
// comes from the Services that select a pod and from its controller (helper.DefaultSelector),
// which the daemon watches. No controller manager runs beside the test server, so the
// ReplicaSet's pods are made here, owned by it as its controller would own them.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "tests/integration/daemon_process.h"
#include "tests/integration/testenv.h"

namespace gantry::testing {
namespace {

using json = nlohmann::json;
using std::chrono::seconds;

TestEnv& Env() {
  return TestEnv::Get();
}

// The daemon with podtopologyspread's default constraints DoNotSchedule on the hostname,
// maxSkew 1 (defaultingType List), beside binpack, which alone would stack the pods.
std::string SpreadingConfig(const std::string& scheduler_name) {
  return "schedulerName: " + scheduler_name +
         "\n"
         "schedulePeriod: 500ms\n"
         "bindWorkers: 8\n"
         "listenAddress: 127.0.0.1:0\n"
         "pageAddress: \"\"\n"  // page_test.cc runs one
         "leaderElection: {enabled: false}\n"
         "engine:\n"
         "  actions: [enqueue, allocate, backfill]\n"
         "  plugins: [priority, gang, drf, proportion, predicates,\n"
         "            {name: podtopologyspread, arguments: {defaultingType: List,\n"
         "             defaultConstraints: \"[{maxSkew: 1, topologyKey: kubernetes.io/hostname,\n"
         "                                   whenUnsatisfiable: DoNotSchedule}]\"}},\n"
         "            binpack]\n";
}

json Pod(const std::string& ns, const std::string& name, const std::string& scheduler,
         const std::string& test, json labels, json owner = nullptr) {
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", name}, {"namespace", ns}, {"labels", std::move(labels)}}},
              {"spec",
               {{"schedulerName", scheduler},
                {"nodeSelector", {{"gantry-test", test}}},
                {"containers",
                 {{{"name", "main"},
                   {"image", "busybox"},
                   {"resources", {{"requests", {{"cpu", "500m"}, {"memory", "1Gi"}}}}}}}}}}};
  if (!owner.is_null()) pod["metadata"]["ownerReferences"] = json::array({std::move(owner)});
  return pod;
}

// The nodes the pods whose name starts with `prefix` are bound to, with how many each.
std::map<std::string, int> NodesOf(const std::string& ns, const std::string& prefix) {
  std::map<std::string, int> out;
  auto r = Env().Call("GET", "/api/v1/namespaces/" + ns + "/pods");
  if (!r.ok()) return out;
  for (const json& p : (*r)["items"]) {
    if (p["metadata"]["name"].get<std::string>().rfind(prefix, 0) != 0) continue;
    if (p["spec"].contains("nodeName")) out[p["spec"]["nodeName"].get<std::string>()]++;
  }
  return out;
}

int Bound(const std::map<std::string, int>& nodes) {
  int n = 0;
  for (const auto& [node, count] : nodes) n += count;
  return n;
}

TEST(DefaultSpread, AServicesReplicaSetPodsGoOnePerNode) {
  const std::string test = "defspread";
  const std::string scheduler = "gantry-" + test;
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  for (int i = 0; i < 3; ++i) {
    auto r = Env().CreateNode(test + "-node-" + std::to_string(i), 0, "32", "256Gi",
                              {{"gantry-test", test}});
    ASSERT_TRUE(r.ok()) << r.status().message();
  }
  auto service = Env().Apply(
      {{"apiVersion", "v1"},
       {"kind", "Service"},
       {"metadata", {{"name", "web"}, {"namespace", test}}},
       {"spec",
        {{"selector", {{"app", "web"}}}, {"ports", {{{"port", 80}, {"targetPort", 8080}}}}}}});
  ASSERT_TRUE(service.ok()) << service.status().message();
  // A Deployment's ReplicaSet, as its controller makes it (pod-template-hash in both).
  const json labels = {{"app", "web"}, {"pod-template-hash", "5d4f8c"}};
  json rs = {{"apiVersion", "apps/v1"},
             {"kind", "ReplicaSet"},
             {"metadata", {{"name", "web-5d4f8c"}, {"namespace", test}}},
             {"spec",
              {{"replicas", 3},
               {"selector", {{"matchLabels", labels}}},
               {"template",
                {{"metadata", {{"labels", labels}}},
                 {"spec",
                  {{"schedulerName", scheduler},
                   {"containers", {{{"name", "main"}, {"image", "busybox"}}}}}}}}}}};
  auto created = Env().Call("POST", "/apis/apps/v1/namespaces/" + test + "/replicasets", rs);
  ASSERT_TRUE(created.ok()) << created.status().message();
  const json owner = {{"apiVersion", "apps/v1"}, {"kind", "ReplicaSet"},
                      {"name", "web-5d4f8c"},    {"uid", (*created)["metadata"]["uid"]},
                      {"controller", true},      {"blockOwnerDeletion", true}};
  for (int i = 0; i < 3; ++i) {
    auto pod =
        Env().Apply(Pod(test, "web-5d4f8c-" + std::to_string(i), scheduler, test, labels, owner));
    ASSERT_TRUE(pod.ok()) << pod.status().message();
    // Beside them, pods of no Service or controller: not spread, binpack stacks them.
    pod = Env().Apply(Pod(test, "loose-" + std::to_string(i), scheduler, test, {{"app", "loose"}}));
    ASSERT_TRUE(pod.ok()) << pod.status().message();
  }
  DaemonProcess daemon(test, SpreadingConfig(scheduler), "d-" + test);
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] { return Bound(NodesOf(test, "web-")) == 3 && Bound(NodesOf(test, "loose-")) == 3; },
      seconds(30)))
      << daemon.Log();
  const std::map<std::string, int> web = NodesOf(test, "web-");
  EXPECT_EQ(web.size(), 3u) << "web pods on: " << json(web).dump();
  for (const auto& [node, count] : web) EXPECT_EQ(count, 1) << node;
  EXPECT_EQ(NodesOf(test, "loose-").size(), 1u) << json(NodesOf(test, "loose-")).dump();
}

}  // namespace
}  // namespace gantry::testing

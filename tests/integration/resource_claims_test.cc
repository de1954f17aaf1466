// Dynamic Resource Allocation on the real API server (issue 29): a node whose two GPUs are
// published in a ResourceSlice (driver gpu.example.com, pool = the node's name), a
// DeviceClass selecting the driver's devices in CEL, and three pods of one claim each.
// Two are bound, each claim allocated a device of its own on the node, reserved for its pod
// and protected by kube-scheduler's finalizer, all written before the bind; the third
// waits with kube-scheduler's words, its claim untouched. Then the same for kube-scheduler
// and gantry side by side, each on a node of its own.
//
// The file is named to be linked after the tests that restart the API server (daemon,
// informer, leader election): its side-by-side test starts the shared kube-scheduler, which
// must not live through a restart, or the next side-by-side case finds it still
// reconnecting (SideBySide.NodeAffinityMatchFieldsOnTheNodeName failed so).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/daemon_process.h"
#include "tests/integration/dra_objects.h"
#include "tests/integration/testenv.h"

namespace gantry::testing {
namespace {

using json = nlohmann::json;
using std::chrono::seconds;

TestEnv& Env() {
  return TestEnv::Get();
}

constexpr const char* kResource = "/apis/resource.k8s.io/v1";
constexpr const char* kFinalizer = "resource.kubernetes.io/delete-protection";

std::string ClaimPath(const std::string& ns, const std::string& name) {
  return std::string(kResource) + "/namespaces/" + ns + "/resourceclaims/" + name;
}

json ClaimPod(const std::string& ns, const std::string& name, const std::string& claim,
              const std::string& scheduler, const std::string& node) {
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}, {"namespace", ns}}},
      {"spec",
       {{"schedulerName", scheduler},
        {"nodeSelector", {{"gantry-test", node}}},
        {"resourceClaims", {{{"name", "gpu"}, {"resourceClaimName", claim}}}},
        {"containers",
         {{{"name", "main"},
           {"image", "busybox"},
           {"resources", {{"requests", {{"cpu", "100m"}}}, {"claims", {{{"name", "gpu"}}}}}}}}}}}};
}

// The DeviceClass `device_class` of the driver gpu.example.com's devices (made once).
void EnsureGpuClass(const std::string& device_class) {
  if (!Env().Call("GET", std::string(kResource) + "/deviceclasses/" + device_class).ok()) {
    auto cls = Env().Call(
        "POST", std::string(kResource) + "/deviceclasses",
        {{"apiVersion", "resource.k8s.io/v1"},
         {"kind", "DeviceClass"},
         {"metadata", {{"name", device_class}}},
         {"spec",
          {{"selectors", {{{"cel", {{"expression", "device.driver == \"gpu.example.com\""}}}}}}}}});
    EXPECT_TRUE(cls.ok()) << cls.status().message();
  }
}

// What became of a case's three pods and their claims.
struct Outcome {
  std::vector<std::string> bound;      // pods bound, in name order
  std::vector<std::string> waiting;    // pods pending with "cannot allocate all claims"
  std::map<std::string, json> pods;    // by name, as they ended
  std::map<std::string, json> claims;  // by the pod's name, as they ended
};

// A node of two GPUs published in a ResourceSlice (pool = the node), the class `device_class`
// (made once), and three pods in namespace `ns` for `scheduler`, each with a claim of one
// GPU, on that node only. Waits until two are bound and one waits (or 30 s).
Outcome ThreePodsTwoDevices(const std::string& ns, const std::string& node,
                            const std::string& device_class, const std::string& scheduler,
                            const std::function<std::string()>& log) {
  Outcome out;
  EXPECT_TRUE(Env().CreateNamespace(ns).ok());
  EXPECT_NO_FATAL_FAILURE(CreateNodeWithDevices(node, {Device("gpu-0"), Device("gpu-1")}));
  EnsureGpuClass(device_class);
  const std::vector<std::string> pods = {"p-0", "p-1", "p-2"};
  for (size_t i = 0; i < pods.size(); ++i) {
    const std::string claim = "claim-" + std::to_string(i);
    auto c = Env().Call("POST", std::string(kResource) + "/namespaces/" + ns + "/resourceclaims",
                        GpuClaim(claim, device_class));
    EXPECT_TRUE(c.ok()) << c.status().message();
    auto p = Env().Apply(ClaimPod(ns, pods[i], claim, scheduler, node));
    EXPECT_TRUE(p.ok()) << p.status().message();
  }
  auto read = [&] {
    out = Outcome{};
    for (size_t i = 0; i < pods.size(); ++i) {
      auto p = Env().Call("GET", "/api/v1/namespaces/" + ns + "/pods/" + pods[i]);
      auto c = Env().Call("GET", ClaimPath(ns, "claim-" + std::to_string(i)));
      if (!p.ok() || !c.ok()) continue;
      out.pods[pods[i]] = *p;
      out.claims[pods[i]] = *c;
      if (!(*p)["spec"].value("nodeName", "").empty()) {
        out.bound.push_back(pods[i]);
      } else if (PodScheduledMessage(*p).find("cannot allocate all claims") != std::string::npos) {
        out.waiting.push_back(pods[i]);
      }
    }
    return out.bound.size() == 2 && out.waiting.size() == 1;
  };
  EXPECT_TRUE(TestEnv::WaitFor(read, seconds(30)))
      << scheduler << ": bound " << out.bound.size() << ", waiting " << out.waiting.size() << "\n"
      << log();
  return out;
}

// Each bound pod's claim: allocated one GPU of the pod's node, usable there only, reserved
// for the pod, protected by the finalizer; the waiting pod's claim untouched; the two
// bound pods' devices distinct.
void ExpectClaimsWrittenForTheBoundPods(const Outcome& out, const std::string& node) {
  std::set<std::string> devices;
  for (const auto& [name, claim] : out.claims) {
    const json& pod = out.pods.at(name);
    const json status = claim.value("status", json::object());
    if (std::find(out.bound.begin(), out.bound.end(), name) == out.bound.end()) {
      EXPECT_FALSE(status.contains("allocation")) << claim.dump();
      EXPECT_FALSE(status.contains("reservedFor")) << claim.dump();
      continue;
    }
    EXPECT_EQ(pod["spec"]["nodeName"], node);
    ASSERT_TRUE(status.contains("allocation")) << claim.dump();
    const json& results = status["allocation"]["devices"]["results"];
    ASSERT_EQ(results.size(), 1u) << claim.dump();
    EXPECT_EQ(results[0]["request"], "gpu");
    EXPECT_EQ(results[0]["driver"], "gpu.example.com");
    EXPECT_EQ(results[0]["pool"], node);
    devices.insert(results[0].value("device", ""));
    EXPECT_EQ(status["allocation"]["nodeSelector"],
              json::parse(R"({"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name",
                  "operator": "In", "values": [")" +
                          node + R"("]}]}]})"));
    // kube-scheduler 1.37 stamps the allocation (for binding conditions' timeout).
    EXPECT_TRUE(status["allocation"].contains("allocationTimestamp")) << claim.dump();
    ASSERT_TRUE(status.contains("reservedFor")) << claim.dump();
    ASSERT_EQ(status["reservedFor"].size(), 1u);
    EXPECT_EQ(status["reservedFor"][0]["resource"], "pods");
    EXPECT_EQ(status["reservedFor"][0]["name"], name);
    EXPECT_EQ(status["reservedFor"][0]["uid"], pod["metadata"]["uid"]);
    const json finalizers = claim["metadata"].value("finalizers", json::array());
    EXPECT_NE(std::find(finalizers.begin(), finalizers.end(), json(kFinalizer)), finalizers.end())
        << claim.dump();
  }
  EXPECT_EQ(devices, (std::set<std::string>{"gpu-0", "gpu-1"}));
}

TEST(Dra, TwoDevicesForThreeClaimsBindTwoPodsWithTheirClaimsWrittenFirst) {
  const std::string test = "dra";
  std::string config = DaemonConfig("gantry-" + test);
  const std::string no_page = "pageAddress: \"\"\n";
  ASSERT_NE(config.find(no_page), std::string::npos);
  config.replace(config.find(no_page), no_page.size(), "pageAddress: 127.0.0.1:0\n");
  DaemonProcess daemon(test, config, "d-" + test);
  const Outcome out = ThreePodsTwoDevices(test, test + "-node-0", test + "-gpu", "gantry-" + test,
                                          [&] { return daemon.Log(); });
  ASSERT_EQ(out.bound.size(), 2u);
  ASSERT_EQ(out.waiting.size(), 1u);
  ExpectClaimsWrittenForTheBoundPods(out, test + "-node-0");
  // The one that waits stays so: no device is free.
  std::this_thread::sleep_for(seconds(2));
  auto p = Env().Call("GET", "/api/v1/namespaces/" + test + "/pods/" + out.waiting[0]);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE((*p)["spec"].contains("nodeName"));
  // `gantry explain` names the node, and what the pod's claim lacks there.
  const int port = PagePort(daemon);
  ASSERT_GT(port, 0) << daemon.Log();
  const std::string claim = "claim-" + out.waiting[0].substr(out.waiting[0].rfind('-') + 1);
  const std::string lacks =
      "claim " + test + "/" + claim + ", request gpu: 0 of 2 matching devices free, needs 1";
  std::string body;
  EXPECT_TRUE(TestEnv::WaitFor(
      [&] {
        body = HttpGet(port, "/api/explain/" + test + "/" + out.waiting[0]).second;
        return body.find(lacks) != std::string::npos;
      },
      seconds(30), std::chrono::milliseconds(300)))
      << body;
  EXPECT_NE(body.find(test + "-node-0"), std::string::npos) << body;
}

// The same case for kube-scheduler (the reference) and gantry, each on a node of its own:
// both bind two pods and leave the third waiting saying "cannot allocate all claims", and
// write the claims alike (the same fields of the allocation, the reservation and the
// finalizer).
// The API server's count of `verb` requests on single resource claims (apiserver_request_total
// on its /metrics, every answer code).
int64_t ClaimRequests(const std::string& verb) {
  auto metrics = Env().GetText("/metrics");
  EXPECT_TRUE(metrics.ok()) << metrics.status().message();
  if (!metrics.ok()) return -1;
  int64_t total = 0;
  std::istringstream in(*metrics);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("apiserver_request_total{", 0) != 0 ||
        line.find("resource=\"resourceclaims\"") == std::string::npos ||
        line.find("subresource=\"\"") == std::string::npos ||
        line.find("verb=\"" + verb + "\"") == std::string::npos) {
      continue;
    }
    total += std::stoll(line.substr(line.rfind(' ') + 1));
  }
  return total;
}

// With its cache current, gantry adds the finalizer by one patch conditional on the version
// the cache read, without reading the claim first (kube-scheduler writes from its informer's
// copy too): the API server counts no GET of a claim and one PATCH. A finalizer someone else
// put on the claim is kept.
TEST(Dra, TheFinalizerIsPatchedOntoTheCachedVersionKeepingOthers) {
  const std::string test = "dra-patch", node = test + "-0", keep = "example.com/keep";
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  ASSERT_NO_FATAL_FAILURE(CreateNodeWithDevices(node, {Device("gpu-0")}));
  auto cls = Env().Call("POST", std::string(kResource) + "/deviceclasses",
                        DeviceClass(test + "-gpu", "device.driver == \"gpu.example.com\""));
  ASSERT_TRUE(cls.ok()) << cls.status().message();
  auto claim = Env().Call(
      "POST", std::string(kResource) + "/namespaces/" + test + "/resourceclaims",
      {{"apiVersion", "resource.k8s.io/v1"},
       {"kind", "ResourceClaim"},
       {"metadata", {{"name", "claim"}, {"finalizers", {keep}}}},
       {"spec",
        {{"devices",
          {{"requests",
            {{{"name", "gpu"}, {"exactly", {{"deviceClassName", test + "-gpu"}}}}}}}}}}});
  ASSERT_TRUE(claim.ok()) << claim.status().message();
  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  const int64_t gets = ClaimRequests("GET"), patches = ClaimRequests("PATCH");
  auto pod = Env().Apply(ClaimPod(test, "p", "claim", "gantry-" + test, node));
  ASSERT_TRUE(pod.ok()) << pod.status().message();
  const bool bound = TestEnv::WaitFor(
      [&] {
        auto p = Env().Call("GET", "/api/v1/namespaces/" + test + "/pods/p");
        return p.ok() && !(*p)["spec"].value("nodeName", "").empty();
      },
      seconds(30));
  ASSERT_TRUE(bound) << daemon.Log();
  EXPECT_EQ(ClaimRequests("GET"), gets) << "the claim was read before it was written";
  EXPECT_EQ(ClaimRequests("PATCH"), patches + 1);
  auto written = Env().Call("GET", ClaimPath(test, "claim"));
  ASSERT_TRUE(written.ok());
  EXPECT_EQ((*written)["metadata"]["finalizers"], json({keep, kFinalizer})) << written->dump();
  EXPECT_TRUE((*written)["status"].contains("allocation")) << written->dump();
  // Let the namespace's claim go when the control plane is torn down.
  auto freed = Env().Call("PATCH", ClaimPath(test, "claim"),
                          json::parse(R"([{"op": "remove", "path": "/metadata/finalizers/0"}])"),
                          "application/json-patch+json");
  EXPECT_TRUE(freed.ok()) << freed.status().message();
}

TEST(Dra, SideBySideWithKubeScheduler) {
  const std::string test = "dra-sbs";
  ASSERT_TRUE(Env().StartKubeScheduler("kube-reference").ok());
  const Outcome theirs = ThreePodsTwoDevices(test + "-kube", test + "-kube-0", test + "-gpu",
                                             "kube-reference", [] { return std::string(); });
  ASSERT_EQ(theirs.bound.size(), 2u) << "kube-scheduler did not bind two pods";
  ASSERT_EQ(theirs.waiting.size(), 1u);
  ExpectClaimsWrittenForTheBoundPods(theirs, test + "-kube-0");
  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  const Outcome ours = ThreePodsTwoDevices(test + "-gantry", test + "-gantry-0", test + "-gpu",
                                           "gantry-" + test, [&] { return daemon.Log(); });
  ASSERT_EQ(ours.bound.size(), 2u);
  ASSERT_EQ(ours.waiting.size(), 1u);
  ExpectClaimsWrittenForTheBoundPods(ours, test + "-gantry-0");
  // The allocations have the same fields, bar the node's name.
  auto shape = [](const Outcome& o, const std::string& node) {
    json a = o.claims.at(o.bound[0])["status"]["allocation"];
    std::string text = a.dump();
    for (size_t at = text.find(node); at != std::string::npos; at = text.find(node, at)) {
      text.replace(at, node.size(), "NODE");
    }
    json out = json::parse(text);
    out["devices"]["results"][0].erase("device");
    if (out.contains("allocationTimestamp")) out["allocationTimestamp"] = "TIME";
    return out;
  };
  EXPECT_EQ(shape(ours, test + "-gantry-0"), shape(theirs, test + "-kube-0"));
  std::cout << "kube-scheduler: " << PodScheduledMessage(theirs.pods.at(theirs.waiting[0])) << "\n"
            << "gantry:         " << PodScheduledMessage(ours.pods.at(ours.waiting[0])) << "\n";
}

// A claim a native PodGroup shares (DRAWorkloadResourceClaims: its spec.resourceClaims
// lists it, and its two pods name it with the same entry): both pods bound to the node of
// its one device, and the claim reserved once, for the group, not for each pod. The same
// for kube-scheduler and gantry, each in a namespace and on a node of its own.
struct GroupClaimOutcome {
  std::vector<json> pods;
  json claim;
  json group;
};

GroupClaimOutcome TwoPodsOfAGroupShareAClaim(const std::string& ns, const std::string& node,
                                             const std::string& device_class,
                                             const std::string& scheduler,
                                             const std::function<std::string()>& log) {
  GroupClaimOutcome out;
  EXPECT_TRUE(Env().CreateNamespace(ns).ok());
  EXPECT_NO_FATAL_FAILURE(CreateNodeWithDevices(node, {Device("gpu-0")}));
  EnsureGpuClass(device_class);
  auto c = Env().Call("POST", std::string(kResource) + "/namespaces/" + ns + "/resourceclaims",
                      GpuClaim("shared", device_class));
  EXPECT_TRUE(c.ok()) << c.status().message();
  const std::string groups = "/apis/scheduling.k8s.io/v1beta1/namespaces/" + ns + "/podgroups";
  auto g =
      Env().Call("POST", groups,
                 {{"apiVersion", "scheduling.k8s.io/v1beta1"},
                  {"kind", "PodGroup"},
                  {"metadata", {{"name", "train"}, {"namespace", ns}}},
                  {"spec",
                   {{"schedulingPolicy", {{"gang", {{"minCount", 2}}}}},
                    {"resourceClaims", {{{"name", "gpu"}, {"resourceClaimName", "shared"}}}}}}});
  EXPECT_TRUE(g.ok()) << g.status().message();
  // The API server keeps the field only with the gate on: without it the case tests nothing.
  EXPECT_TRUE(g.ok() && (*g)["spec"].contains("resourceClaims")) << (g.ok() ? g->dump() : "");
  for (const char* name : {"p-0", "p-1"}) {
    json pod = ClaimPod(ns, name, "shared", scheduler, node);
    pod["spec"]["schedulingGroup"] = {{"podGroupName", "train"}};
    auto p = Env().Apply(pod);
    EXPECT_TRUE(p.ok()) << p.status().message();
  }
  EXPECT_TRUE(TestEnv::WaitFor(
      [&] {
        out.pods.clear();
        for (const char* name : {"p-0", "p-1"}) {
          auto p = Env().Call("GET", "/api/v1/namespaces/" + ns + "/pods/" + name);
          if (p.ok() && !(*p)["spec"].value("nodeName", "").empty()) out.pods.push_back(*p);
        }
        return out.pods.size() == 2;
      },
      seconds(30)))
      << scheduler << ": " << out.pods.size() << " bound\n"
      << log();
  auto claim = Env().Call("GET", ClaimPath(ns, "shared"));
  EXPECT_TRUE(claim.ok());
  if (claim.ok()) out.claim = *claim;
  auto group = Env().Call("GET", groups + "/train");
  EXPECT_TRUE(group.ok());
  if (group.ok()) out.group = *group;
  return out;
}

void ExpectReservedForTheGroup(const GroupClaimOutcome& out, const std::string& node) {
  for (const json& pod : out.pods) EXPECT_EQ(pod["spec"]["nodeName"], node);
  const json status = out.claim.value("status", json::object());
  ASSERT_TRUE(status.contains("allocation")) << out.claim.dump();
  ASSERT_TRUE(status.contains("reservedFor")) << out.claim.dump();
  EXPECT_EQ(status["reservedFor"], json::array({{{"apiGroup", "scheduling.k8s.io"},
                                                 {"resource", "podgroups"},
                                                 {"name", "train"},
                                                 {"uid", out.group["metadata"]["uid"]}}}))
      << out.claim.dump();
}

TEST(Dra, AClaimAPodGroupSharesIsReservedForTheGroupSideBySide) {
  const std::string test = "dra-group";
  ASSERT_TRUE(Env().StartKubeScheduler("kube-reference").ok());
  const GroupClaimOutcome theirs =
      TwoPodsOfAGroupShareAClaim(test + "-kube", test + "-kube-0", test + "-gpu", "kube-reference",
                                 [] { return std::string(); });
  ASSERT_EQ(theirs.pods.size(), 2u) << "kube-scheduler did not bind the group";
  ExpectReservedForTheGroup(theirs, test + "-kube-0");
  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  const GroupClaimOutcome ours =
      TwoPodsOfAGroupShareAClaim(test + "-gantry", test + "-gantry-0", test + "-gpu",
                                 "gantry-" + test, [&] { return daemon.Log(); });
  ASSERT_EQ(ours.pods.size(), 2u);
  ExpectReservedForTheGroup(ours, test + "-gantry-0");
}

// A pod of two claims whose second cannot be written (a ValidatingAdmissionPolicy refuses
// its status update): it is not bound, and what was written of the first claim (finalizer,
// allocation, reservation) is taken back; the failure is said in an event.
TEST(Dra, AClaimThatCannotBeWrittenKeepsThePodUnboundAndUndoesTheOthers) {
  const std::string test = "dra-undo";
  const std::string node = test + "-node-0";
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  auto policy =
      Env().Call("POST", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
                 {{"apiVersion", "admissionregistration.k8s.io/v1"},
                  {"kind", "ValidatingAdmissionPolicy"},
                  {"metadata", {{"name", test}}},
                  {"spec",
                   {{"failurePolicy", "Fail"},
                    {"matchConstraints",
                     {{"resourceRules",
                       {{{"apiGroups", {"resource.k8s.io"}},
                         {"apiVersions", {"v1"}},
                         {"operations", {"UPDATE"}},
                         {"resources", {"resourceclaims/status"}}}}}}},
                    {"validations",
                     {{{"expression", "object.metadata.namespace != '" + test +
                                          "' || object.metadata.name != 'claim-b'"},
                       {"message", "claim-b may not be allocated"}}}}}}});
  ASSERT_TRUE(policy.ok()) << policy.status().message();
  auto binding =
      Env().Call("POST", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
                 {{"apiVersion", "admissionregistration.k8s.io/v1"},
                  {"kind", "ValidatingAdmissionPolicyBinding"},
                  {"metadata", {{"name", test}}},
                  {"spec", {{"policyName", test}, {"validationActions", {"Deny"}}}}});
  ASSERT_TRUE(binding.ok()) << binding.status().message();
  auto created = Env().CreateNode(node, 0, "8", "16Gi", {{"gantry-test", node}});
  ASSERT_TRUE(created.ok()) << created.status().message();
  auto slice =
      Env().Call("POST", std::string(kResource) + "/resourceslices",
                 {{"apiVersion", "resource.k8s.io/v1"},
                  {"kind", "ResourceSlice"},
                  {"metadata", {{"name", node + "-gpus"}}},
                  {"spec",
                   {{"driver", "gpu.example.com"},
                    {"pool", {{"name", node}, {"generation", 1}, {"resourceSliceCount", 1}}},
                    {"nodeName", node},
                    {"devices", {{{"name", "gpu-0"}}, {{"name", "gpu-1"}}}}}}});
  ASSERT_TRUE(slice.ok()) << slice.status().message();
  auto cls = Env().Call("POST", std::string(kResource) + "/deviceclasses",
                        {{"apiVersion", "resource.k8s.io/v1"},
                         {"kind", "DeviceClass"},
                         {"metadata", {{"name", test + "-gpu"}}},
                         {"spec", json::object()}});
  ASSERT_TRUE(cls.ok()) << cls.status().message();
  for (const char* claim : {"claim-a", "claim-b"}) {
    auto c = Env().Call(
        "POST", std::string(kResource) + "/namespaces/" + test + "/resourceclaims",
        {{"apiVersion", "resource.k8s.io/v1"},
         {"kind", "ResourceClaim"},
         {"metadata", {{"name", claim}}},
         {"spec",
          {{"devices",
            {{"requests",
              {{{"name", "gpu"}, {"exactly", {{"deviceClassName", test + "-gpu"}}}}}}}}}}});
    ASSERT_TRUE(c.ok()) << c.status().message();
  }
  // The API server's admission has the policy once it refuses claim-b's status.
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        auto b = Env().Call("GET", ClaimPath(test, "claim-b"));
        if (!b.ok()) return false;
        auto put = Env().Call("PUT", ClaimPath(test, "claim-b") + "/status", *b);
        return !put.ok() &&
               put.status().message().find("may not be allocated") != std::string::npos;
      },
      seconds(20), std::chrono::milliseconds(200)));
  json pod = ClaimPod(test, "p", "claim-a", "gantry-" + test, node);
  pod["spec"]["resourceClaims"].push_back({{"name", "gpu-b"}, {"resourceClaimName", "claim-b"}});
  pod["spec"]["containers"][0]["resources"]["claims"].push_back({{"name", "gpu-b"}});
  ASSERT_TRUE(Env().Apply(pod).ok());

  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  auto failed_binding = [&] {
    auto events = Env().Call("GET", "/api/v1/namespaces/" + test + "/events");
    if (!events.ok()) return false;
    for (const json& e : (*events)["items"]) {
      if (e.value("reason", "") == "FailedBinding" &&
          e.value("message", "").find("claim-b may not be allocated") != std::string::npos) {
        return true;
      }
    }
    return false;
  };
  ASSERT_TRUE(TestEnv::WaitFor(failed_binding, seconds(30))) << daemon.Log();
  // Between the retries (after a backoff that doubles), both claims are as they were made.
  auto undone = [&] {
    for (const char* name : {"claim-a", "claim-b"}) {
      auto c = Env().Call("GET", ClaimPath(test, name));
      if (!c.ok()) return false;
      const json status = c->value("status", json::object());
      const json finalizers = (*c)["metadata"].value("finalizers", json::array());
      if (status.contains("allocation") || status.contains("reservedFor") || !finalizers.empty()) {
        return false;
      }
    }
    return true;
  };
  EXPECT_TRUE(TestEnv::WaitFor(undone, seconds(10))) << daemon.Log();
  auto p = Env().Call("GET", "/api/v1/namespaces/" + test + "/pods/p");
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE((*p)["spec"].contains("nodeName")) << "bound although claim-b was not written";
  (void)Env().Call(
      "DELETE", "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings/" + test);
  (void)Env().Call("DELETE",
                   "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/" + test);
}

// Devices that work best together (engine/dra/alignment.h), in the default configuration:
// a node whose four GPUs publish resource.kubernetes.io/numaNode 0, 0, 1, 1. A pod with a
// one-GPU claim gets gpu-0; then a pod with a two-GPU claim gets gpu-2 and gpu-3, the NUMA
// node that holds both, where upstream's first devices that fit would be gpu-1 and gpu-2.
TEST(Dra, AClaimsDevicesShareANumaNode) {
  const std::string test = "dra-numa", node = test + "-node-0", device_class = test + "-gpu";
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  json devices = json::array();
  for (int i = 0; i < 4; ++i) {
    devices.push_back(Device("gpu-" + std::to_string(i),
                             {{"resource.kubernetes.io/numaNode", {{"int", i / 2}}}}));
  }
  ASSERT_NO_FATAL_FAILURE(CreateNodeWithDevices(node, devices));
  auto cls = Env().Call("POST", std::string(kResource) + "/deviceclasses",
                        DeviceClass(device_class, "device.driver == \"gpu.example.com\""));
  ASSERT_TRUE(cls.ok()) << cls.status().message();
  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  // Places a pod with a claim of `count` GPUs and returns the devices its claim got.
  auto place = [&](const std::string& name, int count) {
    auto claim =
        Env().Call("POST", std::string(kResource) + "/namespaces/" + test + "/resourceclaims",
                   GpuClaim(name, device_class, count));
    EXPECT_TRUE(claim.ok()) << claim.status().message();
    auto pod = Env().Apply(ClaimPod(test, name, name, "gantry-" + test, node));
    EXPECT_TRUE(pod.ok()) << pod.status().message();
    std::set<std::string> got;
    const bool bound = TestEnv::WaitFor(
        [&] {
          auto p = Env().Call("GET", "/api/v1/namespaces/" + test + "/pods/" + name);
          auto c = Env().Call("GET", ClaimPath(test, name));
          if (!p.ok() || !c.ok() || (*p)["spec"].value("nodeName", "").empty()) return false;
          got.clear();
          for (const json& r : (*c)["status"]["allocation"]["devices"]["results"]) {
            got.insert(r.value("device", ""));
          }
          return true;
        },
        seconds(30));
    EXPECT_TRUE(bound) << name << "\n" << daemon.Log();
    return got;
  };
  EXPECT_EQ(place("one", 1), (std::set<std::string>{"gpu-0"}));
  EXPECT_EQ(place("two", 2), (std::set<std::string>{"gpu-2", "gpu-3"}));
}

}  // namespace
}  // namespace gantry::testing

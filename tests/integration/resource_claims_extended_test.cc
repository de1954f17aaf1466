// Extended resources backed by DRA on the real API server (issue 29): a node with no GPU in
// its allocatable whose two GPUs are published in a ResourceSlice, a DeviceClass naming
// the extended resource example.com/gpu (spec.extendedResourceName), and three pods asking
// for example.com/gpu: 1. Two are bound, each with a claim made for it (generateName
// "<pod>-extended-resources-", the extended-resource-claim annotation, the pod as its
// controller owner), allocated a device of the node, reserved for the pod and protected by
// the finalizer, and the pod's status.extendedResourceClaimStatus naming it; the third
// waits. kube-scheduler and gantry side by side, each on a node of its own, make the same
// claims; the class's implicit name deviceclass.resource.kubernetes.io/<class>; and a claim
// left by an attempt that did not bind, deleted before the pod is placed anew.
#include <gtest/gtest.h>

#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <string>
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

void EnsureClass(const std::string& name, const std::string& extended_resource_name) {
  if (Env().Call("GET", std::string(kResource) + "/deviceclasses/" + name).ok()) return;
  json spec = {
      {"selectors", {{{"cel", {{"expression", "device.driver == \"gpu.example.com\""}}}}}}};
  if (!extended_resource_name.empty()) spec["extendedResourceName"] = extended_resource_name;
  auto made = Env().Call("POST", std::string(kResource) + "/deviceclasses",
                         {{"apiVersion", "resource.k8s.io/v1"},
                          {"kind", "DeviceClass"},
                          {"metadata", {{"name", name}}},
                          {"spec", spec}});
  EXPECT_TRUE(made.ok()) << made.status().message();
}

// What became of a case's three pods, and the claims made for the bound ones.
struct Outcome {
  std::vector<std::string> bound;    // in name order
  std::vector<std::string> waiting;  // with a PodScheduled=False message
  std::map<std::string, json> pods;
  std::map<std::string, json> claims;  // by the pod's name
};

// A node of two GPUs published through DRA (none in its allocatable) and three pods in `ns`
// for `scheduler`, each asking for one `resource`, on that node only. Waits until two are
// bound with their claims written and one waits (or 30 s).
Outcome ThreePodsTwoDevices(const std::string& ns, const std::string& node,
                            const std::string& resource, const std::string& scheduler,
                            const std::function<std::string()>& log) {
  Outcome out;
  EXPECT_TRUE(Env().CreateNamespace(ns).ok());
  EXPECT_NO_FATAL_FAILURE(CreateNodeWithDevices(node, {Device("gpu-0"), Device("gpu-1")}));
  const std::vector<std::string> pods = {"p-0", "p-1", "p-2"};
  for (const std::string& name : pods) {
    json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}, {"namespace", ns}}},
                {"spec",
                 {{"schedulerName", scheduler},
                  {"nodeSelector", {{"gantry-test", node}}},
                  {"containers",
                   {{{"name", "main"},
                     {"image", "busybox"},
                     {"resources",
                      {{"requests", {{"cpu", "100m"}, {resource, "1"}}},
                       {"limits", {{resource, "1"}}}}}}}}}}};
    auto p = Env().Apply(pod);
    EXPECT_TRUE(p.ok()) << p.status().message();
  }
  auto read = [&] {
    out = Outcome{};
    for (const std::string& name : pods) {
      auto p = Env().Call("GET", "/api/v1/namespaces/" + ns + "/pods/" + name);
      if (!p.ok()) continue;
      out.pods[name] = *p;
      if (!(*p)["spec"].value("nodeName", "").empty()) {
        const json status = p->value("status", json::object());
        if (!status.contains("extendedResourceClaimStatus")) continue;
        const std::string claim =
            status["extendedResourceClaimStatus"].value("resourceClaimName", "");
        auto c = Env().Call(
            "GET", std::string(kResource) + "/namespaces/" + ns + "/resourceclaims/" + claim);
        if (!c.ok()) continue;
        out.claims[name] = *c;
        out.bound.push_back(name);
      } else if (!PodScheduledMessage(*p).empty()) {
        out.waiting.push_back(name);
      }
    }
    return out.bound.size() == 2 && out.waiting.size() == 1;
  };
  EXPECT_TRUE(TestEnv::WaitFor(read, seconds(30)))
      << scheduler << ": bound " << out.bound.size() << ", waiting " << out.waiting.size() << "\n"
      << log();
  return out;
}

// Each bound pod's claim: made for it (name, annotation, owner), allocated one device of
// the node, reserved for the pod, protected by the finalizer; the devices distinct.
void ExpectClaimsMadeForTheBoundPods(const Outcome& out, const std::string& node) {
  std::set<std::string> devices;
  for (const std::string& name : out.bound) {
    const json& pod = out.pods.at(name);
    const json& claim = out.claims.at(name);
    const std::string uid = pod["metadata"]["uid"];
    EXPECT_EQ(claim["metadata"]["name"].get<std::string>().rfind(name + "-extended-resources-", 0),
              0u)
        << claim.dump();
    EXPECT_EQ(claim["metadata"]["annotations"].value(
                  "resource.kubernetes.io/extended-resource-claim", ""),
              "true");
    ASSERT_EQ(claim["metadata"]["ownerReferences"].size(), 1u);
    const json& owner = claim["metadata"]["ownerReferences"][0];
    EXPECT_EQ(owner.value("kind", ""), "Pod");
    EXPECT_EQ(owner.value("uid", ""), uid);
    EXPECT_TRUE(owner.value("controller", false));
    EXPECT_EQ(claim["metadata"].value("finalizers", json::array()),
              json::array({"resource.kubernetes.io/delete-protection"}));
    const json& results = claim["status"]["allocation"]["devices"]["results"];
    ASSERT_EQ(results.size(), 1u) << claim.dump();
    EXPECT_EQ(results[0].value("pool", ""), node);
    devices.insert(results[0].value("device", ""));
    ASSERT_EQ(claim["status"]["reservedFor"].size(), 1u);
    EXPECT_EQ(claim["status"]["reservedFor"][0].value("uid", ""), uid);
  }
  EXPECT_EQ(devices.size(), out.bound.size());
}

// The fields that must match between the schedulers: the claim's requests and allocation
// (bar device, node and time) and the pod's request mappings.
json Shape(const Outcome& o, const std::string& node) {
  const std::string& pod = o.bound.at(0);
  json allocation = o.claims.at(pod)["status"]["allocation"];
  std::string text = allocation.dump();
  for (size_t at = text.find(node); at != std::string::npos; at = text.find(node, at)) {
    text.replace(at, node.size(), "NODE");
  }
  allocation = json::parse(text);
  allocation["devices"]["results"][0].erase("device");
  if (allocation.contains("allocationTimestamp")) allocation["allocationTimestamp"] = "TIME";
  return {{"requests", o.claims.at(pod)["spec"]},
          {"allocation", allocation},
          {"mappings", o.pods.at(pod)["status"]["extendedResourceClaimStatus"]["requestMappings"]}};
}

TEST(DraExtendedResource, SideBySideWithKubeScheduler) {
  const std::string test = "dra-ext";
  EnsureClass(test + "-gpu", "example.com/gpu");
  ASSERT_TRUE(Env().StartKubeScheduler("kube-reference").ok());
  const Outcome theirs = ThreePodsTwoDevices(test + "-kube", test + "-kube-0", "example.com/gpu",
                                             "kube-reference", [] { return std::string(); });
  ASSERT_EQ(theirs.bound.size(), 2u) << "kube-scheduler did not bind two pods";
  ExpectClaimsMadeForTheBoundPods(theirs, test + "-kube-0");
  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  const Outcome ours = ThreePodsTwoDevices(test + "-gantry", test + "-gantry-0", "example.com/gpu",
                                           "gantry-" + test, [&] { return daemon.Log(); });
  ASSERT_EQ(ours.bound.size(), 2u);
  ExpectClaimsMadeForTheBoundPods(ours, test + "-gantry-0");
  EXPECT_EQ(Shape(ours, test + "-gantry-0"), Shape(theirs, test + "-kube-0"));
  ASSERT_EQ(ours.waiting.size(), 1u);
  ASSERT_EQ(theirs.waiting.size(), 1u);
  std::cout << "kube-scheduler: " << PodScheduledMessage(theirs.pods.at(theirs.waiting[0])) << "\n"
            << "gantry:         " << PodScheduledMessage(ours.pods.at(ours.waiting[0])) << "\n";
}

// A class without an extendedResourceName serves its implicit name.
TEST(DraExtendedResource, TheImplicitNameOfAClass) {
  const std::string test = "dra-implicit";
  EnsureClass(test + "-gpu", "");
  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  const Outcome ours =
      ThreePodsTwoDevices(test, test + "-0", "deviceclass.resource.kubernetes.io/" + test + "-gpu",
                          "gantry-" + test, [&] { return daemon.Log(); });
  ASSERT_EQ(ours.bound.size(), 2u);
  ExpectClaimsMadeForTheBoundPods(ours, test + "-0");
}

// A claim left for a pod's extended resources by an attempt that did not bind (a scheduler
// that created it and stopped before the bind): allocated the node's only device, reserved
// for the pod, protected by the finalizer. Gantry deletes it (finalizer first), as
// kube-scheduler does, and then places the pod with a claim of its own on that device;
// without the deletion the device stays taken and the pod waits for ever.
TEST(DraExtendedResource, AClaimLeftByAnAttemptThatDidNotBindIsDeletedFirst) {
  const std::string test = "dra-left";
  const std::string node = test + "-0";
  const std::string resource = "example.com/" + test;
  EnsureClass(test + "-gpu", resource);
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  ASSERT_NO_FATAL_FAILURE(CreateNodeWithDevices(node, {Device("gpu-0")}));
  // Gated, so that no scheduler takes it before its left claim is in place.
  auto pod = Env().Apply(
      {{"apiVersion", "v1"},
       {"kind", "Pod"},
       {"metadata", {{"name", "p"}, {"namespace", test}}},
       {"spec",
        {{"schedulerName", "gantry-" + test},
         {"schedulingGates", {{{"name", "example.com/hold"}}}},
         {"nodeSelector", {{"gantry-test", node}}},
         {"containers",
          {{{"name", "main"},
            {"image", "busybox"},
            {"resources", {{"requests", {{resource, "1"}}}, {"limits", {{resource, "1"}}}}}}}}}}});
  ASSERT_TRUE(pod.ok()) << pod.status().message();
  const std::string pod_uid = (*pod)["metadata"]["uid"];
  const std::string claims = std::string(kResource) + "/namespaces/" + test + "/resourceclaims";
  const std::string request = "container-0-request-0";
  auto left =
      Env().Call("POST", claims,
                 {{"apiVersion", "resource.k8s.io/v1"},
                  {"kind", "ResourceClaim"},
                  {"metadata",
                   {{"name", "p-extended-resources-left"},
                    {"namespace", test},
                    {"finalizers", {"resource.kubernetes.io/delete-protection"}},
                    {"annotations", {{"resource.kubernetes.io/extended-resource-claim", "true"}}},
                    {"ownerReferences",
                     {{{"apiVersion", "v1"},
                       {"kind", "Pod"},
                       {"name", "p"},
                       {"uid", pod_uid},
                       {"controller", true},
                       {"blockOwnerDeletion", true}}}}}},
                  {"spec",
                   {{"devices",
                     {{"requests",
                       {{{"name", request},
                         {"exactly",
                          {{"deviceClassName", test + "-gpu"},
                           {"allocationMode", "ExactCount"},
                           {"count", 1}}}}}}}}}}});
  ASSERT_TRUE(left.ok()) << left.status().message();
  const std::string left_uid = (*left)["metadata"]["uid"];
  auto allocated = Env().Call(
      "PATCH", claims + "/p-extended-resources-left/status",
      {{"status",
        {{"allocation",
          {{"devices",
            {{"results",
              {{{"request", request},
                {"driver", "gpu.example.com"},
                {"pool", node},
                {"device", "gpu-0"}}}}}},
           {"nodeSelector",
            {{"nodeSelectorTerms",
              {{{"matchFields",
                 {{{"key", "metadata.name"}, {"operator", "In"}, {"values", {node}}}}}}}}}}}},
         {"reservedFor", {{{"resource", "pods"}, {"name", "p"}, {"uid", pod_uid}}}}}}},
      "application/merge-patch+json");
  ASSERT_TRUE(allocated.ok()) << allocated.status().message();

  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  auto ungated =
      Env().Call("PATCH", "/api/v1/namespaces/" + test + "/pods/p",
                 {{"spec", {{"schedulingGates", nullptr}}}}, "application/merge-patch+json");
  ASSERT_TRUE(ungated.ok()) << ungated.status().message();

  json bound;
  std::string claim_name;
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        auto p = Env().Call("GET", "/api/v1/namespaces/" + test + "/pods/p");
        if (!p.ok() || (*p)["spec"].value("nodeName", "").empty()) return false;
        bound = *p;
        claim_name = bound["status"]
                         .value("extendedResourceClaimStatus", json::object())
                         .value("resourceClaimName", "");
        return !claim_name.empty();
      },
      seconds(30)))
      << bound.dump() << "\n"
      << daemon.Log();
  EXPECT_NE(claim_name, "p-extended-resources-left");
  // The left claim is gone (a claim of that name made since would have another uid).
  auto gone = Env().Call("GET", claims + "/p-extended-resources-left");
  EXPECT_TRUE(!gone.ok() || (*gone)["metadata"].value("uid", "") != left_uid)
      << (gone.ok() ? gone->dump() : "");
  auto made = Env().Call("GET", claims + "/" + claim_name);
  ASSERT_TRUE(made.ok()) << made.status().message();
  const json& results = (*made)["status"]["allocation"]["devices"]["results"];
  ASSERT_EQ(results.size(), 1u) << made->dump();
  EXPECT_EQ(results[0].value("device", ""), "gpu-0");
  EXPECT_EQ((*made)["status"]["reservedFor"][0].value("uid", ""), pod_uid);
}

}  // namespace
}  // namespace gantry::testing

// DRA binding conditions on the real API server (DRADeviceBindingConditions, on by default
// in 1.37): a device that the driver attaches after allocation. The test plays the driver,
// writing the claim's status.devices conditions. A pod whose claim got such a device is not
// bound when its claim is written; it is once the driver sets "attached" True. Another,
// whose driver sets "attach-failed" True, stays unbound, with kube-scheduler's words in a
// FailedScheduling event.
#include <gtest/gtest.h>

#include <string>
#include <thread>

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

std::string ClaimPath(const std::string& ns, const std::string& name) {
  return std::string(kResource) + "/namespaces/" + ns + "/resourceclaims/" + name;
}

// A node with one attachable GPU.
void NodeWithAttachableGpu(const std::string& node) {
  json gpu = Device("gpu-0");
  gpu["bindingConditions"] = {"attached"};
  gpu["bindingFailureConditions"] = {"attach-failed"};
  ASSERT_NO_FATAL_FAILURE(CreateNodeWithDevices(node, {gpu}));
}

// A node with one attachable GPU, a claim of it and a pod of that claim.
void NodeClaimPod(const std::string& ns, const std::string& node, const std::string& name,
                  const std::string& scheduler, const std::string& device_class) {
  ASSERT_NO_FATAL_FAILURE(NodeWithAttachableGpu(node));
  auto c = Env().Call("POST", std::string(kResource) + "/namespaces/" + ns + "/resourceclaims",
                      GpuClaim(name, device_class));
  ASSERT_TRUE(c.ok()) << c.status().message();
  json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}, {"namespace", ns}}},
      {"spec",
       {{"schedulerName", scheduler},
        {"nodeSelector", {{"gantry-test", node}}},
        {"resourceClaims", {{{"name", "gpu"}, {"resourceClaimName", name}}}},
        {"containers",
         {{{"name", "main"},
           {"image", "busybox"},
           {"resources", {{"requests", {{"cpu", "100m"}}}, {"claims", {{{"name", "gpu"}}}}}}}}}}}};
  ASSERT_TRUE(Env().Apply(pod).ok());
}

bool Allocated(const std::string& ns, const std::string& claim) {
  auto c = Env().Call("GET", ClaimPath(ns, claim));
  return c.ok() && c->value("status", json::object()).contains("allocation") &&
         (*c)["status"].contains("reservedFor");
}

bool Bound(const std::string& ns, const std::string& pod) {
  auto p = Env().Call("GET", "/api/v1/namespaces/" + ns + "/pods/" + pod);
  return p.ok() && !(*p)["spec"].value("nodeName", "").empty();
}

// The driver's report of the claim's device: one condition.
void Report(const std::string& ns, const std::string& claim, const std::string& node,
            const std::string& type, const std::string& reason, const std::string& message) {
  auto c = Env().Call("GET", ClaimPath(ns, claim));
  ASSERT_TRUE(c.ok()) << c.status().message();
  (*c)["status"]["devices"] = {{{"driver", "gpu.example.com"},
                                {"pool", node},
                                {"device", "gpu-0"},
                                {"conditions",
                                 {{{"type", type},
                                   {"status", "True"},
                                   {"reason", reason},
                                   {"message", message},
                                   {"lastTransitionTime", "2026-12-06T07:00:00Z"}}}}}};
  auto put = Env().Call("PUT", ClaimPath(ns, claim) + "/status", *c);
  ASSERT_TRUE(put.ok()) << put.status().message();
}

TEST(DraBindingConditions, ThePodIsBoundOnceTheDeviceIsAttachedAndNotWhenAttachingFails) {
  const std::string test = "dra-bind";
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  auto cls = Env().Call("POST", std::string(kResource) + "/deviceclasses",
                        {{"apiVersion", "resource.k8s.io/v1"},
                         {"kind", "DeviceClass"},
                         {"metadata", {{"name", test + "-gpu"}}},
                         {"spec", json::object()}});
  ASSERT_TRUE(cls.ok()) << cls.status().message();
  const std::string scheduler = "gantry-" + test;
  NodeClaimPod(test, test + "-node-0", "ok", scheduler, test + "-gpu");
  NodeClaimPod(test, test + "-node-1", "fails", scheduler, test + "-gpu");
  DaemonProcess daemon(test, DaemonConfig(scheduler), "d-" + test);

  ASSERT_TRUE(TestEnv::WaitFor([&] { return Allocated(test, "ok"); }, seconds(30))) << daemon.Log();
  ASSERT_TRUE(TestEnv::WaitFor([&] { return Allocated(test, "fails"); }, seconds(30)))
      << daemon.Log();
  // Written, not bound: the driver has not reported the device attached.
  std::this_thread::sleep_for(seconds(2));
  EXPECT_FALSE(Bound(test, "ok"));
  EXPECT_FALSE(Bound(test, "fails"));

  Report(test, "ok", test + "-node-0", "attached", "Attached", "");
  EXPECT_TRUE(TestEnv::WaitFor([&] { return Bound(test, "ok"); }, seconds(20))) << daemon.Log();

  Report(test, "fails", test + "-node-1", "attach-failed", "NoPath", "no PCIe path");
  auto failed = [&] {
    auto events = Env().Call("GET", "/api/v1/namespaces/" + test + "/events");
    if (!events.ok()) return false;
    for (const json& e : (*events)["items"]) {
      if (e.value("reason", "") == "FailedScheduling" &&
          e.value("message", "")
                  .find("running PreBind plugin \"DynamicResources\": claim fails "
                        "binding failed: reason=NoPath, message=\"no PCIe path\"") !=
              std::string::npos) {
        return true;
      }
    }
    return false;
  };
  EXPECT_TRUE(TestEnv::WaitFor(failed, seconds(20))) << daemon.Log();
  EXPECT_FALSE(Bound(test, "fails"));
}

// The claim the daemon made for the pod's extended resources, as the pod's status names it;
// "" until written.
std::string ExtendedClaimOf(const std::string& ns, const std::string& pod) {
  auto p = Env().Call("GET", "/api/v1/namespaces/" + ns + "/pods/" + pod);
  if (!p.ok()) return "";
  return p->value("/status/extendedResourceClaimStatus/resourceClaimName"_json_pointer,
                  std::string());
}

// The same for extended resources served by DRA: the devices of the claim Gantry makes for
// the pod's bindx.example.com/gpu are waited for, and a failed wait deletes that claim.
TEST(DraBindingConditions, AnExtendedResourceClaimWaitsForItsDeviceAndIsDeletedOnFailure) {
  const std::string test = "dra-bindx";
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  auto cls = Env().Call(
      "POST", std::string(kResource) + "/deviceclasses",
      {{"apiVersion", "resource.k8s.io/v1"},
       {"kind", "DeviceClass"},
       {"metadata", {{"name", test + "-gpu"}}},
       {"spec",
        {{"extendedResourceName", "bindx.example.com/gpu"},
         {"selectors", {{{"cel", {{"expression", "device.driver == 'gpu.example.com'"}}}}}}}}});
  ASSERT_TRUE(cls.ok()) << cls.status().message();
  const std::string scheduler = "gantry-" + test;
  for (const char* name : {"ok", "fails"}) {
    const std::string node = test + "-" + name;
    ASSERT_NO_FATAL_FAILURE(NodeWithAttachableGpu(node));
    const json gpu = {{"bindx.example.com/gpu", "1"}};
    json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}, {"namespace", test}}},
                {"spec",
                 {{"schedulerName", scheduler},
                  {"nodeSelector", {{"gantry-test", node}}},
                  {"containers",
                   {{{"name", "main"},
                     {"image", "busybox"},
                     {"resources", {{"requests", gpu}, {"limits", gpu}}}}}}}}};
    ASSERT_TRUE(Env().Apply(pod).ok());
  }
  DaemonProcess daemon(test, DaemonConfig(scheduler), "d-" + test);

  std::string ok_claim, failing_claim;
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        ok_claim = ExtendedClaimOf(test, "ok");
        failing_claim = ExtendedClaimOf(test, "fails");
        return !ok_claim.empty() && !failing_claim.empty() && Allocated(test, ok_claim) &&
               Allocated(test, failing_claim);
      },
      seconds(30)))
      << daemon.Log();
  std::this_thread::sleep_for(seconds(2));
  EXPECT_FALSE(Bound(test, "ok"));
  EXPECT_FALSE(Bound(test, "fails"));

  Report(test, ok_claim, test + "-ok", "attached", "Attached", "");
  EXPECT_TRUE(TestEnv::WaitFor([&] { return Bound(test, "ok"); }, seconds(20))) << daemon.Log();

  Report(test, failing_claim, test + "-fails", "attach-failed", "NoPath", "no PCIe path");
  EXPECT_TRUE(TestEnv::WaitFor(
      [&] {
        auto c = Env().Call("GET", ClaimPath(test, failing_claim));
        return !c.ok() || !c->contains("metadata") ||
               c->value("/metadata/uid"_json_pointer, std::string()).empty();
      },
      seconds(20)))
      << "the failed wait's claim " << failing_claim << " is not deleted\n"
      << daemon.Log();
  EXPECT_FALSE(Bound(test, "fails"));
}

}  // namespace
}  // namespace gantry::testing

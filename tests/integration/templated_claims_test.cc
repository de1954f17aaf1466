// A pod's claim made from a ResourceClaimTemplate by kube-controller-manager's
// resourceclaim controller (issue 29): gantry waits until the controller has made the claim
// and named it in pod.status.resourceClaimStatuses, then allocates it and binds the pod;
// once the pod has ended the controller deletes the claim, which the pod owns.
//
// Named to be linked after side_by_side_volumes_test.cc: kube-controller-manager is started
// once per binary, and its SideBySideVolumes cases must run before any PV controller does
// (they make claims bound to volumes that do not exist); SideBySideWffc starts it with the
// same controllers as here, so that whichever comes first both find theirs.
#include <gtest/gtest.h>

#include <string>

#include "tests/integration/daemon_process.h"
#include "tests/integration/testenv.h"

namespace gantry::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr const char* kApi = "/apis/resource.k8s.io/v1";

TestEnv& Env() {
  return TestEnv::Get();
}

TEST(DraClaimTemplates, TheControllersClaimIsAllocatedAndDeletedWithItsPod) {
  const std::string test = "dra-template";
  const std::string node = test + "-node-0";
  // The PV controller too: SideBySideWffc's, when this test runs first.
  Status started = Env().StartControllerManager("persistentvolume-binder,resourceclaim-controller");
  ASSERT_TRUE(started.ok()) << started.message();
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  auto created = Env().CreateNode(node, 0, "8", "16Gi", {{"gantry-test", node}});
  ASSERT_TRUE(created.ok()) << created.status().message();
  auto slice =
      Env().Call("POST", std::string(kApi) + "/resourceslices",
                 {{"apiVersion", "resource.k8s.io/v1"},
                  {"kind", "ResourceSlice"},
                  {"metadata", {{"name", node + "-gpus"}}},
                  {"spec",
                   {{"driver", "template.gantry.test"},
                    {"pool", {{"name", node}, {"generation", 1}, {"resourceSliceCount", 1}}},
                    {"nodeName", node},
                    {"devices", {{{"name", "gpu-0"}}}}}}});
  ASSERT_TRUE(slice.ok()) << slice.status().message();
  auto cls =
      Env().Call("POST", std::string(kApi) + "/deviceclasses",
                 {{"apiVersion", "resource.k8s.io/v1"},
                  {"kind", "DeviceClass"},
                  {"metadata", {{"name", test}}},
                  {"spec",
                   {{"selectors",
                     {{{"cel", {{"expression", "device.driver == 'template.gantry.test'"}}}}}}}}});
  ASSERT_TRUE(cls.ok()) << cls.status().message();
  auto tmpl = Env().Call(
      "POST", std::string(kApi) + "/namespaces/" + test + "/resourceclaimtemplates",
      {{"apiVersion", "resource.k8s.io/v1"},
       {"kind", "ResourceClaimTemplate"},
       {"metadata", {{"name", "one-gpu"}}},
       {"spec",
        {{"spec",
          {{"devices",
            {{"requests", {{{"name", "gpu"}, {"exactly", {{"deviceClassName", test}}}}}}}}}}}}});
  ASSERT_TRUE(tmpl.ok()) << tmpl.status().message();

  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  auto pod = Env().Apply(
      {{"apiVersion", "v1"},
       {"kind", "Pod"},
       {"metadata", {{"name", "p"}, {"namespace", test}}},
       {"spec",
        {{"schedulerName", "gantry-" + test},
         {"nodeSelector", {{"gantry-test", node}}},
         {"resourceClaims", {{{"name", "gpu"}, {"resourceClaimTemplateName", "one-gpu"}}}},
         {"containers",
          {{{"name", "main"},
            {"image", "busybox"},
            {"resources",
             {{"requests", {{"cpu", "100m"}}}, {"claims", {{{"name", "gpu"}}}}}}}}}}}});
  ASSERT_TRUE(pod.ok()) << pod.status().message();
  const std::string pod_path = "/api/v1/namespaces/" + test + "/pods/p";

  json bound;
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        auto p = Env().Call("GET", pod_path);
        if (!p.ok() || (*p)["spec"].value("nodeName", "").empty()) return false;
        bound = *p;
        return true;
      },
      seconds(30), milliseconds(100)))
      << daemon.Log();
  EXPECT_EQ(bound["spec"]["nodeName"], node);
  // The controller's claim, named in the pod's status, owned by the pod.
  const json statuses = bound.value("/status/resourceClaimStatuses"_json_pointer, json::array());
  ASSERT_EQ(statuses.size(), 1u) << bound.dump();
  EXPECT_EQ(statuses[0]["name"], "gpu");
  const std::string claim_name = statuses[0].value("resourceClaimName", "");
  ASSERT_NE(claim_name, "");
  const std::string claim_path =
      std::string(kApi) + "/namespaces/" + test + "/resourceclaims/" + claim_name;
  auto claim = Env().Call("GET", claim_path);
  ASSERT_TRUE(claim.ok()) << claim.status().message();
  const json owners = (*claim)["metadata"].value("ownerReferences", json::array());
  ASSERT_EQ(owners.size(), 1u) << claim->dump();
  EXPECT_EQ(owners[0]["kind"], "Pod");
  EXPECT_EQ(owners[0]["uid"], bound["metadata"]["uid"]);
  // Allocated gpu-0 of the node and reserved for the pod, before the bind.
  const json results =
      claim->value("/status/allocation/devices/results"_json_pointer, json::array());
  ASSERT_EQ(results.size(), 1u) << claim->dump();
  EXPECT_EQ(results[0]["pool"], node);
  EXPECT_EQ(results[0]["device"], "gpu-0");
  const json reserved = claim->value("/status/reservedFor"_json_pointer, json::array());
  ASSERT_EQ(reserved.size(), 1u) << claim->dump();
  EXPECT_EQ(reserved[0]["uid"], bound["metadata"]["uid"]);

  // The pod ends (Failed, as its kubelet would say): the controller takes off the
  // reservation, the allocation and the scheduler's finalizer, and deletes the claim. (Once
  // a pod is deleted, the claim it owns is the garbage collector's, not run here.)
  auto failed = Env().Call("PATCH", pod_path + "/status", json{{"status", {{"phase", "Failed"}}}},
                           "application/merge-patch+json");
  ASSERT_TRUE(failed.ok()) << failed.status().message();
  EXPECT_TRUE(TestEnv::WaitFor([&] { return !Env().Call("GET", claim_path).ok(); }, seconds(30),
                               milliseconds(100)))
      << "the claim outlived its pod";
  // No kubelet: the pod is deleted at once.
  EXPECT_TRUE(Env().Call("DELETE", pod_path, json{{"gracePeriodSeconds", 0}}).ok());
}

}  // namespace
}  // namespace gantry::testing

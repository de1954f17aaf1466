// A PodGroup's claim made from a template (DRAWorkloadResourceClaims) by
// kube-controller-manager's resourceclaim controller: one ResourceClaim for the whole group,
// owned by the PodGroup, named in each pod's status.resourceClaimStatuses; Gantry places
// both pods of the group where the claim's one device is and reserves the claim for the
// group, as kube-scheduler does (tests/integration/resource_claims_test.cc compares the two
// for a claim named directly).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/integration/daemon_process.h"
#include "tests/integration/dra_objects.h"
#include "tests/integration/operators/operators.h"
#include "tests/integration/testenv.h"

namespace gantry::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

TestEnv& Env() {
  return TestEnv::Get();
}

TEST(Operators, APodGroupsClaimTemplateGivesTheGroupOneClaimReservedForIt) {
  const std::string test = "op-group-claim";
  const std::string node = test + "-0";
  ASSERT_TRUE(StartControllersAndKwok().ok());
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  ASSERT_NO_FATAL_FAILURE(CreateNodeWithDevices(node, {Device("gpu-0")}));
  auto made = Env().Call("POST", std::string(kDraApi) + "/deviceclasses",
                         DeviceClass(test + "-gpu", "device.driver == \"gpu.example.com\""));
  ASSERT_TRUE(made.ok()) << made.status().message();
  json claim_template = {{"apiVersion", "resource.k8s.io/v1"},
                         {"kind", "ResourceClaimTemplate"},
                         {"metadata", {{"name", "gpu"}, {"namespace", test}}},
                         {"spec", {{"spec", GpuClaim("unused", test + "-gpu")["spec"]}}}};
  made = Env().Apply(claim_template);
  ASSERT_TRUE(made.ok()) << made.status().message();
  const json entry = {{"name", "gpu"}, {"resourceClaimTemplateName", "gpu"}};
  const std::string groups = "/apis/scheduling.k8s.io/v1beta1/namespaces/" + test + "/podgroups";
  made = Env().Call("POST", groups,
                    {{"apiVersion", "scheduling.k8s.io/v1beta1"},
                     {"kind", "PodGroup"},
                     {"metadata", {{"name", "train"}, {"namespace", test}}},
                     {"spec",
                      {{"schedulingPolicy", {{"gang", {{"minCount", 2}}}}},
                       {"resourceClaims", json::array({entry})}}}});
  ASSERT_TRUE(made.ok()) << made.status().message();
  for (const char* name : {"p-0", "p-1"}) {
    json container = Container("main", "100m", 0);
    container["resources"]["claims"] = {{{"name", "gpu"}}};
    made = Env().Apply({{"apiVersion", "v1"},
                        {"kind", "Pod"},
                        {"metadata", {{"name", name}, {"namespace", test}}},
                        {"spec",
                         {{"schedulerName", "gantry-" + test},
                          {"nodeSelector", {{"gantry-test", node}}},
                          {"schedulingGroup", {{"podGroupName", "train"}}},
                          {"resourceClaims", json::array({entry})},
                          {"containers", json::array({container})}}}});
    ASSERT_TRUE(made.ok()) << made.status().message();
  }
  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  std::vector<json> pods;
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        pods = PodsIn(test);
        int bound = 0;
        for (const json& pod : pods) bound += NodeName(pod) == node ? 1 : 0;
        return pods.size() == 2 && bound == 2;
      },
      seconds(60), milliseconds(250)))
      << Get(groups + "/train").dump(1) << "\n"
      << daemon.Log();
  // One claim, the group's, named in both pods' statuses and reserved for the group.
  const json claims = Get(std::string(kDraApi) + "/namespaces/" + test + "/resourceclaims");
  ASSERT_EQ(claims.value("items", json::array()).size(), 1u) << claims.dump(1);
  const json& claim = claims["items"][0];
  const json group = Get(groups + "/train");
  const json owner = claim.value("/metadata/ownerReferences"_json_pointer, json::array());
  ASSERT_EQ(owner.size(), 1u) << claim.dump(1);
  EXPECT_EQ(owner[0].value("kind", ""), "PodGroup");
  EXPECT_EQ(owner[0].value("uid", ""), group["metadata"].value("uid", ""));
  for (const json& pod : pods) {
    EXPECT_EQ(
        pod.value("/status/resourceClaimStatuses/0/resourceClaimName"_json_pointer, std::string()),
        claim["metadata"].value("name", ""))
        << pod.dump(1);
  }
  EXPECT_EQ(claim.value("/status/reservedFor"_json_pointer, json::array()),
            json::array({{{"apiGroup", "scheduling.k8s.io"},
                          {"resource", "podgroups"},
                          {"name", "train"},
                          {"uid", group["metadata"]["uid"]}}}))
      << claim.dump(1);
}

}  // namespace
}  // namespace gantry::testing

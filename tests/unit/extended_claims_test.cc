// The claim of a pod's extended resources served by DRA, as the daemon makes it
// (daemon/extended_claims.h): kube-scheduler's request names and mappings per container,
// init containers reusing the requests of the containers after them, the engine's devices
// handed out to those requests, and the objects written.
#include "daemon/extended_claims.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gantry {
namespace {

using json = nlohmann::json;

const std::vector<ExtendedResourceClass> kGpus = {{"nvidia.com/gpu", "gpu.example.com"}};

json Container(const std::string& name, json requests, bool sidecar = false) {
  json c = {{"name", name}, {"resources", {{"requests", std::move(requests)}}}};
  if (sidecar) c["restartPolicy"] = "Always";
  return c;
}

json Pod(json init_containers, json containers) {
  return {{"metadata", {{"name", "p"}, {"uid", "u"}}},
          {"spec", {{"initContainers", std::move(init_containers)}, {"containers", containers}}}};
}

// "name:count" per request, "container>resource>request" per mapping.
std::string Requests(const ExtendedClaimShape& shape) {
  std::string out;
  for (const dra::DeviceRequest& r : shape.requests) {
    out += (out.empty() ? "" : " ") + r.name + ":" + std::to_string(r.exactly->count) + ":" +
           r.exactly->device_class_name;
  }
  return out;
}
std::string Mappings(const ExtendedClaimShape& shape) {
  std::string out;
  for (const ExtendedResourceMapping& m : shape.mappings) {
    out += (out.empty() ? "" : " ") + m.container + ">" + m.resource + ">" + m.request;
  }
  return out;
}

TEST(ExtendedClaims, OneRequestPerContainerNamedByTheResourcesSortedIndex) {
  const json pod =
      Pod(json::array(), json::array({Container("main", {{"cpu", "1"}, {"nvidia.com/gpu", "2"}}),
                                      Container("side", {{"nvidia.com/gpu", "1"}}),
                                      Container("plain", {{"cpu", "1"}})}));
  const ExtendedClaimShape shape = ShapeExtendedClaim(ContainersOf(pod), kGpus);
  EXPECT_EQ(Requests(shape),
            "container-0-request-1:2:gpu.example.com container-1-request-0:1:gpu.example.com");
  EXPECT_EQ(Mappings(shape),
            "main>nvidia.com/gpu>container-0-request-1 side>nvidia.com/gpu>container-1-request-0");
}

// An init container runs before the containers after it, so it reuses their requests; a
// sidecar lives as long as the pod and has a request of its own.
TEST(ExtendedClaims, InitContainersReuseTheRequestsOfTheContainersAfterThem) {
  const json pod = Pod(json::array({Container("init", {{"nvidia.com/gpu", "1"}}),
                                    Container("sidecar", {{"nvidia.com/gpu", "1"}}, true)}),
                       json::array({Container("main", {{"nvidia.com/gpu", "2"}})}));
  const ExtendedClaimShape shape = ShapeExtendedClaim(ContainersOf(pod), kGpus);
  EXPECT_EQ(Requests(shape),
            "container-1-request-0:1:gpu.example.com container-2-request-0:2:gpu.example.com");
  // Long-lived first; the init container's one device is the sidecar's.
  EXPECT_EQ(
      Mappings(shape),
      "sidecar>nvidia.com/gpu>container-1-request-0 main>nvidia.com/gpu>container-2-request-0 "
      "init>nvidia.com/gpu>container-1-request-0");
}

// An init container asking more than the later containers cover asks for the rest; of
// several such requests only the largest is kept, the others' mappings pointing at it.
TEST(ExtendedClaims, TheLargestInitContainerRequestServesThemAll) {
  const json pod = Pod(json::array({Container("a", {{"nvidia.com/gpu", "3"}}),
                                    Container("b", {{"nvidia.com/gpu", "4"}})}),
                       json::array({Container("main", {{"nvidia.com/gpu", "1"}})}));
  const ExtendedClaimShape shape = ShapeExtendedClaim(ContainersOf(pod), kGpus);
  EXPECT_EQ(Requests(shape),
            "container-1-request-0:3:gpu.example.com container-2-request-0:1:gpu.example.com");
  EXPECT_EQ(Mappings(shape),
            "main>nvidia.com/gpu>container-2-request-0 a>nvidia.com/gpu>container-2-request-0 "
            "a>nvidia.com/gpu>container-1-request-0 b>nvidia.com/gpu>container-2-request-0 "
            "b>nvidia.com/gpu>container-1-request-0");
}

dra::Allocation EngineAllocation(int devices) {
  dra::Allocation a;
  for (int i = 0; i < devices; ++i) {
    dra::AllocationResult r;
    r.request = "resource-0";
    r.driver = "gpu.example.com";
    r.pool = "n0";
    r.device = "gpu-" + std::to_string(i);
    a.results.push_back(r);
  }
  dra::AllocationConfig config;
  config.from_class = true;
  config.requests = {"resource-0"};
  config.driver = "gpu.example.com";
  config.parameters_json = "{}";
  a.config.push_back(config);
  return a;
}

TEST(ExtendedClaims, TheEnginesDevicesAreHandedOutToTheRequestsInOrder) {
  const json pod = Pod(json::array(), json::array({Container("a", {{"nvidia.com/gpu", "2"}}),
                                                   Container("b", {{"nvidia.com/gpu", "1"}})}));
  const ExtendedClaimShape shape = ShapeExtendedClaim(ContainersOf(pod), kGpus);
  auto allocation = AllocationForShape(EngineAllocation(3), kGpus, shape);
  ASSERT_TRUE(allocation.ok()) << allocation.status().message();
  std::string got;
  for (const dra::AllocationResult& r : allocation->results)
    got += r.request + "=" + r.device + " ";
  EXPECT_EQ(got,
            "container-0-request-0=gpu-0 container-0-request-0=gpu-1 container-1-request-0=gpu-2 ");
  ASSERT_EQ(allocation->config.size(), 1u);
  EXPECT_EQ(allocation->config[0].requests,
            (std::vector<std::string>{"container-0-request-0", "container-1-request-0"}));
  // The pod asks three; two or four allocated is an error, never a partial claim.
  EXPECT_FALSE(AllocationForShape(EngineAllocation(2), kGpus, shape).ok());
  EXPECT_FALSE(AllocationForShape(EngineAllocation(4), kGpus, shape).ok());
}

TEST(ExtendedClaims, TheClaimAndThePodStatusAsKubeSchedulerWritesThem) {
  const json pod = Pod(json::array(), json::array({Container("main", {{"nvidia.com/gpu", "1"}})}));
  const ExtendedClaimShape shape = ShapeExtendedClaim(ContainersOf(pod), kGpus);
  const json claim = ExtendedClaimObject("ml", "trainer", "uid-1", shape);
  EXPECT_EQ(claim["metadata"]["generateName"], "trainer-extended-resources-");
  EXPECT_EQ(claim["metadata"]["namespace"], "ml");
  EXPECT_EQ(claim["metadata"]["annotations"]["resource.kubernetes.io/extended-resource-claim"],
            "true");
  EXPECT_EQ(claim["metadata"]["ownerReferences"],
            json::parse(R"([{"apiVersion": "v1", "kind": "Pod", "name": "trainer",
                             "uid": "uid-1", "controller": true}])"));
  EXPECT_EQ(claim["spec"]["devices"]["requests"],
            json::parse(R"([{"name": "container-0-request-0", "exactly": {
                "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount",
                "count": 1}}])"));
  EXPECT_FALSE(claim.contains("status"));
  EXPECT_EQ(ExtendedClaimStatusPatch("trainer-extended-resources-x7k2p", shape),
            json::parse(R"({"status": {"extendedResourceClaimStatus": {
                "requestMappings": [{"containerName": "main", "resourceName": "nvidia.com/gpu",
                                     "requestName": "container-0-request-0"}],
                "resourceClaimName": "trainer-extended-resources-x7k2p"}}})"));
}

}  // namespace
}  // namespace gantry

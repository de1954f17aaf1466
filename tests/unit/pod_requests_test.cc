// A pod's requests as kube-scheduler counts them (k8s/pod_requests.h), table-driven from
// the cases of component-helpers' own TestPodResourceRequests (resource/helpers_test.go,
// k8s.io/component-helpers v0.37.2, with UseStatusResources on as in-place resize is GA),
// plus pod-level resources and their resize, and hugepages.
#include "k8s/pod_requests.h"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "k8s/objects.h"
#include "model/quantity.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

using json = nlohmann::json;

json Container(const std::string& name, json requests, bool sidecar = false) {
  json c = {{"name", name}, {"resources", {{"requests", std::move(requests)}}}};
  if (sidecar) c["restartPolicy"] = "Always";
  return c;
}

json ContainerStatus(const std::string& name, json allocated, json actuated) {
  json s = {{"name", name}};
  if (!allocated.is_null()) s["allocatedResources"] = std::move(allocated);
  if (!actuated.is_null()) s["resources"] = {{"requests", std::move(actuated)}};
  return s;
}

const json kInfeasible = {
    {"type", "PodResizePending"}, {"status", "True"}, {"reason", "Infeasible"}};

struct Case {
  std::string description;
  json spec;    // containers, initContainers, overhead, resources
  json status;  // containerStatuses, initContainerStatuses, conditions, ...
  std::map<std::string, std::string> expected;  // resource -> quantity
};

std::vector<Case> Cases() {
  return {
      {"nil options, larger init container",
       {{"initContainers", {Container("i", {{"cpu", "4"}})}},
        {"containers", {Container("c", {{"cpu", "1"}})}}},
       json::object(),
       {{"cpu", "4"}}},
      {"nil options, larger containers",
       {{"initContainers", {Container("i", {{"cpu", "2"}})}},
        {"containers", {Container("c1", {{"cpu", "2"}}), Container("c2", {{"cpu", "3"}})}}},
       json::object(),
       {{"cpu", "5"}}},
      {"pod overhead included",
       {{"overhead", {{"cpu", "1"}, {"memory", "1Gi"}}},
        {"initContainers", {Container("i", {{"cpu", "2"}})}},
        {"containers", {Container("c1", {{"cpu", "2"}}), Container("c2", {{"cpu", "3"}})}}},
       json::object(),
       {{"cpu", "6"}, {"memory", "1Gi"}}},
      {"resized, infeasible",
       {{"containers", {Container("container-1", {{"cpu", "4"}})}}},
       {{"conditions", {kInfeasible}},
        {"containerStatuses", {ContainerStatus("container-1", nullptr, {{"cpu", "2"}})}}},
       {{"cpu", "2"}}},
      {"resized, infeasible & in-progress",
       {{"containers", {Container("container-1", {{"cpu", "6"}})}}},
       {{"conditions", {kInfeasible}},
        {"containerStatuses", {ContainerStatus("container-1", {{"cpu", "4"}}, {{"cpu", "2"}})}}},
       {{"cpu", "4"}}},
      {"resized, no resize status",
       {{"containers", {Container("container-1", {{"cpu", "4"}})}}},
       {{"containerStatuses", {ContainerStatus("container-1", nullptr, {{"cpu", "2"}})}}},
       {{"cpu", "4"}}},
      {"resized: per-resource 3-way maximum",
       {{"containers",
         {Container("container-1",
                    {{"cpu", "30m"}, {"memory", "20M"}, {"ephemeral-storage", "10G"}})}}},
       {{"containerStatuses",
         {ContainerStatus("container-1",
                          {{"cpu", "20m"}, {"memory", "10M"}, {"ephemeral-storage", "30G"}},
                          {{"cpu", "10m"}, {"memory", "30M"}, {"ephemeral-storage", "20G"}})}}},
       {{"cpu", "30m"}, {"memory", "30M"}, {"ephemeral-storage", "30G"}}},
      {"resized, restartable init container, infeasible",
       {{"initContainers", {Container("restartable-init-1", {{"cpu", "4"}}, true)}}},
       {{"conditions", {kInfeasible}},
        {"initContainerStatuses",
         {ContainerStatus("restartable-init-1", nullptr, {{"cpu", "2"}})}}},
       {{"cpu", "2"}}},
      {"resized, restartable init container, no resize status",
       {{"initContainers", {Container("restartable-init-1", {{"cpu", "4"}}, true)}}},
       {{"initContainerStatuses",
         {ContainerStatus("restartable-init-1", nullptr, {{"cpu", "2"}})}}},
       {{"cpu", "4"}}},
      {"restartable init container",
       {{"initContainers", {Container("restartable-init-1", {{"cpu", "1"}}, true)}},
        {"containers", {Container("container-1", {{"cpu", "1"}})}}},
       json::object(),
       {{"cpu", "2"}}},
      {"multiple restartable init containers",
       {{"initContainers",
         {Container("init-1", {{"cpu", "5"}}),
          Container("restartable-init-1", {{"cpu", "1"}}, true),
          Container("restartable-init-2", {{"cpu", "2"}}, true),
          Container("restartable-init-3", {{"cpu", "3"}}, true)}},
        {"containers", {Container("container-1", {{"cpu", "1"}})}}},
       json::object(),
       {{"cpu", "7"}}},
      {"multiple restartable and regular init containers",
       {{"initContainers",
         {Container("init-1", {{"cpu", "5"}}),
          Container("restartable-init-1", {{"cpu", "1"}}, true),
          Container("restartable-init-2", {{"cpu", "2"}}, true),
          Container("init-2", {{"cpu", "5"}}),
          Container("restartable-init-3", {{"cpu", "3"}}, true)}},
        {"containers", {Container("container-1", {{"cpu", "1"}})}}},
       json::object(),
       {{"cpu", "8"}}},
      {"restartable-init, init and regular",
       {{"initContainers",
         {Container("restartable-init-1", {{"cpu", "10"}}, true),
          Container("init-1", {{"cpu", "200"}})}},
        {"containers", {Container("container-1", {{"cpu", "100"}})}}},
       json::object(),
       {{"cpu", "210"}}},
      {"aggregate request resolves max of sums instead of sum of maxes",
       {{"containers", {Container("c1", {{"cpu", "1"}}), Container("c2", {{"cpu", "2"}})}}},
       {{"containerStatuses",
         {ContainerStatus("c1", {{"cpu", "2"}}, nullptr),
          ContainerStatus("c2", {{"cpu", "1"}}, nullptr)}}},
       {{"cpu", "3"}}},
      // Beyond the upstream table: pod-level resources replace the containers' sum for cpu,
      // memory and hugepages (TestPodLevelResourceRequests), and follow a pod-level resize.
      {"pod-level requests replace the containers' cpu and memory",
       {{"resources", {{"requests", {{"cpu", "4"}, {"memory", "8Gi"}, {"hugepages-2Mi", "1Gi"}}}}},
        {"containers",
         {Container("c", {{"cpu", "1"}, {"memory", "1Gi"}, {"nvidia.com/gpu", "1"}})}}},
       json::object(),
       {{"cpu", "4"}, {"memory", "8Gi"}, {"hugepages-2Mi", "1Gi"}, {"nvidia.com/gpu", "1"}}},
      {"pod-level requests resized: the largest of the spec and the pod's status",
       {{"resources", {{"requests", {{"cpu", "2"}}}}},
        {"containers", {Container("c", {{"cpu", "1"}})}}},
       {{"resources", {{"requests", {{"cpu", "3"}}}}}, {"allocatedResources", {{"cpu", "2"}}}},
       {{"cpu", "3"}}},
      {"container hugepages count as their own resource",
       {{"containers", {Container("c", {{"cpu", "1"}, {"hugepages-1Gi", "2Gi"}})}}},
       json::object(),
       {{"cpu", "1"}, {"hugepages-1Gi", "2Gi"}}},
  };
}

TEST(PodRequests, AsComponentHelpersCountThem) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.description);
    ResourceVector got;
    k8s::UnreadableRequests unreadable;
    Status problem = Status::Ok();
    k8s::PodRequests(c.spec, c.status, "pod ml/p: spec", &got, &unreadable, &problem);
    EXPECT_TRUE(problem.ok()) << problem.message();
    EXPECT_TRUE(unreadable.empty()) << unreadable.ToString();
    ResourceVector want;
    for (const auto& [name, quantity] : c.expected) {
      ResourceId id = Must(InternResourceName(name, NameSource::kWorkload));
      want.Set(id, Must(ParseQuantity(quantity)));
    }
    EXPECT_EQ(got, want) << got.ToString() << " != " << want.ToString();
  }
}

// The daemon's decoder counts a bound pod with its resize: a pod resized up to 3 CPUs counts
// 3, however much less its spec still says.
TEST(PodRequests, DecodePodCountsTheResize) {
  json pod = {{"metadata", {{"name", "p"}, {"namespace", "ml"}, {"uid", "u"}}},
              {"spec", {{"nodeName", "n1"}, {"containers", {Container("c", {{"cpu", "1"}})}}}},
              {"status",
               {{"phase", "Running"},
                {"containerStatuses", {ContainerStatus("c", {{"cpu", "3"}}, {{"cpu", "3"}})}}}}};
  std::string problem;
  k8s::PodInfo info = Must(k8s::DecodePod(pod, &problem));
  EXPECT_EQ(problem, "");
  EXPECT_EQ(info.spec.requests.Get(kCpu), 3000);
}

TEST(PodRequests, AnUnreadableStatusCountsAsUnreadableNamingTheField) {
  json spec = {{"containers", {Container("c", {{"cpu", "1"}})}}};
  json status = {{"containerStatuses", {ContainerStatus("c", {{"cpu", "lots"}}, nullptr)}}};
  ResourceVector got;
  k8s::UnreadableRequests unreadable;
  Status problem = Status::Ok();
  k8s::PodRequests(spec, status, "pod ml/p: spec", &got, &unreadable, &problem);
  EXPECT_FALSE(unreadable.empty());
  EXPECT_TRUE(Contains(problem.message(), "status.allocatedResources")) << problem.message();
}

}  // namespace
}  // namespace gantry

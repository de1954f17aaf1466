// Side by side with kube-scheduler (side_by_side.h): pods counted and admitted as the kubelet
// counts and admits them. After an in-place resize (GA in Kubernetes 1.35) a bound pod
// counts as the largest of its spec and what its status says was allocated or is actuated,
// so a pod that fits only if the resize were ignored waits. A pod that needs a node feature
// (NodeDeclaredFeatures, GA in 1.37) goes only where the node declares it.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>

#include "tests/integration/side_by_side.h"

namespace gantry::testing {
namespace {

using json = nlohmann::json;

// What a kubelet reports while a resize of `pod` from 3 CPUs down to its spec's 1 is under
// way: 3 CPUs still allocated and actuated.
void ReportResizeInProgress(const std::string& ns, const std::string& pod) {
  json status = {{"status",
                  {{"containerStatuses",
                    {{{"name", "main"},
                      {"image", "registry.k8s.io/pause:3.10"},
                      {"imageID", ""},
                      {"ready", false},
                      {"restartCount", 0},
                      {"state", {{"waiting", {{"reason", "ContainerCreating"}}}}},
                      {"allocatedResources", {{"cpu", "3"}, {"memory", "64Mi"}}},
                      {"resources", {{"requests", {{"cpu", "3"}, {"memory", "64Mi"}}}}}}}}}}};
  auto r = Env().Call("PATCH", "/api/v1/namespaces/" + ns + "/pods/" + pod + "/status", status,
                      "application/strategic-merge-patch+json");
  ASSERT_TRUE(r.ok()) << r.status().message();
}

// `resizing` is bound to the 4-CPU node asking for 1 CPU in its spec, but its status says 3
// are allocated: `after` (2 CPUs) fits only if that is ignored, so it waits.
TEST_F(SideBySide, AResizedPodCountsAsTheLargestOfItsSpecAndStatus) {
  const std::string t = "sbs-resize";
  CaseNode(t, t + "-0", "4");
  Case c{.name = t,
         .pods = {BoundTo(CasePod(t, "resizing", json::object(), "1"), t + "-0"),
                  CasePod(t, "after", json::object(), "2"),
                  CasePod(t, "small", json::object(), "500m")},
         .expect = {{"resizing", {t + "-0"}, "", ""},
                    {"after", {}, "Unschedulable", "Insufficient cpu"},
                    {"small", {t + "-0"}, "", ""}},
         .one_by_one = true,
         .after_create =
             [](const std::string& ns, const std::string& pod) {
               if (pod != "resizing") return;
               ReportResizeInProgress(ns, pod);
               std::this_thread::sleep_for(std::chrono::seconds(1));  // both see it first
             },
         .check = [](const std::map<std::string, json>& pods) -> std::string {
           auto it = pods.find("resizing");
           if (it == pods.end()) return "no pod";
           const json& statuses = it->second["status"]["containerStatuses"];
           if (!statuses.is_array() || statuses.empty() ||
               !statuses[0].contains("allocatedResources")) {
             return "the API server did not keep the status: " + it->second["status"].dump();
           }
           return "";
         }};
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// A container rule that restarts all containers needs RestartAllContainersOnContainerExits:
// of two nodes alike, only the one whose status declares it takes the pod; with neither
// declaring it, it waits in kube-scheduler's words.
TEST_F(SideBySide, APodNeedingANodeFeatureGoesWhereItIsDeclared) {
  const std::string t = "sbs-features";
  CaseNode(t, t + "-plain", "4");
  CaseNode(t, t + "-declaring", "4");
  auto declared =
      Env().Call("PATCH", "/api/v1/nodes/" + t + "-declaring/status",
                 json{{"status", {{"declaredFeatures", {"RestartAllContainersOnContainerExits"}}}}},
                 "application/merge-patch+json");
  ASSERT_TRUE(declared.ok()) << declared.status().message();
  json restarts = CasePod(t, "restarts-all");
  restarts["spec"]["containers"][0]["restartPolicy"] = "Never";
  restarts["spec"]["containers"][0]["restartPolicyRules"] = {
      {{"action", "RestartAllContainers"}, {"exitCodes", {{"operator", "In"}, {"values", {42}}}}}};
  json elsewhere = restarts;
  elsewhere["metadata"]["name"] = "restarts-all-elsewhere";
  elsewhere["spec"]["nodeSelector"]["kubernetes.io/hostname"] = t + "-plain";
  Case c{.name = t,
         .pods = {restarts, elsewhere, CasePod(t, "plain")},
         .expect = {{"restarts-all", {t + "-declaring"}, "", ""},
                    {"restarts-all-elsewhere", {}, "Unschedulable", "required features"},
                    {"plain", {t + "-plain", t + "-declaring"}, "", ""}}};
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

}  // namespace
}  // namespace gantry::testing

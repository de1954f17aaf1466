// Side by side with kube-scheduler (side_by_side.h): the node-level filters of its default
// profile (NodeName, NodeUnschedulable, NodePorts, NodeResourcesFit, NodeAffinity,
// TaintToleration), scheduling gates, and a pod whose ResourceClaim is missing.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/side_by_side.h"

namespace gantry::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

// matchFields on metadata.name is how the DaemonSet controller places its pods.
TEST_F(SideBySide, NodeAffinityMatchFieldsOnTheNodeName) {
  const std::string t = "sbs-matchfields";
  for (int i = 0; i < 3; ++i) CaseNode(t, t + "-" + std::to_string(i), "4");
  auto on = [&](const std::string& node) {
    return NodeAffinity(json::array(
        {{{"matchFields", {{{"key", "metadata.name"}, {"operator", "In"}, {"values", {node}}}}}}}));
  };
  Case c{
      t,
      {CasePod(t, "ds-1", on(t + "-1")), CasePod(t, "ds-none", on(t + "-none"))},
      {{"ds-1", {t + "-1"}, "", ""}, {"ds-none", {}, "Unschedulable", "plugin(s) [NodeAffinity]"}}};
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

TEST_F(SideBySide, NodeAffinityGtAndLt) {
  const std::string t = "sbs-numeric";
  const char* counts[] = {"2", "4", "8"};
  for (int i = 0; i < 3; ++i)
    CaseNode(t, t + "-" + std::to_string(i), "4", {{"gpu-count", counts[i]}});
  auto expr = [](const char* op, const char* value) {
    return NodeAffinity(json::array(
        {{{"matchExpressions", {{{"key", "gpu-count"}, {"operator", op}, {"values", {value}}}}}}}));
  };
  Case c{
      t,
      {CasePod(t, "gt4", expr("Gt", "4")), CasePod(t, "lt3", expr("Lt", "3")),
       CasePod(t, "gt8", expr("Gt", "8"))},
      {{"gt4", {t + "-2"}, "", ""}, {"lt3", {t + "-0"}, "", ""}, {"gt8", {}, "Unschedulable", ""}}};
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// NoSchedule and NoExecute keep pods that do not tolerate them away; a NoExecute
// toleration with tolerationSeconds still tolerates for placement; PreferNoSchedule
// never filters.
TEST_F(SideBySide, TaintsAndTolerations) {
  const std::string t = "sbs-taints";
  CaseNode(t, t + "-a", "4", {},
           json::array({{{"key", "dedicated"}, {"value", "x"}, {"effect", "NoSchedule"}}}));
  CaseNode(t, t + "-b", "4", {},
           json::array({{{"key", "maint"}, {"value", "y"}, {"effect", "NoExecute"}}}));
  CaseNode(t, t + "-c", "4", {},
           json::array({{{"key", "soft"}, {"value", "z"}, {"effect", "PreferNoSchedule"}}}));
  json tolerate_maint = {{"tolerations",
                          {{{"key", "maint"},
                            {"operator", "Equal"},
                            {"value", "y"},
                            {"effect", "NoExecute"},
                            {"tolerationSeconds", 30}}}}};
  json tolerate_all = {{"tolerations", {{{"operator", "Exists"}}}}};
  Case c{t,
         {CasePod(t, "plain"), CasePod(t, "maint-ok", tolerate_maint),
          CasePod(t, "anything", tolerate_all)},
         {{"plain", {t + "-c"}, "", ""},
          {"maint-ok", {t + "-b", t + "-c"}, "", ""},
          {"anything", {t + "-a", t + "-b", t + "-c"}, "", ""}}};
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// An init container runs after the sidecars started before it, which keep running beside
// the app: on a 4-CPU node, 1 app + 1 sidecar + 3.5 init needs 4.5 CPUs; 2.5 init, 3.5.
TEST_F(SideBySide, SidecarAndInitContainerRequests) {
  const std::string t = "sbs-sidecars";
  CaseNode(t, t + "-0", "4");
  auto with_init = [](const std::string& init_cpu) {
    json sidecar = Container("proxy", "1");
    sidecar["restartPolicy"] = "Always";
    return json{{"initContainers", {sidecar, Container("setup", init_cpu)}}};
  };
  Case c{
      t,
      {CasePod(t, "too-big", with_init("3500m"), "1"), CasePod(t, "fits", with_init("2500m"), "1")},
      {{"too-big", {}, "Unschedulable", "cpu"}, {"fits", {t + "-0"}, "", ""}}};
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// kube-scheduler: a gated pod is never scheduled, shows PodScheduled=False with reason
// SchedulingGated, and is scheduled once its gates are removed.
TEST_F(SideBySide, SchedulingGatesHoldUntilRemoved) {
  const std::string t = "sbs-gates";
  CaseNode(t, t + "-0", "4");
  json gated = {{"schedulingGates", {{{"name", "example.com/wait"}}}}};
  Case c{t, {CasePod(t, "gated", gated)}, {{"gated", {}, "SchedulingGated", ""}}};
  for (const auto& [scheduler, ns] :
       {std::pair{std::string(kReference), t + "-kube"}, {std::string(kGantry), t + "-gantry"}}) {
    const auto pods = Schedule(c, scheduler, ns);
    ExpectAsKubeSchedulerAllows(c, pods, scheduler == kGantry ? "gantry" : "kube-scheduler");
    // Gates may only be removed; then it runs.
    auto r = Env().Call("PATCH", "/api/v1/namespaces/" + ns + "/pods/gated",
                        json{{"spec", {{"schedulingGates", json::array()}}}},
                        "application/merge-patch+json");
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_TRUE(TestEnv::WaitFor([&] { return PodsOf(ns)["gated"]["spec"].contains("nodeName"); },
                                 seconds(30)))
        << scheduler << " did not schedule the pod once its gates were removed";
    DeletePods(ns);
  }
}

// A pod whose ResourceClaim does not exist waits with both, saying which claim.
TEST_F(SideBySide, AMissingResourceClaimKeepsThePodPendingWithAMessage) {
  const std::string t = "sbs-claims";
  CaseNode(t, t + "-0", "4");
  json claims = {{"resourceClaims", {{{"name", "gpu"}, {"resourceClaimName", "no-such-claim"}}}}};
  json pod = CasePod(t, "claimant", claims);
  pod["spec"]["containers"][0]["resources"]["claims"] = {{{"name", "gpu"}}};
  const Case reference{t, {pod}, {{"claimant", {}, "", ""}}};
  const auto theirs = Schedule(reference, kReference, t + "-kube");
  ExpectAsKubeSchedulerAllows(reference, theirs, "kube-scheduler");
  const Case ours{
      t, {pod}, {{"claimant", {}, "Unschedulable", "resourceclaim \"no-such-claim\" not found"}}};
  ExpectAsKubeSchedulerAllows(ours, Schedule(ours, kGantry, t + "-gantry"), "gantry");
}

// NodeName: a pod whose user set spec.nodeName is bound as created; neither scheduler
// touches it, even when the node does not exist, and what it asks for counts on its node.
TEST_F(SideBySide, NodeNameSetByTheUser) {
  const std::string t = "sbs-nodename";
  CaseNode(t, t + "-0", "4");
  CaseNode(t, t + "-1", "4");
  Case c{.name = t,
         .pods = {BoundTo(CasePod(t, "pinned", json::object(), "3500m"), t + "-0"),
                  BoundTo(CasePod(t, "nowhere"), t + "-gone"),
                  CasePod(t, "next", json::object(), "1")},
         .expect = {{"pinned", {t + "-0"}, "", ""},
                    {"nowhere", {t + "-gone"}, "", ""},
                    {"next", {t + "-1"}, "", ""}},
         .one_by_one = true};
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// NodeUnschedulable: a cordoned node takes only pods that tolerate the taint Kubernetes
// gives such nodes (node.kubernetes.io/unschedulable:NoSchedule), whatever the node's
// taints say.
TEST_F(SideBySide, CordonedNode) {
  const std::string t = "sbs-cordon";
  CaseNode(t, t + "-0", "4");
  auto r = Env().Call("PATCH", "/api/v1/nodes/" + t + "-0",
                      json{{"spec", {{"unschedulable", true}}}}, "application/merge-patch+json");
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto tolerating = [](json toleration) { return json{{"tolerations", {toleration}}}; };
  const std::string cordon = "node.kubernetes.io/unschedulable";
  Case c{t,
         {CasePod(t, "plain"),
          CasePod(t, "tolerates",
                  tolerating({{"key", cordon}, {"operator", "Exists"}, {"effect", "NoSchedule"}})),
          CasePod(t, "tolerates-any-effect", tolerating({{"key", cordon}, {"operator", "Exists"}})),
          CasePod(t, "wrong-effect",
                  tolerating({{"key", cordon}, {"operator", "Exists"}, {"effect", "NoExecute"}}))},
         {{"plain", {}, "Unschedulable", "node(s) were unschedulable"},
          {"tolerates", {t + "-0"}, "", ""},
          {"tolerates-any-effect", {t + "-0"}, "", ""},
          {"wrong-effect", {}, "Unschedulable", "node(s) were unschedulable"}}};
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

json HostPort(int port, const std::string& protocol = "TCP", const std::string& host_ip = "") {
  json p = {{"containerPort", port}, {"hostPort", port}, {"protocol", protocol}};
  if (!host_ip.empty()) p["hostIP"] = host_ip;
  return p;
}

json WithPorts(json pod, json ports) {
  pod["spec"]["containers"][0]["ports"] = std::move(ports);
  return pod;
}

// NodePorts: a host port is taken per protocol and host IP, 0.0.0.0 (no hostIP) covering
// every IP: running pods hold 8080/TCP on any IP and 9090/TCP on 10.0.0.1.
TEST_F(SideBySide, HostPorts) {
  const std::string t = "sbs-ports";
  CaseNode(t, t + "-0", "4");
  auto pod = [&](const std::string& name, json port) {
    return WithPorts(CasePod(t, name), json::array({port}));
  };
  const std::string taken = "node(s) didn't have free ports for the requested pod ports";
  Case c{t,
         {BoundTo(pod("holds-8080", HostPort(8080)), t + "-0"),
          BoundTo(pod("holds-9090-on-ip", HostPort(9090, "TCP", "10.0.0.1")), t + "-0"),
          pod("same-port-tcp", HostPort(8080)), pod("same-port-udp", HostPort(8080, "UDP")),
          pod("specific-ip-under-any", HostPort(8080, "TCP", "127.0.0.1")),
          pod("other-specific-ip", HostPort(9090, "TCP", "10.0.0.2")),
          pod("any-ip-over-specific", HostPort(9090)), pod("other-port", HostPort(8081)),
          pod("twin-a", HostPort(7070)), pod("twin-b", HostPort(7070))},
         {{"same-port-tcp", {}, "Unschedulable", taken},
          {"same-port-udp", {t + "-0"}, "", ""},
          {"specific-ip-under-any", {}, "Unschedulable", taken},
          {"other-specific-ip", {t + "-0"}, "", ""},
          {"any-ip-over-specific", {}, "Unschedulable", taken},
          {"other-port", {t + "-0"}, "", ""},
          {"twin-a", {t + "-0"}, "Unschedulable", taken, /*may_pend=*/true},
          {"twin-b", {t + "-0"}, "Unschedulable", taken, /*may_pend=*/true}}};
  // Two new pods that want the same port, created together (one cycle for gantry): one runs.
  c.check = Bound({"twin-a", "twin-b"}, 1, /*apart=*/false);
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// NodeResourcesFit counts pods against allocatable "pods": a running pod and two of three
// new ones, created together, fill a node that allows three.
TEST_F(SideBySide, PodCountLimit) {
  const std::string t = "sbs-podcount";
  CaseNode(t, t + "-0", "4");
  NodeResources(t + "-0", {{"pods", "3"}});
  Case c{.name = t, .pods = {BoundTo(CasePod(t, "running"), t + "-0")}};
  for (const char* name : {"new-a", "new-b", "new-c"}) {
    c.pods.push_back(CasePod(t, name));
    c.expect.push_back({name, {t + "-0"}, "Unschedulable", "Too many pods", /*may_pend=*/true});
  }
  c.check = Bound({"new-a", "new-b", "new-c"}, 1, /*apart=*/false);
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// A pod that has ended (Succeeded) no longer holds what it asked for; one being deleted
// (deletionTimestamp set, its kubelet not yet done) still does.
TEST_F(SideBySide, FinishedAndTerminatingPods) {
  const std::string t = "sbs-ended";
  CaseNode(t, t + "-0", "4");
  CaseNode(t, t + "-1", "4");
  auto on = [&](const std::string& name, const std::string& node) {
    return CasePod(t, name,
                   NodeAffinity(json::array(
                       {{{"matchExpressions", {Expr(kHostname, "In", {t + "-" + node})}}}})),
                   "1");
  };
  Case c{.name = t,
         .pods = {BoundTo(CasePod(t, "finished", json::object(), "3500m"), t + "-0"),
                  BoundTo(CasePod(t, "terminating", json::object(), "3500m"), t + "-1"),
                  on("after-finished", "0"), on("after-terminating", "1")},
         .expect = {{"after-finished", {t + "-0"}, "", ""},
                    {"after-terminating", {}, "Unschedulable", "Insufficient cpu"}},
         .one_by_one = true,
         .after_create = [](const std::string& ns, const std::string& pod) {
           const std::string path = "/api/v1/namespaces/" + ns + "/pods/" + pod;
           if (pod == "finished") {
             auto r =
                 Env().Call("PATCH", path + "/status", json{{"status", {{"phase", "Succeeded"}}}},
                            "application/merge-patch+json");
             EXPECT_TRUE(r.ok()) << r.status().message();
           } else if (pod == "terminating") {
             auto r = Env().Call("DELETE", path, json{{"gracePeriodSeconds", 600}});
             EXPECT_TRUE(r.ok()) << r.status().message();
           }
         }};
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// NodeResourcesFit on ephemeral-storage, hugepages and an extended resource: a node that
// does not list one has none of it.
TEST_F(SideBySide, EphemeralStorageHugepagesAndExtendedResources) {
  const std::string t = "sbs-resources";
  CaseNode(t, t + "-rich", "4");
  NodeResources(
      t + "-rich",
      {{"ephemeral-storage", "10Gi"}, {"hugepages-2Mi", "256Mi"}, {"example.com/widget", "2"}});
  CaseNode(t, t + "-plain", "4");
  auto pod = [&](const std::string& name, const std::string& resource, const std::string& amount) {
    // Hugepages and extended resources cannot be overcommitted: limits equal requests.
    const bool limits = resource != "ephemeral-storage";
    return Requests(CasePod(t, name),
                    limits ? json{{"cpu", "100m"}, {"memory", "64Mi"}, {resource, amount}}
                           : json{{resource, amount}},
                    limits);
  };
  Case c{
      t,
      {pod("scratch", "ephemeral-storage", "5Gi"),
       pod("scratch-too-big", "ephemeral-storage", "20Gi"), pod("huge", "hugepages-2Mi", "128Mi"),
       pod("huge-too-big", "hugepages-2Mi", "512Mi"), pod("widgets", "example.com/widget", "2"),
       pod("too-many-widgets", "example.com/widget", "3")},
      {{"scratch", {t + "-rich"}, "", ""},
       {"scratch-too-big", {}, "Unschedulable", "Insufficient ephemeral-storage"},
       {"huge", {t + "-rich"}, "", ""},
       {"huge-too-big", {}, "Unschedulable", "Insufficient hugepages-2Mi"},
       {"widgets", {t + "-rich"}, "", ""},
       {"too-many-widgets", {}, "Unschedulable", "Insufficient example.com/widget"}}};
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// An init container larger than the app containers sets what the pod asks for, while it
// runs and after: 3.5 CPUs of init leave room for no 1-CPU pod on a 4-CPU node.
TEST_F(SideBySide, InitContainerLargerThanTheContainers) {
  const std::string t = "sbs-init";
  CaseNode(t, t + "-0", "4");
  auto with_init = [](const std::string& cpu) {
    return json{{"initContainers", {Container("setup", cpu)}}};
  };
  Case c{.name = t,
         .pods = {CasePod(t, "init-too-big", with_init("5")),
                  CasePod(t, "init-fits", with_init("3500m")),
                  CasePod(t, "after", json::object(), "1")},
         .expect = {{"init-too-big", {}, "Unschedulable", "Insufficient cpu"},
                    {"init-fits", {t + "-0"}, "", ""},
                    {"after", {}, "Unschedulable", "Insufficient cpu"}},
         .one_by_one = true};
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// spec.overhead, which the RuntimeClass admission plugin copies from the pod's
// RuntimeClass, counts with the containers: 1 CPU of overhead on 3.5 does not fit 4.
TEST_F(SideBySide, RuntimeClassOverhead) {
  const std::string t = "sbs-overhead";
  CaseNode(t, t + "-0", "4");
  auto made = Env().Call("POST", "/apis/node.k8s.io/v1/runtimeclasses",
                         {{"apiVersion", "node.k8s.io/v1"},
                          {"kind", "RuntimeClass"},
                          {"metadata", {{"name", t}}},
                          {"handler", "runc"},
                          {"overhead", {{"podFixed", {{"cpu", "1"}, {"memory", "64Mi"}}}}}});
  ASSERT_TRUE(made.ok()) << made.status().message();
  auto with_runtime = [&](const std::string& name, const std::string& cpu) {
    return CasePod(t, name, {{"runtimeClassName", t}}, cpu);
  };
  Case c{.name = t,
         .pods = {with_runtime("overhead-too-big", "3500m"), with_runtime("overhead-fits", "2500m"),
                  CasePod(t, "after", json::object(), "1")},
         .expect = {{"overhead-too-big", {}, "Unschedulable", "Insufficient cpu"},
                    {"overhead-fits", {t + "-0"}, "", ""},
                    {"after", {}, "Unschedulable", "Insufficient cpu"}},
         .one_by_one = true,
         .check = [](const std::map<std::string, json>& pods) -> std::string {
           auto it = pods.find("overhead-fits");
           if (it == pods.end() || !it->second["spec"].contains("overhead"))
             return "the API server did not set spec.overhead from the RuntimeClass";
           return "";
         }};
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// Pod-level resources (spec.resources, PodLevelResources) replace the containers' sum:
// 4.5 CPUs for the pod do not fit 4, though its container asks for 0.1.
TEST_F(SideBySide, PodLevelResources) {
  const std::string t = "sbs-podlevel";
  CaseNode(t, t + "-0", "4");
  auto pod_level = [&](const std::string& name, const std::string& cpu) {
    return CasePod(t, name, {{"resources", {{"requests", {{"cpu", cpu}, {"memory", "128Mi"}}}}}});
  };
  // An API server with the feature gate off drops the field: then there is nothing to test.
  json probe = pod_level("probe", "1");
  probe["apiVersion"] = "v1";
  probe["kind"] = "Pod";
  probe["metadata"]["namespace"] = "default";
  auto dry = Env().Call("POST", "/api/v1/namespaces/default/pods?dryRun=All", probe);
  if (!dry.ok() || !(*dry)["spec"].contains("resources")) {
    GTEST_SKIP() << "the API server does not keep spec.resources (PodLevelResources off): "
                 << (dry.ok() ? std::string("dropped") : dry.status().message());
  }
  Case c{.name = t,
         .pods = {pod_level("pod-level-too-big", "4500m"), pod_level("pod-level-fits", "3"),
                  CasePod(t, "after", json::object(), "1500m")},
         .expect = {{"pod-level-too-big", {}, "Unschedulable", "Insufficient cpu"},
                    {"pod-level-fits", {t + "-0"}, "", ""},
                    {"after", {}, "Unschedulable", "Insufficient cpu"}},
         .one_by_one = true};
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// Required node affinity: terms are ORed, a term's expressions ANDed; NotIn and
// DoesNotExist match a node without the label.
TEST_F(SideBySide, NodeAffinityOperatorsAndTerms) {
  const std::string t = "sbs-operators";
  CaseNode(t, t + "-gold", "4", {{"tier", "gold"}, {"disk", "ssd"}});
  CaseNode(t, t + "-silver", "4", {{"tier", "silver"}});
  CaseNode(t, t + "-bronze", "4", {{"tier", "bronze"}, {"gpu", "true"}});
  CaseNode(t, t + "-bare", "4");
  auto terms = [&](const std::string& name, std::vector<json> expressions_per_term) {
    json list = json::array();
    for (json& e : expressions_per_term) list.push_back({{"matchExpressions", e}});
    return CasePod(t, name, NodeAffinity(list));
  };
  Case c{t,
         {terms("ored", {{Expr("tier", "In", {"gold"}), Expr("disk", "Exists")},
                         {Expr("gpu", "Exists"), Expr("tier", "NotIn", {"gold"})}}),
          terms("notin", {{Expr("tier", "NotIn", {"gold", "silver"})}}),
          terms("doesnotexist", {{Expr("tier", "DoesNotExist")}}),
          terms("tier-without-disk", {{Expr("tier", "Exists"), Expr("disk", "DoesNotExist")}}),
          terms("none", {{Expr("tier", "In", {"platinum"})}, {Expr("gpu", "In", {"false"})}})},
         {{"ored", {t + "-gold", t + "-bronze"}, "", ""},
          {"notin", {t + "-bronze", t + "-bare"}, "", ""},
          {"doesnotexist", {t + "-bare"}, "", ""},
          {"tier-without-disk", {t + "-silver", t + "-bronze"}, "", ""},
          {"none", {}, "Unschedulable", "node affinity"}}};
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

}  // namespace
}  // namespace gantry::testing

// A pod's rules about other pods, its gates, its unsupported fields and its requests,
// read from the API's JSON. Expected values come from the Kubernetes API reference and
// documentation (pod affinity, topology spread constraints, scheduling gates, sidecar
// containers, pod-level resources), not from the decoder.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "k8s/objects.h"
#include "tests/unit/test_util.h"

namespace gantry::k8s {
namespace {

using json = nlohmann::json;
using Op = SelectorRequirement::Op;
using Pairs = std::vector<std::pair<std::string, std::string>>;

// A pod ml/p labelled app=web, pod-template-hash=abc, whose spec is given as JSON text.
json Pod(const std::string& spec) {
  return json::parse(
      R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml",
          "uid": "u-1", "labels": {"app": "web", "pod-template-hash": "abc"}}, "spec": )" +
      spec + "}");
}

std::string ProblemOf(const json& pod) {
  std::string problem;
  EXPECT_TRUE(DecodePod(pod, &problem).ok());
  return problem;
}

TEST(PodRules, NamespaceAndLabelsArePartOfTheSpec) {
  const PodInfo p = Must(ParsePod(Pod(R"({"containers": []})")));
  EXPECT_EQ(p.spec.namespace_, "ml");
  EXPECT_EQ(p.spec.labels, Labels(Pairs{{"app", "web"}, {"pod-template-hash", "abc"}}));
  EXPECT_FALSE(p.spec.has_pod_constraints());
}

// The documentation's example (assign-pod-node): with-pod-affinity.
TEST(PodRules, PodAffinityAndAntiAffinityTerms) {
  const PodInfo p = Must(ParsePod(Pod(R"({"containers": [], "affinity": {
      "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchExpressions": [
          {"key": "security", "operator": "In", "values": ["S1"]}]},
        "topologyKey": "topology.kubernetes.io/zone"}]},
      "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{
        "weight": 100, "podAffinityTerm": {
          "labelSelector": {"matchLabels": {"security": "S2"}},
          "namespaces": ["other"], "namespaceSelector": {"matchLabels": {"team": "a"}},
          "topologyKey": "topology.kubernetes.io/zone"}}]}}})")));
  const PodAffinity& a = p.spec.pod_affinity;
  ASSERT_EQ(a.required_affinity.size(), 1u);
  ASSERT_TRUE(a.required_affinity[0].selector.has_value());
  EXPECT_EQ(a.required_affinity[0].selector->match_expressions,
            (std::vector<SelectorRequirement>{{"security", Op::kIn, {"S1"}}}));
  EXPECT_EQ(a.required_affinity[0].topology_key, "topology.kubernetes.io/zone");
  EXPECT_TRUE(a.required_affinity[0].namespaces.empty());
  EXPECT_FALSE(a.required_affinity[0].namespace_selector.has_value());
  ASSERT_EQ(a.preferred_anti_affinity.size(), 1u);
  const PodAffinityTerm& t = a.preferred_anti_affinity[0];
  EXPECT_EQ(t.weight, 100);
  EXPECT_EQ(t.namespaces, std::vector<std::string>{"other"});
  ASSERT_TRUE(t.namespace_selector.has_value());
  EXPECT_TRUE(t.CoversNamespace("x", Labels(Pairs{{"team", "a"}}), "ml"));
  EXPECT_TRUE(a.preferred_affinity.empty());
  EXPECT_TRUE(a.required_anti_affinity.empty());
  EXPECT_TRUE(p.spec.placements_can_unblock());
}

// matchLabelKeys / mismatchLabelKeys (KEP-3633): key In / NotIn the pod's own value;
// keys the pod does not have are ignored; merged once.
TEST(PodRules, MatchLabelKeysMergeThePodsValuesIntoTheSelector) {
  const PodInfo p = Must(ParsePod(Pod(R"({"containers": [], "affinity": {"podAntiAffinity": {
      "requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchLabels": {"app": "web"}, "matchExpressions": [
          {"key": "pod-template-hash", "operator": "In", "values": ["abc"]}]},
        "matchLabelKeys": ["pod-template-hash", "absent"], "mismatchLabelKeys": ["app"],
        "topologyKey": "kubernetes.io/hostname"}]}}})")));
  const LabelSelector& s = *p.spec.pod_affinity.required_anti_affinity[0].selector;
  EXPECT_EQ(s.match_expressions,
            (std::vector<SelectorRequirement>{{"pod-template-hash", Op::kIn, {"abc"}},
                                              {"app", Op::kNotIn, {"web"}}}));
  const std::string problem = ProblemOf(Pod(R"({"containers": [], "affinity": {"podAffinity": {
      "requiredDuringSchedulingIgnoredDuringExecution": [{
        "matchLabelKeys": ["app"], "topologyKey": "kubernetes.io/hostname"}]}}})"));
  EXPECT_NE(problem.find("requiredDuringSchedulingIgnoredDuringExecution[0].matchLabelKeys: may "
                         "only be set together with labelSelector"),
            std::string::npos)
      << problem;
}

TEST(PodRules, BadAffinityTermsNameTheField) {
  struct {
    const char* term;
    const char* error;
  } cases[] = {
      {R"({"labelSelector": {}})", "[0].topologyKey: must not be empty"},
      {R"({"labelSelector": {"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]},
           "topologyKey": "k"})",
       "labelSelector.matchExpressions[0].operator: \"Gt\" is not supported (In, NotIn, Exists, "
       "DoesNotExist)"},
      {R"({"labelSelector": {"matchLabels": {"a": 1}}, "topologyKey": "k"})",
       "labelSelector.matchLabels.a: expected a string, got 1"},
      {R"({"labelSelector": "app=web", "topologyKey": "k"})",
       "labelSelector: expected a label selector"},
      {R"({"namespaces": "ml", "topologyKey": "k"})", "[0].namespaces: expected a list"},
  };
  for (const auto& c : cases) {
    const std::string problem =
        ProblemOf(Pod(std::string(R"({"containers": [], "affinity": {"podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [)") +
                      c.term + "]}}}"));
    EXPECT_NE(problem.find(std::string("pod ml/p: spec.affinity.podAffinity."
                                       "requiredDuringSchedulingIgnoredDuringExecution")),
              std::string::npos)
        << problem;
    EXPECT_NE(problem.find(c.error), std::string::npos) << problem;
  }
}

// The documentation's example (topology-spread-constraints): one constraint, zone,
// maxSkew 1, DoNotSchedule; with matchLabelKeys.
TEST(PodRules, TopologySpreadConstraints) {
  std::string problem;
  const PodInfo p = Must(DecodePod(Pod(R"({"containers": [], "topologySpreadConstraints": [
      {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
       "labelSelector": {"matchLabels": {"app": "web"}}, "matchLabelKeys": ["pod-template-hash"],
       "minDomains": 3, "nodeTaintsPolicy": "Honor"},
      {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": "ScheduleAnyway",
       "nodeAffinityPolicy": "Ignore"}]})"),
                                   &problem));
  EXPECT_EQ(problem, "") << "spreading is enforced (podtopologyspread): the pod may be placed";
  ASSERT_EQ(p.spec.spread.size(), 2u);
  const TopologySpreadConstraint& zone = p.spec.spread[0];
  EXPECT_EQ(zone.max_skew, 1);
  EXPECT_EQ(zone.topology_key, "zone");
  EXPECT_TRUE(zone.filters());
  EXPECT_EQ(zone.min_domains, 3);
  EXPECT_TRUE(zone.honor_node_affinity);
  EXPECT_TRUE(zone.honor_node_taints);
  ASSERT_TRUE(zone.selector.has_value());
  EXPECT_EQ(zone.selector->match_expressions,
            (std::vector<SelectorRequirement>{{"pod-template-hash", Op::kIn, {"abc"}}}));
  const TopologySpreadConstraint& node = p.spec.spread[1];
  EXPECT_FALSE(node.filters());
  EXPECT_FALSE(node.honor_node_affinity);
  EXPECT_FALSE(node.honor_node_taints);
  EXPECT_FALSE(node.selector.has_value()) << "no selector: counts no pod";
}

TEST(PodRules, BadSpreadConstraintsNameTheField) {
  struct {
    const char* constraint;
    const char* error;
  } cases[] = {
      {R"({"maxSkew": 0, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule"})",
       "[0].maxSkew: must be an integer greater than zero, got 0"},
      {R"({"maxSkew": -1, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule"})",
       "[0].maxSkew: must be an integer greater than zero, got -1"},
      {R"({"maxSkew": 1, "whenUnsatisfiable": "DoNotSchedule"})",
       "[0].topologyKey: must not be empty"},
      {R"({"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": "Maybe"})",
       "[0].whenUnsatisfiable: \"Maybe\" is not supported (DoNotSchedule, ScheduleAnyway)"},
      {R"({"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": "ScheduleAnyway", "minDomains": 2})",
       "[0].minDomains: may only be set with whenUnsatisfiable DoNotSchedule"},
      {R"({"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule", "nodeTaintsPolicy": "honor"})",
       "[0].nodeTaintsPolicy: \"honor\" is not supported (Honor, Ignore)"},
  };
  for (const auto& c : cases) {
    const std::string problem = ProblemOf(Pod(
        std::string(R"({"containers": [], "topologySpreadConstraints": [)") + c.constraint + "]}"));
    EXPECT_NE(problem.find(std::string("pod ml/p: spec.topologySpreadConstraints") + c.error),
              std::string::npos)
        << problem;
  }
}

// NodePorts reads spec.containers[*].ports with a hostPort; TCP and 0.0.0.0 by default.
TEST(PodRules, HostPorts) {
  const PodInfo p = Must(ParsePod(Pod(R"({"containers": [
      {"name": "a", "ports": [{"containerPort": 80}, {"containerPort": 80, "hostPort": 8080},
                              {"containerPort": 53, "hostPort": 53, "protocol": "UDP",
                               "hostIP": "10.0.0.1"}]},
      {"name": "b", "ports": [{"containerPort": 9, "hostPort": 9090, "hostIP": "0.0.0.0"}]}]})")));
  EXPECT_EQ(p.spec.host_ports,
            (std::vector<HostPort>{{"TCP", "", 8080}, {"UDP", "10.0.0.1", 53}, {"TCP", "", 9090}}));
  std::string problem = ProblemOf(Pod(
      R"({"containers": [{"name": "a", "ports": [{"containerPort": 1, "hostPort": 70000}]}]})"));
  EXPECT_NE(problem.find("spec.containers[0].ports[0].hostPort: must be a port number in "
                         "1..65535, got 70000"),
            std::string::npos)
      << problem;
  problem = ProblemOf(
      Pod(R"({"containers": [{"name": "a", "ports": [{"hostPort": 1, "protocol": "HTTP"}]}]})"));
  EXPECT_NE(problem.find("ports[0].protocol: \"HTTP\" is not supported (TCP, UDP, SCTP)"),
            std::string::npos)
      << problem;
}

TEST(PodRules, SchedulingGatesAreRead) {
  const PodInfo p = Must(ParsePod(
      Pod(R"({"containers": [], "schedulingGates": [{"name": "kueue.x-k8s.io/admission"}]})")));
  EXPECT_EQ(p.scheduling_gates, std::vector<std::string>{"kueue.x-k8s.io/admission"});
  EXPECT_TRUE(Must(ParsePod(Pod(R"({"containers": []})"))).scheduling_gates.empty());
}

// A field gantry does not implement keeps the pod pending with a message naming it.
TEST(PodRules, UnsupportedFieldsAreNamedNotIgnored) {
  // DRA claims are read (the daemon resolves them), not refused; one that cannot be read
  // is named.
  std::string problem = ProblemOf(
      Pod(R"({"containers": [], "resourceClaims": [{"name": "gpu", "resourceClaimName": "c"}]})"));
  EXPECT_EQ(problem, "");
  problem = ProblemOf(Pod(R"({"containers": [], "resourceClaims": [{"name": "gpu"}]})"));
  EXPECT_NE(problem.find("pod ml/p: spec.resourceClaims[0]: exactly one of resourceClaimName"),
            std::string::npos)
      << problem;
  problem = ProblemOf(Pod(R"({"containers": [], "volumes": [{"name": "cfg", "configMap": {}},
      {"name": "data", "azureDisk": {"diskName": "d", "diskURI": "u", "kind": "Shared"}}]})"));
  EXPECT_NE(problem.find("spec.volumes[1].azureDisk (volume \"data\")"), std::string::npos)
      << problem;
  // Inline CSI volumes count against no node limit: nothing to refuse.
  EXPECT_TRUE(ProblemOf(Pod(R"({"containers": [], "volumes": [
      {"name": "data", "csi": {"driver": "d"}}]})"))
                  .empty());
  // Claims are not refused: the daemon resolves them (VolumeBinder).
  EXPECT_TRUE(ProblemOf(Pod(R"({"containers": [], "volumes": [
      {"name": "data", "persistentVolumeClaim": {"claimName": "d"}}]})"))
                  .empty());
  EXPECT_TRUE(ProblemOf(Pod(R"({"containers": [], "volumes": [{"name": "s", "emptyDir": {}},
      {"name": "t", "secret": {"secretName": "x"}}]})"))
                  .empty());
}

// The documentation's examples (pod-lifecycle init containers, sidecar containers): an
// init container runs alone after the sidecars started before it, which then run beside
// the app containers.
TEST(PodRules, SidecarsRunBesideTheContainersAndEachInitContainerAfterThem) {
  const PodInfo p = Must(ParsePod(Pod(R"({
      "initContainers": [
        {"name": "setup", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}},
        {"name": "proxy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "500m"}}},
        {"name": "migrate", "resources": {"requests": {"cpu": "1800m"}}}],
      "containers": [{"name": "app", "resources": {"requests": {"cpu": "1", "memory": "512Mi"}}}]})")));
  // Moments: setup 2 CPU; migrate 1.8 + proxy 0.5 = 2.3; running: app 1 + proxy 0.5.
  EXPECT_EQ(p.spec.requests.Get(kCpu), 2300);
  EXPECT_EQ(p.spec.requests.Get(kMemory), 1024LL * 1024 * 1024 * kMilliPerUnit);
}

// Pod-level resources (KEP-2837) replace the containers' sum for cpu and memory.
TEST(PodRules, PodLevelResourcesReplaceTheContainersSum) {
  const PodInfo p = Must(ParsePod(Pod(R"({"resources": {"limits": {"cpu": "4"},
      "requests": {"memory": "2Gi"}},
      "containers": [{"name": "a", "resources": {"requests": {"cpu": "1", "memory": "1Gi",
                                                              "example.com/foo": "3"}}}]})")));
  EXPECT_EQ(p.spec.requests.Get(kCpu), 4000) << "the pod-level limit, its request absent";
  EXPECT_EQ(p.spec.requests.Get(kMemory), 2LL * 1024 * 1024 * 1024 * kMilliPerUnit);
  EXPECT_EQ(p.spec.requests.Get(InternResource("example.com/foo")), 3000);
  const std::string problem =
      ProblemOf(Pod(R"({"resources": {"requests": {"nvidia.com/gpu": "1"}}, "containers": []})"));
  EXPECT_NE(problem.find("spec.resources.requests.nvidia.com/gpu: pod-level resources may only "
                         "set cpu, memory and hugepages"),
            std::string::npos)
      << problem;
}

}  // namespace
}  // namespace gantry::k8s

// The values of the pod rules about other pods (src/model/pod_constraints.h), with the
// cases of the Kubernetes documentation where it gives them.
#include "model/pod_constraints.h"

#include <gtest/gtest.h>

#include "model/task_spec.h"

namespace gantry {
namespace {

using Op = SelectorRequirement::Op;
using Pairs = std::vector<std::pair<std::string, std::string>>;

TEST(LabelSelectorTest, MatchLabelsAndExpressionsMustAllHold) {
  LabelSelector s;
  s.match_labels.Set("app", "web");
  s.match_expressions = {{"tier", Op::kIn, {"front", "edge"}}, {"canary", Op::kDoesNotExist, {}}};
  EXPECT_TRUE(s.Matches(Labels(Pairs{{"app", "web"}, {"tier", "front"}})));
  EXPECT_FALSE(s.Matches(Labels(Pairs{{"app", "web"}, {"tier", "back"}})));
  EXPECT_FALSE(s.Matches(Labels(Pairs{{"app", "db"}, {"tier", "front"}})));
  EXPECT_FALSE(s.Matches(Labels(Pairs{{"app", "web"}, {"tier", "edge"}, {"canary", "1"}})));
}

// metav1.LabelSelector: an empty selector matches everything, a null one nothing.
TEST(LabelSelectorTest, EmptyMatchesEverythingAndNoneMatchesNothing) {
  EXPECT_TRUE(Selects(LabelSelector{}, Labels()));
  EXPECT_TRUE(Selects(LabelSelector{}, Labels(Pairs{{"a", "b"}})));
  EXPECT_FALSE(Selects(std::nullopt, Labels()));
  EXPECT_FALSE(Selects(std::nullopt, Labels(Pairs{{"a", "b"}})));
}

// PodAffinityTerm (core/v1): "null or empty namespaces list and null namespaceSelector
// means this pod's namespace"; "an empty selector ({}) matches all namespaces"; the
// term applies to the union of the namespaces listed and those the selector selects.
TEST(PodAffinityTermTest, NamespacesItCovers) {
  const Labels team_a(Pairs{{"team", "a"}});
  PodAffinityTerm own;
  EXPECT_TRUE(own.CoversNamespace("ml", Labels(), "ml"));
  EXPECT_FALSE(own.CoversNamespace("web", Labels(), "ml"));

  PodAffinityTerm listed;
  listed.namespaces = {"web"};
  EXPECT_TRUE(listed.CoversNamespace("web", Labels(), "ml"));
  EXPECT_FALSE(listed.CoversNamespace("ml", Labels(), "ml")) << "a list replaces the own namespace";

  PodAffinityTerm all;
  all.namespace_selector = LabelSelector{};
  EXPECT_TRUE(all.CoversNamespace("anything", Labels(), "ml"));

  PodAffinityTerm union_of;
  union_of.namespaces = {"web"};
  union_of.namespace_selector = LabelSelector{Labels(Pairs{{"team", "a"}}), {}};
  EXPECT_TRUE(union_of.CoversNamespace("web", Labels(), "ml"));
  EXPECT_TRUE(union_of.CoversNamespace("x", team_a, "ml"));
  EXPECT_FALSE(union_of.CoversNamespace("y", Labels(Pairs{{"team", "b"}}), "ml"));
}

TEST(PodAffinityTermTest, MatchesPodInACoveredNamespaceWithMatchingLabels) {
  PodAffinityTerm t;
  t.selector = LabelSelector{Labels(Pairs{{"app", "cache"}}), {}};
  t.topology_key = "kubernetes.io/hostname";
  EXPECT_TRUE(t.MatchesPod("ml", Labels(), Labels(Pairs{{"app", "cache"}}), "ml"));
  EXPECT_FALSE(t.MatchesPod("web", Labels(), Labels(Pairs{{"app", "cache"}}), "ml"));
  EXPECT_FALSE(t.MatchesPod("ml", Labels(), Labels(Pairs{{"app", "web"}}), "ml"));
  PodAffinityTerm no_selector;
  EXPECT_FALSE(no_selector.MatchesPod("ml", Labels(), Labels(), "ml"));
}

// NodePorts (kube-scheduler's HostPortInfo): 0.0.0.0 or no host IP conflicts with every
// IP; otherwise the same port and protocol on the same IP.
TEST(HostPortTest, Conflicts) {
  const HostPort any{"TCP", "", 8080};
  const HostPort ip1{"TCP", "10.0.0.1", 8080};
  const HostPort ip2{"TCP", "10.0.0.2", 8080};
  const HostPort udp{"UDP", "", 8080};
  const HostPort other{"TCP", "", 9090};
  EXPECT_TRUE(any.ConflictsWith(ip1));
  EXPECT_TRUE(ip1.ConflictsWith(any));
  EXPECT_TRUE(ip1.ConflictsWith(ip1));
  EXPECT_FALSE(ip1.ConflictsWith(ip2));
  EXPECT_FALSE(any.ConflictsWith(udp));
  EXPECT_FALSE(any.ConflictsWith(other));
}

TEST(TaskSpecTest, WhichPodRulesPlacementsCanUnblock) {
  TaskSpec plain;
  EXPECT_FALSE(plain.has_pod_constraints());
  EXPECT_FALSE(plain.placements_can_unblock());

  TaskSpec anti;
  anti.pod_affinity.required_anti_affinity.push_back(PodAffinityTerm{});
  EXPECT_TRUE(anti.has_pod_constraints());
  EXPECT_FALSE(anti.placements_can_unblock()) << "anti-affinity only ever blocks more";

  TaskSpec affine;
  affine.pod_affinity.required_affinity.push_back(PodAffinityTerm{});
  EXPECT_TRUE(affine.placements_can_unblock());

  TaskSpec soft_spread;
  soft_spread.spread.push_back(TopologySpreadConstraint{});
  soft_spread.spread[0].when_unsatisfiable =
      TopologySpreadConstraint::WhenUnsatisfiable::kScheduleAnyway;
  EXPECT_FALSE(soft_spread.placements_can_unblock());
  TaskSpec hard_spread = soft_spread;
  hard_spread.spread.push_back(TopologySpreadConstraint{});
  EXPECT_TRUE(hard_spread.placements_can_unblock());

  TaskSpec ports;
  ports.host_ports.push_back(HostPort{"TCP", "", 80});
  EXPECT_TRUE(ports.has_pod_constraints());
  EXPECT_FALSE(ports.placements_can_unblock());
}

TEST(TaskSpecTest, PodIdentityIsPartOfTheSpec) {
  TaskSpec a;
  TaskSpec b = a;
  b.labels.Set("app", "web");
  EXPECT_NE(a, b);
  TaskSpec c = a;
  c.namespace_ = "ml";
  EXPECT_NE(a, c);
  EXPECT_NE(TaskSpecHash()(a), TaskSpecHash()(c));
}

}  // namespace
}  // namespace gantry

// Side by side with kube-scheduler (side_by_side.h): the rules between pods,
// InterPodAffinity (required and preferred affinity and anti-affinity, the symmetric rule,
// namespaces, matchLabelKeys) and PodTopologySpread.
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

class SideBySidePodRules : public SideBySide {};

// Required anti-affinity on the hostname: replicas created together go one per node, in
// the same scheduling cycle for gantry; the replica beyond the nodes waits.
TEST_F(SideBySidePodRules, PodAntiAffinityOnePerNode) {
  const std::string t = "sbs-antiaffinity";
  std::set<std::string> nodes;
  for (int i = 0; i < 3; ++i) {
    CaseNode(t, t + "-" + std::to_string(i), "4");
    nodes.insert(t + "-" + std::to_string(i));
  }
  const json apart = PodTerm("podAntiAffinity", {{"labelSelector", MatchLabels("app", "web")},
                                                 {"topologyKey", kHostname}});
  Case c{.name = t};
  std::vector<std::string> replicas;
  for (int i = 0; i < 4; ++i) {
    const std::string name = "web-" + std::to_string(i);
    replicas.push_back(name);
    c.pods.push_back(Labelled(CasePod(t, name, apart), {{"app", "web"}}));
    c.expect.push_back({name, nodes, "Unschedulable", "anti-affinity", /*may_pend=*/true});
  }
  c.check = Bound(replicas, 1, /*apart=*/true);
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// Required pod affinity: a pod goes to the zone of a running pod it names; no such pod, it
// waits, unless it matches its own term and is the first of its kind (then any node
// with the zone label, and the next one follows it).
TEST_F(SideBySidePodRules, PodAffinityFollowsARunningPodsZone) {
  const std::string t = "sbs-affinity";
  CaseNode(t, t + "-a", "4", {{kZone, t + "-za"}});
  CaseNode(t, t + "-b1", "4", {{kZone, t + "-zb"}});
  CaseNode(t, t + "-b2", "4", {{kZone, t + "-zb"}});
  CaseNode(t, t + "-unzoned", "4");
  auto near = [&](const std::string& app) {
    return PodTerm("podAffinity",
                   {{"labelSelector", MatchLabels("app", app)}, {"topologyKey", kZone}});
  };
  const std::set<std::string> zoned = {t + "-a", t + "-b1", t + "-b2"};
  const std::map<std::string, std::string> zone_of = {
      {t + "-a", "za"}, {t + "-b1", "zb"}, {t + "-b2", "zb"}};
  Case c{.name = t,
         .pods = {Labelled(BoundTo(CasePod(t, "db"), t + "-b1"), {{"app", "db"}}),
                  CasePod(t, "follows-db", near("db")), CasePod(t, "no-such-peer", near("nothing")),
                  Labelled(CasePod(t, "cache-1", near("cache")), {{"app", "cache"}}),
                  Labelled(CasePod(t, "cache-2", near("cache")), {{"app", "cache"}})},
         .expect = {{"follows-db", {t + "-b1", t + "-b2"}, "", ""},
                    {"no-such-peer", {}, "Unschedulable", "didn't match pod affinity rules"},
                    {"cache-1", zoned, "", ""},
                    {"cache-2", zoned, "", ""}},
         .one_by_one = true,
         .check = [zone_of](const std::map<std::string, json>& pods) -> std::string {
           auto zone = [&](const std::string& pod) {
             auto it = pods.find(pod);
             auto z = it == pods.end() ? zone_of.end() : zone_of.find(NodeOf(it->second));
             return z == zone_of.end() ? std::string("none") : z->second;
           };
           if (zone("cache-1") != zone("cache-2"))
             return "cache-1 in zone " + zone("cache-1") + ", cache-2 in " + zone("cache-2");
           return "";
         }};
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// The symmetric rule: a running pod's required anti-affinity keeps the pods it names out
// of its zone, though they ask for nothing themselves.
TEST_F(SideBySidePodRules, RunningPodsAntiAffinityKeepsOthersAway) {
  const std::string t = "sbs-existing-anti";
  CaseNode(t, t + "-0", "4", {{kZone, t + "-z1"}});
  CaseNode(t, t + "-1", "4", {{kZone, t + "-z1"}});
  CaseNode(t, t + "-2", "4", {{kZone, t + "-z2"}});
  json guard =
      CasePod(t, "guard",
              PodTerm("podAntiAffinity",
                      {{"labelSelector", MatchLabels("app", "intruder")}, {"topologyKey", kZone}}));
  json pinned_to_1 =
      NodeAffinity(json::array({{{"matchExpressions", {Expr(kHostname, "In", {t + "-1"})}}}}));
  Case c{t,
         {Labelled(BoundTo(guard, t + "-0"), {{"app", "guard"}}),
          Labelled(CasePod(t, "intruder"), {{"app", "intruder"}}),
          Labelled(CasePod(t, "intruder-in-z1", pinned_to_1), {{"app", "intruder"}}),
          Labelled(CasePod(t, "friend"), {{"app", "friend"}})},
         {{"intruder", {t + "-2"}, "", ""},
          {"intruder-in-z1",
           {},
           "Unschedulable",
           "node(s) didn't satisfy existing pods anti-affinity rules"},
          {"friend", {t + "-0", t + "-1", t + "-2"}, "", ""}}};
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// A term looks at its pod's own namespace, at those it names (namespaces), at those its
// namespaceSelector selects (the union of both when both are given; {} is every
// namespace): peers run in namespace "{ns}-ml" (team=ml, zone 1) and "{ns}-web"
// (team=web, zone 2).
TEST_F(SideBySidePodRules, PodAffinityNamespaces) {
  const std::string t = "sbs-namespaces";
  for (int i = 1; i <= 3; ++i) {
    CaseNode(t, t + "-" + std::to_string(i), "4", {{kZone, t + "-z" + std::to_string(i)}});
  }
  auto peer = [&](const std::string& ns_suffix, const std::string& node) {
    json p = Labelled(BoundTo(CasePod(t, "peer"), node), {{"app", "peer"}});
    p["metadata"]["namespace"] = "{ns}-" + ns_suffix;
    return p;
  };
  auto term = [&](const std::string& kind, const std::string& name, json where) {
    json term = {{"labelSelector", MatchLabels("app", "peer")}, {"topologyKey", kZone}};
    term.merge_patch(where);
    return Labelled(CasePod(t, name, PodTerm(kind, term)), {{"app", "client"}});
  };
  const std::string a = "podAffinity";
  Case c{.name = t,
         .pods = {peer("ml", t + "-1"), peer("web", t + "-2"),
                  term(a, "own-namespace", json::object()),
                  term(a, "by-selector", {{"namespaceSelector", MatchLabels("team", "ml")}}),
                  term(a, "by-name", {{"namespaces", {"{ns}-web"}}}),
                  term(a, "by-name-or-selector",
                       {{"namespaces", {"{ns}-web"}},
                        {"namespaceSelector", MatchLabels("team", "ml")}}),
                  term(a, "any-namespace", {{"namespaceSelector", json::object()}}),
                  term("podAntiAffinity", "anti-by-selector",
                       {{"namespaceSelector", MatchLabels("team", "ml")}})},
         .expect = {{"own-namespace", {}, "Unschedulable", "didn't match pod affinity rules"},
                    {"by-selector", {t + "-1"}, "", ""},
                    {"by-name", {t + "-2"}, "", ""},
                    {"by-name-or-selector", {t + "-1", t + "-2"}, "", ""},
                    {"any-namespace", {t + "-1", t + "-2"}, "", ""},
                    {"anti-by-selector", {t + "-2", t + "-3"}, "", ""}},
         .namespaces = {{"ml", {{"team", "ml"}}}, {"web", {{"team", "web"}}}}};
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// The symmetric rule within one cycle: a new pod with anti-affinity and a new pod it
// names, created together for one node, do not both run there.
TEST_F(SideBySidePodRules, NewPodsAntiAffinityBothWays) {
  const std::string t = "sbs-anti-both";
  CaseNode(t, t + "-0", "4");
  const json apart = PodTerm("podAntiAffinity", {{"labelSelector", MatchLabels("app", "named")},
                                                 {"topologyKey", kHostname}});
  Case c{t,
         {Labelled(CasePod(t, "guard", apart), {{"app", "guard"}}),
          Labelled(CasePod(t, "named"), {{"app", "named"}})},
         {{"guard", {t + "-0"}, "Unschedulable", "anti-affinity rules", /*may_pend=*/true},
          {"named", {t + "-0"}, "Unschedulable", "anti-affinity rules", /*may_pend=*/true}}};
  c.check = Bound({"guard", "named"}, 1, /*apart=*/false);
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// Two new pods with affinity to their own label, created together: the first goes to
// either zone, the second follows it (in one cycle for gantry).
TEST_F(SideBySidePodRules, PodAffinityFirstOfItsKindTogether) {
  const std::string t = "sbs-affinity-pair";
  CaseNode(t, t + "-a", "4", {{kZone, t + "-za"}});
  CaseNode(t, t + "-b", "4", {{kZone, t + "-zb"}});
  const json near = PodTerm(
      "podAffinity", {{"labelSelector", MatchLabels("app", "pair")}, {"topologyKey", kZone}});
  const std::set<std::string> both = {t + "-a", t + "-b"};
  Case c{.name = t,
         .pods = {Labelled(CasePod(t, "pair-1", near), {{"app", "pair"}}),
                  Labelled(CasePod(t, "pair-2", near), {{"app", "pair"}})},
         .expect = {{"pair-1", both, "", ""}, {"pair-2", both, "", ""}},
         .check = [](const std::map<std::string, json>& pods) -> std::string {
           auto node = [&](const char* pod) {
             auto it = pods.find(pod);
             return it == pods.end() ? std::string() : NodeOf(it->second);
           };
           if (node("pair-1") != node("pair-2"))
             return "pair-1 on " + node("pair-1") + ", pair-2 on " + node("pair-2");
           return "";
         }};
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// A node without the term's topology label is in no domain: a pod's anti-affinity does
// not keep it off such a node, nor does the anti-affinity of a pod running there.
TEST_F(SideBySidePodRules, AntiAffinityOnANodeWithoutTheTopologyLabel) {
  const std::string t = "sbs-anti-unlabelled";
  CaseNode(t, t + "-zoned", "4", {{kZone, t + "-z1"}});
  CaseNode(t, t + "-bare", "4");
  json guard = CasePod(t, "guard",
                       PodTerm("podAntiAffinity", {{"labelSelector", MatchLabels("app", "named")},
                                                   {"topologyKey", kZone}}));
  json on_bare =
      NodeAffinity(json::array({{{"matchExpressions", {Expr(kHostname, "In", {t + "-bare"})}}}}));
  Case c{t,
         {Labelled(BoundTo(CasePod(t, "web"), t + "-zoned"), {{"app", "web"}}),
          Labelled(BoundTo(guard, t + "-bare"), {{"app", "guard"}}),
          CasePod(t, "away-from-web",
                  PodTerm("podAntiAffinity",
                          {{"labelSelector", MatchLabels("app", "web")}, {"topologyKey", kZone}})),
          Labelled(CasePod(t, "named-beside-guard", on_bare), {{"app", "named"}})},
         {{"away-from-web", {t + "-bare"}, "", ""}, {"named-beside-guard", {t + "-bare"}, "", ""}}};
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// matchLabelKeys and mismatchLabelKeys: the API server adds the pod's own values of those
// labels to the term's selector (In, NotIn). Running: app=web version v1 on node 0, v2 on 1.
TEST_F(SideBySidePodRules, PodAffinityMatchLabelKeys) {
  const std::string t = "sbs-labelkeys";
  for (int i = 0; i < 3; ++i) CaseNode(t, t + "-" + std::to_string(i), "4");
  auto client = [&](const std::string& name, const std::string& version, const std::string& kind,
                    const std::string& keys_field) {
    json term = {{"labelSelector", MatchLabels("app", "web")},
                 {"topologyKey", kHostname},
                 {keys_field, {"version"}}};
    return Labelled(CasePod(t, name, PodTerm(kind, term)),
                    {{"app", "client"}, {"version", version}});
  };
  Case c{t,
         {Labelled(BoundTo(CasePod(t, "web-v1"), t + "-0"), {{"app", "web"}, {"version", "v1"}}),
          Labelled(BoundTo(CasePod(t, "web-v2"), t + "-1"), {{"app", "web"}, {"version", "v2"}}),
          client("avoid-own-version", "v2", "podAntiAffinity", "matchLabelKeys"),
          client("join-own-version", "v1", "podAffinity", "matchLabelKeys"),
          client("join-other-version", "v1", "podAffinity", "mismatchLabelKeys")},
         {{"avoid-own-version", {t + "-0", t + "-2"}, "", ""},
          {"join-own-version", {t + "-0"}, "", ""},
          {"join-other-version", {t + "-1"}, "", ""}}};
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// ---------------------------------------------------------------------------------------
// PodTopologySpread, DoNotSchedule (ScheduleAnyway only scores). Pods labelled app=spread,
// one constraint over zones counting them, maxSkew 1 unless the case says otherwise.

json SpreadPod(const std::string& test, const std::string& name, json constraint_extra = {}) {
  json constraint = {{"maxSkew", 1},
                     {"topologyKey", kZone},
                     {"whenUnsatisfiable", "DoNotSchedule"},
                     {"labelSelector", MatchLabels("app", "spread")}};
  if (!constraint_extra.is_null()) constraint.merge_patch(constraint_extra);
  return Labelled(CasePod(test, name, {{"topologySpreadConstraints", {constraint}}}),
                  {{"app", "spread"}});
}

const char* kSkew = "didn't match pod topology spread constraints";

// Four pods created together over a zone of one node and a zone of two: two per zone.
TEST_F(SideBySidePodRules, TopologySpreadOverZones) {
  const std::string t = "sbs-spread";
  CaseNode(t, t + "-a1", "4", {{kZone, t + "-za"}});
  CaseNode(t, t + "-b1", "4", {{kZone, t + "-zb"}});
  CaseNode(t, t + "-b2", "4", {{kZone, t + "-zb"}});
  const std::set<std::string> all = {t + "-a1", t + "-b1", t + "-b2"};
  Case c{.name = t};
  for (int i = 0; i < 4; ++i) {
    const std::string name = "spread-" + std::to_string(i);
    c.pods.push_back(SpreadPod(t, name));
    c.expect.push_back({name, all, "", ""});
  }
  c.check = [t](const std::map<std::string, json>& pods) -> std::string {
    int in_a = 0, in_b = 0;
    for (const auto& [name, pod] : pods) (NodeOf(pod) == t + "-a1" ? in_a : in_b)++;
    if (in_a != 2 || in_b != 2) {
      return std::to_string(in_a) + " pods in zone a, " + std::to_string(in_b) + " in zone b";
    }
    return "";
  };
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// minDomains 3 over two zones: the global minimum counts as 0, so with one pod running in
// zone a the next goes to b, and the one after fits nowhere.
TEST_F(SideBySidePodRules, TopologySpreadMinDomains) {
  const std::string t = "sbs-spread-mindomains";
  CaseNode(t, t + "-a", "4", {{kZone, t + "-za"}});
  CaseNode(t, t + "-b", "4", {{kZone, t + "-zb"}});
  const json three = {{"minDomains", 3}};
  Case c{.name = t,
         .pods = {BoundTo(SpreadPod(t, "running"), t + "-a"), SpreadPod(t, "next", three),
                  SpreadPod(t, "one-more", three)},
         .expect = {{"next", {t + "-b"}, "", ""}, {"one-more", {}, "Unschedulable", kSkew}},
         .one_by_one = true};
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// nodeTaintsPolicy: zone b's only node is tainted. Ignored (the default), zone b counts
// with 0 pods and a second pod in zone a would skew 2; honoured, zone b is not a domain.
TEST_F(SideBySidePodRules, TopologySpreadNodeTaintsPolicy) {
  const std::string t = "sbs-spread-taints";
  CaseNode(t, t + "-a", "4", {{kZone, t + "-za"}});
  CaseNode(t, t + "-b", "4", {{kZone, t + "-zb"}},
           json::array({{{"key", "dedicated"}, {"value", "x"}, {"effect", "NoSchedule"}}}));
  Case c{t,
         {BoundTo(SpreadPod(t, "running"), t + "-a"), SpreadPod(t, "taints-ignored"),
          SpreadPod(t, "taints-honoured", {{"nodeTaintsPolicy", "Honor"}})},
         {{"taints-ignored", {}, "Unschedulable", kSkew}, {"taints-honoured", {t + "-a"}, "", ""}}};
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// A node without the topology label takes no pod of a DoNotSchedule constraint: three
// pods created together go to zones a and b only, two and one.
TEST_F(SideBySidePodRules, TopologySpreadNodeWithoutTheKey) {
  const std::string t = "sbs-spread-nokey";
  CaseNode(t, t + "-a", "4", {{kZone, t + "-za"}});
  CaseNode(t, t + "-b", "4", {{kZone, t + "-zb"}});
  CaseNode(t, t + "-bare", "4");
  Case c{.name = t};
  for (int i = 0; i < 3; ++i) {
    const std::string name = "spread-" + std::to_string(i);
    c.pods.push_back(SpreadPod(t, name));
    c.expect.push_back({name, {t + "-a", t + "-b"}, "", ""});
  }
  c.check = [t](const std::map<std::string, json>& pods) -> std::string {
    int in_a = 0, in_b = 0;
    for (const auto& [name, pod] : pods) (NodeOf(pod) == t + "-a" ? in_a : in_b)++;
    if (std::abs(in_a - in_b) != 1) {
      return std::to_string(in_a) + " pods in zone a, " + std::to_string(in_b) + " in zone b";
    }
    return "";
  };
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// matchLabelKeys: the pod counts only pods with its own value of "version". Two v1 pods
// run in zone a; a v2 pod too large for zone b's node still fits zone a, a v1 one does
// not (zone b counts, with 0, though the pod does not fit there).
TEST_F(SideBySidePodRules, TopologySpreadMatchLabelKeys) {
  const std::string t = "sbs-spread-labelkeys";
  CaseNode(t, t + "-a", "8", {{kZone, t + "-za"}});
  CaseNode(t, t + "-b", "2", {{kZone, t + "-zb"}});
  auto versioned = [&](const std::string& name, const std::string& version,
                       const std::string& cpu) {
    json pod = SpreadPod(t, name, {{"matchLabelKeys", {"version"}}});
    pod["metadata"]["labels"]["version"] = version;
    pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = cpu;
    return pod;
  };
  auto running = [&](const std::string& name) {
    json pod = BoundTo(SpreadPod(t, name), t + "-a");
    pod["metadata"]["labels"]["version"] = "v1";
    return pod;
  };
  Case c{t,
         {running("v1-a"), running("v1-b"), versioned("new-v2", "v2", "3"),
          versioned("new-v1", "v1", "3")},
         {{"new-v2", {t + "-a"}, "", ""}, {"new-v1", {}, "Unschedulable", kSkew}}};
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

// nodeAffinityPolicy: the pods select pool x (zone a) only. Honoured (the default), zone
// b is not a domain; ignored, it counts with 0 pods and zone a would skew 2.
TEST_F(SideBySidePodRules, TopologySpreadNodeAffinityPolicy) {
  const std::string t = "sbs-spread-affinity";
  CaseNode(t, t + "-a", "4", {{kZone, t + "-za"}, {"pool", "x"}});
  CaseNode(t, t + "-b", "4", {{kZone, t + "-zb"}, {"pool", "y"}});
  auto in_pool_x = [&](json pod) {
    pod["spec"]["nodeSelector"]["pool"] = "x";
    return pod;
  };
  Case c{t,
         {BoundTo(SpreadPod(t, "running"), t + "-a"), in_pool_x(SpreadPod(t, "affinity-honoured")),
          in_pool_x(SpreadPod(t, "affinity-ignored", {{"nodeAffinityPolicy", "Ignore"}}))},
         {{"affinity-honoured", {t + "-a"}, "", ""},
          {"affinity-ignored", {}, "Unschedulable", kSkew}}};
  ASSERT_NO_FATAL_FAILURE(RunBoth(c));
}

}  // namespace
}  // namespace gantry::testing

// The podtopologyspread plugin: kube-scheduler's PodTopologySpread, with the cases of the
// Kubernetes documentation (concepts/scheduling-eviction/topology-spread-constraints) and
// of kube-scheduler's filtering and scoring code.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/config.h"
#include "engine/registry.h"
#include "engine/statement.h"
#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

using When = TopologySpreadConstraint::WhenUnsatisfiable;

// A node of the documentation's clusters: labels node=NAME and zone=ZONE (none when
// empty), and the well-known hostname and zone labels.
NodeId AddZoneNode(ClusterState& c, const std::string& name, const std::string& zone,
                   Milli cpu = 8000) {
  Labels labels;
  labels.Set("node", name);
  labels.Set("kubernetes.io/hostname", name);
  if (!zone.empty()) {
    labels.Set("zone", zone);
    labels.Set("topology.kubernetes.io/zone", zone);
  }
  return AddCpuNode(c, name, cpu, labels);
}

LabelSelector FooBar() {
  LabelSelector s;
  s.match_labels.Set("foo", "bar");
  return s;
}

TopologySpreadConstraint Constraint(const std::string& key, int32_t max_skew,
                                    When when = When::kDoNotSchedule) {
  TopologySpreadConstraint c;
  c.topology_key = key;
  c.max_skew = max_skew;
  c.when_unsatisfiable = when;
  c.selector = FooBar();
  return c;
}

// A pod labelled foo=bar in namespace "default" with these constraints.
TaskSpec FooPod(std::vector<TopologySpreadConstraint> spread, Milli cpu = 1000) {
  TaskSpec spec = CpuSpec(cpu);
  spec.namespace_ = "default";
  spec.labels.Set("foo", "bar");
  spec.spread = std::move(spread);
  return spec;
}

// A pod of `spec` running on `node`.
void RunOn(ClusterState& c, QueueId queue, const TaskSpec& spec, NodeId node) {
  const JobId job = AddJob(c, "running-" + std::to_string(c.jobs().size()), queue, spec, 1);
  ASSERT_TRUE(c.Place(c.job(job).tasks[0], node, {}).ok());
}

// The documentation's 4-node cluster with 3 pods foo=bar on node1, node2 and node3.
struct DocCluster {
  ClusterState c;
  QueueId queue = 0;
  std::vector<NodeId> nodes;
  DocCluster() {
    queue = AddQueue(c, "q");
    nodes = {AddZoneNode(c, "node1", "zoneA"), AddZoneNode(c, "node2", "zoneA"),
             AddZoneNode(c, "node3", "zoneB"), AddZoneNode(c, "node4", "zoneB")};
    for (int i = 0; i < 3; ++i) RunOn(c, queue, FooPod({}), nodes[static_cast<size_t>(i)]);
  }
};

SchedulerConfig ConfigWith(PluginConfig spread) {
  SchedulerConfig config = SchedulerConfig::Default();
  for (PluginConfig& p : config.plugins) {
    if (p.name == "podtopologyspread") p = spread;
  }
  return config;
}

// Each node's filter verdict for a pending task of `spec`, in a fresh session.
std::vector<FilterCode> Verdicts(ClusterState& c, const TaskSpec& spec,
                                 const SchedulerConfig& config = SchedulerConfig::Default()) {
  const SpecId id = c.AddSpec(spec);
  const Policy policy = MustCompile(config);
  const Snapshot snapshot(c);
  Session s(snapshot, policy);
  std::vector<FilterCode> out;
  for (NodeId n = 0; n < c.nodes().size(); ++n) out.push_back(s.Filter(c.spec(id), id, n).code);
  return out;
}

constexpr FilterCode kOk = FilterCode::kOk;
constexpr FilterCode kSkew = FilterCode::kSpreadSkew;
constexpr FilterCode kMissing = FilterCode::kSpreadMissingLabel;

// Where one pending pod of `spec` goes in a session of `config`.
std::string PlacedOn(ClusterState& c, QueueId queue, const TaskSpec& spec,
                     const SchedulerConfig& config = SchedulerConfig::Default()) {
  AddJob(c, "incoming", queue, spec, 1);
  Decisions d = RunSession(c, config);
  if (d.binds.size() != 1) return d.pending.empty() ? "?" : "pending: " + d.pending[0].reason;
  return c.node(d.binds[0].node).name;
}

// ---------------------------------------------------------------- filtering

TEST(PodTopologySpreadTest, OneConstraintOnlyZoneB) {
  DocCluster d;
  // [2, 1]: zone A would make [3, 1], skew 2 > 1.
  EXPECT_EQ(Verdicts(d.c, FooPod({Constraint("zone", 1)})),
            (std::vector<FilterCode>{kSkew, kSkew, kOk, kOk}));
  // maxSkew 2 lets zone A in too.
  EXPECT_EQ(Verdicts(d.c, FooPod({Constraint("zone", 2)})),
            (std::vector<FilterCode>{kOk, kOk, kOk, kOk}));
  // By node, maxSkew 1: only node4.
  EXPECT_EQ(Verdicts(d.c, FooPod({Constraint("node", 1)})),
            (std::vector<FilterCode>{kSkew, kSkew, kSkew, kOk}));
  // The session binds it in zone B although binpack prefers the fuller nodes of zone A.
  const std::string on = PlacedOn(d.c, d.queue, FooPod({Constraint("zone", 1)}));
  EXPECT_TRUE(on == "node3" || on == "node4") << on;
}

TEST(PodTopologySpreadTest, TwoConstraintsOnlyNode4) {
  DocCluster d;
  EXPECT_EQ(Verdicts(d.c, FooPod({Constraint("zone", 1), Constraint("node", 1)})),
            (std::vector<FilterCode>{kSkew, kSkew, kSkew, kOk}));
  EXPECT_EQ(PlacedOn(d.c, d.queue, FooPod({Constraint("zone", 1), Constraint("node", 1)})),
            "node4");
}

TEST(PodTopologySpreadTest, ConflictingConstraintsStayPending) {
  // 3 nodes in 2 zones: node1 has 2 pods, node2 1, node3 (zone B) 2.
  ClusterState c;
  const QueueId q = AddQueue(c, "q");
  const NodeId n1 = AddZoneNode(c, "node1", "zoneA");
  const NodeId n2 = AddZoneNode(c, "node2", "zoneA");
  const NodeId n3 = AddZoneNode(c, "node3", "zoneB");
  for (NodeId n : {n1, n1, n2, n3, n3}) RunOn(c, q, FooPod({}), n);
  const TaskSpec pod = FooPod({Constraint("zone", 1), Constraint("node", 1)});
  // Zone says B (3 vs 2), node says node2 (the one with fewest): nothing is both.
  EXPECT_EQ(Verdicts(c, pod), (std::vector<FilterCode>{kSkew, kSkew, kSkew}));
  const std::string on = PlacedOn(c, q, pod);
  EXPECT_TRUE(Contains(on, "3 node(s) didn't match pod topology spread constraints")) << on;
}

TEST(PodTopologySpreadTest, NodesWithoutTheKeyAreBypassed) {
  // The conflicting example with node1 unlabelled: its 2 pods do not count, so zone A
  // (node2: 1) and zone B (node3: 2) make [1, 2] and the pod goes to zone A; node1 itself
  // is never a place for it.
  ClusterState c;
  const QueueId q = AddQueue(c, "q");
  const NodeId n1 = AddZoneNode(c, "node1", "");
  const NodeId n2 = AddZoneNode(c, "node2", "zoneA");
  const NodeId n3 = AddZoneNode(c, "node3", "zoneB");
  for (NodeId n : {n1, n1, n2, n3, n3}) RunOn(c, q, FooPod({}), n);
  EXPECT_EQ(Verdicts(c, FooPod({Constraint("zone", 1)})),
            (std::vector<FilterCode>{kMissing, kOk, kSkew}));
  // A node must have every constraint's key: node2 lacks "rack".
  EXPECT_EQ(Verdicts(c, FooPod({Constraint("zone", 1), Constraint("rack", 1)})),
            (std::vector<FilterCode>{kMissing, kMissing, kMissing}));
  EXPECT_EQ(PlacedOn(c, q, FooPod({Constraint("zone", 1)})), "node2");
}

TEST(PodTopologySpreadTest, SelfMatch) {
  // A pod its own selector does not match adds nothing to its domain: zone A's 2 - 1
  // is within maxSkew 1 (kube-scheduler's selfMatchNum is 0).
  DocCluster d;
  TaskSpec unlabelled = FooPod({Constraint("zone", 1)});
  unlabelled.labels = Labels();
  EXPECT_EQ(Verdicts(d.c, unlabelled), (std::vector<FilterCode>{kOk, kOk, kOk, kOk}));
  // Placing it changes no count: the next matching pod still may not go to zone A.
  AddJob(d.c, "unlabelled", d.queue, unlabelled, 1);
  AddJob(d.c, "labelled", d.queue, FooPod({Constraint("zone", 1)}), 1);
  Decisions out = RunSession(d.c);
  ASSERT_EQ(out.binds.size(), 2u);
  EXPECT_EQ(*d.c.node(out.binds[0].node).labels.Find("zone"), "zoneA");
  EXPECT_EQ(*d.c.node(out.binds[1].node).labels.Find("zone"), "zoneB");
}

TEST(PodTopologySpreadTest, OnlyPodsOfTheNamespaceAndSelectorCount) {
  DocCluster d;
  // More pods in zone B: one in another namespace, two with other labels.
  TaskSpec other_ns = FooPod({});
  other_ns.namespace_ = "other";
  RunOn(d.c, d.queue, other_ns, d.nodes[3]);
  TaskSpec other_labels = FooPod({});
  other_labels.labels = Labels();
  other_labels.labels.Set("foo", "baz");
  RunOn(d.c, d.queue, other_labels, d.nodes[3]);
  RunOn(d.c, d.queue, other_labels, d.nodes[3]);
  EXPECT_EQ(Verdicts(d.c, FooPod({Constraint("zone", 1)})),
            (std::vector<FilterCode>{kSkew, kSkew, kOk, kOk}));
  // No selector counts no pod, and does not match the pod itself.
  TopologySpreadConstraint none = Constraint("zone", 1);
  none.selector.reset();
  EXPECT_EQ(Verdicts(d.c, FooPod({none})), (std::vector<FilterCode>{kOk, kOk, kOk, kOk}));
  // An empty selector matches every pod of the namespace ([2, 3]: not the one in
  // "other"), the incoming one too. (kubernetes#141339: countPodsMatchSelector counted
  // none for it until kubernetes#141340.)
  TopologySpreadConstraint all = Constraint("zone", 1);
  all.selector = LabelSelector{};
  EXPECT_EQ(Verdicts(d.c, FooPod({all})), (std::vector<FilterCode>{kOk, kOk, kSkew, kSkew}));
}

TEST(PodTopologySpreadTest, MinDomains) {
  // One pod in each of two zones, maxSkew 1: with minDomains 3 the global minimum is 0
  // (fewer eligible domains), so 1 + 1 - 0 > 1 everywhere; with 2 it is 1.
  ClusterState c;
  const QueueId q = AddQueue(c, "q");
  const NodeId a = AddZoneNode(c, "node1", "zoneA");
  const NodeId b = AddZoneNode(c, "node2", "zoneB");
  RunOn(c, q, FooPod({}), a);
  RunOn(c, q, FooPod({}), b);
  TopologySpreadConstraint three = Constraint("zone", 1);
  three.min_domains = 3;
  EXPECT_EQ(Verdicts(c, FooPod({three})), (std::vector<FilterCode>{kSkew, kSkew}));
  TopologySpreadConstraint two = Constraint("zone", 1);
  two.min_domains = 2;
  EXPECT_EQ(Verdicts(c, FooPod({two})), (std::vector<FilterCode>{kOk, kOk}));
  EXPECT_EQ(Verdicts(c, FooPod({Constraint("zone", 1)})), (std::vector<FilterCode>{kOk, kOk}));
}

// The documentation's 5-node cluster: zones A and B as before, and an empty node5 in C.
struct FiveNodes : DocCluster {
  NodeId node5;
  FiveNodes() { node5 = AddZoneNode(c, "node5", "zoneC"); }
};

TEST(PodTopologySpreadTest, NodeAffinityPolicy) {
  FiveNodes d;
  TaskSpec pod = FooPod({Constraint("zone", 1)});
  pod.affinity.terms = {{SelectorRequirement{"zone", SelectorRequirement::Op::kNotIn, {"zoneC"}}}};
  // Honor (the default): zone C is no domain, the minimum is zone B's 1, so zone B fits;
  // node5 fails on its affinity.
  EXPECT_EQ(Verdicts(d.c, pod),
            (std::vector<FilterCode>{kSkew, kSkew, kOk, kOk, FilterCode::kNodeAffinity}));
  EXPECT_EQ(PlacedOn(d.c, d.queue, pod), "node3");  // binpack: the fuller of the two
  // Ignore: zone C's 0 is the minimum, and zone B's 1 + 1 is too many.
  pod.spread[0].honor_node_affinity = false;
  EXPECT_EQ(Verdicts(d.c, pod),
            (std::vector<FilterCode>{kSkew, kSkew, kSkew, kSkew, FilterCode::kNodeAffinity}));
  // The node selector is honoured the same way.
  TaskSpec by_selector = FooPod({Constraint("zone", 1)});
  by_selector.node_selector.Set("kubernetes.io/hostname", "node3");
  EXPECT_EQ(Verdicts(d.c, by_selector)[2], kOk);
  by_selector.node_selector = Labels();
  by_selector.node_selector.Set("zone", "zoneB");
  EXPECT_EQ(Verdicts(d.c, by_selector)[3], kOk);
}

TEST(PodTopologySpreadTest, NodeTaintsPolicy) {
  FiveNodes d;
  // node5 tainted: with nodeTaintsPolicy Ignore (the default) zone C still counts.
  Node tainted = d.c.node(d.node5);
  tainted.taints = {Taint{"dedicated", "x", TaintEffect::kNoSchedule}};
  ASSERT_TRUE(d.c.UpdateNode(d.node5, tainted).ok());
  TaskSpec pod = FooPod({Constraint("zone", 1)});
  EXPECT_EQ(Verdicts(d.c, pod),
            (std::vector<FilterCode>{kSkew, kSkew, kSkew, kSkew, FilterCode::kTaint}));
  // Honor: zone C's only node is tainted, so zone C is no domain.
  pod.spread[0].honor_node_taints = true;
  EXPECT_EQ(Verdicts(d.c, pod),
            (std::vector<FilterCode>{kSkew, kSkew, kOk, kOk, FilterCode::kTaint}));
  // A pod that tolerates the taint counts node5 again.
  pod.tolerations = {Toleration{"dedicated", Toleration::Op::kExists, "", true}};
  EXPECT_EQ(Verdicts(d.c, pod), (std::vector<FilterCode>{kSkew, kSkew, kSkew, kSkew, kOk}));
  // PreferNoSchedule never excludes a node.
  tainted.taints = {Taint{"dedicated", "x", TaintEffect::kPreferNoSchedule}};
  ASSERT_TRUE(d.c.UpdateNode(d.node5, tainted).ok());
  pod.tolerations.clear();
  EXPECT_EQ(Verdicts(d.c, pod), (std::vector<FilterCode>{kSkew, kSkew, kSkew, kSkew, kOk}));
}

// ---------------------------------------------------------------- the session's own changes

TEST(PodTopologySpreadTest, CountedPodsFollowTheStatement) {
  // Counted: running, allocated and pipelined tasks; not releasing ones (evicted:
  // terminating, which kube-scheduler skips).
  DocCluster d;
  const SpecId spec = d.c.AddSpec(FooPod({Constraint("zone", 1)}));
  const JobId job = AddJobWithSpec(d.c, "gang", d.queue, spec, 2, /*min_member=*/2);
  const TaskId first = d.c.job(job).tasks[0];
  const TaskId second = d.c.job(job).tasks[1];
  const Policy policy = MustCompile(SchedulerConfig::Default());
  const Snapshot snapshot(d.c);
  Session s(snapshot, policy);
  auto code = [&](NodeId n) { return s.Filter(d.c.spec(spec), spec, n).code; };
  ASSERT_EQ(code(d.nodes[0]), kSkew);  // [2, 1]
  ASSERT_EQ(code(d.nodes[3]), kOk);
  {
    Statement st = s.NewStatement();
    ASSERT_TRUE(st.Allocate(first, Placement{d.nodes[3], {}}).ok());
    // [2, 2]: the gang's second member sees the first, and zone A fits again.
    EXPECT_EQ(code(d.nodes[0]), kOk);
    ASSERT_TRUE(st.Allocate(second, Placement{d.nodes[0], {}}).ok());
    EXPECT_EQ(code(d.nodes[1]), kSkew);  // [3, 2]
    EXPECT_EQ(code(d.nodes[2]), kOk);
    st.Rollback(1);
    EXPECT_EQ(code(d.nodes[0]), kOk);  // [2, 2] again
    st.Discard();
  }
  EXPECT_EQ(code(d.nodes[0]), kSkew);  // [2, 1]: the rollback undid it all
  {
    // Evicting zone A's pod on node1 makes it terminating: [1, 1].
    Statement st = s.NewStatement();
    ASSERT_TRUE(st.Evict(d.c.job(0).tasks[0], "test").ok());
    EXPECT_EQ(code(d.nodes[0]), kOk);
    EXPECT_EQ(code(d.nodes[2]), kOk);
    // A pod pipelined onto node1 (its room comes free) counts: [2, 1].
    ASSERT_TRUE(st.Pipeline(first, Placement{d.nodes[0], {}}).ok());
    EXPECT_EQ(code(d.nodes[1]), kSkew);
    st.Discard();
  }
  EXPECT_EQ(code(d.nodes[0]), kSkew);
  EXPECT_EQ(code(d.nodes[3]), kOk);
}

TEST(PodTopologySpreadTest, GangSpreadInOneStatement) {
  // Four members, one per node by hostname with maxSkew 1: binpack alone would put them
  // all on one node.
  ClusterState c;
  const QueueId q = AddQueue(c, "q");
  for (int i = 0; i < 4; ++i) AddZoneNode(c, "node" + std::to_string(i + 1), "zoneA");
  AddJob(c, "gang", q, FooPod({Constraint("kubernetes.io/hostname", 1)}), 4, /*min_member=*/4);
  Decisions d = RunSession(c);
  ASSERT_EQ(d.binds.size(), 4u);
  std::vector<NodeId> nodes;
  for (const BindDecision& b : d.binds) nodes.push_back(b.node);
  std::sort(nodes.begin(), nodes.end());
  EXPECT_EQ(nodes, (std::vector<NodeId>{0, 1, 2, 3}));
}

TEST(PodTopologySpreadTest, RolledBackGangLeavesNoCount) {
  // node1 runs one matching 2-CPU pod. A gang of two 3-CPU members puts the first on
  // node2 (node1 would be 2 - 0), finds no room for the second, and is rolled back. The
  // next pod must then see [1, 0] and go to node2; had the first member stayed counted
  // ([1, 1]) binpack would put it on the fuller node1.
  ClusterState c;
  const QueueId q = AddQueue(c, "q");
  const NodeId n1 = AddZoneNode(c, "node1", "zoneA", 4000);
  AddZoneNode(c, "node2", "zoneA", 4000);
  const TopologySpreadConstraint by_node = Constraint("kubernetes.io/hostname", 1);
  RunOn(c, q, FooPod({}, 2000), n1);
  const JobId gang = AddJob(c, "gang", q, FooPod({by_node}, 3000), 2, /*min_member=*/2, 0, 1);
  AddJob(c, "single", q, FooPod({by_node}, 1000), 1, 1, 0, /*creation=*/2);
  Decisions d = RunSession(c);
  ASSERT_EQ(d.binds.size(), 1u);
  EXPECT_EQ(c.node(d.binds[0].node).name, "node2");
  ASSERT_EQ(d.pending.size(), 1u);
  EXPECT_EQ(d.pending[0].job, gang);
  EXPECT_TRUE(Contains(d.pending[0].reason, "gang: 1 of minMember 2"));
}

// ---------------------------------------------------------------- scoring

// The plugin's normalized scores of `nodes` as candidates for `spec` (a copy of the
// plugin on a fresh session).
std::vector<int64_t> Scores(ClusterState& c, const TaskSpec& spec, std::vector<NodeId> nodes,
                            PluginConfig plugin = PluginConfig{"podtopologyspread", {}}) {
  const SpecId id = c.AddSpec(spec);
  const Policy policy = MustCompile(SchedulerConfig::Default());
  const Snapshot snapshot(c);
  Session s(snapshot, policy);
  std::unique_ptr<Plugin> made = Must(MakePlugin(plugin));
  std::unique_ptr<Plugin> copy = made->NewSessionCopy();
  const auto* scorer = dynamic_cast<const NodeScorer*>(copy.get());
  EXPECT_TRUE(scorer->normalizes());
  if (!scorer->NormalizesFor(c.spec(id))) return {};
  std::vector<int64_t> scores(nodes.size(), 0);
  for (size_t k = 0; k < nodes.size(); ++k) {
    scores[k] = scorer->ScoreNode(s, c.spec(id), nodes[k], GpuChoice{});
  }
  scorer->NormalizeCandidates(s, c.spec(id), nodes, scores);
  return scores;
}

TEST(PodTopologySpreadTest, ScheduleAnywayScores) {
  DocCluster d;
  // Zone: 2 domains, weight log(4); raw round(2 log 4) = 3 in zone A, round(log 4) = 1 in
  // B; reversed and scaled: (3 + 1 - s) / 3.
  EXPECT_EQ(Scores(d.c, FooPod({Constraint("zone", 1, When::kScheduleAnyway)}), d.nodes),
            (std::vector<int64_t>{333'333, 333'333, 1'000'000, 1'000'000}));
  // maxSkew 3 adds 2 to every raw score: 5 and 3, so (5 + 3 - s) / 5.
  EXPECT_EQ(Scores(d.c, FooPod({Constraint("zone", 3, When::kScheduleAnyway)}), d.nodes),
            (std::vector<int64_t>{600'000, 600'000, 1'000'000, 1'000'000}));
  // Hostname: counted per node, weight log(4 candidates + 2): raw 2, 2, 2, 0.
  EXPECT_EQ(Scores(d.c, FooPod({Constraint("kubernetes.io/hostname", 1, When::kScheduleAnyway)}),
                   d.nodes),
            (std::vector<int64_t>{0, 0, 0, 1'000'000}));
  // Fewer candidates, fewer domains: node1 and node3 alone are still two zones, but
  // hostname's weight is log(2 + 2): raw round(1.386) = 1 each, so all equal.
  EXPECT_EQ(Scores(d.c, FooPod({Constraint("kubernetes.io/hostname", 1, When::kScheduleAnyway)}),
                   {d.nodes[0], d.nodes[2]}),
            (std::vector<int64_t>{1'000'000, 1'000'000}));
  // Both: the sums, rounded once: zone A 2 log 4 + log 6 = 4.56 -> 5 on node1 and node2,
  // zone B log 4 + log 6 = 3.18 -> 3 on node3, log 4 = 1.39 -> 1 on node4.
  ASSERT_EQ(std::round(2 * std::log(4.0) + std::log(6.0)), 5);
  ASSERT_EQ(std::round(std::log(4.0) + std::log(6.0)), 3);
  EXPECT_EQ(Scores(d.c,
                   FooPod({Constraint("zone", 1, When::kScheduleAnyway),
                           Constraint("kubernetes.io/hostname", 1, When::kScheduleAnyway)}),
                   d.nodes),
            (std::vector<int64_t>{200'000, 200'000, 600'000, 1'000'000}));
  // DoNotSchedule constraints do not score.
  EXPECT_TRUE(Scores(d.c, FooPod({Constraint("zone", 1)}), d.nodes).empty());
}

TEST(PodTopologySpreadTest, CandidatesWithoutAKeyScoreZero) {
  DocCluster d;
  const NodeId bare = AddZoneNode(d.c, "node5", "");
  RunOn(d.c, d.queue, FooPod({}), bare);  // on a node without the key: not counted
  std::vector<NodeId> nodes = d.nodes;
  nodes.push_back(bare);
  EXPECT_EQ(Scores(d.c, FooPod({Constraint("zone", 1, When::kScheduleAnyway)}), nodes),
            (std::vector<int64_t>{333'333, 333'333, 1'000'000, 1'000'000, 0}));
}

TEST(PodTopologySpreadTest, ScheduleAnywayOrder) {
  // Without binpack, the spreading score alone decides: zone B's emptier node4 first,
  // then the spread evens out.
  DocCluster d;
  SchedulerConfig config = SchedulerConfig::Default();
  const auto binpack = std::find_if(config.plugins.begin(), config.plugins.end(),
                                    [](const PluginConfig& p) { return p.name == "binpack"; });
  ASSERT_NE(binpack, config.plugins.end());
  config.plugins.erase(binpack);
  AddJob(d.c, "soft", d.queue,
         FooPod({Constraint("zone", 1, When::kScheduleAnyway),
                 Constraint("kubernetes.io/hostname", 1, When::kScheduleAnyway)}),
         1);
  Decisions out = RunSession(d.c, config);
  ASSERT_EQ(out.binds.size(), 1u);
  EXPECT_EQ(d.c.node(out.binds[0].node).name, "node4");
  // With binpack (which prefers node1 to node3, and node4 least), the sum decides.
  DocCluster again;
  PluginConfig heavy{"podtopologyspread", {{"weight", "3"}}};
  EXPECT_EQ(PlacedOn(again.c, again.queue,
                     FooPod({Constraint("zone", 1, When::kScheduleAnyway),
                             Constraint("kubernetes.io/hostname", 1, When::kScheduleAnyway)}),
                     ConfigWith(heavy)),
            "node4");
}

// ---------------------------------------------------------------- default constraints

TaskSpec ServicePod(const std::string& app) {
  TaskSpec spec = CpuSpec(1000);
  spec.namespace_ = "default";
  spec.labels.Set("app", app);
  LabelSelector selector;
  selector.match_labels.Set("app", app);
  spec.default_spread_selector = selector;
  return spec;
}

// Default constraints that filter can be unblocked by placements (a spec's "fits nowhere"
// is then not kept in the session); the system defaults only score, so a pod of a Service
// keeps the memo.
TEST(PodTopologySpreadTest, OnlyFilteringDefaultsMakeASpecUnblockable) {
  const auto unblockable = [](const PluginConfig& config, const TaskSpec& spec) {
    std::unique_ptr<Plugin> made = Must(MakePlugin(config));
    const auto* predicate = dynamic_cast<const NodePredicate*>(made.get());
    EXPECT_NE(predicate, nullptr);
    return predicate != nullptr && predicate->PlacementsCanUnblock(spec);
  };
  const PluginConfig system = Must(PluginWithTextArguments("podtopologyspread", {}));
  const PluginConfig list = Must(PluginWithTextArguments(
      "podtopologyspread",
      {{"defaultingType", "List"},
       {"defaultConstraints",
        "[{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]"}}));
  EXPECT_FALSE(ServicePod("web").placements_can_unblock()) << "the spec alone cannot say";
  EXPECT_FALSE(unblockable(system, ServicePod("web")));
  EXPECT_TRUE(unblockable(list, ServicePod("web")));
  TaskSpec lone = ServicePod("web");
  lone.default_spread_selector.reset();
  EXPECT_FALSE(unblockable(list, lone));
}

TEST(PodTopologySpreadTest, ListDefaultConstraintsFilter) {
  ClusterState c;
  const QueueId q = AddQueue(c, "q");
  const NodeId a = AddZoneNode(c, "node1", "zoneA");
  AddZoneNode(c, "node2", "zoneB");
  RunOn(c, q, ServicePod("web"), a);
  const PluginConfig list = Must(PluginWithTextArguments(
      "podtopologyspread",
      {{"defaultingType", "List"},
       {"defaultConstraints",
        "[{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]"}}));
  const SchedulerConfig config = ConfigWith(list);
  EXPECT_EQ(Verdicts(c, ServicePod("web"), config), (std::vector<FilterCode>{kSkew, kOk}));
  // Another Service's pods are not counted.
  EXPECT_EQ(Verdicts(c, ServicePod("api"), config), (std::vector<FilterCode>{kOk, kOk}));
  // No selector from Services or owners: no default spreading.
  TaskSpec lone = ServicePod("web");
  lone.default_spread_selector.reset();
  EXPECT_EQ(Verdicts(c, lone, config), (std::vector<FilterCode>{kOk, kOk}));
  lone.default_spread_selector = LabelSelector{};
  EXPECT_EQ(Verdicts(c, lone, config), (std::vector<FilterCode>{kOk, kOk}));
  // A pod with constraints of its own gets no defaults.
  TaskSpec own = ServicePod("web");
  TopologySpreadConstraint by_node = Constraint("kubernetes.io/hostname", 5);
  by_node.selector = own.default_spread_selector;
  own.spread = {by_node};
  EXPECT_EQ(Verdicts(c, own, config), (std::vector<FilterCode>{kOk, kOk}));
  // The system defaults never filter.
  EXPECT_EQ(Verdicts(c, ServicePod("web")), (std::vector<FilterCode>{kOk, kOk}));
  // defaultConstraints: [] with List turns default spreading off.
  const PluginConfig off = Must(PluginWithTextArguments(
      "podtopologyspread", {{"defaultingType", "List"}, {"defaultConstraints", "[]"}}));
  EXPECT_TRUE(Scores(c, ServicePod("web"), {0, 1}, off).empty());
}

TEST(PodTopologySpreadTest, SystemDefaultConstraintsScore) {
  // Hostname maxSkew 3 and zone maxSkew 5, ScheduleAnyway, with the Services' selector.
  // node1 (zone A) runs two web pods, node2 (zone A) one, node3 (zone B) none; node4 has
  // no zone label, and still gets hostname spreading with the system defaults.
  ClusterState c;
  const QueueId q = AddQueue(c, "q");
  const NodeId n1 = AddZoneNode(c, "node1", "zoneA");
  const NodeId n2 = AddZoneNode(c, "node2", "zoneA");
  const NodeId n3 = AddZoneNode(c, "node3", "zoneB");
  const NodeId n4 = AddZoneNode(c, "node4", "");
  for (NodeId n : {n1, n1, n2}) RunOn(c, q, ServicePod("web"), n);
  // Zone: domains A, B and the empty value of node4: weight log 5; zone A counts 3.
  // Hostname: weight log 6. Raw: node1 2 log 6 + 2 + 3 log 5 + 4 = 14.41 -> 14; node2
  // log 6 + 2 + 3 log 5 + 4 = 12.62 -> 13; node3 2 + 4 = 6; node4 (hostname only) 2.
  const double w_zone = std::log(5.0), w_host = std::log(6.0);
  ASSERT_EQ(std::round(2 * w_host + 2 + 3 * w_zone + 4), 14);
  ASSERT_EQ(std::round(w_host + 2 + 3 * w_zone + 4), 13);
  const std::vector<int64_t> want = {1'000'000 * (14 + 2 - 14) / 14, 1'000'000 * (14 + 2 - 13) / 14,
                                     1'000'000 * (14 + 2 - 6) / 14, 1'000'000};
  EXPECT_EQ(Scores(c, ServicePod("web"), {n1, n2, n3, n4}), want);
  // With a List of the same constraints every candidate needs both keys: node4 scores 0
  // and the zone's weight is log 4.
  const PluginConfig list = Must(PluginWithTextArguments(
      "podtopologyspread",
      {{"defaultConstraints",
        "[{maxSkew: 3, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway},"
        " {maxSkew: 5, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}]"}}));
  const std::vector<int64_t> scored = Scores(c, ServicePod("web"), {n1, n2, n3, n4}, list);
  ASSERT_EQ(scored.size(), 4u);
  EXPECT_EQ(scored[3], 0);
  EXPECT_EQ(scored[2], 1'000'000);
  // A pod of another Service is scored on its own pods: none anywhere, all equal.
  EXPECT_EQ(Scores(c, ServicePod("api"), {n1, n2, n3}),
            (std::vector<int64_t>{1'000'000, 1'000'000, 1'000'000}));
}

TEST(PodTopologySpreadTest, DefaultSpreadingSpreadsAService) {
  // Six web pods on three empty nodes, scored by spreading alone: two on each.
  ClusterState c;
  const QueueId q = AddQueue(c, "q");
  for (int i = 0; i < 3; ++i) AddZoneNode(c, "node" + std::to_string(i + 1), "zoneA");
  for (int i = 0; i < 6; ++i) AddJob(c, "web-" + std::to_string(i), q, ServicePod("web"), 1);
  SchedulerConfig config = SchedulerConfig::Default();
  config.plugins.pop_back();  // binpack
  Decisions d = RunSession(c, config);
  ASSERT_EQ(d.binds.size(), 6u);
  std::vector<int> per_node(3, 0);
  for (const BindDecision& b : d.binds) ++per_node[b.node];
  EXPECT_EQ(per_node, (std::vector<int>{2, 2, 2}));
}

// ---------------------------------------------------------------- configuration

TEST(PodTopologySpreadTest, ArgumentErrors) {
  struct Case {
    std::map<std::string, std::string> arguments;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{{"defaultingType", "Sometimes"}},
       "defaultingType must be System or List, got \"Sometimes\""},
      {{{"defaultingType", "System"},
        {"defaultConstraints",
         "[{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]"}},
       "defaultingType System takes no defaultConstraints"},
      {{{"defaultConstraints",
         "[{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]"}},
       "defaultConstraints[0].maxSkew"},
      {{{"defaultConstraints",
         "[{maxSkew: 1, topologyKey: 'a b', whenUnsatisfiable: DoNotSchedule}]"}},
       "expected a label key, got \"a b\""},
      {{{"defaultConstraints", "[{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: Maybe}]"}},
       "expected DoNotSchedule or ScheduleAnyway, got \"Maybe\""},
      {{{"defaultConstraints", "[{maxSkew: 1, topologyKey: zone}]"}},
       "defaultConstraints[0].whenUnsatisfiable: missing"},
      {{{"defaultConstraints",
         "[{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule,"
         " labelSelector: {matchLabels: {a: b}}}]"}},
       "takes no selector"},
      {{{"defaultConstraints",
         "[{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, nodeTaintsPolicy: "
         "Yes}]"}},
       "expected Honor or Ignore"},
      {{{"defaultConstraints",
         "[{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule},"
         " {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]"}},
       "defaultConstraints[1]: a second constraint for topologyKey \"zone\""},
      {{{"defaultConstraints", "{maxSkew: 1}"}}, "expected a list of constraints"},
      {{{"defaultConstraints", "[{maxSkew: 1, colour: red}]"}}, "defaultConstraints[0].colour"},
      {{{"defaultConstraints", "[{"}}, "argument defaultConstraints"},
      {{{"weight", "-1"}}, "argument weight must be a non-negative integer"},
      {{{"strict", "1"}}, "unknown argument \"strict\""},
  };
  for (const Case& k : cases) {
    // A list's text that is no YAML is refused as the configuration is read.
    Result<PluginConfig> config = PluginWithTextArguments("podtopologyspread", k.arguments);
    const Status made = config.ok() ? MakePlugin(*config).status() : config.status();
    ASSERT_FALSE(made.ok()) << k.message;
    EXPECT_TRUE(Contains(made.message(), k.message));
    EXPECT_TRUE(Contains(made.message(), "plugin podtopologyspread"));
  }
  // A block scalar in a configuration file, as kube-scheduler's args read.
  SchedulerConfig config;
  const Status st =
      ParseSchedulerConfig(YAML::Load("plugins:\n"
                                      "  - predicates\n"
                                      "  - name: podtopologyspread\n"
                                      "    arguments:\n"
                                      "      weight: 2\n"
                                      "      defaultingType: List\n"
                                      "      defaultConstraints: |\n"
                                      "        - maxSkew: 1\n"
                                      "          topologyKey: topology.kubernetes.io/zone\n"
                                      "          whenUnsatisfiable: ScheduleAnyway\n"
                                      "          minDomains: 2\n"
                                      "          nodeAffinityPolicy: Ignore\n"
                                      "          nodeTaintsPolicy: Honor\n"),
                           "sched.yaml", &config);
  EXPECT_TRUE(st.ok()) << st.message();
}

// After the node-level predicates, so that a pod that fits nowhere is told so by them, and
// weighed 2 as in kube-scheduler's default profile.
TEST(PodTopologySpreadTest, InTheDefaultPluginsAfterPredicatesWithWeightTwo) {
  const SchedulerConfig config = SchedulerConfig::Default();
  std::vector<std::string> names;
  for (const PluginConfig& p : config.plugins) names.push_back(p.name);
  const auto predicates = std::find(names.begin(), names.end(), "predicates");
  const auto spread = std::find(names.begin(), names.end(), "podtopologyspread");
  ASSERT_NE(spread, names.end());
  EXPECT_LT(predicates, spread);
  EXPECT_EQ(config.plugins[spread - names.begin()].arguments.at("weight").scalar(), "2");
}

}  // namespace
}  // namespace gantry

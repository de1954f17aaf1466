// The node-level rules of kube-scheduler's default profile: NodePorts (nodeports), the
// scores of NodeAffinity (nodeaffinity) and TaintToleration (tainttoleration), and the
// filter side of taints, cordons and required node affinity (predicates).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/plugins/plugins.h"
#include "engine/registry.h"
#include "engine/session.h"
#include "engine/statement.h"
#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

HostPort Port(int32_t port, std::string protocol = "TCP", std::string host_ip = "") {
  HostPort p;
  p.port = port;
  p.protocol = std::move(protocol);
  p.host_ip = std::move(host_ip);
  return p;
}

TaskSpec CpuWithPorts(std::vector<HostPort> ports) {
  TaskSpec spec = CpuSpec(1000);
  spec.host_ports = std::move(ports);
  return spec;
}

// ---------------------------------------------------------------- nodeports

TEST(NodePortsTest, TwoPodsWithTheSameHostPortNeverShareANode) {
  ClusterState c;
  AddCpuNode(c, "a", 64000);
  AddCpuNode(c, "b", 64000);
  QueueId q = AddQueue(c, "q");
  SpecId web = c.AddSpec(CpuWithPorts({Port(8080)}));
  JobId one = AddJobWithSpec(c, "one", q, web, 1, 1, 0, 0);
  JobId two = AddJobWithSpec(c, "two", q, web, 1, 1, 0, 1);
  JobId three = AddJobWithSpec(c, "three", q, web, 1, 1, 0, 2);
  Decisions d = RunSession(c);
  // binpack would stack all three on "a"; the port keeps them apart, and the third waits.
  EXPECT_EQ(BindsOf(c, d), "one-0@a two-0@b");
  EXPECT_TRUE(Contains(PendingReasonOf(d, three),
                       "2 node(s) didn't have free ports for the requested pod ports"));
  (void)one, (void)two;
}

TEST(NodePortsTest, MembersOfOneGangSeeEachOther) {
  ClusterState c;
  AddCpuNode(c, "a", 64000);
  AddCpuNode(c, "b", 64000);
  QueueId q = AddQueue(c, "q");
  AddJob(c, "gang", q, CpuWithPorts({Port(9000, "UDP")}), 2, /*min_member=*/2);
  EXPECT_EQ(BindsOf(c, RunSession(c)), "gang-0@a gang-1@b");
}

TEST(NodePortsTest, RunningTasksHoldTheirPorts) {
  ClusterState c;
  NodeId a = AddCpuNode(c, "a", 64000);
  AddCpuNode(c, "b", 64000);
  QueueId q = AddQueue(c, "q");
  JobId running = AddJob(c, "running", q, CpuWithPorts({Port(80)}), 1);
  ASSERT_TRUE(c.Place(c.job(running).tasks[0], a, {}).ok());
  AddJob(c, "new", q, CpuWithPorts({Port(80)}), 1, 1, 0, 1);
  EXPECT_EQ(BindsOf(c, RunSession(c)), "new-0@b");
}

TEST(NodePortsTest, ProtocolAndHostIpTellPortsApart) {
  ClusterState c;
  AddCpuNode(c, "a", 64000);
  QueueId q = AddQueue(c, "q");
  AddJob(c, "tcp", q, CpuWithPorts({Port(53)}), 1, 1, 0, 0);
  AddJob(c, "udp", q, CpuWithPorts({Port(53, "UDP")}), 1, 1, 0, 1);
  AddJob(c, "ip1", q, CpuWithPorts({Port(70, "TCP", "10.0.0.1")}), 1, 1, 0, 2);
  AddJob(c, "ip2", q, CpuWithPorts({Port(70, "TCP", "10.0.0.2")}), 1, 1, 0, 3);
  // Every IP (0.0.0.0) overlaps both of the above.
  JobId any = AddJob(c, "any", q, CpuWithPorts({Port(70)}), 1, 1, 0, 4);
  Decisions d = RunSession(c);
  EXPECT_EQ(BindsOf(c, d), "tcp-0@a udp-0@a ip1-0@a ip2-0@a");
  EXPECT_TRUE(Contains(PendingReasonOf(d, any), "didn't have free ports"));
}

TEST(NodePortsTest, AGangThatFailsGivesItsPortsBack) {
  // The gang of three takes both nodes' port 80 before it finds no third node, and is
  // rolled back; the single task after it must see the ports free again.
  ClusterState c;
  AddCpuNode(c, "a", 64000);
  AddCpuNode(c, "b", 64000);
  QueueId q = AddQueue(c, "q");
  SpecId web = c.AddSpec(CpuWithPorts({Port(80)}));
  JobId gang = AddJobWithSpec(c, "gang", q, web, 3, /*min_member=*/3, 0, 0);
  AddJobWithSpec(c, "single", q, web, 1, 1, 0, 1);
  Decisions d = RunSession(c);
  EXPECT_EQ(BindsOf(c, d), "single-0@a");
  EXPECT_FALSE(PendingReasonOf(d, gang).empty());
}

TEST(NodePortsTest, NoSpecWithPortsBuildsNothingAndChecksNothing) {
  const PluginConfig config{"nodeports", {}};
  auto plugin = Must(MakePlugin(config));
  auto* predicate = dynamic_cast<NodePredicate*>(plugin.get());
  ASSERT_NE(predicate, nullptr);
  ClusterState c;
  const Snapshot snapshot(c);
  const Policy policy = MustCompile(SchedulerConfig::Default());
  const Session s(snapshot, policy);
  EXPECT_FALSE(predicate->FiltersDynamically(s, CpuSpec(1000)));
  EXPECT_TRUE(predicate->FiltersDynamically(s, CpuWithPorts({Port(1)})));
}

// ---------------------------------------------------------------- unconfiguredrules

TEST(UnconfiguredRulesTest, AHostPortWithoutNodePortsWaitsAndOthersArePlaced) {
  ClusterState c;
  AddCpuNode(c, "a", 64000);
  QueueId q = AddQueue(c, "q");
  SpecId web = c.AddSpec(CpuWithPorts({Port(8080)}));
  JobId one = AddJobWithSpec(c, "one", q, web, 1, 1, 0, 0);
  JobId two = AddJobWithSpec(c, "two", q, web, 1, 1, 0, 1);
  AddJob(c, "plain", q, CpuSpec(1000), 1, 1);
  Decisions d = RunSession(c, DefaultWithout("nodeports"));
  // Without the guard both would share "a" on port 8080.
  EXPECT_EQ(BindsOf(c, d), "plain-0@a");
  for (JobId job : {one, two}) {
    EXPECT_TRUE(Contains(PendingReasonOf(d, job),
                         "1 node(s) cannot honour the pod's hostPort: the configuration has no "
                         "nodeports plugin"))
        << PendingReasonOf(d, job);
  }
  // With nodeports configured, one of them is placed.
  EXPECT_EQ(BindsOf(c, RunSession(c)), "one-0@a plain-0@a");
}

TEST(UnconfiguredRulesTest, EachRuleNamesItsPlugin) {
  TaskSpec anti = CpuSpec(1000);
  anti.pod_affinity.required_anti_affinity.push_back(PodAffinityTerm{});
  TaskSpec spread = CpuSpec(1000);
  spread.spread.push_back(TopologySpreadConstraint{});
  TaskSpec soft_spread = spread;
  soft_spread.spread[0].when_unsatisfiable =
      TopologySpreadConstraint::WhenUnsatisfiable::kScheduleAnyway;
  TaskSpec volume = CpuSpec(1000);
  volume.attachable_volumes.push_back(AttachableVolume{});
  const Node node;
  struct Case {
    const char* left_out;
    TaskSpec spec;
    bool refused;
  };
  for (const Case& k :
       {Case{"interpodaffinity", anti, true}, Case{"podtopologyspread", spread, true},
        Case{"podtopologyspread", soft_spread, false},  // a score only
        Case{"nodevolumelimits", volume, true}, Case{"nodeports", anti, false}}) {
    std::vector<std::string> names;
    for (const PluginConfig& p : DefaultWithout(k.left_out).plugins) names.push_back(p.name);
    auto plugin = NewUnconfiguredRulesPlugin(names);
    ASSERT_NE(plugin, nullptr) << k.left_out;
    const FilterResult r = dynamic_cast<NodePredicate&>(*plugin).FilterStatic(k.spec, node);
    EXPECT_EQ(!r.ok(), k.refused) << k.left_out;
    if (k.refused) {
      EXPECT_TRUE(Contains(DescribeFilter(r, k.spec),
                           std::string("the configuration has no ") + k.left_out + " plugin"))
          << DescribeFilter(r, k.spec);
    }
  }
  std::vector<std::string> all;
  for (const PluginConfig& p : SchedulerConfig::Default().plugins) all.push_back(p.name);
  EXPECT_EQ(NewUnconfiguredRulesPlugin(all), nullptr);
}

// A releasing task holds its ports until it has ended; a pipelined one holds them once the
// releasing ones have; an allocated one at once. Each undone exactly.
TEST(NodePortsTest, PortsFollowTheViewsOfTheWorkingState) {
  ClusterState c;
  NodeId n = AddCpuNode(c, "n", 64000);
  QueueId q = AddQueue(c, "q");
  SpecId web = c.AddSpec(CpuWithPorts({Port(80)}));
  JobId victim = AddJobWithSpec(c, "victim", q, web, 1);
  const TaskId victim_task = c.job(victim).tasks[0];
  ASSERT_TRUE(c.Place(victim_task, n, {}).ok());
  const TaskId next = c.job(AddJobWithSpec(c, "next", q, web, 1, 1, 0, 1)).tasks[0];
  const TaskId later = c.job(AddJobWithSpec(c, "later", q, web, 1, 1, 0, 2)).tasks[0];
  SchedulerConfig config = SchedulerConfig::Default();
  config.actions.clear();
  const Policy policy = MustCompile(config);
  Snapshot snapshot(c);
  Session s(snapshot, policy);
  const std::vector<NodeId> only{n};
  auto fits = [&](TaskId task, bool future) {
    Placement p;
    std::string why;
    return s.FindPlacement(task, SearchScope{&only, future}, &p, &why);
  };
  EXPECT_FALSE(fits(next, false));
  EXPECT_FALSE(fits(next, true));
  Statement st = s.NewStatement();
  ASSERT_TRUE(st.Evict(victim_task, "test").ok());
  EXPECT_FALSE(fits(next, false)) << "a releasing task still holds its port";
  EXPECT_TRUE(fits(next, true)) << "once it has ended the port is free";
  Placement on_n;
  on_n.node = n;
  ASSERT_TRUE(st.Pipeline(next, on_n).ok());
  EXPECT_FALSE(fits(later, true)) << "the pipelined task was promised the port";
  EXPECT_FALSE(fits(later, false));
  st.Rollback(1);
  EXPECT_TRUE(fits(later, true));
  st.Rollback(0);
  EXPECT_FALSE(fits(later, true));
  EXPECT_FALSE(fits(later, false));
}

TEST(NodePortsTest, IndexBuiltMidSessionCountsWhatTheSessionPlacedBefore) {
  // Placed before any search asked for ports (so before the index exists): the index must
  // find the allocation in the working state when it is built.
  ClusterState c;
  NodeId n = AddCpuNode(c, "n", 64000);
  QueueId q = AddQueue(c, "q");
  SpecId web = c.AddSpec(CpuWithPorts({Port(80)}));
  const TaskId first = c.job(AddJobWithSpec(c, "first", q, web, 1)).tasks[0];
  const TaskId second = c.job(AddJobWithSpec(c, "second", q, web, 1, 1, 0, 1)).tasks[0];
  SchedulerConfig config = SchedulerConfig::Default();
  config.actions.clear();
  const Policy policy = MustCompile(config);
  Snapshot snapshot(c);
  Session s(snapshot, policy);
  Statement st = s.NewStatement();
  Placement on_n;
  on_n.node = n;
  ASSERT_TRUE(st.Allocate(first, on_n).ok());
  Placement p;
  std::string why;
  EXPECT_FALSE(s.FindPlacement(second, &p, &why));
  EXPECT_TRUE(Contains(why, "didn't have free ports"));
  st.Discard();
  EXPECT_TRUE(s.FindPlacement(second, &p, &why)) << why;
}

// ---------------------------------------------------------------- scores

NodeScorer* ScorerOf(const std::unique_ptr<Plugin>& plugin) {
  auto* scorer = dynamic_cast<NodeScorer*>(plugin.get());
  EXPECT_NE(scorer, nullptr);
  return scorer;
}

TEST(NodePreferenceScoresTest, NormalizeAsKubeSchedulersDefaultNormalizeScore) {
  auto affinity = Must(MakePlugin(PluginConfig{"nodeaffinity", {}}));
  auto taints = Must(MakePlugin(PluginConfig{"tainttoleration", {{"weight", "3"}}}));
  EXPECT_EQ(ScorerOf(affinity)->weight(), 1);
  EXPECT_EQ(ScorerOf(taints)->weight(), 3);
  EXPECT_TRUE(ScorerOf(affinity)->normalizes());
  EXPECT_TRUE(ScorerOf(taints)->normalizes());
  std::vector<int64_t> scores = {0, 1, 3};
  ScorerOf(affinity)->NormalizeScores(scores);
  EXPECT_EQ(scores, (std::vector<int64_t>{0, 333'333, kMaxNodeScore}));
  scores = {0, 0};
  ScorerOf(affinity)->NormalizeScores(scores);
  EXPECT_EQ(scores, (std::vector<int64_t>{0, 0}));
  scores = {0, 1, 3};  // reversed: fewer untolerated taints score more
  ScorerOf(taints)->NormalizeScores(scores);
  EXPECT_EQ(scores, (std::vector<int64_t>{kMaxNodeScore, 666'667, 0}));
  scores = {0, 0};
  ScorerOf(taints)->NormalizeScores(scores);
  EXPECT_EQ(scores, (std::vector<int64_t>{kMaxNodeScore, kMaxNodeScore}));
  EXPECT_FALSE(MakePlugin(PluginConfig{"nodeaffinity", {{"weigth", "2"}}}).ok());
  EXPECT_FALSE(MakePlugin(PluginConfig{"tainttoleration", {{"weight", "-1"}}}).ok());
}

TEST(NodePreferenceScoresTest, SpecsWithoutPreferencesAreNotScored) {
  auto affinity = Must(MakePlugin(PluginConfig{"nodeaffinity", {}}));
  ClusterState c;
  const Snapshot snapshot(c);
  const Policy policy = MustCompile(SchedulerConfig::Default());
  const Session s(snapshot, policy);
  TaskSpec plain = CpuSpec(1000);
  EXPECT_FALSE(ScorerOf(affinity)->Scores(s, plain));
  plain.affinity.preferred.push_back(
      PreferredNodeTerm{1, {{"zone", SelectorRequirement::Op::kExists, {}}}});
  EXPECT_TRUE(ScorerOf(affinity)->Scores(s, plain));
}

SelectorRequirement Req(std::string key, SelectorRequirement::Op op,
                        std::vector<std::string> values = {}) {
  return SelectorRequirement{std::move(key), op, std::move(values)};
}

Labels ZoneLabel(const std::string& zone) {
  Labels labels;
  labels.Set("zone", zone);
  return labels;
}

TEST(NodeAffinityScoreTest, PreferredTermsOutweighBinpack) {
  // binpack prefers "full" (lowest id, and half used); the pod prefers zone b.
  ClusterState c;
  NodeId full = AddCpuNode(c, "full", 8000, ZoneLabel("a"));
  AddCpuNode(c, "empty", 8000, ZoneLabel("b"));
  QueueId q = AddQueue(c, "q");
  JobId busy = AddJob(c, "busy", q, CpuSpec(4000), 1);
  ASSERT_TRUE(c.Place(c.job(busy).tasks[0], full, {}).ok());
  TaskSpec spec = CpuSpec(1000);
  spec.affinity.preferred.push_back(
      PreferredNodeTerm{5, {Req("zone", SelectorRequirement::Op::kIn, {"b"})}});
  AddJob(c, "prefers-b", q, spec, 1, 1, 0, 1);
  AddJob(c, "indifferent", q, CpuSpec(1000), 1, 1, 0, 2);
  EXPECT_EQ(BindsOf(c, RunSession(c)), "prefers-b-0@empty indifferent-0@full");
}

TEST(NodeAffinityScoreTest, WeightsOfMatchedTermsAddUp) {
  ClusterState c;
  Labels both = ZoneLabel("a");
  both.Set("ssd", "true");
  AddCpuNode(c, "zone-only", 8000, ZoneLabel("a"));
  AddCpuNode(c, "ssd-only", 8000, PoolLabel("x"));
  AddCpuNode(c, "both", 8000, both);
  QueueId q = AddQueue(c, "q");
  TaskSpec spec = CpuSpec(1000);
  spec.affinity.preferred = {
      PreferredNodeTerm{30, {Req("zone", SelectorRequirement::Op::kIn, {"a"})}},
      PreferredNodeTerm{20, {Req("ssd", SelectorRequirement::Op::kExists)}},
      // Matches no node: every requirement of a term must hold.
      PreferredNodeTerm{100,
                        {Req("zone", SelectorRequirement::Op::kIn, {"a"}),
                         Req("pool", SelectorRequirement::Op::kExists)}},
  };
  AddJob(c, "j", q, spec, 1);
  EXPECT_EQ(BindsOf(c, RunSession(c)), "j-0@both");
}

TEST(NodeAffinityScoreTest, PreferredMatchFieldsAndGtReadTheNodeNameAndNumbers) {
  ClusterState c;
  Labels small, big;
  small.Set("cores", "8");
  big.Set("cores", "96");
  AddCpuNode(c, "n0", 8000, small);
  AddCpuNode(c, "n1", 8000, big);
  AddCpuNode(c, "n2", 8000, small);
  QueueId q = AddQueue(c, "q");
  TaskSpec by_name = CpuSpec(1000);
  by_name.affinity.preferred.push_back(PreferredNodeTerm{
      1, {Req(std::string(kNodeNameField), SelectorRequirement::Op::kIn, {"n2"})}});
  TaskSpec by_cores = CpuSpec(1000);
  by_cores.affinity.preferred.push_back(
      PreferredNodeTerm{1, {Req("cores", SelectorRequirement::Op::kGt, {"32"})}});
  AddJob(c, "by-name", q, by_name, 1, 1, 0, 0);
  AddJob(c, "by-cores", q, by_cores, 1, 1, 0, 1);
  EXPECT_EQ(BindsOf(c, RunSession(c)), "by-name-0@n2 by-cores-0@n1");
}

Node TaintedCpuNode(const std::string& name, std::vector<Taint> taints) {
  Node node;
  node.name = name;
  node.allocatable = ResourceVector{{kCpu, 8000}, {kMemory, 64 * kGi}};
  node.taints = std::move(taints);
  return node;
}

Taint Prefer(std::string key) {
  return Taint{std::move(key), "", TaintEffect::kPreferNoSchedule};
}

TEST(TaintTolerationScoreTest, PreferNoScheduleSteersAwayEvenFromTheFullerNode) {
  ClusterState c;
  NodeId spot = Must(c.AddNode(TaintedCpuNode("spot", {Prefer("spot")})));
  Must(c.AddNode(TaintedCpuNode("plain", {})));
  QueueId q = AddQueue(c, "q");
  JobId busy = AddJob(c, "busy", q, CpuSpec(4000), 1);
  ASSERT_TRUE(c.Place(c.job(busy).tasks[0], spot, {}).ok());
  AddJob(c, "untolerating", q, CpuSpec(1000), 1, 1, 0, 1);
  TaskSpec tolerating = CpuSpec(1000);
  tolerating.tolerations.push_back(
      Toleration{"spot", Toleration::Op::kExists, "", false, TaintEffect::kPreferNoSchedule});
  AddJob(c, "tolerating", q, tolerating, 1, 1, 0, 2);
  // A toleration of another effect does not tolerate a PreferNoSchedule taint.
  TaskSpec wrong_effect = CpuSpec(1000);
  wrong_effect.tolerations.push_back(
      Toleration{"spot", Toleration::Op::kExists, "", false, TaintEffect::kNoSchedule});
  AddJob(c, "wrong-effect", q, wrong_effect, 1, 1, 0, 3);
  // One without an effect tolerates every effect.
  TaskSpec any_effect = CpuSpec(1000);
  any_effect.tolerations.push_back(Toleration{"spot", Toleration::Op::kExists, "", true, {}});
  AddJob(c, "any-effect", q, any_effect, 1, 1, 0, 4);
  // Tolerated, both nodes score the most, and binpack takes the fuller one.
  EXPECT_EQ(BindsOf(c, RunSession(c)),
            "untolerating-0@plain tolerating-0@spot wrong-effect-0@plain any-effect-0@spot");
}

TEST(TaintTolerationScoreTest, FewestUntoleratedTaintsWin) {
  ClusterState c;
  Must(c.AddNode(TaintedCpuNode("two", {Prefer("a"), Prefer("b")})));
  Must(c.AddNode(TaintedCpuNode("one", {Prefer("a"), Prefer("c")})));
  Must(c.AddNode(TaintedCpuNode("three", {Prefer("a"), Prefer("b"), Prefer("c")})));
  QueueId q = AddQueue(c, "q");
  TaskSpec spec = CpuSpec(1000);
  spec.tolerations.push_back(Toleration{"c", Toleration::Op::kExists, "", true, {}});
  AddJob(c, "j", q, spec, 1);
  EXPECT_EQ(BindsOf(c, RunSession(c)), "j-0@one");
}

// ---------------------------------------------------------------- filters

TEST(TaintFilterTest, NoScheduleAndNoExecuteFilterPreferNoScheduleDoesNot) {
  ClusterState c;
  Must(c.AddNode(TaintedCpuNode("exec", {Taint{"k", "v", TaintEffect::kNoExecute}})));
  QueueId q = AddQueue(c, "q");
  JobId plain = AddJob(c, "plain", q, CpuSpec(1000), 1);
  TaskSpec equal = CpuSpec(1000);
  equal.tolerations.push_back(
      Toleration{"k", Toleration::Op::kEqual, "v", false, TaintEffect::kNoExecute});
  AddJob(c, "equal", q, equal, 1, 1, 0, 1);
  Decisions d = RunSession(c);
  EXPECT_EQ(BindsOf(c, d), "equal-0@exec");
  EXPECT_TRUE(Contains(PendingReasonOf(d, plain), "1 node(s) had untolerated taint(s)"));
}

TEST(CordonTest, APodThatToleratesTheUnschedulableTaintToleratesTheCordon) {
  // kube-scheduler's NodeUnschedulable: node.kubernetes.io/unschedulable:NoSchedule.
  ClusterState c;
  Node cordoned = TaintedCpuNode("cordoned", {});
  cordoned.unschedulable = true;
  Must(c.AddNode(std::move(cordoned)));
  QueueId q = AddQueue(c, "q");
  JobId plain = AddJob(c, "plain", q, CpuSpec(1000), 1);
  TaskSpec daemon = CpuSpec(1000);
  daemon.tolerations.push_back(Toleration{"", Toleration::Op::kExists, "", true, {}});
  AddJob(c, "daemon", q, daemon, 1, 1, 0, 1);
  TaskSpec named = CpuSpec(1000);
  named.tolerations.push_back(Toleration{"node.kubernetes.io/unschedulable",
                                         Toleration::Op::kExists, "", false,
                                         TaintEffect::kNoSchedule});
  AddJob(c, "named", q, named, 1, 1, 0, 2);
  TaskSpec wrong_effect = CpuSpec(1000);
  wrong_effect.tolerations.push_back(Toleration{"node.kubernetes.io/unschedulable",
                                                Toleration::Op::kExists, "", false,
                                                TaintEffect::kNoExecute});
  JobId wrong = AddJob(c, "wrong-effect", q, wrong_effect, 1, 1, 0, 3);
  Decisions d = RunSession(c);
  EXPECT_EQ(BindsOf(c, d), "daemon-0@cordoned named-0@cordoned");
  EXPECT_TRUE(Contains(PendingReasonOf(d, plain), "node(s) were unschedulable"));
  EXPECT_TRUE(Contains(PendingReasonOf(d, wrong), "node(s) were unschedulable"));
}

TEST(RequiredNodeAffinityTest, MatchFieldsOnTheNodeNameAndGtLtInOneSession) {
  ClusterState c;
  for (int i = 0; i < 4; ++i) {
    Labels labels;
    labels.Set("gpu-memory-gb", std::to_string(16 * (i + 1)));  // 16, 32, 48, 64
    AddCpuNode(c, "n" + std::to_string(i), 8000, labels);
  }
  QueueId q = AddQueue(c, "q");
  using Op = SelectorRequirement::Op;
  // matchFields metadata.name In [n1, n3], and more than 40 GB: only n3.
  TaskSpec named = CpuSpec(1000);
  named.affinity.terms = {{Req(std::string(kNodeNameField), Op::kIn, {"n1", "n3"}),
                           Req("gpu-memory-gb", Op::kGt, {"40"})}};
  // NotIn on the name: all but n0; less than 40 GB: n1 (binpack would take n0).
  TaskSpec not_n0 = CpuSpec(1000);
  not_n0.affinity.terms = {{Req(std::string(kNodeNameField), Op::kNotIn, {"n0"}),
                            Req("gpu-memory-gb", Op::kLt, {"40"})}};
  // Terms are ORed: the first matches nothing (Gt 64 on at most 64), the second n2.
  TaskSpec either = CpuSpec(1000);
  either.affinity.terms = {{Req("gpu-memory-gb", Op::kGt, {"64"})},
                           {Req(std::string(kNodeNameField), Op::kIn, {"n2"})}};
  // A name no node has.
  TaskSpec none = CpuSpec(1000);
  none.affinity.terms = {{Req(std::string(kNodeNameField), Op::kIn, {"nowhere"})}};
  AddJob(c, "named", q, named, 1, 1, 0, 0);
  AddJob(c, "not-n0", q, not_n0, 1, 1, 0, 1);
  AddJob(c, "either", q, either, 1, 1, 0, 2);
  JobId nowhere = AddJob(c, "nowhere", q, none, 1, 1, 0, 3);
  Decisions d = RunSession(c);
  EXPECT_EQ(BindsOf(c, d), "named-0@n3 not-n0-0@n1 either-0@n2");
  EXPECT_TRUE(
      Contains(PendingReasonOf(d, nowhere), "4 node(s) didn't satisfy plugin(s) [NodeAffinity]"));
}

}  // namespace
}  // namespace gantry

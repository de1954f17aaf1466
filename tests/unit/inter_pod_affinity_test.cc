// The interpodaffinity plugin: kube-scheduler's InterPodAffinity filter and score, with
// the cases of the Kubernetes documentation (concepts/scheduling-eviction/assign-pod-node).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/pod_affinity_index.h"
#include "engine/random.h"
#include "engine/registry.h"
#include "engine/statement.h"
#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

constexpr char kHostname[] = "kubernetes.io/hostname";
constexpr char kZone[] = "topology.kubernetes.io/zone";

// A CPU node labelled with its hostname and, unless `zone` is empty, its zone.
NodeId AddHost(ClusterState& c, const std::string& name, const std::string& zone,
               Milli cpu = 8000) {
  Labels labels;
  labels.Set(kHostname, name);
  if (!zone.empty()) labels.Set(kZone, zone);
  return AddCpuNode(c, name, cpu, labels);
}

Labels LabelsOf(std::vector<std::pair<std::string, std::string>> pairs) {
  return Labels(std::move(pairs));
}

// A term selecting pods labelled `key=value` over `topology`.
PodAffinityTerm Term(const std::string& key, const std::string& value, const std::string& topology,
                     int32_t weight = 0) {
  PodAffinityTerm t;
  t.selector = LabelSelector{};
  t.selector->match_labels.Set(key, value);
  t.topology_key = topology;
  t.weight = weight;
  return t;
}

// A pod of `cpu` milli-CPU with labels, in namespace `ns`.
TaskSpec Pod(Labels labels, Milli cpu = 1000, const std::string& ns = "default") {
  TaskSpec spec = CpuSpec(cpu);
  spec.namespace_ = ns;
  spec.labels = std::move(labels);
  return spec;
}

// A running pod of `spec` on `node` (a job of its own).
TaskId RunPod(ClusterState& c, QueueId q, const TaskSpec& spec, NodeId node) {
  JobId job = AddJob(c, "running-" + std::to_string(c.jobs().size()), q, spec, 1);
  const TaskId t = c.job(job).tasks[0];
  Status st = c.Place(t, node, {});
  EXPECT_TRUE(st.ok()) << st.message();
  return t;
}

// Task name -> node name, for every bind.
std::map<std::string, std::string> Where(const ClusterState& c, const Decisions& d) {
  std::map<std::string, std::string> out;
  for (const BindDecision& b : d.binds) out[c.task(b.task).name] = c.node(b.node).name;
  return out;
}

std::string PendingReason(const Decisions& d, JobId job) {
  for (const PendingJob& p : d.pending) {
    if (p.job == job) return p.reason;
  }
  return "";
}

SchedulerConfig WithoutAffinity() {
  SchedulerConfig config = SchedulerConfig::Default();
  std::erase_if(config.plugins, [](const PluginConfig& p) { return p.name == "interpodaffinity"; });
  return config;
}

// Only the inter-pod score decides (binpack left out), every feasible node scored.
SchedulerConfig AffinityScoreOnly(std::map<std::string, std::string> arguments = {}) {
  SchedulerConfig config = SchedulerConfig::Default();
  std::erase_if(config.plugins, [](const PluginConfig& p) { return p.name == "binpack"; });
  for (PluginConfig& p : config.plugins) {
    if (p.name != "interpodaffinity") continue;
    p.arguments.clear();
    for (const auto& [key, value] : arguments) p.arguments[key] = value;
  }
  config.nodes_to_score = 0;
  return config;
}

// ---------------------------------------------------------------- the documentation's cases

// The web-store / redis-cache example: three cache replicas spread over the hosts by
// anti-affinity, three web servers each next to a cache and away from each other.
TEST(InterPodAffinityTest, WebStoreNextToRedisCacheOnePerHost) {
  ClusterState c;
  for (const char* host : {"node-1", "node-2", "node-3"}) AddHost(c, host, "");
  QueueId q = AddQueue(c, "q");
  TaskSpec cache = Pod(LabelsOf({{"app", "store"}}));
  cache.pod_affinity.required_anti_affinity = {Term("app", "store", kHostname)};
  TaskSpec web = Pod(LabelsOf({{"app", "web-store"}}));
  web.pod_affinity.required_anti_affinity = {Term("app", "web-store", kHostname)};
  web.pod_affinity.required_affinity = {Term("app", "store", kHostname)};
  AddJob(c, "redis-cache", q, cache, 3, 1, 0, /*creation=*/0);
  AddJob(c, "web-server", q, web, 3, 1, 0, /*creation=*/1);

  const auto where = Where(c, RunSession(c));
  ASSERT_EQ(where.size(), 6u);
  std::map<std::string, int> caches, webs;
  for (int i = 0; i < 3; ++i) {
    caches[where.at("redis-cache-" + std::to_string(i))]++;
    webs[where.at("web-server-" + std::to_string(i))]++;
  }
  EXPECT_EQ(caches, (std::map<std::string, int>{{"node-1", 1}, {"node-2", 1}, {"node-3", 1}}));
  EXPECT_EQ(webs, caches);

  // Without the plugin nothing would keep the caches apart: they wait, with the words.
  const Decisions without = RunSession(c, WithoutAffinity());
  EXPECT_TRUE(without.binds.empty());
  EXPECT_TRUE(Contains(PendingReasonOf(without, c.FindJob("redis-cache")),
                       "3 node(s) cannot honour the pod's required pod affinity or anti-affinity: "
                       "the configuration has no interpodaffinity plugin"))
      << PendingReasonOf(without, c.FindJob("redis-cache"));
}

// Required anti-affinity over zones: one replica per zone; the fourth finds none.
TEST(InterPodAffinityTest, ZoneAntiAffinityOneReplicaPerZone) {
  ClusterState c;
  AddHost(c, "a-1", "zone-a");
  AddHost(c, "a-2", "zone-a");
  AddHost(c, "b-1", "zone-b");
  AddHost(c, "c-1", "zone-c");
  AddHost(c, "nozone", "");  // lacks the key: never blocked by it
  QueueId q = AddQueue(c, "q");
  TaskSpec spec = Pod(LabelsOf({{"app", "db"}}));
  spec.pod_affinity.required_anti_affinity = {Term("app", "db", kZone)};
  AddJob(c, "db", q, spec, 5);
  std::map<std::string, int> per_zone;
  for (const auto& [task, node] : Where(c, RunSession(c))) {
    per_zone[node == "nozone" ? "none" : node.substr(0, 1)]++;
  }
  EXPECT_EQ(per_zone, (std::map<std::string, int>{{"a", 1}, {"b", 1}, {"c", 1}, {"none", 2}}));
}

TEST(InterPodAffinityTest, ZoneAntiAffinityExplainsWhyNoNodeFits) {
  ClusterState c;
  AddHost(c, "a-1", "zone-a");
  AddHost(c, "b-1", "zone-b");
  QueueId q = AddQueue(c, "q");
  TaskSpec spec = Pod(LabelsOf({{"app", "db"}}));
  spec.pod_affinity.required_anti_affinity = {Term("app", "db", kZone)};
  JobId job = AddJob(c, "db", q, spec, 3);
  Decisions d = RunSession(c);
  EXPECT_EQ(d.binds.size(), 2u);
  EXPECT_TRUE(Contains(PendingReason(d, job),
                       "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules"));
}

// The documentation's pod-with-pod-affinity: required affinity to security=S1 in the
// zone, preferred anti-affinity (weight 100) to security=S2 in the zone.
TEST(InterPodAffinityTest, RequiredAffinityAndPreferredAntiAffinityOverZones) {
  auto place = [](bool avoid_s2) {
    ClusterState c;
    NodeId a1 = AddHost(c, "a-1", "zone-a");
    AddHost(c, "a-2", "zone-a");
    NodeId b1 = AddHost(c, "b-1", "zone-b");
    NodeId b2 = AddHost(c, "b-2", "zone-b");
    AddHost(c, "c-1", "zone-c");
    QueueId q = AddQueue(c, "q");
    RunPod(c, q, Pod(LabelsOf({{"security", "S1"}}), 1000), a1);
    RunPod(c, q, Pod(LabelsOf({{"security", "S1"}}), 6000), b1);  // the fullest: binpack's pick
    RunPod(c, q, Pod(LabelsOf({{"security", "S2"}}), 1000), b2);
    TaskSpec spec = Pod({});
    PodAffinityTerm s1;
    s1.selector = LabelSelector{};
    s1.selector->match_expressions = {{"security", SelectorRequirement::Op::kIn, {"S1"}}};
    s1.topology_key = kZone;
    PodAffinityTerm s2 = s1;
    s2.selector->match_expressions[0].values = {"S2"};
    s2.weight = 100;
    spec.pod_affinity.required_affinity = {s1};
    if (avoid_s2) spec.pod_affinity.preferred_anti_affinity = {s2};
    AddJob(c, "with-pod-affinity", q, spec, 1);
    return Where(c, RunSession(c)).at("with-pod-affinity-0");
  };
  EXPECT_EQ(place(/*avoid_s2=*/true), "a-1");
  // Without the preference: the fullest node of the two zones with an S1 pod.
  EXPECT_EQ(place(/*avoid_s2=*/false), "b-1");
}

// ---------------------------------------------------------------- namespaces

TEST(InterPodAffinityTest, TermsLookAtTheirOwnNamespaceUnlessTheyNameOthers) {
  ClusterState c;
  NodeId n0 = AddHost(c, "n0", "");
  NodeId n1 = AddHost(c, "n1", "");
  AddHost(c, "n2", "");
  QueueId q = AddQueue(c, "q");
  c.SetNamespaceLabels("team-a", LabelsOf({{"team", "a"}}));
  RunPod(c, q, Pod(LabelsOf({{"app", "x"}}), 1000, "other"), n0);
  RunPod(c, q, Pod(LabelsOf({{"app", "x"}}), 1000, "team-a"), n1);

  auto first_node = [&](PodAffinityTerm term) {
    ClusterState copy = c;
    TaskSpec spec = Pod({}, 1000, "default");
    spec.pod_affinity.required_affinity = {std::move(term)};
    AddJob(copy, "p", 0, spec, 1);
    const auto where = Where(copy, RunSession(copy));
    return where.count("p-0") ? where.at("p-0") : std::string("pending");
  };
  PodAffinityTerm own = Term("app", "x", kHostname);
  EXPECT_EQ(first_node(own), "pending");  // no app=x in "default"
  PodAffinityTerm listed = own;
  listed.namespaces = {"other"};
  EXPECT_EQ(first_node(listed), "n0");
  PodAffinityTerm selected = own;
  selected.namespace_selector = LabelSelector{};
  selected.namespace_selector->match_labels.Set("team", "a");
  EXPECT_EQ(first_node(selected), "n1");
  PodAffinityTerm every = own;
  every.namespace_selector = LabelSelector{};  // empty: every namespace
  EXPECT_EQ(first_node(every), "n0");
}

// An existing pod's namespaceSelector is matched against the incoming pod's namespace's
// labels.
TEST(InterPodAffinityTest, ExistingAntiAffinityNamespaceSelectorReadsTheIncomingNamespace) {
  ClusterState c;
  NodeId n0 = AddHost(c, "n0", "");
  AddHost(c, "n1", "");
  QueueId q = AddQueue(c, "q");
  c.SetNamespaceLabels("prod", LabelsOf({{"env", "prod"}}));
  TaskSpec guard = Pod(LabelsOf({{"app", "guard"}}), 1000, "infra");
  PodAffinityTerm term = Term("app", "web", kHostname);
  term.namespace_selector = LabelSelector{};
  term.namespace_selector->match_labels.Set("env", "prod");
  guard.pod_affinity.required_anti_affinity = {term};
  RunPod(c, q, guard, n0);
  AddJob(c, "prod-web", q, Pod(LabelsOf({{"app", "web"}}), 1000, "prod"), 1);
  AddJob(c, "dev-web", q, Pod(LabelsOf({{"app", "web"}}), 1000, "dev"), 1);
  const auto where = Where(c, RunSession(c));
  EXPECT_EQ(where.at("prod-web-0"), "n1");
  EXPECT_EQ(where.at("dev-web-0"), "n0");  // binpack: the fuller node
}

// ---------------------------------------------------------------- symmetry

TEST(InterPodAffinityTest, ExistingPodsAntiAffinityKeepsMatchingPodsAway) {
  ClusterState c;
  NodeId n0 = AddHost(c, "n0", "zone-a");
  AddHost(c, "n1", "zone-a");
  AddHost(c, "n2", "");  // lacks the key
  AddHost(c, "n3", "zone-b");
  QueueId q = AddQueue(c, "q");
  TaskSpec loner = Pod(LabelsOf({{"app", "loner"}}));
  loner.pod_affinity.required_anti_affinity = {Term("app", "web", kZone)};
  RunPod(c, q, loner, n0);
  // No terms of its own: kept out of zone-a by the running pod's term alone.
  TaskSpec web = Pod(LabelsOf({{"app", "web"}}), 8000);  // a whole node each
  JobId job = AddJob(c, "web", q, web, 3);
  Decisions d = RunSession(c);
  const auto where = Where(c, d);
  EXPECT_EQ(where.size(), 2u);
  for (const auto& [task, node] : where) EXPECT_TRUE(node == "n2" || node == "n3") << node;
  EXPECT_TRUE(Contains(PendingReason(d, job),
                       "1 node(s) didn't satisfy existing pods anti-affinity rules"));
  // A pod that does not match the term is not kept away.
  AddJob(c, "other", q, Pod(LabelsOf({{"app", "other"}})), 1);
  EXPECT_EQ(Where(c, RunSession(c)).at("other-0"), "n0");
}

// A running pod on a node without the term's key keeps nobody away.
// Nor is a node without the key kept away (nodes without it share no domain).
TEST(InterPodAffinityTest, ExistingPodOnANodeWithoutTheKeyBlocksNothing) {
  ClusterState c;
  NodeId bare = AddHost(c, "bare", "");
  NodeId bare2 = AddHost(c, "bare-2", "");
  AddHost(c, "a-1", "zone-a");
  QueueId q = AddQueue(c, "q");
  TaskSpec loner = Pod(LabelsOf({{"app", "loner"}}));
  loner.pod_affinity.required_anti_affinity = {Term("app", "web", kZone)};
  RunPod(c, q, loner, bare);
  RunPod(c, q, Pod({}, 3000), bare2);  // the fullest
  AddJob(c, "web", q, Pod(LabelsOf({{"app", "web"}})), 1);
  EXPECT_EQ(Where(c, RunSession(c)).at("web-0"), "bare-2");
}

// A removed node is out of kube-scheduler's snapshot, and so are the pods still on it.
TEST(InterPodAffinityTest, PodsOnARemovedNodeDoNotCount) {
  ClusterState c;
  NodeId gone = AddHost(c, "gone", "zone-a");
  AddHost(c, "a-1", "zone-a");
  QueueId q = AddQueue(c, "q");
  TaskSpec loner = Pod(LabelsOf({{"app", "loner"}}));
  loner.pod_affinity.required_anti_affinity = {Term("app", "web", kZone)};
  RunPod(c, q, loner, gone);
  AddJob(c, "web", q, Pod(LabelsOf({{"app", "web"}})), 1);
  EXPECT_EQ(Where(c, RunSession(c)).count("web-0"), 0u);
  c.RemoveNode(gone);
  EXPECT_EQ(Where(c, RunSession(c)).at("web-0"), "a-1");
}

// ---------------------------------------------------------------- within one statement

class InterPodAffinityStatementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 0; i < 3; ++i) nodes_.push_back(AddHost(c_, "n" + std::to_string(i), ""));
    q_ = AddQueue(c_, "q");
    TaskSpec member = Pod(LabelsOf({{"app", "ring"}}));
    member.pod_affinity.required_anti_affinity = {Term("app", "ring", kHostname)};
    gang_ = AddJob(c_, "ring", q_, member, 3, /*min_member=*/3);
    config_ = SchedulerConfig::Default();
    config_.actions.clear();
  }
  TaskId Member(int i) const { return c_.job(gang_).tasks[i]; }
  SpecId Spec() const { return c_.task(Member(0)).spec; }

  ClusterState c_;
  std::vector<NodeId> nodes_;
  QueueId q_ = 0;
  JobId gang_ = 0;
  SchedulerConfig config_;
};

TEST_F(InterPodAffinityStatementTest, SecondMemberSeesTheFirstAndRollbackRestores) {
  Snapshot snapshot(c_);
  const Policy policy = MustCompile(config_);
  Session s(snapshot, policy);
  const TaskSpec& spec = c_.spec(Spec());
  EXPECT_TRUE(s.Filter(spec, Spec(), nodes_[0]).ok());
  Statement st = s.NewStatement();
  Placement p{nodes_[0], {}};
  ASSERT_TRUE(st.Allocate(Member(0), p).ok());
  EXPECT_EQ(s.Filter(spec, Spec(), nodes_[0]).code, FilterCode::kPodAntiAffinity);
  EXPECT_TRUE(s.Filter(spec, Spec(), nodes_[1]).ok());
  Placement found;
  std::string why;
  ASSERT_TRUE(s.FindPlacement(Member(1), &found, &why)) << why;
  EXPECT_NE(found.node, nodes_[0]);
  st.Rollback(0);
  EXPECT_TRUE(s.Filter(spec, Spec(), nodes_[0]).ok());
}

TEST_F(InterPodAffinityStatementTest, AGangOfAntiAffineMembersSpreadsOrWaitsWhole) {
  // Three hosts: one member each.
  Decisions d = RunSession(c_);
  const auto where = Where(c_, d);
  ASSERT_EQ(where.size(), 3u);
  EXPECT_EQ((std::set<std::string>{where.at("ring-0"), where.at("ring-1"), where.at("ring-2")}),
            (std::set<std::string>{"n0", "n1", "n2"}));
  // Two hosts: the gang cannot be placed; its trial is taken back and leaves no trace, so
  // that a pod its members would keep away still goes where it fits best.
  ClusterState two;
  AddHost(two, "n0", "");
  AddHost(two, "n1", "");
  QueueId q = AddQueue(two, "q");
  AddJob(two, "ring", q, c_.spec(Spec()), 3, /*min_member=*/3, 0, /*creation=*/0);
  TaskSpec next = Pod(LabelsOf({{"app", "ring"}}));
  next.pod_affinity.required_anti_affinity = {Term("app", "ring", kHostname)};
  next.role = "other";
  AddJob(two, "after", q, next, 2, 1, 0, /*creation=*/1);
  Decisions d2 = RunSession(two);
  const auto where2 = Where(two, d2);
  EXPECT_EQ(where2.count("ring-0"), 0u);
  EXPECT_EQ(where2.size(), 2u);
  EXPECT_NE(where2.at("after-0"), where2.at("after-1"));
}

// Releasing pods still count on free room now, not on room once they have ended.
TEST(InterPodAffinityViewTest, ReleasingPodsCountNowButNotInTheFuture) {
  ClusterState c;
  NodeId n0 = AddHost(c, "n0", "", 2000);
  NodeId n1 = AddHost(c, "n1", "", 2000);
  QueueId q = AddQueue(c, "q");
  TaskSpec loner = Pod(LabelsOf({{"app", "loner"}}));
  loner.pod_affinity.required_anti_affinity = {Term("app", "web", kHostname)};
  const TaskId victim = RunPod(c, q, loner, n0);
  RunPod(c, q, Pod({}, 2000), n1);  // n1 full
  JobId web = AddJob(c, "web", q, Pod(LabelsOf({{"app", "web"}})), 1);
  const TaskId w = c.job(web).tasks[0];
  SchedulerConfig config = SchedulerConfig::Default();
  config.actions.clear();
  Snapshot snapshot(c);
  const Policy policy = MustCompile(config);
  Session s(snapshot, policy);
  Placement p;
  std::string why;
  SearchScope future;
  future.future = true;
  EXPECT_FALSE(s.FindPlacement(w, future, &p, &why));
  EXPECT_TRUE(Contains(why, "1 node(s) didn't satisfy existing pods anti-affinity rules")) << why;
  Statement st = s.NewStatement();
  ASSERT_TRUE(st.Evict(victim, "test").ok());
  EXPECT_FALSE(s.FindPlacement(w, &p, &why));  // now: the loner is still there
  EXPECT_TRUE(Contains(why, "didn't satisfy existing pods anti-affinity rules")) << why;
  ASSERT_TRUE(s.FindPlacement(w, future, &p, &why)) << why;
  EXPECT_EQ(p.node, n0);
  st.Rollback(0);
  EXPECT_FALSE(s.FindPlacement(w, future, &p, &why));
}

// Pipelined tasks count as nominated pods: in filters, on their node only, when their
// priority is at least the incoming pod's.
TEST(InterPodAffinityViewTest, PipelinedTasksCountOnTheirNodeForPodsOfNoHigherPriority) {
  ClusterState c;
  NodeId n0 = AddHost(c, "n0", "zone-a", 4000);
  NodeId n1 = AddHost(c, "n1", "zone-a", 4000);
  QueueId q = AddQueue(c, "q");
  const TaskId victim = RunPod(c, q, Pod({}, 2000), n0);
  TaskSpec guard = Pod(LabelsOf({{"app", "guard"}}), 3000);
  guard.priority = 10;
  guard.pod_affinity.required_anti_affinity = {Term("app", "web", kZone)};
  JobId g = AddJob(c, "guard", q, guard, 1);
  TaskSpec low = Pod(LabelsOf({{"app", "web"}}));
  low.priority = 10;
  TaskSpec high = low;
  high.priority = 11;
  high.role = "high";
  const SpecId low_id = c.AddSpec(low);
  const SpecId high_id = c.AddSpec(high);
  SchedulerConfig config = SchedulerConfig::Default();
  config.actions.clear();
  Snapshot snapshot(c);
  const Policy policy = MustCompile(config);
  Session s(snapshot, policy);
  Statement st = s.NewStatement();
  ASSERT_TRUE(st.Evict(victim, "room for the guard").ok());
  ASSERT_TRUE(st.Pipeline(c.job(g).tasks[0], Placement{n0, {}}).ok());
  EXPECT_EQ(s.Filter(c.spec(low_id), low_id, n0).code, FilterCode::kExistingAntiAffinity);
  EXPECT_TRUE(s.Filter(c.spec(high_id), high_id, n0).ok());
  EXPECT_TRUE(s.Filter(c.spec(low_id), low_id, n1).ok());  // same zone, other node
  st.Rollback(0);
  EXPECT_TRUE(s.Filter(c.spec(low_id), low_id, n0).ok());
}

// ---------------------------------------------------------------- required affinity

TEST(InterPodAffinityTest, FirstPodWithAffinityToItselfGoesAnywhereWithTheKey) {
  ClusterState c;
  AddHost(c, "bare", "");
  AddHost(c, "a-1", "zone-a");
  AddHost(c, "b-1", "zone-b");
  QueueId q = AddQueue(c, "q");
  TaskSpec spec = Pod(LabelsOf({{"app", "cache"}}), 5000);  // one per node
  spec.pod_affinity.required_affinity = {Term("app", "cache", kZone)};
  JobId job = AddJob(c, "cache", q, spec, 3);
  Decisions d = RunSession(c);
  // The first takes the special case onto a node with the key; the second must follow it
  // into its zone, which is full; the node without the key is never allowed.
  EXPECT_EQ(Where(c, d), (std::map<std::string, std::string>{{"cache-0", "a-1"}}));
  EXPECT_TRUE(Contains(PendingReason(d, job),
                       "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match pod "
                       "affinity rules."));
}

TEST(InterPodAffinityTest, NoSpecialCaseForAPodNotMatchingItsOwnTerms) {
  ClusterState c;
  AddHost(c, "bare", "");
  AddHost(c, "a-1", "zone-a");
  AddHost(c, "b-1", "zone-b");
  QueueId q = AddQueue(c, "q");
  TaskSpec stranger = Pod(LabelsOf({{"app", "web"}}));
  stranger.pod_affinity.required_affinity = {Term("app", "cache", kZone)};
  JobId job = AddJob(c, "stranger", q, stranger, 1);
  Decisions d = RunSession(c);
  EXPECT_TRUE(d.binds.empty());
  EXPECT_TRUE(Contains(PendingReason(d, job),
                       "0/3 nodes are available: 3 node(s) didn't match pod affinity rules"));
}

// A gang with affinity to itself: the first member takes the special case, the second
// (in the same statement) must follow it into its zone.
TEST(InterPodAffinityTest, GangWithAffinityToItselfStaysInTheFirstMembersZone) {
  ClusterState c;
  AddHost(c, "a-1", "zone-a");
  AddHost(c, "b-1", "zone-b");
  AddHost(c, "a-2", "zone-a");
  QueueId q = AddQueue(c, "q");
  TaskSpec spec = Pod(LabelsOf({{"app", "cache"}}), 5000);  // one per node
  spec.pod_affinity.required_affinity = {Term("app", "cache", kZone)};
  AddJob(c, "gang", q, spec, 2, /*min_member=*/2);
  EXPECT_EQ(Where(c, RunSession(c)),
            (std::map<std::string, std::string>{{"gang-0", "a-1"}, {"gang-1", "a-2"}}));
}

TEST(InterPodAffinityTest, AffinityCountsPodsMatchingEveryTerm) {
  ClusterState c;
  NodeId a1 = AddHost(c, "a-1", "zone-a");
  NodeId b1 = AddHost(c, "b-1", "zone-b");
  AddHost(c, "b-2", "zone-b");
  QueueId q = AddQueue(c, "q");
  // Zone a has a pod for each term, but none for both; a-1 is the fullest.
  RunPod(c, q, Pod(LabelsOf({{"app", "x"}})), a1);
  RunPod(c, q, Pod(LabelsOf({{"tier", "gold"}})), a1);
  RunPod(c, q, Pod(LabelsOf({{"app", "x"}, {"tier", "gold"}})), b1);
  TaskSpec spec = Pod({}, 1000);
  spec.pod_affinity.required_affinity = {Term("app", "x", kZone), Term("tier", "gold", kZone)};
  AddJob(c, "p", q, spec, 1);
  EXPECT_EQ(Where(c, RunSession(c)).at("p-0"), "b-1");
}

// ---------------------------------------------------------------- scores

TEST(InterPodAffinityScoreTest, NormalizesMinMaxToTheFullScale) {
  PluginConfig config{"interpodaffinity", {}};
  std::unique_ptr<Plugin> plugin = Must(MakePlugin(config));
  auto* scorer = dynamic_cast<NodeScorer*>(plugin.get());
  ASSERT_NE(scorer, nullptr);
  EXPECT_TRUE(scorer->normalizes());
  std::vector<int64_t> scores = {-3, 0, 5, 1};
  scorer->NormalizeScores(scores);
  EXPECT_EQ(scores, (std::vector<int64_t>{0, 375000, kMaxNodeScore, 500000}));
  std::vector<int64_t> same = {7, 7};
  scorer->NormalizeScores(same);
  EXPECT_EQ(same, (std::vector<int64_t>{0, 0}));
}

TEST(InterPodAffinityScoreTest, RawScoresAddEveryKindOfTerm) {
  ClusterState c;
  NodeId a1 = AddHost(c, "a-1", "zone-a");
  NodeId a2 = AddHost(c, "a-2", "zone-a");
  NodeId b1 = AddHost(c, "b-1", "zone-b");
  NodeId bare = AddHost(c, "bare", "");
  QueueId q = AddQueue(c, "q");
  // Incoming: app=in; prefers app=x in its zone (weight 5), avoids app=y on its host (3).
  TaskSpec in = Pod(LabelsOf({{"app", "in"}}));
  in.pod_affinity.preferred_affinity = {Term("app", "x", kZone, 5)};
  in.pod_affinity.preferred_anti_affinity = {Term("app", "y", kHostname, 3)};
  const SpecId in_id = c.AddSpec(in);
  AddJobWithSpec(c, "in", q, in_id, 1);
  // Existing: two app=x in zone a; one app=y on a-2; on b-1 a pod that prefers app=in
  // (weight 7) and one whose required affinity is to app=in (hardPodAffinityWeight 2);
  // on a-1 one that prefers to avoid app=in (weight 4).
  const SpecId x = c.AddSpec(Pod(LabelsOf({{"app", "x"}})));
  RunPod(c, q, c.spec(x), a1);
  RunPod(c, q, c.spec(x), a2);
  RunPod(c, q, Pod(LabelsOf({{"app", "y"}})), a2);
  TaskSpec fan = Pod(LabelsOf({{"app", "fan"}}));
  fan.pod_affinity.preferred_affinity = {Term("app", "in", kZone, 7)};
  RunPod(c, q, fan, b1);
  TaskSpec needs = Pod(LabelsOf({{"app", "needs"}}));
  needs.pod_affinity.required_affinity = {Term("app", "in", kHostname)};
  RunPod(c, q, needs, b1);
  TaskSpec shy = Pod(LabelsOf({{"app", "shy"}}));
  shy.pod_affinity.preferred_anti_affinity = {Term("app", "in", kHostname, 4)};
  RunPod(c, q, shy, a1);

  std::vector<SpecId> with_terms;
  for (SpecId id = 0; id < c.specs().size(); ++id) {
    if (!c.spec(id).pod_affinity.empty()) with_terms.push_back(id);
  }
  PodAffinityIndex index(c, with_terms, /*hard_pod_affinity_weight=*/2);
  index.CountRunning();
  const TaskSpec& spec = c.spec(in_id);
  EXPECT_EQ(index.Score(spec, a1, false), 5 * 2 - 4);
  EXPECT_EQ(index.Score(spec, a2, false), 5 * 2 - 3);
  EXPECT_EQ(index.Score(spec, b1, false), 7 + 2);
  EXPECT_EQ(index.Score(spec, bare, false), 0);
  // Taking one app=x away, and counting it as releasing, moves the scores as they should.
  index.Count(x, a1, /*releasing=*/true, +1);
  EXPECT_EQ(index.Score(spec, a2, false), 5 * 2 - 3);
  EXPECT_EQ(index.Score(spec, a2, true), 5 * 1 - 3);
  index.Count(x, a1, /*releasing=*/true, -1);
  index.Count(x, a1, false, -1);
  EXPECT_EQ(index.Score(spec, a2, false), 5 * 1 - 3);
}

TEST(InterPodAffinityScoreTest, PreferredAffinityPullsAndAntiAffinityPushes) {
  ClusterState c;
  AddHost(c, "n0", "");
  NodeId n1 = AddHost(c, "n1", "");
  AddHost(c, "n2", "");
  QueueId q = AddQueue(c, "q");
  RunPod(c, q, Pod(LabelsOf({{"app", "red"}})), n1);
  TaskSpec pull = Pod(LabelsOf({{"app", "p"}}));
  pull.pod_affinity.preferred_affinity = {Term("app", "red", kHostname, 1)};
  TaskSpec push = Pod(LabelsOf({{"app", "q"}}));
  push.pod_affinity.preferred_anti_affinity = {Term("app", "red", kHostname, 1)};
  AddJob(c, "pull", q, pull, 1);
  ClusterState pushed = c;
  AddJob(pushed, "push", q, push, 1);
  EXPECT_EQ(Where(c, RunSession(c, AffinityScoreOnly())).at("pull-0"), "n1");
  // Ties among the rest go to the lowest node.
  EXPECT_EQ(Where(pushed, RunSession(pushed, AffinityScoreOnly())).at("push-0"), "n0");
}

TEST(InterPodAffinityScoreTest, ExistingRequiredAffinityAttractsWithHardPodAffinityWeight) {
  ClusterState c;
  AddHost(c, "n0", "");
  NodeId n1 = AddHost(c, "n1", "");
  QueueId q = AddQueue(c, "q");
  TaskSpec needs = Pod(LabelsOf({{"app", "needs"}}));
  needs.pod_affinity.required_affinity = {Term("app", "in", kHostname)};
  RunPod(c, q, needs, n1);
  AddJob(c, "in", q, Pod(LabelsOf({{"app", "in"}})), 1);
  EXPECT_EQ(Where(c, RunSession(c, AffinityScoreOnly())).at("in-0"), "n1");
  EXPECT_EQ(Where(c, RunSession(c, AffinityScoreOnly({{"hardPodAffinityWeight", "0"}}))).at("in-0"),
            "n0");
}

// ---------------------------------------------------------------- cost

TEST(InterPodAffinityCostTest, ActiveOnlyWhenSomeLivePodHasATerm) {
  ClusterState c;
  NodeId n0 = AddHost(c, "n0", "");
  QueueId q = AddQueue(c, "q");
  RunPod(c, q, Pod(LabelsOf({{"app", "a"}})), n0);
  AddJob(c, "plain", q, Pod({}), 1);
  TaskSpec with = Pod(LabelsOf({{"app", "b"}}));
  with.pod_affinity.required_anti_affinity = {Term("app", "b", kHostname)};
  const SpecId unused = c.AddSpec(with);  // no task uses it
  (void)unused;
  auto active = [](const ClusterState& cluster) {
    const Policy policy = MustCompile(SchedulerConfig::Default());
    Snapshot snapshot(cluster);
    Session s(snapshot, policy);
    std::unique_ptr<Plugin> plugin = Must(MakePlugin(PluginConfig{"interpodaffinity", {}}));
    std::unique_ptr<Plugin> copy = plugin->NewSessionCopy();
    copy->OnSessionOpen(s);
    return copy->ActiveInSession();
  };
  EXPECT_FALSE(active(c));
  ClusterState running = c;
  RunPod(running, q, with, n0);
  EXPECT_TRUE(active(running));
  ClusterState pending = c;
  AddJob(pending, "with", q, with, 1);
  EXPECT_TRUE(active(pending));
}

// A spec the cluster does not hold is judged by the terms the index has: a term it shares
// with a live spec sees that term's counts; one of its own matches no pod, on a key the
// index learns on first sight.
TEST(InterPodAffinityIndexTest, ASpecTheClusterDoesNotHoldUsesWhatTheIndexKnows) {
  ClusterState c;
  Labels rack = LabelsOf({{"rack", "r1"}});
  rack.Set(kHostname, "n0");
  NodeId n0 = AddCpuNode(c, "n0", 8000, rack);
  NodeId n1 = AddHost(c, "n1", "");
  QueueId q = AddQueue(c, "q");
  TaskSpec anti = Pod(LabelsOf({{"app", "a"}}));
  anti.pod_affinity.required_anti_affinity = {Term("app", "a", kHostname)};
  const TaskId running = RunPod(c, q, anti, n1);
  const SpecId live = c.task(running).spec;
  PodAffinityIndex index(c, {live}, 1);
  index.CountRunning();
  TaskSpec copy = c.spec(live);  // not the cluster's: the same term
  EXPECT_EQ(index.Filter(copy, n1, false, {}).code, FilterCode::kPodAntiAffinity);
  EXPECT_TRUE(index.Filter(copy, n0, false, {}).ok());
  TaskSpec own = Pod(LabelsOf({{"app", "b"}}));
  own.pod_affinity.required_affinity = {Term("app", "b", "rack")};
  EXPECT_TRUE(index.Filter(own, n0, false, {}).ok());  // the first of its group
  EXPECT_EQ(index.Filter(own, n1, false, {}).code, FilterCode::kPodAffinity);  // no rack
}

// In a session where some pods have terms, the search still leaves the plugin out for a
// spec that no term bears on.
TEST(InterPodAffinityCostTest, SearchesSkipThePluginForSpecsNoTermBearsOn) {
  ClusterState c;
  NodeId n0 = AddHost(c, "n0", "");
  QueueId q = AddQueue(c, "q");
  TaskSpec loner = Pod(LabelsOf({{"app", "loner"}}));
  loner.pod_affinity.required_anti_affinity = {Term("app", "web", kHostname)};
  RunPod(c, q, loner, n0);
  TaskSpec fan = Pod(LabelsOf({{"app", "fan"}}));
  fan.pod_affinity.preferred_affinity = {Term("app", "star", kHostname, 1)};
  RunPod(c, q, fan, n0);
  const TaskSpec plain = Pod(LabelsOf({{"app", "plain"}}));
  const TaskSpec web = Pod(LabelsOf({{"app", "web"}}));
  const TaskSpec star = Pod(LabelsOf({{"app", "star"}}));
  const Policy policy = MustCompile(SchedulerConfig::Default());
  Snapshot snapshot(c);
  Session s(snapshot, policy);
  std::unique_ptr<Plugin> plugin =
      Must(MakePlugin(PluginConfig{"interpodaffinity", {}}))->NewSessionCopy();
  plugin->OnSessionOpen(s);
  ASSERT_TRUE(plugin->ActiveInSession());
  auto* predicate = dynamic_cast<NodePredicate*>(plugin.get());
  auto* scorer = dynamic_cast<NodeScorer*>(plugin.get());
  EXPECT_FALSE(predicate->FiltersDynamically(s, plain));
  EXPECT_FALSE(scorer->Scores(s, plain));
  EXPECT_TRUE(predicate->FiltersDynamically(s, web));  // the loner's term matches it
  EXPECT_FALSE(scorer->Scores(s, web));
  EXPECT_FALSE(predicate->FiltersDynamically(s, star));
  EXPECT_TRUE(scorer->Scores(s, star));  // the fan's preference matches it
  EXPECT_TRUE(predicate->FiltersDynamically(s, loner));
  EXPECT_TRUE(scorer->Scores(s, fan));
}

// ---------------------------------------------------------------- undo is exact

// A small cluster over two zones with pods of every kind of term, running and pending.
struct MixedCluster {
  ClusterState c;
  std::vector<TaskId> running;
  std::vector<TaskId> pending;
};

MixedCluster MakeMixed(Rng& rng) {
  MixedCluster m;
  ClusterState& c = m.c;
  for (int i = 0; i < 6; ++i) AddHost(c, "n" + std::to_string(i), i < 3 ? "zone-a" : "zone-b");
  AddHost(c, "bare", "");
  QueueId q = AddQueue(c, "q");
  const char* colors[] = {"red", "blue", "green"};
  std::vector<TaskSpec> specs;
  for (int k = 0; k < 6; ++k) {
    TaskSpec spec = Pod(LabelsOf({{"color", colors[k % 3]}}), 500, k < 4 ? "default" : "other");
    spec.priority = static_cast<int32_t>(rng.Uniform(3));
    spec.role = "r" + std::to_string(k);
    const std::string other = colors[rng.Uniform(3)];
    const char* key = rng.Uniform(2) == 0 ? kZone : kHostname;
    switch (k % 4) {
      case 0:
        spec.pod_affinity.required_anti_affinity = {Term("color", other, key)};
        break;
      case 1:
        spec.pod_affinity.required_affinity = {Term("color", other, key)};
        break;
      case 2:
        spec.pod_affinity.preferred_affinity = {Term("color", other, key, 3)};
        spec.pod_affinity.preferred_anti_affinity = {Term("color", colors[k % 3], kHostname, 2)};
        break;
      default:
        break;  // no terms
    }
    specs.push_back(spec);
  }
  for (int i = 0; i < 10; ++i) {
    const TaskSpec& spec = specs[rng.Uniform(specs.size())];
    m.running.push_back(RunPod(c, q, spec, static_cast<NodeId>(rng.Uniform(c.nodes().size()))));
  }
  for (int i = 0; i < 8; ++i) {
    JobId job = AddJob(c, "pending-" + std::to_string(i), q, specs[rng.Uniform(specs.size())], 1);
    m.pending.push_back(c.job(job).tasks[0]);
  }
  return m;
}

// Every spec's verdict on every node, and where each pending task would go now and once
// releasing tasks end.
std::string Observe(Session& s, const MixedCluster& m) {
  std::string out;
  const ClusterState& c = m.c;
  for (SpecId id = 0; id < c.specs().size(); ++id) {
    for (NodeId n = 0; n < c.nodes().size(); ++n) {
      out += std::to_string(static_cast<int>(s.Filter(c.spec(id), id, n).code)) + ",";
    }
    out += "\n";
  }
  for (TaskId t : m.pending) {
    for (bool future : {false, true}) {
      if (s.task_status(t) != TaskStatus::kPending) continue;
      SearchScope scope;
      scope.future = future;
      Placement p;
      std::string why;
      out += s.FindPlacement(t, scope, &p, &why) ? c.node(p.node).name : why;
      out += "\n";
    }
  }
  return out;
}

TEST(InterPodAffinityPropertyTest, RollbackRestoresEveryVerdictAndChoice) {
  for (uint64_t seed = 1; seed <= 40 && !HasFailure(); ++seed) {
    Rng rng(seed);
    MixedCluster m = MakeMixed(rng);
    SchedulerConfig config = AffinityScoreOnly();
    config.actions.clear();
    Snapshot snapshot(m.c);
    const Policy policy = MustCompile(config);
    Session s(snapshot, policy);
    const std::string before = Observe(s, m);
    Statement st = s.NewStatement();
    std::vector<size_t> checkpoints;
    for (int op = 0; op < 12; ++op) {
      checkpoints.push_back(st.Checkpoint());
      const uint64_t kind = rng.Uniform(3);
      const NodeId node = static_cast<NodeId>(rng.Uniform(m.c.nodes().size()));
      if (kind == 0) {
        st.Allocate(m.pending[rng.Uniform(m.pending.size())], Placement{node, {}}).ok();
      } else if (kind == 1) {
        st.Evict(m.running[rng.Uniform(m.running.size())], "test").ok();
      } else {
        st.Pipeline(m.pending[rng.Uniform(m.pending.size())], Placement{node, {}}).ok();
      }
      if (rng.Uniform(4) == 0) {  // back part of the way, then on again
        const size_t to = checkpoints[rng.Uniform(checkpoints.size())];
        st.Rollback(to);
        std::erase_if(checkpoints, [&](size_t c) { return c > to; });
      }
    }
    (void)Observe(s, m);  // searched with the changes in place
    st.Discard();
    EXPECT_EQ(Observe(s, m), before) << "seed " << seed;
  }
}

// Counting in any order, and taking counts back, gives the index a fresh build would have.
TEST(InterPodAffinityPropertyTest, CountsDoNotDependOnOrderAndUndoExactly) {
  for (uint64_t seed = 1; seed <= 40 && !HasFailure(); ++seed) {
    Rng rng(seed);
    MixedCluster m = MakeMixed(rng);
    const ClusterState& c = m.c;
    std::vector<SpecId> with_terms;
    for (SpecId id = 0; id < c.specs().size(); ++id) {
      if (!c.spec(id).pod_affinity.empty()) with_terms.push_back(id);
    }
    auto observe = [&](PodAffinityIndex& index) {
      std::string out;
      for (SpecId id = 0; id < c.specs().size(); ++id) {
        for (NodeId n = 0; n < c.nodes().size(); ++n) {
          for (bool future : {false, true}) {
            out += std::to_string(static_cast<int>(index.Filter(c.spec(id), n, future, {}).code)) +
                   ":" + std::to_string(index.Score(c.spec(id), n, future)) + ",";
          }
        }
      }
      return out;
    };
    PodAffinityIndex fresh(c, with_terms, 1);
    fresh.CountRunning();
    PodAffinityIndex churned(c, with_terms, 1);
    churned.BuildDomains();
    for (size_t i = m.running.size(); i-- > 0;) {
      const TaskId t = m.running[i];
      churned.Count(c.task(t).spec, c.task(t).node, false, +1);
      if (rng.Uniform(2) == 0) {
        const TaskId p = m.pending[rng.Uniform(m.pending.size())];
        const NodeId n = static_cast<NodeId>(rng.Uniform(c.nodes().size()));
        const bool releasing = rng.Uniform(2) == 0;
        churned.Count(c.task(p).spec, n, releasing, +1);
        churned.Count(c.task(p).spec, n, releasing, -1);
      }
    }
    EXPECT_EQ(observe(churned), observe(fresh)) << "seed " << seed;
  }
}

}  // namespace
}  // namespace gantry

// Scenario files (sim/scenario_reader.h): what is refused, with messages that say where and why.
// The user-visible errors also have files in tests/scenario/invalid/; these are the ones
// that need large or generated text, or look inside the result.
#include "sim/scenario_reader.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "model/limits.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

const char* const kNode = "nodes:\n- {name: n0, allocatable: {cpu: 8}}\n";

std::string ErrorOf(const std::string& text) {
  auto r = ParseScenario(text, "s.yaml");
  return r.ok() ? std::string("(ok)") : r.status().message();
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

TEST(ParseScenario, ASecondDocumentIsAnError) {
  // It was ignored without a word.
  EXPECT_TRUE(Contains(ErrorOf(std::string(kNode) + "---\n" + kNode),
                       "s.yaml:4:1: a second YAML document"));
  EXPECT_EQ(ErrorOf(std::string(kNode) + "---\n# nothing more\n"), "(ok)");
}

TEST(ParseScenario, DuplicateKeysAreAnError) {
  // A resource map kept the last, other fields the first.
  EXPECT_EQ(ErrorOf("nodes:\n- name: n0\n  allocatable: {cpu: 8, cpu: 16}\n"),
            "s.yaml:3:25: duplicate key \"cpu\" (first at line 3)");
  EXPECT_EQ(ErrorOf(std::string(kNode) + "jobs:\n- name: a\n  name: b\n  tasks: [{}]\n"),
            "s.yaml:5:3: duplicate key \"name\" (first at line 4)");
}

TEST(ParseScenario, IntegersAndBooleansArePlain) {
  // std::stoll skipped the space of " 3".
  const std::string prefix = "nodes:\n- namePrefix: n\n  allocatable: {cpu: 8}\n  count: ";
  EXPECT_TRUE(Contains(ErrorOf(prefix + "\" 3\"\n"),
                       "s.yaml:4:10: nodes[0].count: expected an integer, got the string \" 3\""));
  EXPECT_TRUE(Contains(ErrorOf(prefix + "'3'\n"), "expected an integer, got the string \"3\""));
  EXPECT_TRUE(
      Contains(ErrorOf(prefix + "3.0\n"), "nodes[0].count: expected an integer, got \"3.0\""));
  EXPECT_EQ(Must(ParseScenario(prefix + "3\n", "s.yaml")).cluster.nodes().size(), 3u);
  EXPECT_TRUE(
      Contains(ErrorOf("nodes:\n- {name: n0, allocatable: {cpu: 8}, unschedulable: \"true\"}\n"),
               "nodes[0].unschedulable: expected true or false, got the string \"true\""));
}

TEST(ParseScenario, NodeCountsAreBoundedBeforeAnyIsBuilt) {
  auto start = std::chrono::steady_clock::now();
  // A million nodes were built before.
  EXPECT_EQ(ErrorOf("nodes:\n- {namePrefix: n, count: 1000000, allocatable: {cpu: 8}}\n"),
            "s.yaml:2:26: nodes[0].count: must be between 1 and 100000, got 1000000");
  // Within the limit each, above it together: refused before the first is built.
  EXPECT_EQ(ErrorOf("nodes:\n- {namePrefix: a, count: 60000, allocatable: {cpu: 8}}\n"
                    "- {namePrefix: b, count: 60000, allocatable: {cpu: 8}}\n"),
            "s.yaml:3:26: nodes[1].count: the scenario would have 120000 nodes, more than 100000 "
            "(the limit on nodes in a cluster)");
  // Aliases of a node list do not get round it.
  EXPECT_TRUE(
      Contains(ErrorOf("nodes: [&n {namePrefix: a, count: 60000, allocatable: {cpu: 8}}, *n]\n"),
               "nodes[1].count: the scenario would have 120000 nodes"));
  EXPECT_LT(SecondsSince(start), 1.0);
}

TEST(ParseScenario, TaskCountsAreBoundedBeforeAnyIsBuilt) {
  auto start = std::chrono::steady_clock::now();
  const std::string nodes = kNode;
  // One job: 1 + 1,000,000 tasks.
  EXPECT_EQ(
      ErrorOf(nodes +
              "jobs:\n- name: j\n  tasks:\n  - {role: a}\n  - {role: b, replicas: 1000000}\n"),
      "s.yaml:7:25: jobs[0].tasks[1].replicas: job \"j\" would have 1000001 tasks, more than "
      "1000000 (the limit on tasks of a job)");
  // Three jobs of a million each: refused before the first million is built.
  std::string jobs = "jobs:\n";
  for (const char* name : {"a", "b", "c"}) {
    jobs += std::string("- {name: ") + name + ", tasks: [{replicas: 1000000}]}\n";
  }
  EXPECT_EQ(ErrorOf(nodes + jobs),
            "s.yaml:6:32: jobs[2].tasks[0].replicas: the scenario would have 3000000 tasks, more "
            "than 2000000 (the limit on tasks in a scenario)");
  EXPECT_LT(SecondsSince(start), 1.0);
}

TEST(ParseScenario, AliasesMakeNoMoreTasks) {
  // 1.5 KB of aliases made 3e8 tasks; here four jobs share one list of 600,000.
  const std::string text = std::string(kNode) +
                           "jobs:\n"
                           "- {name: a, tasks: &t [{role: x, replicas: 600000}]}\n"
                           "- {name: b, tasks: *t}\n"
                           "- {name: c, tasks: *t}\n"
                           "- {name: d, tasks: *t}\n";
  auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(Contains(ErrorOf(text),
                       "jobs[3].tasks[0].replicas: the scenario would have 2400000 tasks, "
                       "more than 2000000 (the limit on tasks in a scenario)"));
  EXPECT_LT(SecondsSince(start), 1.0);
}

TEST(ParseScenario, NamesAreBounded) {
  const std::string long_name(254, 'n');
  const std::string limit = " is longer than 253 bytes (the limit on names)";
  EXPECT_TRUE(Contains(ErrorOf("nodes:\n- {name: " + long_name + ", allocatable: {cpu: 8}}\n"),
                       "s.yaml:2:10: nodes[0].name: \"nnnn"));
  EXPECT_TRUE(Contains(ErrorOf("nodes:\n- {name: " + long_name + ", allocatable: {cpu: 8}}\n"),
                       "... (254 bytes)" + limit));
  EXPECT_TRUE(
      Contains(ErrorOf(std::string(kNode) + "jobs:\n- {name: " + long_name + ", tasks: [{}]}\n"),
               "jobs[0].name: "));
  EXPECT_TRUE(Contains(ErrorOf(std::string(kNode) + "queues:\n- {name: " + long_name + "}\n"),
                       "queues[0].name: "));
  EXPECT_TRUE(Contains(
      ErrorOf(std::string(kNode) + "jobs:\n- {name: j, tasks: [{role: " + long_name + "}]}\n"),
      "jobs[0].tasks[0].role: "));
  EXPECT_TRUE(Contains(ErrorOf("nodes:\n- {name: '', allocatable: {cpu: 8}}\n"),
                       "nodes[0].name: must not be empty"));
  // Names made from a prefix and a number, or a job, a role and a number.
  EXPECT_EQ(ErrorOf("nodes:\n- {namePrefix: " + std::string(250, 'p') +
                    ", count: 10000, allocatable: {cpu: 8}}\n"),
            "s.yaml:2:16: nodes[0].namePrefix: names \"" + std::string(64, 'p') +
                "\"... (254 bytes) would be longer than 253 bytes (the limit on names)");
  EXPECT_TRUE(Contains(ErrorOf(std::string(kNode) + "jobs:\n- {name: " + std::string(200, 'j') +
                               ", tasks: [{role: " + std::string(51, 'r') + ", replicas: 10}]}\n"),
                       "jobs[0].tasks[0]: task names \"jjjj"));
  EXPECT_TRUE(Contains(ErrorOf(std::string(kNode) + "jobs:\n- {name: " + std::string(200, 'j') +
                               ", tasks: [{role: " + std::string(51, 'r') + ", replicas: 10}]}\n"),
                       "(254 bytes) would be longer than 253 bytes (the limit on names)"));
  // At the limit is fine.
  EXPECT_EQ(ErrorOf("nodes:\n- {name: " + std::string(253, 'n') + ", allocatable: {cpu: 8}}\n"),
            "(ok)");
}

TEST(ParseScenario, LabelsAreBounded) {
  const std::string key(318, 'k'), value(1025, 'v');
  EXPECT_TRUE(
      Contains(ErrorOf("nodes:\n- {name: n, allocatable: {cpu: 8}, labels: {" + key + ": a}}\n"),
               "nodes[0].labels: label key \"kkkk"));
  EXPECT_TRUE(
      Contains(ErrorOf("nodes:\n- {name: n, allocatable: {cpu: 8}, labels: {" + key + ": a}}\n"),
               "(318 bytes) is longer than 317 bytes (the limit on label keys)"));
  EXPECT_TRUE(
      Contains(ErrorOf("nodes:\n- {name: n, allocatable: {cpu: 8}, labels: {a: " + value + "}}\n"),
               "nodes[0].labels.a: label value \"vvvv"));
  EXPECT_TRUE(
      Contains(ErrorOf("nodes:\n- {name: n, allocatable: {cpu: 8}, labels: {a: " + value + "}}\n"),
               "is longer than 1024 bytes (the limit on label values)"));
  EXPECT_TRUE(Contains(ErrorOf(std::string(kNode) + "jobs:\n- {name: j, tasks: [{nodeSelector: {" +
                               key + ": a}}]}\n"),
                       "jobs[0].tasks[0].nodeSelector: label key"));
  EXPECT_TRUE(Contains(
      ErrorOf("nodes:\n- {name: n, allocatable: {cpu: 8}, taints: [{key: " + key + "}]}\n"),
      "nodes[0].taints[0].key: label key"));
  EXPECT_EQ(ErrorOf("nodes:\n- {name: n, allocatable: {cpu: 8}, labels: {" + std::string(317, 'k') +
                    ": " + std::string(1024, 'v') + "}}\n"),
            "(ok)");
}

TEST(ParseScenario, ResourceNamesAreChecked) {
  // InternResource took any text as a resource name.
  EXPECT_TRUE(Contains(
      ErrorOf("nodes:\n- {name: n, allocatable: {cpu: 8, 'bad name!': 1}}\n"),
      "s.yaml:2:35: nodes[0].allocatable.bad name!: resource name \"bad name!\" is not valid"));
  EXPECT_TRUE(Contains(
      ErrorOf(std::string(kNode) + "jobs:\n- {name: j, tasks: [{requests: {'a/b/c': 1}}]}\n"),
      "jobs[0].tasks[0].requests.a/b/c: "));
}

TEST(ParseScenario, GpuFractionIsExact) {
  // 1e-9 of a GPU was bound as 0.001.
  const std::string text = std::string(kNode) + "jobs:\n- {name: j, tasks: [{gpuFraction: ";
  EXPECT_TRUE(Contains(ErrorOf(text + "1e-9}]}\n"),
                       "s.yaml:4:35: jobs[0].tasks[0].gpuFraction: invalid quantity \"1e-9\": "
                       "finer than a thousandth"));
  EXPECT_TRUE(Contains(ErrorOf(text + "0.0005}]}\n"), "jobs[0].tasks[0].gpuFraction: "));
  auto ok = Must(ParseScenario(text + "0.25}]}\n", "s.yaml"));
  EXPECT_EQ(ok.cluster.specs()[0].gpu.milli, 250);
}

TEST(ParseScenario, DeepOrAliasedYamlIsRefused) {
  EXPECT_TRUE(
      Contains(ErrorOf(std::string(200, '[')), "s.yaml:1:101: nesting deeper than 100 levels"));
  std::string laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    laughs += std::string(1, c) + ": &" + c + " [*" + static_cast<char>(c - 1);
    for (int k = 0; k < 9; ++k) laughs += ", *" + std::string(1, static_cast<char>(c - 1));
    laughs += "]\n";
  }
  EXPECT_TRUE(Contains(ErrorOf(laughs), "come from aliases, more than 99% (the limit on aliases"));
}

TEST(ParseScenario, DuplicateNodeNamesSayWhere) {
  EXPECT_EQ(
      ErrorOf("nodes:\n- {name: n0, allocatable: {cpu: 8}}\n- {name: n0, allocatable: {cpu: 8}}\n"),
      "s.yaml:3:10: nodes[1].name: node \"n0\" is defined twice");
}

// ---------------------------------------------------------------- pod spec fields

Labels OneLabel(const std::string& key, const std::string& value) {
  Labels labels;
  labels.Set(key, value);
  return labels;
}

// The one spec of the scenario's first job.
TaskSpec SpecOf(const std::string& task_yaml, const std::string& more = "") {
  const Scenario s = Must(ParseScenario(
      std::string(kNode) + more + "jobs:\n- name: j\n  tasks:\n" + task_yaml, "s.yaml"));
  return s.cluster.spec_of(s.cluster.job(0).tasks[0]);
}

TEST(ParseScenarioPodSpec, NamespaceDefaultsAndLabels) {
  TaskSpec plain = SpecOf("  - {requests: {cpu: 1}}\n");
  EXPECT_EQ(plain.namespace_, "default");
  EXPECT_TRUE(plain.labels.empty());
  EXPECT_FALSE(plain.has_pod_constraints());
  TaskSpec named = SpecOf("  - {namespace: prod, labels: {app: web, tier: front}}\n");
  EXPECT_EQ(named.namespace_, "prod");
  Labels want = OneLabel("app", "web");
  want.Set("tier", "front");
  EXPECT_EQ(named.labels, want);
}

TEST(ParseScenarioPodSpec, NodeAffinityInKubernetesShape) {
  TaskSpec spec = SpecOf(R"(  - affinity:
      nodeAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          nodeSelectorTerms:
            - matchExpressions: [{key: cores, operator: Gt, values: ["-3"]}]
              matchFields: [{key: metadata.name, operator: NotIn, values: [n0]}]
            - {}
        preferredDuringSchedulingIgnoredDuringExecution:
          - {weight: 7, preference: {matchFields: [{key: metadata.name, operator: In, values: [n1]}]}}
)");
  using Op = SelectorRequirement::Op;
  ASSERT_EQ(spec.affinity.terms.size(), 2u);
  EXPECT_EQ(spec.affinity.terms[0],
            (std::vector<SelectorRequirement>{{"cores", Op::kGt, {"-3"}},
                                              {std::string(kNodeNameField), Op::kNotIn, {"n0"}}}));
  EXPECT_TRUE(spec.affinity.terms[1].empty());  // matches no node, as in Kubernetes
  ASSERT_EQ(spec.affinity.preferred.size(), 1u);
  EXPECT_EQ(spec.affinity.preferred[0].weight, 7);
  EXPECT_EQ(spec.affinity.preferred[0].term,
            (std::vector<SelectorRequirement>{{std::string(kNodeNameField), Op::kIn, {"n1"}}}));
  // The shorthand takes matchFields too.
  TaskSpec shorthand = SpecOf(
      "  - nodeAffinity: [{matchFields: [{key: metadata.name, operator: In, values: [n0]}]}]\n");
  EXPECT_EQ(shorthand.affinity.terms.size(), 1u);
}

TEST(ParseScenarioPodSpec, PodAffinityTermsWithLabelKeysMergedAsKubeApiserverDoes) {
  TaskSpec spec = SpecOf(R"(  - labels: {app: web, tenant: t1, rev: "7"}
    affinity:
      podAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector: {matchLabels: {app: web}}
            topologyKey: zone
            namespaces: [prod, dev]
            matchLabelKeys: [rev, missing]
        preferredDuringSchedulingIgnoredDuringExecution:
          - weight: 40
            podAffinityTerm: {labelSelector: {}, namespaceSelector: {matchLabels: {team: a}}, topologyKey: rack}
      podAntiAffinity:
        requiredDuringSchedulingIgnoredDuringExecution:
          - {labelSelector: {matchExpressions: [{key: app, operator: Exists}]}, topologyKey: kubernetes.io/hostname, mismatchLabelKeys: [tenant]}
        preferredDuringSchedulingIgnoredDuringExecution:
          - {weight: 100, podAffinityTerm: {labelSelector: null, topologyKey: zone}}
)");
  using Op = SelectorRequirement::Op;
  const PodAffinity& pa = spec.pod_affinity;
  ASSERT_EQ(pa.required_affinity.size(), 1u);
  const PodAffinityTerm& req = pa.required_affinity[0];
  ASSERT_TRUE(req.selector.has_value());
  EXPECT_EQ(req.selector->match_labels, OneLabel("app", "web"));
  // rev In (the pod's own value); "missing", which the pod lacks, is left out.
  EXPECT_EQ(req.selector->match_expressions,
            (std::vector<SelectorRequirement>{{"rev", Op::kIn, {"7"}}}));
  EXPECT_EQ(req.namespaces, (std::vector<std::string>{"prod", "dev"}));
  EXPECT_FALSE(req.namespace_selector.has_value());
  EXPECT_EQ(req.topology_key, "zone");
  EXPECT_EQ(req.weight, 0);
  ASSERT_EQ(pa.preferred_affinity.size(), 1u);
  EXPECT_EQ(pa.preferred_affinity[0].weight, 40);
  EXPECT_TRUE(pa.preferred_affinity[0].selector->empty());
  EXPECT_EQ(pa.preferred_affinity[0].namespace_selector->match_labels, OneLabel("team", "a"));
  ASSERT_EQ(pa.required_anti_affinity.size(), 1u);
  EXPECT_EQ(
      pa.required_anti_affinity[0].selector->match_expressions,
      (std::vector<SelectorRequirement>{{"app", Op::kExists, {}}, {"tenant", Op::kNotIn, {"t1"}}}));
  ASSERT_EQ(pa.preferred_anti_affinity.size(), 1u);
  EXPECT_FALSE(pa.preferred_anti_affinity[0].selector.has_value());  // null: matches no pod
  EXPECT_TRUE(spec.has_pod_constraints());
}

TEST(ParseScenarioPodSpec, TopologySpreadConstraints) {
  TaskSpec spec = SpecOf(R"(  - labels: {app: web, pod-template-hash: abc}
    topologySpreadConstraints:
      - maxSkew: 2
        topologyKey: zone
        whenUnsatisfiable: DoNotSchedule
        minDomains: 3
        nodeAffinityPolicy: Ignore
        nodeTaintsPolicy: Honor
        labelSelector: {matchLabels: {app: web}}
        matchLabelKeys: [pod-template-hash]
      - {maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway}
)");
  using When = TopologySpreadConstraint::WhenUnsatisfiable;
  ASSERT_EQ(spec.spread.size(), 2u);
  const TopologySpreadConstraint& a = spec.spread[0];
  EXPECT_EQ(a.max_skew, 2);
  EXPECT_EQ(a.topology_key, "zone");
  EXPECT_EQ(a.when_unsatisfiable, When::kDoNotSchedule);
  EXPECT_EQ(a.min_domains, 3);
  EXPECT_FALSE(a.honor_node_affinity);
  EXPECT_TRUE(a.honor_node_taints);
  EXPECT_EQ(a.selector->match_expressions,
            (std::vector<SelectorRequirement>{
                {"pod-template-hash", SelectorRequirement::Op::kIn, {"abc"}}}));
  const TopologySpreadConstraint& b = spec.spread[1];
  EXPECT_EQ(b.when_unsatisfiable, When::kScheduleAnyway);
  EXPECT_EQ(b.min_domains, 0);
  EXPECT_TRUE(b.honor_node_affinity);  // Kubernetes' defaults
  EXPECT_FALSE(b.honor_node_taints);
  EXPECT_FALSE(b.selector.has_value());  // none: counts no pod
}

TEST(ParseScenarioPodSpec, OnlyPortsWithAHostPortCount) {
  TaskSpec spec = SpecOf(R"(  - ports:
      - {containerPort: 80}
      - {containerPort: 80, hostPort: 0}
      - {name: http, containerPort: 8080, hostPort: 80}
      - {containerPort: 53, hostPort: 53, protocol: UDP, hostIP: 0.0.0.0}
      - {containerPort: 53, hostPort: 53, protocol: SCTP, hostIP: 10.0.0.1}
)");
  ASSERT_EQ(spec.host_ports.size(), 3u);
  EXPECT_EQ(spec.host_ports[0], (HostPort{"TCP", "", 80}));
  EXPECT_EQ(spec.host_ports[1], (HostPort{"UDP", "", 53}));  // 0.0.0.0: every IP
  EXPECT_EQ(spec.host_ports[2], (HostPort{"SCTP", "10.0.0.1", 53}));
}

TEST(ParseScenarioPodSpec, TolerationsAsKubernetesWritesThem) {
  TaskSpec spec = SpecOf(R"(  - tolerations:
      - {key: maintenance, operator: Exists, effect: NoExecute, tolerationSeconds: 300}
      - {key: dedicated, operator: "", value: gpu}
      - {operator: Exists}
)");
  ASSERT_EQ(spec.tolerations.size(), 3u);
  EXPECT_EQ(spec.tolerations[0].effect, TaintEffect::kNoExecute);
  EXPECT_FALSE(spec.tolerations[0].any_effect);
  EXPECT_EQ(spec.tolerations[1].op, Toleration::Op::kEqual);  // "": Equal
  EXPECT_TRUE(spec.tolerations[2].key.empty());
  EXPECT_TRUE(spec.tolerations[2].any_effect);
}

TEST(ParseScenarioPodSpec, NamespacesCarryLabels) {
  const Scenario s = Must(ParseScenario(
      std::string(kNode) + "namespaces:\n- {name: prod, labels: {team: a}}\n- {name: dev}\n",
      "s.yaml"));
  EXPECT_EQ(s.cluster.namespace_labels("prod"), OneLabel("team", "a"));
  EXPECT_TRUE(s.cluster.namespace_labels("dev").empty());
}

}  // namespace
}  // namespace gantry

// The scenario writer (sim/scenario_writer.h): what it writes parses back to the same
// cluster, for shipped scenarios of each kind it carries (gangs, running placements with
// devices, shares of GPUs, queue trees, taints and tolerations, topology, NVLink domains,
// movable pods, CompositePodGroup trees) and for a snapshot's profile and arrivals.
#include "sim/scenario_writer.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "model/quantity.h"
#include "sim/scenario_reader.h"

namespace gantry {
namespace {

std::string Amounts(const ResourceVector& v) {
  std::string out = "{";
  for (const auto& e : v.entries())
    out += ResourceName(e.id) + "=" + std::to_string(e.amount) + " ";
  return out + "}";
}

std::string LabelText(const Labels& labels) {
  std::string out = "{";
  for (const auto& [k, v] : labels.pairs()) out += k + "=" + v + " ";
  return out + "}";
}

std::string GpuText(const GpuRequest& g) {
  std::string out = "gpu(" + std::to_string(g.count) + "," + std::to_string(g.milli) + "," +
                    std::to_string(g.memory_mib);
  for (GpuModelId m : g.models) out += "," + GpuModels().Name(m);
  return out + ")";
}

// Everything the writer promises to keep, in a canonical text (written here, not by the
// code under test): nodes, queues, jobs in creation order with their tasks, where each
// runs and on which devices, and the profile.
std::string Describe(const ClusterState& c) {
  std::ostringstream out;
  out << "levels:";
  for (const std::string& k : c.topology_keys()) out << " " << k;
  out << "\n";
  for (const Node& n : c.nodes()) {
    if (n.removed) continue;
    out << "node " << n.name << " " << Amounts(n.allocatable) << " " << LabelText(n.labels)
        << " unschedulable=" << n.unschedulable << " taints:";
    for (const Taint& t : n.taints) out << " " << t.ToString();
    out << " gpus:";
    for (const GpuDevice& g : n.gpus) {
      out << " " << GpuModels().Name(g.model) << "/" << g.memory_mib << "/" << g.nvlink_domain
          << "/used=" << g.used_milli;
    }
    out << " used=" << Amounts(n.used) << "\n";
  }
  for (const Queue& q : c.queues()) {
    out << "queue " << q.name << " w=" << q.weight << " g=" << Amounts(q.guarantee)
        << " cap=" << Amounts(q.capability) << " d=" << Amounts(q.deserved)
        << " parent=" << (q.parent == kNone ? "-" : c.queue(q.parent).name)
        << " reclaimable=" << q.reclaimable << " movable=" << q.movable
        << " halflife=" << q.usage_half_life_s << " usage=" << Amounts(q.usage)
        << " allocated=" << Amounts(q.allocated) << "\n";
  }
  std::vector<JobId> jobs;
  for (JobId j = 0; j < c.jobs().size(); ++j) jobs.push_back(j);
  std::sort(jobs.begin(), jobs.end(),
            [&](JobId a, JobId b) { return c.job(a).creation < c.job(b).creation; });
  for (JobId j : jobs) {
    const Job& job = c.job(j);
    out << "job " << job.name << " queue=" << c.queue(job.queue).name << " prio=" << job.priority
        << " min=" << job.min_member << " submitted=" << job.submitted
        << " topology=" << job.topology.level << "/" << job.topology.required << " groups:";
    for (const TaskGroup& g : job.groups) {
      out << " " << g.name << "<" << g.parent << (g.leaf ? " tasks>=" : " groups>=") << g.min;
    }
    out << "\n";
    for (TaskId t : job.tasks) {
      const Task& task = c.task(t);
      const TaskSpec& s = c.spec_of(t);
      out << "  task " << task.name << " role=" << s.role << " " << Amounts(s.requests) << " "
          << GpuText(s.gpu) << " prio=" << s.priority
          << " never=" << (s.preemption_policy == PreemptionPolicy::kNever)
          << " ns=" << s.namespace_ << " labels=" << LabelText(s.labels)
          << " selector=" << LabelText(s.node_selector) << " tolerations=" << s.tolerations.size()
          << " movable=" << task.movable << " group=" << task.group
          << " state=" << static_cast<int>(task.state);
      if (task.state == TaskState::kRunning) {
        out << " on " << c.node(task.node).name << " devices";
        for (int32_t g : task.gpus) out << " " << g;
        out << " share=" << task.gpu_milli_each;
      }
      out << "\n";
    }
  }
  out << "profile total=" << c.workload_profile().total << "\n";
  for (const TaskType& t : c.workload_profile().types) {
    out << "  " << t.count << " " << Amounts(t.requests) << " " << GpuText(t.gpu) << "\n";
  }
  return out.str();
}

Scenario MustParse(const std::string& text, const std::string& source) {
  auto parsed = ParseScenario(text, source);
  EXPECT_TRUE(parsed.ok()) << parsed.status().message() << "\n" << text;
  return parsed.ok() ? std::move(parsed).value() : Scenario{};
}

class RoundTrip : public ::testing::TestWithParam<const char*> {};

TEST_P(RoundTrip, WrittenScenarioParsesToTheSameCluster) {
  const std::string path = std::string(GANTRY_SOURCE_DIR) + "/tests/scenario/" + GetParam();
  auto original = LoadScenario(path);
  ASSERT_TRUE(original.ok()) << original.status().message();
  const WrittenScenario written = WriteScenario(original->cluster, {});
  EXPECT_TRUE(written.left_out.empty()) << written.left_out.front();
  const Scenario again = MustParse(written.text, "written.yaml");
  EXPECT_EQ(Describe(again.cluster), Describe(original->cluster)) << written.text;
  // And writing is a fixed point.
  EXPECT_EQ(WriteScenario(again.cluster, {}).text, written.text);
}

INSTANTIATE_TEST_SUITE_P(
    ShippedScenarios, RoundTrip,
    ::testing::Values("gang_running_members.yaml", "drf_job_order.yaml", "nvlink_domain.yaml",
                      "defragment_moves_movable_pods_to_free_a_node.yaml",
                      "defragment_required_topology_gang_gets_a_whole_leaf.yaml",
                      "defragment_queue_movable.yaml", "queue_tree_three_levels.yaml",
                      "gpu_fraction_same_device.yaml", "gpu_memory_dominates_fraction.yaml",
                      "prefer_no_schedule_steering.yaml", "no_preempt_no_evictions.yaml",
                      "topology_domains_nest_under_their_parents.yaml",
                      "composite_group_nested.yaml",
                      "preempt_composite_group_takes_a_whole_child.yaml"));

TEST(WriteScenario, RunningPlacementsKeepTheirDevicesAndWaitsTheirTime) {
  const Scenario s = MustParse(R"(
nodes:
  - {name: n0, allocatable: {cpu: "16", memory: 64Gi}, gpus: {count: 4, model: A100}}
queues: [{name: ml, weight: 3}]
jobs:
  - {name: train, queue: ml, minMember: 2, waited: 90,
     tasks: [{role: w, replicas: 2, requests: {cpu: "2", nvidia.com/gpu: 2}}]}
running:
  - {job: train, role: w, node: n0, gpus: [2, 3]}
)",
                               "s.yaml");
  const std::string text = WriteScenario(s.cluster, {}).text;
  EXPECT_NE(text.find("{job: train, role: w, node: n0, gpus: [2, 3]}"), std::string::npos) << text;
  EXPECT_NE(text.find("waited: 90"), std::string::npos) << text;
  EXPECT_NE(text.find("minMember: 2"), std::string::npos) << text;
  EXPECT_NE(text.find("{cpu: 16, memory: 64Gi}"), std::string::npos) << text;
  // The snapshot's clock: a job submitted at 1000 and written at 1300 waited 300 s (+90).
  ScenarioWriteOptions at;
  at.now = 300;
  EXPECT_NE(WriteScenario(s.cluster, at).text.find("waited: 390"), std::string::npos);
}

TEST(WriteScenario, ProfileAndArrivalsRoundTrip) {
  const Scenario s = MustParse(R"(
nodes: [{name: n0, allocatable: {cpu: "64"}, gpus: {count: 8}}]
snapshot: {arrivalWindowSeconds: 1800}
profile:
  - {count: 40, task: {requests: {cpu: "8", nvidia.com/gpu: 8}}}
  - {count: 700, task: {requests: {cpu: "1"}, gpuFraction: 250m}}
arrivals:
  - {name: a, at: -1700, queue: ml, minMember: 2, durationSeconds: 60,
     task: {replicas: 2, requests: {cpu: "4", nvidia.com/gpu: 1}}}
  - {name: b, at: 0, priority: 5, task: {requests: {cpu: "1"}, gpuFraction: 500m}}
)",
                               "s.yaml");
  ASSERT_EQ(s.cluster.workload_profile().types.size(), 2u);
  EXPECT_EQ(s.cluster.workload_profile().types[0].count, 700);  // most frequent first
  EXPECT_EQ(s.cluster.workload_profile().total, 740);
  ASSERT_EQ(s.snapshot.arrivals.size(), 2u);
  ScenarioWriteOptions options;
  options.snapshot = &s.snapshot;
  const std::string text = WriteScenario(s.cluster, options).text;
  const Scenario again = MustParse(text, "written.yaml");
  EXPECT_EQ(Describe(again.cluster), Describe(s.cluster)) << text;
  EXPECT_EQ(again.snapshot.arrival_window_s, 1800);
  ASSERT_EQ(again.snapshot.arrivals.size(), 2u);
  const std::vector<SimJob> jobs = SnapshotArrivals(again.snapshot);
  EXPECT_EQ(jobs[0].name, "a");
  EXPECT_EQ(jobs[0].submit, 100);  // 1800 - 1700: the window again, from the snapshot on
  EXPECT_EQ(jobs[0].pods, 2);
  EXPECT_EQ(jobs[0].min_member, 2);
  EXPECT_EQ(jobs[0].duration, 60);
  EXPECT_EQ(jobs[0].queue, "ml");
  EXPECT_EQ(jobs[0].spec.gpu.count, 1);
  EXPECT_EQ(jobs[1].submit, 1800);
  EXPECT_EQ(jobs[1].priority, 5);
  EXPECT_EQ(jobs[1].spec.gpu.milli, 500);
}

TEST(WriteScenario, WhatTheFormatCannotCarryIsListed) {
  const Scenario s = MustParse(R"(
nodes: [{name: n0, allocatable: {cpu: "8"}, labels: {zone: a}}]
jobs:
  - name: web
    tasks:
      - replicas: 2
        labels: {app: web}
        affinity:
          podAntiAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              - {labelSelector: {matchLabels: {app: web}}, topologyKey: zone}
)",
                               "s.yaml");
  const WrittenScenario written = WriteScenario(s.cluster, {});
  ASSERT_EQ(written.left_out.size(), 1u);
  EXPECT_EQ(written.left_out[0], "pod affinity of 2 tasks");
  EXPECT_NE(written.text.find("#   pod affinity of 2 tasks"), std::string::npos) << written.text;
  EXPECT_TRUE(ParseScenario(written.text, "w.yaml").ok());
}

TEST(WriteScenario, SnapshotsWriteRunningTasksAsBoundEvenPastTheRoom) {
  // A node the API server overcommitted (its allocatable shrank under its pods): Place
  // refuses the second task, PlaceBound counts it, as the daemon does.
  ClusterState c;
  Node n;
  n.name = "n0";
  n.allocatable.Set(kCpu, 4000);
  ASSERT_TRUE(c.AddNode(n).ok());
  Queue q;
  q.name = "default";
  const QueueId queue = c.AddQueue(q).value();
  Job j;
  j.name = "web";
  j.queue = queue;
  const JobId job = c.AddJob(j).value();
  TaskSpec spec;
  spec.role = "w";
  spec.requests.Set(kCpu, 3000);
  const SpecId s = c.AddSpec(spec);
  for (const char* name : {"a", "b"}) {
    const TaskId t = c.AddTask(job, s, name).value();
    ASSERT_TRUE(c.PlaceBound(t, 0, {}).ok());
  }
  EXPECT_FALSE(ParseScenario(WriteScenario(c, {}).text, "plain.yaml").ok());
  ScenarioWriteOptions bound;
  bound.running_bound = true;
  const std::string text = WriteScenario(c, bound).text;
  auto again = ParseScenario(text, "bound.yaml");
  ASSERT_TRUE(again.ok()) << again.status().message() << "\n" << text;
  EXPECT_EQ(again->cluster.node(0).used.Get(kCpu), 6000);
}

TEST(WriteScenario, ATopologyLevelNoNodeHasIsLeftOut) {
  ClusterState c;
  Node n;
  n.name = "n0";
  n.allocatable.Set(kCpu, 4000);
  ASSERT_TRUE(c.AddNode(n).ok());  // no rack label
  Queue q;
  q.name = "default";
  Job j;
  j.name = "train";
  j.queue = c.AddQueue(q).value();
  j.topology = {"topology.gantry.dev/rack", true};
  const JobId job = c.AddJob(j).value();
  ASSERT_TRUE(c.AddTask(job, c.AddSpec(TaskSpec{}), "t").ok());
  const WrittenScenario written = WriteScenario(c, {});
  ASSERT_EQ(written.left_out.size(), 1u);
  EXPECT_EQ(written.left_out[0], "a topology level no node has of 1 job");
  EXPECT_TRUE(ParseScenario(written.text, "w.yaml").ok()) << written.text;
}

}  // namespace
}  // namespace gantry

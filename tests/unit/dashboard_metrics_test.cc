// The dashboard's gauges (daemon/dashboard_metrics.h, gpu_usage.h, pending_reasons.h):
// values after a known cycle on the daemon's cluster cache, computed here by hand.
#include "daemon/dashboard_metrics.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <unordered_map>

#include "daemon/cluster_cache.h"
#include "daemon/gpu_usage.h"
#include "daemon/pending_reasons.h"
#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

using json = nlohmann::json;
using k8s::EventType;

// ---------------------------------------------------------------- pending reasons

TEST(PendingReasons, EngineWordsToKinds) {
  const std::pair<const char*, PendingKind> cases[] = {
      {"0/4 nodes are available: 4 Insufficient nvidia.com/gpu.", PendingKind::kNoFit},
      {"no nodes available to schedule pods", PendingKind::kNoFit},
      {"task w-1: 0/4 nodes are available: 4 Insufficient cpu.", PendingKind::kNoFit},
      {"not admitted: queue research capability: nvidia.com/gpu 8 of 8 in use",
       PendingKind::kQueueLimit},
      {"not admitted: gang: the job has 2 task(s) but minMember is 3", PendingKind::kGangShort},
      {"queue research has its deserved share (nvidia.com/gpu: 4 of 4)", PendingKind::kQueueLimit},
      {"gang: 1 of minMember 4 tasks could be placed (3 short), so none were; task w-1: 0/2 "
       "nodes are available: 2 Insufficient nvidia.com/gpu.",
       PendingKind::kGangShort},
      {"gang: 0 of minMember 4 tasks could be placed (4 short), so none were; task w-0: "
       "topology: its gang must stay inside one rack domain (required), and none of the 2 has "
       "room for it",
       PendingKind::kTopology},
      {"topology: no node has the label rack", PendingKind::kTopology},
      {"placed 2 task(s); the rest wait: task w-2: queue team would exceed its capability",
       PendingKind::kQueueLimit},
      {"placed 2 task(s); the rest wait: task w-2: 0/3 nodes are available: 3 Too many pods.",
       PendingKind::kNoFit},
      {"not considered: no action of this session placed it", PendingKind::kNotConsidered},
      // A note after the first reason (preempt's, reserve's) does not change its kind.
      {"0/2 nodes are available: 2 Insufficient cpu.; preempt: no victims of lower priority",
       PendingKind::kNoFit},
      {"something new", PendingKind::kOther},
      {"", PendingKind::kOther},
  };
  for (const auto& [reason, want] : cases) {
    EXPECT_EQ(PendingKindName(ClassifyPendingReason(reason)), PendingKindName(want)) << reason;
  }
}

TEST(PendingReasons, EveryKindHasItsOwnName) {
  std::set<std::string_view> names;
  for (PendingKind k : AllPendingKinds()) names.insert(PendingKindName(k));
  EXPECT_EQ(names.size(), 12u);
  EXPECT_EQ(names.count("other"), 1u);
  EXPECT_EQ(names.count("queue_limit"), 1u);
}

// ---------------------------------------------------------------- GPU usage

TEST(GpuUsage, DevicesByState) {
  ClusterState c;
  AddGpuNode(c, "n1", 4);
  AddGpuNode(c, "n2", 2);
  const JobId job = AddEmptyJob(c, "j", AddQueue(c, "q"));
  const SpecId whole = c.AddSpec(GpuSpec(2, 1000));
  const SpecId half = c.AddSpec(SharedSpec(500));
  const TaskId t1 = Must(c.AddTask(job, whole, "w"));
  const TaskId t2 = Must(c.AddTask(job, half, "h"));
  ASSERT_TRUE(c.Place(t1, 0, std::vector<int32_t>{0, 1}).ok());
  ASSERT_TRUE(c.Place(t2, 1, std::vector<int32_t>{1}).ok());
  // n1: 2 taken, 2 free; n2: one half taken, one free.
  EXPECT_EQ(CountGpuDevices(c), (GpuDeviceCounts{2, 1, 3, 0, 0}));
}

// A node whose state is known: 4 devices with 0, 0, 500 and 1000 milli free, 56 cores free.
// Types 1 GPU (weight 0.4), 2 GPUs, 0.5 GPU and 8 GPUs (0.2 each):
//  - 1 GPU fits (a whole device is free): the 500 left on the shared device is a fragment;
//  - 2 GPUs and 8 GPUs do not fit: all 1500 free is a fragment to them;
//  - 0.5 fits, and no device has less free than it needs but more than 0: nothing.
// 0.4 x 500 + 0.2 x 1500 + 0.2 x 0 + 0.2 x 1500 = 800 milli-GPUs.
constexpr double kKnownFragmentedGpus = 0.8;

TEST(GpuUsage, FragmentedGpusByHand) {
  ClusterState c;
  AddGpuNode(c, "n1", 4);
  const JobId job = AddEmptyJob(c, "j", AddQueue(c, "q"));
  const TaskId whole = Must(c.AddTask(job, c.AddSpec(GpuSpec(2, 4000)), "w"));
  TaskSpec half_spec = SharedSpec(500);
  half_spec.requests.Set(kCpu, 4000);
  const TaskId half = Must(c.AddTask(job, c.AddSpec(half_spec), "h"));
  ASSERT_TRUE(c.Place(whole, 0, std::vector<int32_t>{0, 1}).ok());
  ASSERT_TRUE(c.Place(half, 0, std::vector<int32_t>{2}).ok());
  const WorkloadProfile profile =
      TypesProfile({WholeGpuType(4000, 1, 2), WholeGpuType(4000, 2, 1), SharedGpuType(4000, 500, 1),
                    WholeGpuType(4000, 8, 1)});
  EXPECT_NEAR(FragmentedGpus(c, profile), kKnownFragmentedGpus, 1e-9);
  EXPECT_EQ(FragmentedGpus(c, WorkloadProfile{}), 0);
}

TEST(GpuUsage, ProfileOfTasksCountsShapesMostFrequentFirst) {
  ClusterState c;
  const JobId job = AddEmptyJob(c, "j", AddQueue(c, "q"));
  const SpecId two = c.AddSpec(GpuSpec(2, 4000));
  const SpecId one = c.AddSpec(GpuSpec(1, 4000));
  TaskSpec one_again = GpuSpec(1, 4000);
  one_again.role = "other";  // another spec of the same shape: the same type
  const SpecId one_other = c.AddSpec(one_again);
  (void)Must(c.AddTask(job, two, "a"));
  (void)Must(c.AddTask(job, one, "b"));
  (void)Must(c.AddTask(job, one_other, "c"));
  const WorkloadProfile p = ProfileOfTasks(c);
  ASSERT_EQ(p.types.size(), 2u);
  EXPECT_EQ(p.total, 3);
  EXPECT_EQ(p.types[0].gpu.count, 1);
  EXPECT_EQ(p.types[0].count, 2);
  EXPECT_EQ(p.types[1].gpu.count, 2);
  EXPECT_EQ(p.types[1].count, 1);
}

// ---------------------------------------------------------------- after a known cycle

json NodeObject(const std::string& name, int gpus) {
  return {{"metadata",
           {{"name", name},
            {"uid", "uid-" + name},
            {"resourceVersion", "1"},
            {"labels", {{"nvidia.com/gpu.product", "A100-SXM4-80GB"}}}}},
          {"status",
           {{"allocatable",
             {{"cpu", "64"},
              {"memory", "512Gi"},
              {"pods", "110"},
              {"nvidia.com/gpu", std::to_string(gpus)}}}}}};
}

json PodObject(const std::string& name, int gpus) {
  json requests = {{"cpu", "4"}};
  if (gpus > 0) requests["nvidia.com/gpu"] = std::to_string(gpus);
  return {{"metadata",
           {{"name", name}, {"namespace", "ml"}, {"uid", "uid-" + name}, {"resourceVersion", "1"}}},
          {"spec",
           {{"schedulerName", "gantry"},
            {"containers", {{{"name", "c"}, {"resources", {{"requests", requests}}}}}}}},
          {"status", {{"phase", "Pending"}}}};
}

// The value of the sample `series` (name and labels as rendered) in an exposition.
double Sample(const std::string& text, const std::string& series) {
  const size_t at = text.find("\n" + series + " ");
  if (at == std::string::npos) {
    ADD_FAILURE() << "no sample " << series << " in:\n" << text;
    return -1;
  }
  return std::stod(text.substr(at + series.size() + 2));
}

TEST(DashboardMetrics, AfterAKnownCycle) {
  ClusterCache cache("gantry");
  cache.OnNode(EventType::kAdded, NodeObject("n1", 4));
  // Bound already: half of device 3.
  json half = PodObject("half", 0);
  half["spec"]["nodeName"] = "n1";
  half["metadata"]["annotations"] = {{"gantry.dev/gpu-fraction", "0.5"},
                                     {"gantry.dev/gpu-devices", "3"}};
  cache.OnPod(EventType::kAdded, half);
  cache.OnPod(EventType::kAdded, PodObject("fits", 2));  // placed by the cycle
  cache.OnPod(EventType::kAdded, PodObject("huge", 8));  // no node has 8 GPUs
  cache.OnPodGroup(k8s::GroupApi::kVolcano, EventType::kAdded,
                   {{"metadata", {{"name", "g"}, {"namespace", "ml"}, {"uid", "uid-pg-g"}}},
                    {"spec", {{"minMember", 3}}}});
  for (const char* name : {"g-0", "g-1"}) {  // a gang of 3 with 2 pods
    json pod = PodObject(name, 1);
    pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"] = "g";
    cache.OnPod(EventType::kAdded, pod);
  }
  json gated = PodObject("gated", 1);
  gated["spec"]["schedulingGates"] = json::array({{{"name", "example.com/wait"}}});
  cache.OnPod(EventType::kAdded, gated);
  json bad = PodObject("bad", 0);
  bad["metadata"]["annotations"] = {{"gantry.dev/gpu-fraction", "1.5"}};
  cache.OnPod(EventType::kAdded, bad);

  // The cycle, as Scheduler::RunCycle runs it.
  const Decisions decisions = RunSession(cache.state());
  ASSERT_EQ(decisions.binds.size(), 1u);
  std::unordered_map<JobId, PendingKind> kinds;
  for (const PendingJob& p : decisions.pending) kinds[p.job] = ClassifyPendingReason(p.reason);
  (void)cache.Assume(decisions);

  MetricsRegistry registry;
  DashboardMetrics metrics = Must(DashboardMetrics::Register(registry));
  metrics.PublishGpus(cache.state());
  metrics.PublishPending(cache.PendingPodsByKind(kinds));
  const std::string text = "\n" + registry.Render();

  // fits took two whole devices, half shares device 3, one is free.
  EXPECT_EQ(Sample(text, "gantry_gpu_devices{state=\"allocated\"}"), 2);
  EXPECT_EQ(Sample(text, "gantry_gpu_devices{state=\"shared\"}"), 1);
  EXPECT_EQ(Sample(text, "gantry_gpu_devices{state=\"free\"}"), 1);
  EXPECT_EQ(Sample(text, "gantry_mig_devices{state=\"allocated\"}"), 0);
  EXPECT_EQ(Sample(text, "gantry_mig_devices{state=\"free\"}"), 0);
  // The cluster has no workload profile: the tasks in it are the workload. Types 1 GPU (the
  // two gang pods), 0.5 (half), 2 (fits), 8 (huge), each of 4 cores: the node of
  // kKnownFragmentedGpus (cpu 64 less 8 taken), all types needed for 95% coverage.
  EXPECT_NEAR(Sample(text, "gantry_gpus_fragmented"), kKnownFragmentedGpus, 1e-9);
  // Waiting: huge (no fit), the gang's two pods, the gated pod, the unreadable one.
  EXPECT_EQ(Sample(text, "gantry_pending_pods_by_reason{reason=\"no_fit\"}"), 1);
  EXPECT_EQ(Sample(text, "gantry_pending_pods_by_reason{reason=\"gang_short\"}"), 2);
  EXPECT_EQ(Sample(text, "gantry_pending_pods_by_reason{reason=\"gated\"}"), 1);
  EXPECT_EQ(Sample(text, "gantry_pending_pods_by_reason{reason=\"invalid\"}"), 1);
  for (const char* zero : {"queue_limit", "topology", "volume", "group_missing", "bind_backoff",
                           "preempting", "not_considered", "other"}) {
    EXPECT_EQ(Sample(text, "gantry_pending_pods_by_reason{reason=\"" + std::string(zero) + "\"}"),
              0)
        << zero;
  }
  // Before any cycle, a pod waits as not considered.
  cache.OnPod(EventType::kAdded, PodObject("late", 1));
  EXPECT_EQ(cache.PendingPodsByKind(kinds)[PendingKind::kNotConsidered], 1);
}

TEST(DashboardMetrics, NamesAreTakenOnce) {
  MetricsRegistry registry;
  ASSERT_TRUE(DashboardMetrics::Register(registry).ok());
  auto again = DashboardMetrics::Register(registry);
  ASSERT_FALSE(again.ok());
  EXPECT_TRUE(Contains(again.status().message(), "gantry_gpu_devices"));
}

}  // namespace
}  // namespace gantry

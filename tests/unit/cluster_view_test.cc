// The live page's view of a cluster (daemon/cluster_view.h) and its JSON (cluster_api.h),
// each expected value written out by hand from the cluster built here.
#include "daemon/cluster_view.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "daemon/cluster_api.h"
#include "tests/unit/test_cluster.h"

namespace gantry {
namespace {

using nlohmann::json;

ResourceId Mig(const std::string& profile) {
  return InternResource("nvidia.com/mig-" + profile);
}

TaskSpec MigSpec(const std::string& profile) {
  TaskSpec spec;
  spec.role = "mig";
  spec.requests = ResourceVector{{kCpu, 1000}};
  spec.requests.Set(Mig(profile), kMilliPerUnit);
  return spec;
}

JobId AddNamedJob(ClusterState& c, const std::string& name, QueueId queue, int64_t submitted,
                  int32_t min_member = 1) {
  Job job;
  job.name = name;
  job.queue = queue;
  job.submitted = submitted;
  job.min_member = min_member;
  return Must(c.AddJob(std::move(job)));
}

void PlaceOn(ClusterState& c, TaskId task, NodeId node, std::vector<int32_t> gpus) {
  Status st = c.Place(task, node, gpus);
  ASSERT_TRUE(st.ok()) << st.message();
}

// Zone a: a-1 (4 A100: one held whole, one shared full, one shared a quarter, one free)
// and a-2 (MIG, mixed: a GPU cut in two 3g.40gb, one in two 1g.10gb with one in use);
// zone b: b-1 (2 free A100, cordoned); no zone: cpu-1. Queues team-a (weight 2) and
// team-b; pending: a gang "ml/wait" of team-b (two 2-GPU tasks) with a reason from the
// last cycle, and a pod "ml/new" of team-a that came after it (no reason yet).
class ClusterViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    c_.SetTopologyKeys({"zone"});
    NodeId a1 = AddGpuNode(c_, "a-1", 4);
    Node a2;
    a2.name = "a-2";
    a2.allocatable = ResourceVector{{kCpu, 32000}};
    a2.allocatable.Set(Mig("3g.40gb"), 2 * kMilliPerUnit);
    a2.allocatable.Set(Mig("1g.10gb"), 2 * kMilliPerUnit);
    a2.labels.Set("nvidia.com/mig.strategy", "mixed");
    a2.labels.Set("nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB");
    a2.labels.Set("zone", "a");
    NodeId a2_id = Must(c_.AddNode(std::move(a2)));
    Node b1;
    b1.name = "b-1";
    b1.allocatable = ResourceVector{{kCpu, 64000}};
    for (int i = 0; i < 2; ++i) b1.gpus.push_back(GpuDevice{A100(), 81920, 0, 0, 0, 0});
    b1.labels.Set("zone", "b");
    b1.unschedulable = true;
    Must(c_.AddNode(std::move(b1)));
    Labels stray;  // a product label on a node without GPUs names none
    stray.Set("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3");
    AddCpuNode(c_, "cpu-1", 16000, stray);
    // a-1 gets its zone after the fact, as a label change would.
    Node relabelled = c_.node(a1);
    relabelled.labels.Set("zone", "a");
    ASSERT_TRUE(c_.UpdateNode(a1, std::move(relabelled)).ok());

    team_a_ = AddQueue(c_, "team-a", 2);
    team_b_ = AddQueue(c_, "team-b");
    JobId train = AddNamedJob(c_, "vc|ml/train", team_a_, 100);
    PlaceOn(c_, Must(c_.AddTask(train, c_.AddSpec(GpuSpec(1, 4000)), "ml/train-0")), a1, {0});
    JobId infer = AddNamedJob(c_, "vc|ml/infer", team_a_, 110);
    SpecId half = c_.AddSpec(SharedSpec(500));
    PlaceOn(c_, Must(c_.AddTask(infer, half, "ml/infer-0")), a1, {1});
    PlaceOn(c_, Must(c_.AddTask(infer, half, "ml/infer-1")), a1, {1});
    JobId notebook = AddNamedJob(c_, "pod|ml/notebook", team_b_, 120);
    PlaceOn(c_, Must(c_.AddTask(notebook, c_.AddSpec(SharedSpec(250)), "ml/notebook")), a1, {2});
    JobId small = AddNamedJob(c_, "pod|ml/small", team_b_, 130);
    PlaceOn(c_, Must(c_.AddTask(small, c_.AddSpec(MigSpec("1g.10gb")), "ml/small")), a2_id, {});

    wait_ = AddNamedJob(c_, "vc|ml/wait", team_b_, 1000, 2);
    SpecId two = c_.AddSpec(GpuSpec(2, 1000));
    Must(c_.AddTask(wait_, two, "ml/wait-0"));
    Must(c_.AddTask(wait_, two, "ml/wait-1"));

    decisions_.pending.push_back(
        {wait_, 2, "0/4 nodes are available: 2 Insufficient nvidia.com/gpu, 2 unschedulable"});
    decisions_.deserved.resize(c_.queues().size());
    decisions_.deserved[team_a_] = ResourceVector{{kCpu, 8000}, {kGpu, 3000}};
    decisions_.deserved[team_b_] = ResourceVector{{kGpu, 1000}};
    builder_.NoteCycle(c_, decisions_, 0.02, 4999);

    JobId fresh = AddNamedJob(c_, "pod|ml/new", team_a_, 2000);
    Must(c_.AddTask(fresh, c_.AddSpec(CpuSpec(500)), "ml/new"));
  }

  ClusterState c_;
  QueueId team_a_ = 0, team_b_ = 0;
  JobId wait_ = kNone;
  Decisions decisions_;
  ClusterViewBuilder builder_;
};

TEST_F(ClusterViewTest, ClusterJsonShowsEachGpuByDomain) {
  auto view = builder_.Build(c_, 5000.5);
  json expected = R"({
    "time": 5000,
    "topologyKeys": ["zone"],
    "summary": {"nodes": 4, "gpus": 8, "gpusAllocated": 2.25, "gpusFree": 3,
                "fragmentedGpus": 1.25, "draDevicesHeld": 0, "draDevicesFree": 0},
    "domains": [
      {"path": [""], "nodes": [
        {"name": "cpu-1", "gpuModel": "", "unschedulable": false,
         "cpu": {"allocatable": 16.0, "used": 0.0}, "tasks": 0, "gpus": [],
         "draDevices": [], "fragmentedMilli": 0}]},
      {"path": ["a"], "nodes": [
        {"name": "a-1", "gpuModel": "A100-80GB", "unschedulable": false,
         "cpu": {"allocatable": 64.0, "used": 4.0}, "tasks": 4,
         "gpus": [{"state": "whole", "usedMilli": 1000},
                  {"state": "shared", "usedMilli": 1000},
                  {"state": "fragmented", "usedMilli": 250},
                  {"state": "free", "usedMilli": 0}],
         "draDevices": [], "fragmentedMilli": 750},
        {"name": "a-2", "gpuModel": "NVIDIA-A100-SXM4-80GB", "unschedulable": false,
         "cpu": {"allocatable": 32.0, "used": 1.0}, "tasks": 1,
         "gpus": [{"state": "mig", "usedMilli": 0,
                   "mig": [{"profile": "3g.40gb", "used": false},
                           {"profile": "3g.40gb", "used": false}]},
                  {"state": "mig", "usedMilli": 500,
                   "mig": [{"profile": "1g.10gb", "used": true},
                           {"profile": "1g.10gb", "used": false}]}],
         "draDevices": [], "fragmentedMilli": 500}]},
      {"path": ["b"], "nodes": [
        {"name": "b-1", "gpuModel": "A100-80GB", "unschedulable": true,
         "cpu": {"allocatable": 64.0, "used": 0.0}, "tasks": 0,
         "gpus": [{"state": "free", "usedMilli": 0}, {"state": "free", "usedMilli": 0}],
         "draDevices": [], "fragmentedMilli": 0}]}
    ]})"_json;
  EXPECT_EQ(ClusterJson(*view), expected) << ClusterJson(*view).dump(2);
}

// DRA devices are shown under the node their slice names, with the claims holding them;
// the summary counts those of the nodes shown (gone-node's slice is left out).
TEST_F(ClusterViewTest, ClusterJsonShowsEachNodesDraDevicesAndTheirClaims) {
  using Device = DeviceClaims::NodeDevice;
  builder_.NoteDraDevices({{"cpu-1",
                            {Device{"gpu.nvidia.com", "cpu-1", "gpu-0", {"ml/a", "ml/b"}},
                             Device{"gpu.nvidia.com", "cpu-1", "gpu-1", {}}}},
                           {"gone-node", {Device{"gpu.nvidia.com", "gone-node", "gpu-0", {}}}}});
  auto view = builder_.Build(c_, 5000.5);
  const json cluster = ClusterJson(*view);
  EXPECT_EQ(cluster["summary"]["draDevicesHeld"], 1);
  EXPECT_EQ(cluster["summary"]["draDevicesFree"], 1);
  const json& cpu1 = cluster["domains"][0]["nodes"][0];
  ASSERT_EQ(cpu1["name"], "cpu-1");
  EXPECT_EQ(cpu1["draDevices"], R"([
      {"driver": "gpu.nvidia.com", "pool": "cpu-1", "name": "gpu-0", "claims": ["ml/a", "ml/b"]},
      {"driver": "gpu.nvidia.com", "pool": "cpu-1", "name": "gpu-1", "claims": []}])"_json);
  EXPECT_EQ(cluster["domains"][1]["nodes"][0]["draDevices"], json::array());
  // The same devices again: the view keeps sharing them; none: the views show none.
  builder_.NoteDraDevices({{"cpu-1",
                            {Device{"gpu.nvidia.com", "cpu-1", "gpu-0", {"ml/a", "ml/b"}},
                             Device{"gpu.nvidia.com", "cpu-1", "gpu-1", {}}}},
                           {"gone-node", {Device{"gpu.nvidia.com", "gone-node", "gpu-0", {}}}}});
  EXPECT_EQ(builder_.Build(c_, 5001).get()->dra_devices, view->dra_devices);
  builder_.NoteDraDevices({});
  EXPECT_EQ(builder_.Build(c_, 5002)->dra_devices, nullptr);
  EXPECT_EQ(ClusterJson(*builder_.Build(c_, 5003))["summary"]["draDevicesFree"], 0);
}

TEST_F(ClusterViewTest, QueuesJsonHasDeservedAllocatedPendingAndASample) {
  auto view = builder_.Build(c_, 5000.5);
  json expected = R"({
    "time": 5000,
    "sampleEverySeconds": 10,
    "queues": [
      {"name": "team-a", "parent": "", "weight": 2,
       "deserved": {"cpu": 8.0, "nvidia.com/gpu": 3.0},
       "allocated": {"cpu": 4.0, "nvidia.com/gpu": 2.0},
       "pending": {"cpu": 0.5},
       "pendingJobs": 1, "pendingTasks": 1, "runningTasks": 3,
       "history": [{"time": 5000, "deserved": 3.0, "allocated": 2.0, "pending": 0.0}]},
      {"name": "team-b", "parent": "", "weight": 1,
       "deserved": {"nvidia.com/gpu": 1.0},
       "allocated": {"cpu": 1.0, "nvidia.com/gpu": 0.25, "nvidia.com/mig-1g.10gb": 1.0},
       "pending": {"cpu": 2.0, "nvidia.com/gpu": 4.0},
       "pendingJobs": 1, "pendingTasks": 2, "runningTasks": 2,
       "history": [{"time": 5000, "deserved": 1.0, "allocated": 0.25, "pending": 4.0}]}
    ]})"_json;
  EXPECT_EQ(QueuesJson(*view), expected) << QueuesJson(*view).dump(2);
}

TEST_F(ClusterViewTest, PendingJsonListsTheLongestWaitingFirstWithTheirReasons) {
  auto view = builder_.Build(c_, 5000.5);
  json expected = R"({
    "time": 5000,
    "total": 2,
    "jobs": [
      {"kind": "podgroup", "name": "ml/wait", "queue": "team-b", "priority": 0,
       "pendingTasks": 2, "runningTasks": 0, "minMember": 2, "submitted": 1000,
       "requests": {"cpu": 2.0, "nvidia.com/gpu": 4.0},
       "reason": "0/4 nodes are available: 2 Insufficient nvidia.com/gpu, 2 unschedulable"},
      {"kind": "pod", "name": "ml/new", "queue": "team-a", "priority": 0,
       "pendingTasks": 1, "runningTasks": 0, "minMember": 1, "submitted": 2000,
       "requests": {"cpu": 0.5}, "reason": ""}
    ]})"_json;
  EXPECT_EQ(PendingJson(*view), expected) << PendingJson(*view).dump(2);
}

TEST_F(ClusterViewTest, WithoutAFairShareDeservedIsNull) {
  Decisions none;
  none.pending = decisions_.pending;
  builder_.NoteCycle(c_, none, 0.01, 5000);
  auto view = builder_.Build(c_, 5001);
  json queues = QueuesJson(*view);
  EXPECT_EQ(queues["queues"][0]["deserved"], json(nullptr));
  EXPECT_EQ(queues["queues"][0]["history"][0]["deserved"], json(nullptr));
}

TEST_F(ClusterViewTest, HealthCountsCyclesBindsAndFailures) {
  builder_.Build(c_, 5000);  // binds counted from here
  for (int i = 0; i < 20; ++i) builder_.NoteBind(true, "");
  builder_.NoteBind(false, "conflict");
  builder_.NoteBind(false, "conflict");
  builder_.NoteBind(false, "volumes");
  builder_.NoteCycle(c_, decisions_, 0.04, 5005);
  builder_.NoteLeader(true);
  builder_.NoteViewBuild(0.001);
  builder_.NoteEviction({5003, "ml/x", "preempt", "evicted", "for ml/wait"});
  auto view = builder_.Build(c_, 5010);
  json expected = R"({
    "time": 5010, "leader": true, "cycles": 2,
    "lastCycleSeconds": 0.04, "meanCycleSeconds": 0.03, "maxCycleSeconds": 0.04,
    "bindsPerSecond": 2.0, "bindsTotal": 20, "bindFailuresTotal": 3,
    "bindFailuresByReason": {"conflict": 2, "volumes": 1},
    "evictionsTotal": 1, "pendingTasks": 3, "nodes": 4, "viewBuildSeconds": 0.001})"_json;
  json got = HealthJson(*view);
  // The mean is a sum over a division: compare it apart, to the last bits.
  EXPECT_NEAR(got["meanCycleSeconds"].get<double>(), 0.03, 1e-12);
  got["meanCycleSeconds"] = 0.03;
  EXPECT_EQ(got, expected) << got.dump(2);
}

TEST_F(ClusterViewTest, OnlyTheNodesThatChangedAreBuiltAgain) {
  auto first = builder_.Build(c_, 5000);
  const NodeId b1 = c_.FindNode("b-1");
  JobId job = AddNamedJob(c_, "pod|ml/late", team_b_, 3000);
  PlaceOn(c_, Must(c_.AddTask(job, c_.AddSpec(GpuSpec(1)), "ml/late")), b1, {1});
  auto second = builder_.Build(c_, 5001);
  // Domains: [""] (cpu-1), ["a"] (a-1, a-2), ["b"] (b-1).
  EXPECT_EQ(second->domains[1].nodes[0], first->domains[1].nodes[0]);  // a-1: the same view
  EXPECT_EQ(second->domains[1].nodes[1], first->domains[1].nodes[1]);
  EXPECT_NE(second->domains[2].nodes[0], first->domains[2].nodes[0]);  // b-1 changed
  EXPECT_EQ(first->domains[2].nodes[0]->gpus[1].state, GpuCellState::kFree);
  EXPECT_EQ(second->domains[2].nodes[0]->gpus[1].state, GpuCellState::kWhole);
  EXPECT_EQ(second->gpus_free, first->gpus_free - 1);
}

TEST_F(ClusterViewTest, CyclesOlderThanAMinuteLeaveTheMeans) {
  builder_.NoteCycle(c_, decisions_, 0.5, 5000);
  auto view = builder_.Build(c_, 5070);  // the cycles at 4999 and 5000 are out of the window
  EXPECT_EQ(view->health.cycles, 2);
  EXPECT_EQ(view->health.last_cycle_s, 0.5);
  EXPECT_EQ(view->health.mean_cycle_s, 0);
  EXPECT_EQ(view->health.max_cycle_s, 0);
}

TEST_F(ClusterViewTest, EvictionsKeepTheLatest200LatestFirst) {
  for (int i = 0; i < 205; ++i) {
    builder_.NoteEviction({1000 + i, "ml/p-" + std::to_string(i), "reclaim",
                           i % 2 == 0 ? "evicted" : "refused", "for team-a"});
  }
  auto view = builder_.Build(c_, 5000);
  json got = EvictionsJson(*view);
  ASSERT_EQ(got["evictions"].size(), 200u);
  EXPECT_EQ(got["evictions"][0], R"({"time": 1204, "pod": "ml/p-204", "cause": "reclaim",
                                     "result": "evicted", "reason": "for team-a"})"_json);
  EXPECT_EQ(got["evictions"][199]["pod"], "ml/p-5");
  EXPECT_EQ(view->health.evictions_total, 103);  // the evicted ones, even those dropped
}

TEST_F(ClusterViewTest, HistoryKeepsAnHourAtOneSamplePerTenSeconds) {
  std::shared_ptr<const ClusterView> view;
  for (int s = 0; s <= 7200; s += 5) view = builder_.Build(c_, 10000 + s);
  const auto& samples = view->history->at("team-b");
  ASSERT_EQ(samples.size(), 360u);
  EXPECT_EQ(samples.back().time, 17200);
  EXPECT_EQ(samples.front().time, 17200 - 359 * 10);
  EXPECT_EQ(samples[1].time - samples[0].time, 10);
  EXPECT_EQ(samples.back().pending, 4.0);
}

TEST_F(ClusterViewTest, AQueueThatGoesLeavesTheHistory) {
  builder_.Build(c_, 5000);
  ClusterState other;
  AddQueue(other, "team-c");
  auto view = builder_.Build(other, 5010);
  ASSERT_EQ(view->history->size(), 1u);
  EXPECT_EQ(view->history->count("team-c"), 1u);
}

TEST_F(ClusterViewTest, TheLongestWaitingJobsAreShownWhenThereAreTooMany) {
  SpecId one = c_.AddSpec(CpuSpec(100));
  for (size_t i = 0; i < kMaxPendingShown + 10; ++i) {
    JobId j = AddNamedJob(c_, "pod|ml/many-" + std::to_string(i), team_a_,
                          static_cast<int64_t>(3000 + i));
    Must(c_.AddTask(j, one, "ml/many-" + std::to_string(i)));
  }
  auto view = builder_.Build(c_, 9000);
  EXPECT_EQ(view->pending_jobs, static_cast<int64_t>(kMaxPendingShown + 12));
  ASSERT_EQ(view->pending.size(), kMaxPendingShown);
  EXPECT_EQ(view->pending.front().name, "ml/wait");
  EXPECT_EQ(view->pending.back().name, "ml/many-" + std::to_string(kMaxPendingShown - 3));
}

TEST(ClusterViewBoardTest, HoldsTheLatestViewForReadersWhoKeepTheirs) {
  ClusterViewBoard board;
  EXPECT_EQ(board.Latest(), nullptr);
  auto first = std::make_shared<ClusterView>();
  first->time = 1;
  board.Publish(first);
  std::shared_ptr<const ClusterView> held = board.Latest();
  auto second = std::make_shared<ClusterView>();
  second->time = 2;
  board.Publish(second);
  EXPECT_EQ(held->time, 1);  // a reader's view stays whole
  EXPECT_EQ(board.Latest()->time, 2);
}

TEST(ClusterApiTest, EndpointsAnswer503UntilAViewIsPublishedThenJson) {
  ClusterViewBoard board;
  PageServer server;
  RegisterClusterApi(server, board);
  for (const char* path :
       {"/api/cluster", "/api/queues", "/api/pending", "/api/evictions", "/api/health"}) {
    ApiResponse before = server.Serve("GET", {path, {}});
    EXPECT_EQ(before.status, 503) << path;
    EXPECT_TRUE(json::parse(before.body).contains("error")) << path;
  }
  auto view = std::make_shared<ClusterView>();
  view->time = 42;
  PendingView p;
  p.name = "ml/bad\xff";  // not UTF-8: replaced, not a failure
  p.reason = "<script>";
  view->pending.push_back(p);
  board.Publish(view);
  for (const char* path :
       {"/api/cluster", "/api/queues", "/api/pending", "/api/evictions", "/api/health"}) {
    ApiResponse after = server.Serve("GET", {path, {}});
    EXPECT_EQ(after.status, 200) << path;
    EXPECT_EQ(json::parse(after.body)["time"], 42) << path;
  }
  json pending = json::parse(server.Serve("GET", {"/api/pending", {}}).body);
  EXPECT_EQ(pending["jobs"][0]["name"], "ml/bad\xef\xbf\xbd");
  EXPECT_EQ(pending["jobs"][0]["reason"], "<script>");
}

}  // namespace
}  // namespace gantry

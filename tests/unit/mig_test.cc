// MIG devices: profiles, a node's layout read from its labels and allocatable, which
// devices a placed task takes, and the predicate for nodes being re-cut.
#include "model/mig.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/filter.h"
#include "k8s/objects.h"
#include "model/cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

using nlohmann::json;

ResourceId Mig(const std::string& profile) {
  return InternResource("nvidia.com/mig-" + profile);
}

// A mixed-strategy node whose kubelet advertises these MIG devices, no layout given.
Node MixedNode(std::string name, std::vector<std::pair<std::string, int64_t>> devices,
               std::string product = "NVIDIA-A100-SXM4-80GB") {
  Node node;
  node.name = std::move(name);
  node.allocatable = ResourceVector{{kCpu, 64000}};
  for (const auto& [profile, count] : devices) {
    node.allocatable.Set(Mig(profile), count * kMilliPerUnit);
  }
  node.labels.Set("nvidia.com/mig.strategy", "mixed");
  node.labels.Set("nvidia.com/gpu.product", std::move(product));
  return node;
}

TaskSpec MigSpec(const std::string& profile, int64_t count) {
  TaskSpec spec;
  spec.requests = ResourceVector{{kCpu, 1000}};
  spec.requests.Set(Mig(profile), count * kMilliPerUnit);
  return spec;
}

// A job in a fresh queue of `c`.
JobId AddJob(ClusterState& c) {
  Queue q;
  q.name = "q";
  QueueId queue = Must(c.AddQueue(q));
  Job job;
  job.name = "j";
  job.queue = queue;
  return Must(c.AddJob(job));
}

// The physical GPU of each MIG device of a placed task.
std::vector<int32_t> GpusOf(const ClusterState& c, TaskId t) {
  std::vector<int32_t> out;
  for (int32_t d : c.task(t).mig_devices) {
    out.push_back(c.node(c.task(t).node).mig.devices[static_cast<size_t>(d)].gpu);
  }
  return out;
}

TEST(MigProfiles, NamesResolveToTheirFamilysSlices) {
  MigProfileRef big = Must(FindMigProfile("3g.40gb", ""));
  EXPECT_EQ(big.family->name, "A100-80GB");
  EXPECT_EQ(big.profile->compute_slices, 3);
  EXPECT_EQ(big.profile->memory_slices, 4);
  EXPECT_EQ(MigDevicesPerGpu(big), 2);
  EXPECT_EQ(MigDevicesPerGpu(Must(FindMigProfile("1g.10gb", ""))), 7);
  EXPECT_EQ(MigDevicesPerGpu(Must(FindMigProfile("2g.20gb", ""))), 3);
  // 1g.10gb is one memory slice of an 80 GB GPU and two of a 40 GB one: the product decides.
  EXPECT_EQ(Must(FindMigProfile("1g.10gb", "NVIDIA-A100-SXM4-80GB")).profile->memory_slices, 1);
  MigProfileRef small = Must(FindMigProfile("1g.10gb", "NVIDIA-A100-SXM4-40GB"));
  EXPECT_EQ(small.family->name, "A100-40GB");
  EXPECT_EQ(small.profile->memory_slices, 2);
  EXPECT_EQ(MigDevicesPerGpu(small), 4);
  EXPECT_EQ(Must(FindMigProfile("4g.24gb", "")).family->gpu_compute_slices, 4);  // A30
}

TEST(MigProfiles, UnknownProfilesAndMixedFamiliesAreRefusedByName) {
  auto unknown = FindMigProfile("5g.50gb", "");
  ASSERT_FALSE(unknown.ok());
  EXPECT_TRUE(Contains(unknown.status().message(), "unknown MIG profile \"5g.50gb\""));
  EXPECT_TRUE(Contains(unknown.status().message(), "3g.40gb"));
  auto mixed = FindMigProfiles({"3g.40gb", "1g.5gb"}, "");
  ASSERT_FALSE(mixed.ok());
  EXPECT_TRUE(Contains(mixed.status().message(), "not all of one GPU family"));
}

TEST(MigProfiles, ResourceNamesAndRequests) {
  EXPECT_EQ(MigProfileOfResource("nvidia.com/mig-1g.10gb"), "1g.10gb");
  EXPECT_EQ(MigProfileOfResource("nvidia.com/gpu"), "");
  EXPECT_TRUE(RequestsMig(MigSpec("1g.10gb", 1).requests));
  EXPECT_FALSE(RequestsMig(ResourceVector{{kCpu, 1000}}));
  EXPECT_TRUE(CheckMigRequests(MigSpec("1g.10gb", 1).requests, "pod ml/p").ok());
  Status bad = CheckMigRequests(MigSpec("9g.99gb", 1).requests, "pod ml/p: requests");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(
      Contains(bad.message(), "pod ml/p: requests.nvidia.com/mig-9g.99gb: unknown MIG profile"));
}

TEST(MigLayout, CountsAreLaidOutLargestFirstOnAsFewGpusAsHoldThem) {
  ClusterState c;
  // Two 3g.40gb fill one GPU's 8 memory slices; the two 1g.10gb go to a second GPU.
  NodeId n = Must(c.AddNode(MixedNode("m", {{"3g.40gb", 2}, {"1g.10gb", 2}})));
  const NodeMig& mig = c.node(n).mig;
  EXPECT_EQ(mig.strategy, MigStrategy::kMixed);
  EXPECT_EQ(mig.gpus, 2);
  ASSERT_EQ(mig.devices.size(), 4u);
  EXPECT_EQ(mig.devices[0].resource, Mig("3g.40gb"));
  EXPECT_EQ(mig.devices[0].gpu, 0);
  EXPECT_EQ(mig.devices[1].gpu, 0);
  EXPECT_EQ(mig.devices[2].resource, Mig("1g.10gb"));
  EXPECT_EQ(mig.devices[2].gpu, 1);
  EXPECT_EQ(mig.devices[3].gpu, 1);
  EXPECT_TRUE(c.node(n).gpus.empty());  // nvidia.com/gpu counts only GPUs not cut
}

// A "+me" device takes all of its GPU's media engines: an H200 lists 1g.18gb+me as 1/1
// instances (`nvidia-smi mig -lgip`, seen on a real H200), so two go to two GPUs.
TEST(MigLayout, AGpuHoldsOneDeviceThatTakesAllMediaEngines) {
  ClusterState c;
  NodeId n = Must(c.AddNode(MixedNode("h", {{"1g.18gb+me", 2}, {"1g.18gb", 2}}, "NVIDIA-H200")));
  const NodeMig& mig = c.node(n).mig;
  EXPECT_EQ(mig.gpus, 2);
  ASSERT_EQ(mig.devices.size(), 4u);
  std::vector<int32_t> me_gpus;
  for (const MigDevice& d : mig.devices) {
    if (d.resource == Mig("1g.18gb+me")) me_gpus.push_back(d.gpu);
  }
  EXPECT_EQ(me_gpus, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(MigDevicesPerGpu(Must(FindMigProfile("1g.18gb+me", "NVIDIA-H200"))), 1);
  EXPECT_EQ(MigDevicesPerGpu(Must(FindMigProfile("1g.18gb", "NVIDIA-H200"))), 7);
  // A layout a loader gave with two on one GPU is refused.
  Node given = MixedNode("g", {{"1g.18gb+me", 2}}, "NVIDIA-H200");
  given.mig.gpus = 1;
  given.mig.devices.push_back({Mig("1g.18gb+me"), 0, 0, 0, kNoMigHolder});
  given.mig.devices.push_back({Mig("1g.18gb+me"), 0, 0, 0, kNoMigHolder});
  auto two = c.AddNode(given);
  ASSERT_FALSE(two.ok());
  EXPECT_TRUE(Contains(two.status().message(), "node \"g\": GPU 0 has two MIG devices"));
}

TEST(MigLayout, BadCountsAndProfilesNameTheNodeAndResource) {
  ClusterState c;
  auto unknown = c.AddNode(MixedNode("m", {{"5g.50gb", 1}}));
  ASSERT_FALSE(unknown.ok());
  EXPECT_TRUE(Contains(unknown.status().message(), "node \"m\": allocatable"));
  EXPECT_TRUE(Contains(unknown.status().message(), "unknown MIG profile \"5g.50gb\""));
  Node fractional = MixedNode("f", {{"1g.10gb", 1}});
  fractional.allocatable.Set(Mig("1g.10gb"), 1500);
  auto half = c.AddNode(fractional);
  ASSERT_FALSE(half.ok());
  EXPECT_TRUE(Contains(half.status().message(),
                       "node \"f\": allocatable nvidia.com/mig-1g.10gb: 1500m is not a whole"));
  // A layout a loader gave must match the allocatable counts.
  Node given = MixedNode("g", {{"1g.10gb", 2}});
  given.mig.gpus = 1;
  given.mig.devices.push_back({Mig("1g.10gb"), 0, 0, 0, kNoMigHolder});
  auto short_layout = c.AddNode(given);
  ASSERT_FALSE(short_layout.ok());
  EXPECT_TRUE(Contains(short_layout.status().message(),
                       "the MIG layout has 1 1g.10gb devices, allocatable has 2"));
}

TEST(MigPlacement, DevicesOfAGpuInUseGoFirstAndComeBackOnRelease) {
  ClusterState c;
  NodeId n = Must(c.AddNode(MixedNode("m", {{"1g.10gb", 14}})));  // two GPUs of 7
  ASSERT_EQ(c.node(n).mig.gpus, 2);
  JobId job = AddJob(c);
  SpecId one = c.AddSpec(MigSpec("1g.10gb", 1));
  ASSERT_EQ(c.spec(one).mig_resources.ids, std::vector<ResourceId>{Mig("1g.10gb")});
  std::vector<TaskId> tasks;
  for (int i = 0; i < 9; ++i) tasks.push_back(Must(c.AddTask(job, one, "t" + std::to_string(i))));
  // Seven fill GPU 0; the eighth opens GPU 1.
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(c.Place(tasks[i], n, {}).ok());
  EXPECT_EQ(GpusOf(c, tasks[6]), std::vector<int32_t>{0});
  EXPECT_EQ(GpusOf(c, tasks[7]), std::vector<int32_t>{1});
  // Two devices of GPU 0 come free: what is free is now in pieces on both GPUs.
  c.Release(tasks[0]);
  c.Release(tasks[1]);
  MigUsage usage = CountMig(c.node(n).mig);
  EXPECT_EQ(usage.used, 6);
  EXPECT_EQ(usage.untouched_gpus, 0);
  EXPECT_EQ(usage.stranded, 8);  // 2 free on GPU 0, 6 on GPU 1
  // GPU 1's one comes free: GPU 1 is whole again, and the next task fills GPU 0's gap.
  c.Release(tasks[7]);
  usage = CountMig(c.node(n).mig);
  EXPECT_EQ(usage.untouched_gpus, 1);
  EXPECT_EQ(usage.stranded, 2);
  ASSERT_TRUE(c.Place(tasks[8], n, {}).ok());
  EXPECT_EQ(GpusOf(c, tasks[8]), std::vector<int32_t>{0});
}

TEST(MigPlacement, TheGpuWithMostSlicesInUseWinsOverTheLowestIndex) {
  NodeMig mig;
  mig.strategy = MigStrategy::kMixed;
  mig.gpus = 2;
  const ResourceId r = Mig("1g.10gb");
  for (int g = 0; g < 2; ++g) {
    for (int k = 0; k < 3; ++k) mig.devices.push_back({r, g, 1, 1, kNoMigHolder});
  }
  mig.devices[4].holder = 7;  // GPU 1 has one in use
  EXPECT_EQ(TakeMigDevices(mig, r, 2, 8), (std::vector<int32_t>{3, 5}));
  // Fewer free than asked (a pod bound by someone else): as many as there are.
  EXPECT_EQ(TakeMigDevices(mig, r, 5, 9), (std::vector<int32_t>{0, 1, 2}));
}

TEST(MigPlacement, ANodeUpdateLaysDevicesOutAgainUnderTheRunningTasks) {
  ClusterState c;
  NodeId n = Must(c.AddNode(MixedNode("m", {{"3g.40gb", 2}})));
  JobId job = AddJob(c);
  TaskId t = Must(c.AddTask(job, c.AddSpec(MigSpec("3g.40gb", 1)), "t"));
  ASSERT_TRUE(c.Place(t, n, {}).ok());
  ASSERT_TRUE(c.UpdateNode(n, MixedNode("m", {{"3g.40gb", 4}})).ok());
  EXPECT_EQ(c.node(n).mig.gpus, 2);
  EXPECT_EQ(CountMig(c.node(n).mig).used, 1);
  EXPECT_EQ(c.task(t).mig_devices.size(), 1u);
}

TEST(MigSingleStrategy, DevicesOfOneGpuShareADomain) {
  ClusterState c;
  Node node;
  node.name = "s";
  node.allocatable = ResourceVector{{kCpu, 64000}};
  node.labels.Set("nvidia.com/mig.strategy", "single");
  GpuDevice device;
  device.model = GpuModels().Intern("NVIDIA-A100-SXM4-80GB-MIG-3g.40gb");
  node.gpus.assign(4, device);
  NodeId n = Must(c.AddNode(node));
  EXPECT_EQ(c.node(n).mig.strategy, MigStrategy::kSingle);
  std::vector<int32_t> domains;
  for (const GpuDevice& g : c.node(n).gpus) domains.push_back(g.nvlink_domain);
  EXPECT_EQ(domains, (std::vector<int32_t>{0, 0, 1, 1}));
  // A single-strategy node whose product names no profile has whole GPUs.
  node.name = "whole";
  node.gpus.assign(2, GpuDevice{.model = GpuModels().Intern("NVIDIA-A100-SXM4-80GB")});
  EXPECT_EQ(c.node(Must(c.AddNode(node))).mig.strategy, MigStrategy::kNone);
  node.name = "bad";
  node.gpus.assign(2, GpuDevice{.model = GpuModels().Intern("NVIDIA-A100-SXM4-80GB-MIG-9g.9gb")});
  auto bad = c.AddNode(node);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Contains(bad.status().message(),
                       "node \"bad\": metadata.labels[nvidia.com/gpu.product]: unknown MIG"));
}

TEST(MigFilter, ANodeBeingReCutRefusesMigTasksOnly) {
  ClusterState c;
  Node node = MixedNode("m", {{"1g.10gb", 7}});
  node.labels.Set("nvidia.com/mig.config.state", "pending");
  node.gpus.assign(2, GpuDevice{.model = GpuModels().Intern("NVIDIA-A100-SXM4-80GB")});
  NodeId n = Must(c.AddNode(node));
  EXPECT_FALSE(c.node(n).mig.ready());
  const TaskSpec mig = MigSpec("1g.10gb", 1);
  FilterResult refused = FilterByCapacity(mig.requests, mig.gpu, c.node(n));
  EXPECT_EQ(refused.code, FilterCode::kMigNotReady);
  EXPECT_TRUE(Contains(DescribeFilter(refused, mig), "MIG devices being reconfigured"));
  GpuRequest whole;
  whole.count = 1;
  EXPECT_TRUE(FilterByCapacity(ResourceVector{{kCpu, 1000}}, whole, c.node(n)).ok());
  node.labels.Set("nvidia.com/mig.config.state", "success");
  ASSERT_TRUE(c.UpdateNode(n, node).ok());
  EXPECT_TRUE(FilterByCapacity(mig.requests, mig.gpu, c.node(n)).ok());
}

TEST(MigKubernetes, ANodeFromTheApiServerAndAPodAskingForASlice) {
  json node = json::parse(R"({
    "metadata": {"name": "a100-0", "labels": {
      "nvidia.com/mig.strategy": "mixed", "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB",
      "nvidia.com/mig-1g.10gb.count": "4", "nvidia.com/mig.config.state": "success"}},
    "status": {"allocatable": {"cpu": "64", "nvidia.com/gpu": "4",
                               "nvidia.com/mig-1g.10gb": "4", "nvidia.com/mig-3g.20gb": "2"}}})");
  ClusterState c;
  NodeId n = Must(c.AddNode(Must(k8s::ParseNode(node))));
  // 40 GB family: two 3g.20gb fill a GPU; four 1g.10gb (two memory slices each) a second.
  EXPECT_EQ(c.node(n).mig.gpus, 2);
  EXPECT_EQ(c.node(n).gpus.size(), 4u);
  EXPECT_TRUE(c.node(n).mig.ready());
  json pod = json::parse(R"({"metadata": {"name": "p", "namespace": "ml", "uid": "u"},
    "spec": {"schedulerName": "gantry", "containers": [{"name": "c",
      "resources": {"requests": {"nvidia.com/mig-9g.99gb": "1"}}}]}})");
  auto bad = k8s::ParsePod(pod);
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Contains(bad.status().message(),
                       "pod ml/p: spec.containers[*].resources.requests.nvidia.com/mig-9g.99gb: "
                       "unknown MIG profile"));
}

}  // namespace
}  // namespace gantry

// `gantry sim --gpu-api dra` (sim/dra_gpus.h): a node's GPUs published as one ResourceSlice
// of gpu.nvidia.com devices, a task's GPUs as a claim, and the device a claim gets among
// several that fit: the policy's (fragmentation-aware) choice, not upstream's first fit.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/session.h"
#include "sim/dra_gpus.h"
#include "sim/policies.h"
#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

constexpr const char* kClassSelector = R"(device.driver == "gpu.nvidia.com")";

// The class's selector, answered without CEL; any other expression is an error.
class ClassVerdicts : public dra::SelectorVerdicts {
 public:
  Result<bool> Matches(std::string_view expression, const dra::DeviceRef& device) const override {
    if (expression == kClassSelector) return device.driver == "gpu.nvidia.com";
    return Status::Failed("unexpected selector " + std::string(expression));
  }
};

TEST(SimDraGpus, OneSlicePerGpuNodeOneDevicePerGpu) {
  ClusterState c;
  AddGpuNode(c, "g1", 2);
  AddCpuNode(c, "cpu", 8000);
  const PublishedGpus published(c);
  ASSERT_EQ(published.inventory().slices().size(), 1u);
  const dra::ResourceSlice& slice = published.inventory().slices()[0];
  EXPECT_EQ(slice.driver, "gpu.nvidia.com");
  EXPECT_EQ(slice.pool.name, "g1");
  ASSERT_TRUE(slice.node_selection && slice.node_selection->node_name);
  EXPECT_EQ(*slice.node_selection->node_name, "g1");
  ASSERT_EQ(slice.devices.size(), 2u);
  const dra::Device& second = slice.devices[1];
  EXPECT_EQ(second.name, "gpu-1");
  EXPECT_EQ(second.attributes.at("gpu.nvidia.com/index"), dra::AttributeValue(int64_t{1}));
  EXPECT_EQ(second.attributes.at("gpu.nvidia.com/productName"),
            dra::AttributeValue(std::string("A100-80GB")));
  EXPECT_EQ(second.capacity.at("gpu.nvidia.com/cores").value, 1'000'000);  // 1000, in milli
  EXPECT_TRUE(second.allow_multiple_allocations);
  const dra::DeviceClass* gpu_class = published.inventory().FindClass("gpu.nvidia.com");
  ASSERT_NE(gpu_class, nullptr);
  EXPECT_EQ(gpu_class->selectors, std::vector<std::string>{kClassSelector});
  EXPECT_EQ(published.GpuIndex(c.node(0), slice, second), 1);
  EXPECT_EQ(published.GpuIndex(c.node(1), slice, second), -1);  // another node's pool
}

TEST(SimDraGpus, ClaimsAskWholeGpusOrAShareOfOne) {
  ClusterState c;
  AddGpuNode(c, "g1", 2);
  PublishedGpus published(c);
  GpuRequest whole;
  whole.count = 2;
  whole.models = {GpuModels().Intern("V100M16"), GpuModels().Intern("G2")};
  EXPECT_EQ(Must(published.AddClaim("w", whole)), "default/w");
  GpuRequest share;
  share.milli = 250;
  EXPECT_EQ(Must(published.AddClaim("s", share)), "default/s");
  EXPECT_FALSE(published.AddClaim("s", share).ok());  // a name taken

  const dra::DeviceRequestSpec& w = *published.claims().at("default/w").spec.requests[0].exactly;
  EXPECT_EQ(w.device_class_name, "gpu.nvidia.com");
  EXPECT_EQ(w.count, 2);
  EXPECT_TRUE(w.capacity_requests.empty());  // each device's cores all consumed
  EXPECT_EQ(w.selectors,
            std::vector<std::string>{R"(device.attributes["gpu.nvidia.com"].productName in )"
                                     R"(["V100M16", "G2"])"});
  const dra::DeviceRequestSpec& s = *published.claims().at("default/s").spec.requests[0].exactly;
  EXPECT_EQ(s.count, 1);
  EXPECT_EQ(s.capacity_requests, (std::map<std::string, Milli>{{"cores", 250'000}}));
  EXPECT_TRUE(s.selectors.empty());

  GpuRequest with_memory = share;
  with_memory.memory_mib = 1024;
  EXPECT_FALSE(published.AddClaim("m", with_memory).ok());
}

// Node g1 has two GPUs; a running pod holds 500 of gpu-1 (its claim allocated there). A pod
// asking 500 fits both. The typical pods ask whole GPUs, so the fragmentation-aware choice
// is gpu-1 (filled; gpu-0 stays whole for them), where upstream's first fit is gpu-0
// (leaving two half GPUs that no whole-GPU pod can use).
struct HalfUsedNode {
  ClusterState c;
  std::optional<PublishedGpus> published;
  dra::ClaimTable claims;
  ClassVerdicts verdicts;
  TaskId pending = 0;

  HalfUsedNode() {
    const NodeId node = AddGpuNode(c, "g1", 2);
    const QueueId q = AddQueue(c, "default");
    WorkloadProfile profile;
    profile.types.push_back(TaskType{{}, GpuSpec(1).gpu, 9});
    profile.types.push_back(TaskType{{}, SharedSpec(500).gpu, 1});
    profile.total = 10;
    c.SetWorkloadProfile(profile);
    published.emplace(c);
    auto spec_with_claim = [&](const std::string& name) {
      TaskSpec spec = SharedSpec(500);
      spec.namespace_ = "default";
      spec.resource_claims.push_back(Must(published->AddClaim(name, spec.gpu)));
      return spec;
    };
    const JobId running = AddJob(c, "running", q, spec_with_claim("running"), 1);
    const int32_t gpu1 = 1;
    const Status placed =
        c.Place(c.job(running).tasks[0], node, std::span<const int32_t>(&gpu1, 1));
    EXPECT_TRUE(placed.ok()) << placed.message();
    const JobId pod = AddJob(c, "pod", q, spec_with_claim("pod"), 1);
    pending = c.job(pod).tasks[0];

    claims = published->claims();
    dra::AllocationResult result;
    result.request = "gpu";
    result.driver = "gpu.nvidia.com";
    result.pool = "g1";
    result.device = "gpu-1";
    result.share_id = "0d2c1f7e-0000-4000-8000-000000000001";
    result.consumed_capacity["gpu.nvidia.com/cores"] = 500'000;
    dra::ResourceClaim& held = claims.at("default/running");
    held.allocation.emplace();
    held.allocation->results.push_back(result);
    held.reserved_for.push_back(dra::ConsumerReference{"", "pods", "running-0", "u1"});
  }

  // The pending pod's bind: the engine's GPUs and its claim's devices, "gpus 1, devices gpu-1".
  std::string Run(const std::string& policy, bool gpus_known) {
    const Policy compiled = MustCompile(Must(PolicyConfig(policy)));
    Snapshot snapshot(c);
    DeviceInputs inputs = published->Inputs(&verdicts);
    inputs.claims = &claims;
    if (!gpus_known) inputs.gpu_devices = nullptr;
    snapshot.set_devices(inputs);
    const Decisions d = Session(snapshot, compiled).Run();
    if (d.binds.size() != 1 || d.binds[0].task != pending) return "not placed";
    const BindDecision& b = d.binds[0];
    std::string out = "gpus";
    for (int32_t g : b.gpus) out += " " + std::to_string(g);
    out += ", devices";
    if (b.devices.size() != 1 || !b.devices[0]) return out + " none";
    for (const dra::AllocationResult& r : b.devices[0]->results) out += " " + r.device;
    return out;
  }
};

TEST(SimDraGpus, TheClaimGetsThePolicysGpuNotTheFirstThatFits) {
  HalfUsedNode world;
  for (const char* policy : {"fgd", "gpupacking", "bestfit"}) {
    EXPECT_EQ(world.Run(policy, true), "gpus 1, devices gpu-1") << policy;
  }
}

// Where the engine is not told which devices are its GPUs (the daemon), the devices to take
// are chosen best fit among shared ones (AllocateOptions::pack_shared): the half-used
// gpu-1, where upstream's first fit would start gpu-0.
TEST(SimDraGpus, WithoutTheGpuMapBestFitAmongShares) {
  HalfUsedNode world;
  EXPECT_EQ(world.Run("fgd", false), "gpus 1, devices gpu-1");
}

}  // namespace
}  // namespace gantry

// Extended resources backed by DRA (engine/dra/extended_resources.h): a pod that asks for
// nvidia.com/gpu, or a class's implicit deviceclass.resource.kubernetes.io/<class>, is
// placed on a node whose devices come from a DRA driver, its devices allocated as one more
// claim; a node whose allocatable has the resource serves it through the device plugin.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/device_reservations.h"
#include "engine/dra/extended_resources.h"
#include "tests/unit/engine_dra_world.h"
#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

using engine_dra::kClassSelector;
using engine_dra::kDriver;
using engine_dra::RunWithDevices;

constexpr const char* kImplicitName = "deviceclass.resource.kubernetes.io/example-gpu";

// Two classes of the driver's devices: "gpu.example.com" named nvidia.com/gpu, and
// "example-gpu", known by its implicit name only.
std::vector<dra::DeviceClass> Classes() {
  dra::DeviceClass named;
  named.name = "gpu.example.com";
  named.selectors = {kClassSelector};
  named.extended_resource_name = "nvidia.com/gpu";
  dra::DeviceClass implicit;
  implicit.name = "example-gpu";
  implicit.selectors = {kClassSelector};
  return {named, implicit};
}

std::vector<const dra::DeviceClass*> Pointers(const std::vector<dra::DeviceClass>& classes) {
  std::vector<const dra::DeviceClass*> out;
  for (const dra::DeviceClass& c : classes) out.push_back(&c);
  return out;
}

// The driver's GPUs with the two classes above.
struct Devices : engine_dra::Devices {
  Devices() { classes = Classes(); }
  // The spec as the daemon resolves it: its extended resources that a class serves.
  TaskSpec Backed(TaskSpec spec) const {
    spec.namespace_ = "ml";
    dra::MarkDeviceBacked(Pointers(classes), &spec);
    return spec;
  }
};

// "task@node" and, for the extended claim, "{request=device,...}", for GPUs of the device
// plugin "(n gpus)".
std::string Binds(const ClusterState& c, const Decisions& d) {
  std::string out;
  for (const BindDecision& b : d.binds) {
    out += (out.empty() ? "" : " ") + c.task(b.task).name + "@" + c.node(b.node).name;
    if (!b.gpus.empty()) out += "(" + std::to_string(b.gpus.size()) + " gpus)";
    if (b.extended_devices) {
      out += "{";
      for (size_t r = 0; r < b.extended_devices->results.size(); ++r) {
        const dra::AllocationResult& result = b.extended_devices->results[r];
        out += (r > 0 ? "," : "") + result.request + "=" + result.device;
      }
      out += "}";
    }
  }
  return out;
}

TaskSpec ImplicitSpec(int64_t devices) {
  TaskSpec spec = CpuSpec(1000);
  spec.requests.Set(InternResource(kImplicitName), devices * kMilliPerUnit);
  return spec;
}

TEST(DraExtendedResources, ClassesServeTheirNamedAndImplicitNames) {
  const std::vector<dra::DeviceClass> classes = Classes();
  const auto pointers = Pointers(classes);
  const dra::DeviceClass* gpu = dra::ClassForExtendedResource(pointers, "nvidia.com/gpu");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->name, "gpu.example.com");
  const dra::DeviceClass* implicit = dra::ClassForExtendedResource(pointers, kImplicitName);
  ASSERT_NE(implicit, nullptr);
  EXPECT_EQ(implicit->name, "example-gpu");
  // A class that names a resource is still served by its implicit name.
  EXPECT_NE(
      dra::ClassForExtendedResource(pointers, "deviceclass.resource.kubernetes.io/gpu.example.com"),
      nullptr);
  EXPECT_EQ(dra::ClassForExtendedResource(pointers, "example.com/fpga"), nullptr);
  EXPECT_EQ(dra::ClassForExtendedResource(pointers, "deviceclass.resource.kubernetes.io/none"),
            nullptr);
}

TEST(DraExtendedResources, MarkingFindsTheRequestsAClassServes) {
  Devices devices;
  TaskSpec spec = GpuSpec(2, 1000);
  spec.requests.Set(InternResource(kImplicitName), 3000);
  spec.requests.Set(InternResource("example.com/fpga"), 1000);  // no class: device plugin
  spec = devices.Backed(spec);
  ASSERT_EQ(spec.device_backed.size(), 2u);
  // Sorted by resource name.
  EXPECT_EQ(ResourceName(spec.device_backed[0].resource), kImplicitName);
  EXPECT_EQ(spec.device_backed[0].device_class, "example-gpu");
  EXPECT_EQ(spec.device_backed[0].count, 3);
  EXPECT_EQ(spec.device_backed[1].resource, kGpu);
  EXPECT_EQ(spec.device_backed[1].device_class, "gpu.example.com");
  EXPECT_EQ(spec.device_backed[1].count, 2);
  // Without classes nothing is backed.
  TaskSpec plain = GpuSpec(2, 1000);
  dra::MarkDeviceBacked({}, &plain);
  EXPECT_TRUE(plain.device_backed.empty());
}

// The issue's case: the node's GPUs are published through DRA, its allocatable has no
// nvidia.com/gpu; a pod asking nvidia.com/gpu: 1 is placed there with a DRA device.
TEST(DraExtendedResources, AGpuPodIsPlacedOnANodeWhoseGpusComeFromDra) {
  ClusterState c;
  AddCpuNode(c, "dra-node", 64000);
  const QueueId q = AddQueue(c, "q");
  Devices devices;
  devices.AddNodeGpus("dra-node", 2);
  AddJob(c, "one", q, devices.Backed(GpuSpec(1, 1000)), 1, 1);
  AddJob(c, "two", q, devices.Backed(GpuSpec(1, 1000)), 1, 1);
  const JobId third = AddJob(c, "three", q, devices.Backed(GpuSpec(1, 1000)), 1, 1);
  const Decisions d = RunWithDevices(c, devices);
  // Each gets a device no other pod has; the third finds none left.
  EXPECT_EQ(Binds(c, d), "one-0@dra-node{resource-0=gpu-0} two-0@dra-node{resource-0=gpu-1}");
  EXPECT_NE(PendingReasonOf(d, third).find("cannot allocate all claims"), std::string::npos)
      << PendingReasonOf(d, third);
  ASSERT_FALSE(d.binds.empty());
  const dra::Allocation& allocation = *d.binds[0].extended_devices;
  ASSERT_EQ(allocation.results.size(), 1u);
  EXPECT_EQ(allocation.results[0].driver, kDriver);
  EXPECT_EQ(allocation.results[0].pool, "dra-node");
  ASSERT_TRUE(allocation.node_selector.has_value());
  EXPECT_TRUE(SelectorTermsMatch(*allocation.node_selector, {}, "dra-node"));
}

// Without a class that serves nvidia.com/gpu, the same node has no GPUs for the pod.
TEST(DraExtendedResources, WithoutAClassTheDraNodeHasNoGpus) {
  ClusterState c;
  AddCpuNode(c, "dra-node", 64000);
  const QueueId q = AddQueue(c, "q");
  Devices devices;
  devices.classes.clear();
  devices.AddNodeGpus("dra-node", 2);
  const JobId job = AddJob(c, "one", q, devices.Backed(GpuSpec(1, 1000)), 1, 1);
  const Decisions d = RunWithDevices(c, devices);
  EXPECT_EQ(Binds(c, d), "");
  EXPECT_NE(PendingReasonOf(d, job).find("had no GPUs"), std::string::npos)
      << PendingReasonOf(d, job);
}

// A node whose allocatable has nvidia.com/gpu serves it through the device plugin, even
// where a DRA driver publishes devices on it too.
TEST(DraExtendedResources, ANodeWithTheResourceInItsAllocatableUsesTheDevicePlugin) {
  ClusterState c;
  AddGpuNode(c, "plugin-node", 2);
  const QueueId q = AddQueue(c, "q");
  Devices devices;
  devices.AddNodeGpus("plugin-node", 4);
  AddJob(c, "one", q, devices.Backed(GpuSpec(2, 1000)), 1, 1);
  // Past the device plugin's two GPUs: the DRA devices are not used on this node.
  const JobId more = AddJob(c, "more", q, devices.Backed(GpuSpec(1, 1000)), 1, 1);
  const Decisions d = RunWithDevices(c, devices);
  EXPECT_EQ(Binds(c, d), "one-0@plugin-node(2 gpus)");
  EXPECT_NE(PendingReasonOf(d, more).find("Insufficient"), std::string::npos)
      << PendingReasonOf(d, more);
}

// The implicit name of a class, in a pod's requests: the node has none of it in its
// allocatable, its devices come from the class.
TEST(DraExtendedResources, TheImplicitClassNameIsServedByTheClass) {
  ClusterState c;
  AddCpuNode(c, "dra-node", 64000);
  const QueueId q = AddQueue(c, "q");
  Devices devices;
  devices.AddNodeGpus("dra-node", 3);
  AddJob(c, "two", q, devices.Backed(ImplicitSpec(2)), 1, 1);
  const JobId big = AddJob(c, "big", q, devices.Backed(ImplicitSpec(2)), 1, 1);
  const Decisions d = RunWithDevices(c, devices);
  EXPECT_EQ(Binds(c, d), "two-0@dra-node{resource-0=gpu-0,resource-0=gpu-1}");
  EXPECT_NE(PendingReasonOf(d, big).find("cannot allocate all claims"), std::string::npos)
      << PendingReasonOf(d, big);
}

// A gang whose members cannot all get DRA devices takes none: the rollback gives the
// devices back, and a later job gets them.
TEST(DraExtendedResources, ARolledBackGangGivesItsDevicesBack) {
  ClusterState c;
  AddCpuNode(c, "dra-node", 64000);
  const QueueId q = AddQueue(c, "q");
  Devices devices;
  devices.AddNodeGpus("dra-node", 2);
  AddJob(c, "gang", q, devices.Backed(GpuSpec(1, 1000)), 3, 3, 0, /*creation=*/1);
  AddJob(c, "solo", q, devices.Backed(GpuSpec(2, 1000)), 1, 1, 0, /*creation=*/2);
  const Decisions d = RunWithDevices(c, devices);
  EXPECT_EQ(Binds(c, d), "solo-0@dra-node{resource-0=gpu-0,resource-0=gpu-1}");
}

// GPUs from DRA count for the queue as the device plugin's do: a queue capped at one GPU
// gets one device-backed GPU pod placed, not both, and the placed pod counts one GPU.
TEST(DraExtendedResources, DraServedGpusCountAgainstTheQueuesCapability) {
  ClusterState c;
  AddCpuNode(c, "dra-node", 64000);
  ResourceVector one_gpu;
  one_gpu.Set(kGpu, kGpuMilliWhole);
  const QueueId q = AddQueue(c, "q", 1, {}, one_gpu);
  Devices devices;
  devices.AddNodeGpus("dra-node", 2);
  AddJob(c, "one", q, devices.Backed(GpuSpec(1, 1000)), 1, 1, 0, /*creation=*/1);
  AddJob(c, "two", q, devices.Backed(GpuSpec(1, 1000)), 1, 1, 0, /*creation=*/2);
  const Decisions d = RunWithDevices(c, devices);
  EXPECT_EQ(Binds(c, d), "one-0@dra-node{resource-0=gpu-0}");
  const TaskSpec spec = devices.Backed(GpuSpec(2, 1000));
  EXPECT_EQ(ClusterState::Accounted(spec, 0, 0).Get(kGpu), 2 * kGpuMilliWhole);
  // On a device-plugin node the GPUs it was given count, as before.
  EXPECT_EQ(ClusterState::Accounted(spec, 2, 500).Get(kGpu), 1000);
}

}  // namespace
}  // namespace gantry

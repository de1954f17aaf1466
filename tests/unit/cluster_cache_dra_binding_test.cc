// DRA binding conditions in the daemon (device_claims_binding.cc): a pod whose device has
// bindingConditions is not bound when its claim is written; it waits, assumed, for the
// driver to report them True in the claim's status.devices, and is given up on (its claim
// to deallocate, the pod pending after a backoff) when a failure condition is True or the
// binding timeout passes. Expected outcomes and messages are kube-scheduler's, written out.
#include <gtest/gtest.h>

#include <string>

#include "daemon/cluster_cache.h"
#include "engine/session.h"
#include "tests/unit/cluster_cache_dra_objects.h"
#include "tests/unit/test_util.h"
#include "tests/unit/volume_objects.h"

namespace gantry {
namespace {

using json = nlohmann::json;
using cache_dra::Claim;
using cache_dra::ClaimPod;
using cache_dra::Class;
using cache_dra::RunWithDevices;
using k8s::EventType;
using volume_objects::NodeObject;
using volume_objects::PodObject;
using volume_objects::TaskNamed;

// One device that the driver attaches after allocation: bound once "attached" is True,
// given up on when "attach-failed" is.
json AttachableSlice() {
  return {{"metadata", {{"name", "node-1-gpus"}, {"uid", "u-s"}}},
          {"spec",
           {{"driver", "gpu.example.com"},
            {"pool", {{"name", "node-1"}, {"generation", 1}, {"resourceSliceCount", 1}}},
            {"nodeName", "node-1"},
            {"devices",
             {{{"name", "gpu-0"},
               {"bindingConditions", {"attached"}},
               {"bindingFailureConditions", {"attach-failed"}}}}}}}};
}

// The claim as the watch shows it once the daemon's writes landed: allocated (the binding
// conditions copied into the result), reserved for p1, and `devices` as the driver reports.
json WrittenClaim(const json& devices) {
  json claim = Claim();
  claim["metadata"]["finalizers"] = {"resource.kubernetes.io/delete-protection"};
  claim["status"] = {{"allocation",
                      {{"devices",
                        {{"results",
                          {{{"request", "gpu"},
                            {"driver", "gpu.example.com"},
                            {"pool", "node-1"},
                            {"device", "gpu-0"},
                            {"bindingConditions", {"attached"}},
                            {"bindingFailureConditions", {"attach-failed"}}}}}}}}},
                     {"reservedFor", {{{"resource", "pods"}, {"name", "p1"}, {"uid", "uid-p1"}}}}};
  if (!devices.is_null()) claim["status"]["devices"] = devices;
  return claim;
}

json DeviceStatus(const std::string& type, const std::string& status, const std::string& reason,
                  const std::string& message) {
  return {{{"driver", "gpu.example.com"},
           {"pool", "node-1"},
           {"device", "gpu-0"},
           {"conditions",
            {{{"type", type},
              {"status", status},
              {"reason", reason},
              {"message", message},
              {"lastTransitionTime", "2026-12-06T07:00:00Z"}}}}}};
}

std::string EventsText(ClusterCache& c) {
  std::string out;
  for (const ObjectEvent& e : c.TakeProblems()) {
    out += e.type + " " + e.reason + " " + e.name + ": " + e.message + "\n";
  }
  return out;
}

// The pod placed, its claim writes sent and done at t=10: it waits for the driver.
class BindingConditions : public ::testing::Test {
 protected:
  void SetUp() override {
    c.set_device_binding_timeout(30);
    c.OnNode(EventType::kAdded, NodeObject("node-1"));
    c.OnDeviceClass(EventType::kAdded, Class());
    c.OnResourceSlice(EventType::kAdded, AttachableSlice());
    c.OnResourceClaim(EventType::kAdded, Claim());
    c.OnPod(EventType::kAdded, ClaimPod("p1"));
    const Decisions d = RunWithDevices(c);
    ASSERT_EQ(d.binds.size(), 1u);
    std::vector<BindRequest> binds = c.Assume(d, 0);
    ASSERT_EQ(binds.size(), 1u);
    EXPECT_TRUE(binds[0].wait_for_binding_conditions);
    EXPECT_FALSE(binds[0].claims_written);
    (void)c.TakeProblems();
    c.BindingConditionsPending(binds[0], 10);
    EXPECT_TRUE(c.WaitingForBindingConditions("ml/p1"));
    EXPECT_EQ(EventsText(c),
              "Normal BindingConditionsPending p1: waiting for binding conditions for device "
              "on node node-1\n");
  }

  // The device is taken: a pod with a claim of its own is not placed.
  bool DeviceTaken() {
    c.OnResourceClaim(EventType::kAdded, Claim("c2"));
    c.OnPod(EventType::kAdded, ClaimPod("probe", "c2"));
    const Decisions d = RunWithDevices(c);
    c.OnPod(EventType::kDeleted, ClaimPod("probe", "c2"));
    return d.binds.empty();
  }

  ClusterCache c{"gantry"};
};

TEST_F(BindingConditions, TheBindGoesOutOnceEveryConditionIsTrue) {
  std::vector<BindRequest> binds;
  // Written, no report from the driver yet; then one that is not True.
  c.OnResourceClaim(EventType::kModified, WrittenClaim(nullptr));
  EXPECT_EQ(c.PollBindingConditions(11, &binds), 0u);
  EXPECT_TRUE(binds.empty());
  c.OnResourceClaim(EventType::kModified,
                    WrittenClaim(DeviceStatus("attached", "False", "Attaching", "")));
  EXPECT_EQ(c.PollBindingConditions(12, &binds), 0u);
  EXPECT_TRUE(binds.empty());
  EXPECT_TRUE(c.WaitingForBindingConditions("ml/p1"));
  EXPECT_TRUE(DeviceTaken());

  c.OnResourceClaim(EventType::kModified,
                    WrittenClaim(DeviceStatus("attached", "True", "Attached", "")));
  EXPECT_EQ(c.PollBindingConditions(13, &binds), 0u);
  ASSERT_EQ(binds.size(), 1u);
  EXPECT_EQ(binds[0].name, "p1");
  EXPECT_EQ(binds[0].node, "node-1");
  EXPECT_TRUE(binds[0].claims_written);
  EXPECT_FALSE(binds[0].wait_for_binding_conditions);
  ASSERT_EQ(binds[0].claims.size(), 1u);
  EXPECT_EQ(binds[0].claims[0].name, "c1");
  EXPECT_FALSE(c.WaitingForBindingConditions("ml/p1"));
  EXPECT_TRUE(c.TakeClaimReleases().empty());
}

TEST_F(BindingConditions, AFailureConditionGivesTheDeviceBackAndThePodIsPending) {
  std::vector<BindRequest> binds;
  c.OnResourceClaim(EventType::kModified,
                    WrittenClaim(DeviceStatus("attach-failed", "True", "NoPath", "no PCIe path")));
  EXPECT_EQ(c.PollBindingConditions(11, &binds), 1u);
  EXPECT_TRUE(binds.empty());
  EXPECT_FALSE(c.WaitingForBindingConditions("ml/p1"));
  EXPECT_EQ(EventsText(c),
            "Warning FailedScheduling p1: running PreBind plugin \"DynamicResources\": claim c1 "
            "binding failed: reason=NoPath, message=\"no PCIe path\"; retrying in 1s\n");
  // The claim is to be deallocated: the pod's request, with the allocation it wrote.
  std::vector<BindRequest> releases = c.TakeClaimReleases();
  ASSERT_EQ(releases.size(), 1u);
  EXPECT_EQ(releases[0].name, "p1");
  ASSERT_EQ(releases[0].claims.size(), 1u);
  EXPECT_EQ(releases[0].claims[0].name, "c1");
  EXPECT_TRUE(releases[0].claims[0].allocation.has_value());
  // Held back during its backoff (no task to place), then pending again.
  EXPECT_EQ(TaskNamed(c.state(), "ml/p1"), nullptr);
  // The watch shows the claim deallocated: the device is free, and after the backoff the
  // pod is placed again.
  c.OnResourceClaim(EventType::kModified, Claim());
  EXPECT_EQ(c.ReleaseHeld(12), 1u);
  const Task* t = TaskNamed(c.state(), "ml/p1");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->state, TaskState::kPending);
  const Decisions d = RunWithDevices(c);
  ASSERT_EQ(d.binds.size(), 1u);
  EXPECT_EQ(c.state().task(d.binds[0].task).name, "ml/p1");
}

TEST_F(BindingConditions, TheTimeoutGivesUpOnTheWait) {
  std::vector<BindRequest> binds;
  c.OnResourceClaim(EventType::kModified,
                    WrittenClaim(DeviceStatus("attached", "False", "Attaching", "")));
  // Written at 10 with a 30 s timeout: still waiting just before 40.
  EXPECT_EQ(c.PollBindingConditions(39.9, &binds), 0u);
  EXPECT_TRUE(c.WaitingForBindingConditions("ml/p1"));
  EXPECT_EQ(c.PollBindingConditions(40, &binds), 1u);
  EXPECT_TRUE(binds.empty());
  EXPECT_EQ(EventsText(c),
            "Warning FailedScheduling p1: running PreBind plugin \"DynamicResources\": device "
            "binding timeout; retrying in 1s\n");
  EXPECT_EQ(c.TakeClaimReleases().size(), 1u);
  EXPECT_EQ(TaskNamed(c.state(), "ml/p1"), nullptr);  // held back for 1 s
  EXPECT_EQ(c.ReleaseHeld(41), 1u);
  const Task* t = TaskNamed(c.state(), "ml/p1");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->state, TaskState::kPending);
}

TEST_F(BindingConditions, ADeletedPodStopsWaitingAndItsClaimIsLeftToTheController) {
  c.OnPod(EventType::kDeleted, ClaimPod("p1"));
  EXPECT_FALSE(c.WaitingForBindingConditions("ml/p1"));
  std::vector<BindRequest> binds;
  EXPECT_EQ(c.PollBindingConditions(100, &binds), 0u);
  EXPECT_TRUE(binds.empty());
  EXPECT_TRUE(c.TakeClaimReleases().empty());
}

// status.devices is read leniently: an entry that names no device is left out (it matches
// no allocated device), a condition's status is True only as "True".
TEST(ReadDeviceStatuses, ReadsEntriesThatNameADevice) {
  const json claim = {{"status",
                       {{"devices",
                         {{{"driver", "d"},
                           {"pool", "p"},
                           {"device", "x"},
                           {"conditions",
                            {{{"type", "a"}, {"status", "True"}, {"reason", "R"}, {"message", "M"}},
                             {{"type", "b"}, {"status", "true"}},
                             {{"type", "c"}, {"status", "Unknown"}}}}},
                          {{"driver", "d"}, {"pool", "p"}},
                          "not an object"}}}}};
  const std::vector<AllocatedDeviceStatus> got = ReadDeviceStatuses(claim);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].driver, "d");
  EXPECT_EQ(got[0].pool, "p");
  EXPECT_EQ(got[0].device, "x");
  ASSERT_EQ(got[0].conditions.size(), 3u);
  EXPECT_EQ(got[0].conditions[0].type, "a");
  EXPECT_TRUE(got[0].conditions[0].is_true);
  EXPECT_EQ(got[0].conditions[0].reason, "R");
  EXPECT_EQ(got[0].conditions[0].message, "M");
  EXPECT_FALSE(got[0].conditions[1].is_true);
  EXPECT_FALSE(got[0].conditions[2].is_true);
  EXPECT_TRUE(ReadDeviceStatuses(json{{"status", nullptr}}).empty());
}

}  // namespace
}  // namespace gantry

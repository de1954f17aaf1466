// `gantry explain` for a pod whose claims get no devices: kube-scheduler's reason counts the
// nodes ("cannot allocate all claims"), and the closest nodes say what each request lacks
// there (engine/dra/shortfall.h), counting the devices the session's own binds took.
// Expected values are written by hand from the cluster.
#include <gtest/gtest.h>

#include <string>

#include "engine/explain.h"
#include "tests/unit/engine_dra_world.h"
#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

using engine_dra::Devices;

TEST(ExplainDra, TheClosestNodesSayWhatEachRequestLacks) {
  ClusterState c;
  for (const char* name : {"n0", "n1", "n2", "n3"}) AddCpuNode(c, name, 64000);
  const QueueId q = AddQueue(c, "q");
  Devices devices;
  devices.AddNodeGpus("n0", 4);
  devices.AddNodeGpus("n1", 2);
  devices.AddNodeGpus("n2", 2);
  devices.slices.back().driver = "other.example.com";  // n2's devices match no class of ours
  for (int gpu = 0; gpu < 4; ++gpu) {                  // n0 is full, by claims of pods elsewhere
    const std::string key = devices.AddClaim("held-" + std::to_string(gpu));
    devices.Allocate(key, "n0", "gpu-" + std::to_string(gpu));
  }
  TaskSpec one = CpuSpec(100);
  one.namespace_ = "ml";
  one.resource_claims = {devices.AddClaim("first", 1)};
  AddJob(c, "first", q, one, 1, 1, 0, /*creation=*/0);  // placed on n1 this session
  TaskSpec two = CpuSpec(100);
  two.namespace_ = "ml";
  two.resource_claims = {devices.AddClaim("wants", 2)};
  const JobId wants = AddJob(c, "wants", q, two, 1, 1, 0, /*creation=*/1);

  const Policy policy = MustCompile(SchedulerConfig::Default());
  Snapshot snapshot(c);
  const DeviceInputs inputs = devices.Inputs();
  snapshot.set_devices(inputs);
  Session session(snapshot, policy);
  const Decisions d = session.Run();
  ASSERT_EQ(d.binds.size(), 1u);
  EXPECT_EQ(c.node(d.binds[0].node).name, "n1");
  const std::vector<PendingExplanation> explained = ExplainPending(session, d, 10);
  ASSERT_EQ(explained.size(), 1u);
  const PendingExplanation& e = explained[0];
  EXPECT_EQ(e.job, wants);
  EXPECT_EQ(e.nodes_fit, 0);
  ASSERT_EQ(e.predicates.size(), 1u);
  EXPECT_EQ(e.predicates[0].words, "cannot allocate all claims");
  EXPECT_EQ(e.predicates[0].nodes, 4);
  // n1: one GPU left once "first" is bound; n0: all taken; n2 and n3: nothing matches
  // (n3 has no devices), the fewest devices short first, then by node.
  ASSERT_EQ(e.closest.size(), 3u);
  EXPECT_EQ(c.node(e.closest[0].node).name, "n1");
  EXPECT_EQ(e.closest[0].lacks,
            "claim ml/wants, request gpu: 1 of 2 matching devices free, needs 2");
  EXPECT_EQ(c.node(e.closest[1].node).name, "n0");
  EXPECT_EQ(e.closest[1].lacks,
            "claim ml/wants, request gpu: 0 of 4 matching devices free, needs 2");
  EXPECT_EQ(c.node(e.closest[2].node).name, "n2");
  EXPECT_EQ(e.closest[2].lacks, "claim ml/wants, request gpu: no device matches class gpu");
}

}  // namespace
}  // namespace gantry

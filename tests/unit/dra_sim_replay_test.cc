// A time-driven replay with `--gpu-api dra` (sim/replay_devices.h) makes the same decisions
// as with the device plugin: each GPU pod's claim is allocated on the GPUs the engine chose
// (the replay checks every bind), released when the pod ends or is evicted, and allocated
// again on the room its victims left when it was pipelined. Generated workloads that
// contend for the cluster: whole and shared GPUs and gangs, and tenants whose priorities
// make the engine preempt. Uses upstream's CEL (GANTRY_DRA_CEL builds only).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dra/selector_cache.h"
#include "sim/policies.h"
#include "sim/replay.h"
#include "sim/trace_csv.h"
#include "sim/workload.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

ClusterState GeneratedCluster(int64_t nodes) {
  ClusterState cluster;
  EXPECT_TRUE(AddTraceNodes(Must(GenerateNodes(nodes)), &cluster).ok());
  return cluster;
}

void ExpectSameRun(const ReplayResult& dra, const ReplayResult& plugin, const std::string& what) {
  EXPECT_EQ(dra.pods, plugin.pods) << what;
  EXPECT_EQ(dra.failed_tasks, plugin.failed_tasks) << what;
  EXPECT_EQ(dra.preempted_tasks, plugin.preempted_tasks) << what;
  EXPECT_EQ(dra.pipelined_tasks, plugin.pipelined_tasks) << what;
  EXPECT_EQ(dra.sessions, plugin.sessions) << what;
  EXPECT_EQ(dra.gpu_alloc_mean_pct, plugin.gpu_alloc_mean_pct) << what;
  EXPECT_EQ(dra.wait_s.mean, plugin.wait_s.mean) << what;
  EXPECT_EQ(dra.jct_s.mean, plugin.jct_s.mean) << what;
}

TEST(DraReplay, SameDecisionsAsTheDevicePlugin) {
  GeneratorOptions mixed;
  mixed.nodes = 12;
  mixed.pods = 600;
  mixed.arrivals_per_s = 0.5;
  mixed.mean_duration_s = 1800;
  mixed.pct_single = 50;
  mixed.pct_shared = 30;
  mixed.pct_gang = 10;
  mixed.pct_cpu = 10;
  GeneratorOptions tenants = mixed;
  tenants.queues = {{"a", 1}, {"b", 2}, {"c", 1}};
  for (const GeneratorOptions* generator : {&mixed, &tenants}) {
    ClusterState cluster = GeneratedCluster(generator->nodes);
    ASSERT_TRUE(AddGeneratedQueues(*generator, &cluster).ok());
    const std::vector<SimJob> jobs = Must(GenerateWorkload(*generator));
    for (const char* policy : {"binpack", "fgd", "gantry"}) {
      const std::string what =
          std::string(policy) + (generator->queues.empty() ? ", mixed" : ", tenants");
      SchedulerConfig config = std::string(policy) == "binpack"
                                   ? SchedulerConfig::Default()
                                   : Must(ReplayPolicyConfig(policy, 0));
      // Tenants reclaim what they deserve and preempt lower priorities: evictions, and
      // pipelined placements onto the victims' room.
      if (!generator->queues.empty()) {
        config.actions = {"enqueue", "allocate", "reclaim", "preempt", "backfill"};
      }
      const ReplayResult plugin = Must(RunReplay(cluster, jobs, config, 42, {}));
      dra::SelectorCache cache;
      const dra::CelVerdicts verdicts(cache);
      ReplayOptions options;
      options.gpu_api = GpuApi::kDra;
      options.dra_verdicts = &verdicts;
      const ReplayResult dra = Must(RunReplay(cluster, jobs, config, 42, options));
      EXPECT_GT(plugin.wait_s.mean, 0) << what;  // the cluster was contended: choices mattered
      ExpectSameRun(dra, plugin, what);
      if (!generator->queues.empty()) {
        EXPECT_GT(plugin.preempted_tasks, 0) << what;
        EXPECT_GT(plugin.pipelined_tasks, 0) << what;
      }
    }
  }
}

TEST(DraReplay, RefusedWithoutCelOrWithRunningGpuTasks) {
  ClusterState cluster = GeneratedCluster(2);
  GeneratorOptions small;
  small.nodes = 2;
  small.pods = 10;
  const std::vector<SimJob> jobs = Must(GenerateWorkload(small));
  ReplayOptions options;
  options.gpu_api = GpuApi::kDra;
  auto refused = RunReplay(cluster, jobs, SchedulerConfig::Default(), 42, options);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(Contains(refused.status().message(), "no CEL evaluator"));

  dra::SelectorCache cache;
  const dra::CelVerdicts verdicts(cache);
  options.dra_verdicts = &verdicts;
  Queue queue;
  queue.name = "q";
  const QueueId q = Must(cluster.AddQueue(std::move(queue)));
  Job job;
  job.name = "running";
  job.queue = q;
  const JobId running = Must(cluster.AddJob(std::move(job)));
  TaskSpec spec;
  spec.gpu.count = 1;
  const TaskId task = Must(cluster.AddTask(running, cluster.AddSpec(spec), "running-0"));
  ASSERT_TRUE(cluster.Place(task, 0, std::vector<int32_t>{0}).ok());
  refused = RunReplay(cluster, jobs, SchedulerConfig::Default(), 42, options);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(Contains(refused.status().message(), "task running-0 runs on GPUs"))
      << refused.status().message();
}

}  // namespace
}  // namespace gantry

// The workload profile the daemon keeps (model/arrival_profile.h, issue 14): decayed counts
// of the shapes that arrived, bounded in shapes; and the cluster cache feeding it, each pod
// of ours once, at its creation time.
#include "model/arrival_profile.h"

#include <gtest/gtest.h>

#include "daemon/cluster_cache.h"
#include "daemon/config.h"

namespace gantry {
namespace {

using json = nlohmann::json;
using k8s::EventType;

TaskShape Gpus(int32_t n) {
  TaskShape s;
  s.requests.Set(kCpu, 1000);
  s.gpu.count = n;
  return s;
}

TEST(ArrivalProfile, CountsHalveEveryHalfLife) {
  ArrivalProfile p(100, 8);
  p.Observe(Gpus(2), 0);
  p.Observe(Gpus(2), 0);
  p.Observe(Gpus(1), 100);  // the 2-GPU pair weighs 2 x 1/2 = 1 by now
  WorkloadProfile at_100 = p.ProfileAt(100);
  ASSERT_EQ(at_100.types.size(), 2u);
  EXPECT_EQ(at_100.types[0].count, 1000);  // 2-GPU: first kept wins the tie
  EXPECT_EQ(at_100.types[0].gpu.count, 2);
  EXPECT_EQ(at_100.types[1].count, 1000);
  EXPECT_EQ(at_100.total, 2000);
  // 200 s later every weight is a quarter.
  WorkloadProfile at_300 = p.ProfileAt(300);
  EXPECT_EQ(at_300.types[0].count, 250);
  EXPECT_EQ(at_300.total, 500);
}

TEST(ArrivalProfile, AnArrivalSeenLateCountsAtItsOwnTime) {
  ArrivalProfile p(100, 8);
  p.Observe(Gpus(1), 200);
  p.Observe(Gpus(8), 100);  // listed after, created before: half a task by 200
  WorkloadProfile w = p.ProfileAt(200);
  ASSERT_EQ(w.types.size(), 2u);
  EXPECT_EQ(w.types[0].gpu.count, 1);
  EXPECT_EQ(w.types[0].count, 1000);
  EXPECT_EQ(w.types[1].count, 500);
}

TEST(ArrivalProfile, ShapesAreBoundedAndTheLightestMakesRoom) {
  ArrivalProfile p(1000, 3);
  p.Observe(Gpus(1), 0);
  p.Observe(Gpus(1), 0);
  p.Observe(Gpus(2), 0);
  p.Observe(Gpus(2), 0);
  p.Observe(Gpus(4), 0);
  p.Observe(Gpus(8), 1000);  // a fourth shape: replaces 4-GPU (1/2 by now), the lightest
  EXPECT_EQ(p.shapes(), 3u);
  WorkloadProfile w = p.ProfileAt(1000);
  ASSERT_EQ(w.types.size(), 3u);
  for (const TaskType& t : w.types) EXPECT_NE(t.gpu.count, 4);
  // Thousands of distinct shapes from clients keep three.
  for (int i = 0; i < 5000; ++i) {
    TaskShape s = Gpus(1);
    s.requests.Set(kCpu, 1000 + i);
    p.Observe(s, 1000 + i);
  }
  EXPECT_EQ(p.shapes(), 3u);
}

json Pod(const std::string& name, int gpus, const std::string& created,
         const std::string& scheduler = "gantry") {
  return {{"metadata",
           {{"name", name},
            {"namespace", "ml"},
            {"uid", "uid-" + name},
            {"resourceVersion", "1"},
            {"creationTimestamp", created}}},
          {"spec",
           {{"schedulerName", scheduler},
            {"containers",
             {{{"name", "c"},
               {"resources",
                {{"requests", {{"cpu", "4"}, {"nvidia.com/gpu", std::to_string(gpus)}}}}}}}}}},
          {"status", {{"phase", "Pending"}}}};
}

TEST(ClusterCacheProfile, EachPodOfOursCountsOnceAtItsCreation) {
  ClusterCache c("gantry");
  c.SetProfileHalfLife(3600);
  const double t0 = 1'767'225'600;  // 2026-01-01T00:00:00Z
  c.OnPod(EventType::kAdded, Pod("a", 2, "2026-01-01T00:00:00Z"));
  c.OnPod(EventType::kModified, Pod("a", 2, "2026-01-01T00:00:00Z"));  // not a new arrival
  c.OnPod(EventType::kAdded, Pod("b", 2, "2026-01-01T00:00:00Z"));
  c.OnPod(EventType::kAdded, Pod("c", 1, "2026-01-01T01:00:00Z"));
  c.OnPod(EventType::kAdded, Pod("theirs", 4, "2026-01-01T01:00:00Z", "default-scheduler"));
  c.OnPod(EventType::kDeleted, Pod("a", 2, "2026-01-01T00:00:00Z"));  // seen: it stays
  WorkloadProfile w = c.ProfileAt(t0 + 3600);
  ASSERT_EQ(w.types.size(), 2u);
  EXPECT_EQ(w.types[0].gpu.count, 2);
  EXPECT_EQ(w.types[0].count, 1000);  // two, an hour (a half-life) ago
  EXPECT_EQ(w.types[1].gpu.count, 1);
  EXPECT_EQ(w.types[1].count, 1000);
  // Off: no profile.
  ClusterCache off("gantry");
  off.SetProfileHalfLife(0);
  off.OnPod(EventType::kAdded, Pod("a", 2, "2026-01-01T00:00:00Z"));
  EXPECT_TRUE(off.ProfileAt(t0).types.empty());
}

TEST(DaemonConfig, WorkloadProfileHalfLife) {
  DaemonConfig config;
  ASSERT_TRUE(ParseDaemonConfig("workloadProfileHalfLife: 6h\n", "c.yaml", &config).ok());
  EXPECT_EQ(config.workload_profile_half_life_s, 6 * 3600);
  ASSERT_TRUE(ParseDaemonConfig("workloadProfileHalfLife: 0\n", "c.yaml", &config).ok());
  EXPECT_EQ(config.workload_profile_half_life_s, 0);
  ASSERT_TRUE(ParseDaemonConfig("{}\n", "c.yaml", &config).ok());
  EXPECT_EQ(config.workload_profile_half_life_s, 86400);
  Status bad = ParseDaemonConfig("workloadProfileHalfLife: 9000h\n", "c.yaml", &config);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("c.yaml:1:26: workloadProfileHalfLife: must be 0 (no profile) to "
                               "720h, got \"9000h\""),
            std::string::npos)
      << bad.message();
}

}  // namespace
}  // namespace gantry

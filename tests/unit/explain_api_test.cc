// /api/explain's index and answers (daemon/explain_api.h), on a model named as the daemon
// names it: jobs "vc|ns/group" and "pod|ns/name", tasks "ns/pod".
#include "daemon/explain_api.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

using nlohmann::json;

// A gang "ns/trio" of three 8-GPU pods on two 8-GPU nodes (one short), and a bound pod
// "ns/solo" of its own: the index after one explained session.
std::shared_ptr<const ExplainIndex> Index() {
  ClusterState c;
  const NodeId n0 = AddGpuNode(c, "gpu-0", 8);
  AddGpuNode(c, "gpu-1", 8);
  AddGpuNode(c, "gpu-2", 8);
  const QueueId q = AddQueue(c, "default");
  const SpecId spec = c.AddSpec(GpuSpec(8));
  const JobId trio = AddEmptyJob(c, "vc|ns/trio", q, /*min_member=*/3);
  for (int i = 0; i < 3; ++i) Must(c.AddTask(trio, spec, "ns/trio-" + std::to_string(i)));
  const JobId solo = AddEmptyJob(c, "pod|ns/solo", q);
  const TaskId solo_task = Must(c.AddTask(solo, spec, "ns/solo"));
  const std::vector<int32_t> all = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_TRUE(c.Place(solo_task, n0, all).ok());
  const Policy policy = MustCompile(SchedulerConfig::Default());
  const Snapshot snapshot(c);
  Session session(snapshot, policy);
  const Decisions d = session.Run();
  return BuildExplainIndex(c, d, ExplainPending(session, d, 10), "gantry-test");
}

TEST(ExplainApi, APodOfAPendingGangCarriesItsExplanation) {
  const auto index = Index();
  ASSERT_TRUE(index->pods.count("ns/trio-1"));
  const json j = json::parse(index->pods.at("ns/trio-1"));
  EXPECT_EQ(j["kind"], "Pod");
  EXPECT_EQ(j["namespace"], "ns");
  EXPECT_EQ(j["name"], "trio-1");
  EXPECT_EQ(j["job"], "ns/trio");
  EXPECT_EQ(j["state"], "pending");
  EXPECT_EQ(j["gang"].dump(),
            R"({"minMember":3,"placeableNow":2,"running":0,"short":1})");  // keys sorted
  EXPECT_EQ(j["wouldTake"], "1 more node with 8 free GPUs");
}

TEST(ExplainApi, TheGroupAndTheBoundPod) {
  const auto index = Index();
  ASSERT_TRUE(index->groups.count("ns/trio"));
  const json group = json::parse(index->groups.at("ns/trio"));
  EXPECT_EQ(group["kind"], "PodGroup");
  EXPECT_EQ(group["state"], "pending");
  EXPECT_EQ(group["pendingTasks"], 3);
  ASSERT_TRUE(index->pods.count("ns/solo"));
  const json solo = json::parse(index->pods.at("ns/solo"));
  EXPECT_EQ(solo["state"], "bound");
  EXPECT_EQ(solo["node"], "gpu-0");
  EXPECT_FALSE(index->groups.count("ns/solo"));  // a pod without a group is no PodGroup
}

TEST(ExplainApi, Answers) {
  ExplainBoard board;
  EXPECT_EQ(board.Answer("/api/explain/ns/trio").status, 503);
  board.Publish(Index());
  EXPECT_EQ(board.Answer("/api/explain/ns/trio").status, 200);
  EXPECT_EQ(json::parse(board.Answer("/api/explain/ns/trio").body)["kind"], "PodGroup");
  EXPECT_EQ(json::parse(board.Answer("/api/explain/ns/trio-0").body)["kind"], "Pod");
  const ExplainAnswer unknown = board.Answer("/api/explain/ns/nope");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_NE(json::parse(unknown.body)["error"].get<std::string>().find(
                "no pod or PodGroup ns/nope that gantry schedules (schedulerName gantry-test)"),
            std::string::npos);
  EXPECT_EQ(board.Answer("/api/explain/ns").status, 400);
  EXPECT_EQ(board.Answer("/api/explain/ns/a/b").status, 400);
  EXPECT_EQ(board.Answer("/api/explain//a").status, 400);
}

}  // namespace
}  // namespace gantry

// The daemon's Volcano Queue reader: the tree (spec.parent), spec.reclaimable and
// spec.deserved into the model, and queues out of the tree reported, the rest going on.
#include <gtest/gtest.h>

#include <string>

#include "daemon/cluster_cache.h"
#include "model/usage_memory.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

using json = nlohmann::json;
using k8s::EventType;

json QueueObject(const std::string& name, json spec) {
  return {{"metadata", {{"name", name}, {"uid", "uid-q-" + name}}}, {"spec", std::move(spec)}};
}

int CountProblems(const std::vector<ObjectEvent>& problems, const std::string& name,
                  const std::string& part) {
  int n = 0;
  for (const ObjectEvent& e : problems) {
    if (e.name == name && e.type == "Warning" && e.message.find(part) != std::string::npos) ++n;
  }
  return n;
}

TEST(ClusterCacheQueues, ParentReclaimableAndDeservedAreRead) {
  ClusterCache c("gantry");
  c.OnQueue(EventType::kAdded, QueueObject("org", {{"weight", 2}}));
  c.OnQueue(EventType::kAdded, QueueObject("team", {{"parent", "org"},
                                                    {"reclaimable", false},
                                                    {"deserved", {{"nvidia.com/gpu", 4}}}}));
  const ClusterState& s = c.state();
  QueueId org = s.FindQueue("org");
  QueueId team = s.FindQueue("team");
  ASSERT_NE(team, kNone);
  EXPECT_EQ(s.queue(team).parent, org);
  EXPECT_FALSE(s.queue(team).reclaimable);
  EXPECT_EQ(s.queue(team).deserved.Get(kGpu), 4000);
  EXPECT_EQ(s.queue(org).parent, kNone);
  EXPECT_TRUE(s.queue(org).reclaimable);
  EXPECT_TRUE(c.TakeProblems().empty());
}

TEST(ClusterCacheQueues, ChildBeforeItsParentIsLinkedWhenTheParentComes) {
  ClusterCache c("gantry");
  c.OnQueue(EventType::kAdded, QueueObject("team", {{"parent", "org"}}));
  QueueId team = c.state().FindQueue("team");
  EXPECT_EQ(c.state().queue(team).missing_parent, "org");
  EXPECT_EQ(CountProblems(c.TakeProblems(), "team", "parent queue \"org\" does not exist"), 1);
  c.OnQueue(EventType::kAdded, QueueObject("org", json::object()));
  EXPECT_EQ(c.state().queue(team).parent, c.state().FindQueue("org"));
  EXPECT_EQ(c.state().queue(team).missing_parent, "");
  EXPECT_TRUE(c.TakeProblems().empty());
  // Deleting the parent leaves the child without one again.
  c.OnQueue(EventType::kDeleted, QueueObject("org", json::object()));
  EXPECT_EQ(c.state().queue(team).missing_parent, "org");
  EXPECT_EQ(CountProblems(c.TakeProblems(), "team", "does not exist"), 1);
}

TEST(ClusterCacheQueues, VolcanosRootIsTheTopLevel) {
  ClusterCache c("gantry");
  c.OnQueue(EventType::kAdded, QueueObject("team", {{"parent", "root"}}));
  QueueId team = c.state().FindQueue("team");
  EXPECT_EQ(c.state().queue(team).parent, kNone);
  EXPECT_EQ(c.state().queue(team).missing_parent, "");
  EXPECT_TRUE(c.TakeProblems().empty());
}

TEST(ClusterCacheQueues, CycleIsReportedOnceAndOtherQueuesGoOn) {
  ClusterCache c("gantry");
  c.OnQueue(EventType::kAdded, QueueObject("a", {{"parent", "b"}}));
  c.OnQueue(EventType::kAdded, QueueObject("b", {{"parent", "a"}}));
  c.OnQueue(EventType::kAdded, QueueObject("fine", json::object()));
  std::vector<ObjectEvent> problems = c.TakeProblems();
  EXPECT_EQ(CountProblems(problems, "a", "cycle of parents"), 1);
  EXPECT_EQ(CountProblems(problems, "b", "cycle of parents"), 1);
  EXPECT_EQ(CountProblems(problems, "fine", ""), 0);
  // A later event that changes nothing reports nothing again.
  c.OnQueue(EventType::kModified, QueueObject("fine", {{"weight", 2}}));
  EXPECT_TRUE(c.TakeProblems().empty());
  // Breaking the cycle puts both back.
  c.OnQueue(EventType::kModified, QueueObject("b", json::object()));
  EXPECT_TRUE(c.TakeProblems().empty());
  EXPECT_EQ(c.state().queue(c.state().FindQueue("a")).parent, c.state().FindQueue("b"));
}

TEST(ClusterCacheQueues, ChildGuaranteeAboveTheParentsIsReportedNamingBoth) {
  ClusterCache c("gantry");
  c.OnQueue(EventType::kAdded, QueueObject("org", {{"capability", {{"nvidia.com/gpu", 4}}}}));
  c.OnQueue(EventType::kAdded,
            QueueObject("team", {{"parent", "org"},
                                 {"guarantee", {{"resource", {{"nvidia.com/gpu", 6}}}}}}));
  EXPECT_EQ(
      CountProblems(c.TakeProblems(), "team", "exceeds the capability of its parent queue \"org\""),
      1);
}

TEST(ClusterCacheQueues, BadTreeFieldsAreRefused) {
  ClusterCache c("gantry");
  c.OnQueue(EventType::kAdded, QueueObject("q", {{"parent", 7}}));
  EXPECT_EQ(CountProblems(c.TakeProblems(), "q", "spec.parent"), 1);
  c.OnQueue(EventType::kAdded, QueueObject("r", {{"reclaimable", "no"}}));
  EXPECT_EQ(CountProblems(c.TakeProblems(), "r", "spec.reclaimable"), 1);
  c.OnQueue(EventType::kAdded, QueueObject("s", {{"capability", {{"nvidia.com/gpu", 2}}},
                                                 {"deserved", {{"nvidia.com/gpu", 3}}}}));
  EXPECT_EQ(CountProblems(c.TakeProblems(), "s", "deserved"), 1);
}

// Fair share with memory: the annotation on a top-level queue sets its tree's half-life,
// one on a child queue is refused with the queue's problem, and a deleted queue has none.
TEST(ClusterCacheQueues, UsageHalfLifeAnnotationOnTheTopLevelQueue) {
  ClusterCache c("gantry");
  json org = QueueObject("org", json::object());
  org["metadata"]["annotations"] = {{"gantry.dev/usage-half-life-seconds", "86400"}};
  c.OnQueue(EventType::kAdded, org);
  json team = QueueObject("team", {{"parent", "org"}});
  c.OnQueue(EventType::kAdded, team);
  const QueueId org_id = c.state().FindQueue("org");
  const QueueId team_id = c.state().FindQueue("team");
  EXPECT_EQ(c.state().queue(org_id).usage_half_life_s, 86400);
  EXPECT_EQ(TreeUsageHalfLife(c.state(), team_id), 86400);
  EXPECT_TRUE(c.TakeProblems().empty());

  team["metadata"]["annotations"] = {{"gantry.dev/usage-half-life-seconds", "60"}};
  c.OnQueue(EventType::kModified, team);
  EXPECT_EQ(CountProblems(c.TakeProblems(), "team", "set on the top-level queue of a tree"), 1);
  EXPECT_EQ(c.state().queue(team_id).usage_half_life_s, 0);  // the earlier version holds

  c.OnQueue(EventType::kDeleted, org);
  EXPECT_EQ(c.state().queue(org_id).usage_half_life_s, 0);
}

}  // namespace
}  // namespace gantry

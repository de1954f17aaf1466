// The daemon's job order: by the objects' metadata.creationTimestamp (a PodGroup's for its
// gang, else the pod's), ties by the job's key, whatever order the informers deliver them
// in and however many caches the process holds.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "daemon/cluster_cache.h"
#include "engine/session.h"
#include "engine/snapshot.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

using json = nlohmann::json;
using k8s::EventType;

json NodeObject(const std::string& name, int gpus) {
  return {{"metadata", {{"name", name}, {"uid", "uid-" + name}}},
          {"status",
           {{"allocatable",
             {{"cpu", "64"},
              {"memory", "512Gi"},
              {"pods", "110"},
              {"nvidia.com/gpu", std::to_string(gpus)}}}}}};
}

// A pending pod of ours asking for one GPU, created at `created` (omitted when empty).
json PodObject(const std::string& name, const std::string& created) {
  json pod = {{"metadata", {{"name", name}, {"namespace", "ml"}, {"uid", "uid-" + name}}},
              {"spec",
               {{"schedulerName", "gantry"},
                {"containers",
                 {{{"name", "c"},
                   {"resources", {{"requests", {{"cpu", "1"}, {"nvidia.com/gpu", "1"}}}}}}}}}},
              {"status", {{"phase", "Pending"}}}};
  if (!created.empty()) pod["metadata"]["creationTimestamp"] = created;
  return pod;
}

json Grouped(json pod, const std::string& group) {
  pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"] = group;
  return pod;
}

json VolcanoGroup(const std::string& name, const std::string& created) {
  return {{"metadata",
           {{"name", name},
            {"namespace", "ml"},
            {"uid", "uid-pg-" + name},
            {"creationTimestamp", created}}},
          {"spec", {{"minMember", 1}}}};
}

// The pods bound by one scheduling session on the cache's state, as the daemon runs it.
std::vector<std::string> BoundBySession(ClusterCache& cache) {
  const Decisions decisions = RunSession(cache.state());
  std::vector<std::string> bound;
  for (const BindRequest& b : cache.Assume(decisions)) bound.push_back(b.name);
  return bound;
}

// The pods' names in the order the session takes their jobs among equals: creation, then
// job id (Session::CompareJobs).
std::vector<std::string> JobOrder(const ClusterState& state) {
  std::vector<const Task*> tasks;
  for (const Task& t : state.tasks()) {
    if (t.job != kNone) tasks.push_back(&t);
  }
  std::sort(tasks.begin(), tasks.end(), [&](const Task* a, const Task* b) {
    const Job& ja = state.job(a->job);
    const Job& jb = state.job(b->job);
    if (ja.creation != jb.creation) return ja.creation < jb.creation;
    return a->job < b->job;
  });
  std::vector<std::string> names;
  for (const Task* t : tasks) names.push_back(t->name);
  return names;
}

ClusterCache CacheWith(const std::vector<json>& objects, int gpus = 1) {
  ClusterCache cache("gantry");
  cache.OnNode(EventType::kAdded, NodeObject("n1", gpus));
  for (const json& o : objects) {
    if (o.contains("spec") && o["spec"].contains("minMember")) {
      cache.OnPodGroup(k8s::GroupApi::kVolcano, EventType::kAdded, o);
    } else {
      cache.OnPod(EventType::kAdded, o);
    }
  }
  return cache;
}

TEST(ClusterCacheOrder, JobsGoInCreationTimestampOrderWhateverTheArrivalOrder) {
  const json late = PodObject("late", "2024-05-01T12:00:20Z");
  const json early = PodObject("early", "2024-05-01T12:00:05Z");
  const json middle = PodObject("middle", "2024-05-01T13:00:10+01:00");  // 12:00:10Z
  for (const std::vector<json>& arrival :
       {std::vector<json>{late, early, middle}, std::vector<json>{middle, late, early},
        std::vector<json>{early, middle, late}}) {
    ClusterCache cache = CacheWith(arrival);
    EXPECT_EQ(JobOrder(cache.state()),
              (std::vector<std::string>{"ml/early", "ml/middle", "ml/late"}));
    // One GPU: only the first in line is placed.
    EXPECT_EQ(BoundBySession(cache), std::vector<std::string>{"early"});
  }
}

TEST(ClusterCacheOrder, TiesGoByNameWhateverTheArrivalOrder) {
  const std::string second = "2024-05-01T12:00:00Z";
  const json b = PodObject("b", second), a = PodObject("a", second), c = PodObject("c", second);
  for (const std::vector<json>& arrival :
       {std::vector<json>{b, a, c}, std::vector<json>{c, b, a}, std::vector<json>{a, c, b}}) {
    ClusterCache cache = CacheWith(arrival);
    EXPECT_EQ(JobOrder(cache.state()), (std::vector<std::string>{"ml/a", "ml/b", "ml/c"}));
    EXPECT_EQ(BoundBySession(cache), std::vector<std::string>{"a"});
  }
  // And a tie with an earlier second still goes after it.
  ClusterCache cache =
      CacheWith({b, PodObject("z", "2024-05-01T11:59:59Z"), a, PodObject("y", second)});
  EXPECT_EQ(JobOrder(cache.state()), (std::vector<std::string>{"ml/z", "ml/a", "ml/b", "ml/y"}));
}

TEST(ClusterCacheOrder, TwoCachesInOneProcessShareNoCounter) {
  const std::vector<json> pods = {PodObject("p", "2024-05-01T12:00:00Z"),
                                  PodObject("q", "2024-05-01T12:00:01Z")};
  ClusterCache first = CacheWith(pods);
  ClusterCache second = CacheWith(pods);
  auto creations = [](const ClusterCache& c) {
    std::vector<int64_t> out;
    for (const Task& t : c.state().tasks()) {
      if (t.job != kNone) out.push_back(c.state().job(t.job).creation);
    }
    return out;
  };
  EXPECT_EQ(creations(first), creations(second));
}

TEST(ClusterCacheOrder, AGangGoesByItsPodGroupsTimestamp) {
  // The gang's pod is newer than the lone pod, its PodGroup older.
  const json group = VolcanoGroup("train", "2024-05-01T11:00:00Z");
  const json worker = Grouped(PodObject("worker", "2024-05-01T12:30:00Z"), "train");
  const json lone = PodObject("lone", "2024-05-01T12:00:00Z");
  for (const std::vector<json>& arrival :
       {std::vector<json>{group, worker, lone}, std::vector<json>{lone, worker, group},
        std::vector<json>{worker, lone, group}}) {
    ClusterCache cache = CacheWith(arrival);
    EXPECT_EQ(JobOrder(cache.state()), (std::vector<std::string>{"ml/worker", "ml/lone"}));
    EXPECT_EQ(BoundBySession(cache), std::vector<std::string>{"worker"});
  }
}

TEST(ClusterCacheOrder, AHeldJobKeepsItsPlaceWhenReleased) {
  // The gang waits for its PodGroup (no task meanwhile); once it comes, it goes by the
  // group's time, not to the back of the line.
  ClusterCache cache = CacheWith({Grouped(PodObject("worker", "2024-05-01T12:30:00Z"), "train"),
                                  PodObject("lone", "2024-05-01T12:00:00Z")});
  EXPECT_EQ(JobOrder(cache.state()), std::vector<std::string>{"ml/lone"});
  cache.OnPodGroup(k8s::GroupApi::kVolcano, EventType::kAdded,
                   VolcanoGroup("train", "2024-05-01T11:00:00Z"));
  EXPECT_EQ(JobOrder(cache.state()), (std::vector<std::string>{"ml/worker", "ml/lone"}));
  // The group recreated later: the gang follows.
  cache.OnPodGroup(k8s::GroupApi::kVolcano, EventType::kModified,
                   VolcanoGroup("train", "2024-05-01T12:45:00Z"));
  EXPECT_EQ(JobOrder(cache.state()), (std::vector<std::string>{"ml/lone", "ml/worker"}));
}

TEST(ClusterCacheOrder, AnUnreadableCreationTimestampIsNotScheduledAndSaysWhy) {
  ClusterCache cache =
      CacheWith({PodObject("odd", "yesterday"), PodObject("fine", "2024-05-01T12:00:00Z")}, 8);
  EXPECT_EQ(JobOrder(cache.state()), std::vector<std::string>{"ml/fine"});
  EXPECT_EQ(BoundBySession(cache), std::vector<std::string>{"fine"});
  std::vector<PodCondition> conditions;
  std::vector<GroupStatus> groups;
  std::vector<ObjectEvent> events;
  cache.CollectStatus(Decisions{}, &conditions, &groups, &events);
  ASSERT_EQ(conditions.size(), 1u);
  EXPECT_EQ(conditions[0].name, "odd");
  EXPECT_NE(conditions[0].message.find("metadata.creationTimestamp"), std::string::npos)
      << conditions[0].message;
  EXPECT_NE(conditions[0].message.find("\"yesterday\""), std::string::npos)
      << conditions[0].message;
  // Bound, it still counts on its node.
  json bound = PodObject("odd", "yesterday");
  bound["spec"]["nodeName"] = "n1";
  bound["status"]["phase"] = "Running";
  cache.OnPod(EventType::kModified, bound);
  EXPECT_EQ(cache.state().node(cache.state().FindNode("n1")).used.Get(kGpu), 2000);
}

TEST(ClusterCacheOrder, AnUnreadableGroupTimestampHoldsTheGang) {
  ClusterCache cache = CacheWith({VolcanoGroup("train", "2024-13-01T00:00:00Z"),
                                  Grouped(PodObject("worker", "2024-05-01T12:00:00Z"), "train")});
  EXPECT_TRUE(JobOrder(cache.state()).empty());
  bool said = false;
  for (const ObjectEvent& e : cache.TakeProblems()) {
    said = said || (e.reason == "InvalidPodGroup" &&
                    e.message.find("metadata.creationTimestamp") != std::string::npos &&
                    e.message.find("\"2024-13-01T00:00:00Z\"") != std::string::npos);
  }
  EXPECT_TRUE(said);
}

TEST(ClusterCacheOrder, ManyJobsInOneSecondInAnyOrder) {
  // Arrivals in reverse name order push each earlier-filed job back one place.
  std::vector<json> pods;
  for (int i = 299; i >= 0; --i) {
    char name[16];
    std::snprintf(name, sizeof name, "p%03d", i);
    pods.push_back(PodObject(name, "2024-05-01T12:00:00Z"));
  }
  pods.push_back(PodObject("first", "2024-05-01T11:59:59Z"));
  pods.push_back(PodObject("last", "2024-05-01T12:00:01Z"));
  ClusterCache cache = CacheWith(pods);
  const std::vector<std::string> order = JobOrder(cache.state());
  ASSERT_EQ(order.size(), 302u);
  EXPECT_EQ(order.front(), "ml/first");
  EXPECT_EQ(order.back(), "ml/last");
  EXPECT_TRUE(std::is_sorted(order.begin() + 1, order.end() - 1));
  // Leaving and coming back takes the same place.
  cache.OnPod(EventType::kDeleted, pods[150]);
  cache.OnPod(EventType::kAdded, pods[150]);
  EXPECT_EQ(JobOrder(cache.state()), order);
}

}  // namespace
}  // namespace gantry

// The datalocality scorer (engine/plugins/data_locality.cc): what it scores, when it is out
// of the session, which nodes it has the search visit first, and its arguments.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/plugins/plugins.h"
#include "engine/registry.h"
#include "engine/session.h"
#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {


NodeId AddCachingNode(ClusterState& c, const std::string& name, std::vector<std::string> cached,
                      Labels labels = {}) {
  Node node;
  node.name = name;
  node.allocatable = ResourceVector{{kCpu, 64000}, {kMemory, 64 * kGi}};
  node.labels = std::move(labels);
  node.cached_datasets = std::move(cached);
  return Must(c.AddNode(std::move(node)));
}

Labels FluidLabel(const std::string& key, const std::string& value = "true") {
  Labels labels;
  labels.Set(key, value);
  return labels;
}

TaskSpec Reads(std::vector<std::string> datasets) {
  TaskSpec spec = CpuSpec(1000);
  spec.datasets = std::move(datasets);
  return spec;
}

class DataLocalityTest : public ::testing::Test {
 protected:
  // Scores of `spec` (one of c_'s specs) on each node, in node order.
  std::vector<int64_t> Scores(const TaskSpec& spec, PluginConfig config = {"datalocality", {}}) {
    plugin_ = Must(MakePlugin(config));
    scorer_ = dynamic_cast<NodeScorer*>(plugin_.get());
    EXPECT_NE(scorer_, nullptr);
    snapshot_ = std::make_unique<Snapshot>(c_);
    session_ = std::make_unique<Session>(*snapshot_, policy_);
    plugin_->OnSessionOpen(*session_);
    std::vector<int64_t> out;
    for (NodeId n = 0; n < c_.nodes().size(); ++n) {
      out.push_back(scorer_->ScoreNode(*session_, spec, n, GpuChoice{}));
    }
    return out;
  }

  ClusterState c_;
  Policy policy_ = MustCompile(SchedulerConfig::Default());
  std::unique_ptr<Plugin> plugin_;
  NodeScorer* scorer_ = nullptr;
  std::unique_ptr<Snapshot> snapshot_;
  std::unique_ptr<Session> session_;
};

TEST_F(DataLocalityTest, ScoresTheCachedShareOfTheDataWithinItsBand) {
  ASSERT_TRUE(c_.SetDatasets({Info("ml/a", 300 * kGiB), Info("ml/b", 100 * kGiB)}).ok());
  AddCachingNode(c_, "list", {"ml/a"});
  AddCachingNode(c_, "label", {}, FluidLabel("fluid.io/s-ml-b"));
  AddCachingNode(c_, "both", {"ml/a"}, FluidLabel("fluid.io/s-ml-b"));
  AddCachingNode(c_, "none", {}, FluidLabel("fluid.io/s-ml-b", "false"));
  const TaskSpec& spec = c_.spec(c_.AddSpec(Reads({"ml/a", "ml/b"})));
  // A tenth of kMaxNodeScore for all of the data, by bytes.
  EXPECT_EQ(Scores(spec), (std::vector<int64_t>{75000, 25000, 100000, 0}));
  EXPECT_EQ(Scores(spec, {"datalocality", {{"bandPercent", "50"}}}),
            (std::vector<int64_t>{375000, 125000, 500000, 0}));
}

TEST_F(DataLocalityTest, UnknownSizesWeighAsTheMeanKnownOneOrAllAlike) {
  ASSERT_TRUE(c_.SetDatasets({Info("ml/a", 100 * kGiB), Info("ml/c", 300 * kGiB)}).ok());
  AddCachingNode(c_, "a", {"ml/a"});
  AddCachingNode(c_, "b", {"ml/b"});  // unknown size: the mean of 100 and 300
  const SpecId spec = c_.AddSpec(Reads({"ml/a", "ml/b", "ml/c"}));
  const SpecId unknown = c_.AddSpec(Reads({"ml/b", "ml/d"}));
  EXPECT_EQ(Scores(c_.spec(spec)), (std::vector<int64_t>{100000 * 100 / 600, 100000 * 200 / 600}));
  EXPECT_EQ(Scores(c_.spec(unknown)), (std::vector<int64_t>{0, 50000}));
}

TEST_F(DataLocalityTest, ALongNamesLabelIsKnownByTheDatasetsUid) {
  const std::string name = std::string(20, 'n') + "/" + std::string(40, 'x');
  AddCachingNode(c_, "uid", {}, FluidLabel("fluid.io/s-1234-abcd"));
  const TaskSpec& spec = c_.spec(c_.AddSpec(Reads({name})));
  EXPECT_EQ(Scores(spec), std::vector<int64_t>{0});  // the uid is not known
  ASSERT_TRUE(c_.SetDatasets({Info(name, 0, "1234-abcd")}).ok());
  EXPECT_EQ(Scores(spec), std::vector<int64_t>{100000});
}

TEST_F(DataLocalityTest, OutOfSessionsWhereNoSpecReadsData) {
  AddCachingNode(c_, "n", {"ml/a"});
  const SpecId plain = c_.AddSpec(CpuSpec(1000));
  Scores(c_.spec(plain));
  EXPECT_FALSE(plugin_->ActiveInSession());
  EXPECT_FALSE(scorer_->Scores(*session_, c_.spec(plain)));
  const SpecId reads = c_.AddSpec(Reads({"ml/a"}));
  Scores(c_.spec(reads));
  EXPECT_TRUE(plugin_->ActiveInSession());
  EXPECT_TRUE(scorer_->Scores(*session_, c_.spec(reads)));
  EXPECT_FALSE(scorer_->Scores(*session_, c_.spec(plain)));
}

TEST_F(DataLocalityTest, VisitsFirstTheLiveNodesCachingAnyOfTheData) {
  AddCachingNode(c_, "n0", {});
  AddCachingNode(c_, "n1", {"ml/b"});
  AddCachingNode(c_, "n2", {}, FluidLabel("fluid.io/s-ml-a"));
  const NodeId gone = AddCachingNode(c_, "n3", {"ml/a"});
  AddCachingNode(c_, "n4", {"ml/c"}, FluidLabel("fluid.io/s-ml-a", "no"));
  c_.RemoveNode(gone);
  const TaskSpec& spec = c_.spec(c_.AddSpec(Reads({"ml/a", "ml/b"})));
  Scores(spec);
  const std::vector<NodeId>* first = scorer_->VisitFirst(*session_, spec);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(*first, (std::vector<NodeId>{1, 2}));
  EXPECT_EQ(scorer_->VisitFirst(*session_, spec), first);  // once per spec and session
}

TEST(DataLocalityArgumentsTest, BandAndWeightAreBounded) {
  EXPECT_TRUE(MakePlugin({"datalocality", {{"weight", "3"}, {"bandPercent", "100"}}}).ok());
  for (const auto& [key, value, why] :
       {std::tuple{"bandPercent", "0", "bandPercent must be 1 to 100, got 0"},
        std::tuple{"bandPercent", "101", "bandPercent must be 1 to 100, got 101"},
        std::tuple{"weight", "1001", "weight must be at most 1000"},
        std::tuple{"weight", "-1", "must be a non-negative integer"},
        std::tuple{"size", "1", "unknown argument \"size\""}}) {
    auto plugin = MakePlugin({"datalocality", {{key, value}}});
    ASSERT_FALSE(plugin.ok()) << key << "=" << value;
    EXPECT_TRUE(Contains(plugin.status().message(), why)) << plugin.status().message();
  }
}

TEST(DataLocalitySessionTest, AmongNodesThatPackAlikeTheCachedOneWins) {
  ClusterState c;
  AddGpuNode(c, "a", 8);
  AddGpuNode(c, "b", 8);
  const NodeId cached = AddGpuNode(c, "c", 8);
  ASSERT_TRUE(c.SetCachedDatasets(cached, {"ml/a"}).ok());
  const QueueId q = AddQueue(c, "q");
  TaskSpec spec = GpuSpec(2, 1000);
  spec.datasets = {"ml/a"};
  AddJob(c, "train", q, spec, 1);
  EXPECT_EQ(BindsOf(c, RunSession(c)), "train-0@c");
  EXPECT_EQ(BindsOf(c, RunSession(c, DefaultWithout("datalocality"))), "train-0@a");
}

TEST(DataLocalitySessionTest, APackingScoreAheadByMoreThanTheBandWins) {
  // b runs six of its eight GPUs; c is idle and caches the data. A 2-GPU task on b fills
  // it: binpack's lead is far above a tenth of its range.
  ClusterState c;
  AddGpuNode(c, "a", 8);
  const NodeId b = AddGpuNode(c, "b", 8);
  const NodeId cached = AddGpuNode(c, "c", 8);
  ASSERT_TRUE(c.SetCachedDatasets(cached, {"ml/a"}).ok());
  const QueueId q = AddQueue(c, "q");
  Occupy(c, q, b, {0, 1, 2, 3, 4, 5});
  TaskSpec spec = GpuSpec(2, 1000);
  spec.datasets = {"ml/a"};
  AddJob(c, "train", q, spec, 1, 1, 0, 1);
  EXPECT_EQ(BindsOf(c, RunSession(c)), "train-0@b");
  // With its weight raised to match binpack's range, data wins.
  SchedulerConfig heavy = DefaultWithout("datalocality");
  heavy.plugins.push_back({"datalocality", {{"weight", "10"}}});
  EXPECT_EQ(BindsOf(c, RunSession(c, heavy)), "train-0@c");
}

TEST(DataLocalitySessionTest, CachedNodesBeyondNodesToScoreAreScored) {
  ClusterState c;
  for (int i = 0; i < 6; ++i) AddGpuNode(c, "n" + std::to_string(i), 8);
  ASSERT_TRUE(c.SetCachedDatasets(5, {"ml/a"}).ok());
  const QueueId q = AddQueue(c, "q");
  TaskSpec spec = GpuSpec(8, 1000);
  spec.datasets = {"ml/a"};
  AddJob(c, "train", q, spec, 1);
  SchedulerConfig config = SchedulerConfig::Default();
  config.nodes_to_score = 2;
  EXPECT_EQ(BindsOf(c, RunSession(c, config)), "train-0@n5");
  // A list longer than nodesToScore is not visited first: the packing order decides.
  for (NodeId n = 0; n < 5; ++n) ASSERT_TRUE(c.SetCachedDatasets(n, {"ml/a"}).ok());
  EXPECT_EQ(BindsOf(c, RunSession(c, config)), "train-0@n0");
}

TEST(DataLocalitySessionTest, ASessionWithoutDataDecidesAsWithoutThePlugin) {
  ClusterState c;
  AddGpuNode(c, "a", 8);
  const NodeId b = AddGpuNode(c, "b", 8);
  ASSERT_TRUE(c.SetCachedDatasets(b, {"ml/a"}).ok());
  const QueueId q = AddQueue(c, "q");
  AddJob(c, "one", q, GpuSpec(1, 1000), 3);
  AddJob(c, "two", q, GpuSpec(4, 1000), 2, 1, 0, 1);
  EXPECT_EQ(BindsOf(c, RunSession(c)), BindsOf(c, RunSession(c, DefaultWithout("datalocality"))));
}

}  // namespace
}  // namespace gantry

#include "sim/cluster_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "model/limits.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

// A file under a fresh temporary directory, removed with it.
class ClusterFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("gantry_cluster_file_test_" +
            std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }

  std::filesystem::path dir_;
};

const char kNodeHeader[] = "sn,cpu_milli,memory_mib,gpu,model\n";

TEST_F(ClusterFileTest, ReadsANodeList) {
  ClusterState cluster = Must(
      LoadClusterFile(Write("nodes.csv", std::string(kNodeHeader) + "n0,64000,262144,2,P100\n")));
  ASSERT_EQ(cluster.nodes().size(), 1u);
  EXPECT_EQ(cluster.capacity().Get(kGpu), 2000);
}

TEST_F(ClusterFileTest, ANodeListWithAByteOrderMarkIsStillANodeList) {
  ClusterState cluster = Must(LoadClusterFile(
      Write("nodes.csv", "\xEF\xBB\xBF" + std::string(kNodeHeader) + "n0,64000,262144,2,P100\n")));
  ASSERT_EQ(cluster.nodes().size(), 1u);
  EXPECT_EQ(cluster.node(0).name, "n0");
}

TEST_F(ClusterFileTest, ANodeListWithoutAHeaderIsACsvErrorNotAYamlOne) {
  const std::string path = Write("nodes.csv", "n0,64000,262144,2,P100\nn1,64000,262144,2,P100\n");
  auto cluster = LoadClusterFile(path);
  ASSERT_FALSE(cluster.ok());
  const std::string& m = cluster.status().message();
  EXPECT_EQ(m.rfind(path + ":1:", 0), 0u) << m;
  EXPECT_NE(m.find("sn,cpu_milli,memory_mib,gpu,model"), std::string::npos) << m;
  EXPECT_EQ(m.find("mapping"), std::string::npos) << m;
}

TEST_F(ClusterFileTest, APodListIsRefusedAsACluster) {
  const std::string path =
      Write("pods.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1,1,0,0\n");
  auto cluster = LoadClusterFile(path);
  ASSERT_FALSE(cluster.ok());
  EXPECT_EQ(cluster.status().message().rfind(path + ":1:", 0), 0u) << cluster.status().message();
  EXPECT_NE(cluster.status().message().find("sn,cpu_milli"), std::string::npos)
      << cluster.status().message();
}

TEST_F(ClusterFileTest, DuplicateNodesNameTheFileAndLines) {
  const std::string path = Write("nodes.csv", std::string(kNodeHeader) + "n0,1,1,0,\nn0,1,1,0,\n");
  auto cluster = LoadClusterFile(path);
  ASSERT_FALSE(cluster.ok());
  EXPECT_EQ(cluster.status().message().rfind(path + ":3:1: ", 0), 0u) << cluster.status().message();
  EXPECT_NE(cluster.status().message().find("line 2"), std::string::npos)
      << cluster.status().message();
}

TEST_F(ClusterFileTest, ReadsTheNodesOfAScenario) {
  const std::string path = Write("scenario.yaml",
                                 "# a cluster\n"
                                 "name: c\n"
                                 "nodes:\n"
                                 "  - {name: a, allocatable: {cpu: \"8\", memory: 32Gi}}\n");
  ClusterState cluster = Must(LoadClusterFile(path));
  ASSERT_EQ(cluster.nodes().size(), 1u);
  EXPECT_EQ(cluster.node(0).name, "a");
}

TEST_F(ClusterFileTest, AFileAboveTheSizeLimitIsRefusedWithoutReadingIt) {
  const std::string path = Write("big.csv", kNodeHeader);
  std::filesystem::resize_file(path, static_cast<uintmax_t>(kMaxInputFileBytes) + 1);  // sparse
  auto cluster = LoadClusterFile(path);
  ASSERT_FALSE(cluster.ok());
  EXPECT_NE(cluster.status().message().find(path), std::string::npos) << cluster.status().message();
  EXPECT_NE(cluster.status().message().find("limit"), std::string::npos)
      << cluster.status().message();
}

TEST_F(ClusterFileTest, ADirectoryIsRefused) {
  auto cluster = LoadClusterFile(dir_.string());
  ASSERT_FALSE(cluster.ok());
  EXPECT_NE(cluster.status().message().find("directory"), std::string::npos)
      << cluster.status().message();
}

// A simulator cluster may describe MIG layouts the way scenarios do.
TEST_F(ClusterFileTest, ScenarioNodesKeepTheirMigLayout) {
  ClusterState cluster = Must(LoadClusterFile(Write("mig.yaml", R"(nodes:
  - namePrefix: mig-
    count: 2
    allocatable: {cpu: "64", memory: 512Gi}
    gpus: {count: 8, model: A100-SXM4-80GB, mig: {perGpu: {3g.40gb: 1, 1g.10gb: 4}, gpus: 6}}
)")));
  ASSERT_EQ(cluster.nodes().size(), 2u);
  const Node& node = cluster.nodes()[1];
  EXPECT_EQ(node.gpus.size(), 2u);  // two GPUs stay whole
  EXPECT_EQ(node.mig.strategy, MigStrategy::kMixed);
  EXPECT_EQ(node.mig.gpus, 6);
  ASSERT_EQ(node.mig.devices.size(), 30u);
  EXPECT_EQ(node.mig.devices[5].gpu, 1);  // five devices per GPU, in order
  EXPECT_EQ(node.allocatable.Get(InternResource("nvidia.com/mig-3g.40gb")), 6 * kMilliPerUnit);
  EXPECT_EQ(node.allocatable.Get(InternResource("nvidia.com/mig-1g.10gb")), 24 * kMilliPerUnit);
}

}  // namespace
}  // namespace gantry

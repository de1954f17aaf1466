// The FGD protocol with `--gpu-api dra` (sim/dra_gpus.h) allocates exactly as with the device
// plugin, policy by policy: the same failed pods and the same allocation and fragmentation
// curves, on reduced openb lists (every 20th node of openb's GPU nodes, the lists with GPU
// models asked, shares and multi-GPU pods). Uses upstream's CEL for the selectors (the
// class's and the pods' GPU models), so it is built only with it (GANTRY_DRA_CEL).
// The full lists: scripts/compare-gpu-api.sh.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dra/selector_cache.h"
#include "sim/policies.h"
#include "sim/protocol.h"
#include "sim/trace_csv.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

std::string DataPath(const std::string& file) {
  std::string self = __FILE__;
  size_t at = self.rfind("tests/unit/");
  std::string root = at == std::string::npos ? std::string() : self.substr(0, at);
  return root + "data/alibaba-gpu-v2023/" + file;
}

ClusterState ReducedOpenbCluster() {
  auto nodes = Must(ReadNodeCsv(DataPath("openb_node_list_gpu_node.csv")));
  std::vector<TraceNode> every_20th;
  for (size_t i = 0; i < nodes.size(); i += 20) every_20th.push_back(nodes[i]);
  ClusterState cluster;
  EXPECT_TRUE(AddTraceNodes(every_20th, &cluster).ok());
  return cluster;
}

class DraProtocolTest : public ::testing::TestWithParam<std::string> {};

TEST_P(DraProtocolTest, SameAllocationAsTheDevicePlugin) {
  const ClusterState cluster = ReducedOpenbCluster();
  const auto pods = Must(ReadPodCsv(DataPath("openb_pod_list_" + GetParam() + ".csv")));
  for (const char* policy :
       {"random", "dotprod", "gpuclustering", "gpupacking", "bestfit", "fgd", "gantry"}) {
    const SchedulerConfig config = Must(PolicyConfig(policy));
    const ProtocolResult plugin = Must(RunFgdProtocol(cluster, pods, config, 42, {}));
    dra::SelectorCache cache;
    const dra::CelVerdicts verdicts(cache);
    ProtocolOptions options;
    options.gpu_api = GpuApi::kDra;
    options.dra_verdicts = &verdicts;
    const ProtocolResult dra = Must(RunFgdProtocol(cluster, pods, config, 42, options));
    EXPECT_GT(plugin.failed_pods, 0) << policy;  // the cluster was full: choices mattered
    EXPECT_EQ(dra.pods, plugin.pods) << policy;
    EXPECT_EQ(dra.failed_pods, plugin.failed_pods) << policy;
    EXPECT_EQ(dra.alloc_pct, plugin.alloc_pct) << policy;
    EXPECT_EQ(dra.frag_pct, plugin.frag_pct) << policy;
  }
}

INSTANTIATE_TEST_SUITE_P(OpenbLists, DraProtocolTest,
                         ::testing::Values("gpuspec33", "gpushare100", "multigpu50"));

TEST(DraProtocol, RefusedWithoutCel) {
  ProtocolOptions options;
  options.gpu_api = GpuApi::kDra;
  const ClusterState cluster = ReducedOpenbCluster();
  const auto pods = Must(ReadPodCsv(DataPath("openb_pod_list_default.csv")));
  auto result = RunFgdProtocol(cluster, pods, Must(PolicyConfig("fgd")), 42, options);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("no CEL evaluator"), std::string::npos)
      << result.status().message();
}

}  // namespace
}  // namespace gantry

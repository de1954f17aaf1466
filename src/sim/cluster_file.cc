#include "sim/cluster_file.h"

#include "model/input_file.h"
#include "sim/scenario_reader.h"
#include "sim/trace_csv.h"

namespace gantry {

Result<ClusterState> LoadClusterFile(const std::string& path) {
  // Read once, bounded, to tell the formats apart; a node list is parsed from these bytes.
  auto text = ReadInputFile(path);
  if (!text.ok()) return text.status();
  if (LooksLikeCsv(*text)) {
    auto nodes = ParseNodeCsv(*text, path);
    if (!nodes.ok()) return nodes.status();
    ClusterState cluster;
    GANTRY_RETURN_IF_ERROR(AddTraceNodes(*nodes, &cluster, path));
    return cluster;
  }
  auto scenario = LoadScenario(path);
  if (!scenario.ok()) return scenario.status();
  ClusterState cluster;
  cluster.SetTopologyKeys(scenario->cluster.topology_keys());
  for (const Node& node : scenario->cluster.nodes()) {
    Node copy = node;
    auto added = cluster.AddNode(std::move(copy));
    if (!added.ok()) return added.status().WithPrefix(path);
  }
  if (cluster.nodes().empty()) return Status::Invalid(path + ": no nodes");
  GANTRY_RETURN_IF_ERROR(cluster.SetDatasets(scenario->cluster.datasets().all()));
  return cluster;
}

}  // namespace gantry

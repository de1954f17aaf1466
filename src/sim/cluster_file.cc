#include "sim/cluster_file.h"

#include <fstream>

#include "sim/scenario.h"
#include "sim/trace_csv.h"

namespace gantry {

Result<ClusterState> LoadClusterFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::IoError(path + ": cannot open the file");
  std::string first;
  std::getline(in, first);
  if (first.rfind("sn,", 0) == 0) {
    auto nodes = ReadNodeCsv(path);
    if (!nodes.ok()) return nodes.status();
    ClusterState cluster;
    GANTRY_RETURN_IF_ERROR(AddTraceNodes(*nodes, &cluster));
    return cluster;
  }
  auto scenario = LoadScenario(path);
  if (!scenario.ok()) return scenario.status();
  ClusterState cluster;
  for (const Node& node : scenario->cluster.nodes()) {
    Node copy = node;
    auto added = cluster.AddNode(std::move(copy));
    if (!added.ok()) return added.status().WithPrefix(path);
  }
  if (cluster.nodes().empty()) return Status::Invalid(path + ": no nodes");
  return cluster;
}

}  // namespace gantry

// openb node lists (sim/trace_csv.h): ParseNodeCsv on any text, then AddTraceNodes, as
// `gantry sim --cluster` does.
//
// Checks: a refusal names the file; each node read keeps the column ranges (a name,
// non-negative CPU and memory, 0..kMaxGpusPerNode GPUs with a model when it has any);
// the cluster built from them is consistent (tests/fuzz/cluster_checks.h).
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/trace_csv.h"
#include "tests/fuzz/cluster_checks.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gantry;
  const std::string source = "fuzz-nodes.csv";
  auto nodes = ParseNodeCsv(std::string(fuzz::AsText(data, size)), source);
  if (!nodes.ok()) {
    fuzz::CheckErrorNamesSource(nodes.status(), source);
    return 0;
  }
  FUZZ_CHECK(!nodes->empty(), "an empty node list accepted");
  for (const TraceNode& n : *nodes) {
    FUZZ_CHECK(!n.name.empty(), "a node without a name");
    FUZZ_CHECK(n.cpu_milli >= 0 && n.memory_mib >= 0, "node \"" + n.name + "\": negative amounts");
    FUZZ_CHECK(n.gpus >= 0 && n.gpus <= kMaxGpusPerNode,
               "node \"" + n.name + "\": " + std::to_string(n.gpus) + " GPUs");
    FUZZ_CHECK(n.gpus == 0 || !n.model.empty(), "node \"" + n.name + "\": GPUs of no model");
  }
  ClusterState cluster;
  Status added = AddTraceNodes(*nodes, &cluster);
  if (!added.ok()) {
    FUZZ_CHECK(!added.message().empty(), "an error without a message");
    return 0;
  }
  fuzz::CheckCluster(cluster);
  return 0;
}

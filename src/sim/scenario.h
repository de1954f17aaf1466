// A scenario: a cluster, a workload and optionally the expected decisions, as a scenario
// file writes them down in YAML (see tests/scenario/ and README.md for the format). One
// runs through the engine directly (`gantry schedule`) and feeds the simulator's cluster.
// Read by sim/scenario_reader.h, written by sim/scenario_writer.h (snapshots); its
// expectations are read and checked by sim/scenario_expect.h.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/config.h"
#include "model/cluster.h"
#include "sim/scenario_devices.h"
#include "sim/scenario_snapshot.h"

namespace gantry {

struct ScenarioExpectations {
  bool present = false;
  // job -> tasks placed in the session: bound, or pipelined onto room being released.
  std::map<std::string, int32_t> placed;
  std::map<std::string, std::string> pending;  // job -> substring of its pending reason
  // job -> substrings of its explanation in words (explain/explanation_json.h: ExplanationText).
  std::map<std::string, std::vector<std::string>> explain;
  std::map<std::string, std::vector<std::string>> on_nodes;  // job -> allowed nodes
  // job -> its tasks placed in the session per node, exactly: a node it does not name
  // holds none of them (for spreading, where the count per node is the point).
  std::map<std::string, std::map<std::string, int32_t>> node_counts;
  std::map<std::string, std::vector<int32_t>> gpus;  // task -> device indexes
  // task -> the DRA devices its claims were given, "pool/device" in the order of its
  // claims and their results (a claim allocated before gives none).
  std::map<std::string, std::vector<std::string>> devices;
  // task -> the physical GPU of each of its MIG devices (mixed strategy), once the
  // session's binds are applied to the cluster.
  std::map<std::string, std::vector<int32_t>> mig_gpus;
  // task -> the NUMA node of each of its units (the pod, or each container under the
  // container scope; -1: none holds it), once the session's binds are applied.
  std::map<std::string, std::vector<int32_t>> numa_zones;
  std::map<std::string, int32_t> placed_in_queue;  // queue -> tasks placed
  std::map<std::string, ResourceVector> deserved;  // queue -> deserved amounts it names
  std::map<std::string, std::vector<ResourceId>> deserved_named;  // the resources checked
  std::map<std::string, int32_t> placed_on_node;  // node -> tasks placed there, of all jobs
  // job -> topology level -> how many of the level's domains its placed tasks span.
  std::map<std::string, std::map<std::string, int32_t>> spans;
  // job -> evictions of its tasks in the session. Given at all, it accounts for every job:
  // one it does not name must evict nothing. Absent (nullopt): evictions are not checked.
  std::optional<std::map<std::string, int32_t>> evicted;
  // job -> a substring of the reason of every eviction of its tasks (at least one).
  std::map<std::string, std::string> eviction_reason;
};

struct Scenario {
  std::string name;
  std::string source;  // file name, for messages
  SchedulerConfig config;
  ClusterState cluster;
  ScenarioDevices devices;  // DRA's objects (`dra:`)
  ScenarioExpectations expect;
  // A snapshot's recent arrivals (sim/scenario_snapshot.h); its profile is the cluster's.
  ScenarioSnapshot snapshot;
};

}  // namespace gantry

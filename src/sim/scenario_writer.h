// Writing a ClusterState in the scenario format (sim/scenario.h; its reader is
// sim/scenario_reader.h), so that a live cluster (`gantry snapshot`) can be replayed and read
// back: parsing what WriteScenario writes gives the same nodes, queues, jobs, running
// placements, topology levels and workload profile. What the format cannot carry (pod
// affinity, volumes, NUMA, MIG layouts, ...) is left out and listed, in the result and as
// comments at the top of the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/cluster.h"
#include "sim/scenario_snapshot.h"

namespace gantry {

struct ScenarioWriteOptions {
  std::string name;  // the scenario's `name`; empty: none
  // The clock jobs' Job::submitted is on (the daemon's: wall seconds; a scenario's: 0 is
  // its session): a job submitted before it is written with `waited: now - submitted`.
  int64_t now = 0;
  std::vector<std::string> comments;  // lines for the top of the file
  // Arrivals and their window (`snapshot:` and `arrivals:`); nullptr: none.
  const ScenarioSnapshot* snapshot = nullptr;
  // Running tasks as bound by the API server (`bound: true`): they count where they run
  // even past the node's room, as the daemon counts them.
  bool running_bound = false;
  // DRA's API objects (DeviceClass, ResourceSlice, ResourceClaim, DeviceTaintRule), each
  // as JSON text, written under `dra.objects` as read (sim/scenario_devices.h), and the
  // namespaces that allow adminAccess; tasks name their claims (`claims:`) either way.
  std::vector<std::string> device_objects;
  std::vector<std::string> admin_access_namespaces;
};

struct WrittenScenario {
  std::string text;
  // One line per kind of thing left out, with how many ("node affinity of 3 tasks").
  std::vector<std::string> left_out;
};

// Removed nodes, and tasks on them, are not written; jobs go in creation order, tasks of
// one spec as one entry with replicas (a role per spec: a role two specs share gets the
// spec's number appended), running tasks in `running:` with their devices.
WrittenScenario WriteScenario(const ClusterState& cluster, const ScenarioWriteOptions& options);

}  // namespace gantry

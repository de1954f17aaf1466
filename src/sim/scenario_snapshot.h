// What a snapshot of a live cluster (`gantry snapshot`) adds to the scenario format: the
// workload profile the daemon kept, and the jobs that arrived shortly before it.
//   snapshot: {arrivalWindowSeconds: 3600}   # the window the arrivals were taken from
//   profile:                                 # task shapes and their (decayed) counts
//     - {count: 1200, task: {requests: {cpu: "8", nvidia.com/gpu: 1}}}
//     - {count: 300, task: {requests: {cpu: "2"}, gpuFraction: 500m}}
//   arrivals:                                # created in the window, oldest first
//     - {name: "pod|ml/train-0", at: -1800, queue: ml, minMember: 1,
//        task: {replicas: 1, requests: {cpu: "8", nvidia.com/gpu: 1}}}
// A profile sets ClusterState::workload_profile (the fgd and gantry scorers' target
// workload), for `gantry schedule` and `gantry sim --snapshot` alike. An arrival's `at`
// is seconds relative to the snapshot (-window to 0); `durationSeconds` (default 0: runs
// to the end) is how long each pod runs. Its task takes the keys of a job's task.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <string>
#include <vector>

#include "model/cluster.h"
#include "model/status.h"
#include "sim/workload.h"
#include "sim/yaml_reader.h"

namespace gantry {

// Shapes a profile may list (the daemon keeps at most this many).
inline constexpr size_t kMaxProfileShapes = 256;
// The default window of recent arrivals, and the longest.
inline constexpr int64_t kDefaultArrivalWindowS = 3600;
inline constexpr int64_t kMaxArrivalWindowS = int64_t{30} * 86400;

struct ScenarioArrival {
  int64_t at = 0;  // seconds relative to the snapshot, <= 0
  SimJob job;      // submit unset (0): the replay chooses when it arrives
};

struct ScenarioSnapshot {
  int64_t arrival_window_s = kDefaultArrivalWindowS;
  std::vector<ScenarioArrival> arrivals;
};

// snapshot: {arrivalWindowSeconds}.
Status ParseSnapshotHeader(const YamlReader& r, const YAML::Node& node, ScenarioSnapshot* out);
// profile: sets the cluster's workload profile (types most frequent first, as ProfileOf).
Status ParseProfile(const YamlReader& r, const YAML::Node& node, ClusterState* cluster);
// arrivals: REQUIRES: the header is read (the window bounds `at`). Queues they name need
// not exist (the replay makes them).
Status ParseArrivals(const YamlReader& r, const YAML::Node& node, const ClusterState& cluster,
                     ScenarioSnapshot* out);

// The arrivals as a workload from the snapshot on: the window again (the last hour's
// arrivals as a forecast of the next), each `window + at` seconds after the snapshot.
std::vector<SimJob> SnapshotArrivals(const ScenarioSnapshot& snapshot);

}  // namespace gantry

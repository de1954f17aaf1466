// The gantry command's subcommands. Each returns the process exit status:
// 0 success, 1 expectations unmet, 2 bad input or usage.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/sim_options.h"

namespace gantry {

struct ScheduleOptions {
  std::string scenario;
  std::string format = "table";  // table | json
};
int RunSchedule(const ScheduleOptions& options);

// SimOptions: src/sim/sim_options.h.
int RunSim(const SimOptions& options);

struct ServeOptions {
  std::string config;
  std::string kubeconfig;  // empty: $KUBECONFIG, in-cluster, ~/.kube/config
  std::string identity;    // empty: $POD_NAME or the host name, with a random suffix
  std::string listen;      // overrides listenAddress
  bool no_leader_elect = false;
};
int RunServe(const ServeOptions& options);

// `gantry snapshot`: the live cluster in the scenario format (cli/snapshot_cmd.cc).
struct SnapshotOptions {
  std::string kubeconfig;  // empty: $KUBECONFIG, in-cluster, ~/.kube/config
  std::string out = "-";   // "-": standard output
  std::string scheduler_name = "gantry";
  int64_t window_s = 3600;  // recent arrivals: pods created this long before
};
int RunSnapshot(const SnapshotOptions& options);

// Checks daemon configurations and Kubernetes manifests offline.
int RunValidate(const std::vector<std::string>& files);

}  // namespace gantry

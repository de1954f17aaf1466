// The gantry command's subcommands. Each returns the process exit status:
// 0 success, 1 expectations unmet, 2 bad input or usage.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gantry {

struct ScheduleOptions {
  std::string scenario;
  std::string format = "table";  // table | json
};
int RunSchedule(const ScheduleOptions& options);

struct SimOptions {
  std::string cluster;
  std::string workload;
  std::string generate;
  std::string protocol;
  double arrival_scale = 1.3;
  std::string policies = "gantry";
  std::string seeds = "42";
  std::string out = "out/sim";
  int64_t period_s = 10;
  int32_t nodes_to_score = 100;
  int jobs = 2;
};
int RunSim(const SimOptions& options);

struct ServeOptions {
  std::string config;
  std::string kubeconfig;  // empty: $KUBECONFIG, in-cluster, ~/.kube/config
  std::string identity;    // empty: $POD_NAME or the host name, with a random suffix
  std::string listen;      // overrides listenAddress
  bool no_leader_elect = false;
};
int RunServe(const ServeOptions& options);

// Checks daemon configurations and Kubernetes manifests offline.
int RunValidate(const std::vector<std::string>& files);

}  // namespace gantry

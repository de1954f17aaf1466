// The gauges the Grafana dashboard (deploy/grafana/gantry.json) needs beside the
// scheduler's own: GPU devices and MIG devices by state, fragmented GPUs, and pending pods
// by the kind of their reason. Registered once, republished by the scheduler's gauge tick.
#pragma once

#include <cstdint>
#include <map>

#include "daemon/device_claims.h"
#include "daemon/metrics.h"
#include "daemon/pending_reasons.h"
#include "model/cluster.h"

namespace gantry {

class DashboardMetrics {
 public:
  // Registers gantry_gpu_devices, gantry_mig_devices, gantry_dra_devices, gantry_gpus_fragmented
  // and gantry_pending_pods_by_reason; fails when a name is taken already.
  static Result<DashboardMetrics> Register(MetricsRegistry& registry);

  // The cluster's GPUs as they are now; fragmentation against the cluster's workload
  // profile, or, when it has none, against the tasks in it now (ProfileOfTasks).
  void PublishGpus(const ClusterState& cluster);
  // DRA devices per driver and state (DeviceClaims::CountDevices).
  void PublishDra(const std::map<std::string, DeviceClaims::DriverDevices>& by_driver);
  // Waiting pods per kind; every kind is published, at 0 when none waits for it.
  void PublishPending(const std::map<PendingKind, int64_t>& pods_by_kind);

 private:
  DashboardMetrics() = default;

  GaugeFamily* gpu_devices_ = nullptr;
  GaugeFamily* mig_devices_ = nullptr;
  GaugeFamily* dra_devices_ = nullptr;
  GaugeFamily* gpus_fragmented_ = nullptr;
  GaugeFamily* pending_by_reason_ = nullptr;
};

}  // namespace gantry

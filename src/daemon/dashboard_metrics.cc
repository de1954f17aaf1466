#include "daemon/dashboard_metrics.h"

#include <string>
#include <utility>
#include <vector>

#include "daemon/gpu_usage.h"

namespace gantry {

Result<DashboardMetrics> DashboardMetrics::Register(MetricsRegistry& registry) {
  DashboardMetrics m;
  auto devices = registry.AddGauge(
      "gantry_gpu_devices",
      "GPUs not cut into MIG devices, on the nodes in the cluster, by state: allocated (all "
      "of it taken), shared (part of it taken by GPU fractions), free.",
      {"state"});
  if (!devices.ok()) return devices.status();
  m.gpu_devices_ = *devices;
  auto mig = registry.AddGauge(
      "gantry_mig_devices", "MIG devices on the nodes in the cluster, by state: allocated, free.",
      {"state"});
  if (!mig.ok()) return mig.status();
  m.mig_devices_ = *mig;
  auto dra = registry.AddGauge(
      "gantry_dra_devices",
      "Devices published in DRA ResourceSlices, by driver and state: allocated (to a "
      "ResourceClaim, whole or a share), free.",
      {"driver", "state"});
  if (!dra.ok()) return dra.status();
  m.dra_devices_ = *dra;
  auto fragmented = registry.AddGauge(
      "gantry_gpus_fragmented",
      "Free GPU capacity that the workload's typical tasks cannot use (Weng et al., ATC '23), "
      "in GPUs, summed over the nodes.");
  if (!fragmented.ok()) return fragmented.status();
  m.gpus_fragmented_ = *fragmented;
  auto pending = registry.AddGauge(
      "gantry_pending_pods_by_reason",
      "Pods of gantry waiting to be placed, by the kind of reason that keeps them waiting "
      "(queue_limit, gang_short, no_fit, topology, gated, volume, invalid, group_missing, "
      "bind_backoff, preempting, not_considered, other).",
      {"reason"});
  if (!pending.ok()) return pending.status();
  m.pending_by_reason_ = *pending;
  return m;
}

void DashboardMetrics::PublishGpus(const ClusterState& cluster) {
  const GpuDeviceCounts c = CountGpuDevices(cluster);
  (void)gpu_devices_->Replace({{{"allocated"}, static_cast<double>(c.full)},
                               {{"shared"}, static_cast<double>(c.partial)},
                               {{"free"}, static_cast<double>(c.free)}});
  (void)mig_devices_->Replace({{{"allocated"}, static_cast<double>(c.mig_used)},
                               {{"free"}, static_cast<double>(c.mig_free)}});
  const WorkloadProfile& profile = cluster.workload_profile();
  gpus_fragmented_->Set(profile.types.empty() ? FragmentedGpus(cluster, ProfileOfTasks(cluster))
                                              : FragmentedGpus(cluster, profile));
}

void DashboardMetrics::PublishDra(
    const std::map<std::string, DeviceClaims::DriverDevices>& by_driver) {
  std::vector<std::pair<LabelValues, double>> values;
  for (const auto& [driver, counts] : by_driver) {
    values.push_back({{driver, "allocated"}, static_cast<double>(counts.allocated)});
    values.push_back({{driver, "free"}, static_cast<double>(counts.free)});
  }
  (void)dra_devices_->Replace(values);
}

void DashboardMetrics::PublishPending(const std::map<PendingKind, int64_t>& pods_by_kind) {
  std::vector<std::pair<LabelValues, double>> values;
  for (PendingKind kind : AllPendingKinds()) {
    auto it = pods_by_kind.find(kind);
    values.push_back({{std::string(PendingKindName(kind))},
                      it == pods_by_kind.end() ? 0.0 : static_cast<double>(it->second)});
  }
  (void)pending_by_reason_->Replace(values);
}

}  // namespace gantry

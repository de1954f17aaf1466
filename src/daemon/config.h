// The daemon's configuration: one YAML file (see deploy/gantry-config.yaml), validated at
// start; every error names the file, the line and the field.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/config.h"
#include "engine/dra/accounting.h"
#include "model/status.h"

namespace gantry {

struct LeaderElectionConfig {
  bool enabled = true;
  std::string namespace_ = "gantry-system";
  std::string name = "gantry";
  double lease_duration_s = 15;
  double renew_deadline_s = 10;
  double retry_period_s = 2;
};

// How Gantry works with cluster autoscalers (Karpenter, Cluster Autoscaler), which add nodes
// for pods written Unschedulable and remove nodes they find underused.
struct AutoscalerConfig {
  // The members of a gang (minMember > 1) are bound with karpenter.sh/do-not-disrupt and
  // cluster-autoscaler.kubernetes.io/safe-to-evict=false: consolidation and scale-down then
  // leave their nodes alone while they run, rather than evicting one member and breaking
  // the gang. Their nodes go once the gang ends.
  bool protect_gangs = true;
  // With protect_gangs: how long Karpenter honours it (its annotation's duration form, e.g.
  // 24h), after which a gang's nodes may be consolidated; 0: as long as the pods run.
  // Cluster Autoscaler's annotation has no duration.
  double protect_gangs_for_s = 0;
};

// The annotations a gang member's binding carries under `config` (none when it does not
// protect gangs).
std::map<std::string, std::string> GangBindingAnnotations(const AutoscalerConfig& config);

struct DaemonConfig {
  std::string scheduler_name = "gantry";  // pods with this spec.schedulerName are ours
  double schedule_period_s = 1;           // a cycle at least this often; events trigger them sooner
  int bind_workers = 16;                  // concurrent bind calls
  // How long a pod placed with delayed claims (WaitForFirstConsumer) waits for them to be
  // bound before it is placed again (kube-scheduler's VolumeBinding bindTimeoutSeconds).
  double volume_bind_timeout_s = 600;
  // How long a pod whose DRA devices have binding conditions waits for the driver to set
  // them before its claims are deallocated and it is placed again (kube-scheduler's
  // DynamicResources bindingTimeout).
  double device_binding_timeout_s = 600;
  std::string listen_address = "0.0.0.0:10259";  // /metrics /healthz /readyz
  // The live page and its JSON API (page_server.h), on a listener of its own that stays on
  // the loopback interface unless configured otherwise; "" turns the page off.
  std::string page_address = "127.0.0.1:10260";
  LeaderElectionConfig leader_election;
  AutoscalerConfig autoscaler;
  // Node label keys of the topology levels, outermost first (topologyKeys); empty: the
  // model's default (zone, spine, rack).
  std::vector<std::string> topology_keys;
  SchedulerConfig engine = SchedulerConfig::Default();
  // The half-life of the workload profile (workloadProfileHalfLife; 0: none): decayed
  // counts of the task shapes that arrived, which the fgd and gantry scorers pack against.
  double workload_profile_half_life_s = 86400;
  // What DRA devices count as for queues (deviceClassResources, engine/dra/accounting.h):
  // by default the NVIDIA DRA driver's whole GPUs as nvidia.com/gpu. A list given in the
  // file replaces it.
  std::vector<dra::ClassResource> device_class_resources = {
      {.device_class = "gpu.nvidia.com", .resource = kGpu, .counter_prefix = ""}};
  // Device attributes that say which devices work best together, outermost first
  // (deviceAlignmentAttributes, engine/dra/alignment.h): by default Kubernetes' standard
  // NUMA node and PCIe root. A list given in the file replaces it; an empty one turns the
  // preference off (upstream's first devices that fit).
  std::vector<dra::QualifiedName> device_alignment_attributes = {"resource.kubernetes.io/numaNode",
                                                                 "resource.kubernetes.io/pcieRoot"};
};
// The longest workload profile half-life.
inline constexpr double kMaxWorkloadProfileHalfLifeS = 30 * 86400.0;
inline constexpr double kMaxProtectGangsForS = 30 * 86400.0;

// Parses YAML text (yaml/yaml_load.h: one document, no duplicate keys); `source` names
// it in errors. Durations are positive and at most 24h.
Status ParseDaemonConfig(const std::string& text, const std::string& source, DaemonConfig* out);
Status LoadDaemonConfig(const std::string& path, DaemonConfig* out);

// "1s", "500ms", "2m", "1h30m", "1.5s" (Go's time.ParseDuration units ns..h).
Result<double> ParseDurationSeconds(const std::string& text);

}  // namespace gantry

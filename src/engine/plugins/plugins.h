// Factories of the built-in plugins. Each returns an error naming the plugin and the
// argument when its arguments are wrong. See registry.h for the table of names.
#pragma once

#include <memory>

#include <vector>

#include "engine/config.h"
#include "engine/fragmentation.h"
#include "engine/plugin.h"

namespace gantry {

// Gang scheduling: a job is ready when minMember of its tasks are placed; admission needs
// minMember tasks to exist; jobs short of their minimum go first.
Result<std::unique_ptr<Plugin>> NewGangPlugin(const PluginConfig& config);
// Job and task order by priority, higher first.
Result<std::unique_ptr<Plugin>> NewPriorityPlugin(const PluginConfig& config);
// Job order inside a queue by dominant resource share, lower first.
Result<std::unique_ptr<Plugin>> NewDrfPlugin(const PluginConfig& config);
// Queues: the queue tree's deserved shares by weight (water-filled top-down, lifted to
// guarantees, capped by capabilities and demand), hierarchical DRF queue order, admission
// and limits.
Result<std::unique_ptr<Plugin>> NewProportionPlugin(const PluginConfig& config);
// PodDisruptionBudgets (ClusterState::disruption_budgets): preempt and reclaim evict a task
// only while every budget that covers it allows one more disruption. List it after the
// other victim filters, so that it counts only the victims they keep.
Result<std::unique_ptr<Plugin>> NewDisruptionBudgetPlugin(const PluginConfig& config);
// Feasibility: cordon, node selector, required affinity, taints, GPU model, resources,
// GPUs per device, pod count.
Result<std::unique_ptr<Plugin>> NewPredicatesPlugin(const PluginConfig& config);
// kube-scheduler's NodePorts: no two tasks with the same host port (protocol, host IP) on
// one node.
Result<std::unique_ptr<Plugin>> NewNodePortsPlugin(const PluginConfig& config);
// Not configured by name: given the names of the configured plugins, a predicate that
// refuses every node to a spec using a rule whose plugin is not among them (PodRule in
// engine/filter.h), or null when every such plugin is configured. Policy::Compile adds it.
std::unique_ptr<Plugin> NewUnconfiguredRulesPlugin(const std::vector<std::string>& configured);
// kube-scheduler's NodeVolumeLimits: per CSI driver, no more attached volumes on a node
// than its CSINode allows, and no pod on a node without a driver it must have.
Result<std::unique_ptr<Plugin>> NewNodeVolumeLimitsPlugin(const PluginConfig& config);
// kube-scheduler's scores of NodeAffinity (preferred node affinity) and TaintToleration
// (PreferNoSchedule taints), normalized as it does. Argument: weight (default 1).
Result<std::unique_ptr<Plugin>> NewNodeAffinityPlugin(const PluginConfig& config);
Result<std::unique_ptr<Plugin>> NewTaintTolerationPlugin(const PluginConfig& config);
// kube-scheduler's InterPodAffinity: required pod affinity and anti-affinity (the pod's
// own and, symmetrically, existing pods'), and the score of preferred terms, min-max
// scaled. Arguments: weight, hardPodAffinityWeight (0..100, default 1).
Result<std::unique_ptr<Plugin>> NewInterPodAffinityPlugin(const PluginConfig& config);
// NUMA alignment as the kubelet's topology manager enforces it (model/numa.h): nodes whose
// policy is single-numa-node take a task only where each of its units fits one NUMA node;
// best-effort and restricted nodes where it does not fit score 0; whole GPUs go on the
// NUMA node of their unit. Argument: weight (default 1).
Result<std::unique_ptr<Plugin>> NewNumaPlugin(const PluginConfig& config);
// Scores: prefer the fullest nodes and devices (binpack) or the emptiest (spread).
// Arguments: weight, and a weight per resource name (cpu, memory, nvidia.com/gpu, ...).
Result<std::unique_ptr<Plugin>> NewBinpackPlugin(const PluginConfig& config);
Result<std::unique_ptr<Plugin>> NewSpreadPlugin(const PluginConfig& config);
// kube-scheduler's PodTopologySpread: DoNotSchedule constraints filter, ScheduleAnyway
// ones score (see pod_topology_spread.cc). Arguments: weight; defaultingType (System, the
// default, or List) and defaultConstraints (a list of constraints, as kube-scheduler's
// PodTopologySpreadArgs; a configuration may write it as YAML text in a string, which its
// reader parses: IsStructuredArgument) for pods without constraints of their own.
Result<std::unique_ptr<Plugin>> NewPodTopologySpreadPlugin(const PluginConfig& config);
// Whether a podtopologyspread plugin so configured gives pods without constraints of their
// own default constraints (System, or a List that is not empty), so that the selector they
// are spread by (TaskSpec::default_spread_selector) is worth computing. False for
// arguments the plugin refuses.
bool PodTopologySpreadHasDefaults(const PluginConfig& config);
// Dataset locality (issue 13): prefer nodes that cache the datasets a task reads
// (TaskSpec::datasets), weighted by their sizes when known, at most bandPercent (1..100,
// default 10) per cent of kMaxNodeScore, so that it decides among nodes that pack about
// as well (see data_locality.cc). Arguments: weight (0..1000, default 1), bandPercent.
Result<std::unique_ptr<Plugin>> NewDataLocalityPlugin(const PluginConfig& config);

// Policies of the FGD paper's experiment (Weng et al., ATC '23), each as that paper's
// simulator defines it; see docs/research/fgd-simulator-notes.md. They score in 0..100.
// random: any feasible node (with tieBreak: random) and a random device.
Result<std::unique_ptr<Plugin>> NewRandomPlugin(const PluginConfig& config);
// dotprod: the smallest dot product of the node's free (CPU, GPU) and the request.
Result<std::unique_ptr<Plugin>> NewDotProdPlugin(const PluginConfig& config);
// gpuclustering: nodes that already run tasks of the same GPU kind, fuller first.
Result<std::unique_ptr<Plugin>> NewGpuClusteringPlugin(const PluginConfig& config);
// gpupacking: shared GPUs in use first, then free GPUs of used nodes, then idle nodes.
Result<std::unique_ptr<Plugin>> NewGpuPackingPlugin(const PluginConfig& config);
// bestfit: the least free (CPU, GPU) left after placing, min-max normalized.
Result<std::unique_ptr<Plugin>> NewBestFitPlugin(const PluginConfig& config);
// fgd: fragmentation gradient descent (see fgd.cc). Argument coverage: the share (%) of
// the workload's tasks whose types count as typical (95, as in the paper).
Result<std::unique_ptr<Plugin>> NewFgdPlugin(const PluginConfig& config);
// gantry: Gantry's own GPU packing policy: FGD, with ties broken by CPU shape and by
// keeping whole the idle nodes that big or rare tasks need (see gantry_packing.cc).
// Arguments as fgd's.
Result<std::unique_ptr<Plugin>> NewGantryPlugin(const PluginConfig& config);

// The arguments fgd and gantry share.
struct FragmentationArgs {
  int64_t weight = 1;
  int64_t coverage_pct = 95;  // the paper's "typical pods"
};
Result<FragmentationArgs> ParseFragmentationArgs(const PluginConfig& config);

// The fgd scorer, exposed for plugins that build on it.
class FgdScorer : public SessionCopyable<FgdScorer>,
                  public NodeScorer,
                  public DeviceChooser,
                  public PlacementListener {
 public:
  FgdScorer(int64_t weight, int64_t coverage_pct);
  std::string_view name() const override { return "fgd"; }
  void OnSessionOpen(Session& s) override;
  GpuPacking packing() const override { return GpuPacking::kTight; }
  int64_t weight() const override { return weight_; }
  bool ChooseDevices(const Session& s, const TaskSpec& spec, NodeId node, GpuChoice* out,
                     int64_t* score) const override;
  int64_t ScoreNode(const Session& s, const TaskSpec& spec, NodeId node,
                    const GpuChoice& gpus) const override;
  void OnStateChange(const Session& s, StateChange change, TaskId task, NodeId node,
                     const GpuChoice& gpus, int sign) override;

 protected:
  double FragOf(const Session& s, NodeId node) const;
  // Fills `free` with each device's free share on `node` (its DRA GPUs' where its GPUs
  // are DRA devices, fgd.cc) and returns the devices' model.
  GpuModelId NodeFree(const Session& s, NodeId node, std::vector<int32_t>* free) const;
  // The score of placing `spec` on `node` on exactly these devices.
  int64_t ScoreChoice(const Session& s, const TaskSpec& spec, NodeId node,
                      const GpuChoice& choice) const;
  // A node state's fragmentation: FGD's measure by default.
  virtual double Frag(Milli cpu_free, GpuModelId model, std::span<const int32_t> free_milli) const;
  // The score of a placement of `spec` that takes the node's fragmentation from `before`
  // to `after`: FGD's sigmoid by default.
  virtual int64_t ScoreChange(const Session& s, const TaskSpec& spec, NodeId node, double before,
                              double after) const;
  FragmentationMeasure measure_;

 private:
  int64_t weight_;
  int64_t coverage_pct_;
  // Per node: its fragmentation, cached until a placement changes the node.
  mutable std::vector<double> frag_;
  mutable std::vector<uint8_t> frag_known_;
  mutable std::vector<int32_t> free_;  // scratch
};

}  // namespace gantry

#include "sim/scenario.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

#include "model/input_file.h"
#include "model/limits.h"
#include "model/queue_tree.h"
#include "sim/pod_spec_reader.h"
#include "sim/scenario_datasets.h"
#include "sim/scenario_defragment.h"
#include "sim/scenario_expect.h"
#include "sim/scenario_mig.h"
#include "sim/scenario_numa.h"
#include "sim/scenario_snapshot.h"
#include "sim/scenario_task.h"
#include "sim/scenario_topology.h"
#include "sim/scenario_volumes.h"
#include "sim/yaml_reader.h"
#include "yaml/scheduler_config_yaml.h"

namespace gantry {
namespace {

// Decimal digits of n >= 0.
size_t DigitCount(int64_t n) {
  return std::to_string(n).size();
}

std::string Limit(int64_t value, const char* what) {
  return std::to_string(value) + " (the limit on " + what + ")";
}

// Before any node is built: the nodes the list makes, namePrefix's counts included, are
// within kMaxNodes (a count of a million built a million nodes before).
Status CheckNodeCount(const YamlReader& r, const YAML::Node& nodes) {
  int64_t total = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const YAML::Node& n = nodes[i];
    const std::string f = "nodes[" + std::to_string(i) + "]";
    int64_t count = 1;
    const bool counted = n.IsMap() && n["namePrefix"] && n["count"];
    if (counted) GANTRY_RETURN_IF_ERROR(r.Int(n["count"], f + ".count", 1, kMaxNodes, &count));
    if (total + count > kMaxNodes) {
      return r.Error(counted ? n["count"] : n, counted ? f + ".count" : f,
                     "the scenario would have " + std::to_string(total + count) +
                         " nodes, more than " + Limit(kMaxNodes, "nodes in a cluster"));
    }
    total += count;
  }
  return Status::Ok();
}

// csi: {drivers: [{name, limit}], attached: [{driver, handle}]}: the node has a CSINode
// object listing these drivers (limit: how many volumes each may attach; none: no limit),
// and VolumeAttachments of these volumes.
Status ParseNodeCsi(const YamlReader& r, const YAML::Node& node, const std::string& field,
                    NodeCsi* out) {
  GANTRY_RETURN_IF_ERROR(r.Map(node, field, {"drivers", "attached"}));
  out->has_csi_node = true;
  if (const YAML::Node& drivers = node["drivers"]) {
    GANTRY_RETURN_IF_ERROR(r.List(drivers, field + ".drivers"));
    for (size_t i = 0; i < drivers.size(); ++i) {
      const std::string fi = field + ".drivers[" + std::to_string(i) + "]";
      GANTRY_RETURN_IF_ERROR(r.Map(drivers[i], fi, {"name", "limit"}));
      NodeCsiDriver driver;
      if (!drivers[i]["name"]) return r.Error(drivers[i], fi + ".name", "required");
      GANTRY_RETURN_IF_ERROR(r.String(drivers[i]["name"], fi + ".name", &driver.name));
      if (driver.name.empty())
        return r.Error(drivers[i]["name"], fi + ".name", "must not be empty");
      if (out->FindDriver(driver.name) != nullptr) {
        return r.Error(drivers[i]["name"], fi + ".name",
                       "driver \"" + driver.name + "\" listed twice");
      }
      if (drivers[i]["limit"]) {
        int64_t limit = 0;
        GANTRY_RETURN_IF_ERROR(r.Int(drivers[i]["limit"], fi + ".limit", 0, INT32_MAX, &limit));
        driver.limit = static_cast<int32_t>(limit);
      }
      out->drivers.push_back(std::move(driver));
    }
    std::sort(out->drivers.begin(), out->drivers.end(),
              [](const NodeCsiDriver& a, const NodeCsiDriver& b) { return a.name < b.name; });
  }
  if (const YAML::Node& attached = node["attached"]) {
    GANTRY_RETURN_IF_ERROR(r.List(attached, field + ".attached"));
    for (size_t i = 0; i < attached.size(); ++i) {
      const std::string fi = field + ".attached[" + std::to_string(i) + "]";
      GANTRY_RETURN_IF_ERROR(r.Map(attached[i], fi, {"driver", "handle"}));
      AttachableVolume v;
      for (const char* key : {"driver", "handle"}) {
        if (!attached[i][key]) return r.Error(attached[i], fi + "." + key, "required");
      }
      GANTRY_RETURN_IF_ERROR(r.String(attached[i]["driver"], fi + ".driver", &v.driver));
      GANTRY_RETURN_IF_ERROR(r.String(attached[i]["handle"], fi + ".handle", &v.handle));
      out->attached.push_back(std::move(v));
    }
    SortVolumesOnce(&out->attached);
  }
  return Status::Ok();
}

Status ParseNodes(const YamlReader& r, const YAML::Node& nodes, ClusterState* cluster) {
  GANTRY_RETURN_IF_ERROR(r.List(nodes, "nodes"));
  GANTRY_RETURN_IF_ERROR(CheckNodeCount(r, nodes));
  for (size_t i = 0; i < nodes.size(); ++i) {
    const YAML::Node& n = nodes[i];
    const std::string f = "nodes[" + std::to_string(i) + "]";
    GANTRY_RETURN_IF_ERROR(r.Map(n, f,
                                 {"name", "namePrefix", "count", "allocatable", "gpus", "labels",
                                  "taints", "unschedulable", "csi", "numa", "cachedDatasets"}));
    Node node;
    if (n["allocatable"]) {
      GANTRY_RETURN_IF_ERROR(r.Resources(n["allocatable"], f + ".allocatable", NameSource::kTrusted,
                                         &node.allocatable));
      if (node.allocatable.Get(kGpu) != 0) {
        return r.Error(n["allocatable"], f + ".allocatable.nvidia.com/gpu",
                       "give GPUs as gpus: {count, model, memoryMiB}, not as allocatable");
      }
    } else {
      return r.Error(n, f + ".allocatable", "required");
    }
    if (n["labels"]) GANTRY_RETURN_IF_ERROR(r.LabelMap(n["labels"], f + ".labels", &node.labels));
    if (n["taints"]) GANTRY_RETURN_IF_ERROR(r.Taints(n["taints"], f + ".taints", &node.taints));
    if (n["unschedulable"]) {
      GANTRY_RETURN_IF_ERROR(r.Bool(n["unschedulable"], f + ".unschedulable", &node.unschedulable));
    }
    if (n["csi"]) GANTRY_RETURN_IF_ERROR(ParseNodeCsi(r, n["csi"], f + ".csi", &node.csi));
    if (n["cachedDatasets"]) {
      GANTRY_RETURN_IF_ERROR(ParseDatasetNames(r, n["cachedDatasets"], f + ".cachedDatasets", "",
                                               kMaxCachedDatasetsPerNode, &node.cached_datasets));
    }
    if (const YAML::Node& g = n["gpus"]) {
      const std::string gf = f + ".gpus";
      GANTRY_RETURN_IF_ERROR(r.Map(g, gf, {"count", "model", "memoryMiB", "nvlinkDomains", "mig"}));
      int64_t count = 0, memory = 0, domains = 1;
      std::string model = "generic";
      if (!g["count"]) return r.Error(g, gf + ".count", "required");
      GANTRY_RETURN_IF_ERROR(r.Int(g["count"], gf + ".count", 0, 64, &count));
      if (g["model"]) GANTRY_RETURN_IF_ERROR(r.Name(g["model"], gf + ".model", &model));
      if (g["memoryMiB"]) {
        GANTRY_RETURN_IF_ERROR(
            r.Int(g["memoryMiB"], gf + ".memoryMiB", 0, int64_t{1} << 40, &memory));
      }
      if (g["nvlinkDomains"]) {
        GANTRY_RETURN_IF_ERROR(r.Int(g["nvlinkDomains"], gf + ".nvlinkDomains", 1, 64, &domains));
        if (count % domains != 0) {
          return r.Error(g["nvlinkDomains"], gf + ".nvlinkDomains",
                         "must divide count (" + std::to_string(count) + ")");
        }
      }
      GpuModelId model_id = GpuModels().Intern(model);
      for (int64_t d = 0; d < count; ++d) {
        GpuDevice device;
        device.model = model_id;
        device.memory_mib = memory;
        device.nvlink_domain = static_cast<int32_t>(d / (count / domains));
        node.gpus.push_back(device);
      }
      if (g["mig"]) GANTRY_RETURN_IF_ERROR(ParseNodeMig(r, g["mig"], gf + ".mig", &node));
    }
    if (n["numa"]) {
      // For the words of an error only: the names are read below.
      const YAML::Node& named = n["name"] ? n["name"] : n["namePrefix"];
      node.name = named && named.IsScalar() ? named.Scalar() + (n["name"] ? "" : "*") : "";
      GANTRY_RETURN_IF_ERROR(ParseNodeNuma(r, n["numa"], f + ".numa", &node));
    }
    const bool named = static_cast<bool>(n["name"]);
    const bool prefixed = static_cast<bool>(n["namePrefix"]);
    if (named == prefixed) {
      return r.Error(n, f, "give either name, or namePrefix with count");
    }
    if (named) {
      if (n["count"])
        return r.Error(n["count"], f + ".count", "count goes with namePrefix, not name");
      GANTRY_RETURN_IF_ERROR(r.Name(n["name"], f + ".name", &node.name));
      auto added = cluster->AddNode(node);
      if (!added.ok()) return r.Error(n["name"], f + ".name", added.status().message());
      continue;
    }
    std::string prefix;
    int64_t count = 0;
    GANTRY_RETURN_IF_ERROR(r.Name(n["namePrefix"], f + ".namePrefix", &prefix));
    if (!n["count"]) return r.Error(n, f + ".count", "required with namePrefix");
    GANTRY_RETURN_IF_ERROR(r.Int(n["count"], f + ".count", 1, kMaxNodes, &count));
    if (prefix.size() + DigitCount(count - 1) > kMaxNameLength) {
      return r.Error(n["namePrefix"], f + ".namePrefix",
                     "names " + QuoteForMessage(prefix + std::to_string(count - 1)) +
                         " would be longer than " + std::to_string(kMaxNameLength) +
                         " bytes (the limit on names)");
    }
    for (int64_t k = 0; k < count; ++k) {
      Node copy = node;
      copy.name = prefix + std::to_string(k);
      auto added = cluster->AddNode(std::move(copy));
      if (!added.ok()) return r.Error(n["namePrefix"], f + ".namePrefix", added.status().message());
    }
  }
  return Status::Ok();
}

Status ParseQueues(const YamlReader& r, const YAML::Node& queues, ClusterState* cluster) {
  GANTRY_RETURN_IF_ERROR(r.List(queues, "queues"));
  std::vector<QueueId> ids(queues.size(), kNone);
  for (size_t i = 0; i < queues.size(); ++i) {
    const YAML::Node& q = queues[i];
    const std::string f = "queues[" + std::to_string(i) + "]";
    GANTRY_RETURN_IF_ERROR(r.Map(q, f,
                                 {"name", "weight", "capability", "guarantee", "deserved", "parent",
                                  "reclaimable", "usageHalfLifeSeconds", "usage", "movable"}));
    Queue queue;
    if (!q["name"]) return r.Error(q, f + ".name", "required");
    GANTRY_RETURN_IF_ERROR(r.Name(q["name"], f + ".name", &queue.name));
    if (q["weight"])
      GANTRY_RETURN_IF_ERROR(r.Int(q["weight"], f + ".weight", 1, 1'000'000, &queue.weight));
    if (q["capability"]) {
      GANTRY_RETURN_IF_ERROR(
          r.Resources(q["capability"], f + ".capability", NameSource::kTrusted, &queue.capability));
    }
    if (q["guarantee"]) {
      GANTRY_RETURN_IF_ERROR(
          r.Resources(q["guarantee"], f + ".guarantee", NameSource::kTrusted, &queue.guarantee));
    }
    if (q["deserved"]) {
      GANTRY_RETURN_IF_ERROR(
          r.Resources(q["deserved"], f + ".deserved", NameSource::kTrusted, &queue.deserved));
    }
    if (q["reclaimable"])
      GANTRY_RETURN_IF_ERROR(r.Bool(q["reclaimable"], f + ".reclaimable", &queue.reclaimable));
    // Fair share with memory: a half-life on a top-level queue, for its tree; and the usage
    // its queues start with (what they held lately, as UsageMemory would have kept it).
    if (q["usageHalfLifeSeconds"]) {
      if (q["parent"]) {
        return r.Error(q["usageHalfLifeSeconds"], f + ".usageHalfLifeSeconds",
                       "set on the top-level queue of a tree, for the whole tree (this queue "
                       "has a parent)");
      }
      GANTRY_RETURN_IF_ERROR(r.Int(q["usageHalfLifeSeconds"], f + ".usageHalfLifeSeconds", 0,
                                   kMaxConfiguredSeconds, &queue.usage_half_life_s));
    }
    if (q["usage"]) {
      GANTRY_RETURN_IF_ERROR(
          r.Resources(q["usage"], f + ".usage", NameSource::kTrusted, &queue.usage));
    }
    if (q["movable"]) GANTRY_RETURN_IF_ERROR(r.Bool(q["movable"], f + ".movable", &queue.movable));
    auto added = cluster->AddQueue(std::move(queue));
    if (!added.ok()) return r.Error(q, f, added.status().message());
    ids[i] = *added;
  }
  // Parents by name, once every queue is known (a child may come before its parent).
  for (size_t i = 0; i < queues.size(); ++i) {
    const YAML::Node& q = queues[i];
    if (!q["parent"]) continue;
    const std::string f = "queues[" + std::to_string(i) + "].parent";
    std::string parent_name;
    GANTRY_RETURN_IF_ERROR(r.Name(q["parent"], f, &parent_name));
    const QueueId parent = cluster->FindQueue(parent_name);
    if (parent == kNone) {
      return r.Error(q["parent"], f, "unknown parent queue " + QuoteForMessage(parent_name));
    }
    const Queue& queue = cluster->queue(ids[i]);
    Status set = cluster->SetQueueTree(ids[i], parent, "", queue.reclaimable, queue.deserved);
    if (!set.ok()) return r.Error(q["parent"], f, set.message());
  }
  const QueueTree tree = BuildQueueTree(cluster->queues());
  for (size_t i = 0; i < queues.size(); ++i) {
    if (!tree.in_tree(ids[i])) {
      const YAML::Node& q = queues[i];
      const std::string f = "queues[" + std::to_string(i) + "]";
      return q["parent"] ? r.Error(q["parent"], f + ".parent", tree.problem[ids[i]])
                         : r.Error(q, f, tree.problem[ids[i]]);
    }
  }
  return Status::Ok();
}

// preemptionPolicy: PreemptLowerPriority (the default) or Never, as a PriorityClass says.
Status ParsePreemptionPolicy(const YamlReader& r, const YAML::Node& n, const std::string& f,
                             PreemptionPolicy* out) {
  std::string value;
  GANTRY_RETURN_IF_ERROR(r.String(n, f, &value));
  if (value == "PreemptLowerPriority") {
    *out = PreemptionPolicy::kPreemptLowerPriority;
  } else if (value == "Never") {
    *out = PreemptionPolicy::kNever;
  } else {
    return r.Error(n, f,
                   "unknown preemption policy " + QuoteForMessage(value) +
                       " (known: PreemptLowerPriority, Never)");
  }
  return Status::Ok();
}

}  // namespace

Status ParseTaskSpec(const YamlReader& r, const YAML::Node& t, const std::string& f,
                     int32_t job_priority, PreemptionPolicy job_policy, TaskSpec* spec,
                     int64_t* replicas) {
  GANTRY_RETURN_IF_ERROR(
      r.Map(t, f, {"role",        "replicas",         "requests",
                   "gpuFraction", "gpuMemoryMiB",     "gpuModels",
                   "priority",    "preemptionPolicy", "nodeSelector",
                   "tolerations", "nodeAffinity",     "namespace",
                   "labels",      "affinity",         "topologySpreadConstraints",
                   "ports",       "volumes",          "inlineDisks",
                   "guaranteed",  "containers",       "datasets",
                   "movable"}));  // movable: read by ParseJobs (it is the task's, not the spec's)
  spec->role = "task";
  if (t["role"]) GANTRY_RETURN_IF_ERROR(r.Name(t["role"], f + ".role", &spec->role));
  *replicas = 1;
  if (t["replicas"]) {
    GANTRY_RETURN_IF_ERROR(r.Int(t["replicas"], f + ".replicas", 1, kMaxTasksPerJob, replicas));
  }
  if (t["requests"]) {
    GANTRY_RETURN_IF_ERROR(
        r.Resources(t["requests"], f + ".requests", NameSource::kWorkload, &spec->requests));
    Status mig = CheckMigRequests(spec->requests, "");
    if (!mig.ok()) return r.Error(t["requests"], f + ".requests", mig.message());
  }
  GANTRY_RETURN_IF_ERROR(ParseTaskNuma(r, t, f, spec));
  Milli gpu = spec->requests.Get(kGpu);
  spec->requests.Set(kGpu, 0);
  if (gpu % kMilliPerUnit != 0) {
    return r.Error(t["requests"][std::string(kGpuResourceName)], f + ".requests.nvidia.com/gpu",
                   "whole GPUs only; ask for a share of one GPU with gpuFraction");
  }
  if (gpu / kMilliPerUnit > 64) {
    return r.Error(t["requests"], f + ".requests.nvidia.com/gpu", "at most 64 GPUs per task");
  }
  spec->gpu.count = static_cast<int32_t>(gpu / kMilliPerUnit);
  if (t["gpuFraction"]) {
    Milli fraction = 0;
    GANTRY_RETURN_IF_ERROR(
        r.Quantity(t["gpuFraction"], f + ".gpuFraction", &fraction, /*exact=*/true));
    if (fraction <= 0 || fraction >= kMilliPerUnit) {
      return r.Error(
          t["gpuFraction"], f + ".gpuFraction",
          "must be more than 0 and less than 1 (ask for whole GPUs with nvidia.com/gpu)");
    }
    if (spec->gpu.count > 0) {
      return r.Error(t["gpuFraction"], f + ".gpuFraction", "cannot be combined with whole GPUs");
    }
    spec->gpu.milli = static_cast<int32_t>(fraction);
  }
  if (t["gpuMemoryMiB"]) {
    if (spec->gpu.count > 0) {
      return r.Error(t["gpuMemoryMiB"], f + ".gpuMemoryMiB", "applies only to a shared GPU");
    }
    GANTRY_RETURN_IF_ERROR(
        r.Int(t["gpuMemoryMiB"], f + ".gpuMemoryMiB", 1, int64_t{1} << 40, &spec->gpu.memory_mib));
  }
  if (t["gpuModels"]) {
    GANTRY_RETURN_IF_ERROR(r.List(t["gpuModels"], f + ".gpuModels"));
    for (size_t k = 0; k < t["gpuModels"].size(); ++k) {
      std::string model;
      GANTRY_RETURN_IF_ERROR(
          r.Name(t["gpuModels"][k], f + ".gpuModels[" + std::to_string(k) + "]", &model));
      spec->gpu.models.push_back(GpuModels().Intern(model));
    }
    if (!spec->gpu.wants_gpu()) {
      return r.Error(t["gpuModels"], f + ".gpuModels", "the task asks for no GPU");
    }
  }
  int64_t priority = job_priority;
  if (t["priority"]) {
    GANTRY_RETURN_IF_ERROR(r.Int(t["priority"], f + ".priority", INT32_MIN, INT32_MAX, &priority));
  }
  spec->priority = static_cast<int32_t>(priority);
  spec->preemption_policy = job_policy;
  if (t["preemptionPolicy"]) {
    GANTRY_RETURN_IF_ERROR(ParsePreemptionPolicy(r, t["preemptionPolicy"], f + ".preemptionPolicy",
                                                 &spec->preemption_policy));
  }
  if (t["nodeSelector"]) {
    GANTRY_RETURN_IF_ERROR(
        r.LabelMap(t["nodeSelector"], f + ".nodeSelector", &spec->node_selector));
  }
  if (t["tolerations"]) {
    GANTRY_RETURN_IF_ERROR(r.Tolerations(t["tolerations"], f + ".tolerations", &spec->tolerations));
  }
  const PodSpecReader pod(r);
  // Kubernetes' names from here on: a pod spec's fields can be pasted.
  spec->namespace_ = "default";
  if (t["namespace"])
    GANTRY_RETURN_IF_ERROR(pod.Namespace(t["namespace"], f + ".namespace", &spec->namespace_));
  // Before the affinity terms and spread constraints, whose matchLabelKeys read them.
  if (t["labels"]) GANTRY_RETURN_IF_ERROR(r.LabelMap(t["labels"], f + ".labels", &spec->labels));
  if (t["nodeAffinity"]) {
    // The scenario's shorthand for affinity.nodeAffinity's required terms.
    if (t["affinity"] && t["affinity"].IsMap() && t["affinity"]["nodeAffinity"]) {
      return r.Error(t["nodeAffinity"], f + ".nodeAffinity",
                     "give required node affinity here or in affinity.nodeAffinity, not both");
    }
    GANTRY_RETURN_IF_ERROR(
        pod.NodeSelectorTerms(t["nodeAffinity"], f + ".nodeAffinity", &spec->affinity.terms));
  }
  if (t["affinity"]) {
    GANTRY_RETURN_IF_ERROR(pod.Affinity(t["affinity"], f + ".affinity", spec->labels,
                                        &spec->affinity, &spec->pod_affinity));
  }
  if (t["topologySpreadConstraints"]) {
    GANTRY_RETURN_IF_ERROR(pod.TopologySpreadConstraints(t["topologySpreadConstraints"],
                                                         f + ".topologySpreadConstraints",
                                                         spec->labels, &spec->spread));
  }
  if (t["ports"]) GANTRY_RETURN_IF_ERROR(pod.Ports(t["ports"], f + ".ports", &spec->host_ports));
  if (t["inlineDisks"]) {
    GANTRY_RETURN_IF_ERROR(ReadScenarioInlineDisks(r, t["inlineDisks"], f + ".inlineDisks", spec));
  }
  if (t["volumes"]) {
    GANTRY_RETURN_IF_ERROR(ReadScenarioVolumes(r, pod, t["volumes"], f + ".volumes", spec));
  }
  if (t["datasets"]) {
    GANTRY_RETURN_IF_ERROR(ParseDatasetNames(r, t["datasets"], f + ".datasets", spec->namespace_,
                                             kMaxDatasetsPerTask, &spec->datasets));
  }
  return Status::Ok();
}

namespace {

// namespaces: [{name, labels}], for pod affinity terms' namespaceSelector.
Status ParseNamespaces(const YamlReader& r, const YAML::Node& namespaces, ClusterState* cluster) {
  GANTRY_RETURN_IF_ERROR(r.List(namespaces, "namespaces"));
  const PodSpecReader pod(r);
  std::set<std::string> seen;
  for (size_t i = 0; i < namespaces.size(); ++i) {
    const YAML::Node& n = namespaces[i];
    const std::string f = "namespaces[" + std::to_string(i) + "]";
    GANTRY_RETURN_IF_ERROR(r.Map(n, f, {"name", "labels"}));
    std::string name;
    if (!n["name"]) return r.Error(n, f + ".name", "required");
    GANTRY_RETURN_IF_ERROR(pod.Namespace(n["name"], f + ".name", &name));
    if (!seen.insert(name).second) {
      return r.Error(n["name"], f + ".name", "duplicate namespace " + QuoteForMessage(name));
    }
    Labels labels;
    if (n["labels"]) GANTRY_RETURN_IF_ERROR(r.LabelMap(n["labels"], f + ".labels", &labels));
    cluster->SetNamespaceLabels(name, std::move(labels));
  }
  return Status::Ok();
}

// disruptionBudgets: [{name, namespace, selector: {matchLabels, matchExpressions},
// disruptionsAllowed}]: PodDisruptionBudgets over the tasks' labels (every namespace when
// it names none).
Status ParseDisruptionBudgets(const YamlReader& r, const YAML::Node& budgets,
                              ClusterState* cluster) {
  GANTRY_RETURN_IF_ERROR(r.List(budgets, "disruptionBudgets"));
  const PodSpecReader pod(r);
  std::set<std::string> seen;
  std::vector<DisruptionBudget> out;
  for (size_t i = 0; i < budgets.size(); ++i) {
    const YAML::Node& b = budgets[i];
    const std::string f = "disruptionBudgets[" + std::to_string(i) + "]";
    GANTRY_RETURN_IF_ERROR(r.Map(b, f, {"name", "namespace", "selector", "disruptionsAllowed"}));
    DisruptionBudget budget;
    if (!b["name"]) return r.Error(b, f + ".name", "required");
    GANTRY_RETURN_IF_ERROR(r.Name(b["name"], f + ".name", &budget.name));
    if (!seen.insert(budget.name).second) {
      return r.Error(b["name"], f + ".name",
                     "duplicate disruption budget " + QuoteForMessage(budget.name));
    }
    if (b["namespace"]) {
      GANTRY_RETURN_IF_ERROR(pod.Namespace(b["namespace"], f + ".namespace", &budget.namespace_));
    }
    if (!b["selector"]) return r.Error(b, f + ".selector", "required");
    budget.selector.emplace();
    GANTRY_RETURN_IF_ERROR(
        pod.ReadLabelSelector(b["selector"], f + ".selector", &*budget.selector));
    if (!b["disruptionsAllowed"]) return r.Error(b, f + ".disruptionsAllowed", "required");
    int64_t allowed = 0;
    GANTRY_RETURN_IF_ERROR(
        r.Int(b["disruptionsAllowed"], f + ".disruptionsAllowed", 0, INT32_MAX, &allowed));
    budget.disruptions_allowed = static_cast<int32_t>(allowed);
    out.push_back(std::move(budget));
  }
  cluster->SetDisruptionBudgets(std::move(out));
  return Status::Ok();
}

// Before any task is built: the replicas of each job, and of all, are within
// kMaxTasksPerJob and kMaxTasks (aliases of a few task lists made 3e8 tasks before).
Status CheckTaskCount(const YamlReader& r, const YAML::Node& jobs) {
  int64_t file_tasks = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const YAML::Node& j = jobs[i];
    if (!j.IsMap() || !j["tasks"] || !j["tasks"].IsSequence()) continue;  // said below
    const std::string name = j["name"] && j["name"].IsScalar() ? j["name"].Scalar() : "";
    int64_t job_tasks = 0;
    for (size_t k = 0; k < j["tasks"].size(); ++k) {
      const YAML::Node& t = j["tasks"][k];
      const std::string tf = "jobs[" + std::to_string(i) + "].tasks[" + std::to_string(k) + "]";
      int64_t replicas = 1;
      const bool counted = t.IsMap() && t["replicas"];
      if (counted) {
        GANTRY_RETURN_IF_ERROR(
            r.Int(t["replicas"], tf + ".replicas", 1, kMaxTasksPerJob, &replicas));
      }
      const YAML::Node& at = counted ? t["replicas"] : t;
      job_tasks += replicas;
      file_tasks += replicas;
      if (job_tasks > kMaxTasksPerJob) {
        return r.Error(at, tf + ".replicas",
                       "job " + QuoteForMessage(name) + " would have " + std::to_string(job_tasks) +
                           " tasks, more than " + Limit(kMaxTasksPerJob, "tasks of a job"));
      }
      if (file_tasks > kMaxTasks) {
        return r.Error(at, tf + ".replicas",
                       "the scenario would have " + std::to_string(file_tasks) +
                           " tasks, more than " + Limit(kMaxTasks, "tasks in a scenario"));
      }
    }
  }
  return Status::Ok();
}

Status ParseJobs(const YamlReader& r, const YAML::Node& jobs, ClusterState* cluster) {
  GANTRY_RETURN_IF_ERROR(r.List(jobs, "jobs"));
  GANTRY_RETURN_IF_ERROR(CheckTaskCount(r, jobs));
  for (size_t i = 0; i < jobs.size(); ++i) {
    const YAML::Node& j = jobs[i];
    const std::string f = "jobs[" + std::to_string(i) + "]";
    GANTRY_RETURN_IF_ERROR(r.Map(j, f,
                                 {"name", "queue", "priority", "preemptionPolicy", "minMember",
                                  "waited", "topology", "tasks", "movable"}));
    Job job;
    if (!j["name"]) return r.Error(j, f + ".name", "required");
    GANTRY_RETURN_IF_ERROR(r.Name(j["name"], f + ".name", &job.name));
    std::string queue_name = "default";
    if (j["queue"]) GANTRY_RETURN_IF_ERROR(r.Name(j["queue"], f + ".queue", &queue_name));
    job.queue = cluster->FindQueue(queue_name);
    if (job.queue == kNone) {
      if (queue_name != "default") {
        return r.Error(j["queue"], f + ".queue", "unknown queue " + QuoteForMessage(queue_name));
      }
      Queue fallback;
      fallback.name = "default";
      job.queue = cluster->AddQueue(std::move(fallback)).value();
    }
    int64_t priority = 0, min_member = 1;
    if (j["priority"])
      GANTRY_RETURN_IF_ERROR(
          r.Int(j["priority"], f + ".priority", INT32_MIN, INT32_MAX, &priority));
    if (j["minMember"]) {
      GANTRY_RETURN_IF_ERROR(
          r.Int(j["minMember"], f + ".minMember", 1, kMaxTasksPerJob, &min_member));
    }
    PreemptionPolicy job_policy = PreemptionPolicy::kPreemptLowerPriority;
    if (j["preemptionPolicy"]) {
      GANTRY_RETURN_IF_ERROR(
          ParsePreemptionPolicy(r, j["preemptionPolicy"], f + ".preemptionPolicy", &job_policy));
    }
    job.priority = static_cast<int32_t>(priority);
    job.min_member = static_cast<int32_t>(min_member);
    job.creation = static_cast<int64_t>(i);
    if (j["waited"]) {  // seconds before the session (at time 0) that the job was created
      int64_t waited = 0;
      GANTRY_RETURN_IF_ERROR(r.Int(j["waited"], f + ".waited", 0, kMaxConfiguredSeconds, &waited));
      job.submitted = -waited;
    }
    if (j["topology"]) {
      GANTRY_RETURN_IF_ERROR(
          ParseJobTopology(r, j["topology"], f + ".topology", *cluster, &job.topology));
    }
    if (!j["tasks"]) return r.Error(j, f + ".tasks", "required");
    GANTRY_RETURN_IF_ERROR(r.List(j["tasks"], f + ".tasks"));
    auto added = cluster->AddJob(job);
    if (!added.ok()) return r.Error(j["name"], f + ".name", added.status().message());
    JobId job_id = *added;
    // movable: true on the job, or on a task (which decides for its replicas): the pods'
    // annotation gantry.dev/movable.
    bool job_movable = false;
    if (j["movable"]) GANTRY_RETURN_IF_ERROR(r.Bool(j["movable"], f + ".movable", &job_movable));
    for (size_t k = 0; k < j["tasks"].size(); ++k) {
      TaskSpec spec;
      int64_t replicas = 1;
      const std::string tf = f + ".tasks[" + std::to_string(k) + "]";
      GANTRY_RETURN_IF_ERROR(
          ParseTaskSpec(r, j["tasks"][k], tf, job.priority, job_policy, &spec, &replicas));
      std::string prefix = job.name + "-" + spec.role + "-";
      if (prefix.size() + DigitCount(replicas - 1) > kMaxNameLength) {
        return r.Error(j["tasks"][k], tf,
                       "task names " + QuoteForMessage(prefix + std::to_string(replicas - 1)) +
                           " would be longer than " + std::to_string(kMaxNameLength) +
                           " bytes (the limit on names)");
      }
      bool movable = job_movable;
      if (j["tasks"][k]["movable"]) {
        GANTRY_RETURN_IF_ERROR(r.Bool(j["tasks"][k]["movable"], tf + ".movable", &movable));
      }
      SpecId spec_id = cluster->AddSpec(std::move(spec));
      for (int64_t n = 0; n < replicas; ++n) {
        auto task = cluster->AddTask(job_id, spec_id, prefix + std::to_string(n));
        if (!task.ok())
          return r.Error(j["tasks"][k], f + ".tasks[" + std::to_string(k) + "]",
                         task.status().message());
        cluster->SetTaskMovable(*task, movable);
      }
    }
  }
  return Status::Ok();
}

Status ParseRunning(const YamlReader& r, const YAML::Node& running, ClusterState* cluster) {
  GANTRY_RETURN_IF_ERROR(r.List(running, "running"));
  std::map<std::pair<JobId, std::string>, size_t> next_pending;
  for (size_t i = 0; i < running.size(); ++i) {
    const YAML::Node& e = running[i];
    const std::string f = "running[" + std::to_string(i) + "]";
    GANTRY_RETURN_IF_ERROR(r.Map(e, f, {"job", "role", "node", "gpus", "bound"}));
    // bound: true (snapshots): the API server has bound it, so it counts there as the
    // daemon counts it, even past the node's room (ClusterState::PlaceBound).
    bool bound = false;
    if (e["bound"]) GANTRY_RETURN_IF_ERROR(r.Bool(e["bound"], f + ".bound", &bound));
    std::string job_name, role, node_name;
    if (!e["job"]) return r.Error(e, f + ".job", "required");
    if (!e["node"]) return r.Error(e, f + ".node", "required");
    GANTRY_RETURN_IF_ERROR(r.String(e["job"], f + ".job", &job_name));
    GANTRY_RETURN_IF_ERROR(r.String(e["node"], f + ".node", &node_name));
    if (e["role"]) GANTRY_RETURN_IF_ERROR(r.String(e["role"], f + ".role", &role));
    JobId job = cluster->FindJob(job_name);
    if (job == kNone)
      return r.Error(e["job"], f + ".job", "unknown job " + QuoteForMessage(job_name));
    NodeId node = cluster->FindNode(node_name);
    if (node == kNone)
      return r.Error(e["node"], f + ".node", "unknown node " + QuoteForMessage(node_name));
    std::vector<int32_t> gpus;
    if (e["gpus"]) {
      GANTRY_RETURN_IF_ERROR(r.List(e["gpus"], f + ".gpus"));
      for (size_t k = 0; k < e["gpus"].size(); ++k) {
        int64_t index = 0;
        GANTRY_RETURN_IF_ERROR(
            r.Int(e["gpus"][k], f + ".gpus[" + std::to_string(k) + "]", 0, 1023, &index));
        gpus.push_back(static_cast<int32_t>(index));
      }
    }
    // The job's first pending task (of the role); where the last search for the same job
    // and role stopped, since tasks only leave pending here: linear in all, not quadratic.
    TaskId task = kNone;
    const std::vector<TaskId>& tasks = cluster->job(job).tasks;
    size_t& next = next_pending[{job, role}];
    for (; next < tasks.size(); ++next) {
      const TaskId t = tasks[next];
      if (cluster->task(t).state != TaskState::kPending) continue;
      if (!role.empty() && cluster->spec_of(t).role != role) continue;
      task = t;
      break;
    }
    if (task == kNone) {
      return r.Error(e, f,
                     "job " + QuoteForMessage(job_name) + " has no pending task" +
                         (role.empty() ? "" : " of role " + QuoteForMessage(role)) +
                         " left to mark running");
    }
    Status placed =
        bound ? cluster->PlaceBound(task, node, gpus) : cluster->Place(task, node, gpus);
    if (!placed.ok()) return r.Error(e, f, placed.message());
  }
  return Status::Ok();
}

}  // namespace

Result<Scenario> ParseScenario(const std::string& text, const std::string& source) {
  YamlReader r(source);
  auto loaded = ParseYamlNode(text, source);
  if (!loaded.ok()) return loaded.status();
  const YAML::Node root = *loaded;
  if (!root || root.IsNull()) return Status::Invalid(source + ": the file is empty");
  GANTRY_RETURN_IF_ERROR(
      r.Map(root, "",
            {"name", "config", "topologyKeys", "hyperNodes", "nodes", "namespaces", "queues",
             "jobs", "running", "disruptionBudgets", "recentDefragmentEvictions", "expect",
             "datasets", "snapshot", "profile", "arrivals"}));
  Scenario s;
  s.source = source;
  s.name = source;
  if (root["name"]) GANTRY_RETURN_IF_ERROR(r.Name(root["name"], "name", &s.name));
  GANTRY_RETURN_IF_ERROR(ParseSchedulerConfig(root["config"], source, &s.config));
  if (root["topologyKeys"]) {
    GANTRY_RETURN_IF_ERROR(ParseTopologyKeys(r, root["topologyKeys"], &s.cluster));
  }
  if (!root["nodes"]) return r.Error(root, "nodes", "required");
  GANTRY_RETURN_IF_ERROR(ParseNodes(r, root["nodes"], &s.cluster));
  if (root["hyperNodes"]) {
    GANTRY_RETURN_IF_ERROR(ParseHyperNodes(r, root["hyperNodes"],
                                           static_cast<bool>(root["topologyKeys"]), &s.cluster));
  }
  if (root["namespaces"]) {
    GANTRY_RETURN_IF_ERROR(ParseNamespaces(r, root["namespaces"], &s.cluster));
  }
  if (root["datasets"]) GANTRY_RETURN_IF_ERROR(ParseDatasets(r, root["datasets"], &s.cluster));
  if (root["queues"]) GANTRY_RETURN_IF_ERROR(ParseQueues(r, root["queues"], &s.cluster));
  if (root["jobs"]) GANTRY_RETURN_IF_ERROR(ParseJobs(r, root["jobs"], &s.cluster));
  if (root["running"]) GANTRY_RETURN_IF_ERROR(ParseRunning(r, root["running"], &s.cluster));
  if (root["disruptionBudgets"]) {
    GANTRY_RETURN_IF_ERROR(ParseDisruptionBudgets(r, root["disruptionBudgets"], &s.cluster));
  }
  if (root["recentDefragmentEvictions"]) {
    GANTRY_RETURN_IF_ERROR(
        ParseRecentDefragmentEvictions(r, root["recentDefragmentEvictions"], &s.cluster));
  }
  if (root["snapshot"])
    GANTRY_RETURN_IF_ERROR(ParseSnapshotHeader(r, root["snapshot"], &s.snapshot));
  if (root["profile"]) GANTRY_RETURN_IF_ERROR(ParseProfile(r, root["profile"], &s.cluster));
  if (root["arrivals"])
    GANTRY_RETURN_IF_ERROR(ParseArrivals(r, root["arrivals"], s.cluster, &s.snapshot));
  if (root["expect"])
    GANTRY_RETURN_IF_ERROR(ParseExpectations(r, root["expect"], s.cluster, &s.expect));
  return s;
}

Status ParseQueueFile(const std::string& text, const std::string& source, ClusterState* cluster,
                      QueueFileConfig* out) {
  YamlReader r(source);
  auto loaded = ParseYamlNode(text, source);
  if (!loaded.ok()) return loaded.status();
  const YAML::Node root = *loaded;
  if (!root || root.IsNull()) return Status::Invalid(source + ": the file is empty");
  GANTRY_RETURN_IF_ERROR(r.Map(root, "", {"queues", "config"}));
  if (!root["queues"]) return r.Error(root, "queues", "required");
  *out = QueueFileConfig{};
  if (const YAML::Node node = root["config"]) {
    // Not the plugins: they come from --policy.
    GANTRY_RETURN_IF_ERROR(
        r.Map(node, "config", {"actions", "preemptionGraceSeconds", "starvationSeconds"}));
    SchedulerConfig config;
    GANTRY_RETURN_IF_ERROR(ParseSchedulerConfig(node, source, &config));
    if (node["actions"]) out->actions.swap(config.actions);
    if (node["preemptionGraceSeconds"]) out->preemption_grace_s = config.preemption_grace_s;
    if (node["starvationSeconds"]) out->starvation_s = config.starvation_s;
  }
  return ParseQueues(r, root["queues"], cluster);
}

Result<Scenario> LoadScenario(const std::string& path) {
  auto text = ReadInputFile(path);
  if (!text.ok()) return text.status();
  return ParseScenario(*text, path);
}

}  // namespace gantry

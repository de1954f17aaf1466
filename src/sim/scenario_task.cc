#include "sim/scenario_task.h"

#include <algorithm>

#include "model/dra_inventory.h"
#include "model/limits.h"
#include "model/quote.h"
#include "sim/pod_spec_reader.h"
#include "sim/scenario_datasets.h"
#include "sim/scenario_mig.h"
#include "sim/scenario_numa.h"
#include "sim/scenario_pod_requests.h"
#include "sim/scenario_volumes.h"

namespace gantry {

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

namespace {

// `claims: [name, ...]`: the task's ResourceClaims (sim/scenario_devices.h), in its
// namespace, as a pod names them in spec.resourceClaims[].resourceClaimName: every
// replica uses the same claims.
Status ReadClaims(const YamlReader& r, const YAML::Node& node, const std::string& field,
                  TaskSpec* spec) {
  GANTRY_RETURN_IF_ERROR(r.List(node, field));
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string f = field + "[" + std::to_string(i) + "]";
    std::string name;
    GANTRY_RETURN_IF_ERROR(r.Name(node[i], f, &name));
    std::string key = dra::ClaimKey(spec->namespace_, name);
    if (std::find(spec->resource_claims.begin(), spec->resource_claims.end(), key) !=
        spec->resource_claims.end()) {
      return r.Error(node[i], f, "the task names claim " + QuoteForMessage(name) + " twice");
    }
    spec->resource_claims.push_back(std::move(key));
  }
  return Status::Ok();
}

}  // namespace

Status ParseTaskSpec(const YamlReader& r, const YAML::Node& t, const std::string& f,
                     int32_t job_priority, PreemptionPolicy job_policy, TaskSpec* spec,
                     int64_t* replicas) {
  GANTRY_RETURN_IF_ERROR(
      r.Map(t, f, {"role",         "replicas",         "requests",
                   "gpuFraction",  "gpuMemoryMiB",     "gpuModels",
                   "priority",     "preemptionPolicy", "nodeSelector",
                   "tolerations",  "nodeAffinity",     "namespace",
                   "labels",       "affinity",         "topologySpreadConstraints",
                   "ports",        "volumes",          "inlineDisks",
                   "guaranteed",   "containers",       "datasets",
                   "claims",       "movable",          "initContainers",
                   "podResources", "overhead",         "group"}));
  // movable and group: read by ParseJobs (they are the task's, not the spec's)
  spec->role = "task";
  if (t["role"]) GANTRY_RETURN_IF_ERROR(r.Name(t["role"], f + ".role", &spec->role));
  *replicas = 1;
  if (t["replicas"]) {
    GANTRY_RETURN_IF_ERROR(r.Int(t["replicas"], f + ".replicas", 1, kMaxTasksPerJob, replicas));
  }
  GANTRY_RETURN_IF_ERROR(ParseTaskRequests(r, t, f, spec));
  const YAML::Node& where = t["requests"] ? t["requests"] : t;
  Status mig = CheckMigRequests(spec->requests, "");
  if (!mig.ok()) return r.Error(where, f + ".requests", mig.message());
  GANTRY_RETURN_IF_ERROR(ParseTaskNuma(r, t, f, spec));
  Milli gpu = spec->requests.Get(kGpu);
  spec->requests.Set(kGpu, 0);
  if (gpu / kMilliPerUnit > 64) {
    return r.Error(where, f + ".requests.nvidia.com/gpu", "at most 64 GPUs per task");
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
  if (t["claims"]) GANTRY_RETURN_IF_ERROR(ReadClaims(r, t["claims"], f + ".claims", spec));
  if (t["datasets"]) {
    GANTRY_RETURN_IF_ERROR(ParseDatasetNames(r, t["datasets"], f + ".datasets", spec->namespace_,
                                             kMaxDatasetsPerTask, &spec->datasets));
  }
  return Status::Ok();
}

}  // namespace gantry

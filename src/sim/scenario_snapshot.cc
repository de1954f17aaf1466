#include "sim/scenario_snapshot.h"

#include <algorithm>

#include "model/limits.h"
#include "sim/scenario_task.h"
#include "sim/scenario_topology.h"
#include "sim/trace_csv.h"

namespace gantry {

Status ParseSnapshotHeader(const YamlReader& r, const YAML::Node& node, ScenarioSnapshot* out) {
  GANTRY_RETURN_IF_ERROR(r.Map(node, "snapshot", {"arrivalWindowSeconds"}));
  if (node["arrivalWindowSeconds"]) {
    GANTRY_RETURN_IF_ERROR(r.Int(node["arrivalWindowSeconds"], "snapshot.arrivalWindowSeconds", 1,
                                 kMaxArrivalWindowS, &out->arrival_window_s));
  }
  return Status::Ok();
}

Status ParseProfile(const YamlReader& r, const YAML::Node& node, ClusterState* cluster) {
  GANTRY_RETURN_IF_ERROR(r.List(node, "profile"));
  if (node.size() > kMaxProfileShapes) {
    return r.Error(node, "profile",
                   std::to_string(node.size()) + " shapes, more than " +
                       std::to_string(kMaxProfileShapes) + " (the limit on a profile)");
  }
  WorkloadProfile profile;
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& e = node[i];
    const std::string f = "profile[" + std::to_string(i) + "]";
    GANTRY_RETURN_IF_ERROR(r.Map(e, f, {"count", "task"}));
    for (const char* key : {"count", "task"}) {
      if (!e[key]) return r.Error(e, f + "." + key, "required");
    }
    TaskType type;
    GANTRY_RETURN_IF_ERROR(r.Int(e["count"], f + ".count", 1, kMaxTraceSeconds, &type.count));
    TaskSpec spec;
    int64_t replicas = 1;
    GANTRY_RETURN_IF_ERROR(ParseTaskSpec(
        r, e["task"], f + ".task", 0, PreemptionPolicy::kPreemptLowerPriority, &spec, &replicas));
    type.requests = spec.requests;
    type.gpu = spec.gpu;
    profile.total += type.count;  // at most 256 x 1e12: no overflow
    profile.types.push_back(std::move(type));
  }
  std::stable_sort(profile.types.begin(), profile.types.end(),
                   [](const TaskType& a, const TaskType& b) { return a.count > b.count; });
  cluster->SetWorkloadProfile(std::move(profile));
  return Status::Ok();
}

Status ParseArrivals(const YamlReader& r, const YAML::Node& node, const ClusterState& cluster,
                     ScenarioSnapshot* out) {
  GANTRY_RETURN_IF_ERROR(r.List(node, "arrivals"));
  int64_t tasks = 0;
  for (size_t i = 0; i < node.size(); ++i) {
    const YAML::Node& a = node[i];
    const std::string f = "arrivals[" + std::to_string(i) + "]";
    GANTRY_RETURN_IF_ERROR(r.Map(a, f,
                                 {"name", "at", "durationSeconds", "queue", "priority", "minMember",
                                  "topology", "movable", "task"}));
    for (const char* key : {"name", "at", "task"}) {
      if (!a[key]) return r.Error(a, f + "." + key, "required");
    }
    ScenarioArrival arrival;
    SimJob& job = arrival.job;
    GANTRY_RETURN_IF_ERROR(r.Name(a["name"], f + ".name", &job.name));
    GANTRY_RETURN_IF_ERROR(r.Int(a["at"], f + ".at", -out->arrival_window_s, 0, &arrival.at));
    if (a["durationSeconds"]) {
      GANTRY_RETURN_IF_ERROR(
          r.Int(a["durationSeconds"], f + ".durationSeconds", 0, kMaxTraceSeconds, &job.duration));
    }
    if (a["queue"]) GANTRY_RETURN_IF_ERROR(r.Name(a["queue"], f + ".queue", &job.queue));
    int64_t priority = 0, min_member = 1, pods = 1;
    if (a["priority"]) {
      GANTRY_RETURN_IF_ERROR(
          r.Int(a["priority"], f + ".priority", INT32_MIN, INT32_MAX, &priority));
    }
    GANTRY_RETURN_IF_ERROR(ParseTaskSpec(r, a["task"], f + ".task", static_cast<int32_t>(priority),
                                         PreemptionPolicy::kPreemptLowerPriority, &job.spec,
                                         &pods));
    if (a["minMember"]) {
      GANTRY_RETURN_IF_ERROR(r.Int(a["minMember"], f + ".minMember", 1, pods, &min_member));
    }
    tasks += pods;
    if (tasks > kMaxTasks) {
      return r.Error(a["task"], f + ".task.replicas",
                     "the arrivals would have more than " + std::to_string(kMaxTasks) +
                         " tasks (the limit on tasks in a scenario)");
    }
    if (job.spec.gpu.count > kMaxGpusPerNode) {
      return r.Error(a["task"], f + ".task.requests.nvidia.com/gpu",
                     "at most " + std::to_string(kMaxGpusPerNode) + " GPUs per pod in a replay");
    }
    job.pods = static_cast<int32_t>(pods);
    job.min_member = static_cast<int32_t>(min_member);
    job.priority = static_cast<int32_t>(priority);
    if (a["topology"]) {
      GANTRY_RETURN_IF_ERROR(
          ParseJobTopology(r, a["topology"], f + ".topology", cluster, &job.topology));
    }
    if (a["movable"]) GANTRY_RETURN_IF_ERROR(r.Bool(a["movable"], f + ".movable", &job.movable));
    out->arrivals.push_back(std::move(arrival));
  }
  return Status::Ok();
}

std::vector<SimJob> SnapshotArrivals(const ScenarioSnapshot& snapshot) {
  std::vector<SimJob> jobs;
  for (const ScenarioArrival& a : snapshot.arrivals) {
    jobs.push_back(a.job);
    jobs.back().submit = snapshot.arrival_window_s + a.at;
  }
  return jobs;
}

}  // namespace gantry

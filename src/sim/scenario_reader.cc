#include "sim/scenario_reader.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <vector>

#include "engine/dra/extended_resources.h"
#include "model/input_file.h"
#include "model/limits.h"
#include "model/queue_tree.h"
#include "sim/pod_spec_reader.h"
#include "sim/scenario_datasets.h"
#include "sim/scenario_defragment.h"
#include "sim/scenario_expect.h"
#include "sim/scenario_groups.h"
#include "sim/scenario_nodes.h"
#include "sim/scenario_snapshot.h"
#include "sim/scenario_task.h"
#include "sim/scenario_topology.h"
#include "sim/yaml_reader.h"
#include "yaml/scheduler_config_yaml.h"

namespace gantry {
namespace {

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
                           " tasks, more than " + LimitText(kMaxTasksPerJob, "tasks of a job"));
      }
      if (file_tasks > kMaxTasks) {
        return r.Error(at, tf + ".replicas",
                       "the scenario would have " + std::to_string(file_tasks) +
                           " tasks, more than " + LimitText(kMaxTasks, "tasks in a scenario"));
      }
    }
  }
  return Status::Ok();
}

// `classes`: the scenario's DeviceClasses. A task's extended resources that one of them
// serves (extendedResourceName, or every class's deviceclass.resource.kubernetes.io/<name>)
// come from DRA devices on a node whose allocatable has none of them, as in the daemon.
Status ParseJobs(const YamlReader& r, const YAML::Node& jobs,
                 std::span<const dra::DeviceClass* const> classes, ClusterState* cluster) {
  GANTRY_RETURN_IF_ERROR(r.List(jobs, "jobs"));
  GANTRY_RETURN_IF_ERROR(CheckTaskCount(r, jobs));
  for (size_t i = 0; i < jobs.size(); ++i) {
    const YAML::Node& j = jobs[i];
    const std::string f = "jobs[" + std::to_string(i) + "]";
    GANTRY_RETURN_IF_ERROR(
        r.Map(j, f,
              {"name", "queue", "priority", "preemptionPolicy", "minMember", "disruptionMode",
               "waited", "topology", "tasks", "movable", "groups"}));
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
    // A native PodGroup's disruptionMode: "all" is evicted whole or not at all.
    if (const YAML::Node& mode = j["disruptionMode"]) {
      std::string value;
      GANTRY_RETURN_IF_ERROR(r.Name(mode, f + ".disruptionMode", &value));
      if (value != "all" && value != "single") {
        return r.Error(mode, f + ".disruptionMode",
                       QuoteForMessage(value) + " is not single or all");
      }
      job.disrupt_whole = value == "all";
    }
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
    if (j["groups"]) {
      if (j["minMember"]) {
        return r.Error(j["minMember"], f + ".minMember",
                       "a job with groups has the minimum its groups give");
      }
      GANTRY_RETURN_IF_ERROR(ParseJobGroups(r, j["groups"], f + ".groups", &job.groups));
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
      int32_t group = -1;
      GANTRY_RETURN_IF_ERROR(ParseTaskGroup(r, j["tasks"][k], tf, job.groups, &group));
      if (!classes.empty()) dra::MarkDeviceBacked(classes, &spec);
      SpecId spec_id = cluster->AddSpec(std::move(spec));
      for (int64_t n = 0; n < replicas; ++n) {
        auto task = cluster->AddTask(job_id, spec_id, prefix + std::to_string(n));
        if (!task.ok())
          return r.Error(j["tasks"][k], f + ".tasks[" + std::to_string(k) + "]",
                         task.status().message());
        cluster->SetTaskMovable(*task, movable);
        GANTRY_RETURN_IF_ERROR(cluster->SetTaskGroup(*task, group));
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

Result<Scenario> ParseScenario(const std::string& text, const std::string& source,
                               const DeviceObjectReader* devices) {
  YamlReader r(source);
  auto loaded = ParseYamlNode(text, source);
  if (!loaded.ok()) return loaded.status();
  const YAML::Node root = *loaded;
  if (!root || root.IsNull()) return Status::Invalid(source + ": the file is empty");
  GANTRY_RETURN_IF_ERROR(
      r.Map(root, "",
            {"name", "config", "topologyKeys", "hyperNodes", "nodes", "namespaces", "queues",
             "jobs", "running", "disruptionBudgets", "recentDefragmentEvictions", "expect",
             "datasets", "snapshot", "profile", "arrivals", "dra"}));
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
  if (root["dra"])
    GANTRY_RETURN_IF_ERROR(ParseScenarioDevices(r, root["dra"], devices, &s.devices));
  if (root["jobs"]) {
    std::vector<const dra::DeviceClass*> classes;
    for (const dra::DeviceClass& c : s.devices.classes) classes.push_back(&c);
    GANTRY_RETURN_IF_ERROR(ParseJobs(r, root["jobs"], classes, &s.cluster));
  }
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

Result<Scenario> LoadScenario(const std::string& path, const DeviceObjectReader* devices) {
  auto text = ReadInputFile(path);
  if (!text.ok()) return text.status();
  return ParseScenario(*text, path, devices);
}

}  // namespace gantry

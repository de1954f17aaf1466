#include "sim/scenario_writer.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <map>
#include <set>

#include "model/quantity.h"

namespace gantry {
namespace {

// Counts of what was left out, by what ("node affinity" -> tasks).
class LeftOut {
 public:
  void Add(const std::string& what, const char* of) { counts_[{what, of}]++; }
  std::vector<std::string> Lines() const {
    std::vector<std::string> out;
    for (const auto& [key, n] : counts_) {
      out.push_back(key.first + " of " + std::to_string(n) + " " + key.second +
                    (n == 1 ? "" : "s"));
    }
    return out;
  }

 private:
  std::map<std::pair<std::string, std::string>, int64_t> counts_;
};

bool BinaryUnits(const std::string& resource) {
  return resource.find("memory") != std::string::npos ||
         resource.find("storage") != std::string::npos || resource.rfind("hugepages-", 0) == 0;
}

// {name: quantity}; `gpus` whole GPUs join as nvidia.com/gpu.
void EmitResources(YAML::Emitter& out, const ResourceVector& v, int32_t gpus = 0) {
  out << YAML::Flow << YAML::BeginMap;
  bool gpu_written = false;
  auto write_gpu = [&] {
    if (gpus > 0 && !gpu_written) {
      out << YAML::Key << std::string(kGpuResourceName) << YAML::Value << std::to_string(gpus);
    }
    gpu_written = true;
  };
  for (const auto& e : v.entries()) {
    const std::string& name = ResourceName(e.id);
    if (name == kGpuResourceName) continue;
    if (name > kGpuResourceName) write_gpu();
    out << YAML::Key << name << YAML::Value << FormatQuantity(e.amount, BinaryUnits(name));
  }
  write_gpu();
  out << YAML::EndMap;
}

void EmitLabels(YAML::Emitter& out, const Labels& labels) {
  out << YAML::BeginMap;
  for (const auto& [k, v] : labels.pairs()) out << YAML::Key << k << YAML::Value << v;
  out << YAML::EndMap;
}

void EmitTaints(YAML::Emitter& out, const std::vector<Taint>& taints) {
  out << YAML::BeginSeq;
  for (const Taint& t : taints) {
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "key" << YAML::Value << t.key;
    if (!t.value.empty()) out << YAML::Key << "value" << YAML::Value << t.value;
    out << YAML::Key << "effect" << YAML::Value << std::string(TaintEffectName(t.effect))
        << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

void EmitTolerations(YAML::Emitter& out, const std::vector<Toleration>& tolerations) {
  out << YAML::BeginSeq;
  for (const Toleration& t : tolerations) {
    out << YAML::Flow << YAML::BeginMap;
    if (!t.key.empty()) out << YAML::Key << "key" << YAML::Value << t.key;
    out << YAML::Key << "operator" << YAML::Value
        << (t.op == Toleration::Op::kExists ? "Exists" : "Equal");
    if (!t.value.empty()) out << YAML::Key << "value" << YAML::Value << t.value;
    if (!t.any_effect) {
      out << YAML::Key << "effect" << YAML::Value << std::string(TaintEffectName(t.effect));
    }
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

// The GPU part of a task (or a profile type): nvidia.com/gpu goes with the requests.
void EmitGpu(YAML::Emitter& out, const GpuRequest& gpu) {
  if (gpu.count == 0 && gpu.milli > 0) {
    out << YAML::Key << "gpuFraction" << YAML::Value << FormatQuantity(gpu.milli);
  }
  if (gpu.count == 0 && gpu.memory_mib > 0) {
    out << YAML::Key << "gpuMemoryMiB" << YAML::Value << gpu.memory_mib;
  }
  if (!gpu.models.empty()) {
    out << YAML::Key << "gpuModels" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (GpuModelId m : gpu.models) out << GpuModels().Name(m);
    out << YAML::EndSeq;
  }
}

// What a task spec holds that the format (or this writer) does not carry.
void NoteSpecLeftOut(const TaskSpec& s, int64_t tasks, LeftOut* left_out) {
  auto note = [&](bool present, const char* what) {
    for (int64_t i = 0; present && i < tasks; ++i) left_out->Add(what, "task");
  };
  note(s.affinity != NodeAffinity{}, "node affinity");
  note(s.pod_affinity != PodAffinity{}, "pod affinity");
  note(!s.spread.empty(), "topology spread constraints");
  note(!s.host_ports.empty(), "host ports");
  note(!s.volume_node_affinity.empty() || !s.volume_zones.empty() || !s.rwop_claims.empty() ||
           !s.delayed_claims.empty() || !s.attachable_volumes.empty() || !s.inline_disks.empty(),
       "volumes");
  note(s.numa != NumaDemand{}, "NUMA demand (QoS class, containers)");
  note(!s.datasets.empty(), "datasets");
}

void EmitSpecKeys(YAML::Emitter& out, const TaskSpec& s, const std::string& role, int64_t replicas,
                  int32_t job_priority) {
  out << YAML::Key << "role" << YAML::Value << role;
  if (replicas != 1) out << YAML::Key << "replicas" << YAML::Value << replicas;
  out << YAML::Key << "requests" << YAML::Value;
  EmitResources(out, s.requests, s.gpu.count);
  EmitGpu(out, s.gpu);
  if (s.priority != job_priority) out << YAML::Key << "priority" << YAML::Value << s.priority;
  if (s.preemption_policy == PreemptionPolicy::kNever) {
    out << YAML::Key << "preemptionPolicy" << YAML::Value << "Never";
  }
  if (!s.namespace_.empty() && s.namespace_ != "default") {
    out << YAML::Key << "namespace" << YAML::Value << s.namespace_;
  }
  if (!s.labels.empty()) {
    out << YAML::Key << "labels" << YAML::Value;
    EmitLabels(out, s.labels);
  }
  if (!s.node_selector.empty()) {
    out << YAML::Key << "nodeSelector" << YAML::Value;
    EmitLabels(out, s.node_selector);
  }
  if (!s.tolerations.empty()) {
    out << YAML::Key << "tolerations" << YAML::Value;
    EmitTolerations(out, s.tolerations);
  }
  if (!s.resource_claims.empty()) {
    // Keys are "namespace/name", in the task's namespace (ReadClaims).
    out << YAML::Key << "claims" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const std::string& key : s.resource_claims) out << key.substr(key.find('/') + 1);
    out << YAML::EndSeq;
  }
}

// A node loaded from JSON text, in block style. A JSON string is a quoted scalar (tag "!")
// and is written quoted, so that a string such as resourceVersion "337" is read back as a
// string, not as a number.
void EmitLoadedJson(YAML::Emitter& out, const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      out << YAML::BeginMap;
      for (const auto& kv : node) {
        out << YAML::Key << kv.first.Scalar() << YAML::Value;
        EmitLoadedJson(out, kv.second);
      }
      out << YAML::EndMap;
      break;
    case YAML::NodeType::Sequence:
      out << YAML::BeginSeq;
      for (const YAML::Node& item : node) EmitLoadedJson(out, item);
      out << YAML::EndSeq;
      break;
    case YAML::NodeType::Scalar:
      if (node.Tag() == "!") out << YAML::DoubleQuoted;
      out << node.Scalar();
      break;
    default:
      out << YAML::Null;
  }
}

// `dra:` (sim/scenario_devices.h): the API objects as listed (JSON is YAML).
void EmitDevices(YAML::Emitter& out, const ScenarioWriteOptions& options) {
  if (options.device_objects.empty() && options.admin_access_namespaces.empty()) return;
  out << YAML::Key << "dra" << YAML::Value << YAML::BeginMap;
  if (!options.device_objects.empty()) {
    out << YAML::Key << "objects" << YAML::Value << YAML::BeginSeq;
    for (const std::string& object : options.device_objects)
      EmitLoadedJson(out, YAML::Load(object));
    out << YAML::EndSeq;
  }
  if (!options.admin_access_namespaces.empty()) {
    out << YAML::Key << "adminAccessNamespaces" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const std::string& ns : options.admin_access_namespaces) out << ns;
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
}

// Whether a scenario may name the level: one of the cluster's, that a written node has
// (the parser's rule). A job naming another waits in the daemon, saying so.
bool LevelWritable(const ClusterState& cluster, const std::string& level) {
  const auto& keys = cluster.topology_keys();
  const auto at = std::find(keys.begin(), keys.end(), level);
  if (at == keys.end()) return false;
  const auto index = static_cast<size_t>(at - keys.begin());
  return std::any_of(cluster.nodes().begin(), cluster.nodes().end(), [&](const Node& n) {
    return !n.removed && index < n.topology.size() && !n.topology[index].empty();
  });
}

void EmitTopology(YAML::Emitter& out, const ClusterState& cluster, const TopologyRequest& t,
                  LeftOut* left_out) {
  if (t.level.empty()) return;
  if (!LevelWritable(cluster, t.level)) {
    left_out->Add("a topology level no node has", "job");
    return;
  }
  out << YAML::Key << "topology" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key
      << (t.required ? "required" : "preferred") << YAML::Value << t.level << YAML::EndMap;
}

void EmitNodes(YAML::Emitter& out, const ClusterState& cluster, LeftOut* left_out) {
  out << YAML::Key << "nodes" << YAML::Value << YAML::BeginSeq;
  for (const Node& n : cluster.nodes()) {
    if (n.removed) continue;
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << n.name;
    ResourceVector allocatable = n.allocatable;
    allocatable.Set(kGpu, 0);
    out << YAML::Key << "allocatable" << YAML::Value;
    EmitResources(out, allocatable);
    if (!n.gpus.empty()) {
      const GpuDevice& first = n.gpus.front();
      const auto count = static_cast<int32_t>(n.gpus.size());
      const int32_t domains = n.gpus.back().nvlink_domain + 1;
      bool uniform = domains >= 1 && count % domains == 0;
      for (int32_t d = 0; d < count && uniform; ++d) {
        const GpuDevice& g = n.gpus[static_cast<size_t>(d)];
        uniform = g.model == first.model && g.memory_mib == first.memory_mib &&
                  g.nvlink_domain == d / (count / domains);
      }
      if (!uniform) left_out->Add("mixed GPU models, memory or NVLink domains", "node");
      out << YAML::Key << "gpus" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key
          << "count" << YAML::Value << count << YAML::Key << "model" << YAML::Value
          << GpuModels().Name(first.model);
      if (first.memory_mib > 0) out << YAML::Key << "memoryMiB" << YAML::Value << first.memory_mib;
      if (uniform && domains > 1) out << YAML::Key << "nvlinkDomains" << YAML::Value << domains;
      out << YAML::EndMap;
    }
    if (n.mig.strategy != MigStrategy::kNone) left_out->Add("MIG layout", "node");
    if (n.numa != NodeNuma{}) left_out->Add("NUMA nodes", "node");
    if (n.csi != NodeCsi{}) left_out->Add("CSI drivers and attachments", "node");
    if (!n.cached_datasets.empty()) left_out->Add("cached datasets", "node");
    if (!n.labels.empty()) {
      out << YAML::Key << "labels" << YAML::Value;
      EmitLabels(out, n.labels);
    }
    if (!n.taints.empty()) {
      out << YAML::Key << "taints" << YAML::Value;
      EmitTaints(out, n.taints);
    }
    if (n.unschedulable) out << YAML::Key << "unschedulable" << YAML::Value << true;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

void EmitQueues(YAML::Emitter& out, const ClusterState& cluster, LeftOut* left_out) {
  if (cluster.queues().empty()) return;
  out << YAML::Key << "queues" << YAML::Value << YAML::BeginSeq;
  for (const Queue& q : cluster.queues()) {
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << q.name;
    if (q.weight != 1) out << YAML::Key << "weight" << YAML::Value << q.weight;
    const std::pair<const char*, const ResourceVector*> amounts[] = {{"guarantee", &q.guarantee},
                                                                     {"capability", &q.capability},
                                                                     {"deserved", &q.deserved},
                                                                     {"usage", &q.usage}};
    for (const auto& [key, v] : amounts) {
      if (v->empty()) continue;
      out << YAML::Key << key << YAML::Value;
      EmitResources(out, *v);
    }
    if (q.parent != kNone) {
      out << YAML::Key << "parent" << YAML::Value << cluster.queue(q.parent).name;
    } else if (q.usage_half_life_s > 0) {
      out << YAML::Key << "usageHalfLifeSeconds" << YAML::Value << q.usage_half_life_s;
    }
    if (!q.missing_parent.empty()) left_out->Add("a missing parent", "queue");
    if (!q.reclaimable) out << YAML::Key << "reclaimable" << YAML::Value << false;
    if (q.movable) out << YAML::Key << "movable" << YAML::Value << true;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

struct RunningEntry {
  std::string job, role, node;
  std::vector<int32_t> gpus;
};

// A job's group tree (sim/scenario_groups.h), in its order.
void EmitGroups(YAML::Emitter& out, const std::vector<TaskGroup>& groups) {
  if (groups.empty()) return;
  out << YAML::Key << "groups" << YAML::Value << YAML::BeginSeq;
  for (const TaskGroup& g : groups) {
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << g.name;
    if (g.parent >= 0) {
      out << YAML::Key << "parent" << YAML::Value << groups[static_cast<size_t>(g.parent)].name;
    }
    out << YAML::Key << (g.leaf ? "minMember" : "minGroups") << YAML::Value << g.min;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

void EmitJobs(YAML::Emitter& out, const ClusterState& cluster, int64_t now,
              std::vector<RunningEntry>* running, LeftOut* left_out) {
  std::vector<JobId> jobs;
  for (JobId j = 0; j < cluster.jobs().size(); ++j) {
    if (!cluster.job(j).tasks.empty()) jobs.push_back(j);
  }
  std::stable_sort(jobs.begin(), jobs.end(), [&](JobId a, JobId b) {
    return cluster.job(a).creation < cluster.job(b).creation;
  });
  if (jobs.empty()) return;
  out << YAML::Key << "jobs" << YAML::Value << YAML::BeginSeq;
  for (JobId id : jobs) {
    const Job& job = cluster.job(id);
    // Its tasks by spec, in order of first appearance; running tasks on removed nodes
    // are not written.
    std::vector<std::pair<SpecId, std::vector<TaskId>>> groups;
    for (TaskId t : job.tasks) {
      const Task& task = cluster.task(t);
      if (task.state == TaskState::kDone) continue;
      if (task.state == TaskState::kRunning && cluster.node(task.node).removed) {
        left_out->Add("a removed node", "running task");
        continue;
      }
      // Tasks of one shape in different groups of the job's tree are written apart.
      auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) {
        return g.first == task.spec && cluster.task(g.second.front()).group == task.group;
      });
      if (it == groups.end()) {
        groups.push_back({task.spec, {}});
        it = std::prev(groups.end());
      }
      it->second.push_back(t);
    }
    if (groups.empty()) continue;
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << job.name;
    out << YAML::Key << "queue" << YAML::Value << cluster.queue(job.queue).name;
    if (job.priority != 0) out << YAML::Key << "priority" << YAML::Value << job.priority;
    if (job.min_member != 1 && job.groups.empty()) {
      out << YAML::Key << "minMember" << YAML::Value << job.min_member;
    }
    EmitGroups(out, job.groups);
    if (job.disrupt_whole) out << YAML::Key << "disruptionMode" << YAML::Value << "all";
    if (now > job.submitted) out << YAML::Key << "waited" << YAML::Value << now - job.submitted;
    EmitTopology(out, cluster, job.topology, left_out);
    out << YAML::Key << "tasks" << YAML::Value << YAML::BeginSeq;
    std::set<std::string> roles;
    for (size_t g = 0; g < groups.size(); ++g) {
      const auto& [spec_id, tasks] = groups[g];
      const TaskSpec& spec = cluster.spec(spec_id);
      std::string role = spec.role.empty() ? "task" : spec.role;
      if (!roles.insert(role).second) {
        role += "-" + std::to_string(g);
        roles.insert(role);
      }
      NoteSpecLeftOut(spec, static_cast<int64_t>(tasks.size()), left_out);
      const bool movable = cluster.task(tasks.front()).movable;
      out << YAML::BeginMap;
      EmitSpecKeys(out, spec, role, static_cast<int64_t>(tasks.size()), job.priority);
      if (movable) out << YAML::Key << "movable" << YAML::Value << true;
      if (const int32_t leaf = cluster.task(tasks.front()).group; leaf >= 0) {
        out << YAML::Key << "group" << YAML::Value << job.groups[static_cast<size_t>(leaf)].name;
      }
      out << YAML::EndMap;
      for (TaskId t : tasks) {
        const Task& task = cluster.task(t);
        if (task.movable != movable) left_out->Add("movable differing within a role", "task");
        if (task.state != TaskState::kRunning) continue;
        running->push_back({job.name, role, cluster.node(task.node).name, task.gpus});
      }
    }
    out << YAML::EndSeq << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

void EmitRunning(YAML::Emitter& out, const std::vector<RunningEntry>& running, bool bound) {
  if (running.empty()) return;
  out << YAML::Key << "running" << YAML::Value << YAML::BeginSeq;
  for (const RunningEntry& r : running) {
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "job" << YAML::Value << r.job << YAML::Key
        << "role" << YAML::Value << r.role << YAML::Key << "node" << YAML::Value << r.node;
    if (!r.gpus.empty()) {
      out << YAML::Key << "gpus" << YAML::Value << YAML::Flow << YAML::BeginSeq;
      for (int32_t g : r.gpus) out << g;
      out << YAML::EndSeq;
    }
    if (bound) out << YAML::Key << "bound" << YAML::Value << true;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

void EmitProfile(YAML::Emitter& out, const WorkloadProfile& profile) {
  if (profile.types.empty()) return;
  out << YAML::Key << "profile" << YAML::Value << YAML::BeginSeq;
  for (const TaskType& t : profile.types) {
    out << YAML::Flow << YAML::BeginMap << YAML::Key << "count" << YAML::Value << t.count
        << YAML::Key << "task" << YAML::Value << YAML::BeginMap << YAML::Key << "requests"
        << YAML::Value;
    EmitResources(out, t.requests, t.gpu.count);
    EmitGpu(out, t.gpu);
    out << YAML::EndMap << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

void EmitArrivals(YAML::Emitter& out, const ClusterState& cluster, const ScenarioSnapshot& snapshot,
                  LeftOut* left_out) {
  out << YAML::Key << "snapshot" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key
      << "arrivalWindowSeconds" << YAML::Value << snapshot.arrival_window_s << YAML::EndMap;
  if (snapshot.arrivals.empty()) return;
  out << YAML::Key << "arrivals" << YAML::Value << YAML::BeginSeq;
  for (const ScenarioArrival& a : snapshot.arrivals) {
    const SimJob& j = a.job;
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << j.name << YAML::Key << "at"
        << YAML::Value << a.at;
    if (j.duration > 0) out << YAML::Key << "durationSeconds" << YAML::Value << j.duration;
    out << YAML::Key << "queue" << YAML::Value << j.queue;
    if (j.priority != 0) out << YAML::Key << "priority" << YAML::Value << j.priority;
    if (j.min_member != 1) out << YAML::Key << "minMember" << YAML::Value << j.min_member;
    EmitTopology(out, cluster, j.topology, left_out);
    if (j.movable) out << YAML::Key << "movable" << YAML::Value << true;
    NoteSpecLeftOut(j.spec, j.pods, left_out);
    out << YAML::Key << "task" << YAML::Value << YAML::BeginMap;
    EmitSpecKeys(out, j.spec, j.spec.role.empty() ? "task" : j.spec.role, j.pods, j.priority);
    out << YAML::EndMap << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

}  // namespace

WrittenScenario WriteScenario(const ClusterState& cluster, const ScenarioWriteOptions& options) {
  LeftOut left_out;
  YAML::Emitter out;
  out << YAML::BeginMap;
  if (!options.name.empty()) out << YAML::Key << "name" << YAML::Value << options.name;
  if (!cluster.topology_keys().empty()) {
    out << YAML::Key << "topologyKeys" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const std::string& k : cluster.topology_keys()) out << k;
    out << YAML::EndSeq;
  }
  EmitNodes(out, cluster, &left_out);
  EmitQueues(out, cluster, &left_out);
  std::vector<RunningEntry> running;
  EmitJobs(out, cluster, options.now, &running, &left_out);
  EmitRunning(out, running, options.running_bound);
  if (!cluster.disruption_budgets().empty()) {
    for (size_t i = 0; i < cluster.disruption_budgets().size(); ++i) {
      left_out.Add("PodDisruptionBudget", "budget");
    }
  }
  EmitProfile(out, cluster.workload_profile());
  if (options.snapshot != nullptr) EmitArrivals(out, cluster, *options.snapshot, &left_out);
  EmitDevices(out, options);
  out << YAML::EndMap;

  WrittenScenario written;
  written.left_out = left_out.Lines();
  for (const std::string& line : options.comments) written.text += "# " + line + "\n";
  if (!written.left_out.empty()) {
    written.text += "# Left out (the scenario format does not carry them):\n";
    for (const std::string& line : written.left_out) written.text += "#   " + line + "\n";
  }
  written.text += out.c_str();
  written.text += "\n";
  return written;
}

}  // namespace gantry

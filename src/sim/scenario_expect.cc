#include "sim/scenario_expect.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_set>

#include "engine/topology_domains.h"
#include "explain/explanation_json.h"
#include "model/limits.h"

namespace gantry {

Status ParseExpectations(const YamlReader& r, const YAML::Node& expect, const ClusterState& cluster,
                         ScenarioExpectations* out) {
  GANTRY_RETURN_IF_ERROR(r.Map(expect, "expect",
                               {"placed", "pending", "onNodes", "nodeCounts", "gpus",
                                "placedInQueue", "placedOnNode", "evicted", "deserved", "spans",
                                "migGpus", "numaZones", "evictionReason", "explain", "devices"}));
  out->present = true;
  auto check_job = [&](const YAML::Node& key, const std::string& field) -> Status {
    if (cluster.FindJob(key.Scalar()) == kNone) {
      return r.Error(key, field, "unknown job " + QuoteForMessage(key.Scalar()));
    }
    return Status::Ok();
  };
  if (const YAML::Node& placed = expect["placed"]) {
    if (!placed.IsMap())
      return r.Error(placed, "expect.placed", "expected a mapping of job to count");
    for (const auto& kv : placed) {
      std::string field = "expect.placed." + kv.first.Scalar();
      GANTRY_RETURN_IF_ERROR(check_job(kv.first, field));
      int64_t n = 0;
      GANTRY_RETURN_IF_ERROR(r.Int(kv.second, field, 0, 1'000'000, &n));
      out->placed[kv.first.Scalar()] = static_cast<int32_t>(n);
    }
  }
  if (const YAML::Node& pending = expect["pending"]) {
    if (!pending.IsMap())
      return r.Error(pending, "expect.pending", "expected a mapping of job to text");
    for (const auto& kv : pending) {
      std::string field = "expect.pending." + kv.first.Scalar();
      GANTRY_RETURN_IF_ERROR(check_job(kv.first, field));
      GANTRY_RETURN_IF_ERROR(r.String(kv.second, field, &out->pending[kv.first.Scalar()]));
    }
  }
  if (const YAML::Node& explain = expect["explain"]) {
    if (!explain.IsMap())
      return r.Error(explain, "expect.explain", "expected a mapping of job to text");
    for (const auto& kv : explain) {
      std::string field = "expect.explain." + kv.first.Scalar();
      GANTRY_RETURN_IF_ERROR(check_job(kv.first, field));
      std::vector<std::string>& texts = out->explain[kv.first.Scalar()];
      if (!kv.second.IsSequence()) {  // one text, or a list of them
        GANTRY_RETURN_IF_ERROR(r.String(kv.second, field, &texts.emplace_back()));
        continue;
      }
      for (size_t k = 0; k < kv.second.size(); ++k) {
        GANTRY_RETURN_IF_ERROR(
            r.String(kv.second[k], field + "[" + std::to_string(k) + "]", &texts.emplace_back()));
      }
    }
  }
  if (const YAML::Node& on_nodes = expect["onNodes"]) {
    if (!on_nodes.IsMap())
      return r.Error(on_nodes, "expect.onNodes", "expected a mapping of job to node list");
    for (const auto& kv : on_nodes) {
      std::string field = "expect.onNodes." + kv.first.Scalar();
      GANTRY_RETURN_IF_ERROR(check_job(kv.first, field));
      GANTRY_RETURN_IF_ERROR(r.List(kv.second, field));
      auto& nodes = out->on_nodes[kv.first.Scalar()];
      for (size_t k = 0; k < kv.second.size(); ++k) {
        std::string name;
        GANTRY_RETURN_IF_ERROR(
            r.String(kv.second[k], field + "[" + std::to_string(k) + "]", &name));
        if (cluster.FindNode(name) == kNone) {
          return r.Error(kv.second[k], field + "[" + std::to_string(k) + "]",
                         "unknown node " + QuoteForMessage(name));
        }
        nodes.push_back(name);
      }
    }
  }
  if (const YAML::Node& node_counts = expect["nodeCounts"]) {
    if (!node_counts.IsMap()) {
      return r.Error(node_counts, "expect.nodeCounts",
                     "expected a mapping of job to a mapping of node to count");
    }
    for (const auto& kv : node_counts) {
      const std::string field = "expect.nodeCounts." + kv.first.Scalar();
      GANTRY_RETURN_IF_ERROR(check_job(kv.first, field));
      if (!kv.second.IsMap()) {
        return r.Error(kv.second, field, "expected a mapping of node to count");
      }
      auto& counts = out->node_counts[kv.first.Scalar()];
      for (const auto& nc : kv.second) {
        const std::string node = nc.first.Scalar();
        const std::string node_field = field + "." + node;
        if (cluster.FindNode(node) == kNone) {
          return r.Error(nc.first, node_field, "unknown node " + QuoteForMessage(node));
        }
        int64_t n = 0;
        GANTRY_RETURN_IF_ERROR(r.Int(nc.second, node_field, 0, kMaxTasksPerJob, &n));
        counts[node] = static_cast<int32_t>(n);
      }
    }
  }
  std::unordered_set<std::string_view> task_names;  // for expect.gpus, made once
  if (const YAML::Node& spans = expect["spans"]) {
    if (!spans.IsMap()) {
      return r.Error(spans, "expect.spans",
                     "expected a mapping of job to a mapping of topology level to count");
    }
    const std::vector<std::string>& keys = cluster.topology_keys();
    for (const auto& kv : spans) {
      const std::string field = "expect.spans." + kv.first.Scalar();
      GANTRY_RETURN_IF_ERROR(check_job(kv.first, field));
      if (!kv.second.IsMap()) {
        return r.Error(kv.second, field, "expected a mapping of topology level to count");
      }
      for (const auto& lc : kv.second) {
        const std::string level = lc.first.Scalar();
        if (std::find(keys.begin(), keys.end(), level) == keys.end()) {
          return r.Error(lc.first, field + "." + level,
                         "unknown topology level " + QuoteForMessage(level));
        }
        int64_t n = 0;
        GANTRY_RETURN_IF_ERROR(r.Int(lc.second, field + "." + level, 0, kMaxTasksPerJob, &n));
        out->spans[kv.first.Scalar()][level] = static_cast<int32_t>(n);
      }
    }
  }
  // expect.gpus, migGpus and numaZones: task -> a list of indexes (from `min`).
  auto task_indexes = [&](const char* key, std::map<std::string, std::vector<int32_t>>* into,
                          int64_t min = 0) {
    const YAML::Node& map = expect[key];
    const std::string at = std::string("expect.") + key;
    if (!map.IsMap()) return r.Error(map, at, "expected a mapping of task to indexes");
    for (const auto& kv : map) {
      const std::string task = kv.first.Scalar();
      std::string field = at + "." + task;
      if (task_names.empty()) {
        for (const Task& t : cluster.tasks()) task_names.insert(t.name);
      }
      if (!task_names.count(task))
        return r.Error(kv.first, field, "unknown task " + QuoteForMessage(task));
      GANTRY_RETURN_IF_ERROR(r.List(kv.second, field));
      auto& list = (*into)[task];
      for (size_t k = 0; k < kv.second.size(); ++k) {
        int64_t index = 0;
        GANTRY_RETURN_IF_ERROR(
            r.Int(kv.second[k], field + "[" + std::to_string(k) + "]", min, 1023, &index));
        list.push_back(static_cast<int32_t>(index));
      }
    }
    return Status::Ok();
  };
  if (expect["gpus"]) GANTRY_RETURN_IF_ERROR(task_indexes("gpus", &out->gpus));
  // expect.devices: task -> the DRA devices its claims were given ("pool/device").
  if (const YAML::Node& map = expect["devices"]) {
    if (!map.IsMap())
      return r.Error(map, "expect.devices", "expected a mapping of task to devices");
    for (const auto& kv : map) {
      const std::string task = kv.first.Scalar();
      const std::string field = "expect.devices." + task;
      if (task_names.empty()) {
        for (const Task& t : cluster.tasks()) task_names.insert(t.name);
      }
      if (!task_names.count(task)) {
        return r.Error(kv.first, field, "unknown task " + QuoteForMessage(task));
      }
      GANTRY_RETURN_IF_ERROR(r.List(kv.second, field));
      auto& list = out->devices[task];
      for (size_t k = 0; k < kv.second.size(); ++k) {
        std::string device;
        GANTRY_RETURN_IF_ERROR(
            r.String(kv.second[k], field + "[" + std::to_string(k) + "]", &device));
        list.push_back(std::move(device));
      }
    }
  }
  if (expect["migGpus"]) GANTRY_RETURN_IF_ERROR(task_indexes("migGpus", &out->mig_gpus));
  if (expect["numaZones"]) {
    GANTRY_RETURN_IF_ERROR(task_indexes("numaZones", &out->numa_zones, /*min=*/-1));
  }
  if (const YAML::Node& by_queue = expect["placedInQueue"]) {
    if (!by_queue.IsMap())
      return r.Error(by_queue, "expect.placedInQueue", "expected a mapping of queue to count");
    for (const auto& kv : by_queue) {
      std::string field = "expect.placedInQueue." + kv.first.Scalar();
      if (cluster.FindQueue(kv.first.Scalar()) == kNone) {
        return r.Error(kv.first, field, "unknown queue " + QuoteForMessage(kv.first.Scalar()));
      }
      int64_t n = 0;
      GANTRY_RETURN_IF_ERROR(r.Int(kv.second, field, 0, 1'000'000, &n));
      out->placed_in_queue[kv.first.Scalar()] = static_cast<int32_t>(n);
    }
  }
  if (const YAML::Node& deserved = expect["deserved"]) {
    if (!deserved.IsMap())
      return r.Error(deserved, "expect.deserved", "expected a mapping of queue to resources");
    for (const auto& kv : deserved) {
      std::string field = "expect.deserved." + kv.first.Scalar();
      if (cluster.FindQueue(kv.first.Scalar()) == kNone) {
        return r.Error(kv.first, field, "unknown queue " + QuoteForMessage(kv.first.Scalar()));
      }
      // An amount of 0 is a check too: keep the names it lists, zeros included.
      ResourceVector& want = out->deserved[kv.first.Scalar()];
      GANTRY_RETURN_IF_ERROR(r.Resources(kv.second, field, NameSource::kTrusted, &want));
      if (kv.second.IsMap()) {
        for (const auto& amount : kv.second) {
          auto id = InternResourceName(amount.first.Scalar(), NameSource::kTrusted);
          if (id.ok()) out->deserved_named[kv.first.Scalar()].push_back(*id);
        }
      }
    }
  }
  if (const YAML::Node& by_node = expect["placedOnNode"]) {
    if (!by_node.IsMap())
      return r.Error(by_node, "expect.placedOnNode", "expected a mapping of node to count");
    for (const auto& kv : by_node) {
      std::string field = "expect.placedOnNode." + kv.first.Scalar();
      if (cluster.FindNode(kv.first.Scalar()) == kNone) {
        return r.Error(kv.first, field, "unknown node " + QuoteForMessage(kv.first.Scalar()));
      }
      int64_t n = 0;
      GANTRY_RETURN_IF_ERROR(r.Int(kv.second, field, 0, kMaxTasks, &n));
      out->placed_on_node[kv.first.Scalar()] = static_cast<int32_t>(n);
    }
  }
  if (const YAML::Node& evicted = expect["evicted"]) {
    if (!evicted.IsMap())
      return r.Error(evicted, "expect.evicted", "expected a mapping of job to count");
    auto& counts = out->evicted.emplace();
    for (const auto& kv : evicted) {
      std::string field = "expect.evicted." + kv.first.Scalar();
      GANTRY_RETURN_IF_ERROR(check_job(kv.first, field));
      int64_t n = 0;
      GANTRY_RETURN_IF_ERROR(r.Int(kv.second, field, 0, kMaxTasksPerJob, &n));
      counts[kv.first.Scalar()] = static_cast<int32_t>(n);
    }
  }
  if (const YAML::Node& reasons = expect["evictionReason"]) {
    if (!reasons.IsMap())
      return r.Error(reasons, "expect.evictionReason", "expected a mapping of job to text");
    for (const auto& kv : reasons) {
      std::string field = "expect.evictionReason." + kv.first.Scalar();
      GANTRY_RETURN_IF_ERROR(check_job(kv.first, field));
      GANTRY_RETURN_IF_ERROR(r.String(kv.second, field, &out->eviction_reason[kv.first.Scalar()]));
    }
  }
  return Status::Ok();
}

std::vector<std::string> CheckExpectations(const Scenario& scenario, const Decisions& decisions,
                                           const std::vector<PendingExplanation>* explanations) {
  const ClusterState& c = scenario.cluster;
  // A task pipelined onto room being released counts as placed, on the node it waits for.
  struct Placed {
    JobId job;
    TaskId task;
    NodeId node;
    const std::vector<int32_t>* gpus;
  };
  std::vector<Placed> all_placed;
  for (const BindDecision& b : decisions.binds)
    all_placed.push_back({b.job, b.task, b.node, &b.gpus});
  for (const PipelineDecision& p : decisions.pipelined) {
    all_placed.push_back({p.job, p.task, p.node, &p.gpus});
  }
  std::map<std::string, int32_t> placed;
  std::map<std::string, std::vector<std::string>> nodes_of;
  for (const Placed& b : all_placed) {
    placed[c.job(b.job).name]++;
    nodes_of[c.job(b.job).name].push_back(c.node(b.node).name);
  }
  std::map<std::string, std::string> reasons;
  for (const PendingJob& p : decisions.pending) reasons[c.job(p.job).name] = p.reason;
  std::map<std::string, std::vector<int32_t>> gpus_of;
  std::map<std::string, int32_t> placed_in_queue;
  for (const Placed& b : all_placed) {
    gpus_of[c.task(b.task).name] = *b.gpus;
    placed_in_queue[c.queue(c.job(b.job).queue).name]++;
  }
  auto list = [](const std::vector<int32_t>& v) {
    std::string out;
    for (int32_t x : v) out += (out.empty() ? "" : ",") + std::to_string(x);
    return "[" + out + "]";
  };

  std::vector<std::string> unmet;
  for (const auto& [job, want] : scenario.expect.placed) {
    int32_t got = placed.count(job) ? placed[job] : 0;
    if (got != want) {
      std::string line = "job " + job + ": expected " + std::to_string(want) + " placed, got " +
                         std::to_string(got);
      if (reasons.count(job)) line += " (pending: " + reasons[job] + ")";
      unmet.push_back(line);
    }
  }
  for (const auto& [job, text] : scenario.expect.pending) {
    if (!reasons.count(job)) {
      unmet.push_back("job " + job + ": expected pending with \"" + text +
                      "\", but it is not pending");
    } else if (reasons[job].find(text) == std::string::npos) {
      unmet.push_back("job " + job + ": expected a pending reason containing \"" + text +
                      "\", got \"" + reasons[job] + "\"");
    }
  }
  for (const auto& [job, texts] : scenario.expect.explain) {
    auto it = std::find_if(decisions.pending.begin(), decisions.pending.end(),
                           [&](const PendingJob& p) { return c.job(p.job).name == job; });
    if (it == decisions.pending.end()) {
      unmet.push_back("job " + job + ": expected an explanation, but it is not pending");
      continue;
    }
    const PendingExplanation* explanation = nullptr;
    for (size_t i = 0; explanations != nullptr && i < explanations->size(); ++i) {
      if ((*explanations)[i].job == it->job) explanation = &(*explanations)[i];
    }
    const std::string words =
        ExplanationText(nlohmann::json::parse(ExplanationJson(c, *it, explanation).dump()), job);
    for (const std::string& text : texts) {
      if (words.find(text) == std::string::npos) {
        unmet.push_back("job " + job + ": expected an explanation containing \"" + text +
                        "\", got:\n" + words);
      }
    }
  }
  for (const auto& [job, allowed] : scenario.expect.on_nodes) {
    for (const std::string& node : nodes_of[job]) {
      if (std::find(allowed.begin(), allowed.end(), node) == allowed.end()) {
        unmet.push_back("job " + job + ": placed on " + node +
                        ", expected only on the listed nodes");
      }
    }
  }
  for (const auto& [job, want] : scenario.expect.node_counts) {
    std::map<std::string, int32_t> got;
    for (const std::string& node : nodes_of[job]) got[node]++;
    auto describe = [](const std::map<std::string, int32_t>& counts) {
      std::string out;
      for (const auto& [node, n] : counts) {
        if (n == 0) continue;
        out += (out.empty() ? "" : ", ") + node + ": " + std::to_string(n);
      }
      return "{" + out + "}";
    };
    if (describe(got) != describe(want)) {
      unmet.push_back("job " + job + ": expected per node " + describe(want) + ", got " +
                      describe(got));
    }
  }
  std::map<std::string, std::vector<std::string>> devices_of;
  for (const BindDecision& b : decisions.binds) {
    std::vector<std::string>& names = devices_of[c.task(b.task).name];
    for (const std::optional<dra::Allocation>& claim : b.devices) {
      if (!claim) continue;
      for (const dra::AllocationResult& result : claim->results) {
        names.push_back(result.pool + "/" + result.device);
      }
    }
    // Then the devices of its extended resources served by DRA (their claim is the last).
    if (b.extended_devices) {
      for (const dra::AllocationResult& result : b.extended_devices->results) {
        names.push_back(result.pool + "/" + result.device);
      }
    }
  }
  auto device_list = [](const std::vector<std::string>& v) {
    std::string out;
    for (const std::string& name : v) out += (out.empty() ? "" : ",") + name;
    return "[" + out + "]";
  };
  for (const auto& [task, want] : scenario.expect.devices) {
    if (!devices_of.count(task)) {
      unmet.push_back("task " + task + ": expected DRA devices " + device_list(want) +
                      ", but it was not bound");
    } else if (devices_of[task] != want) {
      unmet.push_back("task " + task + ": expected DRA devices " + device_list(want) + ", got " +
                      device_list(devices_of[task]));
    }
  }
  for (const auto& [task, want] : scenario.expect.gpus) {
    if (!gpus_of.count(task)) {
      unmet.push_back("task " + task + ": expected on GPUs " + list(want) +
                      ", but it was not placed");
    } else if (gpus_of[task] != want) {
      unmet.push_back("task " + task + ": expected on GPUs " + list(want) + ", got " +
                      list(gpus_of[task]));
    }
  }
  if (!scenario.expect.mig_gpus.empty() || !scenario.expect.numa_zones.empty()) {
    // MIG devices and NUMA zones are chosen when a placement is applied: apply the binds
    // to a copy.
    ClusterState after = c;
    for (const BindDecision& b : decisions.binds) {
      Status placed = after.Place(b.task, b.node, b.gpus);
      if (!placed.ok()) unmet.push_back("a bind does not apply: " + placed.message());
    }
    auto running = [&](const std::string& task) -> const Task* {
      for (const Task& candidate : after.tasks()) {
        if (candidate.name == task && candidate.state == TaskState::kRunning) return &candidate;
      }
      return nullptr;
    };
    for (const auto& [task, want] : scenario.expect.mig_gpus) {
      std::vector<int32_t> got;
      if (const Task* t = running(task)) {
        for (int32_t d : t->mig_devices) {
          got.push_back(after.node(t->node).mig.devices[static_cast<size_t>(d)].gpu);
        }
      }
      if (got != want) {
        unmet.push_back("task " + task + ": expected MIG devices on GPUs " + list(want) + ", got " +
                        list(got));
      }
    }
    for (const auto& [task, want] : scenario.expect.numa_zones) {
      std::vector<int32_t> got;
      if (const Task* t = running(task)) {
        for (int32_t z : t->numa_zones) {
          got.push_back(z < 0 ? -1 : after.node(t->node).numa.zones[static_cast<size_t>(z)].id);
        }
      }
      if (got != want) {
        unmet.push_back("task " + task + ": expected on NUMA nodes " + list(want) + ", got " +
                        list(got));
      }
    }
  }
  for (const auto& [queue, want] : scenario.expect.placed_in_queue) {
    int32_t got = placed_in_queue.count(queue) ? placed_in_queue[queue] : 0;
    if (got != want) {
      unmet.push_back("queue " + queue + ": expected " + std::to_string(want) + " placed, got " +
                      std::to_string(got));
    }
  }
  for (const auto& [queue, want] : scenario.expect.deserved) {
    const QueueId q = c.FindQueue(queue);
    const auto named = scenario.expect.deserved_named.find(queue);
    if (named == scenario.expect.deserved_named.end()) continue;
    for (ResourceId r : named->second) {
      const Milli got = q < decisions.deserved.size() ? decisions.deserved[q].Get(r) : 0;
      if (got != want.Get(r)) {
        unmet.push_back("queue " + queue + ": expected deserved " + ResourceName(r) + " " +
                        FormatQuantity(want.Get(r), r == kMemory) + ", got " +
                        FormatQuantity(got, r == kMemory));
      }
    }
  }
  std::map<std::string, int32_t> placed_on_node;
  for (const Placed& b : all_placed) placed_on_node[c.node(b.node).name]++;
  for (const auto& [node, want] : scenario.expect.placed_on_node) {
    const int32_t got = placed_on_node.count(node) ? placed_on_node[node] : 0;
    if (got != want) {
      unmet.push_back("node " + node + ": expected " + std::to_string(want) + " placed, got " +
                      std::to_string(got));
    }
  }
  for (const auto& [job, levels] : scenario.expect.spans) {
    const std::vector<std::string>& keys = c.topology_keys();
    for (const auto& [level, want] : levels) {
      const int index = static_cast<int>(std::find(keys.begin(), keys.end(), level) - keys.begin());
      std::set<std::string> domains;
      for (const Placed& b : all_placed) {
        if (c.job(b.job).name == job) domains.insert(TopologyDomainName(c.node(b.node), index));
      }
      if (static_cast<int32_t>(domains.size()) != want) {
        std::string names;
        for (const std::string& d : domains) names += (names.empty() ? "" : ", ") + d;
        unmet.push_back("job " + job + ": expected its tasks in " + std::to_string(want) + " " +
                        level + " domain(s), got " + std::to_string(domains.size()) + " {" + names +
                        "}");
      }
    }
  }
  if (scenario.expect.evicted) {
    std::map<std::string, int32_t> evicted;
    for (const EvictDecision& e : decisions.evictions) evicted[c.job(e.job).name]++;
    const auto& want = *scenario.expect.evicted;
    for (const auto& [job, count] : want) {
      const int32_t got = evicted.count(job) ? evicted[job] : 0;
      if (got != count) {
        unmet.push_back("job " + job + ": expected " + std::to_string(count) + " evicted, got " +
                        std::to_string(got));
      }
    }
    for (const auto& [job, got] : evicted) {
      if (!want.count(job)) {
        unmet.push_back("job " + job + ": expected 0 evicted (not named in expect.evicted), got " +
                        std::to_string(got));
      }
    }
  }
  for (const auto& [job, text] : scenario.expect.eviction_reason) {
    int32_t seen = 0;
    for (const EvictDecision& e : decisions.evictions) {
      if (c.job(e.job).name != job) continue;
      ++seen;
      if (e.reason.find(text) == std::string::npos) {
        unmet.push_back("job " + job + ": expected every eviction's reason to contain \"" + text +
                        "\", got \"" + e.reason + "\"");
      }
    }
    if (seen == 0) {
      unmet.push_back("job " + job + ": expected evictions whose reason contains \"" + text +
                      "\", got none");
    }
  }
  return unmet;
}

}  // namespace gantry

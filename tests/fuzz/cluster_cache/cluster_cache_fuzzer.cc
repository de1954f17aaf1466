// The daemon's cluster cache (daemon/cluster_cache.h) fed a stream of watch events, with
// scheduling cycles in between, as `gantry serve` runs it. The input is lines:
//
//   <kind><event> <json>   kind: N node, P pod, V Volcano PodGroup, C scheduler-plugins
//                          PodGroup, I native (scheduling.k8s.io) PodGroup, Q Queue, R PriorityClass, L PersistentVolumeClaim,
//                          W PersistentVolume, K StorageClass, E Service, O
//                          ReplicationController, X ReplicaSet, T StatefulSet, H Volcano
//                          HyperNode, U Kueue Topology, Z NodeResourceTopology, G Fluid
//                          Dataset; event: A
//                          added, M modified, D deleted
//   S                      a cycle: a session (node table cache kept across cycles as the
//                          daemon does), Assume, CollectStatus, TakeProblems
//   B<i> / F<i>            bind i of the last cycle happened (the pod comes back bound) /
//                          failed (BindFailed)
//
// Checks: the state's bookkeeping stays consistent after every event (used resources,
// device shares and task counts agree with the tasks; tests/fuzz/cluster_checks.h); every
// bound pod that decodes, is not finished and is on a node the cache has is a running task
// on that node; a cycle binds nothing that does not fit (ClusterState::Place on a copy),
// and nothing onto a node holding a bound pod the cache could not count.
#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "daemon/cluster_cache.h"
#include "engine/session.h"
#include "k8s/objects.h"
#include "tests/fuzz/cluster_checks.h"
#include "tests/fuzz/fuzz_check.h"

namespace gantry {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxWork = 50'000;  // nodes x tasks above which a cycle is skipped

const Task* RunningTask(const ClusterState& state, const std::string& name) {
  for (const Task& t : state.tasks()) {
    if (t.job != kNone && t.name == name && t.state == TaskState::kRunning) return &t;
  }
  return nullptr;
}

std::string NodeNameOf(const json& pod) {
  if (!pod.is_object() || !pod.contains("spec") || !pod["spec"].is_object()) return "";
  const json& spec = pod["spec"];
  auto it = spec.find("nodeName");
  return it != spec.end() && it->is_string() ? it->get<std::string>() : "";
}

class Harness {
 public:
  // As gantry serve sets it up for the default plugins (podtopologyspread with the system
  // default constraints).
  Harness() { cache_.EnableDefaultSpreading(true); }

  void Event(char kind, k8s::EventType type, const json& object) {
    switch (kind) {
      case 'N':
        cache_.OnNode(type, object);
        break;
      case 'P':
        Pod(type, object);
        break;
      case 'V':
        cache_.OnPodGroup(k8s::GroupApi::kVolcano, type, object);
        break;
      case 'C':
        cache_.OnPodGroup(k8s::GroupApi::kCoscheduling, type, object);
        break;
      case 'I':
        cache_.OnPodGroup(k8s::GroupApi::kNative, type, object);
        break;
      case 'Q':
        cache_.OnQueue(type, object);
        break;
      case 'R':
        cache_.OnPriorityClass(type, object);
        break;
      case 'L':
        cache_.OnClaim(type, object);
        break;
      case 'W':
        cache_.OnPersistentVolume(type, object);
        break;
      case 'K':
        cache_.OnStorageClass(type, object);
        break;
      case 'E':
        cache_.OnService(type, object);
        break;
      case 'O':
        cache_.OnSpreadOwner(k8s::SpreadOwnerKind::kReplicationController, type, object);
        break;
      case 'X':
        cache_.OnSpreadOwner(k8s::SpreadOwnerKind::kReplicaSet, type, object);
        break;
      case 'T':
        cache_.OnSpreadOwner(k8s::SpreadOwnerKind::kStatefulSet, type, object);
        break;
      case 'H':
        cache_.OnHyperNode(type, object);
        break;
      case 'U':
        cache_.OnKueueTopology(type, object);
        break;
      case 'Z':
        cache_.OnNodeResourceTopology(type, object);
        break;
      case 'G':
        cache_.OnFluidDataset(type, object);
        break;
      default:
        return;
    }
    Check();
  }

  void Cycle() {
    const ClusterState& state = cache_.state();
    if ((state.nodes().size() + 1) * (state.tasks().size() + 1) > kMaxWork) return;
    Snapshot snapshot(state, &node_table_);
    SessionOptions options;
    options.seed = seed_++;
    Decisions decisions =
        Session(snapshot, Policy::Compile(SchedulerConfig::Default()).value(), options).Run();
    CheckBinds(decisions);
    last_binds_ = cache_.Assume(decisions);
    std::vector<PodCondition> conditions;
    std::vector<GroupStatus> groups;
    std::vector<ObjectEvent> events;
    cache_.CollectStatus(decisions, &conditions, &groups, &events);
    (void)cache_.TakeProblems();
    Check();
  }

  // The API server's answer to bind `index` of the last cycle.
  void BindResult(size_t index, bool happened) {
    if (index >= last_binds_.size()) return;
    const BindRequest& b = last_binds_[index];
    if (!happened) {
      cache_.BindFailed(b.namespace_, b.name, b.uid);
      cache_.ReleaseHeld(1e300);  // at once: the fuzzer is about states, not time
      Check();
      return;
    }
    auto it = pods_.find(b.namespace_.empty() ? b.name : b.namespace_ + "/" + b.name);
    if (it == pods_.end() || !it->second.is_object()) return;
    json bound = it->second;
    if (!bound["spec"].is_object()) bound["spec"] = json::object();
    bound["spec"]["nodeName"] = b.node;
    if (b.write_devices) {
      if (!bound["metadata"]["annotations"].is_object()) {
        bound["metadata"]["annotations"] = json::object();
      }
      bound["metadata"]["annotations"][k8s::kGpuDevicesAnnotation] = k8s::FormatDeviceList(b.gpus);
    }
    Pod(k8s::EventType::kModified, bound);
    Check();
  }

 private:
  void Pod(k8s::EventType type, const json& object) {
    cache_.OnPod(type, object);
    auto meta = k8s::ParseMeta(object);
    if (!meta.ok()) return;
    if (type == k8s::EventType::kDeleted) {
      pods_.erase(meta->Key());
    } else {
      pods_[meta->Key()] = object;
    }
  }

  // Nodes holding a bound pod that is not counted there (the cache must then keep them
  // free of new binds), after checking that every bound pod that decodes is counted.
  std::set<std::string> NodesWithUncountedPods() const {
    const ClusterState& state = cache_.state();
    std::set<std::string> nodes;
    for (const auto& [key, object] : pods_) {
      const std::string node_name = NodeNameOf(object);
      if (node_name.empty()) continue;
      const NodeId node = state.FindNode(node_name);
      if (node == kNone || state.node(node).removed) continue;
      auto pod = k8s::ParsePod(object);
      // A finished pod holds nothing, however malformed the rest of it (its phase is read
      // whatever else is wrong).
      std::string problem;
      auto decoded = k8s::DecodePod(object, &problem);
      if (decoded.ok() && decoded->finished()) continue;
      const Task* task = RunningTask(state, key);
      const bool counted = task != nullptr && task->node == node;
      if (pod.ok()) {
        FUZZ_CHECK(counted, "pod " + key + " is bound to " + node_name + " but not counted there");
      } else if (!counted) {
        nodes.insert(node_name);
      }
    }
    return nodes;
  }

  void Check() const {
    fuzz::CheckCluster(cache_.state(), {.placed_with_room_check = false});
    (void)NodesWithUncountedPods();
  }

  void CheckBinds(const Decisions& decisions) const {
    ClusterState after = cache_.state();
    const std::set<std::string> uncounted = NodesWithUncountedPods();
    for (const BindDecision& b : decisions.binds) {
      FUZZ_CHECK(b.task < after.tasks().size() && b.node < after.nodes().size(),
                 "a bind of task " + std::to_string(b.task) + " to node " + std::to_string(b.node));
      const std::string& node_name = after.node(b.node).name;
      FUZZ_CHECK(!after.node(b.node).removed, "a bind to removed node " + node_name);
      FUZZ_CHECK(!uncounted.count(node_name),
                 "a bind to " + node_name + ", which holds a bound pod the cache did not count");
      Status placed = after.Place(b.task, b.node, b.gpus);
      FUZZ_CHECK(placed.ok(), "a bind that does not fit: " + placed.message());
    }
  }

  ClusterCache cache_{"gantry"};
  NodeTableCache node_table_;
  uint64_t seed_ = 1;
  std::map<std::string, json> pods_;  // the last object of each pod, by key
  std::vector<BindRequest> last_binds_;
};

}  // namespace
}  // namespace gantry

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gantry;
  const std::string_view text = fuzz::AsText(data, size);
  Harness harness;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    if (line[0] == 'S') {
      harness.Cycle();
      continue;
    }
    if (line[0] == 'B' || line[0] == 'F') {
      size_t index = 0;
      for (char c : line.substr(1)) {
        if (c < '0' || c > '9' || index > 1000) break;
        index = index * 10 + static_cast<size_t>(c - '0');
      }
      harness.BindResult(index, line[0] == 'B');
      continue;
    }
    if (line.size() < 3) continue;
    k8s::EventType type;
    switch (line[1]) {
      case 'A':
        type = k8s::EventType::kAdded;
        break;
      case 'M':
        type = k8s::EventType::kModified;
        break;
      case 'D':
        type = k8s::EventType::kDeleted;
        break;
      default:
        continue;
    }
    const json object = json::parse(line.substr(2), nullptr, false);
    if (object.is_discarded()) continue;
    harness.Event(line[0], type, object);
  }
  return 0;
}

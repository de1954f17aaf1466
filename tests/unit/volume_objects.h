// Kubernetes objects for the daemon's volume tests (cluster_cache_volumes_test.cc,
// cluster_cache_csi_test.cc, volume_binder_test.cc), as the API server returns them, in a few
// words; and what the cache then tells about pods.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "daemon/cluster_cache.h"
#include "engine/session.h"
#include "tests/unit/test_util.h"

namespace gantry::volume_objects {

using json = nlohmann::json;

inline json NodeObject(const std::string& name, json labels = json::object()) {
  labels["kubernetes.io/hostname"] = name;
  return {{"metadata", {{"name", name}, {"uid", "uid-" + name}, {"labels", labels}}},
          {"status", {{"allocatable", {{"cpu", "8"}, {"memory", "32Gi"}, {"pods", "110"}}}}}};
}

// A pod of ours in namespace ml; `volumes` is its spec.volumes.
inline json PodObject(const std::string& name, json volumes,
                      const std::string& scheduler = "gantry") {
  return {{"metadata",
           {{"name", name},
            {"namespace", "ml"},
            {"uid", "uid-" + name},
            {"creationTimestamp", "2025-01-01T00:00:00Z"}}},
          {"spec",
           {{"schedulerName", scheduler},
            {"containers", {{{"name", "c"}, {"resources", {{"requests", {{"cpu", "1"}}}}}}}},
            {"volumes", volumes}}},
          {"status", {{"phase", "Pending"}}}};
}

inline json ClaimVolume(const std::string& claim, const std::string& volume = "data") {
  return json::array({{{"name", volume}, {"persistentVolumeClaim", {{"claimName", claim}}}}});
}

inline json Bound(json pod, const std::string& node) {
  pod["spec"]["nodeName"] = node;
  return pod;
}

// A claim in ml, bound to `volume` as the PV controller leaves it, or unbound ("").
inline json Claim(const std::string& name, const std::string& volume,
                  const std::string& storage_class,
                  const std::string& access_mode = "ReadWriteOnce") {
  json c = {{"metadata", {{"name", name}, {"namespace", "ml"}, {"uid", "uid-claim-" + name}}},
            {"spec",
             {{"accessModes", {access_mode}},
              {"storageClassName", storage_class},
              {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}};
  if (!volume.empty()) {
    c["spec"]["volumeName"] = volume;
    c["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] = "yes";
    c["status"]["phase"] = "Bound";
  }
  return c;
}

// The documentation's local volume (storage/volumes, "local"), on `node`.
inline json LocalVolume(const std::string& name, const std::string& node) {
  json pv = json::parse(R"({"metadata": {}, "spec": {"capacity": {"storage": "100Gi"},
      "accessModes": ["ReadWriteOnce"], "storageClassName": "local-storage",
      "local": {"path": "/mnt/disks/ssd1"},
      "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": []}]}]}}}})");
  pv["metadata"] = {{"name", name}, {"uid", "uid-pv-" + name}};
  pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] =
      {node};
  return pv;
}

// A volume in one zone, labelled as topology-aware provisioners label them.
inline json ZonedVolume(const std::string& name, const std::string& zone) {
  return {
      {"metadata",
       {{"name", name},
        {"uid", "uid-pv-" + name},
        {"labels",
         {{"topology.kubernetes.io/zone", zone}, {"topology.kubernetes.io/region", "us-east-1"}}}}},
      {"spec", {{"nfs", {{"server", "nfs.example"}, {"path", "/x"}}}}}};
}

inline json StorageClass(const std::string& name, const std::string& mode) {
  return {{"metadata", {{"name", name}}},
          {"provisioner", "example.com/p"},
          {"volumeBindingMode", mode}};
}

inline const Task* TaskNamed(const ClusterState& s, const std::string& name) {
  for (const Task& t : s.tasks()) {
    if (t.name == name && t.job != kNone) return &t;
  }
  return nullptr;
}

// The PodScheduled=False messages written so far, the latest for each pod.
class Messages {
 public:
  explicit Messages(ClusterCache& cache) : cache_(cache) {}
  std::string Of(const std::string& pod) {
    std::vector<PodCondition> conditions;
    std::vector<GroupStatus> groups;
    std::vector<ObjectEvent> events;
    cache_.CollectStatus(Decisions{}, &conditions, &groups, &events);
    for (const PodCondition& c : conditions) latest_[c.name] = c.message;
    return latest_[pod];
  }

 private:
  ClusterCache& cache_;
  std::map<std::string, std::string> latest_;
};

// The nodes the session binds the pods to, "pod@node ...".
inline std::string Placements(ClusterCache& c) {
  const Decisions d = RunSession(c.state());
  std::string out;
  for (const BindDecision& b : d.binds) {
    out +=
        (out.empty() ? "" : " ") + c.state().task(b.task).name + "@" + c.state().node(b.node).name;
  }
  return out;
}

}  // namespace gantry::volume_objects

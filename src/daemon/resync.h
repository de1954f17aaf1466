// What a change in one of the cache's components (volume binding, default spreading, ...)
// means for the pods and nodes the cache holds. A component never calls back into the
// cache: it answers with a Resync, and the cache applies it (ClusterCache::Apply).
#pragma once

#include <string>
#include <vector>

#include "daemon/api_requests.h"

namespace gantry {

struct Resync {
  // Pods whose spec the change may alter, by key ("namespace/name"), in the order to sync
  // them. The cache syncs those that it places or counts: not the assumed ones (they count
  // as placed), nor pending pods of other schedulers.
  std::vector<std::string> pods;
  // Nodes whose CSI drivers, volume limits or attached volumes changed.
  std::vector<std::string> nodes;
  // Every pod to place that has volumes: a CSIDriver changed (rare).
  bool pods_with_volumes = false;
  // Warning events about objects that could not be read, in the order they were found.
  std::vector<ObjectEvent> problems;

  void Add(Resync other) {
    pods.insert(pods.end(), other.pods.begin(), other.pods.end());
    nodes.insert(nodes.end(), other.nodes.begin(), other.nodes.end());
    pods_with_volumes = pods_with_volumes || other.pods_with_volumes;
    for (ObjectEvent& e : other.problems) problems.push_back(std::move(e));
  }
};

}  // namespace gantry

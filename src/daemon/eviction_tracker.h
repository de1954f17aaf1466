// Preemption's memory in the daemon, beside the cache: the evictions gantry asked for, from
// a session's decision to the API server's answer (an eviction in flight is not asked for
// again; refusals in a row are counted, so that the first of a run is reported), and the
// nominated nodes it wrote for the pods that wait for room being freed. Keyed by pod key
// ("namespace/name"); nothing is kept of a pod once it is forgotten. What the engine
// remembers of an eviction is engine/eviction_memory.h.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>

namespace gantry {

class EvictionTracker {
 public:
  // Whether an eviction of the pod may be sent: none is in flight. Marks one in flight.
  bool Start(const std::string& key);
  // The answer to the pod's eviction. Returns true for the first refusal in a row (worth
  // reporting), false otherwise.
  bool Done(const std::string& key, bool evicted);
  // Whether `node` is not the nominated node last written for the pod; remembers it.
  bool Nominate(const std::string& key, const std::string& node);
  void ForgetPod(const std::string& key);

  size_t pods() const { return pods_.size(); }  // pods with something remembered

 private:
  struct PodEvictions {
    bool in_flight = false;
    int32_t refusals = 0;   // in a row
    std::string nominated;  // the nominatedNodeName we last wrote
  };
  void EraseIfEmpty(std::unordered_map<std::string, PodEvictions>::iterator it);

  std::unordered_map<std::string, PodEvictions> pods_;
};

}  // namespace gantry

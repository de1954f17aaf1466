// A Kubernetes ResourceList (`{"cpu": "500m", "nvidia.com/gpu": 2}`: strings or numbers)
// read into a ResourceVector: strictly (ParseResourceList), or leniently for a pod, whose
// requests count on its node however malformed (ReadResourceList, with what could not be
// read in UnreadableRequests). nvidia.com/gpu is counted in milli-GPUs.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "model/resources.h"
#include "model/status.h"

namespace gantry::k8s {

// What could not be read of a pod's requests: amounts that are malformed, negative, too
// large or whose sum overflows, and resource names that were refused. A pod bound to a
// node counts as holding all of that node's amount of each (ClusterCache).
struct UnreadableRequests {
  bool all = false;                       // a requests, limits or overhead that is not a map
  bool gpus = false;                      // how many GPUs, or what share of one
  std::vector<ResourceId> ids;            // known resources, sorted
  std::vector<std::string> names;         // names that were refused (at most kMaxNames)
  static constexpr size_t kMaxNames = 8;  // beyond: `all`

  bool empty() const { return !all && !gpus && ids.empty() && names.empty(); }
  void AddId(ResourceId id);
  void AddName(const std::string& name);
  void Merge(const UnreadableRequests& other);
  // "cpu, nvidia.com/gpu" or "every resource", for messages.
  std::string ToString() const;
};

// One quantity as the API writes it: a string ("80Gi", "500m") or a JSON number of whole
// units, in milli-units (finer amounts round up, as ParseQuantity). Errors start with
// `where`; an amount beyond int64 milli-units is out of range, never a wrap.
Result<Milli> ReadQuantity(const nlohmann::json& value, const std::string& where);

// A ResourceList into a vector. Names are interned as coming from `source` (nodes and
// Queues: kTrusted; pods and PodGroups: kWorkload). `where` prefixes errors.
Status ParseResourceList(const nlohmann::json& list, const std::string& where, NameSource source,
                         ResourceVector* out);
// The same, leniently: what can be read into *out, what cannot into *unreadable, the first
// problem into *problem (when it is still ok).
void ReadResourceList(const nlohmann::json& list, const std::string& where, NameSource source,
                      ResourceVector* out, UnreadableRequests* unreadable, Status* problem);

}  // namespace gantry::k8s

#include "sim/scenario_defragment.h"

#include <algorithm>
#include <vector>

#include "model/limits.h"

namespace gantry {

Status ParseRecentDefragmentEvictions(const YamlReader& r, const YAML::Node& list,
                                      ClusterState* cluster) {
  const std::string field = "recentDefragmentEvictions";
  GANTRY_RETURN_IF_ERROR(r.List(list, field));
  if (static_cast<int64_t>(list.size()) > kMaxDefragmentEvictionsPerHour) {
    return r.Error(list, field,
                   std::to_string(list.size()) + " evictions, more than " +
                       std::to_string(kMaxDefragmentEvictionsPerHour) +
                       " (the limit on the defragment budget)");
  }
  std::vector<int64_t> times;
  for (size_t i = 0; i < list.size(); ++i) {
    int64_t ago = 0;
    GANTRY_RETURN_IF_ERROR(r.Int(list[i], field + "[" + std::to_string(i) + "] (seconds ago)", 0,
                                 kMaxConfiguredSeconds, &ago));
    times.push_back(-ago);
  }
  std::sort(times.begin(), times.end());  // the order they happened in
  for (int64_t t : times) cluster->NoteDefragmentEviction(t);
  return Status::Ok();
}

}  // namespace gantry

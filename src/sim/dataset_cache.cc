#include "sim/dataset_cache.h"

#include <algorithm>

#include "model/datasets.h"
#include "model/int128.h"
#include "model/limits.h"

namespace gantry {

DatasetCache::DatasetCache(const ClusterState& cluster, const DatasetCacheOptions& options)
    : options_(options), nodes_(cluster.nodes().size()) {
  for (NodeId id = 0; id < cluster.nodes().size(); ++id) {
    for (const std::string& dataset : cluster.node(id).cached_datasets) {
      nodes_[id].push_back(Entry{dataset, 0, 0, 0, /*pinned=*/true});
    }
  }
}

int64_t DatasetCache::WarmupOf(const ClusterState& cluster, const std::string& dataset) const {
  const DatasetInfo* info = cluster.datasets().Find(dataset);
  if (info != nullptr && info->warmup_s >= 0) return info->warmup_s;
  if (info != nullptr && info->size_bytes > 0 && options_.bandwidth_bytes_per_s > 0) {
    return (info->size_bytes + options_.bandwidth_bytes_per_s - 1) / options_.bandwidth_bytes_per_s;
  }
  return options_.unknown_warmup_s;
}

int64_t DatasetCache::Place(ClusterState* cluster, const TaskSpec& spec, NodeId node, int64_t t) {
  if (spec.datasets.empty()) return 0;
  if (nodes_.size() < cluster->nodes().size()) nodes_.resize(cluster->nodes().size());
  std::vector<Entry>& entries = nodes_[node];
  const Node& n = cluster->node(node);
  ++stats_.tasks;
  int64_t wait = 0;
  bool changed = false;
  for (const std::string& dataset : spec.datasets) {
    ++stats_.reads;
    auto it = std::find_if(entries.begin(), entries.end(),
                           [&](const Entry& e) { return e.dataset == dataset; });
    if (it == entries.end()) {
      const DatasetInfo* info = cluster->datasets().Find(dataset);
      const std::string label = FluidCacheLabel(dataset, info ? std::string_view(info->uid) : "");
      if (NodeCachesDataset(n.labels, {}, dataset, label)) {
        entries.push_back(Entry{dataset, 0, t, 0, /*pinned=*/true});
        ++stats_.hits;
        continue;
      }
      const int64_t fill = WarmupOf(*cluster, dataset);
      entries.push_back(Entry{dataset, t + fill, t, info ? info->size_bytes : 0, false});
      ++stats_.misses;
      wait = std::max(wait, fill);
      changed = true;
      continue;
    }
    it->last_read = t;
    if (it->ready_at <= t) {
      ++stats_.hits;
    } else {
      ++stats_.filling;
      wait = std::max(wait, it->ready_at - t);
    }
  }
  stats_.warmup_s += wait;
  if (changed) {
    MakeRoom(entries, t);
    std::vector<std::string> names;
    names.reserve(entries.size());
    for (const Entry& e : entries) names.push_back(e.dataset);
    // Valid names (the spec's and the node's own), within the count MakeRoom keeps.
    Status st = cluster->SetCachedDatasets(node, std::move(names));
    (void)st;
  }
  return wait;
}

void DatasetCache::MakeRoom(std::vector<Entry>& entries, int64_t t) {
  auto over = [&] {
    if (entries.size() > kMaxCachedDatasetsPerNode) return true;
    if (options_.capacity_bytes <= 0) return false;
    Int128 bytes = 0;
    for (const Entry& e : entries) bytes += e.pinned ? 0 : e.bytes;
    return bytes > options_.capacity_bytes;
  };
  while (over()) {
    auto oldest = entries.end();
    for (auto it = entries.begin(); it != entries.end(); ++it) {
      if (it->pinned || it->last_read >= t) continue;
      if (oldest == entries.end() || it->last_read < oldest->last_read) oldest = it;
    }
    if (oldest == entries.end()) return;  // all in use by the task placed now
    entries.erase(oldest);
    ++stats_.dropped;
  }
}

}  // namespace gantry

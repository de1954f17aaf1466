// ClusterState's part in dataset locality (model/datasets.h): the table of what loaders
// know of datasets, and what a node caches by its loader's word.
#include <algorithm>

#include "model/cluster.h"
#include "model/limits.h"

namespace gantry {

Status ClusterState::SetDatasets(std::vector<DatasetInfo> datasets) {
  if (datasets.size() > kMaxKnownDatasets) {
    return Status::OutOfRange(std::to_string(datasets.size()) + " datasets; the limit is " +
                              std::to_string(kMaxKnownDatasets));
  }
  for (const DatasetInfo& d : datasets) {
    GANTRY_RETURN_IF_ERROR(CheckDatasetName(d.name));
    if (d.size_bytes < 0) {
      return Status::Invalid("dataset \"" + d.name + "\": its size is negative");
    }
  }
  std::sort(datasets.begin(), datasets.end(),
            [](const DatasetInfo& a, const DatasetInfo& b) { return a.name < b.name; });
  auto twice = std::adjacent_find(
      datasets.begin(), datasets.end(),
      [](const DatasetInfo& a, const DatasetInfo& b) { return a.name == b.name; });
  if (twice != datasets.end()) {
    return Status::Invalid("dataset \"" + twice->name + "\" is described twice");
  }
  datasets_ = std::move(datasets);
  return Status::Ok();
}

const DatasetInfo* ClusterState::FindDataset(std::string_view name) const {
  auto it = std::lower_bound(datasets_.begin(), datasets_.end(), name,
                             [](const DatasetInfo& d, std::string_view n) { return d.name < n; });
  return it != datasets_.end() && it->name == name ? &*it : nullptr;
}

Status ClusterState::SetDataset(DatasetInfo dataset) {
  GANTRY_RETURN_IF_ERROR(CheckDatasetName(dataset.name));
  if (dataset.size_bytes < 0) {
    return Status::Invalid("dataset \"" + dataset.name + "\": its size is negative");
  }
  auto it = std::lower_bound(datasets_.begin(), datasets_.end(), dataset.name,
                             [](const DatasetInfo& d, const std::string& n) { return d.name < n; });
  if (it != datasets_.end() && it->name == dataset.name) {
    *it = std::move(dataset);
    return Status::Ok();
  }
  if (datasets_.size() >= kMaxKnownDatasets) {
    return Status::OutOfRange("dataset \"" + dataset.name +
                              "\": " + std::to_string(kMaxKnownDatasets) +
                              " datasets are known already, the limit");
  }
  datasets_.insert(it, std::move(dataset));
  return Status::Ok();
}

void ClusterState::RemoveDataset(std::string_view name) {
  auto it = std::lower_bound(datasets_.begin(), datasets_.end(), name,
                             [](const DatasetInfo& d, std::string_view n) { return d.name < n; });
  if (it != datasets_.end() && it->name == name) datasets_.erase(it);
}

Status ClusterState::SetCachedDatasets(NodeId id, std::vector<std::string> datasets) {
  Node& node = nodes_[id];
  Status st = NormalizeDatasetList(&datasets, kMaxCachedDatasetsPerNode);
  if (!st.ok()) return st.WithPrefix("node \"" + node.name + "\": cached datasets");
  node.cached_datasets = std::move(datasets);
  Touch(id);
  return Status::Ok();
}

}  // namespace gantry

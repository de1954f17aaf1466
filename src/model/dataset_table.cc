// The table of what loaders know of datasets (model/dataset_table.h).
#include "model/dataset_table.h"

#include <algorithm>

#include "model/limits.h"

namespace gantry {

Status DatasetTable::SetAll(std::vector<DatasetInfo> datasets) {
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

const DatasetInfo* DatasetTable::Find(std::string_view name) const {
  auto it = std::lower_bound(datasets_.begin(), datasets_.end(), name,
                             [](const DatasetInfo& d, std::string_view n) { return d.name < n; });
  return it != datasets_.end() && it->name == name ? &*it : nullptr;
}

Status DatasetTable::Set(DatasetInfo dataset) {
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

void DatasetTable::Remove(std::string_view name) {
  auto it = std::lower_bound(datasets_.begin(), datasets_.end(), name,
                             [](const DatasetInfo& d, std::string_view n) { return d.name < n; });
  if (it != datasets_.end() && it->name == name) datasets_.erase(it);
}

}  // namespace gantry

// What loaders know of datasets (size, Fluid uid, warm-up: DatasetInfo, model/datasets.h),
// by name: the table the datalocality scorer and the simulator's cache model look a
// dataset up in. ClusterState owns one (ClusterState::datasets()); it is a class of its
// own because it is a table apart, with its own checks and limit, that neither nodes nor
// tasks refer to: what a node caches is on the node (Node::cached_datasets).
#pragma once

#include <string_view>
#include <vector>

#include "model/datasets.h"
#include "model/status.h"

namespace gantry {

class DatasetTable {
 public:
  // Replaces the table. Names are checked and must be distinct; at most kMaxKnownDatasets.
  // A refused table leaves the old one.
  Status SetAll(std::vector<DatasetInfo> datasets);
  // One dataset, added or replaced (the daemon, a Fluid Dataset at a time), and taken out.
  Status Set(DatasetInfo dataset);
  void Remove(std::string_view name);

  // nullptr when the table does not have it.
  const DatasetInfo* Find(std::string_view name) const;
  // Every dataset of the table, sorted by name.
  const std::vector<DatasetInfo>& all() const { return datasets_; }

 private:
  std::vector<DatasetInfo> datasets_;  // sorted by name
};

}  // namespace gantry

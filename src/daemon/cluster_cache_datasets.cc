// Dataset locality (issue 13, k8s/datasets.h): what nodes cache by Gantry's annotation
// (Fluid's labels are read by the engine) and Fluid Datasets' sizes. The datasets pods read
// are their annotation's and their claims' (VolumeBinder::Resolve).
#include <algorithm>

#include "daemon/cluster_cache.h"
#include "k8s/datasets.h"
#include "k8s/json_fields.h"
#include "model/limits.h"

namespace gantry {
namespace {

using json = nlohmann::json;

}  // namespace

std::vector<std::string> ClusterCache::NodeCachedDatasets(const k8s::ObjectMeta& meta,
                                                          const json& object) {
  std::vector<std::string> datasets;
  Status st = k8s::ReadNodeCachedDatasets(k8s::Field(k8s::Field(object, "metadata"), "annotations"),
                                          "node " + meta.name, &datasets);
  if (st.ok()) {
    bad_node_datasets_.erase(meta.name);
    return datasets;
  }
  const std::string message = Bounded(st.message(), kMaxMessage);
  std::string& said = bad_node_datasets_[meta.name];
  if (said != message) {
    said = message;
    Problem({"v1", "Node", "", meta.name, meta.uid, "Warning", "InvalidCachedDatasets",
             message + "; gantry schedules onto the node as if it cached none by the annotation"});
  }
  return {};
}

void ClusterCache::OnFluidDataset(k8s::EventType type, const json& object) {
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return;
  const std::string name = meta->namespace_ + "/" + meta->name;
  if (type == k8s::EventType::kDeleted) {
    bad_fluid_datasets_.erase(name);
    state_.RemoveDataset(name);
    return;
  }
  auto parsed = k8s::ParseFluidDataset(object);
  Status st = parsed.ok() ? state_.SetDataset(std::move(parsed->dataset)) : parsed.status();
  if (st.ok()) {
    bad_fluid_datasets_.erase(name);
    return;
  }
  // What was known of it before is forgotten: its size is unknown now.
  state_.RemoveDataset(name);
  const std::string message = Bounded(st.message(), kMaxMessage);
  if (bad_fluid_datasets_.size() >= kMaxKnownDatasets && !bad_fluid_datasets_.count(name)) return;
  std::string& said = bad_fluid_datasets_[name];
  if (said == message) return;
  said = message;
  Problem({"data.fluid.io/v1alpha1", "Dataset", meta->namespace_, meta->name, meta->uid, "Warning",
           "InvalidDataset", message});
}

}  // namespace gantry

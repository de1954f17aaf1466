// Dataset locality (issue 13, k8s/datasets.h): the datasets pods read (their annotation,
// and their claims of Fluid datasets), what nodes cache by Gantry's annotation (Fluid's
// labels are read by the engine), and Fluid Datasets' sizes.
#include <algorithm>

#include "daemon/cluster_cache.h"
#include "k8s/datasets.h"
#include "k8s/json_fields.h"
#include "model/limits.h"

namespace gantry {
namespace {

using json = nlohmann::json;

std::string ClaimKeyOf(const std::string& ns, const std::string& name) {
  return ns + "/" + name;
}

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

std::string ClusterCache::AddClaimDatasets(const k8s::PodInfo& info, TaskSpec* spec) const {
  bool added = false;
  for (const k8s::PodClaimRef& ref : info.claims) {
    auto claim = claims_.find(ClaimKeyOf(info.meta.namespace_, ref.claim));
    if (claim == claims_.end() || !claim->second.fully_bound()) continue;
    auto volume = volumes_.find(claim->second.volume_name);
    if (volume == volumes_.end() || volume->second.fluid_dataset.empty()) continue;
    spec->datasets.push_back(volume->second.fluid_dataset);
    added = true;
  }
  if (!added) return "";
  std::sort(spec->datasets.begin(), spec->datasets.end());
  spec->datasets.erase(std::unique(spec->datasets.begin(), spec->datasets.end()),
                       spec->datasets.end());
  if (spec->datasets.size() > kMaxDatasetsPerTask) {
    return "the pod reads " + std::to_string(spec->datasets.size()) + " datasets (its annotation " +
           k8s::kDatasetsAnnotation + " and its claims of Fluid datasets); the limit is " +
           std::to_string(kMaxDatasetsPerTask);
  }
  return "";
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

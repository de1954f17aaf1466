// Dataset locality on Kubernetes (issue 13; model/datasets.h): what pods read, what nodes
// cache, and what is known of a dataset, as the API's objects say it.
//  - A pod names the datasets it reads in the annotation gantry.dev/datasets
//    ("ns/name,other", a bare name in the pod's namespace), and through its claims of a
//    Fluid dataset: Fluid exposes a Dataset to pods as a PersistentVolumeClaim of its name,
//    bound to a PersistentVolume whose CSI driver is fuse.csi.fluid.io and whose
//    volumeAttributes runtime_namespace and runtime_name name the dataset (FluidDatasetOf).
//  - A node caches what Fluid's label fluid.io/s-<ns>-<name>: "true" says (read by the
//    engine per dataset) and what the annotation gantry.dev/cached-datasets lists.
//  - Fluid's Dataset objects (data.fluid.io/v1alpha1, where its CRD is installed) give a
//    dataset's size (status.ufsTotal, "52.18GiB") and uid (the label of a long name).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "k8s/object_meta.h"
#include "model/datasets.h"
#include "model/status.h"

namespace gantry::k8s {

inline constexpr const char* kDatasetsAnnotation = "gantry.dev/datasets";
inline constexpr const char* kCachedDatasetsAnnotation = "gantry.dev/cached-datasets";
// Fluid's CSI driver and the volume attributes that name the dataset of its volumes.
inline constexpr const char* kFluidCsiDriver = "fuse.csi.fluid.io";
inline constexpr const char* kFluidRuntimeNamespaceAttribute = "runtime_namespace";
inline constexpr const char* kFluidRuntimeNameAttribute = "runtime_name";

// The datasets the pod's annotation names (none without it, or blank), bare names in `ns`. An error
// names `where` (the pod), the annotation and the value, and says what is wrong.
Status ReadPodDatasets(const nlohmann::json& annotations, const std::string& where,
                       const std::string& ns, std::vector<std::string>* out);
// The datasets a node's annotation lists (namespace/name only). Errors as above.
Status ReadNodeCachedDatasets(const nlohmann::json& annotations, const std::string& where,
                              std::vector<std::string>* out);
// The Fluid dataset ("namespace/name") of a PersistentVolume's spec, or "" when it is not
// a Fluid volume (or its attributes do not name a valid dataset).
std::string FluidDatasetOf(const nlohmann::json& volume_spec);

struct FluidDatasetInfo {
  ObjectMeta meta;
  DatasetInfo dataset;  // name "namespace/name", uid, size (0 while Fluid computes it)
};
// A Fluid Dataset object. status.ufsTotal that is absent, empty or not yet a size (Fluid
// writes "[Calculating]" at first) is an unknown size; one with an unknown unit is an
// error naming the object and the field.
Result<FluidDatasetInfo> ParseFluidDataset(const nlohmann::json& object);

}  // namespace gantry::k8s

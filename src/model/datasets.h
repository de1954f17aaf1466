// Datasets that tasks read and nodes cache (issue 13, dataset locality). A dataset is named
// "namespace/name", as a Fluid Dataset object (data.fluid.io) is. What a task reads is on
// its spec (TaskSpec::datasets); what a node caches is known two ways:
//  - a loader's word: Node::cached_datasets (Gantry's node annotation
//    gantry.dev/cached-datasets, a scenario's cachedDatasets, the simulator's cache model);
//  - Fluid's node label fluid.io/s-<namespace>-<name>: "true", which Fluid's runtimes put
//    on every node whose cache workers hold the dataset. Such a key cannot be split back
//    into a namespace and a name when either holds '-' ("fluid.io/s-team-a-imagenet" is
//    team-a/imagenet or team/a-imagenet), nor told from Fluid's other labels of the same
//    prefix (fluid.io/s-alluxio-<ns>-<name>, fluid.io/s-h-...). So it is never parsed:
//    a node caches ns/name when it carries the key FluidCacheLabel(ns/name) makes, read
//    for the datasets tasks name. Two datasets whose keys are the same (team-a/x and
//    team/a-x) are both taken as cached there, as Fluid's own affinity takes them.
// Fluid makes the key from "<namespace>-<name>" while "fluid.io/s-<namespace>-<name>" is
// shorter than 63 bytes, and from the Dataset's metadata.uid beyond that; the uid is known
// only where the Dataset object is read (DatasetInfo::uid).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/labels.h"
#include "model/status.h"

namespace gantry {

// What a loader knows of a dataset: a cluster keeps a table of them (model/dataset_table.h).
struct DatasetInfo {
  std::string name;        // "namespace/name"
  int64_t size_bytes = 0;  // 0: unknown
  // The Fluid Dataset's metadata.uid, from which Fluid makes the cache label of a long
  // name; "": unknown (a long name is then known cached only by the loader's word).
  std::string uid;
  // Seconds it takes to fill one node's cache with it, for the simulator's warm-up model;
  // -1: from its size (the simulator's bandwidth). The engine does not read it.
  int64_t warmup_s = -1;
  bool operator==(const DatasetInfo&) const = default;
};

inline constexpr std::string_view kFluidCacheLabelPrefix = "fluid.io/s-";
// Fluid's limit on a cache label key built from the names (DNS-1035 label length).
inline constexpr size_t kFluidLabelNameLimit = 63;

// Checks "namespace/name": the namespace a DNS-1123 label (1 to 63 bytes of [a-z0-9-],
// alphanumeric at both ends), the name a DNS-1123 subdomain (1 to 253 bytes of
// [a-z0-9.-], alphanumeric at both ends), as the API server holds a Dataset object to.
// Errors quote the name and say what is wrong.
Status CheckDatasetName(std::string_view name);

// "ns/a, ns/b" (commas, spaces around entries) into sorted names, each once. A bare
// "name" is in `default_namespace`, or an error when that is empty. At most `max` names.
// Errors quote the entry.
Result<std::vector<std::string>> ParseDatasetList(std::string_view text,
                                                  std::string_view default_namespace, size_t max);
// Checks each name, sorts them and keeps each once; more than `max` is an error.
Status NormalizeDatasetList(std::vector<std::string>* names, size_t max);

// The key of the label Fluid puts on a node caching `dataset` ("namespace/name"); "" when
// the key would be made from the uid and `uid` is "".
std::string FluidCacheLabel(std::string_view dataset, std::string_view uid);

// Whether a node with these labels and this loader's list (sorted) caches `dataset`,
// `fluid_label` being FluidCacheLabel's key for it ("": the labels are not read).
bool NodeCachesDataset(const Labels& labels, const std::vector<std::string>& cached,
                       std::string_view dataset, std::string_view fluid_label);

// A dataset's size in bytes: a Kubernetes quantity ("200Gi", "1.5T", "1000000") or
// Fluid's status.ufsTotal ("52.18GiB", "1.5 TiB", "512B"): a non-negative decimal, an
// optional space, and a unit of B, Ki..Ei or KiB..EiB (powers of 1024), k/K..E or KB..EB
// (powers of 1000). Fractions of a byte round to the nearest. Errors quote the text and,
// for an unknown unit, list the known ones; more than INT64_MAX bytes is an error.
Result<int64_t> ParseDatasetSize(std::string_view text);

}  // namespace gantry

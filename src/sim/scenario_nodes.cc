#include "sim/scenario_nodes.h"

#include <algorithm>
#include <cstdint>

#include "model/limits.h"
#include "sim/scenario_datasets.h"
#include "sim/scenario_mig.h"
#include "sim/scenario_numa.h"

namespace gantry {
namespace {

// Before any node is built: the nodes the list makes, namePrefix's counts included, are
// within kMaxNodes (a count of a million built a million nodes before).
Status CheckNodeCount(const YamlReader& r, const YAML::Node& nodes) {
  int64_t total = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const YAML::Node& n = nodes[i];
    const std::string f = "nodes[" + std::to_string(i) + "]";
    int64_t count = 1;
    const bool counted = n.IsMap() && n["namePrefix"] && n["count"];
    if (counted) GANTRY_RETURN_IF_ERROR(r.Int(n["count"], f + ".count", 1, kMaxNodes, &count));
    if (total + count > kMaxNodes) {
      return r.Error(counted ? n["count"] : n, counted ? f + ".count" : f,
                     "the scenario would have " + std::to_string(total + count) +
                         " nodes, more than " + LimitText(kMaxNodes, "nodes in a cluster"));
    }
    total += count;
  }
  return Status::Ok();
}

// csi: {drivers: [{name, limit}], attached: [{driver, handle}]}: the node has a CSINode
// object listing these drivers (limit: how many volumes each may attach; none: no limit),
// and VolumeAttachments of these volumes.
Status ParseNodeCsi(const YamlReader& r, const YAML::Node& node, const std::string& field,
                    NodeCsi* out) {
  GANTRY_RETURN_IF_ERROR(r.Map(node, field, {"drivers", "attached"}));
  out->has_csi_node = true;
  if (const YAML::Node& drivers = node["drivers"]) {
    GANTRY_RETURN_IF_ERROR(r.List(drivers, field + ".drivers"));
    for (size_t i = 0; i < drivers.size(); ++i) {
      const std::string fi = field + ".drivers[" + std::to_string(i) + "]";
      GANTRY_RETURN_IF_ERROR(r.Map(drivers[i], fi, {"name", "limit"}));
      NodeCsiDriver driver;
      if (!drivers[i]["name"]) return r.Error(drivers[i], fi + ".name", "required");
      GANTRY_RETURN_IF_ERROR(r.String(drivers[i]["name"], fi + ".name", &driver.name));
      if (driver.name.empty())
        return r.Error(drivers[i]["name"], fi + ".name", "must not be empty");
      if (out->FindDriver(driver.name) != nullptr) {
        return r.Error(drivers[i]["name"], fi + ".name",
                       "driver \"" + driver.name + "\" listed twice");
      }
      if (drivers[i]["limit"]) {
        int64_t limit = 0;
        GANTRY_RETURN_IF_ERROR(r.Int(drivers[i]["limit"], fi + ".limit", 0, INT32_MAX, &limit));
        driver.limit = static_cast<int32_t>(limit);
      }
      out->drivers.push_back(std::move(driver));
    }
    std::sort(out->drivers.begin(), out->drivers.end(),
              [](const NodeCsiDriver& a, const NodeCsiDriver& b) { return a.name < b.name; });
  }
  if (const YAML::Node& attached = node["attached"]) {
    GANTRY_RETURN_IF_ERROR(r.List(attached, field + ".attached"));
    for (size_t i = 0; i < attached.size(); ++i) {
      const std::string fi = field + ".attached[" + std::to_string(i) + "]";
      GANTRY_RETURN_IF_ERROR(r.Map(attached[i], fi, {"driver", "handle"}));
      AttachableVolume v;
      for (const char* key : {"driver", "handle"}) {
        if (!attached[i][key]) return r.Error(attached[i], fi + "." + key, "required");
      }
      GANTRY_RETURN_IF_ERROR(r.String(attached[i]["driver"], fi + ".driver", &v.driver));
      GANTRY_RETURN_IF_ERROR(r.String(attached[i]["handle"], fi + ".handle", &v.handle));
      out->attached.push_back(std::move(v));
    }
    SortVolumesOnce(&out->attached);
  }
  return Status::Ok();
}

}  // namespace

Status ParseNodes(const YamlReader& r, const YAML::Node& nodes, ClusterState* cluster) {
  GANTRY_RETURN_IF_ERROR(r.List(nodes, "nodes"));
  GANTRY_RETURN_IF_ERROR(CheckNodeCount(r, nodes));
  for (size_t i = 0; i < nodes.size(); ++i) {
    const YAML::Node& n = nodes[i];
    const std::string f = "nodes[" + std::to_string(i) + "]";
    GANTRY_RETURN_IF_ERROR(r.Map(n, f,
                                 {"name", "namePrefix", "count", "allocatable", "gpus", "labels",
                                  "taints", "unschedulable", "csi", "numa", "cachedDatasets"}));
    Node node;
    if (n["allocatable"]) {
      GANTRY_RETURN_IF_ERROR(r.Resources(n["allocatable"], f + ".allocatable", NameSource::kTrusted,
                                         &node.allocatable));
      if (node.allocatable.Get(kGpu) != 0) {
        return r.Error(n["allocatable"], f + ".allocatable.nvidia.com/gpu",
                       "give GPUs as gpus: {count, model, memoryMiB}, not as allocatable");
      }
    } else {
      return r.Error(n, f + ".allocatable", "required");
    }
    if (n["labels"]) GANTRY_RETURN_IF_ERROR(r.LabelMap(n["labels"], f + ".labels", &node.labels));
    if (n["taints"]) GANTRY_RETURN_IF_ERROR(r.Taints(n["taints"], f + ".taints", &node.taints));
    if (n["unschedulable"]) {
      GANTRY_RETURN_IF_ERROR(r.Bool(n["unschedulable"], f + ".unschedulable", &node.unschedulable));
    }
    if (n["csi"]) GANTRY_RETURN_IF_ERROR(ParseNodeCsi(r, n["csi"], f + ".csi", &node.csi));
    if (n["cachedDatasets"]) {
      GANTRY_RETURN_IF_ERROR(ParseDatasetNames(r, n["cachedDatasets"], f + ".cachedDatasets", "",
                                               kMaxCachedDatasetsPerNode, &node.cached_datasets));
    }
    if (const YAML::Node& g = n["gpus"]) {
      const std::string gf = f + ".gpus";
      GANTRY_RETURN_IF_ERROR(r.Map(g, gf, {"count", "model", "memoryMiB", "nvlinkDomains", "mig"}));
      int64_t count = 0, memory = 0, domains = 1;
      std::string model = "generic";
      if (!g["count"]) return r.Error(g, gf + ".count", "required");
      GANTRY_RETURN_IF_ERROR(r.Int(g["count"], gf + ".count", 0, 64, &count));
      if (g["model"]) GANTRY_RETURN_IF_ERROR(r.Name(g["model"], gf + ".model", &model));
      if (g["memoryMiB"]) {
        GANTRY_RETURN_IF_ERROR(
            r.Int(g["memoryMiB"], gf + ".memoryMiB", 0, int64_t{1} << 40, &memory));
      }
      if (g["nvlinkDomains"]) {
        GANTRY_RETURN_IF_ERROR(r.Int(g["nvlinkDomains"], gf + ".nvlinkDomains", 1, 64, &domains));
        if (count % domains != 0) {
          return r.Error(g["nvlinkDomains"], gf + ".nvlinkDomains",
                         "must divide count (" + std::to_string(count) + ")");
        }
      }
      GpuModelId model_id = GpuModels().Intern(model);
      for (int64_t d = 0; d < count; ++d) {
        GpuDevice device;
        device.model = model_id;
        device.memory_mib = memory;
        device.nvlink_domain = static_cast<int32_t>(d / (count / domains));
        node.gpus.push_back(device);
      }
      if (g["mig"]) GANTRY_RETURN_IF_ERROR(ParseNodeMig(r, g["mig"], gf + ".mig", &node));
    }
    if (n["numa"]) {
      // For the words of an error only: the names are read below.
      const YAML::Node& named = n["name"] ? n["name"] : n["namePrefix"];
      node.name = named && named.IsScalar() ? named.Scalar() + (n["name"] ? "" : "*") : "";
      GANTRY_RETURN_IF_ERROR(ParseNodeNuma(r, n["numa"], f + ".numa", &node));
    }
    const bool named = static_cast<bool>(n["name"]);
    const bool prefixed = static_cast<bool>(n["namePrefix"]);
    if (named == prefixed) {
      return r.Error(n, f, "give either name, or namePrefix with count");
    }
    if (named) {
      if (n["count"])
        return r.Error(n["count"], f + ".count", "count goes with namePrefix, not name");
      GANTRY_RETURN_IF_ERROR(r.Name(n["name"], f + ".name", &node.name));
      auto added = cluster->AddNode(node);
      if (!added.ok()) return r.Error(n["name"], f + ".name", added.status().message());
      continue;
    }
    std::string prefix;
    int64_t count = 0;
    GANTRY_RETURN_IF_ERROR(r.Name(n["namePrefix"], f + ".namePrefix", &prefix));
    if (!n["count"]) return r.Error(n, f + ".count", "required with namePrefix");
    GANTRY_RETURN_IF_ERROR(r.Int(n["count"], f + ".count", 1, kMaxNodes, &count));
    if (prefix.size() + DigitCount(count - 1) > kMaxNameLength) {
      return r.Error(n["namePrefix"], f + ".namePrefix",
                     "names " + QuoteForMessage(prefix + std::to_string(count - 1)) +
                         " would be longer than " + std::to_string(kMaxNameLength) +
                         " bytes (the limit on names)");
    }
    for (int64_t k = 0; k < count; ++k) {
      Node copy = node;
      copy.name = prefix + std::to_string(k);
      auto added = cluster->AddNode(std::move(copy));
      if (!added.ok()) return r.Error(n["namePrefix"], f + ".namePrefix", added.status().message());
    }
  }
  return Status::Ok();
}

}  // namespace gantry

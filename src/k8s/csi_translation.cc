#include "k8s/csi_translation.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "k8s/json_fields.h"
#include "model/volume_topology.h"

namespace gantry::k8s {
namespace {

using json = nlohmann::json;

struct InTreeKind {
  const char* source;  // the field of the volume source
  const char* plugin;  // the in-tree plugin's name
  const char* driver;  // the CSI driver it migrates to
};
// The kinds whose volumes count (isCSIMigrationOn: true once a node has a CSINode).
constexpr InTreeKind kCounted[] = {
    {"awsElasticBlockStore", "kubernetes.io/aws-ebs", "ebs.csi.aws.com"},
    {"gcePersistentDisk", "kubernetes.io/gce-pd", "pd.csi.storage.gke.io"},
    {"azureDisk", "kubernetes.io/azure-disk", "disk.csi.azure.com"},
    {"cinder", "kubernetes.io/cinder", "cinder.csi.openstack.org"},
    {"portworxVolume", "kubernetes.io/portworx-volume", "pxd.portworx.com"},
};
// Migratable kinds that isCSIMigrationOn never reports on: they count nowhere.
constexpr const char* kNeverCounted[] = {"kubernetes.io/azure-file",
                                         "kubernetes.io/vsphere-volume"};

constexpr const char* kUnspecified = "UNSPECIFIED";

std::vector<std::string> Split(const std::string& text, const std::string& by) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t at = text.find(by, start);
    out.push_back(text.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    start = at + by.size();
  }
}

// KubernetesVolumeIDToEBSVolumeID: "aws://zone/vol-..." or a bare "vol-...".
std::optional<std::string> EbsVolumeId(const std::string& id) {
  if (id.rfind("aws://", 0) != 0) return id;
  // The URL's path, trimmed of slashes; the host (the zone) is dropped.
  const std::string rest = id.substr(6);
  const size_t slash = rest.find('/');
  std::string path = slash == std::string::npos ? "" : rest.substr(slash);
  const size_t first = path.find_first_not_of('/');
  if (first == std::string::npos) return std::nullopt;
  path = path.substr(first, path.find_last_not_of('/') - first + 1);
  if (path.rfind("vol-", 0) != 0 || path.find('/') != std::string::npos) return std::nullopt;
  return path;
}

// The GCE PD handle of a persistent volume: zonal, regional or unspecified by its zone label.
std::optional<std::string> GcePdHandle(const std::string& pd_name, const Labels& labels) {
  std::string zones_label;
  if (const std::string* beta = labels.Find(kBetaZoneLabel)) zones_label = *beta;
  if (zones_label.empty()) {
    if (const std::string* zone = labels.Find(kZoneLabel)) zones_label = *zone;
  }
  const std::vector<std::string> zones = Split(zones_label, "__");
  if (zones.size() == 1 && !zones[0].empty()) {
    return std::string("projects/") + kUnspecified + "/zones/" + zones[0] + "/disks/" + pd_name;
  }
  if (zones.size() > 1) {
    std::set<std::string> regions;
    for (const std::string& zone : zones) {
      const std::vector<std::string> parts = Split(zone, "-");
      if (parts.size() != 3) return std::nullopt;
      regions.insert(parts[0] + "-" + parts[1]);
    }
    if (regions.size() != 1) return std::nullopt;
    return std::string("projects/") + kUnspecified + "/regions/" + *regions.begin() + "/disks/" +
           pd_name;
  }
  return std::string("projects/") + kUnspecified + "/zones/" + kUnspecified + "/disks/" + pd_name;
}

// The handle an in-tree source translates to; nothing when the translation fails.
// `labels` is the persistent volume's, or nullptr for an inline volume.
std::optional<std::string> InTreeHandle(const std::string& kind, const json& source,
                                        const Labels* labels) {
  if (kind == "awsElasticBlockStore") return EbsVolumeId(String(source, "volumeID"));
  if (kind == "gcePersistentDisk") {
    const std::string pd = String(source, "pdName");
    if (labels == nullptr) {
      return std::string("projects/") + kUnspecified + "/zones/" + kUnspecified + "/disks/" + pd;
    }
    return GcePdHandle(pd, *labels);
  }
  if (kind == "azureDisk") {
    // Only managed disks migrate (an absent kind is managed).
    const std::string disk_kind = String(source, "kind");
    std::string lower = disk_kind;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (!disk_kind.empty() && lower != "managed") return std::nullopt;
    return String(source, "diskURI");
  }
  return String(source, "volumeID");  // cinder, portworxVolume
}

std::optional<AttachableVolume> InTree(const json& holder, const Labels* labels) {
  for (const InTreeKind& kind : kCounted) {
    const json& source = Field(holder, kind.source);
    if (source.is_null()) continue;
    std::optional<std::string> handle = InTreeHandle(kind.source, source, labels);
    if (!handle) return std::nullopt;
    AttachableVolume v;
    v.driver = kind.driver;
    v.handle = std::move(*handle);
    v.migrated = true;
    return v;
  }
  return std::nullopt;
}

}  // namespace

std::string MigratedDriverOf(const std::string& in_tree_plugin) {
  for (const InTreeKind& kind : kCounted) {
    if (in_tree_plugin == kind.plugin) return kind.driver;
  }
  return "";
}

std::optional<AttachableVolume> AttachableOfVolumeSpec(const json& spec, const Labels& labels) {
  const json& csi = Field(spec, "csi");
  if (!csi.is_null()) {
    AttachableVolume v;
    v.driver = String(csi, "driver");
    v.handle = String(csi, "volumeHandle");
    if (v.driver.empty() || v.handle.empty()) return std::nullopt;  // not counted
    return v;
  }
  return InTree(spec, &labels);
}

std::optional<AttachableVolume> AttachableOfInlineVolume(const json& volume) {
  // Inline CSI volumes (ephemeral ones of a CSI driver) count against no limit.
  return InTree(volume, nullptr);
}

std::optional<AttachableVolume> AttachableOfUnboundClaim(const std::string& provisioner,
                                                         const std::string& namespace_,
                                                         const std::string& claim) {
  if (provisioner.empty()) return std::nullopt;
  for (const char* never : kNeverCounted) {
    if (provisioner == never) return std::nullopt;
  }
  AttachableVolume v;
  v.handle = "gantry-unbound-claim/" + namespace_ + "/" + claim;
  if (std::string driver = MigratedDriverOf(provisioner); !driver.empty()) {
    v.driver = std::move(driver);
    v.migrated = true;
  } else {
    v.driver = provisioner;
  }
  return v;
}

}  // namespace gantry::k8s

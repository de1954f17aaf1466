// PersistentVolumeClaims, PersistentVolumes and StorageClasses read from the API's JSON,
// the claims a pod's volumes name, and VolumeZone's rule. Expected values come from the
// Kubernetes documentation (storage/volumes "local", storage/storage-classes, the
// well-known labels reference) and kube-scheduler's plugins, not from the decoder.
#include "k8s/volumes.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "k8s/objects.h"
#include "model/volume_topology.h"
#include "tests/unit/test_util.h"

namespace gantry::k8s {
namespace {

using json = nlohmann::json;
using Op = SelectorRequirement::Op;
using Pairs = std::vector<std::pair<std::string, std::string>>;

// The documentation's local volume (storage/volumes, "local"), as the API server returns it.
json LocalVolume() {
  return json::parse(R"({"apiVersion": "v1", "kind": "PersistentVolume",
      "metadata": {"name": "example-pv", "uid": "pv-1"},
      "spec": {"capacity": {"storage": "100Gi"}, "volumeMode": "Filesystem",
        "accessModes": ["ReadWriteOnce"], "persistentVolumeReclaimPolicy": "Delete",
        "storageClassName": "local-storage", "local": {"path": "/mnt/disks/ssd1"},
        "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
          {"key": "kubernetes.io/hostname", "operator": "In", "values": ["example-node"]}]}]}}}})");
}

TEST(PersistentVolume, LocalVolumeNodeAffinity) {
  const PersistentVolumeInfo pv = Must(ParsePersistentVolume(LocalVolume()));
  EXPECT_EQ(pv.meta.name, "example-pv");
  ASSERT_TRUE(pv.node_affinity.has_value());
  EXPECT_EQ(pv.node_affinity->terms, (std::vector<std::vector<SelectorRequirement>>{
                                         {{"kubernetes.io/hostname", Op::kIn, {"example-node"}}}}));
  EXPECT_TRUE(pv.zones.empty());
  EXPECT_FALSE(pv.attachable) << "a local volume attaches to nothing";
  Labels example_node(Pairs{{"kubernetes.io/hostname", "example-node"}});
  Labels other(Pairs{{"kubernetes.io/hostname", "other"}});
  EXPECT_TRUE(pv.node_affinity->Matches(example_node));
  EXPECT_FALSE(pv.node_affinity->Matches(other));
}

// A required selector without terms matches no node (the API server refuses one; read,
// it must not become "anywhere").
TEST(PersistentVolume, RequiredSelectorWithoutTermsMatchesNothing) {
  json pv = LocalVolume();
  pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"] = json::array();
  const PersistentVolumeInfo info = Must(ParsePersistentVolume(pv));
  ASSERT_TRUE(info.node_affinity.has_value());
  EXPECT_FALSE(info.node_affinity->Matches(Labels(Pairs{{"kubernetes.io/hostname", "x"}})));
}

TEST(PersistentVolume, ErrorsNameTheVolumeAndTheField) {
  json pv = LocalVolume();
  pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]
    ["operator"] = "Near";
  auto r = ParsePersistentVolume(pv);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(),
                       "persistentvolume example-pv: spec.nodeAffinity.required."
                       "nodeSelectorTerms[0].matchExpressions[0].operator: \"Near\""));
  pv = LocalVolume();
  pv["spec"]["nodeAffinity"] = "everywhere";
  r = ParsePersistentVolume(pv);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "persistentvolume example-pv: spec.nodeAffinity: "));
  pv = LocalVolume();
  pv["metadata"]["name"] = std::string(300, 'v');
  EXPECT_FALSE(ParsePersistentVolume(pv).ok());
}

// The well-known labels reference: a volume's topology.kubernetes.io/zone (and the legacy
// failure-domain.beta.kubernetes.io ones) may list zones, "a__b"; VolumeZone ignores a
// value with an empty part.
TEST(PersistentVolume, ZoneLabelsAreSetsAndBadOnesAreIgnored) {
  json pv = json::parse(R"({"metadata": {"name": "pd", "labels": {
      "topology.kubernetes.io/zone": "us-central1-a__us-central1-b",
      "topology.kubernetes.io/region": "us-central1",
      "failure-domain.beta.kubernetes.io/zone": "us-central1-a__",
      "other": "x"}},
      "spec": {"csi": {"driver": "pd.csi.storage.gke.io", "volumeHandle": "h"}}})");
  const PersistentVolumeInfo info = Must(ParsePersistentVolume(pv));
  EXPECT_EQ(info.zones, (std::vector<VolumeTopology>{
                            {"topology.kubernetes.io/zone", {"us-central1-a", "us-central1-b"}},
                            {"topology.kubernetes.io/region", {"us-central1"}}}));
  ASSERT_TRUE(info.attachable);
  EXPECT_EQ(*info.attachable, (AttachableVolume{"pd.csi.storage.gke.io", "h"}));
  EXPECT_TRUE(info.csi_source);
  std::vector<std::string> zones;
  EXPECT_TRUE(ParseVolumeZones(" a __b__a", &zones));
  EXPECT_EQ(zones, (std::vector<std::string>{"a", "b"}));
  EXPECT_FALSE(ParseVolumeZones("", &zones));
  EXPECT_FALSE(ParseVolumeZones("a____b", &zones));
}

// VolumeZone: a node without topology labels takes any volume; else each of the volume's
// labels must hold the node's value; a beta key missing on the node is looked up under
// its GA key, not the other way round.
TEST(VolumeZone, NodeLabelsMustBeAmongTheVolumesZones) {
  const std::vector<VolumeTopology> zones = {
      {std::string(kZoneLabel), {"us-central1-a", "us-central1-b"}}};
  EXPECT_TRUE(VolumeZonesAllow(zones, Labels(Pairs{{"kubernetes.io/hostname", "n"}})));
  EXPECT_TRUE(VolumeZonesAllow(zones, Labels(Pairs{{std::string(kZoneLabel), "us-central1-b"}})));
  EXPECT_FALSE(VolumeZonesAllow(zones, Labels(Pairs{{std::string(kZoneLabel), "us-east1-a"}})));
  // The node has a region but no zone: the zone is missing.
  EXPECT_FALSE(VolumeZonesAllow(zones, Labels(Pairs{{std::string(kRegionLabel), "us-central1"}})));
  // GA on the volume, beta on the node: no match.
  EXPECT_FALSE(
      VolumeZonesAllow(zones, Labels(Pairs{{std::string(kBetaZoneLabel), "us-central1-a"}})));
  // Beta on the volume, GA on the node: the GA label is read.
  const std::vector<VolumeTopology> beta = {{std::string(kBetaZoneLabel), {"us-central1-a"}}};
  EXPECT_TRUE(VolumeZonesAllow(beta, Labels(Pairs{{std::string(kZoneLabel), "us-central1-a"}})));
  EXPECT_FALSE(VolumeZonesAllow(beta, Labels(Pairs{{std::string(kZoneLabel), "us-central1-c"}})));
  EXPECT_TRUE(VolumeZonesAllow({}, Labels(Pairs{{std::string(kZoneLabel), "x"}})));
}

TEST(PersistentVolumeClaim, BindingStateClassAndAccessModes) {
  const ClaimInfo bound = Must(ParseClaim(json::parse(R"({"metadata": {"name": "data",
      "namespace": "ml", "uid": "c-1", "annotations": {"pv.kubernetes.io/bind-completed": "yes"}},
      "spec": {"accessModes": ["ReadWriteOncePod"], "storageClassName": "fast",
        "volumeName": "pv-1", "resources": {"requests": {"storage": "1Gi"}}},
      "status": {"phase": "Bound"}})")));
  EXPECT_EQ(bound.meta.Key(), "ml/data");
  EXPECT_TRUE(bound.fully_bound());
  EXPECT_TRUE(bound.read_write_once_pod);
  EXPECT_EQ(bound.storage_class, "fast");
  EXPECT_FALSE(bound.lost);
  // Pre-bound: a volume named, the PV controller not done.
  const ClaimInfo prebound = Must(ParseClaim(json::parse(R"({"metadata": {"name": "p",
      "namespace": "ml", "annotations": {"volume.beta.kubernetes.io/storage-class": "old"}},
      "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "new",
        "volumeName": "pv-2"}, "status": {"phase": "Lost"}})")));
  EXPECT_FALSE(prebound.fully_bound());
  EXPECT_FALSE(prebound.read_write_once_pod);
  EXPECT_EQ(prebound.storage_class, "old") << "the beta annotation wins";
  EXPECT_TRUE(prebound.lost);
  // A generic ephemeral volume's claim: owned by its pod.
  const ClaimInfo ephemeral = Must(ParseClaim(json::parse(R"({"metadata": {"name": "p-scratch",
      "namespace": "ml", "ownerReferences": [
        {"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "pod-uid", "controller": true}]},
      "spec": {}})")));
  EXPECT_EQ(ephemeral.controller_uid, "pod-uid");
  EXPECT_EQ(ephemeral.storage_class, "");
}

TEST(PersistentVolumeClaim, ErrorsNameTheClaimAndTheField) {
  auto r = ParseClaim(
      json::parse(R"({"metadata": {"name": "d", "namespace": "ml"}, "spec": {"accessModes": 3}})"));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "persistentvolumeclaim ml/d: spec.accessModes: "));
  r = ParseClaim(
      json::parse(R"({"metadata": {"name": "d", "namespace": "ml"}, "spec": {"volumeName": 7}})"));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "persistentvolumeclaim ml/d: spec.volumeName: "));
  EXPECT_FALSE(ParseClaim(json::parse(R"({"metadata": {}})")).ok());
}

// The documentation's local-storage class (storage/storage-classes, "Local").
TEST(StorageClass, BindingMode) {
  const StorageClassInfo local = Must(ParseStorageClass(json::parse(
      R"({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
          "metadata": {"name": "local-storage"}, "provisioner": "kubernetes.io/no-provisioner",
          "volumeBindingMode": "WaitForFirstConsumer"})")));
  EXPECT_EQ(local.binding_mode, VolumeBindingMode::kWaitForFirstConsumer);
  EXPECT_EQ(Must(ParseStorageClass(json::parse(
                     R"({"metadata": {"name": "s"}, "volumeBindingMode": "Immediate"})")))
                .binding_mode,
            VolumeBindingMode::kImmediate);
  EXPECT_EQ(Must(ParseStorageClass(json::parse(R"({"metadata": {"name": "s"}})"))).binding_mode,
            VolumeBindingMode::kUnset);
  auto r = ParseStorageClass(
      json::parse(R"({"metadata": {"name": "s"}, "volumeBindingMode": "Eventually"})"));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "storageclass s: volumeBindingMode: \"Eventually\""));
}

// What delayed binding reads (FindMatchingVolume, checkVolumeProvisions): a volume's class,
// capacity, modes, claimRef and phase; a claim's request, modes, selector and selected
// node; a class's provisioner and allowedTopologies (the documentation's standard class).
TEST(DelayedBinding, WhatVolumesClaimsAndClassesSay) {
  json object = LocalVolume();
  object["spec"]["claimRef"] = {{"namespace", "ml"}, {"name", "data"}, {"uid", "c-1"}};
  object["status"]["phase"] = "Available";
  const PersistentVolumeInfo pv = Must(ParsePersistentVolume(object));
  EXPECT_EQ(pv.storage_class, "local-storage");
  EXPECT_EQ(pv.capacity, int64_t{100} * 1024 * 1024 * 1024 * 1000);
  EXPECT_EQ(pv.access_modes, std::vector<std::string>{"ReadWriteOnce"});
  EXPECT_EQ(pv.volume_mode, "Filesystem");
  ASSERT_TRUE(pv.claim_ref);
  EXPECT_EQ(*pv.claim_ref, (ClaimRef{"ml", "data", "c-1"}));
  EXPECT_TRUE(pv.available);
  const ClaimInfo claim = Must(ParseClaim(json::parse(R"({
      "metadata": {"name": "data", "namespace": "ml", "uid": "c-1",
        "annotations": {"volume.kubernetes.io/selected-node": "n1"}},
      "spec": {"accessModes": ["ReadWriteOnce"], "volumeMode": "Block",
        "selector": {"matchLabels": {"release": "stable"}},
        "resources": {"requests": {"storage": "8Gi"}}, "storageClassName": "standard"}})")));
  EXPECT_EQ(claim.storage_request, int64_t{8} * 1024 * 1024 * 1024 * 1000);
  EXPECT_EQ(claim.volume_mode, "Block");
  ASSERT_TRUE(claim.selector);
  EXPECT_EQ(claim.selector->match_labels.pairs().size(), 1u);
  EXPECT_EQ(claim.selected_node, std::optional<std::string>("n1"));
  const StorageClassInfo sc = Must(ParseStorageClass(json::parse(R"({
      "metadata": {"name": "standard"}, "provisioner": "example.com/example",
      "volumeBindingMode": "WaitForFirstConsumer",
      "allowedTopologies": [{"matchLabelExpressions": [
        {"key": "topology.kubernetes.io/zone", "values": ["us-central-1a", "us-central-1b"]}]}]})")));
  EXPECT_EQ(sc.provisioner, "example.com/example");
  Labels in_a, in_c;
  in_a.Set("topology.kubernetes.io/zone", "us-central-1a");
  in_c.Set("topology.kubernetes.io/zone", "us-central-1c");
  EXPECT_TRUE(sc.allowed_topologies.Matches(in_a));
  EXPECT_FALSE(sc.allowed_topologies.Matches(in_c));
  EXPECT_FALSE(sc.allowed_topologies.Matches(Labels{}));
}

TEST(DelayedBinding, ErrorsNameTheObjectAndTheField) {
  json pv = LocalVolume();
  pv["spec"]["capacity"]["storage"] = "lots";
  auto r = ParsePersistentVolume(pv);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "persistentvolume example-pv: spec.capacity.storage"))
      << r.status().message();
  pv = LocalVolume();
  pv["spec"]["claimRef"] = "data";
  r = ParsePersistentVolume(pv);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "persistentvolume example-pv: spec.claimRef"));
  auto c = ParseClaim(json::parse(
      R"({"metadata": {"name": "d", "namespace": "ml"}, "spec": {"selector": {"matchLabels": 1}}})"));
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(
      Contains(c.status().message(), "persistentvolumeclaim ml/d: spec.selector.matchLabels"));
  auto s = ParseStorageClass(json::parse(
      R"({"metadata": {"name": "s"}, "allowedTopologies": [{"matchLabelExpressions": [{"key": 1}]}]})"));
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.status().message(),
                       "storageclass s: allowedTopologies[0].matchLabelExpressions[0].key"))
      << s.status().message();
}

json Pod(const std::string& spec) {
  return json::parse(R"({"metadata": {"name": "p", "namespace": "ml", "uid": "u-1"}, "spec": )" +
                     spec + "}");
}

// A pod's claims in volume order; a generic ephemeral volume's claim is <pod>-<volume>
// (storage/ephemeral-volumes).
TEST(PodClaims, PersistentVolumeClaimsAndEphemeralVolumes) {
  const PodInfo p = Must(ParsePod(Pod(R"({"containers": [], "volumes": [
      {"name": "cfg", "configMap": {"name": "c"}},
      {"name": "data", "persistentVolumeClaim": {"claimName": "data-claim", "readOnly": true}},
      {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}}]})")));
  ASSERT_EQ(p.claims.size(), 2u);
  EXPECT_EQ(p.claims[0], (PodClaimRef{1, "data", "data-claim", false}));
  EXPECT_EQ(p.claims[1], (PodClaimRef{2, "scratch", "p-scratch", true}));
  EXPECT_EQ(p.claims[1].Field(), "spec.volumes[2].ephemeral");
  std::string problem;
  Must(DecodePod(Pod(R"({"containers": [], "volumes": [{"name": "d",
      "persistentVolumeClaim": {"claimName": ""}}]})"),
                 &problem));
  EXPECT_TRUE(Contains(problem,
                       "pod ml/p: spec.volumes[0].persistentVolumeClaim.claimName: must be "
                       "1..253 bytes long, got 0"));
  json long_name = Pod(R"({"containers": [], "volumes": [{"name": "d",
      "persistentVolumeClaim": {"claimName": "x"}}]})");
  long_name["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] = std::string(300, 'c');
  Must(DecodePod(long_name, &problem));
  EXPECT_TRUE(Contains(problem, "claimName: must be 1..253 bytes long, got 300"));
}

// Inline disks that VolumeRestrictions keeps apart (volume_restrictions.go,
// isVolumeConflict): GCE PD by name, EBS by volume ID (even read-only), iSCSI by IQN, RBD
// by pool, image and any shared monitor; inline CSI, Azure File and vSphere volumes count
// against no limit; Azure Disk, Cinder and Portworx ones count as their CSI migration
// translates them.
TEST(PodClaims, InlineVolumesThatAttach) {
  std::string problem;
  const PodInfo disks = Must(DecodePod(Pod(R"({"containers": [], "volumes": [
      {"name": "pd", "gcePersistentDisk": {"pdName": "pd-1", "readOnly": true}},
      {"name": "ebs", "awsElasticBlockStore": {"volumeID": "vol-1", "readOnly": true}},
      {"name": "scsi", "iscsi": {"targetPortal": "10.0.0.1", "iqn": "iqn.x", "lun": 0}},
      {"name": "ceph", "rbd": {"monitors": ["m1", "m2"], "pool": "p", "image": "i"}}]})"),
                                       &problem));
  EXPECT_EQ(problem, "");
  EXPECT_EQ(disks.spec.inline_disks, (std::vector<InlineDisk>{{"aws-ebs/vol-1", false},
                                                              {"gce-pd/pd-1", true},
                                                              {"iscsi/iqn.x", false},
                                                              {"rbd/p/i/m1", false},
                                                              {"rbd/p/i/m2", false}}));
  // EBS and GCE PD volumes also attach (once a node has a CSINode), in volume order.
  ASSERT_EQ(disks.spec.attachable_volumes.size(), 2u);
  EXPECT_EQ(disks.spec.attachable_volumes[0].handle,
            "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/pd-1");
  EXPECT_EQ(disks.spec.attachable_volumes[1].driver, "ebs.csi.aws.com");
  EXPECT_TRUE((InlineDisk{"gce-pd/a", true}).ConflictsWith({"gce-pd/a", false}));
  EXPECT_FALSE((InlineDisk{"gce-pd/a", true}).ConflictsWith({"gce-pd/a", true}));
  EXPECT_FALSE((InlineDisk{"gce-pd/a", false}).ConflictsWith({"gce-pd/b", false}));
  for (const char* kind : {"csi", "azureFile", "vsphereVolume"}) {
    std::string problem;
    const PodInfo pod =
        Must(DecodePod(Pod(std::string(R"({"containers": [], "volumes": [{"name": "v", ")") + kind +
                           R"(": {"driver": "d", "shareName": "s", "volumePath": "p"}}]})"),
                       &problem));
    EXPECT_EQ(problem, "") << kind;
    EXPECT_TRUE(pod.spec.attachable_volumes.empty()) << kind;
  }
  const PodInfo pod = Must(DecodePod(Pod(R"({"containers": [], "volumes": [
      {"name": "a", "azureDisk": {"diskName": "d", "diskURI": "/subscriptions/s/disks/d"}},
      {"name": "c", "cinder": {"volumeID": "c-1"}},
      {"name": "p", "portworxVolume": {"volumeID": "px-1"}}]})"),
                                     &problem));
  EXPECT_EQ(problem, "");
  AttachableVolume azure{"disk.csi.azure.com", "/subscriptions/s/disks/d", true};
  AttachableVolume cinder{"cinder.csi.openstack.org", "c-1", true};
  AttachableVolume portworx{"pxd.portworx.com", "px-1", true};
  EXPECT_EQ(pod.spec.attachable_volumes, (std::vector<AttachableVolume>{azure, cinder, portworx}));
  // Only managed Azure disks migrate, and EBS IDs of one form; CSILimits fails a pod with
  // another everywhere.
  Must(DecodePod(Pod(R"({"containers": [], "volumes": [
      {"name": "a", "azureDisk": {"diskName": "d", "diskURI": "u", "kind": "Dedicated"}}]})"),
                 &problem));
  EXPECT_TRUE(Contains(problem, "spec.volumes[0].azureDisk (volume \"a\")")) << problem;
  EXPECT_TRUE(Contains(problem, "cannot be translated to CSI")) << problem;
  Must(DecodePod(Pod(R"({"containers": [], "volumes": [
      {"name": "e", "awsElasticBlockStore": {"volumeID": "aws://zone/disk-1"}}]})"),
                 &problem));
  EXPECT_TRUE(Contains(problem, "spec.volumes[0].awsElasticBlockStore (volume \"e\")")) << problem;
}

// csi-translation-lib's handles for in-tree persistent volumes, which CSILimits counts
// (and matches with the same volume elsewhere) by.
TEST(PersistentVolume, InTreeVolumesCountAsTheirTranslation) {
  auto attachable = [](const std::string& spec, const std::string& labels = "{}") {
    json pv = json::parse(R"({"metadata": {"name": "pv", "labels": )" + labels + R"(}, "spec": )" +
                          spec + "}");
    return Must(ParsePersistentVolume(pv)).attachable;
  };
  auto ebs = attachable(R"({"awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-0abc"}})");
  ASSERT_TRUE(ebs);
  EXPECT_EQ(*ebs, (AttachableVolume{"ebs.csi.aws.com", "vol-0abc", true}));
  EXPECT_EQ(attachable(R"({"awsElasticBlockStore": {"volumeID": "vol-1"}})")->handle, "vol-1");
  EXPECT_FALSE(attachable(R"({"awsElasticBlockStore": {"volumeID": "aws://zone/disk-1"}})"))
      << "not an EBS volume ID: the translation fails and nothing is counted";
  EXPECT_EQ(attachable(R"({"gcePersistentDisk": {"pdName": "pd"}})",
                       R"({"topology.kubernetes.io/zone": "us-central1-a"})")
                ->handle,
            "projects/UNSPECIFIED/zones/us-central1-a/disks/pd");
  EXPECT_EQ(attachable(R"({"gcePersistentDisk": {"pdName": "pd"}})",
                       R"({"topology.kubernetes.io/zone": "us-central1-a__us-central1-b"})")
                ->handle,
            "projects/UNSPECIFIED/regions/us-central1/disks/pd");
  EXPECT_EQ(attachable(R"({"gcePersistentDisk": {"pdName": "pd"}})")->handle,
            "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/pd");
  EXPECT_EQ(attachable(R"({"cinder": {"volumeID": "c"}})")->driver, "cinder.csi.openstack.org");
  EXPECT_FALSE(attachable(R"({"azureFile": {"shareName": "s", "secretName": "x"}})"));
  EXPECT_FALSE(attachable(R"({"vsphereVolume": {"volumePath": "p"}})"));
  EXPECT_FALSE(attachable(R"({"nfs": {"server": "s", "path": "/"}})"));
}

TEST(CsiObjects, CsiNodeVolumeAttachmentCsiDriverAndStorageCapacity) {
  const CsiNodeInfo node = Must(ParseCsiNode(json::parse(R"({"metadata": {"name": "n1"},
      "spec": {"drivers": [{"name": "z.csi", "nodeID": "n1"},
        {"name": "ebs.csi.aws.com", "nodeID": "i-1", "allocatable": {"count": 25}}]}})")));
  EXPECT_EQ(node.drivers, (std::vector<NodeCsiDriver>{{"ebs.csi.aws.com", 25}, {"z.csi", {}}}));
  const VolumeAttachmentInfo va = Must(ParseVolumeAttachment(json::parse(
      R"({"metadata": {"name": "csi-123"}, "spec": {"attacher": "ebs.csi.aws.com",
        "nodeName": "n1", "source": {"persistentVolumeName": "pv-1"}}})")));
  EXPECT_EQ(va.attacher, "ebs.csi.aws.com");
  EXPECT_EQ(va.node_name, "n1");
  EXPECT_EQ(va.persistent_volume, "pv-1");
  const CsiDriverInfo driver = Must(ParseCsiDriver(
      json::parse(R"({"metadata": {"name": "d"}, "spec": {"storageCapacity": true}})")));
  EXPECT_TRUE(driver.storage_capacity);
  EXPECT_FALSE(driver.required_on_node);
  const StorageCapacityInfo capacity = Must(ParseStorageCapacity(json::parse(
      R"({"metadata": {"name": "c", "namespace": "kube-system"}, "storageClassName": "fast",
        "nodeTopology": {"matchLabels": {"zone": "a"}}, "capacity": "100Gi",
        "maximumVolumeSize": "10Gi"})")));
  EXPECT_EQ(capacity.storage_class, "fast");
  ASSERT_TRUE(capacity.node_topology);
  EXPECT_TRUE(capacity.node_topology->Matches(Labels(Pairs{{"zone", "a"}})));
  EXPECT_EQ(capacity.volume_limit, 10 * 1024LL * 1024 * 1024 * 1000) << "maximumVolumeSize wins";
  EXPECT_FALSE(
      Must(ParseStorageCapacity(json::parse(R"({"metadata": {"name": "c"}})"))).volume_limit);
}

TEST(CsiObjects, ErrorsNameTheObjectAndTheField) {
  auto error = [](const Status& st) { return st.message(); };
  EXPECT_TRUE(Contains(error(ParseCsiNode(json::parse(R"({"metadata": {"name": "n1"},
      "spec": {"drivers": [{"name": "d", "allocatable": {"count": -1}}]}})"))
                                 .status()),
                       "csinode n1: spec.drivers[0].allocatable.count: expected a count"));
  EXPECT_TRUE(Contains(error(ParseCsiNode(json::parse(R"({"metadata": {"name": "n1"},
      "spec": {"drivers": [{"name": "d"}, {"name": "d"}]}})"))
                                 .status()),
                       "driver \"d\" is listed twice"));
  EXPECT_TRUE(Contains(
      error(ParseCsiDriver(
                json::parse(R"({"metadata": {"name": "d"}, "spec": {"storageCapacity": "yes"}})"))
                .status()),
      "csidriver d: spec.storageCapacity: expected true or false"));
  EXPECT_TRUE(Contains(
      error(
          ParseStorageCapacity(
              json::parse(R"({"metadata": {"name": "c", "namespace": "ns"}, "capacity": "lots"})"))
              .status()),
      "csistoragecapacity ns/c.capacity"));
}

}  // namespace
}  // namespace gantry::k8s

// Dataset locality as the API's objects say it (k8s/datasets.h): a pod's annotation, a
// node's, the Fluid volume behind a claim, and a Fluid Dataset's size. The shapes of
// Fluid's objects are those its controllers write (fluid-cloudnative/fluid: the PV of a
// dataset made by pkg/utils/dataset/volume/create.go, the Dataset's status.ufsTotal).
#include "k8s/datasets.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "k8s/objects.h"
#include "k8s/volumes.h"
#include "tests/unit/test_util.h"

namespace gantry::k8s {
namespace {

using json = nlohmann::json;

json Pod(const std::string& annotations) {
  return json::parse(R"({"apiVersion": "v1", "kind": "Pod",
      "metadata": {"name": "p", "namespace": "ml", "uid": "u", "annotations": )" +
                     annotations + R"(},
      "spec": {"schedulerName": "gantry", "containers": [{"name": "c"}]}})");
}

TEST(PodDatasets, TheAnnotationNamesThemBareNamesInThePodsNamespace) {
  const PodInfo pod = Must(ParsePod(Pod(R"({"gantry.dev/datasets": "imagenet, shared/coco"})")));
  EXPECT_EQ(pod.spec.datasets, (std::vector<std::string>{"ml/imagenet", "shared/coco"}));
  EXPECT_TRUE(Must(ParsePod(Pod("{}"))).spec.datasets.empty());
  EXPECT_TRUE(Must(ParsePod(Pod(R"({"gantry.dev/datasets": " "})"))).spec.datasets.empty());
}

TEST(PodDatasets, AMalformedAnnotationKeepsThePodPendingNamingItAndTheValue) {
  std::string problem;
  auto pod = DecodePod(Pod(R"({"gantry.dev/datasets": "ml/ImageNet"})"), &problem);
  ASSERT_TRUE(pod.ok());
  EXPECT_TRUE(Contains(problem,
                       "pod ml/p: metadata.annotations[gantry.dev/datasets]: \"ml/ImageNet\": "
                       "dataset \"ml/ImageNet\": its name may hold only lowercase"))
      << problem;
  EXPECT_FALSE(ParsePod(Pod(R"({"gantry.dev/datasets": "a,,b"})")).ok());
  // More than a task may read.
  std::string many;
  for (int i = 0; i < 33; ++i) many += (i ? "," : "") + std::string("d") + std::to_string(i);
  EXPECT_TRUE(
      Contains(ParsePod(Pod(R"({"gantry.dev/datasets": ")" + many + "\"}")).status().message(),
               "more than 32 datasets (the limit)"));
}

TEST(NodeDatasets, TheAnnotationListsNamespacedNames) {
  std::vector<std::string> out;
  const json annotations = json::parse(R"({"gantry.dev/cached-datasets": "ml/b,ml/a"})");
  ASSERT_TRUE(ReadNodeCachedDatasets(annotations, "node n", &out).ok());
  EXPECT_EQ(out, (std::vector<std::string>{"ml/a", "ml/b"}));
  const Status bare = ReadNodeCachedDatasets(
      json::parse(R"({"gantry.dev/cached-datasets": "imagenet"})"), "node n", &out);
  EXPECT_TRUE(Contains(bare.message(),
                       "node n: metadata.annotations[gantry.dev/cached-datasets]: \"imagenet\": "
                       "dataset \"imagenet\" is not namespace/name"))
      << bare.message();
  EXPECT_TRUE(out.empty());
  ASSERT_TRUE(ReadNodeCachedDatasets(json::object(), "node n", &out).ok());
}

// The PersistentVolume Fluid makes for dataset ml/imagenet.
json FluidVolume(const std::string& driver = "fuse.csi.fluid.io") {
  return json::parse(R"({"apiVersion": "v1", "kind": "PersistentVolume",
      "metadata": {"name": "ml-imagenet", "labels": {"fluid.io/s-ml-imagenet": "true"},
                   "annotations": {"CreatedBy": "fluid"}},
      "spec": {"accessModes": ["ReadOnlyMany"], "capacity": {"storage": "100Pi"},
        "storageClassName": "fluid", "persistentVolumeReclaimPolicy": "Retain",
        "csi": {"driver": ")" +
                     driver + R"(", "volumeHandle": "ml-imagenet",
          "volumeAttributes": {"fluid_path": "/runtime-mnt/alluxio/ml/imagenet/alluxio-fuse",
            "mount_type": "fuse.alluxio-fuse", "runtime_namespace": "ml",
            "runtime_name": "imagenet"}}}})");
}

TEST(FluidVolume, ItsDatasetFromTheCsiDriversAttributes) {
  EXPECT_EQ(FluidDatasetOf(FluidVolume()["spec"]), "ml/imagenet");
  EXPECT_EQ(Must(ParsePersistentVolume(FluidVolume())).fluid_dataset, "ml/imagenet");
  EXPECT_EQ(FluidDatasetOf(FluidVolume("ebs.csi.aws.com")["spec"]), "");
  json bad = FluidVolume();
  bad["spec"]["csi"]["volumeAttributes"]["runtime_name"] = "Not/Valid";
  EXPECT_EQ(FluidDatasetOf(bad["spec"]), "");
  EXPECT_EQ(FluidDatasetOf(json::object()), "");
}

// Fluid's volumes and claims say 100Pi: more than 8 PiB in milli-bytes, read as at least
// that much rather than refused (which would keep every pod mounting a dataset pending).
TEST(FluidVolume, ItsHundredPebibytesAreAtLeastTheLargestAmount) {
  EXPECT_EQ(Must(ParsePersistentVolume(FluidVolume())).capacity, kMilliMax);
  const ClaimInfo claim = Must(ParseClaim(json::parse(R"({"apiVersion": "v1",
      "kind": "PersistentVolumeClaim", "metadata": {"name": "imagenet", "namespace": "ml",
        "labels": {"fluid.io/s-ml-imagenet": "true"}},
      "spec": {"accessModes": ["ReadOnlyMany"], "storageClassName": "fluid",
        "resources": {"requests": {"storage": "100Pi"}}, "volumeName": "ml-imagenet"}})")));
  EXPECT_EQ(claim.storage_request, kMilliMax);
  json negative = FluidVolume();
  negative["spec"]["capacity"]["storage"] = "-100Pi";
  EXPECT_FALSE(ParsePersistentVolume(negative).ok());
}

json FluidDataset(const std::string& ufs_total) {
  json d = json::parse(R"({"apiVersion": "data.fluid.io/v1alpha1", "kind": "Dataset",
      "metadata": {"name": "imagenet", "namespace": "ml", "uid": "5f0c-77"},
      "spec": {"mounts": [{"mountPoint": "s3://bucket/imagenet", "name": "imagenet"}]},
      "status": {"phase": "Bound"}})");
  if (!ufs_total.empty()) d["status"]["ufsTotal"] = ufs_total;
  return d;
}

TEST(FluidDataset, SizeFromUfsTotalAndTheUid) {
  const FluidDatasetInfo info = Must(ParseFluidDataset(FluidDataset("52.18GiB")));
  EXPECT_EQ(info.dataset.name, "ml/imagenet");
  EXPECT_EQ(info.dataset.uid, "5f0c-77");
  EXPECT_EQ(info.dataset.size_bytes, 56027848376);  // 52.18 x 2^30, rounded
  EXPECT_EQ(Must(ParseFluidDataset(FluidDataset("[Calculating]"))).dataset.size_bytes, 0);
  EXPECT_EQ(Must(ParseFluidDataset(FluidDataset(""))).dataset.size_bytes, 0);
  auto bad = ParseFluidDataset(FluidDataset("5 XB"));
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Contains(bad.status().message(),
                       "dataset ml/imagenet: status.ufsTotal: dataset size \"5 XB\": unknown "
                       "unit \"XB\""))
      << bad.status().message();
}

}  // namespace
}  // namespace gantry::k8s

// The daemon's cluster cache and dataset locality: a pod's annotation and its claims of a
// Fluid dataset become the datasets its task reads, a node's annotation what it caches
// (a malformed one a Warning, the node still scheduled), and Fluid Datasets their sizes.
#include <gtest/gtest.h>

#include <string>

#include "daemon/cluster_cache.h"
#include "engine/session.h"
#include "tests/unit/test_util.h"
#include "tests/unit/volume_objects.h"

namespace gantry {
namespace {

using json = nlohmann::json;
using k8s::EventType;
using namespace volume_objects;  // NOLINT: the test's vocabulary

json Annotated(json object, const std::string& key, const std::string& value) {
  object["metadata"]["annotations"][key] = value;
  return object;
}

// Fluid's PersistentVolume of dataset ml/imagenet, bound to its claim.
json FluidVolume() {
  return json::parse(R"({"metadata": {"name": "ml-imagenet", "uid": "pv-f"},
      "spec": {"accessModes": ["ReadOnlyMany"], "capacity": {"storage": "100Pi"},
        "storageClassName": "fluid",
        "claimRef": {"namespace": "ml", "name": "imagenet"},
        "csi": {"driver": "fuse.csi.fluid.io", "volumeHandle": "ml-imagenet",
          "volumeAttributes": {"runtime_namespace": "ml", "runtime_name": "imagenet"}}},
      "status": {"phase": "Bound"}})");
}

TEST(ClusterCacheDatasets, AnnotatedPodGoesToTheNodeItsAnnotationSaysCachesTheData) {
  ClusterCache c("gantry");
  Messages m(c);
  c.OnNode(EventType::kAdded, NodeObject("a"));
  c.OnNode(EventType::kAdded,
           Annotated(NodeObject("b"), "gantry.dev/cached-datasets", "ml/imagenet"));
  c.OnNode(EventType::kAdded, NodeObject("c"));
  c.OnPod(EventType::kAdded,
          Annotated(PodObject("p", json::array()), "gantry.dev/datasets", "imagenet"));
  const Task* t = TaskNamed(c.state(), "ml/p");
  ASSERT_NE(t, nullptr) << m.Of("p");
  EXPECT_EQ(c.state().spec(t->spec).datasets, std::vector<std::string>{"ml/imagenet"});
  EXPECT_EQ(Placements(c), "ml/p@b");
}

TEST(ClusterCacheDatasets, AFluidLabelSaysItToo) {
  ClusterCache c("gantry");
  c.OnNode(EventType::kAdded, NodeObject("a"));
  c.OnNode(EventType::kAdded, NodeObject("b", {{"fluid.io/s-ml-imagenet", "true"}}));
  c.OnPod(EventType::kAdded,
          Annotated(PodObject("p", json::array()), "gantry.dev/datasets", "ml/imagenet"));
  EXPECT_EQ(Placements(c), "ml/p@b");
}

TEST(ClusterCacheDatasets, AClaimOfAFluidDatasetIsADatasetThePodReads) {
  ClusterCache c("gantry");
  Messages m(c);
  c.OnNode(EventType::kAdded, NodeObject("a"));
  c.OnNode(EventType::kAdded, NodeObject("b", {{"fluid.io/s-ml-imagenet", "true"}}));
  c.OnPersistentVolume(EventType::kAdded, FluidVolume());
  c.OnClaim(EventType::kAdded, Claim("imagenet", "ml-imagenet", "fluid", "ReadOnlyMany"));
  c.OnPod(EventType::kAdded, PodObject("p", ClaimVolume("imagenet")));
  const Task* t = TaskNamed(c.state(), "ml/p");
  ASSERT_NE(t, nullptr) << m.Of("p");
  EXPECT_EQ(c.state().spec(t->spec).datasets, std::vector<std::string>{"ml/imagenet"});
  EXPECT_EQ(Placements(c), "ml/p@b");
}

TEST(ClusterCacheDatasets, AMalformedPodAnnotationKeepsThePodPendingSayingWhy) {
  ClusterCache c("gantry");
  Messages m(c);
  c.OnNode(EventType::kAdded, NodeObject("a"));
  c.OnPod(EventType::kAdded,
          Annotated(PodObject("p", json::array()), "gantry.dev/datasets", "ml/a,,ml/b"));
  EXPECT_EQ(TaskNamed(c.state(), "ml/p"), nullptr);
  EXPECT_TRUE(Contains(m.Of("p"), "metadata.annotations[gantry.dev/datasets]: \"ml/a,,ml/b\""))
      << m.Of("p");
}

TEST(ClusterCacheDatasets, AMalformedNodeAnnotationIsAWarningOnceAndTheNodeStays) {
  ClusterCache c("gantry");
  const json bad = Annotated(NodeObject("n"), "gantry.dev/cached-datasets", "imagenet");
  c.OnNode(EventType::kAdded, bad);
  c.OnNode(EventType::kModified, bad);
  const std::vector<ObjectEvent> events = c.TakeProblems();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].reason, "InvalidCachedDatasets");
  EXPECT_TRUE(Contains(events[0].message, "\"imagenet\" is not namespace/name"))
      << events[0].message;
  const NodeId n = c.state().FindNode("n");
  ASSERT_NE(n, kNone);
  EXPECT_FALSE(c.state().node(n).removed);
  EXPECT_TRUE(c.state().node(n).cached_datasets.empty());
  // Fixed, then broken again: said again.
  c.OnNode(EventType::kModified, Annotated(NodeObject("n"), "gantry.dev/cached-datasets", "ml/a"));
  EXPECT_EQ(c.state().node(n).cached_datasets, std::vector<std::string>{"ml/a"});
  c.OnNode(EventType::kModified, bad);
  EXPECT_EQ(c.TakeProblems().size(), 1u);
}

json FluidDataset(const std::string& name, const std::string& total) {
  return {{"apiVersion", "data.fluid.io/v1alpha1"},
          {"kind", "Dataset"},
          {"metadata", {{"name", name}, {"namespace", "ml"}, {"uid", "uid-" + name}}},
          {"status", {{"ufsTotal", total}}}};
}

TEST(ClusterCacheDatasets, FluidDatasetsGiveSizesAndLeaveWithTheirObject) {
  ClusterCache c("gantry");
  c.OnFluidDataset(EventType::kAdded, FluidDataset("imagenet", "150GiB"));
  const DatasetInfo* info = c.state().datasets().Find("ml/imagenet");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->size_bytes, int64_t{150} << 30);
  EXPECT_EQ(info->uid, "uid-imagenet");
  // A size that cannot be read is an event, and the size is unknown again.
  c.OnFluidDataset(EventType::kModified, FluidDataset("imagenet", "150 XB"));
  EXPECT_EQ(c.state().datasets().Find("ml/imagenet"), nullptr);
  const std::vector<ObjectEvent> events = c.TakeProblems();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].reason, "InvalidDataset");
  c.OnFluidDataset(EventType::kModified, FluidDataset("imagenet", "1TiB"));
  EXPECT_EQ(c.state().datasets().Find("ml/imagenet")->size_bytes, int64_t{1} << 40);
  c.OnFluidDataset(EventType::kDeleted, FluidDataset("imagenet", "1TiB"));
  EXPECT_TRUE(c.state().datasets().all().empty());
}

}  // namespace
}  // namespace gantry

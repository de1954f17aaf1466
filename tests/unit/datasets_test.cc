// Datasets in the model (model/datasets.h): names, lists, Fluid's cache labels, sizes, and
// what ClusterState keeps of them.
#include "model/datasets.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/cluster.h"
#include "model/limits.h"
#include "tests/unit/test_cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

TEST(DatasetNameTest, NamespaceAndNameAsKubernetesNamesObjects) {
  for (const char* good : {"ml/imagenet", "team-a/coco.v2", "a/b", "ns1/x-1.y"}) {
    EXPECT_TRUE(CheckDatasetName(good).ok()) << good;
  }
  struct Bad {
    const char* name;
    const char* why;
  };
  for (const Bad& b : {Bad{"imagenet", "is not namespace/name"},
                       Bad{"/imagenet", "its namespace is empty"}, Bad{"ml/", "its name is empty"},
                       Bad{"ML/imagenet", "its namespace may hold only lowercase"},
                       Bad{"ml.x/imagenet", "its namespace may hold only lowercase"},
                       Bad{"ml/Image", "its name may hold only lowercase"},
                       Bad{"ml/a/b", "its name may hold only lowercase"},
                       Bad{"-ml/a", "must begin and end with a letter or digit"},
                       Bad{"ml/a.", "must begin and end with a letter or digit"}}) {
    Status st = CheckDatasetName(b.name);
    ASSERT_FALSE(st.ok()) << b.name;
    EXPECT_TRUE(Contains(st.message(), b.why)) << st.message();
  }
  EXPECT_TRUE(
      Contains(CheckDatasetName(std::string(64, 'a') + "/x").message(), "longer than 63 bytes"));
  EXPECT_TRUE(
      Contains(CheckDatasetName("a/" + std::string(254, 'b')).message(), "longer than 253 bytes"));
  // Hostile bytes are escaped and cut in the message.
  const std::string message = CheckDatasetName(std::string(500, '\n')).message();
  EXPECT_LT(message.size(), 400u);
  EXPECT_TRUE(Contains(message, "\\x0a"));
}

TEST(DatasetListTest, SortedEachOnceBareNamesInTheDefaultNamespace) {
  auto list = ParseDatasetList(" ml/b, imagenet ,ml/a,ml/b", "ml", 8);
  ASSERT_TRUE(list.ok()) << list.status().message();
  EXPECT_EQ(*list, (std::vector<std::string>{"ml/a", "ml/b", "ml/imagenet"}));
  // No default namespace: a bare name is an error.
  EXPECT_TRUE(Contains(ParseDatasetList("imagenet", "", 8).status().message(),
                       "\"imagenet\" is not namespace/name"));
  EXPECT_TRUE(Contains(ParseDatasetList("ml/a,,ml/b", "", 8).status().message(), "empty entry"));
  EXPECT_TRUE(Contains(ParseDatasetList("", "", 8).status().message(), "empty entry"));
  EXPECT_TRUE(
      Contains(ParseDatasetList("a/1,a/2,a/3", "", 2).status().message(), "more than 2 datasets"));
}

TEST(DatasetListTest, NormalizeChecksSortsAndBounds) {
  std::vector<std::string> names{"ml/b", "ml/a", "ml/b"};
  ASSERT_TRUE(NormalizeDatasetList(&names, 2).ok());
  EXPECT_EQ(names, (std::vector<std::string>{"ml/a", "ml/b"}));
  std::vector<std::string> bad{"ml/a", "Bad"};
  EXPECT_FALSE(NormalizeDatasetList(&bad, 8).ok());
  std::vector<std::string> many{"a/1", "a/2", "a/3"};
  EXPECT_TRUE(Contains(NormalizeDatasetList(&many, 2).message(), "3 datasets; the limit is 2"));
}

TEST(FluidCacheLabelTest, FromTheNamesOrTheUidOfALongOne) {
  EXPECT_EQ(FluidCacheLabel("team-a/imagenet", ""), "fluid.io/s-team-a-imagenet");
  // Fluid keys "fluid.io/s-<ns>-<name>" of 63 bytes or more by the Dataset's uid.
  const std::string ns(20, 'n'), name(31, 'x');  // 11 + 20 + 1 + 31 = 63 bytes
  EXPECT_EQ(FluidCacheLabel(ns + "/" + name, ""), "");
  EXPECT_EQ(FluidCacheLabel(ns + "/" + name, "0f1e"), "fluid.io/s-0f1e");
  EXPECT_EQ(FluidCacheLabel(ns + "/" + name.substr(1), "0f1e"),
            "fluid.io/s-" + ns + "-" + name.substr(1));
  EXPECT_EQ(FluidCacheLabel("no-slash", "u"), "");
}

TEST(FluidCacheLabelTest, ANodeCachesByItsListOrALabelTrue) {
  Labels labels;
  labels.Set("fluid.io/s-team-a-imagenet", "true");
  labels.Set("fluid.io/s-ml-coco", "false");
  const std::vector<std::string> cached{"ml/a"};
  EXPECT_TRUE(NodeCachesDataset(labels, cached, "ml/a", FluidCacheLabel("ml/a", "")));
  EXPECT_TRUE(
      NodeCachesDataset(labels, cached, "team-a/imagenet", FluidCacheLabel("team-a/imagenet", "")));
  // The key is ambiguous, and both datasets it could name are taken as cached.
  EXPECT_TRUE(
      NodeCachesDataset(labels, cached, "team/a-imagenet", FluidCacheLabel("team/a-imagenet", "")));
  EXPECT_FALSE(NodeCachesDataset(labels, cached, "ml/coco", FluidCacheLabel("ml/coco", "")));
  EXPECT_FALSE(NodeCachesDataset(labels, cached, "ml/b", FluidCacheLabel("ml/b", "")));
  EXPECT_FALSE(NodeCachesDataset(labels, cached, "team-a/imagenet", ""));  // labels not read
}

TEST(DatasetSizeTest, QuantitiesAndFluidsUfsTotal) {
  struct Case {
    const char* text;
    int64_t bytes;
  };
  for (const Case& c :
       {Case{"200Gi", 200 * kGiB}, Case{"52.18GiB", 56027848376}, Case{"1.5 TiB", 1649267441664},
        Case{"512B", 512}, Case{"1000000", 1000000}, Case{"2G", 2000000000}, Case{"3KB", 3000},
        Case{"1k", 1000}, Case{" 7Mi ", 7 << 20}, Case{"0.5", 1}, Case{"0Gi", 0}}) {
    auto size = ParseDatasetSize(c.text);
    ASSERT_TRUE(size.ok()) << c.text << ": " << size.status().message();
    EXPECT_EQ(*size, c.bytes) << c.text;
  }
  auto unit = ParseDatasetSize("10XB");
  ASSERT_FALSE(unit.ok());
  EXPECT_TRUE(Contains(unit.status().message(),
                       "dataset size \"10XB\": unknown unit \"XB\" (known: B, Ki, Mi"))
      << unit.status().message();
  for (const char* bad : {"", "GiB", "-5Gi", "1.2.3Gi", "[Calculating]", "1e3"}) {
    EXPECT_FALSE(ParseDatasetSize(bad).ok()) << bad;
  }
  EXPECT_TRUE(Contains(ParseDatasetSize("1234567890123456789").status().message(), "too many"));
  EXPECT_TRUE(Contains(ParseDatasetSize("8EiB").status().message(), "more bytes than 2^63 - 1"));
}

TEST(ClusterDatasetsTest, TableSortedCheckedAndBounded) {
  ClusterState c;
  ASSERT_TRUE(c.SetDatasets({Info("ml/b", 2, "", -1), Info("ml/a", 1, "u", 5)}).ok());
  ASSERT_EQ(c.datasets().all().size(), 2u);
  EXPECT_EQ(c.datasets().all()[0].name, "ml/a");
  ASSERT_NE(c.datasets().Find("ml/b"), nullptr);
  EXPECT_EQ(c.datasets().Find("ml/b")->size_bytes, 2);
  EXPECT_EQ(c.datasets().Find("ml/c"), nullptr);
  EXPECT_TRUE(Contains(c.SetDatasets({Info("ml/a"), Info("ml/a")}).message(), "described twice"));
  EXPECT_FALSE(c.SetDatasets({Info("Bad")}).ok());
  EXPECT_FALSE(c.SetDatasets({Info("ml/a", -1)}).ok());
  EXPECT_EQ(c.datasets().all().size(), 2u);  // a refused table leaves the old one
  std::vector<DatasetInfo> many(kMaxKnownDatasets + 1);
  for (size_t i = 0; i < many.size(); ++i) many[i].name = "ns/d" + std::to_string(i);
  EXPECT_TRUE(Contains(c.SetDatasets(many).message(), "the limit is"));
  // One at a time (the daemon's Fluid Datasets).
  ASSERT_TRUE(c.SetDataset(Info("ml/aa", 7)).ok());
  ASSERT_TRUE(c.SetDataset(Info("ml/a", 9)).ok());
  EXPECT_EQ(c.datasets().Find("ml/a")->size_bytes, 9);
  EXPECT_EQ(c.datasets().all()[1].name, "ml/aa");
  c.RemoveDataset("ml/aa");
  c.RemoveDataset("ml/none");
  EXPECT_EQ(c.datasets().Find("ml/aa"), nullptr);
  EXPECT_EQ(c.datasets().all().size(), 2u);
}

TEST(ClusterDatasetsTest, NodesCachedListCheckedSortedAndBounded) {
  ClusterState c;
  Node node;
  node.name = "n";
  node.cached_datasets = {"ml/b", "ml/a", "ml/b"};
  const NodeId id = Must(c.AddNode(node));
  EXPECT_EQ(c.node(id).cached_datasets, (std::vector<std::string>{"ml/a", "ml/b"}));
  Node bad;
  bad.name = "bad";
  bad.cached_datasets = {"nope"};
  EXPECT_TRUE(Contains(c.AddNode(bad).status().message(), "node \"bad\": cached datasets"));
  bad.cached_datasets.clear();
  for (size_t i = 0; i <= kMaxCachedDatasetsPerNode; ++i)
    bad.cached_datasets.push_back("ns/d" + std::to_string(i));
  EXPECT_TRUE(Contains(c.AddNode(bad).status().message(), "the limit is"));
  const uint64_t stamp = c.node_stamp(id);
  ASSERT_TRUE(c.SetCachedDatasets(id, {"ml/c"}).ok());
  EXPECT_EQ(c.node(id).cached_datasets, std::vector<std::string>{"ml/c"});
  EXPECT_NE(c.node_stamp(id), stamp);
  EXPECT_FALSE(c.SetCachedDatasets(id, {"Bad"}).ok());
  EXPECT_EQ(c.node(id).cached_datasets, std::vector<std::string>{"ml/c"});
}

TEST(ClusterDatasetsTest, CachedDatasetsAndFluidLabelsSplitNoShapeClass) {
  // A spec that reads datasets reads no node label through a predicate: the nodes that
  // cache it and the nodes that do not stay one class.
  ClusterState c;
  Node plain;
  plain.name = "plain";
  plain.allocatable = ResourceVector{{kCpu, 8000}};
  Node cached = plain;
  cached.name = "cached";
  cached.cached_datasets = {"ml/a"};
  Node labelled = plain;
  labelled.name = "labelled";
  labelled.labels.Set("fluid.io/s-ml-a", "true");
  const NodeId a = Must(c.AddNode(plain)), b = Must(c.AddNode(cached)),
               d = Must(c.AddNode(labelled));
  TaskSpec spec = CpuSpec(1000);
  spec.datasets = {"ml/a"};
  c.AddSpec(spec);
  EXPECT_EQ(c.shape_classes().referenced_label_key_count(), 0u);
  EXPECT_EQ(c.node(a).shape_class, c.node(b).shape_class);
  EXPECT_EQ(c.node(a).shape_class, c.node(d).shape_class);
}

TEST(ClusterDatasetsTest, SpecsWithDatasetsAreCountedAndPartOfTheSpec) {
  ClusterState c;
  TaskSpec plain = CpuSpec(1000);
  TaskSpec reads = plain;
  reads.datasets = {"ml/a"};
  EXPECT_FALSE(plain == reads);
  EXPECT_NE(TaskSpecHash()(plain), TaskSpecHash()(reads));
  TaskSpec other = plain;
  other.datasets = {"ml/b"};
  EXPECT_NE(TaskSpecHash()(reads), TaskSpecHash()(other));
  EXPECT_EQ(c.specs_with_datasets(), 0u);
  const SpecId p = c.AddSpec(plain);
  const SpecId r = c.AddSpec(reads);
  EXPECT_EQ(c.specs_with_datasets(), 1u);
  c.ReplaceSpec(p, other);
  EXPECT_EQ(c.specs_with_datasets(), 2u);
  c.ReplaceSpec(r, plain);
  c.ReplaceSpec(p, plain);
  EXPECT_EQ(c.specs_with_datasets(), 0u);
}

}  // namespace
}  // namespace gantry

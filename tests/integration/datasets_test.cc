// Dataset locality on the real API server (issue 13): three alike nodes, one labelled by
// Fluid as caching ml data and one annotated by Gantry as caching another dataset; a pod
// annotated with the dataset it reads is bound to the node that caches it, and one whose
// annotation is malformed waits with a message naming the annotation and its value.
#include <gtest/gtest.h>

#include <string>

#include "tests/integration/daemon_process.h"
#include "tests/integration/testenv.h"

namespace gantry::testing {
namespace {

using json = nlohmann::json;
using std::chrono::seconds;

TestEnv& Env() {
  return TestEnv::Get();
}

json DataPod(const std::string& test, const std::string& name, const std::string& datasets) {
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name}, {"namespace", test}, {"annotations", {{"gantry.dev/datasets", datasets}}}}},
      {"spec",
       {{"schedulerName", "gantry-" + test},
        {"nodeSelector", {{"gantry-test", test}}},
        {"containers",
         {{{"name", "main"},
           {"image", "busybox"},
           {"resources",
            {{"requests", {{"cpu", "1"}, {"nvidia.com/gpu", "1"}}},
             {"limits", {{"nvidia.com/gpu", "1"}}}}}}}}}}};
}

Result<json> GetPod(const std::string& test, const std::string& name) {
  return Env().Call("GET", "/api/v1/namespaces/" + test + "/pods/" + name);
}

TEST(Datasets, APodGoesToTheNodeCachingItsDataset) {
  const std::string test = "datasets";
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  const std::string fluid = test + "-node-2", annotated = test + "-node-1";
  for (const std::string& node : {test + "-node-0", annotated, fluid}) {
    std::map<std::string, std::string> labels{{"gantry-test", test}};
    if (node == fluid) labels["fluid.io/s-datasets-imagenet"] = "true";
    auto created = Env().CreateNode(node, 8, "64", "512Gi", labels);
    ASSERT_TRUE(created.ok()) << created.status().message();
  }
  auto annotate = Env().Call(
      "PATCH", "/api/v1/nodes/" + annotated,
      {{"metadata", {{"annotations", {{"gantry.dev/cached-datasets", "datasets/coco"}}}}}},
      "application/merge-patch+json");
  ASSERT_TRUE(annotate.ok()) << annotate.status().message();
  ASSERT_TRUE(Env().Apply(DataPod(test, "train", "imagenet")).ok());
  ASSERT_TRUE(Env().Apply(DataPod(test, "eval", "datasets/coco")).ok());
  ASSERT_TRUE(Env().Apply(DataPod(test, "typo", "datasets/ImageNet")).ok());
  // The shared test configuration names its plugins; datalocality joins them.
  std::string config = DaemonConfig("gantry-" + test);
  const size_t binpack = config.find("binpack]");
  ASSERT_NE(binpack, std::string::npos) << config;
  config.replace(binpack, 8, "binpack, datalocality]");
  DaemonProcess daemon(test, config, "d-" + test);
  for (const auto& [pod, node] : {std::pair{"train", fluid}, std::pair{"eval", annotated}}) {
    ASSERT_TRUE(TestEnv::WaitFor(
        [&] {
          auto p = GetPod(test, pod);
          return p.ok() && (*p)["spec"].value("nodeName", "") == node;
        },
        seconds(20)))
        << pod << ": " << (GetPod(test, pod).ok() ? GetPod(test, pod)->dump() : "") << "\n"
        << daemon.Log();
  }
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        auto p = GetPod(test, "typo");
        return p.ok() && PodScheduledMessage(*p).find(
                             "metadata.annotations[gantry.dev/datasets]: \"datasets/ImageNet\"") !=
                             std::string::npos;
      },
      seconds(20)))
      << daemon.Log();
  auto typo = GetPod(test, "typo");
  ASSERT_TRUE(typo.ok());
  EXPECT_FALSE((*typo)["spec"].contains("nodeName"));
}

}  // namespace
}  // namespace gantry::testing

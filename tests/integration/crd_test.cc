// The CRDs and examples of deploy/ against a real API server: the CRDs install and become
// Established, every example is accepted by their schemas, and the objects the server
// gives back decode into what the scheduler reads. An informer started before its CRD is
// installed is synced as empty and picks the objects up once the CRD arrives.
//
// Each CRD is applied by exactly one test: the server outlives the tests, so order
// between tests must not matter.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "k8s/dra_objects.h"
#include "k8s/informer.h"
#include "k8s/objects.h"
#include "tests/integration/testenv.h"

namespace gantry::testing {
namespace {

using json = nlohmann::json;
using std::chrono::seconds;

const std::string kDeploy = std::string(GANTRY_SOURCE_DIR) + "/deploy";

TEST(CrdTest, ResourceWithoutItsCrdSyncsAsEmptyAndAppearsOnceInstalled) {
  TestEnv& env = TestEnv::Get();
  std::mutex mu;
  std::vector<std::pair<k8s::EventType, json>> events;
  k8s::InformerOptions options;
  options.missing_retry_s = 0.3;
  k8s::Informer informer(
      env.client(), "/apis/scheduling.x-k8s.io/v1alpha1/podgroups",
      [&](k8s::EventType type, const json& object) {
        std::lock_guard<std::mutex> lock(mu);
        events.emplace_back(type, object);
      },
      options);
  std::atomic<bool> stop{false};
  std::thread thread([&] { informer.Run(stop); });
  struct Joiner {
    std::atomic<bool>& stop;
    std::thread& thread;
    ~Joiner() {
      stop = true;
      thread.join();
    }
  } joiner{stop, thread};

  ASSERT_TRUE(TestEnv::WaitFor([&] { return informer.synced(); }, seconds(10)));
  EXPECT_NE(informer.last_error().find("404"), std::string::npos) << informer.last_error();
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_TRUE(events.empty());
  }

  auto crd = env.ApplyYamlFile(kDeploy + "/crds/scheduling.x-k8s.io_podgroups.yaml");
  ASSERT_TRUE(crd.ok()) << crd.status().message();
  auto example = env.ApplyYamlFile(kDeploy + "/examples/scheduler-plugins-job.yaml");
  ASSERT_TRUE(example.ok()) << example.status().message();

  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        std::lock_guard<std::mutex> lock(mu);
        return !events.empty();
      },
      seconds(15)))
      << informer.last_error();
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].first, k8s::EventType::kAdded);
  auto group = k8s::ParsePodGroup(events[0].second, k8s::GroupApi::kCoscheduling);
  ASSERT_TRUE(group.ok()) << group.status().message();
  EXPECT_EQ(group->meta.Key(), "ml/nccl-allreduce");
  EXPECT_EQ(group->min_member, 4);
  EXPECT_GE(informer.lists(), 2);
  EXPECT_EQ(informer.last_error(), "");

  // Its pods point at the group through the label.
  auto pod = env.Call("GET", "/api/v1/namespaces/ml/pods/nccl-allreduce-0");
  ASSERT_TRUE(pod.ok()) << pod.status().message();
  auto info = k8s::ParsePod(*pod);
  ASSERT_TRUE(info.ok()) << info.status().message();
  EXPECT_EQ(info->group_api, k8s::GroupApi::kCoscheduling);
  EXPECT_EQ(info->group, "nccl-allreduce");
  EXPECT_EQ(info->spec.gpu.count, 2);
}

TEST(CrdTest, VolcanoCrdsAcceptTheExamplesAndTheObjectsDecode) {
  TestEnv& env = TestEnv::Get();
  for (const char* file :
       {"/crds/scheduling.volcano.sh_queues.yaml", "/crds/scheduling.volcano.sh_podgroups.yaml",
        "/examples/queues.yaml", "/examples/training-job.yaml", "/examples/fractional-gpu.yaml"}) {
    auto applied = env.ApplyYamlFile(kDeploy + file);
    ASSERT_TRUE(applied.ok()) << applied.status().message();
    EXPECT_FALSE(applied->empty()) << file;
  }

  auto queue = env.Call("GET", "/apis/scheduling.volcano.sh/v1beta1/queues/research");
  ASSERT_TRUE(queue.ok()) << queue.status().message();
  auto research = k8s::ParseQueue(*queue);
  ASSERT_TRUE(research.ok()) << research.status().message();
  EXPECT_EQ(research->weight, 2);

  auto group =
      env.Call("GET", "/apis/scheduling.volcano.sh/v1beta1/namespaces/ml/podgroups/llama-ft");
  ASSERT_TRUE(group.ok()) << group.status().message();
  auto llama = k8s::ParsePodGroup(*group, k8s::GroupApi::kVolcano);
  ASSERT_TRUE(llama.ok()) << llama.status().message();
  EXPECT_EQ(llama->min_member, 8);
  EXPECT_EQ(llama->queue, "research");

  auto pods = env.Call("GET", "/api/v1/namespaces/ml/pods?labelSelector=app%3Dllama-ft");
  ASSERT_TRUE(pods.ok()) << pods.status().message();
  ASSERT_EQ((*pods)["items"].size(), 8u);
  for (const json& item : (*pods)["items"]) {
    auto pod = k8s::ParsePod(item);
    ASSERT_TRUE(pod.ok()) << pod.status().message();
    EXPECT_EQ(pod->group, "llama-ft");
    EXPECT_EQ(pod->group_api, k8s::GroupApi::kVolcano);
    EXPECT_EQ(pod->scheduler_name, "gantry");
    EXPECT_EQ(pod->spec.gpu.count, 8);
  }

  auto notebook = env.Call("GET", "/api/v1/namespaces/notebooks/pods/notebook-alice");
  ASSERT_TRUE(notebook.ok()) << notebook.status().message();
  auto alice = k8s::ParsePod(*notebook);
  ASSERT_TRUE(alice.ok()) << alice.status().message();
  EXPECT_EQ(alice->spec.gpu.milli, 500);
  EXPECT_EQ(alice->queue, "research");
}

// The DRA example: the API server accepts its template and pods, and they read back as a
// template of one H100 and a gang whose pods each name it.
TEST(CrdTest, TheDraExampleIsAcceptedAndItsObjectsDecode) {
  TestEnv& env = TestEnv::Get();
  // The PodGroup CRD, unless the test before installed it.
  for (const char* file :
       {"/crds/scheduling.volcano.sh_queues.yaml", "/crds/scheduling.volcano.sh_podgroups.yaml"}) {
    auto applied = env.ApplyYamlFile(kDeploy + file);
    ASSERT_TRUE(applied.ok() ||
                applied.status().message().find("already exists") != std::string::npos)
        << file << ": " << applied.status().message();
  }
  auto applied = env.ApplyYamlFile(kDeploy + "/examples/dra-gpu-job.yaml");
  ASSERT_TRUE(applied.ok()) << applied.status().message();
  EXPECT_EQ(applied->size(), 5u);
  auto object =
      env.Call("GET", "/apis/resource.k8s.io/v1/namespaces/dra-ml/resourceclaimtemplates/one-h100");
  ASSERT_TRUE(object.ok()) << object.status().message();
  auto claim_template = k8s::DecodeResourceClaimTemplate(*object);
  ASSERT_TRUE(claim_template.ok()) << claim_template.status().message();
  ASSERT_EQ(claim_template->spec.requests.size(), 1u);
  ASSERT_TRUE(claim_template->spec.requests[0].exactly.has_value());
  EXPECT_EQ(claim_template->spec.requests[0].exactly->device_class_name, "gpu.nvidia.com");
  EXPECT_EQ(claim_template->spec.requests[0].exactly->selectors.size(), 1u);

  auto pods = env.Call("GET", "/api/v1/namespaces/dra-ml/pods?labelSelector=app%3Dddp-dra");
  ASSERT_TRUE(pods.ok()) << pods.status().message();
  ASSERT_EQ((*pods)["items"].size(), 2u);
  for (const json& item : (*pods)["items"]) {
    auto pod = k8s::ParsePod(item);
    ASSERT_TRUE(pod.ok()) << pod.status().message();
    EXPECT_EQ(pod->group, "ddp-dra");
    ASSERT_EQ(pod->resource_claims.size(), 1u);
    EXPECT_EQ(pod->resource_claims[0].resource_claim_template_name, "one-h100");
  }
}

}  // namespace
}  // namespace gantry::testing

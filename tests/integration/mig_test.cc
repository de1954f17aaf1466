// MIG on the real API server (issue 13): a node labelled and advertised as the GPU
// operator's mixed strategy does it, a pod asking for a MIG profile's resource. While the
// MIG manager reports the node being re-cut (nvidia.com/mig.config.state: pending) the pod
// waits and says why; once the state is success it is bound there.
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

// A node of two A100-80GB GPUs cut into 7 x 1g.10gb each, as GPU feature discovery labels
// it and the device plugin advertises it.
void CreateMigNode(const std::string& test, const std::string& name, const std::string& state) {
  json node = {{"apiVersion", "v1"},
               {"kind", "Node"},
               {"metadata",
                {{"name", name},
                 {"labels",
                  {{"gantry-test", test},
                   {"kubernetes.io/hostname", name},
                   {"nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB"},
                   {"nvidia.com/mig.strategy", "mixed"},
                   {"nvidia.com/mig-1g.10gb.count", "14"},
                   {"nvidia.com/mig.config.state", state}}}}}};
  auto created = Env().Call("POST", "/api/v1/nodes", node);
  ASSERT_TRUE(created.ok()) << created.status().message();
  json resources = {
      {"cpu", "32"}, {"memory", "256Gi"}, {"pods", "110"}, {"nvidia.com/mig-1g.10gb", "14"}};
  json status = {
      {"status",
       {{"capacity", resources},
        {"allocatable", resources},
        {"conditions", {{{"type", "Ready"}, {"status", "True"}, {"reason", "KubeletReady"}}}}}}};
  auto patched = Env().Call("PATCH", "/api/v1/nodes/" + name + "/status", status,
                            "application/merge-patch+json");
  ASSERT_TRUE(patched.ok()) << patched.status().message();
}

json MigPod(const std::string& test, const std::string& name, const std::string& profile) {
  json slices = {{"nvidia.com/mig-" + profile, "1"}};
  json requests = slices;
  requests["cpu"] = "500m";
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", test}}},
          {"spec",
           {{"schedulerName", "gantry-" + test},
            {"nodeSelector", {{"gantry-test", test}}},
            {"containers",
             {{{"name", "main"},
               {"image", "busybox"},
               {"resources", {{"requests", requests}, {"limits", slices}}}}}}}}};
}

Result<json> GetPod(const std::string& test, const std::string& name) {
  return Env().Call("GET", "/api/v1/namespaces/" + test + "/pods/" + name);
}

TEST(Mig, APodWaitsWhileItsNodeIsReCutThenGetsASlice) {
  const std::string test = "mig";
  ASSERT_TRUE(Env().CreateNamespace(test).ok());
  const std::string node = test + "-node-0";
  CreateMigNode(test, node, "pending");
  auto pod = Env().Apply(MigPod(test, "infer", "1g.10gb"));
  ASSERT_TRUE(pod.ok()) << pod.status().message();
  // A profile no GPU has: refused by name, whatever the nodes.
  auto unknown = Env().Apply(MigPod(test, "typo", "1g.11gb"));
  ASSERT_TRUE(unknown.ok()) << unknown.status().message();
  DaemonProcess daemon(test, DaemonConfig("gantry-" + test), "d-" + test);
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        auto p = GetPod(test, "infer");
        return p.ok() &&
               PodScheduledMessage(*p).find("MIG devices being reconfigured") != std::string::npos;
      },
      seconds(20)))
      << daemon.Log();
  // The MIG manager is done.
  auto done = Env().Call("PATCH", "/api/v1/nodes/" + node,
                         {{"metadata", {{"labels", {{"nvidia.com/mig.config.state", "success"}}}}}},
                         "application/merge-patch+json");
  ASSERT_TRUE(done.ok()) << done.status().message();
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        auto p = GetPod(test, "infer");
        return p.ok() && (*p)["spec"].value("nodeName", "") == node;
      },
      seconds(20)))
      << daemon.Log();
  ASSERT_TRUE(TestEnv::WaitFor(
      [&] {
        auto p = GetPod(test, "typo");
        return p.ok() &&
               PodScheduledMessage(*p).find("unknown MIG profile \"1g.11gb\"") != std::string::npos;
      },
      seconds(20)))
      << daemon.Log();
  auto typo = GetPod(test, "typo");
  ASSERT_TRUE(typo.ok());
  EXPECT_FALSE((*typo)["spec"].contains("nodeName"));
}

}  // namespace
}  // namespace gantry::testing

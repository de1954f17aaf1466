// Kubernetes objects decoded into what the scheduler needs. Expected values are worked
// out from the Kubernetes documentation (resource requests, init containers, pod
// overhead, taints and tolerations, node affinity) and from Volcano's and
// scheduler-plugins' CRDs, not from the decoder's output.
#include "k8s/objects.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/limits.h"
#include "tests/unit/test_util.h"

namespace gantry::k8s {
namespace {

using json = nlohmann::json;

constexpr Milli kMi = 1024LL * 1024 * kMilliPerUnit;
constexpr Milli kGi = 1024 * kMi;

// A pod ml/p whose spec and metadata extras are given as JSON text.
json Pod(const std::string& spec, const std::string& metadata_extra = "",
         const std::string& status = "{}") {
  std::string metadata = R"({"name": "p", "namespace": "ml", "uid": "u-1", "resourceVersion": "7")";
  if (!metadata_extra.empty()) metadata += ", " + metadata_extra;
  metadata += "}";
  return json::parse(R"({"apiVersion": "v1", "kind": "Pod", "metadata": )" + metadata +
                     R"(, "spec": )" + spec + R"(, "status": )" + status + "}");
}

// The error a pod is rejected with; fails the test when it is accepted.
std::string PodError(const json& pod) {
  auto r = ParsePod(pod);
  EXPECT_FALSE(r.ok()) << pod.dump();
  return r.ok() ? "" : r.status().message();
}

// A pod with one container asking for `requests` and nothing else, annotated.
json AnnotatedPod(const std::string& annotations, const std::string& requests = "{}") {
  return Pod(R"({"containers": [{"name": "c", "resources": {"requests": )" + requests + "}}]}",
             R"("annotations": )" + annotations);
}

// ---------------------------------------------------------------------------------------
// Pods: metadata and plain fields

TEST(ParsePod, MetadataAndPlainFields) {
  json pod = Pod(R"({"schedulerName": "gantry", "nodeName": "n3", "priority": 1000,
                     "containers": [{"name": "c"}]})",
                 R"("deletionTimestamp": "2024-01-01T00:00:00Z")", R"({"phase": "Running"})");
  PodInfo p = Must(ParsePod(pod));
  EXPECT_EQ(p.meta.namespace_, "ml");
  EXPECT_EQ(p.meta.name, "p");
  EXPECT_EQ(p.meta.uid, "u-1");
  EXPECT_EQ(p.meta.resource_version, "7");
  EXPECT_TRUE(p.meta.deleting);
  EXPECT_EQ(p.meta.Key(), "ml/p");
  EXPECT_EQ(p.scheduler_name, "gantry");
  EXPECT_EQ(p.node_name, "n3");
  EXPECT_EQ(p.phase, "Running");
  EXPECT_FALSE(p.finished());
  EXPECT_EQ(p.priority, 1000);
  EXPECT_EQ(p.spec.priority, 1000);
  EXPECT_EQ(p.group_api, GroupApi::kNone);
  EXPECT_EQ(p.group, "");
  EXPECT_EQ(p.queue, "");
  EXPECT_TRUE(p.gpu_devices.empty());
  EXPECT_EQ(p.unschedulable_message, "");
}

TEST(ParsePod, CreationTimestampInSecondsSinceTheEpoch) {
  const std::string spec = R"({"containers": [{"name": "c"}]})";
  EXPECT_EQ(
      Must(ParsePod(Pod(spec, R"("creationTimestamp": "2024-05-01T12:00:00Z")"))).meta.created,
      1714564800);
  EXPECT_EQ(Must(ParsePod(Pod(spec))).meta.created, 0);  // absent
  EXPECT_EQ(Must(ParsePod(Pod(spec, R"("creationTimestamp": null)"))).meta.created, 0);
  for (const char* bad : {R"("2024-05-01")", "1714564800", R"({"seconds":1})"}) {
    std::string error = PodError(Pod(spec, std::string(R"("creationTimestamp": )") + bad));
    EXPECT_TRUE(Contains(error, "pod ml/p: metadata.creationTimestamp: ")) << error;
    EXPECT_TRUE(Contains(error, bad)) << error;
  }
}

TEST(ParsePod, NamesLongerThanTheApiServerAllowsAreNotScheduled) {
  // Found by the k8s_objects fuzzer: a 254-byte name was taken as it was.
  json pod = Pod(R"({"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]})");
  pod["metadata"]["name"] = std::string(254, 'a');
  const std::string error = PodError(pod);
  EXPECT_TRUE(Contains(error, "254 bytes")) << error;
  EXPECT_TRUE(Contains(error, "limit is 253")) << error;
  // What it asks for is still read, so that a bound one would count.
  std::string problem;
  PodInfo decoded = Must(DecodePod(pod, &problem));
  EXPECT_EQ(decoded.spec.requests.Get(kCpu), 1000);
  EXPECT_FALSE(problem.empty());
}

TEST(ParseNode, NamesLongerThanTheApiServerAllowsAreRefused) {
  // Found by the cluster_cache fuzzer once pod names were held to the limit.
  json node =
      json::parse(R"({"metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "4"}}})");
  node["metadata"]["name"] = std::string(254, 'n');
  auto r = ParseNode(node);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "254 bytes long; the limit is 253"));
  node["metadata"]["name"] = std::string(253, 'n');
  EXPECT_TRUE(ParseNode(node).ok());
}

TEST(ParseMeta, ErrorsQuoteObjectsWhateverTheirBytes) {
  // Found by the yaml_json fuzzer: an object without a name whose label is not UTF-8 made
  // the error message's dump() throw (gantry validate terminated).
  json object = json::object();
  object["metadata"]["labels"]["x"] = std::string("\xff\xfe");
  auto r = ParseMeta(object);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "without metadata.name"));
}

TEST(ParsePod, SchedulerNameDefaultsToDefaultScheduler) {
  // The API server defaults spec.schedulerName to "default-scheduler".
  PodInfo p = Must(ParsePod(Pod(R"({"containers": [{"name": "c"}]})")));
  EXPECT_EQ(p.scheduler_name, "default-scheduler");
  EXPECT_FALSE(p.meta.deleting);
  EXPECT_EQ(p.priority, 0);
}

TEST(ParsePod, FinishedPhases) {
  for (const char* phase : {"Succeeded", "Failed"}) {
    PodInfo p = Must(
        ParsePod(Pod(R"({"containers": []})", "", std::string(R"({"phase": ")") + phase + "\"}")));
    EXPECT_TRUE(p.finished()) << phase;
  }
  PodInfo pending = Must(ParsePod(Pod(R"({"containers": []})", "", R"({"phase": "Pending"})")));
  EXPECT_FALSE(pending.finished());
}

TEST(ParsePod, NameIsRequired) {
  auto r = ParsePod(json::parse(R"({"metadata": {"namespace": "ml"}, "spec": {}})"));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "metadata.name"));
}

TEST(ParsePod, PriorityMustBeAnInteger) {
  std::string e = PodError(Pod(R"({"priority": "high", "containers": []})"));
  EXPECT_TRUE(Contains(e, "pod ml/p")) << e;
  EXPECT_TRUE(Contains(e, "spec.priority")) << e;
}

TEST(ParsePod, PreemptionPolicyNeverIsKeptAndUnknownValuesAreRefused) {
  // The Priority admission plugin copies the PriorityClass's preemptionPolicy into the pod.
  PodInfo never = Must(ParsePod(Pod(R"({"preemptionPolicy": "Never", "containers": []})")));
  EXPECT_EQ(never.spec.preemption_policy, PreemptionPolicy::kNever);
  PodInfo lower =
      Must(ParsePod(Pod(R"({"preemptionPolicy": "PreemptLowerPriority", "containers": []})")));
  EXPECT_EQ(lower.spec.preemption_policy, PreemptionPolicy::kPreemptLowerPriority);
  PodInfo unset = Must(ParsePod(Pod(R"({"containers": []})")));
  EXPECT_EQ(unset.spec.preemption_policy, PreemptionPolicy::kPreemptLowerPriority);
  std::string e = PodError(Pod(R"({"preemptionPolicy": "Sometimes", "containers": []})"));
  EXPECT_TRUE(Contains(e, "spec.preemptionPolicy")) << e;
  EXPECT_TRUE(Contains(e, "Sometimes")) << e;
}

// ---------------------------------------------------------------------------------------
// Pods: what they ask for

TEST(ParsePod, RequestsAreSummedOverContainers) {
  json pod = Pod(R"({"containers": [
      {"name": "a", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}},
      {"name": "b", "resources": {"requests": {"cpu": "1.5", "memory": "512Mi",
                                               "example.com/foo": "3"}}}]})");
  PodInfo p = Must(ParsePod(pod));
  // 0.5 + 1.5 CPUs, 1Gi + 512Mi = 1536Mi, and one pod slot.
  EXPECT_EQ(p.spec.requests.Get(kCpu), 2000);
  EXPECT_EQ(p.spec.requests.Get(kMemory), 1536 * kMi);
  EXPECT_EQ(p.spec.requests.Get(kPods), 1000);
  EXPECT_EQ(p.spec.requests.Get(InternResource("example.com/foo")), 3000);
  EXPECT_EQ(p.spec.requests.Get(kGpu), 0);
  EXPECT_FALSE(p.spec.gpu.wants_gpu());
}

TEST(ParsePod, PodWithoutRequestsStillTakesAPodSlot) {
  PodInfo p = Must(ParsePod(Pod(R"({"containers": [{"name": "c"}]})")));
  EXPECT_EQ(p.spec.requests, (ResourceVector{{kPods, 1000}}));
}

TEST(ParsePod, InitContainersTakeTheLargestPerResource) {
  // Kubernetes: the effective request is, per resource, the larger of the sum over app
  // containers and the largest init container.
  json pod = Pod(R"({
      "containers": [
        {"name": "a", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}},
        {"name": "b", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
      "initContainers": [
        {"name": "i1", "resources": {"requests": {"cpu": "3", "memory": "1Gi"}}},
        {"name": "i2", "resources": {"requests": {"cpu": "500m", "memory": "4Gi"}}}]})");
  PodInfo p = Must(ParsePod(pod));
  EXPECT_EQ(p.spec.requests.Get(kCpu), 3000);        // init 3 > 1 + 1
  EXPECT_EQ(p.spec.requests.Get(kMemory), 4 * kGi);  // init 4Gi > 1Gi + 1Gi
  EXPECT_EQ(p.spec.requests.Get(kPods), 1000);
}

TEST(ParsePod, SmallInitContainersDoNotAdd) {
  json pod = Pod(R"({
      "containers": [{"name": "a", "resources": {"requests": {"cpu": "2", "memory": "2Gi"}}}],
      "initContainers": [
        {"name": "i", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]})");
  PodInfo p = Must(ParsePod(pod));
  EXPECT_EQ(p.spec.requests.Get(kCpu), 2000);
  EXPECT_EQ(p.spec.requests.Get(kMemory), 2 * kGi);
}

TEST(ParsePod, LimitsStandInForMissingRequests) {
  // "If you specify a limit for a resource, but do not specify any request, ... Kubernetes
  // copies the limit you specified and uses it as the requested value."
  json pod = Pod(R"({"containers": [
      {"name": "a", "resources": {"limits": {"cpu": "2", "memory": "4Gi"}}},
      {"name": "b", "resources": {"requests": {"cpu": "1"},
                                  "limits": {"cpu": "3", "memory": "1Gi"}}}]})");
  PodInfo p = Must(ParsePod(pod));
  EXPECT_EQ(p.spec.requests.Get(kCpu), 3000);        // 2 (limit) + 1 (request, not 3)
  EXPECT_EQ(p.spec.requests.Get(kMemory), 5 * kGi);  // 4Gi + 1Gi, both from limits
}

TEST(ParsePod, AnExplicitZeroRequestIsKeptDespiteALimit) {
  // Defaulting copies a limit only where the request is absent; "0" is a request.
  json pod = Pod(R"({"containers": [
      {"name": "a", "resources": {"requests": {"cpu": "0"}, "limits": {"cpu": "2"}}}]})");
  PodInfo p = Must(ParsePod(pod));
  EXPECT_EQ(p.spec.requests.Get(kCpu), 0);
}

TEST(ParsePod, LimitsStandInForInitContainersToo) {
  json pod = Pod(R"({"containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}}}],
                     "initContainers": [{"name": "i", "resources": {"limits": {"cpu": "4"}}}]})");
  EXPECT_EQ(Must(ParsePod(pod)).spec.requests.Get(kCpu), 4000);
}

TEST(ParsePod, OverheadIsAdded) {
  // The Pod Overhead page's example: containers limited to 500m + 1500m CPU and
  // 100Mi + 100Mi memory, overhead 250m and 120Mi: "2.25 CPU and 320 MiB of memory".
  json pod = Pod(R"({
      "containers": [
        {"name": "busybox-ctr", "resources": {"limits": {"cpu": "500m", "memory": "100Mi"}}},
        {"name": "nginx-ctr", "resources": {"limits": {"cpu": "1500m", "memory": "100Mi"}}}],
      "overhead": {"cpu": "250m", "memory": "120Mi"}})");
  PodInfo p = Must(ParsePod(pod));
  EXPECT_EQ(p.spec.requests.Get(kCpu), 2250);
  EXPECT_EQ(p.spec.requests.Get(kMemory), 320 * kMi);
}

TEST(ParsePod, OverheadIsAddedAfterTheInitContainerMaximum) {
  json pod = Pod(R"({
      "containers": [{"name": "a", "resources": {"requests": {"cpu": "1"}}}],
      "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "2"}}}],
      "overhead": {"cpu": "100m"}})");
  EXPECT_EQ(Must(ParsePod(pod)).spec.requests.Get(kCpu), 2100);  // max(1, 2) + 0.1
}

TEST(ParsePod, WholeGpusAreCountedNotKeptAsARequest) {
  // GPUs are usually given in limits only; requests default to them.
  json pod = Pod(R"({"containers": [
      {"name": "a", "resources": {"limits": {"nvidia.com/gpu": 2}}},
      {"name": "b", "resources": {"requests": {"nvidia.com/gpu": "1"},
                                  "limits": {"nvidia.com/gpu": "1"}}}]})");
  PodInfo p = Must(ParsePod(pod));
  EXPECT_EQ(p.spec.gpu.count, 3);
  EXPECT_EQ(p.spec.gpu.milli, 0);
  EXPECT_EQ(p.spec.gpu.memory_mib, 0);
  EXPECT_FALSE(p.spec.gpu.shared());
  EXPECT_EQ(p.spec.requests.Get(kGpu), 0);  // GPUs travel in spec.gpu
  EXPECT_EQ(p.spec.requests.Get(kPods), 1000);
}

TEST(ParsePod, FractionalWholeGpuIsAnErrorNamingTheField) {
  std::string e = PodError(Pod(R"({"containers": [{"name": "a"},
      {"name": "b", "resources": {"limits": {"nvidia.com/gpu": "1.5"}}}]})"));
  EXPECT_TRUE(Contains(e, "pod ml/p: spec.containers[1].resources.limits.nvidia.com/gpu")) << e;
  EXPECT_TRUE(Contains(e, "gantry.dev/gpu-fraction")) << e;  // says how to ask for a share
  e = PodError(Pod(R"({"initContainers": [
      {"name": "i", "resources": {"requests": {"nvidia.com/gpu": "500m"}}}]})"));
  EXPECT_TRUE(Contains(e, "pod ml/p: spec.initContainers[0].resources.requests.nvidia.com/gpu"))
      << e;
}

TEST(ParsePod, TwoHalfGpusAreNotOneWholeGpu) {
  // Extended resources are whole numbers per container; the halves must not add up.
  std::string e = PodError(Pod(R"({"containers": [
      {"name": "a", "resources": {"limits": {"nvidia.com/gpu": 0.5}}},
      {"name": "b", "resources": {"limits": {"nvidia.com/gpu": 0.5}}}]})"));
  EXPECT_TRUE(Contains(e, "pod ml/p: spec.containers[0].resources.limits.nvidia.com/gpu")) << e;
}

TEST(ParsePod, BadQuantityNamesContainerAndResource) {
  std::string e = PodError(Pod(
      R"({"containers": [{"name": "a"}, {"name": "b", "resources": {"requests": {"cpu": "2x"}}}]})"));
  EXPECT_TRUE(Contains(e, "pod ml/p: spec.containers[1].resources.requests.cpu")) << e;
  EXPECT_TRUE(Contains(e, "2x")) << e;
}

TEST(ParsePod, BadOverheadNamesTheField) {
  std::string e = PodError(Pod(R"({"containers": [], "overhead": {"memory": "-1Gi"}})"));
  EXPECT_TRUE(Contains(e, "pod ml/p: spec.overhead.memory")) << e;
}

// Defragmentation: the pod may be moved; a malformed value keeps it from being scheduled.
TEST(ParsePod, MovableAnnotation) {
  EXPECT_TRUE(Must(ParsePod(AnnotatedPod(R"({"gantry.dev/movable": "true"})"))).movable);
  EXPECT_FALSE(Must(ParsePod(AnnotatedPod(R"({"gantry.dev/movable": "false"})"))).movable);
  EXPECT_FALSE(Must(ParsePod(AnnotatedPod("{}"))).movable);
  const std::string e = PodError(AnnotatedPod(R"({"gantry.dev/movable": "maybe"})"));
  EXPECT_TRUE(Contains(e, R"(pod ml/p: metadata.annotations[gantry.dev/movable]: "maybe" is not)"))
      << e;
  // DecodePod still reads the rest (a bound pod counts), and says the problem.
  std::string problem;
  PodInfo p = Must(DecodePod(AnnotatedPod(R"({"gantry.dev/movable": "TRUE"})"), &problem));
  EXPECT_FALSE(p.movable);
  EXPECT_TRUE(Contains(problem, "gantry.dev/movable")) << problem;
}

TEST(ParsePod, GpuFractionAnnotation) {
  PodInfo p = Must(ParsePod(AnnotatedPod(R"({"gantry.dev/gpu-fraction": "0.25"})")));
  EXPECT_EQ(p.spec.gpu.count, 0);
  EXPECT_EQ(p.spec.gpu.milli, 250);
  EXPECT_EQ(p.spec.gpu.memory_mib, 0);
  EXPECT_TRUE(p.spec.gpu.shared());
}

TEST(ParsePod, GpuMemoryAnnotation) {
  PodInfo p = Must(ParsePod(AnnotatedPod(R"({"gantry.dev/gpu-memory": "10240"})")));
  EXPECT_EQ(p.spec.gpu.count, 0);
  EXPECT_EQ(p.spec.gpu.milli, 0);
  EXPECT_EQ(p.spec.gpu.memory_mib, 10240);
  EXPECT_TRUE(p.spec.gpu.shared());
}

TEST(ParsePod, GpuFractionAndMemoryTogether) {
  PodInfo p = Must(ParsePod(
      AnnotatedPod(R"({"gantry.dev/gpu-fraction": "0.5", "gantry.dev/gpu-memory": "20480"})")));
  EXPECT_EQ(p.spec.gpu.milli, 500);
  EXPECT_EQ(p.spec.gpu.memory_mib, 20480);
}

TEST(ParsePod, GpuFractionOutsideZeroToOneIsRejected) {
  for (const char* bad : {"2", "1", "0", "-0.5", "half"}) {
    std::string e =
        PodError(AnnotatedPod(std::string(R"({"gantry.dev/gpu-fraction": ")") + bad + "\"}"));
    EXPECT_TRUE(Contains(e, "pod ml/p: metadata.annotations[gantry.dev/gpu-fraction]")) << e;
    EXPECT_TRUE(Contains(e, std::string("\"") + bad + "\"")) << e;
  }
}

TEST(ParsePod, GpuMemoryMustBeAWholeNumberOfMiB) {
  // "10Gi" is not a number of MiB: read as a quantity it would ask for 10Gi MiB.
  for (const char* bad : {"0", "1.5", "-1", "lots", "10Gi", "1k"}) {
    std::string e =
        PodError(AnnotatedPod(std::string(R"({"gantry.dev/gpu-memory": ")") + bad + "\"}"));
    EXPECT_TRUE(Contains(e, "pod ml/p: metadata.annotations[gantry.dev/gpu-memory]")) << e;
    EXPECT_TRUE(Contains(e, std::string("\"") + bad + "\"")) << e;
  }
}

TEST(ParsePod, WholeGpusAndAFractionIsAnError) {
  std::string e =
      PodError(AnnotatedPod(R"({"gantry.dev/gpu-fraction": "0.5"})", R"({"nvidia.com/gpu": "1"})"));
  EXPECT_TRUE(Contains(e, "pod ml/p: metadata.annotations")) << e;
  EXPECT_TRUE(Contains(e, "not both")) << e;
  e = PodError(AnnotatedPod(R"({"gantry.dev/gpu-memory": "1024"})", R"({"nvidia.com/gpu": 2})"));
  EXPECT_TRUE(Contains(e, "not both")) << e;
}

// ---------------------------------------------------------------------------------------
// Pods: where they may go

TEST(ParsePod, NodeSelector) {
  PodInfo p = Must(ParsePod(Pod(
      R"({"containers": [], "nodeSelector": {"disktype": "ssd", "nvidia.com/gpu.product": "H100"}})")));
  ASSERT_NE(p.spec.node_selector.Find("disktype"), nullptr);
  EXPECT_EQ(*p.spec.node_selector.Find("disktype"), "ssd");
  ASSERT_NE(p.spec.node_selector.Find("nvidia.com/gpu.product"), nullptr);
  EXPECT_EQ(*p.spec.node_selector.Find("nvidia.com/gpu.product"), "H100");
  EXPECT_EQ(p.spec.node_selector.pairs().size(), 2u);
}

TEST(ParsePod, Tolerations) {
  json pod = Pod(R"({"containers": [], "tolerations": [
      {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
      {"key": "team", "operator": "Equal", "value": "ml", "effect": "NoExecute"},
      {"key": "zone", "value": "a"},
      {"operator": "Exists"}]})");
  PodInfo p = Must(ParsePod(pod));
  ASSERT_EQ(p.spec.tolerations.size(), 4u);
  const auto& t = p.spec.tolerations;
  EXPECT_EQ(t[0].key, "nvidia.com/gpu");
  EXPECT_EQ(t[0].op, Toleration::Op::kExists);
  EXPECT_FALSE(t[0].any_effect);
  EXPECT_EQ(t[0].effect, TaintEffect::kNoSchedule);

  EXPECT_EQ(t[1].key, "team");
  EXPECT_EQ(t[1].op, Toleration::Op::kEqual);
  EXPECT_EQ(t[1].value, "ml");
  EXPECT_FALSE(t[1].any_effect);
  EXPECT_EQ(t[1].effect, TaintEffect::kNoExecute);

  // The operator defaults to Equal; no effect tolerates every effect.
  EXPECT_EQ(t[2].op, Toleration::Op::kEqual);
  EXPECT_EQ(t[2].value, "a");
  EXPECT_TRUE(t[2].any_effect);

  // An empty key with Exists tolerates everything.
  EXPECT_EQ(t[3].key, "");
  EXPECT_EQ(t[3].op, Toleration::Op::kExists);
  EXPECT_TRUE(t[3].any_effect);
  EXPECT_TRUE(t[3].Tolerates(Taint{"anything", "x", TaintEffect::kNoExecute}));
}

TEST(ParsePod, BadTolerationOperatorAndEffect) {
  std::string e =
      PodError(Pod(R"({"containers": [], "tolerations": [{"key": "a", "operator": "Exists"},
                                                 {"key": "b", "operator": "Equals"}]})"));
  EXPECT_TRUE(Contains(e, "pod ml/p: spec.tolerations[1].operator")) << e;
  EXPECT_TRUE(Contains(e, "\"Equals\"")) << e;
  e = PodError(Pod(R"({"containers": [], "tolerations": [{"key": "a", "effect": "NoScheduel"}]})"));
  EXPECT_TRUE(Contains(e, "pod ml/p: spec.tolerations[0].effect")) << e;
  EXPECT_TRUE(Contains(e, "\"NoScheduel\"")) << e;
}

const char* kAffinityPath =
    "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms";

json AffinityPod(const std::string& terms) {
  return Pod(R"({"containers": [], "affinity": {"nodeAffinity": {
      "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": )" +
             terms + "}}}}");
}

TEST(ParsePod, RequiredNodeAffinity) {
  json pod = AffinityPod(R"([
      {"matchExpressions": [
        {"key": "gpu", "operator": "In", "values": ["a100", "h100"]},
        {"key": "zone", "operator": "NotIn", "values": ["z1"]}]},
      {"matchExpressions": [
        {"key": "fast", "operator": "Exists"},
        {"key": "spot", "operator": "DoesNotExist"}]}])");
  PodInfo p = Must(ParsePod(pod));
  using Op = SelectorRequirement::Op;
  ASSERT_EQ(p.spec.affinity.terms.size(), 2u);
  ASSERT_EQ(p.spec.affinity.terms[0].size(), 2u);
  ASSERT_EQ(p.spec.affinity.terms[1].size(), 2u);
  EXPECT_EQ(p.spec.affinity.terms[0][0], (SelectorRequirement{"gpu", Op::kIn, {"a100", "h100"}}));
  EXPECT_EQ(p.spec.affinity.terms[0][1], (SelectorRequirement{"zone", Op::kNotIn, {"z1"}}));
  EXPECT_EQ(p.spec.affinity.terms[1][0], (SelectorRequirement{"fast", Op::kExists, {}}));
  EXPECT_EQ(p.spec.affinity.terms[1][1], (SelectorRequirement{"spot", Op::kDoesNotExist, {}}));

  // Terms are ORed, expressions within a term ANDed.
  EXPECT_TRUE(p.spec.affinity.Matches(Labels({{"gpu", "h100"}, {"zone", "z2"}})));
  EXPECT_FALSE(p.spec.affinity.Matches(Labels({{"gpu", "h100"}, {"zone", "z1"}})));
  EXPECT_TRUE(p.spec.affinity.Matches(Labels({{"fast", ""}, {"other", "x"}})));
  EXPECT_FALSE(p.spec.affinity.Matches(Labels({{"fast", ""}, {"spot", "true"}})));
}

TEST(ParsePod, PreferredAffinityIsAScoreNotAFilter) {
  json pod = Pod(R"({"containers": [], "affinity": {"nodeAffinity": {
      "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 7, "preference":
        {"matchExpressions": [{"key": "a", "operator": "In", "values": ["b"]}]}}]}}})");
  const PodInfo p = Must(ParsePod(pod));
  EXPECT_TRUE(p.spec.affinity.terms.empty());
  ASSERT_EQ(p.spec.affinity.preferred.size(), 1u);
  EXPECT_EQ(p.spec.affinity.preferred[0].weight, 7);
  EXPECT_EQ(p.spec.affinity.PreferredWeight(
                Labels(std::vector<std::pair<std::string, std::string>>{{"a", "b"}})),
            7);
  const std::string e = PodError(Pod(R"({"containers": [], "affinity": {"nodeAffinity": {
      "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 101, "preference": {}}]}}})"));
  EXPECT_TRUE(Contains(e,
                       "preferredDuringSchedulingIgnoredDuringExecution[0].weight: must be an "
                       "integer in 1..100, got 101"))
      << e;
}

TEST(ParsePod, GtAndLtCompareIntegersAndNeedOneIntegerValue) {
  const PodInfo p = Must(ParsePod(AffinityPod(R"([
      {"matchExpressions": [{"key": "gpu-count", "operator": "Gt", "values": ["4"]},
                            {"key": "gpu-count", "operator": "Lt", "values": ["9"]}]}])")));
  EXPECT_TRUE(p.spec.affinity.Matches(
      Labels(std::vector<std::pair<std::string, std::string>>{{"gpu-count", "8"}})));
  EXPECT_FALSE(p.spec.affinity.Matches(
      Labels(std::vector<std::pair<std::string, std::string>>{{"gpu-count", "4"}})));
  EXPECT_FALSE(p.spec.affinity.Matches(
      Labels(std::vector<std::pair<std::string, std::string>>{{"gpu-count", "eight"}})));
  std::string e = PodError(AffinityPod(R"([
      {"matchExpressions": [{"key": "a", "operator": "Exists"}]},
      {"matchExpressions": [{"key": "b", "operator": "In", "values": ["x"]},
                            {"key": "gpu-count", "operator": "Gt", "values": ["4", "5"]}]}])"));
  EXPECT_TRUE(
      Contains(e, std::string("pod ml/p: ") + kAffinityPath + "[1].matchExpressions[1].values"))
      << e;
  EXPECT_TRUE(Contains(e, "takes exactly one value")) << e;
  e = PodError(AffinityPod(
      R"([{"matchExpressions": [{"key": "a", "operator": "Lt", "values": ["1.5"]}]}])"));
  EXPECT_TRUE(Contains(e, "operator Lt needs an integer, got \"1.5\"")) << e;
}

// DaemonSet pods name their node so (Kubernetes' DaemonSet controller).
TEST(ParsePod, MatchFieldsOnTheNodeName) {
  const PodInfo p = Must(ParsePod(AffinityPod(R"([
      {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}])")));
  EXPECT_TRUE(p.spec.affinity.Matches(Labels(), "n1"));
  EXPECT_FALSE(p.spec.affinity.Matches(Labels(), "n2"));
  std::string e = PodError(AffinityPod(R"([
      {"matchFields": [{"key": "metadata.namespace", "operator": "In", "values": ["n1"]}]}])"));
  EXPECT_TRUE(Contains(e, std::string("pod ml/p: ") + kAffinityPath + "[0].matchFields[0].key"))
      << e;
  e = PodError(AffinityPod(R"([
      {"matchFields": [{"key": "metadata.name", "operator": "Exists"}]}])"));
  EXPECT_TRUE(Contains(e, "matchFields[0].operator: \"Exists\" is not supported (In, NotIn)")) << e;
}

TEST(ParsePod, InAndNotInNeedValuesExistsTakesNone) {
  // Kubernetes: "If the operator is In or NotIn, the values array must be non-empty. If
  // the operator is Exists or DoesNotExist, the values array must be empty."
  for (const char* expr :
       {R"({"key": "a", "operator": "In"})", R"({"key": "a", "operator": "NotIn", "values": []})",
        R"({"key": "a", "operator": "Exists", "values": ["x"]})",
        R"({"key": "a", "operator": "DoesNotExist", "values": ["x"]})"}) {
    std::string e = PodError(AffinityPod(std::string(R"([{"matchExpressions": [)") + expr + "]}]"));
    EXPECT_TRUE(Contains(e, std::string(kAffinityPath) + "[0].matchExpressions[0].values")) << e;
  }
}

// ---------------------------------------------------------------------------------------
// Pods: groups, queues, devices, conditions

TEST(ParsePod, GroupFromTheSchedulingAnnotation) {
  PodInfo p = Must(ParsePod(AnnotatedPod(R"({"scheduling.k8s.io/group-name": "llama"})")));
  EXPECT_EQ(p.group, "llama");
  EXPECT_EQ(p.group_api, GroupApi::kVolcano);
}

TEST(ParsePod, GroupFromTheOlderVolcanoAnnotation) {
  PodInfo p = Must(ParsePod(AnnotatedPod(R"({"scheduling.volcano.sh/group-name": "old"})")));
  EXPECT_EQ(p.group, "old");
  EXPECT_EQ(p.group_api, GroupApi::kVolcano);
}

TEST(ParsePod, GroupFromTheCoschedulingLabel) {
  PodInfo p = Must(ParsePod(
      Pod(R"({"containers": []})", R"("labels": {"scheduling.x-k8s.io/pod-group": "nccl"})")));
  EXPECT_EQ(p.group, "nccl");
  EXPECT_EQ(p.group_api, GroupApi::kCoscheduling);
}

TEST(ParsePod, CoschedulingAnnotationIsNotALabel) {
  // scheduler-plugins reads a label; the same key as an annotation makes no group.
  PodInfo p = Must(ParsePod(AnnotatedPod(R"({"scheduling.x-k8s.io/pod-group": "nccl"})")));
  EXPECT_EQ(p.group, "");
  EXPECT_EQ(p.group_api, GroupApi::kNone);
}

TEST(ParsePod, Queue) {
  EXPECT_EQ(Must(ParsePod(AnnotatedPod(R"({"gantry.dev/queue": "research"})"))).queue, "research");
  EXPECT_EQ(Must(ParsePod(AnnotatedPod(R"({"scheduling.volcano.sh/queue-name": "prod"})"))).queue,
            "prod");
  // Gantry's own annotation wins over Volcano's.
  EXPECT_EQ(Must(ParsePod(AnnotatedPod(
                     R"({"gantry.dev/queue": "a", "scheduling.volcano.sh/queue-name": "b"})")))
                .queue,
            "a");
}

TEST(ParsePod, GpuDevices) {
  PodInfo p = Must(ParsePod(AnnotatedPod(R"({"gantry.dev/gpu-devices": "0,3"})")));
  EXPECT_EQ(p.gpu_devices, (std::vector<int32_t>{0, 3}));
  std::string e = PodError(AnnotatedPod(R"({"gantry.dev/gpu-devices": "a,1"})"));
  EXPECT_TRUE(Contains(e, "pod ml/p: metadata.annotations[gantry.dev/gpu-devices]")) << e;
  EXPECT_TRUE(Contains(e, "a,1")) << e;
}

TEST(ParsePod, UnschedulableMessageIsReadBack) {
  json pod = Pod(R"({"containers": []})", "", R"({"phase": "Pending", "conditions": [
      {"type": "Initialized", "status": "True"},
      {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
       "message": "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."}]})");
  EXPECT_EQ(Must(ParsePod(pod)).unschedulable_message,
            "0/4 nodes are available: 4 Insufficient nvidia.com/gpu.");
  json scheduled = Pod(R"({"containers": []})", "", R"({"conditions": [
      {"type": "PodScheduled", "status": "True", "message": "old"}]})");
  EXPECT_EQ(Must(ParsePod(scheduled)).unschedulable_message, "");
}

// ---------------------------------------------------------------------------------------
// Nodes

json NodeJson(const std::string& extra_metadata, const std::string& spec,
              const std::string& allocatable) {
  std::string metadata = R"({"name": "gpu-1")";
  if (!extra_metadata.empty()) metadata += ", " + extra_metadata;
  return json::parse(R"({"apiVersion": "v1", "kind": "Node", "metadata": )" + metadata +
                     R"(}, "spec": )" + spec + R"(, "status": {"allocatable": )" + allocatable +
                     "}}");
}

TEST(ParseNode, GpusFromAllocatableAndFeatureDiscoveryLabels) {
  json n =
      NodeJson(R"("labels": {"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
                                  "nvidia.com/gpu.memory": "81559", "zone": "z1"})",
               "{}", R"({"cpu": "96", "memory": "1Ti", "pods": "110", "nvidia.com/gpu": "8"})");
  Node node = Must(ParseNode(n));
  EXPECT_EQ(node.name, "gpu-1");
  ASSERT_EQ(node.gpus.size(), 8u);
  for (const GpuDevice& g : node.gpus) {
    EXPECT_EQ(GpuModels().Name(g.model), "NVIDIA-H100-80GB-HBM3");
    EXPECT_EQ(g.memory_mib, 81559);
  }
  EXPECT_EQ(node.allocatable.Get(kCpu), 96000);
  EXPECT_EQ(node.allocatable.Get(kMemory), 1024 * kGi);
  EXPECT_EQ(node.allocatable.Get(kPods), 110000);
  ASSERT_NE(node.labels.Find("zone"), nullptr);
  EXPECT_EQ(*node.labels.Find("zone"), "z1");
  EXPECT_FALSE(node.unschedulable);
  EXPECT_TRUE(node.taints.empty());
}

TEST(ParseNode, NoGpus) {
  Node node = Must(ParseNode(NodeJson("", "{}", R"({"cpu": "8", "memory": "32Gi"})")));
  EXPECT_TRUE(node.gpus.empty());
  EXPECT_EQ(node.allocatable.Get(kGpu), 0);
  EXPECT_EQ(node.allocatable.Get(kCpu), 8000);
}

TEST(ParseNode, GpusWithoutLabels) {
  Node node = Must(ParseNode(NodeJson("", "{}", R"({"nvidia.com/gpu": 4})")));
  ASSERT_EQ(node.gpus.size(), 4u);
  EXPECT_EQ(node.gpus[0].memory_mib, 0);  // unknown
}

TEST(ParseNode, TaintsAndUnschedulable) {
  Node node = Must(ParseNode(NodeJson("", R"({"unschedulable": true, "taints": [
      {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"},
      {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"},
      {"key": "spot", "value": "true", "effect": "PreferNoSchedule"}]})",
                                      "{}")));
  EXPECT_TRUE(node.unschedulable);
  ASSERT_EQ(node.taints.size(), 3u);
  EXPECT_EQ(node.taints[0], (Taint{"nvidia.com/gpu", "present", TaintEffect::kNoSchedule}));
  EXPECT_EQ(node.taints[1], (Taint{"node.kubernetes.io/unreachable", "", TaintEffect::kNoExecute}));
  EXPECT_EQ(node.taints[2], (Taint{"spot", "true", TaintEffect::kPreferNoSchedule}));
}

TEST(ParseNode, BadTaintEffect) {
  auto r = ParseNode(NodeJson("", R"({"taints": [{"key": "a", "effect": "NoSchedule"},
                                                 {"key": "b", "effect": "Never"}]})",
                              "{}"));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "node gpu-1: spec.taints[1].effect"));
  EXPECT_TRUE(Contains(r.status().message(), "\"Never\""));
}

TEST(ParseNode, BadGpuMemoryLabel) {
  auto r = ParseNode(NodeJson(R"("labels": {"nvidia.com/gpu.memory": "lots"})", "{}",
                              R"({"nvidia.com/gpu": "1"})"));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "node gpu-1: metadata.labels[nvidia.com/gpu.memory]"));
}

TEST(ParseNode, BadAllocatable) {
  auto r = ParseNode(NodeJson("", "{}", R"({"cpu": "eight"})"));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "node gpu-1: status.allocatable.cpu"));
}

// ---------------------------------------------------------------------------------------
// PodGroups

json Group(const std::string& spec) {
  return json::parse(R"({"metadata": {"name": "llama", "namespace": "ml", "uid": "g-1"},
                         "spec": )" +
                     spec + R"(, "status": {"phase": "Inqueue"}})");
}

std::string GroupError(const std::string& spec, GroupApi api) {
  auto r = ParsePodGroup(Group(spec), api);
  EXPECT_FALSE(r.ok()) << spec;
  return r.ok() ? "" : r.status().message();
}

TEST(ParsePodGroup, VolcanoFields) {
  PodGroupInfo g = Must(ParsePodGroup(Group(R"({"minMember": 8, "queue": "research",
      "priorityClassName": "high",
      "minResources": {"cpu": 64, "memory": "512Gi", "nvidia.com/gpu": 64}})"),
                                      GroupApi::kVolcano));
  EXPECT_EQ(g.meta.Key(), "ml/llama");
  EXPECT_EQ(g.meta.uid, "g-1");
  EXPECT_EQ(g.api, GroupApi::kVolcano);
  EXPECT_EQ(g.min_member, 8);
  EXPECT_EQ(g.queue, "research");
  EXPECT_EQ(g.priority_class_name, "high");
  EXPECT_EQ(g.min_resources.Get(kCpu), 64000);
  EXPECT_EQ(g.min_resources.Get(kMemory), 512 * kGi);
  EXPECT_EQ(g.min_resources.Get(kGpu), 64000);  // milli-GPUs
  EXPECT_EQ(g.phase, "Inqueue");
}

TEST(ParsePodGroup, CreationTimestamp) {
  json group = Group(R"({"minMember": 2})");
  EXPECT_EQ(Must(ParsePodGroup(group, GroupApi::kVolcano)).meta.created, 0);
  group["metadata"]["creationTimestamp"] = "2024-05-01T12:00:00Z";
  EXPECT_EQ(Must(ParsePodGroup(group, GroupApi::kVolcano)).meta.created, 1714564800);
  group["metadata"]["creationTimestamp"] = "2024-02-30T12:00:00Z";
  auto r = ParsePodGroup(group, GroupApi::kCoscheduling);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(),
                       "podgroup ml/llama: metadata.creationTimestamp: \"2024-02-30T12:00:00Z\""))
      << r.status().message();
}

TEST(ParsePodGroup, CoschedulingFields) {
  PodGroupInfo g = Must(ParsePodGroup(
      Group(R"({"minMember": 4, "minResources": {"cpu": "3", "nvidia.com/gpu": "4"}})"),
      GroupApi::kCoscheduling));
  EXPECT_EQ(g.api, GroupApi::kCoscheduling);
  EXPECT_EQ(g.min_member, 4);
  EXPECT_EQ(g.queue, "");
  EXPECT_EQ(g.min_resources.Get(kCpu), 3000);
  EXPECT_EQ(g.min_resources.Get(kGpu), 4000);
}

TEST(ParsePodGroup, MinMemberDefaultsToOneAndZeroBecomesOne) {
  for (GroupApi api : {GroupApi::kVolcano, GroupApi::kCoscheduling}) {
    EXPECT_EQ(Must(ParsePodGroup(Group("{}"), api)).min_member, 1);
    EXPECT_EQ(Must(ParsePodGroup(Group(R"({"minMember": 0})"), api)).min_member, 1);
    EXPECT_TRUE(Must(ParsePodGroup(Group("{}"), api)).min_resources.empty());
  }
}

TEST(ParsePodGroup, BadMinMemberIsRejectedNamingTheField) {
  for (GroupApi api : {GroupApi::kVolcano, GroupApi::kCoscheduling}) {
    for (const char* bad : {R"(-1)", R"("lots")", R"(2.5)", R"("3")", R"(true)"}) {
      std::string e = GroupError(std::string(R"({"minMember": )") + bad + "}", api);
      EXPECT_TRUE(Contains(e, "podgroup ml/llama: spec.minMember")) << e;
    }
  }
}

// JSON integers past INT64_MAX (nlohmann reads them as unsigned) must be refused with the
// number as written, not wrapped to a negative one (18446744073709551615 is -1 as an int64).
TEST(ParsePodGroup, MinMemberBeyondInt64IsRefusedAsWritten) {
  for (const char* big : {"18446744073709551615", "9223372036854775808"}) {
    std::string e = GroupError(std::string(R"({"minMember": )") + big + "}", GroupApi::kVolcano);
    EXPECT_TRUE(Contains(e, std::string("spec.minMember: ") + big + " is out of range")) << e;
  }
}

TEST(ParsePodGroup, BadMinResources) {
  std::string e = GroupError(R"({"minResources": {"cpu": "-2"}})", GroupApi::kVolcano);
  EXPECT_TRUE(Contains(e, "podgroup ml/llama: spec.minResources.cpu")) << e;
  e = GroupError(R"({"minResources": ["cpu"]})", GroupApi::kVolcano);
  EXPECT_TRUE(Contains(e, "podgroup ml/llama: spec.minResources")) << e;
}

// ---------------------------------------------------------------------------------------
// Queues and PriorityClasses

json QueueJson(const std::string& spec) {
  return json::parse(R"({"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue",
                         "metadata": {"name": "research"}, "spec": )" +
                     spec + "}");
}

TEST(ParseQueue, Fields) {
  QueueInfo q = Must(ParseQueue(QueueJson(R"({"weight": 3, "reclaimable": true,
      "capability": {"cpu": "256", "memory": "2Ti", "nvidia.com/gpu": 32},
      "guarantee": {"resource": {"nvidia.com/gpu": 8, "cpu": 64}}})")));
  EXPECT_EQ(q.meta.name, "research");
  EXPECT_EQ(q.meta.namespace_, "");
  EXPECT_EQ(q.meta.Key(), "research");
  EXPECT_EQ(q.weight, 3);
  EXPECT_EQ(q.capability, (ResourceVector{{kCpu, 256000}, {kMemory, 2048 * kGi}, {kGpu, 32000}}));
  EXPECT_EQ(q.guarantee, (ResourceVector{{kCpu, 64000}, {kGpu, 8000}}));
}

TEST(ParseQueue, Defaults) {
  QueueInfo q = Must(ParseQueue(QueueJson("{}")));
  EXPECT_EQ(q.weight, 1);
  EXPECT_TRUE(q.capability.empty());
  EXPECT_TRUE(q.guarantee.empty());
}

TEST(ParseQueue, BadWeight) {
  // 9223372036854775807 twice overflowed the engine's sum of weights.
  for (const char* bad : {"0", "-2", R"("heavy")", "1.5", "2147483648", "9223372036854775807"}) {
    auto r = ParseQueue(QueueJson(std::string(R"({"weight": )") + bad + "}"));
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_TRUE(Contains(r.status().message(), "queue research: spec.weight")) << bad;
  }
}

TEST(ParseQueue, BadCapabilityAndGuarantee) {
  auto r = ParseQueue(QueueJson(R"({"capability": {"nvidia.com/gpu": "many"}})"));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "queue research: spec.capability.nvidia.com/gpu"));
  r = ParseQueue(QueueJson(R"({"guarantee": {"resource": {"memory": "-1Gi"}}})"));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(Contains(r.status().message(), "queue research: spec.guarantee.resource.memory"));
}

// Fair share with memory: the half-life of a tree, on its top-level queue.
TEST(ParseQueue, UsageHalfLifeAnnotation) {
  auto with = [](const std::string& value, const std::string& spec = "{}") {
    json q = QueueJson(spec);
    q["metadata"]["annotations"]["gantry.dev/usage-half-life-seconds"] = json::parse(value);
    return ParseQueue(q);
  };
  EXPECT_EQ(Must(with(R"("86400")")).usage_half_life_s, 86400);
  EXPECT_EQ(Must(with(R"("3600")", R"({"parent": "root"})")).usage_half_life_s, 3600);
  EXPECT_EQ(Must(ParseQueue(QueueJson("{}"))).usage_half_life_s, 0);
  for (const char* bad : {R"("1d")", R"("-5")", "3600", R"("")", R"("99999999999999")"}) {
    auto r = with(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_TRUE(Contains(r.status().message(),
                         "queue research: metadata.annotations[gantry.dev/"
                         "usage-half-life-seconds]: expected whole seconds"))
        << r.status().message();
  }
  auto child = with(R"("60")", R"({"parent": "org"})");
  ASSERT_FALSE(child.ok());
  EXPECT_TRUE(Contains(child.status().message(), "set on the top-level queue of a tree"))
      << child.status().message();
}

// Defragmentation: a queue whose pods the defragment action may move.
TEST(ParseQueue, MovableAnnotation) {
  auto with = [](const std::string& value) {
    json q = QueueJson("{}");
    q["metadata"]["annotations"]["gantry.dev/movable"] = json::parse(value);
    return ParseQueue(q);
  };
  EXPECT_TRUE(Must(with(R"("true")")).movable);
  EXPECT_FALSE(Must(with(R"("false")")).movable);
  EXPECT_FALSE(Must(ParseQueue(QueueJson("{}"))).movable);
  for (const char* bad : {R"("True")", R"("yes")", R"("")", "true", "1"}) {
    auto r = with(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_TRUE(Contains(r.status().message(),
                         "queue research: metadata.annotations[gantry.dev/movable]: "))
        << r.status().message();
    EXPECT_TRUE(Contains(r.status().message(), "is not \"true\" or \"false\""));
  }
}

TEST(ParsePriorityClass, Value) {
  PriorityClassInfo pc = Must(ParsePriorityClass(json::parse(
      R"({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
          "metadata": {"name": "high-priority"}, "value": 1000000, "globalDefault": false})")));
  EXPECT_EQ(pc.meta.name, "high-priority");
  EXPECT_EQ(pc.value, 1000000);
  // system-node-critical's value, the largest the API server gives out.
  pc = Must(ParsePriorityClass(
      json::parse(R"({"metadata": {"name": "system-node-critical"}, "value": 2000001000})")));
  EXPECT_EQ(pc.value, 2000001000);
  pc = Must(ParsePriorityClass(json::parse(R"({"metadata": {"name": "low"}, "value": -10})")));
  EXPECT_EQ(pc.value, -10);
  pc = Must(ParsePriorityClass(json::parse(R"({"metadata": {"name": "none"}})")));
  EXPECT_EQ(pc.value, 0);
}

TEST(ParsePriorityClass, BadValue) {
  // value is an int32: a larger number must not wrap around to a negative priority.
  for (const char* bad : {R"("high")", "1.5", "3000000000", "-3000000000"}) {
    auto r = ParsePriorityClass(
        json::parse(std::string(R"({"metadata": {"name": "x"}, "value": )") + bad + "}"));
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_TRUE(Contains(r.status().message(), "priorityclass x.value")) << bad;
  }
}

TEST(ParsePod, PriorityOutsideInt32IsRejected) {
  std::string e = PodError(Pod(R"({"priority": 3000000000, "containers": []})"));
  EXPECT_TRUE(Contains(e, "pod ml/p: spec.priority")) << e;
}

// 2^64 - 1 is -1 once wrapped to an int64, a valid priority: it must be refused instead.
TEST(ParsePod, PriorityBeyondInt64IsRejectedNotWrapped) {
  for (const char* big : {"18446744073709551615", "18446744073709551614", "9223372036854775808"}) {
    std::string e = PodError(Pod(std::string(R"({"priority": )") + big + R"(, "containers": []})"));
    EXPECT_TRUE(Contains(e, std::string("pod ml/p: spec.priority: ") + big)) << e;
  }
  for (const char* big : {"18446744073709551615", "-9223372036854775808"}) {
    auto r = ParsePriorityClass(
        json::parse(std::string(R"({"metadata": {"name": "x"}, "value": )") + big + "}"));
    ASSERT_FALSE(r.ok()) << big;
    EXPECT_TRUE(Contains(r.status().message(), "priorityclass x.value")) << big;
  }
}

// ---------------------------------------------------------------------------------------
// ResourceLists and device lists

TEST(ParseResourceList, StringsAndNumbers) {
  ResourceVector v;
  ASSERT_TRUE(ParseResourceList(json::parse(R"({"cpu": "250m", "memory": "64Mi",
      "nvidia.com/gpu": 2, "ephemeral-storage": "1G", "example.com/x": 0.5})"),
                                "here", NameSource::kTrusted, &v)
                  .ok());
  EXPECT_EQ(v.Get(kCpu), 250);
  EXPECT_EQ(v.Get(kMemory), 64 * kMi);
  EXPECT_EQ(v.Get(kGpu), 2000);
  EXPECT_EQ(v.Get(InternResource("ephemeral-storage")), 1000000000LL * kMilliPerUnit);
  EXPECT_EQ(v.Get(InternResource("example.com/x")), 500);
}

// Amounts given as JSON numbers at the ends of the int64 range: whole units times 1000 must
// fit, and numbers past INT64_MAX must not wrap to a negative amount.
TEST(ParseResourceList, NumbersAtTheEndsOfTheRange) {
  ResourceVector v;
  ASSERT_TRUE(ParseResourceList(json::parse(R"({"cpu": 9223372036854775})"), "here",
                                NameSource::kTrusted, &v)
                  .ok());
  EXPECT_EQ(v.Get(kCpu), 9223372036854775000LL);
  for (const char* big : {"9223372036854776", "9223372036854775807", "-9223372036854775808",
                          "9223372036854775808", "18446744073709551615"}) {
    ResourceVector out;
    Status s = ParseResourceList(json::parse(std::string(R"({"cpu": )") + big + "}"), "here",
                                 NameSource::kTrusted, &out);
    ASSERT_FALSE(s.ok()) << big;
    EXPECT_EQ(s.code(), Status::Code::kOutOfRange) << big << ": " << s.message();
    EXPECT_TRUE(Contains(s.message(), std::string("here.cpu: ") + big + " overflows"))
        << s.message();
  }
}

TEST(ParseResourceList, NullIsEmpty) {
  ResourceVector v;
  EXPECT_TRUE(ParseResourceList(json(), "here", NameSource::kTrusted, &v).ok());
  EXPECT_TRUE(v.empty());
}

TEST(ParseResourceList, Errors) {
  ResourceVector v;
  Status st =
      ParseResourceList(json::parse(R"({"cpu": "-1"})"), "spec.x", NameSource::kTrusted, &v);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "spec.x.cpu: negative")) << st.message();
  st = ParseResourceList(json::parse(R"({"memory": -5})"), "spec.x", NameSource::kTrusted, &v);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "spec.x.memory")) << st.message();
  st = ParseResourceList(json::parse(R"({"memory": "12x"})"), "spec.x", NameSource::kTrusted, &v);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "spec.x.memory: ")) << st.message();
  EXPECT_TRUE(Contains(st.message(), "12x")) << st.message();
  st = ParseResourceList(json::parse(R"({"cpu": true})"), "spec.x", NameSource::kTrusted, &v);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "spec.x.cpu: expected a quantity")) << st.message();
  st = ParseResourceList(json::parse(R"(["cpu"])"), "spec.x", NameSource::kTrusted, &v);
  ASSERT_FALSE(st.ok());
  EXPECT_TRUE(Contains(st.message(), "spec.x: expected a map")) << st.message();
}

TEST(DeviceList, FormatAndParse) {
  EXPECT_EQ(FormatDeviceList({}), "");
  EXPECT_EQ(FormatDeviceList({3}), "3");
  EXPECT_EQ(FormatDeviceList({0, 3}), "0,3");
  EXPECT_EQ(FormatDeviceList({7, 1, 12}), "7,1,12");
  EXPECT_EQ(Must(ParseDeviceList("0,3")), (std::vector<int32_t>{0, 3}));
  EXPECT_EQ(Must(ParseDeviceList("5")), (std::vector<int32_t>{5}));
  EXPECT_EQ(Must(ParseDeviceList("15,2,7")), (std::vector<int32_t>{15, 2, 7}));
  EXPECT_TRUE(Must(ParseDeviceList("")).empty());
  for (const std::vector<int32_t>& d :
       {std::vector<int32_t>{0}, std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7}}) {
    EXPECT_EQ(Must(ParseDeviceList(FormatDeviceList(d))), d);
  }
}

TEST(DeviceList, BadLists) {
  for (const char* bad : {"a,1", "1,", ",1", "1,,2", "-1", "1 ,2", "0x1", "99999"}) {
    auto r = ParseDeviceList(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_TRUE(Contains(r.status().message(), std::string("\"") + bad + "\"")) << bad;
  }
}

}  // namespace
}  // namespace gantry::k8s

namespace gantry::k8s {
namespace {

// ---------------------------------------------------------------------------------------
// Hostile counts and sums: checked against their type's range, never wrapped

std::string GpuPod(const std::string& gpus) {
  return R"({"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": ")" + gpus +
         R"("}}}]})";
}

TEST(ParsePod, GpuCountsBeyondANodeAreRefusedNotWrapped) {
  // 4294967297 wrapped to 1 GPU in an int32, 4294967296 to 0, 2147483648 to INT32_MIN.
  for (const char* gpus : {"4294967297", "4294967296", "2147483648", "257"}) {
    std::string e = PodError(Pod(GpuPod(gpus)));
    EXPECT_TRUE(Contains(e, "pod ml/p: spec.containers[*].resources.nvidia.com/gpu")) << e;
    EXPECT_TRUE(Contains(e, gpus)) << e;
    EXPECT_TRUE(Contains(e, "256")) << e;  // the limit
    std::string problem;
    PodInfo p = Must(DecodePod(Pod(GpuPod(gpus)), &problem));
    EXPECT_EQ(problem, e);
    EXPECT_TRUE(p.unreadable.gpus) << gpus;  // bound, it counts as holding all its node's GPUs
    EXPECT_EQ(p.spec.gpu.count, 0);
  }
  EXPECT_EQ(Must(ParsePod(Pod(GpuPod("256")))).spec.gpu.count, 256);
}

TEST(ParsePod, GpuCountAsAJsonNumberIsCheckedToo) {
  std::string e = PodError(Pod(
      R"({"containers": [{"name": "c", "resources": {"limits": {"nvidia.com/gpu": 4294967297}}}]})"));
  EXPECT_TRUE(Contains(e, "4294967297")) << e;
}

TEST(ParsePod, SumsThatOverflowAreRefused) {
  // 2^62 milli-CPU twice is 2^63: one more than int64 holds.
  const std::string half = "4611686018427387904m";
  std::string two_containers = R"({"containers": [
      {"name": "a", "resources": {"requests": {"cpu": ")" +
                               half + R"("}}},
      {"name": "b", "resources": {"requests": {"cpu": ")" +
                               half + R"("}}}]})";
  std::string e = PodError(Pod(two_containers));
  EXPECT_TRUE(Contains(e, "pod ml/p: spec")) << e;
  EXPECT_TRUE(Contains(e, "cpu")) << e;
  EXPECT_TRUE(Contains(e, "overflow")) << e;
  std::string problem;
  PodInfo p = Must(DecodePod(Pod(two_containers), &problem));
  EXPECT_EQ(p.unreadable.ids, std::vector<ResourceId>{kCpu});
  EXPECT_FALSE(p.unreadable.gpus);
  // Containers plus overhead.
  std::string with_overhead = R"({"containers": [
      {"name": "a", "resources": {"requests": {"memory": "9223372036854775807m"}}}],
      "overhead": {"memory": "1"}})";
  e = PodError(Pod(with_overhead));
  EXPECT_TRUE(Contains(e, "spec.overhead.memory")) << e;
  EXPECT_TRUE(Contains(e, "overflow")) << e;
}

TEST(ParsePod, GpuFractionFinerThanAThousandthIsRefused) {
  // "1e-9" was rounded up to 0.001 and bound.
  for (const char* bad : {"1e-9", "0.0005"}) {
    std::string e =
        PodError(AnnotatedPod(std::string(R"({"gantry.dev/gpu-fraction": ")") + bad + "\"}"));
    EXPECT_TRUE(Contains(e, "metadata.annotations[gantry.dev/gpu-fraction]")) << e;
    EXPECT_TRUE(Contains(e, bad)) << e;
  }
  EXPECT_EQ(Must(ParsePod(AnnotatedPod(R"({"gantry.dev/gpu-fraction": "0.001"})"))).spec.gpu.milli,
            1);
}

// ---------------------------------------------------------------------------------------
// What can be read of a pod Gantry cannot schedule

TEST(DecodePod, RequestsAreReadWhateverElseIsWrong) {
  // A matchFields key Kubernetes does not allow and a malformed devices annotation: not
  // schedulable by gantry, but what it asks for (8 GPUs, 4 CPUs) is plain.
  json pod = Pod(R"({"nodeName": "n1", "containers": [{"name": "c", "resources": {
      "requests": {"cpu": "4"}, "limits": {"nvidia.com/gpu": "8"}}}],
      "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [
          {"key": "spec.nodeName", "operator": "In", "values": ["n1"]}]}]}}}})",
                 R"("annotations": {"gantry.dev/gpu-devices": "zero,one"})");
  std::string problem;
  PodInfo p = Must(DecodePod(pod, &problem));
  EXPECT_TRUE(Contains(problem, "matchFields")) << problem;
  EXPECT_EQ(p.node_name, "n1");
  EXPECT_EQ(p.spec.gpu.count, 8);
  EXPECT_EQ(p.spec.requests.Get(kCpu), 4000);
  EXPECT_TRUE(p.unreadable.empty());
  EXPECT_TRUE(p.gpu_devices.empty());  // unreadable: whoever counts it picks devices
  EXPECT_FALSE(ParsePod(pod).ok());
}

TEST(DecodePod, UnreadableAmountsAreNamed) {
  json pod = Pod(R"({"containers": [{"name": "c", "resources": {
      "requests": {"cpu": "lots", "memory": "1Gi", "nvidia.com/gpu": "x"}}}]})");
  std::string problem;
  PodInfo p = Must(DecodePod(pod, &problem));
  EXPECT_TRUE(Contains(problem, "spec.containers[0].resources.requests.cpu")) << problem;
  EXPECT_EQ(p.unreadable.ids, std::vector<ResourceId>{kCpu});
  EXPECT_TRUE(p.unreadable.gpus);
  EXPECT_EQ(p.spec.requests.Get(kMemory), 1024 * kMi);
  // A requests "map" that is not one: nothing of it can be read.
  std::string problem2;
  PodInfo q = Must(
      DecodePod(Pod(R"({"containers": [{"name": "c", "resources": {"requests": "everything"}}]})"),
                &problem2));
  EXPECT_TRUE(q.unreadable.all);
  EXPECT_TRUE(Contains(problem2, "expected a map")) << problem2;
}

TEST(DecodePod, OnlyAMissingNameIsFatal) {
  std::string problem;
  EXPECT_FALSE(DecodePod(json::parse(R"({"metadata": {}, "spec": {}})"), &problem).ok());
  PodInfo p = Must(DecodePod(json::parse(R"({"metadata": {"name": "x"}, "spec": 5})"), &problem));
  EXPECT_EQ(p.meta.name, "x");
  EXPECT_EQ(p.scheduler_name, "default-scheduler");
}

// ---------------------------------------------------------------------------------------
// Resource names: a pod may add only so many

TEST(ParsePod, ResourceNamesOfPodsAreBounded) {
  // The table of names is the process's: filled in a child, so that other tests keep
  // their share of it.
  EXPECT_EXIT(
      {
        const size_t before = ResourceNames().size();
        std::string last_problem;
        for (size_t i = 0; i < kMaxResourceNamesFromWorkloads + 50; ++i) {
          std::string name =
              "random-" + std::to_string(i) + ".example.com/r" + std::to_string(i * 7919);
          json pod = Pod(R"({"containers": [{"name": "c", "resources": {"requests": {")" + name +
                         R"(": "1"}}}]})");
          std::string problem;
          auto p = DecodePod(pod, &problem);
          if (!p.ok() || (!problem.empty() && p->unreadable.empty())) std::_Exit(3);
          if (!problem.empty()) last_problem = problem;
        }
        if (ResourceNames().size() - before > kMaxResourceNamesFromWorkloads) {
          std::fprintf(stderr, "grew by %zu\n", ResourceNames().size() - before);
          std::_Exit(1);
        }
        if (!Contains(last_problem, "refused") ||
            !Contains(last_problem, "spec.containers[0].resources.requests")) {
          std::fprintf(stderr, "last problem: %s\n", last_problem.c_str());
          std::_Exit(2);
        }
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(ParseResourceList, NodesAndQueuesAreTrusted) {
  // Names a node offers are interned even once pods have used up their share.
  ResourceVector v;
  ASSERT_TRUE(ParseResourceList(json::parse(R"({"trusted.example.com/fpga": "2"})"), "node",
                                NameSource::kTrusted, &v)
                  .ok());
  EXPECT_EQ(v.Get(InternResource("trusted.example.com/fpga")), 2000);
  Status st = ParseResourceList(json::parse(R"({"bad name!": "2"})"), "node x: status.allocatable",
                                NameSource::kTrusted, &v);
  EXPECT_TRUE(Contains(st.message(), "node x: status.allocatable")) << st.message();
}

// ---------------------------------------------------------------------------------------
// Nodes: devices bounded

TEST(ParseNode, GpuCountAboveTheLimitIsRefusedAtOnce) {
  // One device object per GPU: 1e9 of them was a bad_alloc.
  for (const char* gpus : {R"("1000000000")", R"("257")", "1000000000"}) {
    auto r = ParseNode(NodeJson("", "{}", std::string(R"({"nvidia.com/gpu": )") + gpus + "}"));
    ASSERT_FALSE(r.ok()) << gpus;
    EXPECT_TRUE(Contains(r.status().message(), "node gpu-1: status.allocatable.nvidia.com/gpu"))
        << r.status().message();
    EXPECT_TRUE(Contains(r.status().message(), "256")) << r.status().message();
  }
  EXPECT_EQ(Must(ParseNode(NodeJson("", "{}", R"({"nvidia.com/gpu": "256"})"))).gpus.size(), 256u);
  auto half = ParseNode(NodeJson("", "{}", R"({"nvidia.com/gpu": "1500m"})"));
  ASSERT_FALSE(half.ok());
  EXPECT_TRUE(Contains(half.status().message(), "whole")) << half.status().message();
}

}  // namespace
}  // namespace gantry::k8s

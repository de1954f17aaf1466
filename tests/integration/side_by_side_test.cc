// The same pods scheduled twice on the same nodes of the real API server: once by the
// upstream kube-scheduler (the reference, a profile of its own so that it takes only the
// pods that ask for it), once by `gantry serve`. Each case says what kube-scheduler's
// rules allow: which pods run and on which nodes they may, which stay pending and why.
// Both schedulers are held to it, so the reference shows that the case says what
// kube-scheduler does, and gantry must do the same. At its end the suite prints a table
// (case | pod | kube-scheduler | gantry | allowed) of where each pod went.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/integration/daemon_process.h"
#include "tests/integration/testenv.h"

namespace gantry::testing {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr const char* kReference = "kube-reference";
constexpr const char* kGantry = "gantry-side-by-side";

TestEnv& Env() {
  return TestEnv::Get();
}

// What kube-scheduler's rules allow for one pod: the nodes it may run on, or none
// (pending), with the PodScheduled reason kube-scheduler gives ("" when any will do).
struct Expect {
  std::string pod;
  std::set<std::string> nodes;
  std::string pending_reason;
  std::string gantry_message;  // a part of gantry's message for a pending pod, if any
  // One of `nodes`, or pending: which pods of a group kube-scheduler places depends on
  // the order it takes them in, so the case's `check` says how many and where.
  bool may_pend = false;
};

struct Case {
  std::string name;
  // metadata.name and spec; scheduler and namespace added (a pod that names a namespace
  // keeps it). "{ns}" anywhere in a pod or claim stands for the run's namespace.
  std::vector<json> pods = {};
  std::vector<Expect> expect = {};
  std::vector<json> claims = {};  // PersistentVolumeClaims made in the namespace first
  // Namespaces made beside the run's one, named "{ns}-SUFFIX", with their labels.
  std::map<std::string, std::map<std::string, std::string>> namespaces = {};
  // Each pod is created once the one before it is settled (bound, or pending with a
  // PodScheduled=False condition), so that both schedulers take them in that order.
  bool one_by_one = false;
  // Called after each pod of the case is created (namespace, pod name): to change it as
  // only its kubelet would, e.g. end it.
  std::function<void(const std::string& ns, const std::string& pod)> after_create = {};
  // What the per-pod expectations cannot say (e.g. "on different nodes"): "" when the
  // pods as they ended hold to it, else what is wrong.
  std::function<std::string(const std::map<std::string, json>& pods)> check = {};
};

// A node of the case (label sbs-case=NAME), with taints when given.
void CaseNode(const std::string& test, const std::string& name, const std::string& cpu,
              std::map<std::string, std::string> labels = {}, json taints = nullptr) {
  labels["sbs-case"] = test;
  auto r = Env().CreateNode(name, 0, cpu, "16Gi", labels);
  ASSERT_TRUE(r.ok()) << r.status().message();
  if (!taints.is_null()) {
    auto t = Env().Call("PATCH", "/api/v1/nodes/" + name, json{{"spec", {{"taints", taints}}}},
                        "application/merge-patch+json");
    ASSERT_TRUE(t.ok()) << t.status().message();
  }
}

json Container(const std::string& name, const std::string& cpu) {
  return {{"name", name},
          {"image", "registry.k8s.io/pause:3.10"},
          {"resources", {{"requests", {{"cpu", cpu}, {"memory", "64Mi"}}}}}};
}

// A pod of the case: one container of `cpu`, on the case's nodes only; `extra` merged
// into its spec.
json CasePod(const std::string& test, const std::string& name, json extra = json::object(),
             const std::string& cpu = "100m") {
  json spec = {{"nodeSelector", {{"sbs-case", test}}}, {"containers", {Container("main", cpu)}}};
  spec.merge_patch(extra);
  return {{"metadata", {{"name", name}}}, {"spec", spec}};
}

json NodeAffinity(json terms) {
  return {
      {"affinity",
       {{"nodeAffinity",
         {{"requiredDuringSchedulingIgnoredDuringExecution", {{"nodeSelectorTerms", terms}}}}}}}};
}

const json* PodScheduledFalse(const json& pod) {
  if (!pod.contains("status") || !pod["status"].contains("conditions")) return nullptr;
  for (const json& c : pod["status"]["conditions"]) {
    if (c.value("type", "") == "PodScheduled" && c.value("status", "") == "False") return &c;
  }
  return nullptr;
}

std::string NodeOf(const json& pod) {
  return pod.value("/spec/nodeName"_json_pointer, std::string());
}

std::map<std::string, json> PodsOf(const std::string& ns) {
  std::map<std::string, json> out;
  auto r = Env().Call("GET", "/api/v1/namespaces/" + ns + "/pods");
  if (!r.ok()) return out;
  for (const json& p : (*r)["items"]) out[p["metadata"]["name"].get<std::string>()] = p;
  return out;
}

// A case's object with "{ns}" replaced by the run's namespace.
json InNamespace(const json& object, const std::string& ns) {
  std::string text = object.dump();
  for (size_t at = text.find("{ns}"); at != std::string::npos; at = text.find("{ns}", at)) {
    text.replace(at, 4, ns);
    at += ns.size();
  }
  return json::parse(text);
}

// Whether a pod is in a state the case can be judged on: bound; or, when kube-scheduler
// leaves it pending for a reason (or may), pending with a PodScheduled=False condition.
bool Settled(const Expect& e, const json* pod) {
  if (pod == nullptr) return false;
  if (!NodeOf(*pod).empty()) return true;
  if (!e.nodes.empty() && !e.may_pend) return false;
  return (e.pending_reason.empty() && !e.may_pend) || PodScheduledFalse(*pod) != nullptr;
}

// Creates the case's pods for `scheduler` in namespace `ns` and waits until each has the
// state the case expects (Settled), or 30 s pass. Returns the pods as they then are.
std::map<std::string, json> Schedule(const Case& c, const std::string& scheduler,
                                     const std::string& ns) {
  EXPECT_TRUE(Env().CreateNamespace(ns).ok());
  for (const auto& [suffix, labels] : c.namespaces) {
    json object = {{"apiVersion", "v1"},
                   {"kind", "Namespace"},
                   {"metadata", {{"name", ns + "-" + suffix}, {"labels", labels}}}};
    auto r = Env().Call("POST", "/api/v1/namespaces", object);
    EXPECT_TRUE(r.ok()) << r.status().message();
  }
  for (const json& case_claim : c.claims) {
    json claim = InNamespace(case_claim, ns);
    claim["apiVersion"] = "v1";
    claim["kind"] = "PersistentVolumeClaim";
    claim["metadata"]["namespace"] = ns;
    auto r = Env().Call("POST", "/api/v1/namespaces/" + ns + "/persistentvolumeclaims", claim);
    EXPECT_TRUE(r.ok()) << r.status().message();
  }
  auto all_settled = [&](const std::map<std::string, json>& pods) {
    for (const Expect& e : c.expect) {
      auto it = pods.find(e.pod);
      if (!Settled(e, it == pods.end() ? nullptr : &it->second)) return false;
    }
    return true;
  };
  for (const json& case_pod : c.pods) {
    json pod = InNamespace(case_pod, ns);
    pod["apiVersion"] = "v1";
    pod["kind"] = "Pod";
    if (!pod["metadata"].contains("namespace")) pod["metadata"]["namespace"] = ns;
    pod["spec"]["schedulerName"] = scheduler;
    const std::string pod_ns = pod["metadata"]["namespace"].get<std::string>();
    const std::string name = pod["metadata"]["name"].get<std::string>();
    auto r = Env().Call("POST", "/api/v1/namespaces/" + pod_ns + "/pods", pod);
    EXPECT_TRUE(r.ok()) << r.status().message();
    if (r.ok() && c.after_create) c.after_create(pod_ns, name);
    if (!r.ok() || !c.one_by_one || pod_ns != ns) continue;
    for (const Expect& e : c.expect) {
      if (e.pod != name) continue;
      EXPECT_TRUE(TestEnv::WaitFor(
          [&] {
            auto got = Env().Call("GET", "/api/v1/namespaces/" + ns + "/pods/" + name);
            return got.ok() && Settled(e, &*got);
          },
          seconds(30), milliseconds(100)))
          << scheduler << ": " << c.name << "/" << name << " did not settle";
    }
  }
  TestEnv::WaitFor([&] { return all_settled(PodsOf(ns)); }, seconds(30), milliseconds(200));
  // Pending pods are given a moment more: a wrong bind would show now.
  std::this_thread::sleep_for(seconds(2));
  return PodsOf(ns);
}

// Deletes the namespace's pods at once (there are no kubelets to wait for).
void DeletePods(const std::string& ns) {
  for (const auto& [name, pod] : PodsOf(ns)) {
    (void)Env().Call("DELETE", "/api/v1/namespaces/" + ns + "/pods/" + name,
                     json{{"gracePeriodSeconds", 0}});
  }
  TestEnv::WaitFor([&] { return PodsOf(ns).empty(); }, seconds(30), milliseconds(100));
}

std::string Outcome(const json* pod) {
  if (pod == nullptr) return "(no pod)";
  if (std::string node = NodeOf(*pod); !node.empty()) return node;
  const json* condition = PodScheduledFalse(*pod);
  return condition == nullptr ? "pending" : "pending (" + condition->value("reason", "") + ")";
}

std::string Allowed(const Expect& e) {
  if (e.nodes.empty()) {
    return e.pending_reason.empty() ? "pending" : "pending (" + e.pending_reason + ")";
  }
  std::string nodes;
  for (const std::string& n : e.nodes) nodes += (nodes.empty() ? "" : " or ") + n;
  return e.may_pend ? nodes + " or pending" : nodes;
}

// The daemon with the engine as shipped (SchedulerConfig::Default, kube-scheduler's
// default profile's filters), not the shorter plugin list of the other daemon tests.
std::string ShippedEngineConfig() {
  const std::string config = DaemonConfig(kGantry);
  return config.substr(0, config.find("engine:"));
}

class SideBySide : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    Status started = Env().StartKubeScheduler(kReference);
    ASSERT_TRUE(started.ok()) << started.message();
    daemon_ = new DaemonProcess("side-by-side", ShippedEngineConfig(), "side-by-side");
  }
  static void TearDownTestSuite() {
    delete daemon_;
    daemon_ = nullptr;
    PrintTable();
  }

  static void ExpectAsKubeSchedulerAllows(const Case& c, const std::map<std::string, json>& pods,
                                          const std::string& who) {
    for (const Expect& e : c.expect) {
      SCOPED_TRACE(who + ": " + c.name + "/" + e.pod);
      auto it = pods.find(e.pod);
      Record(c, e, who, Outcome(it == pods.end() ? nullptr : &it->second));
      ASSERT_NE(it, pods.end());
      const json& pod = it->second;
      const std::string node = NodeOf(pod);
      if (!node.empty()) {
        EXPECT_FALSE(e.nodes.empty())
            << "bound to " << node << "; kube-scheduler leaves it pending";
        EXPECT_TRUE(e.nodes.empty() || e.nodes.count(node))
            << "bound to " << node << ", where kube-scheduler's rules refuse it";
        continue;
      }
      EXPECT_TRUE(e.nodes.empty() || e.may_pend)
          << "pending, but kube-scheduler's rules let it run";
      if (e.pending_reason.empty()) continue;
      const json* condition = PodScheduledFalse(pod);
      ASSERT_NE(condition, nullptr) << "no PodScheduled=False condition";
      EXPECT_EQ(condition->value("reason", ""), e.pending_reason);
      if (who == "gantry" && !e.gantry_message.empty()) {
        EXPECT_NE(condition->value("message", "").find(e.gantry_message), std::string::npos)
            << condition->value("message", "");
      }
    }
    if (c.check) {
      EXPECT_EQ(c.check(pods), "") << who << ": " << c.name;
    }
  }

  // Both schedulers, one after the other, on the case's nodes; each held to the case.
  static void RunBoth(const Case& c) {
    const auto reference = Schedule(c, kReference, c.name + "-kube");
    ExpectAsKubeSchedulerAllows(c, reference, "kube-scheduler");
    DeletePods(c.name + "-kube");
    for (const auto& [suffix, labels] : c.namespaces) DeletePods(c.name + "-kube-" + suffix);
    const auto ours = Schedule(c, kGantry, c.name + "-gantry");
    ExpectAsKubeSchedulerAllows(c, ours, "gantry");
    ASSERT_TRUE(daemon_->running()) << daemon_->Log();
    EXPECT_EQ(SanitizerReport(daemon_->Log()), "");
  }

  static DaemonProcess* daemon_;

 private:
  // One line of the table the suite prints at its end, for the notes.
  struct Row {
    std::string case_name, pod, kube, gantry, allowed;
  };

  static void Record(const Case& c, const Expect& e, const std::string& who,
                     const std::string& outcome) {
    auto row = std::find_if(rows_.begin(), rows_.end(),
                            [&](const Row& r) { return r.case_name == c.name && r.pod == e.pod; });
    if (row == rows_.end()) row = rows_.insert(rows_.end(), Row{c.name, e.pod, "", "", Allowed(e)});
    (who == "gantry" ? row->gantry : row->kube) = outcome;
  }

  static void PrintTable() {
    std::cout << "\n| case | pod | kube-scheduler | gantry | allowed |\n|---|---|---|---|---|\n";
    for (const Row& r : rows_) {
      std::cout << "| " << r.case_name << " | " << r.pod << " | " << r.kube << " | " << r.gantry
                << " | " << r.allowed << " |\n";
    }
    std::cout << std::flush;
    rows_.clear();  // a suite derived from this one prints its own cases
  }

  static inline std::vector<Row> rows_;
};

DaemonProcess* SideBySide::daemon_ = nullptr;

// matchFields on metadata.name is how the DaemonSet controller places its pods.
TEST_F(SideBySide, NodeAffinityMatchFieldsOnTheNodeName) {
  const std::string t = "sbs-matchfields";
  for (int i = 0; i < 3; ++i) CaseNode(t, t + "-" + std::to_string(i), "4");
  auto on = [&](const std::string& node) {
    return NodeAffinity(json::array(
        {{{"matchFields", {{{"key", "metadata.name"}, {"operator", "In"}, {"values", {node}}}}}}}));
  };
  Case c{t,
         {CasePod(t, "ds-1", on(t + "-1")), CasePod(t, "ds-none", on(t + "-none"))},
         {{"ds-1", {t + "-1"}, "", ""}, {"ds-none", {}, "Unschedulable", "node affinity"}}};
  RunBoth(c);
}

TEST_F(SideBySide, NodeAffinityGtAndLt) {
  const std::string t = "sbs-numeric";
  const char* counts[] = {"2", "4", "8"};
  for (int i = 0; i < 3; ++i)
    CaseNode(t, t + "-" + std::to_string(i), "4", {{"gpu-count", counts[i]}});
  auto expr = [](const char* op, const char* value) {
    return NodeAffinity(json::array(
        {{{"matchExpressions", {{{"key", "gpu-count"}, {"operator", op}, {"values", {value}}}}}}}));
  };
  Case c{
      t,
      {CasePod(t, "gt4", expr("Gt", "4")), CasePod(t, "lt3", expr("Lt", "3")),
       CasePod(t, "gt8", expr("Gt", "8"))},
      {{"gt4", {t + "-2"}, "", ""}, {"lt3", {t + "-0"}, "", ""}, {"gt8", {}, "Unschedulable", ""}}};
  RunBoth(c);
}

// NoSchedule and NoExecute keep pods that do not tolerate them away; a NoExecute
// toleration with tolerationSeconds still tolerates for placement; PreferNoSchedule
// never filters.
TEST_F(SideBySide, TaintsAndTolerations) {
  const std::string t = "sbs-taints";
  CaseNode(t, t + "-a", "4", {},
           json::array({{{"key", "dedicated"}, {"value", "x"}, {"effect", "NoSchedule"}}}));
  CaseNode(t, t + "-b", "4", {},
           json::array({{{"key", "maint"}, {"value", "y"}, {"effect", "NoExecute"}}}));
  CaseNode(t, t + "-c", "4", {},
           json::array({{{"key", "soft"}, {"value", "z"}, {"effect", "PreferNoSchedule"}}}));
  json tolerate_maint = {{"tolerations",
                          {{{"key", "maint"},
                            {"operator", "Equal"},
                            {"value", "y"},
                            {"effect", "NoExecute"},
                            {"tolerationSeconds", 30}}}}};
  json tolerate_all = {{"tolerations", {{{"operator", "Exists"}}}}};
  Case c{t,
         {CasePod(t, "plain"), CasePod(t, "maint-ok", tolerate_maint),
          CasePod(t, "anything", tolerate_all)},
         {{"plain", {t + "-c"}, "", ""},
          {"maint-ok", {t + "-b", t + "-c"}, "", ""},
          {"anything", {t + "-a", t + "-b", t + "-c"}, "", ""}}};
  RunBoth(c);
}

// An init container runs after the sidecars started before it, which keep running beside
// the app: on a 4-CPU node, 1 app + 1 sidecar + 3.5 init needs 4.5 CPUs; 2.5 init, 3.5.
TEST_F(SideBySide, SidecarAndInitContainerRequests) {
  const std::string t = "sbs-sidecars";
  CaseNode(t, t + "-0", "4");
  auto with_init = [](const std::string& init_cpu) {
    json sidecar = Container("proxy", "1");
    sidecar["restartPolicy"] = "Always";
    return json{{"initContainers", {sidecar, Container("setup", init_cpu)}}};
  };
  Case c{
      t,
      {CasePod(t, "too-big", with_init("3500m"), "1"), CasePod(t, "fits", with_init("2500m"), "1")},
      {{"too-big", {}, "Unschedulable", "cpu"}, {"fits", {t + "-0"}, "", ""}}};
  RunBoth(c);
}

// kube-scheduler: a gated pod is never scheduled, shows PodScheduled=False with reason
// SchedulingGated, and is scheduled once its gates are removed.
TEST_F(SideBySide, SchedulingGatesHoldUntilRemoved) {
  const std::string t = "sbs-gates";
  CaseNode(t, t + "-0", "4");
  json gated = {{"schedulingGates", {{{"name", "example.com/wait"}}}}};
  Case c{t, {CasePod(t, "gated", gated)}, {{"gated", {}, "SchedulingGated", ""}}};
  for (const auto& [scheduler, ns] :
       {std::pair{std::string(kReference), t + "-kube"}, {std::string(kGantry), t + "-gantry"}}) {
    const auto pods = Schedule(c, scheduler, ns);
    ExpectAsKubeSchedulerAllows(c, pods, scheduler == kGantry ? "gantry" : "kube-scheduler");
    // Gates may only be removed; then it runs.
    auto r = Env().Call("PATCH", "/api/v1/namespaces/" + ns + "/pods/gated",
                        json{{"spec", {{"schedulingGates", json::array()}}}},
                        "application/merge-patch+json");
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_TRUE(TestEnv::WaitFor([&] { return PodsOf(ns)["gated"]["spec"].contains("nodeName"); },
                                 seconds(30)))
        << scheduler << " did not schedule the pod once its gates were removed";
    DeletePods(ns);
  }
}

// Dynamic resource allocation is not gantry's: the pod waits, saying which field.
TEST_F(SideBySide, ResourceClaimsKeepThePodPendingWithAMessage) {
  const std::string t = "sbs-claims";
  CaseNode(t, t + "-0", "4");
  json claims = {{"resourceClaims", {{{"name", "gpu"}, {"resourceClaimName", "no-such-claim"}}}}};
  json pod = CasePod(t, "claimant", claims);
  pod["spec"]["containers"][0]["resources"]["claims"] = {{{"name", "gpu"}}};
  const Case reference{t, {pod}, {{"claimant", {}, "", ""}}};
  const auto theirs = Schedule(reference, kReference, t + "-kube");
  ExpectAsKubeSchedulerAllows(reference, theirs, "kube-scheduler");
  const Case ours{t, {pod}, {{"claimant", {}, "Unschedulable", "spec.resourceClaims"}}};
  ExpectAsKubeSchedulerAllows(ours, Schedule(ours, kGantry, t + "-gantry"), "gantry");
}

// ---------------------------------------------------------------------------------------
// The other filters of kube-scheduler's default profile, one case or more each.

// Sets resources of a case node, capacity and allocatable alike (as CreateNode does).
void NodeResources(const std::string& name, json resources) {
  auto r = Env().Call("PATCH", "/api/v1/nodes/" + name + "/status",
                      json{{"status", {{"capacity", resources}, {"allocatable", resources}}}},
                      "application/merge-patch+json");
  ASSERT_TRUE(r.ok()) << r.status().message();
}

json Labelled(json pod, json labels) {
  pod["metadata"]["labels"] = std::move(labels);
  return pod;
}

// A pod its user placed (spec.nodeName): bound as created, no scheduler's.
json BoundTo(json pod, const std::string& node) {
  pod["spec"]["nodeName"] = node;
  return pod;
}

json Requests(json pod, const json& requests, bool limits_too = false) {
  json& resources = pod["spec"]["containers"][0]["resources"];
  resources["requests"].merge_patch(requests);
  if (limits_too) resources["limits"] = requests;
  return pod;
}

json Expr(const std::string& key, const std::string& op, std::vector<std::string> values = {}) {
  json e = {{"key", key}, {"operator", op}};
  if (!values.empty()) e["values"] = values;
  return e;
}

json MatchLabels(const std::string& key, const std::string& value) {
  return {{"matchLabels", {{key, value}}}};
}

// spec.affinity with one required term of `kind` (podAffinity, podAntiAffinity).
json PodTerm(const std::string& kind, json term) {
  return {{"affinity", {{kind, {{"requiredDuringSchedulingIgnoredDuringExecution", {term}}}}}}};
}

constexpr const char* kZone = "topology.kubernetes.io/zone";
constexpr const char* kHostname = "kubernetes.io/hostname";

// A check that exactly `pending` pods of `group` are not bound and, when `apart`, that
// the others are bound on pairwise different nodes.
std::function<std::string(const std::map<std::string, json>&)> Bound(std::vector<std::string> group,
                                                                     size_t pending, bool apart) {
  return [group, pending, apart](const std::map<std::string, json>& pods) -> std::string {
    std::set<std::string> nodes;
    size_t unbound = 0;
    for (const std::string& name : group) {
      auto it = pods.find(name);
      const std::string node = it == pods.end() ? "" : NodeOf(it->second);
      if (node.empty()) {
        ++unbound;
      } else if (!nodes.insert(node).second && apart) {
        return name + " shares node " + node + " with another pod of the group";
      }
    }
    if (unbound != pending) {
      return std::to_string(unbound) + " pods of the group pending, expected " +
             std::to_string(pending);
    }
    return "";
  };
}

// NodeName: a pod whose user set spec.nodeName is bound as created; neither scheduler
// touches it, even when the node does not exist, and what it asks for counts on its node.
TEST_F(SideBySide, NodeNameSetByTheUser) {
  const std::string t = "sbs-nodename";
  CaseNode(t, t + "-0", "4");
  CaseNode(t, t + "-1", "4");
  Case c{.name = t,
         .pods = {BoundTo(CasePod(t, "pinned", json::object(), "3500m"), t + "-0"),
                  BoundTo(CasePod(t, "nowhere"), t + "-gone"),
                  CasePod(t, "next", json::object(), "1")},
         .expect = {{"pinned", {t + "-0"}, "", ""},
                    {"nowhere", {t + "-gone"}, "", ""},
                    {"next", {t + "-1"}, "", ""}},
         .one_by_one = true};
  RunBoth(c);
}

// NodeUnschedulable: a cordoned node takes only pods that tolerate the taint Kubernetes
// gives such nodes (node.kubernetes.io/unschedulable:NoSchedule), whatever the node's
// taints say.
TEST_F(SideBySide, CordonedNode) {
  const std::string t = "sbs-cordon";
  CaseNode(t, t + "-0", "4");
  auto r = Env().Call("PATCH", "/api/v1/nodes/" + t + "-0",
                      json{{"spec", {{"unschedulable", true}}}}, "application/merge-patch+json");
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto tolerating = [](json toleration) { return json{{"tolerations", {toleration}}}; };
  const std::string cordon = "node.kubernetes.io/unschedulable";
  Case c{t,
         {CasePod(t, "plain"),
          CasePod(t, "tolerates",
                  tolerating({{"key", cordon}, {"operator", "Exists"}, {"effect", "NoSchedule"}})),
          CasePod(t, "tolerates-any-effect", tolerating({{"key", cordon}, {"operator", "Exists"}})),
          CasePod(t, "wrong-effect",
                  tolerating({{"key", cordon}, {"operator", "Exists"}, {"effect", "NoExecute"}}))},
         {{"plain", {}, "Unschedulable", "node(s) were unschedulable"},
          {"tolerates", {t + "-0"}, "", ""},
          {"tolerates-any-effect", {t + "-0"}, "", ""},
          {"wrong-effect", {}, "Unschedulable", "node(s) were unschedulable"}}};
  RunBoth(c);
}

json HostPort(int port, const std::string& protocol = "TCP", const std::string& host_ip = "") {
  json p = {{"containerPort", port}, {"hostPort", port}, {"protocol", protocol}};
  if (!host_ip.empty()) p["hostIP"] = host_ip;
  return p;
}

json WithPorts(json pod, json ports) {
  pod["spec"]["containers"][0]["ports"] = std::move(ports);
  return pod;
}

// NodePorts: a host port is taken per protocol and host IP, 0.0.0.0 (no hostIP) covering
// every IP: running pods hold 8080/TCP on any IP and 9090/TCP on 10.0.0.1.
TEST_F(SideBySide, HostPorts) {
  const std::string t = "sbs-ports";
  CaseNode(t, t + "-0", "4");
  auto pod = [&](const std::string& name, json port) {
    return WithPorts(CasePod(t, name), json::array({port}));
  };
  const std::string taken = "node(s) didn't have free ports for the requested pod ports";
  Case c{t,
         {BoundTo(pod("holds-8080", HostPort(8080)), t + "-0"),
          BoundTo(pod("holds-9090-on-ip", HostPort(9090, "TCP", "10.0.0.1")), t + "-0"),
          pod("same-port-tcp", HostPort(8080)), pod("same-port-udp", HostPort(8080, "UDP")),
          pod("specific-ip-under-any", HostPort(8080, "TCP", "127.0.0.1")),
          pod("other-specific-ip", HostPort(9090, "TCP", "10.0.0.2")),
          pod("any-ip-over-specific", HostPort(9090)), pod("other-port", HostPort(8081)),
          pod("twin-a", HostPort(7070)), pod("twin-b", HostPort(7070))},
         {{"same-port-tcp", {}, "Unschedulable", taken},
          {"same-port-udp", {t + "-0"}, "", ""},
          {"specific-ip-under-any", {}, "Unschedulable", taken},
          {"other-specific-ip", {t + "-0"}, "", ""},
          {"any-ip-over-specific", {}, "Unschedulable", taken},
          {"other-port", {t + "-0"}, "", ""},
          {"twin-a", {t + "-0"}, "Unschedulable", taken, /*may_pend=*/true},
          {"twin-b", {t + "-0"}, "Unschedulable", taken, /*may_pend=*/true}}};
  // Two new pods that want the same port, created together (one cycle for gantry): one runs.
  c.check = Bound({"twin-a", "twin-b"}, 1, /*apart=*/false);
  RunBoth(c);
}

// NodeResourcesFit counts pods against allocatable "pods": a running pod and two of three
// new ones, created together, fill a node that allows three.
TEST_F(SideBySide, PodCountLimit) {
  const std::string t = "sbs-podcount";
  CaseNode(t, t + "-0", "4");
  NodeResources(t + "-0", {{"pods", "3"}});
  Case c{.name = t, .pods = {BoundTo(CasePod(t, "running"), t + "-0")}};
  for (const char* name : {"new-a", "new-b", "new-c"}) {
    c.pods.push_back(CasePod(t, name));
    c.expect.push_back({name, {t + "-0"}, "Unschedulable", "too many pods", /*may_pend=*/true});
  }
  c.check = Bound({"new-a", "new-b", "new-c"}, 1, /*apart=*/false);
  RunBoth(c);
}

// A pod that has ended (Succeeded) no longer holds what it asked for; one being deleted
// (deletionTimestamp set, its kubelet not yet done) still does.
TEST_F(SideBySide, FinishedAndTerminatingPods) {
  const std::string t = "sbs-ended";
  CaseNode(t, t + "-0", "4");
  CaseNode(t, t + "-1", "4");
  auto on = [&](const std::string& name, const std::string& node) {
    return CasePod(t, name,
                   NodeAffinity(json::array(
                       {{{"matchExpressions", {Expr(kHostname, "In", {t + "-" + node})}}}})),
                   "1");
  };
  Case c{.name = t,
         .pods = {BoundTo(CasePod(t, "finished", json::object(), "3500m"), t + "-0"),
                  BoundTo(CasePod(t, "terminating", json::object(), "3500m"), t + "-1"),
                  on("after-finished", "0"), on("after-terminating", "1")},
         .expect = {{"after-finished", {t + "-0"}, "", ""},
                    {"after-terminating", {}, "Unschedulable", "insufficient cpu"}},
         .one_by_one = true,
         .after_create = [](const std::string& ns, const std::string& pod) {
           const std::string path = "/api/v1/namespaces/" + ns + "/pods/" + pod;
           if (pod == "finished") {
             auto r =
                 Env().Call("PATCH", path + "/status", json{{"status", {{"phase", "Succeeded"}}}},
                            "application/merge-patch+json");
             EXPECT_TRUE(r.ok()) << r.status().message();
           } else if (pod == "terminating") {
             auto r = Env().Call("DELETE", path, json{{"gracePeriodSeconds", 600}});
             EXPECT_TRUE(r.ok()) << r.status().message();
           }
         }};
  RunBoth(c);
}

// NodeResourcesFit on ephemeral-storage, hugepages and an extended resource: a node that
// does not list one has none of it.
TEST_F(SideBySide, EphemeralStorageHugepagesAndExtendedResources) {
  const std::string t = "sbs-resources";
  CaseNode(t, t + "-rich", "4");
  NodeResources(
      t + "-rich",
      {{"ephemeral-storage", "10Gi"}, {"hugepages-2Mi", "256Mi"}, {"example.com/widget", "2"}});
  CaseNode(t, t + "-plain", "4");
  auto pod = [&](const std::string& name, const std::string& resource, const std::string& amount) {
    // Hugepages and extended resources cannot be overcommitted: limits equal requests.
    const bool limits = resource != "ephemeral-storage";
    return Requests(CasePod(t, name),
                    limits ? json{{"cpu", "100m"}, {"memory", "64Mi"}, {resource, amount}}
                           : json{{resource, amount}},
                    limits);
  };
  Case c{
      t,
      {pod("scratch", "ephemeral-storage", "5Gi"),
       pod("scratch-too-big", "ephemeral-storage", "20Gi"), pod("huge", "hugepages-2Mi", "128Mi"),
       pod("huge-too-big", "hugepages-2Mi", "512Mi"), pod("widgets", "example.com/widget", "2"),
       pod("too-many-widgets", "example.com/widget", "3")},
      {{"scratch", {t + "-rich"}, "", ""},
       {"scratch-too-big", {}, "Unschedulable", "insufficient ephemeral-storage"},
       {"huge", {t + "-rich"}, "", ""},
       {"huge-too-big", {}, "Unschedulable", "insufficient hugepages-2Mi"},
       {"widgets", {t + "-rich"}, "", ""},
       {"too-many-widgets", {}, "Unschedulable", "insufficient example.com/widget"}}};
  RunBoth(c);
}

// An init container larger than the app containers sets what the pod asks for, while it
// runs and after: 3.5 CPUs of init leave room for no 1-CPU pod on a 4-CPU node.
TEST_F(SideBySide, InitContainerLargerThanTheContainers) {
  const std::string t = "sbs-init";
  CaseNode(t, t + "-0", "4");
  auto with_init = [](const std::string& cpu) {
    return json{{"initContainers", {Container("setup", cpu)}}};
  };
  Case c{.name = t,
         .pods = {CasePod(t, "init-too-big", with_init("5")),
                  CasePod(t, "init-fits", with_init("3500m")),
                  CasePod(t, "after", json::object(), "1")},
         .expect = {{"init-too-big", {}, "Unschedulable", "insufficient cpu"},
                    {"init-fits", {t + "-0"}, "", ""},
                    {"after", {}, "Unschedulable", "insufficient cpu"}},
         .one_by_one = true};
  RunBoth(c);
}

// spec.overhead, which the RuntimeClass admission plugin copies from the pod's
// RuntimeClass, counts with the containers: 1 CPU of overhead on 3.5 does not fit 4.
TEST_F(SideBySide, RuntimeClassOverhead) {
  const std::string t = "sbs-overhead";
  CaseNode(t, t + "-0", "4");
  auto made = Env().Call("POST", "/apis/node.k8s.io/v1/runtimeclasses",
                         {{"apiVersion", "node.k8s.io/v1"},
                          {"kind", "RuntimeClass"},
                          {"metadata", {{"name", t}}},
                          {"handler", "runc"},
                          {"overhead", {{"podFixed", {{"cpu", "1"}, {"memory", "64Mi"}}}}}});
  ASSERT_TRUE(made.ok()) << made.status().message();
  auto with_runtime = [&](const std::string& name, const std::string& cpu) {
    return CasePod(t, name, {{"runtimeClassName", t}}, cpu);
  };
  Case c{.name = t,
         .pods = {with_runtime("overhead-too-big", "3500m"), with_runtime("overhead-fits", "2500m"),
                  CasePod(t, "after", json::object(), "1")},
         .expect = {{"overhead-too-big", {}, "Unschedulable", "insufficient cpu"},
                    {"overhead-fits", {t + "-0"}, "", ""},
                    {"after", {}, "Unschedulable", "insufficient cpu"}},
         .one_by_one = true,
         .check = [](const std::map<std::string, json>& pods) -> std::string {
           auto it = pods.find("overhead-fits");
           if (it == pods.end() || !it->second["spec"].contains("overhead"))
             return "the API server did not set spec.overhead from the RuntimeClass";
           return "";
         }};
  RunBoth(c);
}

// Pod-level resources (spec.resources, PodLevelResources) replace the containers' sum:
// 4.5 CPUs for the pod do not fit 4, though its container asks for 0.1.
TEST_F(SideBySide, PodLevelResources) {
  const std::string t = "sbs-podlevel";
  CaseNode(t, t + "-0", "4");
  auto pod_level = [&](const std::string& name, const std::string& cpu) {
    return CasePod(t, name, {{"resources", {{"requests", {{"cpu", cpu}, {"memory", "128Mi"}}}}}});
  };
  // An API server with the feature gate off drops the field: then there is nothing to test.
  json probe = pod_level("probe", "1");
  probe["apiVersion"] = "v1";
  probe["kind"] = "Pod";
  probe["metadata"]["namespace"] = "default";
  auto dry = Env().Call("POST", "/api/v1/namespaces/default/pods?dryRun=All", probe);
  if (!dry.ok() || !(*dry)["spec"].contains("resources")) {
    GTEST_SKIP() << "the API server does not keep spec.resources (PodLevelResources off): "
                 << (dry.ok() ? std::string("dropped") : dry.status().message());
  }
  Case c{.name = t,
         .pods = {pod_level("pod-level-too-big", "4500m"), pod_level("pod-level-fits", "3"),
                  CasePod(t, "after", json::object(), "1500m")},
         .expect = {{"pod-level-too-big", {}, "Unschedulable", "insufficient cpu"},
                    {"pod-level-fits", {t + "-0"}, "", ""},
                    {"after", {}, "Unschedulable", "insufficient cpu"}},
         .one_by_one = true};
  RunBoth(c);
}

// Required node affinity: terms are ORed, a term's expressions ANDed; NotIn and
// DoesNotExist match a node without the label.
TEST_F(SideBySide, NodeAffinityOperatorsAndTerms) {
  const std::string t = "sbs-operators";
  CaseNode(t, t + "-gold", "4", {{"tier", "gold"}, {"disk", "ssd"}});
  CaseNode(t, t + "-silver", "4", {{"tier", "silver"}});
  CaseNode(t, t + "-bronze", "4", {{"tier", "bronze"}, {"gpu", "true"}});
  CaseNode(t, t + "-bare", "4");
  auto terms = [&](const std::string& name, std::vector<json> expressions_per_term) {
    json list = json::array();
    for (json& e : expressions_per_term) list.push_back({{"matchExpressions", e}});
    return CasePod(t, name, NodeAffinity(list));
  };
  Case c{t,
         {terms("ored", {{Expr("tier", "In", {"gold"}), Expr("disk", "Exists")},
                         {Expr("gpu", "Exists"), Expr("tier", "NotIn", {"gold"})}}),
          terms("notin", {{Expr("tier", "NotIn", {"gold", "silver"})}}),
          terms("doesnotexist", {{Expr("tier", "DoesNotExist")}}),
          terms("tier-without-disk", {{Expr("tier", "Exists"), Expr("disk", "DoesNotExist")}}),
          terms("none", {{Expr("tier", "In", {"platinum"})}, {Expr("gpu", "In", {"false"})}})},
         {{"ored", {t + "-gold", t + "-bronze"}, "", ""},
          {"notin", {t + "-bronze", t + "-bare"}, "", ""},
          {"doesnotexist", {t + "-bare"}, "", ""},
          {"tier-without-disk", {t + "-silver", t + "-bronze"}, "", ""},
          {"none", {}, "Unschedulable", "node affinity"}}};
  RunBoth(c);
}

// Required anti-affinity on the hostname: replicas created together go one per node, in
// the same scheduling cycle for gantry; the replica beyond the nodes waits.
TEST_F(SideBySide, PodAntiAffinityOnePerNode) {
  const std::string t = "sbs-antiaffinity";
  std::set<std::string> nodes;
  for (int i = 0; i < 3; ++i) {
    CaseNode(t, t + "-" + std::to_string(i), "4");
    nodes.insert(t + "-" + std::to_string(i));
  }
  const json apart = PodTerm("podAntiAffinity", {{"labelSelector", MatchLabels("app", "web")},
                                                 {"topologyKey", kHostname}});
  Case c{.name = t};
  std::vector<std::string> replicas;
  for (int i = 0; i < 4; ++i) {
    const std::string name = "web-" + std::to_string(i);
    replicas.push_back(name);
    c.pods.push_back(Labelled(CasePod(t, name, apart), {{"app", "web"}}));
    c.expect.push_back({name, nodes, "Unschedulable", "anti-affinity", /*may_pend=*/true});
  }
  c.check = Bound(replicas, 1, /*apart=*/true);
  RunBoth(c);
}

// Required pod affinity: a pod goes to the zone of a running pod it names; no such pod, it
// waits, unless it matches its own term and is the first of its kind (then any node
// with the zone label, and the next one follows it).
TEST_F(SideBySide, PodAffinityFollowsARunningPodsZone) {
  const std::string t = "sbs-affinity";
  CaseNode(t, t + "-a", "4", {{kZone, t + "-za"}});
  CaseNode(t, t + "-b1", "4", {{kZone, t + "-zb"}});
  CaseNode(t, t + "-b2", "4", {{kZone, t + "-zb"}});
  CaseNode(t, t + "-unzoned", "4");
  auto near = [&](const std::string& app) {
    return PodTerm("podAffinity",
                   {{"labelSelector", MatchLabels("app", app)}, {"topologyKey", kZone}});
  };
  const std::set<std::string> zoned = {t + "-a", t + "-b1", t + "-b2"};
  const std::map<std::string, std::string> zone_of = {
      {t + "-a", "za"}, {t + "-b1", "zb"}, {t + "-b2", "zb"}};
  Case c{.name = t,
         .pods = {Labelled(BoundTo(CasePod(t, "db"), t + "-b1"), {{"app", "db"}}),
                  CasePod(t, "follows-db", near("db")), CasePod(t, "no-such-peer", near("nothing")),
                  Labelled(CasePod(t, "cache-1", near("cache")), {{"app", "cache"}}),
                  Labelled(CasePod(t, "cache-2", near("cache")), {{"app", "cache"}})},
         .expect = {{"follows-db", {t + "-b1", t + "-b2"}, "", ""},
                    {"no-such-peer", {}, "Unschedulable", "didn't match pod affinity rules"},
                    {"cache-1", zoned, "", ""},
                    {"cache-2", zoned, "", ""}},
         .one_by_one = true,
         .check = [zone_of](const std::map<std::string, json>& pods) -> std::string {
           auto zone = [&](const std::string& pod) {
             auto it = pods.find(pod);
             auto z = it == pods.end() ? zone_of.end() : zone_of.find(NodeOf(it->second));
             return z == zone_of.end() ? std::string("none") : z->second;
           };
           if (zone("cache-1") != zone("cache-2"))
             return "cache-1 in zone " + zone("cache-1") + ", cache-2 in " + zone("cache-2");
           return "";
         }};
  RunBoth(c);
}

// The symmetric rule: a running pod's required anti-affinity keeps the pods it names out
// of its zone, though they ask for nothing themselves.
TEST_F(SideBySide, RunningPodsAntiAffinityKeepsOthersAway) {
  const std::string t = "sbs-existing-anti";
  CaseNode(t, t + "-0", "4", {{kZone, t + "-z1"}});
  CaseNode(t, t + "-1", "4", {{kZone, t + "-z1"}});
  CaseNode(t, t + "-2", "4", {{kZone, t + "-z2"}});
  json guard =
      CasePod(t, "guard",
              PodTerm("podAntiAffinity",
                      {{"labelSelector", MatchLabels("app", "intruder")}, {"topologyKey", kZone}}));
  json pinned_to_1 =
      NodeAffinity(json::array({{{"matchExpressions", {Expr(kHostname, "In", {t + "-1"})}}}}));
  Case c{t,
         {Labelled(BoundTo(guard, t + "-0"), {{"app", "guard"}}),
          Labelled(CasePod(t, "intruder"), {{"app", "intruder"}}),
          Labelled(CasePod(t, "intruder-in-z1", pinned_to_1), {{"app", "intruder"}}),
          Labelled(CasePod(t, "friend"), {{"app", "friend"}})},
         {{"intruder", {t + "-2"}, "", ""},
          {"intruder-in-z1",
           {},
           "Unschedulable",
           "node(s) didn't satisfy existing pods anti-affinity rules"},
          {"friend", {t + "-0", t + "-1", t + "-2"}, "", ""}}};
  RunBoth(c);
}

// A term looks at its pod's own namespace, at those it names (namespaces), at those its
// namespaceSelector selects (the union of both when both are given; {} is every
// namespace): peers run in namespace "{ns}-ml" (team=ml, zone 1) and "{ns}-web"
// (team=web, zone 2).
TEST_F(SideBySide, PodAffinityNamespaces) {
  const std::string t = "sbs-namespaces";
  for (int i = 1; i <= 3; ++i) {
    CaseNode(t, t + "-" + std::to_string(i), "4", {{kZone, t + "-z" + std::to_string(i)}});
  }
  auto peer = [&](const std::string& ns_suffix, const std::string& node) {
    json p = Labelled(BoundTo(CasePod(t, "peer"), node), {{"app", "peer"}});
    p["metadata"]["namespace"] = "{ns}-" + ns_suffix;
    return p;
  };
  auto term = [&](const std::string& kind, const std::string& name, json where) {
    json term = {{"labelSelector", MatchLabels("app", "peer")}, {"topologyKey", kZone}};
    term.merge_patch(where);
    return Labelled(CasePod(t, name, PodTerm(kind, term)), {{"app", "client"}});
  };
  const std::string a = "podAffinity";
  Case c{.name = t,
         .pods = {peer("ml", t + "-1"), peer("web", t + "-2"),
                  term(a, "own-namespace", json::object()),
                  term(a, "by-selector", {{"namespaceSelector", MatchLabels("team", "ml")}}),
                  term(a, "by-name", {{"namespaces", {"{ns}-web"}}}),
                  term(a, "by-name-or-selector",
                       {{"namespaces", {"{ns}-web"}},
                        {"namespaceSelector", MatchLabels("team", "ml")}}),
                  term(a, "any-namespace", {{"namespaceSelector", json::object()}}),
                  term("podAntiAffinity", "anti-by-selector",
                       {{"namespaceSelector", MatchLabels("team", "ml")}})},
         .expect = {{"own-namespace", {}, "Unschedulable", "didn't match pod affinity rules"},
                    {"by-selector", {t + "-1"}, "", ""},
                    {"by-name", {t + "-2"}, "", ""},
                    {"by-name-or-selector", {t + "-1", t + "-2"}, "", ""},
                    {"any-namespace", {t + "-1", t + "-2"}, "", ""},
                    {"anti-by-selector", {t + "-2", t + "-3"}, "", ""}},
         .namespaces = {{"ml", {{"team", "ml"}}}, {"web", {{"team", "web"}}}}};
  RunBoth(c);
}

// The symmetric rule within one cycle: a new pod with anti-affinity and a new pod it
// names, created together for one node, do not both run there.
TEST_F(SideBySide, NewPodsAntiAffinityBothWays) {
  const std::string t = "sbs-anti-both";
  CaseNode(t, t + "-0", "4");
  const json apart = PodTerm("podAntiAffinity", {{"labelSelector", MatchLabels("app", "named")},
                                                 {"topologyKey", kHostname}});
  Case c{t,
         {Labelled(CasePod(t, "guard", apart), {{"app", "guard"}}),
          Labelled(CasePod(t, "named"), {{"app", "named"}})},
         {{"guard", {t + "-0"}, "Unschedulable", "anti-affinity rules", /*may_pend=*/true},
          {"named", {t + "-0"}, "Unschedulable", "anti-affinity rules", /*may_pend=*/true}}};
  c.check = Bound({"guard", "named"}, 1, /*apart=*/false);
  RunBoth(c);
}

// Two new pods with affinity to their own label, created together: the first goes to
// either zone, the second follows it (in one cycle for gantry).
TEST_F(SideBySide, PodAffinityFirstOfItsKindTogether) {
  const std::string t = "sbs-affinity-pair";
  CaseNode(t, t + "-a", "4", {{kZone, t + "-za"}});
  CaseNode(t, t + "-b", "4", {{kZone, t + "-zb"}});
  const json near = PodTerm(
      "podAffinity", {{"labelSelector", MatchLabels("app", "pair")}, {"topologyKey", kZone}});
  const std::set<std::string> both = {t + "-a", t + "-b"};
  Case c{.name = t,
         .pods = {Labelled(CasePod(t, "pair-1", near), {{"app", "pair"}}),
                  Labelled(CasePod(t, "pair-2", near), {{"app", "pair"}})},
         .expect = {{"pair-1", both, "", ""}, {"pair-2", both, "", ""}},
         .check = [](const std::map<std::string, json>& pods) -> std::string {
           auto node = [&](const char* pod) {
             auto it = pods.find(pod);
             return it == pods.end() ? std::string() : NodeOf(it->second);
           };
           if (node("pair-1") != node("pair-2"))
             return "pair-1 on " + node("pair-1") + ", pair-2 on " + node("pair-2");
           return "";
         }};
  RunBoth(c);
}

// A node without the term's topology label is in no domain: a pod's anti-affinity does
// not keep it off such a node, nor does the anti-affinity of a pod running there.
TEST_F(SideBySide, AntiAffinityOnANodeWithoutTheTopologyLabel) {
  const std::string t = "sbs-anti-unlabelled";
  CaseNode(t, t + "-zoned", "4", {{kZone, t + "-z1"}});
  CaseNode(t, t + "-bare", "4");
  json guard = CasePod(t, "guard",
                       PodTerm("podAntiAffinity", {{"labelSelector", MatchLabels("app", "named")},
                                                   {"topologyKey", kZone}}));
  json on_bare =
      NodeAffinity(json::array({{{"matchExpressions", {Expr(kHostname, "In", {t + "-bare"})}}}}));
  Case c{t,
         {Labelled(BoundTo(CasePod(t, "web"), t + "-zoned"), {{"app", "web"}}),
          Labelled(BoundTo(guard, t + "-bare"), {{"app", "guard"}}),
          CasePod(t, "away-from-web",
                  PodTerm("podAntiAffinity",
                          {{"labelSelector", MatchLabels("app", "web")}, {"topologyKey", kZone}})),
          Labelled(CasePod(t, "named-beside-guard", on_bare), {{"app", "named"}})},
         {{"away-from-web", {t + "-bare"}, "", ""}, {"named-beside-guard", {t + "-bare"}, "", ""}}};
  RunBoth(c);
}

// matchLabelKeys and mismatchLabelKeys: the API server adds the pod's own values of those
// labels to the term's selector (In, NotIn). Running: app=web version v1 on node 0, v2 on 1.
TEST_F(SideBySide, PodAffinityMatchLabelKeys) {
  const std::string t = "sbs-labelkeys";
  for (int i = 0; i < 3; ++i) CaseNode(t, t + "-" + std::to_string(i), "4");
  auto client = [&](const std::string& name, const std::string& version, const std::string& kind,
                    const std::string& keys_field) {
    json term = {{"labelSelector", MatchLabels("app", "web")},
                 {"topologyKey", kHostname},
                 {keys_field, {"version"}}};
    return Labelled(CasePod(t, name, PodTerm(kind, term)),
                    {{"app", "client"}, {"version", version}});
  };
  Case c{t,
         {Labelled(BoundTo(CasePod(t, "web-v1"), t + "-0"), {{"app", "web"}, {"version", "v1"}}),
          Labelled(BoundTo(CasePod(t, "web-v2"), t + "-1"), {{"app", "web"}, {"version", "v2"}}),
          client("avoid-own-version", "v2", "podAntiAffinity", "matchLabelKeys"),
          client("join-own-version", "v1", "podAffinity", "matchLabelKeys"),
          client("join-other-version", "v1", "podAffinity", "mismatchLabelKeys")},
         {{"avoid-own-version", {t + "-0", t + "-2"}, "", ""},
          {"join-own-version", {t + "-0"}, "", ""},
          {"join-other-version", {t + "-1"}, "", ""}}};
  RunBoth(c);
}

// ---------------------------------------------------------------------------------------
// PodTopologySpread, DoNotSchedule (ScheduleAnyway only scores). Pods labelled app=spread,
// one constraint over zones counting them, maxSkew 1 unless the case says otherwise.

json SpreadPod(const std::string& test, const std::string& name, json constraint_extra = {}) {
  json constraint = {{"maxSkew", 1},
                     {"topologyKey", kZone},
                     {"whenUnsatisfiable", "DoNotSchedule"},
                     {"labelSelector", MatchLabels("app", "spread")}};
  if (!constraint_extra.is_null()) constraint.merge_patch(constraint_extra);
  return Labelled(CasePod(test, name, {{"topologySpreadConstraints", {constraint}}}),
                  {{"app", "spread"}});
}

const char* kSkew = "didn't match pod topology spread constraints";

// Four pods created together over a zone of one node and a zone of two: two per zone.
TEST_F(SideBySide, TopologySpreadOverZones) {
  const std::string t = "sbs-spread";
  CaseNode(t, t + "-a1", "4", {{kZone, t + "-za"}});
  CaseNode(t, t + "-b1", "4", {{kZone, t + "-zb"}});
  CaseNode(t, t + "-b2", "4", {{kZone, t + "-zb"}});
  const std::set<std::string> all = {t + "-a1", t + "-b1", t + "-b2"};
  Case c{.name = t};
  for (int i = 0; i < 4; ++i) {
    const std::string name = "spread-" + std::to_string(i);
    c.pods.push_back(SpreadPod(t, name));
    c.expect.push_back({name, all, "", ""});
  }
  c.check = [t](const std::map<std::string, json>& pods) -> std::string {
    int in_a = 0, in_b = 0;
    for (const auto& [name, pod] : pods) (NodeOf(pod) == t + "-a1" ? in_a : in_b)++;
    if (in_a != 2 || in_b != 2) {
      return std::to_string(in_a) + " pods in zone a, " + std::to_string(in_b) + " in zone b";
    }
    return "";
  };
  RunBoth(c);
}

// minDomains 3 over two zones: the global minimum counts as 0, so with one pod running in
// zone a the next goes to b, and the one after fits nowhere.
TEST_F(SideBySide, TopologySpreadMinDomains) {
  const std::string t = "sbs-spread-mindomains";
  CaseNode(t, t + "-a", "4", {{kZone, t + "-za"}});
  CaseNode(t, t + "-b", "4", {{kZone, t + "-zb"}});
  const json three = {{"minDomains", 3}};
  Case c{.name = t,
         .pods = {BoundTo(SpreadPod(t, "running"), t + "-a"), SpreadPod(t, "next", three),
                  SpreadPod(t, "one-more", three)},
         .expect = {{"next", {t + "-b"}, "", ""}, {"one-more", {}, "Unschedulable", kSkew}},
         .one_by_one = true};
  RunBoth(c);
}

// nodeTaintsPolicy: zone b's only node is tainted. Ignored (the default), zone b counts
// with 0 pods and a second pod in zone a would skew 2; honoured, zone b is not a domain.
TEST_F(SideBySide, TopologySpreadNodeTaintsPolicy) {
  const std::string t = "sbs-spread-taints";
  CaseNode(t, t + "-a", "4", {{kZone, t + "-za"}});
  CaseNode(t, t + "-b", "4", {{kZone, t + "-zb"}},
           json::array({{{"key", "dedicated"}, {"value", "x"}, {"effect", "NoSchedule"}}}));
  Case c{t,
         {BoundTo(SpreadPod(t, "running"), t + "-a"), SpreadPod(t, "taints-ignored"),
          SpreadPod(t, "taints-honoured", {{"nodeTaintsPolicy", "Honor"}})},
         {{"taints-ignored", {}, "Unschedulable", kSkew}, {"taints-honoured", {t + "-a"}, "", ""}}};
  RunBoth(c);
}

// A node without the topology label takes no pod of a DoNotSchedule constraint: three
// pods created together go to zones a and b only, two and one.
TEST_F(SideBySide, TopologySpreadNodeWithoutTheKey) {
  const std::string t = "sbs-spread-nokey";
  CaseNode(t, t + "-a", "4", {{kZone, t + "-za"}});
  CaseNode(t, t + "-b", "4", {{kZone, t + "-zb"}});
  CaseNode(t, t + "-bare", "4");
  Case c{.name = t};
  for (int i = 0; i < 3; ++i) {
    const std::string name = "spread-" + std::to_string(i);
    c.pods.push_back(SpreadPod(t, name));
    c.expect.push_back({name, {t + "-a", t + "-b"}, "", ""});
  }
  c.check = [t](const std::map<std::string, json>& pods) -> std::string {
    int in_a = 0, in_b = 0;
    for (const auto& [name, pod] : pods) (NodeOf(pod) == t + "-a" ? in_a : in_b)++;
    if (std::abs(in_a - in_b) != 1) {
      return std::to_string(in_a) + " pods in zone a, " + std::to_string(in_b) + " in zone b";
    }
    return "";
  };
  RunBoth(c);
}

// matchLabelKeys: the pod counts only pods with its own value of "version". Two v1 pods
// run in zone a; a v2 pod too large for zone b's node still fits zone a, a v1 one does
// not (zone b counts, with 0, though the pod does not fit there).
TEST_F(SideBySide, TopologySpreadMatchLabelKeys) {
  const std::string t = "sbs-spread-labelkeys";
  CaseNode(t, t + "-a", "8", {{kZone, t + "-za"}});
  CaseNode(t, t + "-b", "2", {{kZone, t + "-zb"}});
  auto versioned = [&](const std::string& name, const std::string& version,
                       const std::string& cpu) {
    json pod = SpreadPod(t, name, {{"matchLabelKeys", {"version"}}});
    pod["metadata"]["labels"]["version"] = version;
    pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = cpu;
    return pod;
  };
  auto running = [&](const std::string& name) {
    json pod = BoundTo(SpreadPod(t, name), t + "-a");
    pod["metadata"]["labels"]["version"] = "v1";
    return pod;
  };
  Case c{t,
         {running("v1-a"), running("v1-b"), versioned("new-v2", "v2", "3"),
          versioned("new-v1", "v1", "3")},
         {{"new-v2", {t + "-a"}, "", ""}, {"new-v1", {}, "Unschedulable", kSkew}}};
  RunBoth(c);
}

// nodeAffinityPolicy: the pods select pool x (zone a) only. Honoured (the default), zone
// b is not a domain; ignored, it counts with 0 pods and zone a would skew 2.
TEST_F(SideBySide, TopologySpreadNodeAffinityPolicy) {
  const std::string t = "sbs-spread-affinity";
  CaseNode(t, t + "-a", "4", {{kZone, t + "-za"}, {"pool", "x"}});
  CaseNode(t, t + "-b", "4", {{kZone, t + "-zb"}, {"pool", "y"}});
  auto in_pool_x = [&](json pod) {
    pod["spec"]["nodeSelector"]["pool"] = "x";
    return pod;
  };
  Case c{t,
         {BoundTo(SpreadPod(t, "running"), t + "-a"), in_pool_x(SpreadPod(t, "affinity-honoured")),
          in_pool_x(SpreadPod(t, "affinity-ignored", {{"nodeAffinityPolicy", "Ignore"}}))},
         {{"affinity-honoured", {t + "-a"}, "", ""},
          {"affinity-ignored", {}, "Unschedulable", kSkew}}};
  RunBoth(c);
}

// ---------------------------------------------------------------------------------------
// PersistentVolumeClaims (VolumeRestrictions, VolumeBinding, VolumeZone). Claims are made
// bound as the PV controller leaves them (spec.volumeName and the bind-completed
// annotation); the WaitForFirstConsumer cases below run the PV controller itself.

// A cluster-scoped object (a PersistentVolume, a StorageClass) for the case.
void ClusterObject(const std::string& collection, json object) {
  auto r = Env().Call("POST", collection, object);
  ASSERT_TRUE(r.ok()) << r.status().message();
}

// A PersistentVolume named `name` of 1Gi: `source` its volume source and more of its spec.
void Volume(const std::string& name, json spec, json labels = json::object(),
            const std::string& access_mode = "ReadWriteOnce") {
  json pv = {{"apiVersion", "v1"},
             {"kind", "PersistentVolume"},
             {"metadata", {{"name", name}, {"labels", labels}}},
             {"spec",
              {{"capacity", {{"storage", "1Gi"}}},
               {"accessModes", {access_mode}},
               {"persistentVolumeReclaimPolicy", "Retain"}}}};
  pv["spec"].merge_patch(spec);
  ClusterObject("/api/v1/persistentvolumes", pv);
}

// A claim for 1Gi, bound to `volume` as the PV controller leaves it, or unbound ("").
json Claim(const std::string& name, const std::string& volume, const std::string& storage_class,
           const std::string& access_mode = "ReadWriteOnce") {
  json c = {{"metadata", {{"name", name}}},
            {"spec",
             {{"accessModes", {access_mode}},
              {"storageClassName", storage_class},
              {"resources", {{"requests", {{"storage", "1Gi"}}}}}}}};
  if (!volume.empty()) {
    c["spec"]["volumeName"] = volume;
    c["metadata"]["annotations"] = {{"pv.kubernetes.io/bind-completed", "yes"}};
  }
  return c;
}

json ClaimVolume(const std::string& claim) {
  return {{"volumes", {{{"name", "data"}, {"persistentVolumeClaim", {{"claimName", claim}}}}}}};
}

json LocalOn(const std::string& node) {
  return {{"local", {{"path", "/mnt/disks/ssd1"}}},
          {"nodeAffinity",
           {{"required",
             {{"nodeSelectorTerms",
               {{{"matchExpressions",
                  {{{"key", "kubernetes.io/hostname"},
                    {"operator", "In"},
                    {"values", {node}}}}}}}}}}}}};
}

// The documentation's local volume: the pod goes only to the volume's node; a volume on a
// node that does not exist keeps its pod pending.
TEST_F(SideBySide, LocalVolumeNodeAffinity) {
  const std::string t = "sbs-local";
  for (int i = 0; i < 3; ++i) CaseNode(t, t + "-" + std::to_string(i), "4");
  Volume(t + "-pv", LocalOn(t + "-1"));
  Volume(t + "-gone", LocalOn(t + "-gone"));
  Case c{t,
         {CasePod(t, "local", ClaimVolume("data")), CasePod(t, "stranded", ClaimVolume("gone"))},
         {{"local", {t + "-1"}, "", ""},
          {"stranded", {}, "Unschedulable", "node(s) had volume node affinity conflict"}},
         {Claim("data", t + "-pv", ""), Claim("gone", t + "-gone", "")}};
  RunBoth(c);
}

// VolumeZone: a volume labelled with one zone takes its pod to that zone's node.
TEST_F(SideBySide, VolumeInOneZone) {
  const std::string t = "sbs-zone";
  for (const char* z : {"a", "b", "c"}) {
    CaseNode(t, t + "-" + z, "4",
             {{"topology.kubernetes.io/zone", std::string("zone-") + z},
              {"topology.kubernetes.io/region", "region-1"}});
  }
  Volume(
      t + "-pv", {{"hostPath", {{"path", "/tmp/sbs-zone"}}}},
      {{"topology.kubernetes.io/zone", "zone-b"}, {"topology.kubernetes.io/region", "region-1"}});
  Case c{t,
         {CasePod(t, "zoned", ClaimVolume("data"))},
         {{"zoned", {t + "-b"}, "", ""}},
         {Claim("data", t + "-pv", "")}};
  RunBoth(c);
}

// A claim that does not exist, and one unbound in a class that binds immediately: the pod
// waits, in kube-scheduler's words.
TEST_F(SideBySide, MissingAndUnboundImmediateClaims) {
  const std::string t = "sbs-claims-pending";
  CaseNode(t, t + "-0", "4");
  ClusterObject("/apis/storage.k8s.io/v1/storageclasses",
                {{"apiVersion", "storage.k8s.io/v1"},
                 {"kind", "StorageClass"},
                 {"metadata", {{"name", t + "-immediate"}}},
                 {"provisioner", "example.com/none"},
                 {"volumeBindingMode", "Immediate"}});
  Case c{t,
         {CasePod(t, "missing", ClaimVolume("no-such-claim")),
          CasePod(t, "unbound", ClaimVolume("unbound"))},
         {{"missing", {}, "Unschedulable", "persistentvolumeclaim \"no-such-claim\" not found"},
          {"unbound", {}, "Unschedulable", "pod has unbound immediate PersistentVolumeClaims"}},
         {Claim("unbound", "", t + "-immediate")}};
  RunBoth(c);
}

// VolumeRestrictions: a ReadWriteOncePod claim that a bound pod uses keeps another pod
// that wants it pending.
TEST_F(SideBySide, ReadWriteOncePodClaimUsedByARunningPod) {
  const std::string t = "sbs-rwop";
  CaseNode(t, t + "-0", "4");
  CaseNode(t, t + "-1", "4");
  Volume(t + "-pv", {{"hostPath", {{"path", "/tmp/sbs-rwop"}}}}, json::object(),
         "ReadWriteOncePod");
  json holder = CasePod(t, "holder", ClaimVolume("data"));
  holder["spec"]["nodeName"] = t + "-0";
  Case c{t,
         {holder, CasePod(t, "second", ClaimVolume("data"))},
         {{"holder", {t + "-0"}, "", ""},
          {"second",
           {},
           "Unschedulable",
           "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod "
           "access mode"}},
         {Claim("data", t + "-pv", "", "ReadWriteOncePod")}};
  RunBoth(c);
}

// ---------------------------------------------------------------------------------------
// WaitForFirstConsumer: the scheduler chooses a volume (its claimRef) or a node to
// provision on (the claim's volume.kubernetes.io/selected-node) and binds the pod once the
// PV controller has bound the claim. Here the real PV controller does its part
// (kube-controller-manager with persistentvolume-binder only, started for these cases);
// no external provisioner runs, so a claim to provision stays unbound, unless the case
// provisions it by hand.

const std::pair<std::string, std::string> kRuns[] = {{kReference, "kube"}, {kGantry, "gantry"}};

std::string Who(const std::string& scheduler) {
  return scheduler == kGantry ? "gantry" : "kube-scheduler";
}

// A WaitForFirstConsumer class; `extra` merged into it (provisioner, allowedTopologies).
void WffcClass(const std::string& name, json extra) {
  json sc = {{"apiVersion", "storage.k8s.io/v1"},
             {"kind", "StorageClass"},
             {"metadata", {{"name", name}}},
             {"provisioner", "kubernetes.io/no-provisioner"},
             {"volumeBindingMode", "WaitForFirstConsumer"}};
  sc.merge_patch(extra);
  ClusterObject("/apis/storage.k8s.io/v1/storageclasses", sc);
}

json Get(const std::string& path) {
  auto r = Env().Call("GET", path);
  return r.ok() ? *r : json();
}

// A local volume of the class on `node`, once the PV controller has made it Available.
void AvailableVolume(const std::string& name, const std::string& node,
                     const std::string& storage_class) {
  json spec = LocalOn(node);
  spec["storageClassName"] = storage_class;
  Volume(name, spec);
  EXPECT_TRUE(TestEnv::WaitFor(
      [&] {
        return Get("/api/v1/persistentvolumes/" + name)
                   .value("/status/phase"_json_pointer, std::string()) == "Available";
      },
      seconds(30), milliseconds(100)))
      << "the PV controller did not make " << name << " Available";
}

json ClaimOf(const std::string& ns, const std::string& name) {
  return Get("/api/v1/namespaces/" + ns + "/persistentvolumeclaims/" + name);
}

std::string SelectedNode(const json& claim) {
  return claim.value("/metadata/annotations/volume.kubernetes.io~1selected-node"_json_pointer,
                     std::string());
}

class SideBySideWffc : public SideBySide {
 protected:
  static void SetUpTestSuite() {
    SideBySide::SetUpTestSuite();
    Status started = Env().StartControllerManager();
    ASSERT_TRUE(started.ok()) << started.message();
  }
};

// A static local volume on one node: the pod goes there, the volume's claimRef names the
// claim, and the pod is bound once the claim is.
TEST_F(SideBySideWffc, StaticLocalVolumeTakesThePodToItsNode) {
  const std::string t = "sbs-wffc-static";
  for (int i = 0; i < 3; ++i) CaseNode(t, t + "-" + std::to_string(i), "4");
  WffcClass(t, json::object());
  for (const auto& [scheduler, run] : kRuns) {
    SCOPED_TRACE(Who(scheduler));
    const std::string ns = t + "-" + run;
    AvailableVolume(t + "-pv-" + run, t + "-1", t);
    Case c{t,
           {CasePod(t, "consumer", ClaimVolume("data"))},
           {{"consumer", {t + "-1"}, "", ""}},
           {Claim("data", "", t)}};
    ExpectAsKubeSchedulerAllows(c, Schedule(c, scheduler, ns), Who(scheduler));
    const json pv = Get("/api/v1/persistentvolumes/" + t + "-pv-" + run);
    EXPECT_EQ(pv.value("/spec/claimRef/namespace"_json_pointer, std::string()), ns);
    EXPECT_EQ(pv.value("/spec/claimRef/name"_json_pointer, std::string()), "data");
    const json claim = ClaimOf(ns, "data");
    EXPECT_EQ(claim.value("/spec/volumeName"_json_pointer, std::string()), t + "-pv-" + run);
    EXPECT_EQ(claim.value("/status/phase"_json_pointer, std::string()), "Bound");
    DeletePods(ns);
  }
  ASSERT_TRUE(daemon_->running()) << daemon_->Log();
}

// Two pods, two claims, one volume that fits both: one runs on its node, the other waits.
TEST_F(SideBySideWffc, OneVolumeForTwoClaims) {
  const std::string t = "sbs-wffc-one";
  for (int i = 0; i < 2; ++i) CaseNode(t, t + "-" + std::to_string(i), "4");
  WffcClass(t, json::object());
  for (const auto& [scheduler, run] : kRuns) {
    SCOPED_TRACE(Who(scheduler));
    const std::string ns = t + "-" + run;
    AvailableVolume(t + "-pv-" + run, t + "-1", t);
    Case c{t,
           {CasePod(t, "a", ClaimVolume("data-a")), CasePod(t, "b", ClaimVolume("data-b"))},
           {},
           {Claim("data-a", "", t), Claim("data-b", "", t)}};
    (void)Schedule(c, scheduler, ns);
    std::map<std::string, json> pods;
    int bound = 0, waiting = 0;
    TestEnv::WaitFor(
        [&] {
          pods = PodsOf(ns);
          bound = waiting = 0;
          for (const auto& [name, pod] : pods) {
            if (pod["spec"].contains("nodeName")) bound++;
            if (PodScheduledFalse(pod) != nullptr) waiting++;
          }
          return bound == 1 && waiting == 1;
        },
        seconds(30), milliseconds(200));
    EXPECT_EQ(bound, 1);
    EXPECT_EQ(waiting, 1);
    for (const auto& [name, pod] : pods) {
      if (pod["spec"].contains("nodeName")) {
        EXPECT_EQ(pod["spec"]["nodeName"], t + "-1");
        continue;
      }
      const json* condition = PodScheduledFalse(pod);
      ASSERT_NE(condition, nullptr) << name;
      EXPECT_EQ(condition->value("reason", ""), "Unschedulable");
      if (scheduler == kGantry) {
        EXPECT_NE(condition->value("message", "")
                      .find("node(s) didn't find available persistent volumes to bind"),
                  std::string::npos)
            << condition->value("message", "");
      }
    }
    DeletePods(ns);
  }
}

// Provisioning where the class's allowedTopologies allow: the claim names a node of the
// allowed zone. With no provisioner running, it stays unbound and the pod pending (in
// PreBind, without a PodScheduled=False condition), for both schedulers.
TEST_F(SideBySideWffc, ProvisioningSelectsAnAllowedNode) {
  const std::string t = "sbs-wffc-topology";
  for (const char* z : {"a", "b"}) {
    CaseNode(t, t + "-" + z, "4", {{"topology.kubernetes.io/zone", std::string("zone-") + z}});
  }
  WffcClass(t, {{"provisioner", "example.com/nobody"},
                {"allowedTopologies",
                 {{{"matchLabelExpressions",
                    {{{"key", "topology.kubernetes.io/zone"}, {"values", {"zone-b"}}}}}}}}});
  for (const auto& [scheduler, run] : kRuns) {
    SCOPED_TRACE(Who(scheduler));
    const std::string ns = t + "-" + run;
    Case c{t,
           {CasePod(t, "consumer", ClaimVolume("data"))},
           {{"consumer", {}, "", ""}},
           {Claim("data", "", t)}};
    (void)Schedule(c, scheduler, ns);
    EXPECT_TRUE(TestEnv::WaitFor([&] { return !SelectedNode(ClaimOf(ns, "data")).empty(); },
                                 seconds(30), milliseconds(200)));
    EXPECT_EQ(SelectedNode(ClaimOf(ns, "data")), t + "-b");
    std::this_thread::sleep_for(seconds(2));
    ExpectAsKubeSchedulerAllows(c, PodsOf(ns), Who(scheduler));
    EXPECT_EQ(ClaimOf(ns, "data").value("/status/phase"_json_pointer, std::string()), "Pending");
    DeletePods(ns);
  }
}

// No volume and a class that cannot provision: pending, in kube-scheduler's words.
TEST_F(SideBySideWffc, NoVolumeAndNoProvisioner) {
  const std::string t = "sbs-wffc-none";
  CaseNode(t, t + "-0", "4");
  WffcClass(t, json::object());
  Case c{t,
         {CasePod(t, "consumer", ClaimVolume("data"))},
         {{"consumer",
           {},
           "Unschedulable",
           "node(s) didn't find available persistent volumes to bind"}},
         {Claim("data", "", t)}};
  RunBoth(c);
}

// Provisioned where the scheduler chose (by the test, standing in for an external
// provisioner: a volume pre-bound to the claim on the selected node, which the PV
// controller then binds), then the pod bound there.
TEST_F(SideBySideWffc, ProvisionedWhereChosenThenBound) {
  const std::string t = "sbs-wffc";
  CaseNode(t, t + "-0", "4");
  CaseNode(t, t + "-1", "4");
  WffcClass(t + "-late", {{"provisioner", "example.com/by-the-test"}});
  for (const auto& [scheduler, run] : kRuns) {
    SCOPED_TRACE(Who(scheduler));
    const std::string ns = t + "-" + run;
    std::atomic<bool> done{false};
    std::thread provisioner([&, ns = ns, run = run] {
      while (!done.load()) {
        std::this_thread::sleep_for(milliseconds(200));
        const json claim = ClaimOf(ns, "data");
        const std::string node = SelectedNode(claim);
        if (node.empty()) continue;
        json spec = LocalOn(node);
        spec["storageClassName"] = t + "-late";
        spec["claimRef"] = {
            {"namespace", ns}, {"name", "data"}, {"uid", claim["metadata"].value("uid", "")}};
        Volume(t + "-provisioned-" + run, spec);
        return;
      }
    });
    const Case c{t,
                 {CasePod(t, "consumer", ClaimVolume("data"))},
                 {{"consumer", {t + "-0", t + "-1"}, "", ""}},
                 {Claim("data", "", t + "-late")}};
    const auto pods = Schedule(c, scheduler, ns);
    done = true;
    provisioner.join();
    ExpectAsKubeSchedulerAllows(c, pods, Who(scheduler));
    const json claim = ClaimOf(ns, "data");
    EXPECT_EQ(pods.at("consumer")["spec"].value("nodeName", ""), SelectedNode(claim));
    DeletePods(ns);
  }
  ASSERT_TRUE(daemon_->running()) << daemon_->Log();
  EXPECT_EQ(SanitizerReport(daemon_->Log()), "");
}

}  // namespace
}  // namespace gantry::testing

// The side-by-side harness (tests/integration/side_by_side_*_test.cc): the same pods
// scheduled twice on the same nodes of the real API server, once by the upstream
// kube-scheduler (the reference, a profile of its own so that it takes only the pods that
// ask for it), once by `gantry serve`. Each case says what kube-scheduler's rules allow:
// which pods run and on which nodes they may, which stay pending and why. Both schedulers
// are held to it, so the reference shows that the case says what kube-scheduler does, and
// gantry must do the same. At its end each suite prints a table
// (case | pod | kube-scheduler | gantry | allowed) of where each pod went.
#pragma once

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

using json = nlohmann::json;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr const char* kReference = "kube-reference";
constexpr const char* kGantry = "gantry-side-by-side";

inline TestEnv& Env() {
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
  // Why gantry's PodScheduled messages differ from kube-scheduler's in this case; "" when
  // they must not: then each pod both leave pending reads the same, bar kube-scheduler's
  // PostFilter part (preemption, which gantry's daemon does not do).
  std::string words_differ = "";
  // Namespaced objects made in the run's namespace before the pods (e.g. PodGroups), with
  // "{ns}" replaced and metadata.namespace set.
  std::vector<json> objects = {};
};

// A node of the case (label sbs-case=NAME), with taints when given.
inline void CaseNode(const std::string& test, const std::string& name, const std::string& cpu,
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

inline json Container(const std::string& name, const std::string& cpu) {
  return {{"name", name},
          {"image", "registry.k8s.io/pause:3.10"},
          {"resources", {{"requests", {{"cpu", cpu}, {"memory", "64Mi"}}}}}};
}

// A pod of the case: one container of `cpu`, on the case's nodes only; `extra` merged
// into its spec.
inline json CasePod(const std::string& test, const std::string& name, json extra = json::object(),
                    const std::string& cpu = "100m") {
  json spec = {{"nodeSelector", {{"sbs-case", test}}}, {"containers", {Container("main", cpu)}}};
  spec.merge_patch(extra);
  return {{"metadata", {{"name", name}}}, {"spec", spec}};
}

inline json NodeAffinity(json terms) {
  return {
      {"affinity",
       {{"nodeAffinity",
         {{"requiredDuringSchedulingIgnoredDuringExecution", {{"nodeSelectorTerms", terms}}}}}}}};
}

inline const json* PodScheduledFalse(const json& pod) {
  if (!pod.contains("status") || !pod["status"].contains("conditions")) return nullptr;
  for (const json& c : pod["status"]["conditions"]) {
    if (c.value("type", "") == "PodScheduled" && c.value("status", "") == "False") return &c;
  }
  return nullptr;
}

inline std::string NodeOf(const json& pod) {
  return pod.value("/spec/nodeName"_json_pointer, std::string());
}

inline std::map<std::string, json> PodsOf(const std::string& ns) {
  std::map<std::string, json> out;
  auto r = Env().Call("GET", "/api/v1/namespaces/" + ns + "/pods");
  if (!r.ok()) return out;
  for (const json& p : (*r)["items"]) out[p["metadata"]["name"].get<std::string>()] = p;
  return out;
}

// A case's object with "{ns}" replaced by the run's namespace.
inline json InNamespace(const json& object, const std::string& ns) {
  std::string text = object.dump();
  for (size_t at = text.find("{ns}"); at != std::string::npos; at = text.find("{ns}", at)) {
    text.replace(at, 4, ns);
    at += ns.size();
  }
  return json::parse(text);
}

// Whether a pod is in a state the case can be judged on: bound; or, when kube-scheduler
// leaves it pending for a reason (or may), pending with a PodScheduled=False condition.
inline bool Settled(const Expect& e, const json* pod) {
  if (pod == nullptr) return false;
  if (!NodeOf(*pod).empty()) return true;
  if (!e.nodes.empty() && !e.may_pend) return false;
  return (e.pending_reason.empty() && !e.may_pend) || PodScheduledFalse(*pod) != nullptr;
}

// Creates the case's pods for `scheduler` in namespace `ns` and waits until each has the
// state the case expects (Settled) and the case's `check` holds, or 30 s pass: a message
// the scheduler rewrites once a later object arrives is judged when it has been rewritten,
// not at whatever moment the machine's load gives. Returns the pods as they then are.
inline std::map<std::string, json> Schedule(const Case& c, const std::string& scheduler,
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
  for (const json& case_object : c.objects) {
    json object = InNamespace(case_object, ns);
    object["metadata"]["namespace"] = ns;
    auto r = Env().Apply(object);
    EXPECT_TRUE(r.ok()) << r.status().message();
  }
  auto all_settled = [&](const std::map<std::string, json>& pods) {
    for (const Expect& e : c.expect) {
      auto it = pods.find(e.pod);
      if (!Settled(e, it == pods.end() ? nullptr : &it->second)) return false;
    }
    return !c.check || c.check(pods).empty();
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
inline void DeletePods(const std::string& ns) {
  for (const auto& [name, pod] : PodsOf(ns)) {
    (void)Env().Call("DELETE", "/api/v1/namespaces/" + ns + "/pods/" + name,
                     json{{"gracePeriodSeconds", 0}});
  }
  TestEnv::WaitFor([&] { return PodsOf(ns).empty(); }, seconds(30), milliseconds(100));
}

inline std::string Outcome(const json* pod) {
  if (pod == nullptr) return "(no pod)";
  if (std::string node = NodeOf(*pod); !node.empty()) return node;
  const json* condition = PodScheduledFalse(*pod);
  return condition == nullptr ? "pending" : "pending (" + condition->value("reason", "") + ")";
}

// kube-scheduler's FitError without what its PostFilter (preemption) added after the
// filters' reasons: "0/N nodes are available: REASONS. POSTFILTER" (no reason has ". ").
inline std::string WithoutPostFilter(const std::string& message) {
  if (message.rfind("0/", 0) != 0) return message;
  const size_t end = message.find(". ");
  return end == std::string::npos ? message : message.substr(0, end + 1);
}

// A pending pod's PodScheduled=False message ("" when it has none).
inline std::string PendingMessage(const json& pod) {
  const json* condition = PodScheduledFalse(pod);
  return condition == nullptr || !NodeOf(pod).empty() ? "" : condition->value("message", "");
}

inline std::string Allowed(const Expect& e) {
  if (e.nodes.empty()) {
    return e.pending_reason.empty() ? "pending" : "pending (" + e.pending_reason + ")";
  }
  std::string nodes;
  for (const std::string& n : e.nodes) nodes += (nodes.empty() ? "" : " or ") + n;
  return e.may_pend ? nodes + " or pending" : nodes;
}

// The daemon with the engine as shipped (SchedulerConfig::Default, kube-scheduler's
// default profile's filters), not the shorter plugin list of the other daemon tests.
inline std::string ShippedEngineConfig() {
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
      Record(c, e, who, Outcome(it == pods.end() ? nullptr : &it->second),
             it == pods.end() ? "" : PendingMessage(it->second));
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

  // Both schedulers, one after the other, on the case's nodes; each held to the case. Call
  // it inside ASSERT_NO_FATAL_FAILURE: its ASSERTs end only it.
  static void RunBoth(const Case& c) {
    const auto reference = Schedule(c, kReference, c.name + "-kube");
    ExpectAsKubeSchedulerAllows(c, reference, "kube-scheduler");
    DeletePods(c.name + "-kube");
    for (const auto& [suffix, labels] : c.namespaces) DeletePods(c.name + "-kube-" + suffix);
    const auto ours = Schedule(c, kGantry, c.name + "-gantry");
    ExpectAsKubeSchedulerAllows(c, ours, "gantry");
    if (c.words_differ.empty()) ExpectTheSameWords(c, reference, ours);
    ASSERT_TRUE(daemon_->running()) << daemon_->Log();
    EXPECT_EQ(SanitizerReport(daemon_->Log()), "");
  }

  // Each pod that both schedulers left pending says why in the same words.
  static void ExpectTheSameWords(const Case& c, const std::map<std::string, json>& reference,
                                 const std::map<std::string, json>& ours) {
    for (const Expect& e : c.expect) {
      auto kube = reference.find(e.pod);
      auto gantry = ours.find(e.pod);
      if (kube == reference.end() || gantry == ours.end()) continue;
      const std::string kube_words = PendingMessage(kube->second);
      const std::string gantry_words = PendingMessage(gantry->second);
      if (kube_words.empty() || gantry_words.empty()) continue;  // placed by one of them
      EXPECT_EQ(gantry_words, WithoutPostFilter(kube_words))
          << c.name << "/" << e.pod << ": gantry's words are not kube-scheduler's";
    }
  }

  static inline DaemonProcess* daemon_ = nullptr;

 private:
  // One line of the table the suite prints at its end, for the notes.
  struct Row {
    std::string case_name, pod, kube, gantry, allowed;
    std::string kube_message, gantry_message;  // PodScheduled=False messages, if pending
  };

  static void Record(const Case& c, const Expect& e, const std::string& who,
                     const std::string& outcome, const std::string& message) {
    auto row = std::find_if(rows_.begin(), rows_.end(),
                            [&](const Row& r) { return r.case_name == c.name && r.pod == e.pod; });
    if (row == rows_.end())
      row = rows_.insert(rows_.end(), Row{c.name, e.pod, "", "", Allowed(e), "", ""});
    (who == "gantry" ? row->gantry : row->kube) = outcome;
    (who == "gantry" ? row->gantry_message : row->kube_message) = message;
  }

  static void PrintTable() {
    std::cout << "\n| case | pod | kube-scheduler | gantry | allowed |\n|---|---|---|---|---|\n";
    for (const Row& r : rows_) {
      std::cout << "| " << r.case_name << " | " << r.pod << " | " << r.kube << " | " << r.gantry
                << " | " << r.allowed << " |\n";
    }
    // The words of each pending pod, to hold gantry's to kube-scheduler's.
    std::cout
        << "\n| case | pod | kube-scheduler's message | gantry's message |\n|---|---|---|---|\n";
    for (const Row& r : rows_) {
      if (r.kube_message.empty() && r.gantry_message.empty()) continue;
      std::cout << "| " << r.case_name << " | " << r.pod << " | " << r.kube_message << " | "
                << r.gantry_message << " |\n";
    }
    std::cout << std::flush;
    rows_.clear();  // a suite derived from this one prints its own cases
  }

  static inline std::vector<Row> rows_;
};

// ---------------------------------------------------------------------------------------
// Pieces of pods and nodes.

// Sets resources of a case node, capacity and allocatable alike (as CreateNode does).
inline void NodeResources(const std::string& name, json resources) {
  auto r = Env().Call("PATCH", "/api/v1/nodes/" + name + "/status",
                      json{{"status", {{"capacity", resources}, {"allocatable", resources}}}},
                      "application/merge-patch+json");
  ASSERT_TRUE(r.ok()) << r.status().message();
}

inline json Labelled(json pod, json labels) {
  pod["metadata"]["labels"] = std::move(labels);
  return pod;
}

// A pod its user placed (spec.nodeName): bound as created, no scheduler's.
inline json BoundTo(json pod, const std::string& node) {
  pod["spec"]["nodeName"] = node;
  return pod;
}

inline json Requests(json pod, const json& requests, bool limits_too = false) {
  json& resources = pod["spec"]["containers"][0]["resources"];
  resources["requests"].merge_patch(requests);
  if (limits_too) resources["limits"] = requests;
  return pod;
}

inline json Expr(const std::string& key, const std::string& op,
                 std::vector<std::string> values = {}) {
  json e = {{"key", key}, {"operator", op}};
  if (!values.empty()) e["values"] = values;
  return e;
}

inline json MatchLabels(const std::string& key, const std::string& value) {
  return {{"matchLabels", {{key, value}}}};
}

// spec.affinity with one required term of `kind` (podAffinity, podAntiAffinity).
inline json PodTerm(const std::string& kind, json term) {
  return {{"affinity", {{kind, {{"requiredDuringSchedulingIgnoredDuringExecution", {term}}}}}}};
}

constexpr const char* kZone = "topology.kubernetes.io/zone";
constexpr const char* kHostname = "kubernetes.io/hostname";

// A check that exactly `pending` pods of `group` are not bound and, when `apart`, that
// the others are bound on pairwise different nodes.
inline std::function<std::string(const std::map<std::string, json>&)> Bound(
    std::vector<std::string> group, size_t pending, bool apart) {
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

}  // namespace gantry::testing

// DRA side by side with kube-scheduler (issue 29): each feature of the structured allocator
// in a case built so that an allocator ignoring the feature would bind a pod elsewhere (or
// leave it pending where it fits, or bind it where it does not). Both schedulers run the case
// at once, each on nodes of its own publishing the same devices, and are held to what the
// case says kube-scheduler does: each pod bound on the node of a role, or pending; each
// claim of a bound pod allocated devices of that node, for the claim's requests, reserved
// for the pod; where the case knows, the very devices. The suite prints a table of both.
#include "tests/integration/side_by_side_dra.h"
#include "model/quantity.h"

namespace gantry::testing {
namespace {

// Where a pod of the case must end: on the node of `role`, pending (""), or on the node of
// another pod ("=POD").
struct PodExpect {
  std::string pod;
  std::string role;
};

struct DraCase {
  std::string name;
  std::vector<std::string> roles;
  // The ResourceSlices of the node of `role`, named `node`.
  std::function<std::vector<json>(const std::string& role, const std::string& node)> slices;
  std::vector<json> classes = {};  // DeviceClasses, named after the case
  std::vector<json> claims = {};
  std::vector<json> pods = {};  // made one by one, each once settled as expected
  std::vector<PodExpect> expect = {};
  // Claim -> its results ("request=device", sorted), where the case decides them.
  std::map<std::string, std::vector<std::string>> results = {};
  std::map<std::string, std::string> namespace_labels = {};
  // DeviceTaintRules for the run's nodes (made before the pods, deleted after).
  std::function<std::vector<json>(const std::string& run)> taint_rules = {};
  // Claims as they ended -> what is wrong, or "".
  std::function<std::string(const std::map<std::string, json>& claims)> check = {};
};

struct RunOutcome {
  std::map<std::string, json> pods;
  std::map<std::string, json> claims;
  std::map<std::string, std::string> role_of_node;
};

struct DraRow {
  std::string case_name, pod, expected, kube, gantry;
};

class DraSideBySide : public SideBySide {
 protected:
  static void SetUpTestSuite() { SideBySide::SetUpTestSuite(); }
  static void TearDownTestSuite() {
    delete daemon_;
    daemon_ = nullptr;
    std::cout << "\n| case | pod | expected | kube-scheduler | gantry |\n|---|---|---|---|---|\n";
    for (const DraRow& r : dra_rows_) {
      std::cout << "| " << r.case_name << " | " << r.pod << " | " << r.expected << " | " << r.kube
                << " | " << r.gantry << " |\n";
    }
    std::cout << std::flush;
  }

  static bool Served(const std::string& resource) {
    auto list = Env().Call("GET", kDraApi);
    if (!list.ok()) return false;
    for (const json& r : (*list)["resources"]) {
      if (r.value("name", "") == resource) return true;
    }
    return false;
  }

  // Runs the case for kube-scheduler and gantry at once and holds both to it.
  static void RunBoth(const DraCase& c) {
    for (const json& cls : c.classes) CreateObject(std::string(kDraApi) + "/deviceclasses", cls);
    RunOutcome kube, ours;
    std::thread reference([&] { kube = Run(c, kReference, c.name + "-kube"); });
    ours = Run(c, kGantry, c.name + "-gantry");
    reference.join();
    Judge(c, kube, "kube-scheduler");
    Judge(c, ours, "gantry");
    for (const PodExpect& e : c.expect) {
      dra_rows_.push_back({c.name, e.pod, e.role.empty() ? "pending" : e.role,
                           Describe(kube, e.pod), Describe(ours, e.pod)});
    }
    ASSERT_TRUE(daemon_->running()) << daemon_->Log();
  }

 private:
  static bool SettledAs(const PodExpect& e, const json& pod) {
    if (!e.role.empty()) return !NodeOf(pod).empty();
    return !NodeOf(pod).empty() || PodScheduledFalse(pod) != nullptr;
  }

  static RunOutcome Run(const DraCase& c, const std::string& scheduler, const std::string& run) {
    RunOutcome out;
    json ns = {{"apiVersion", "v1"},
               {"kind", "Namespace"},
               {"metadata", {{"name", run}, {"labels", c.namespace_labels}}}};
    CreateObject("/api/v1/namespaces", ns);
    for (const std::string& role : c.roles) {
      const std::string node = run + "-" + role;
      out.role_of_node[node] = role;
      auto made = Env().CreateNode(node, 0, "4", "16Gi", {{kRunLabel, run}, {kRoleLabel, role}});
      EXPECT_TRUE(made.ok()) << made.status().message();
      for (const json& slice : c.slices(role, node)) {
        CreateObject(std::string(kDraApi) + "/resourceslices", slice);
      }
    }
    std::vector<std::string> rules;
    if (c.taint_rules) {
      for (const json& rule : c.taint_rules(run)) {
        CreateObject(std::string(kDraApi) + "/devicetaintrules", rule);
        rules.push_back(rule["metadata"]["name"].get<std::string>());
      }
    }
    for (const json& claim : c.claims) {
      CreateObject(std::string(kDraApi) + "/namespaces/" + run + "/resourceclaims", claim);
    }
    for (const json& case_pod : c.pods) {
      json pod = case_pod;
      pod["apiVersion"] = "v1";
      pod["kind"] = "Pod";
      pod["metadata"]["namespace"] = run;
      pod["spec"]["schedulerName"] = scheduler;
      pod["spec"]["nodeSelector"][kRunLabel] = run;
      const std::string name = pod["metadata"]["name"].get<std::string>();
      CreateObject("/api/v1/namespaces/" + run + "/pods", pod);
      auto e = std::find_if(c.expect.begin(), c.expect.end(),
                            [&](const PodExpect& x) { return x.pod == name; });
      if (e == c.expect.end()) continue;
      EXPECT_TRUE(TestEnv::WaitFor(
          [&] {
            auto got = Env().Call("GET", "/api/v1/namespaces/" + run + "/pods/" + name);
            return got.ok() && SettledAs(*e, *got);
          },
          seconds(30), milliseconds(100)))
          << scheduler << ": " << run << "/" << name << " did not settle";
    }
    // Pending pods are given a moment more: a wrong bind would show now.
    std::this_thread::sleep_for(seconds(2));
    out.pods = PodsOf(run);
    auto claims =
        Env().Call("GET", std::string(kDraApi) + "/namespaces/" + run + "/resourceclaims");
    if (claims.ok()) {
      for (const json& claim : (*claims)["items"]) {
        out.claims[claim["metadata"]["name"].get<std::string>()] = claim;
      }
    }
    DeletePods(run);
    for (const std::string& rule : rules) {
      (void)Env().Call("DELETE", std::string(kDraApi) + "/devicetaintrules/" + rule);
    }
    return out;
  }

  // The devices published for each of the run's nodes, "driver/device".
  static std::set<std::string> DevicesOf(const DraCase& c, const std::string& node,
                                         const std::string& role) {
    std::set<std::string> out;
    for (const json& slice : c.slices(role, node)) {
      for (const json& d : slice["spec"].value("devices", json::array())) {
        out.insert(slice["spec"]["driver"].get<std::string>() + "/" + d["name"].get<std::string>());
      }
    }
    return out;
  }

  static void Judge(const DraCase& c, const RunOutcome& run, const std::string& who) {
    std::set<std::string> used;  // claims of bound pods
    for (const PodExpect& e : c.expect) {
      SCOPED_TRACE(who + ": " + c.name + "/" + e.pod);
      auto it = run.pods.find(e.pod);
      ASSERT_NE(it, run.pods.end());
      const json& pod = it->second;
      const std::string node = NodeOf(pod);
      if (e.role.empty()) {
        EXPECT_EQ(node, "") << "bound; kube-scheduler leaves it pending";
        continue;
      }
      ASSERT_NE(node, "") << "pending: " << PendingMessage(pod);
      if (e.role[0] == '=') {
        auto other = run.pods.find(e.role.substr(1));
        ASSERT_NE(other, run.pods.end());
        EXPECT_EQ(node, NodeOf(other->second)) << "not on the node of " << e.role.substr(1);
      } else {
        EXPECT_EQ(run.role_of_node.at(node), e.role) << "bound to " << node;
      }
      const std::set<std::string> devices = DevicesOf(c, node, run.role_of_node.at(node));
      for (const std::string& name : ClaimsOf(pod)) {
        used.insert(name);
        auto claim = run.claims.find(name);
        ASSERT_NE(claim, run.claims.end()) << name;
        EXPECT_EQ(AllocationProblem(claim->second, pod, node, devices), "") << claim->second.dump();
      }
    }
    for (const auto& [name, claim] : run.claims) {
      if (!used.count(name)) {
        EXPECT_FALSE(claim.contains("/status/allocation"_json_pointer))
            << who << ": " << c.name << ": claim " << name << " of no bound pod is allocated";
        continue;
      }
      auto wanted = c.results.find(name);
      if (wanted != c.results.end()) {
        EXPECT_EQ(Results(claim), wanted->second) << who << ": " << c.name << ": claim " << name;
      }
    }
    if (c.check) {
      EXPECT_EQ(c.check(run.claims), "") << who << ": " << c.name;
    }
  }

  static std::string Describe(const RunOutcome& run, const std::string& pod) {
    auto it = run.pods.find(pod);
    if (it == run.pods.end()) return "(no pod)";
    const std::string node = NodeOf(it->second);
    if (node.empty()) return "pending";
    std::string devices;
    for (const std::string& claim : ClaimsOf(it->second)) {
      auto c = run.claims.find(claim);
      if (c == run.claims.end()) continue;
      for (const std::string& r : Results(c->second)) devices += (devices.empty() ? "" : " ") + r;
    }
    return run.role_of_node.at(node) + " (" + devices + ")";
  }

  static inline std::vector<DraRow> dra_rows_;
};

// ---- Devices of the test driver (attributes in its domain, dra.gantry.test).

std::string AnyOf(const std::string& case_name) {
  return case_name + "-any";
}

json AnyClass(const std::string& case_name) {
  return DeviceClass(AnyOf(case_name), "device.driver == 'dra.gantry.test'");
}

std::vector<json> Devices(const std::string& node, json devices) {
  return {Slice(node + "-devices", kTestDriver, node, std::move(devices))};
}

// ExactCount 2: only the node of two devices fits (one device would do on a).
TEST_F(DraSideBySide, ExactCountTwo) {
  const std::string name = "dra-count";
  ASSERT_NO_FATAL_FAILURE(RunBoth({
      .name = name,
      .roles = {"a", "b"},
      .slices =
          [](const std::string& role, const std::string& node) {
            return role == "a" ? Devices(node, {Device("d0")})
                               : Devices(node, {Device("d0"), Device("d1")});
          },
      .classes = {AnyClass(name)},
      .claims = {ExactClaim("two", AnyOf(name), {{"allocationMode", "ExactCount"}, {"count", 2}})},
      .pods = {DraPod("p", {"two"})},
      .expect = {{"p", "b"}},
      .results = {{"two", {"gpu=d0", "gpu=d1"}}},
  }));
}

// allocationMode All: every device of the node, so not a, where one is taken (one free
// device would do there for a claim of one).
TEST_F(DraSideBySide, AllocationModeAll) {
  const std::string name = "dra-all";
  ASSERT_NO_FATAL_FAILURE(RunBoth({
      .name = name,
      .roles = {"a", "b"},
      .slices =
          [](const std::string&, const std::string& node) {
            return Devices(node, {Device("d0"), Device("d1")});
          },
      .classes = {AnyClass(name)},
      .claims = {ExactClaim("one", AnyOf(name)),
                 ExactClaim("all", AnyOf(name), {{"allocationMode", "All"}})},
      .pods = {DraPod("holder", {"one"}, "a"), DraPod("p", {"all"})},
      .expect = {{"holder", "a"}, {"p", "b"}},
      .results = {{"all", {"gpu=d0", "gpu=d1"}}},
  }));
}

// firstAvailable: no h100 anywhere, an a100 on a only; the result names the subrequest.
TEST_F(DraSideBySide, FirstAvailableNamesTheSubrequest) {
  const std::string name = "dra-first";
  auto model = [](const std::string& m) {
    return Cel("device.attributes['dra.gantry.test'].model == '" + m + "'");
  };
  ASSERT_NO_FATAL_FAILURE(RunBoth({
      .name = name,
      .roles = {"a", "b"},
      .slices =
          [](const std::string& role, const std::string& node) {
            return Devices(node, {Device("d0", {{"model", Str(role == "a" ? "a100" : "t4")}})});
          },
      .classes = {AnyClass(name)},
      .claims = {Claim(
          "gpu",
          {{{"name", "gpu"},
            {"firstAvailable",
             {{{"name", "h100"}, {"deviceClassName", AnyOf(name)}, {"selectors", model("h100")}},
              {{"name", "a100"},
               {"deviceClassName", AnyOf(name)},
               {"selectors", model("a100")}}}}}})},
      .pods = {DraPod("p", {"gpu"})},
      .expect = {{"p", "a"}},
      .results = {{"gpu", {"gpu/a100=d0"}}},
  }));
}

// A class selecting by attribute and a request comparing a capacity: only c has an h100
// of 40Gi or more (a's h100 is too small, b's big device an a100).
TEST_F(DraSideBySide, ClassAndRequestSelectors) {
  const std::string name = "dra-cel";
  ASSERT_NO_FATAL_FAILURE(RunBoth({
      .name = name,
      .roles = {"a", "b", "c"},
      .slices =
          [](const std::string& role, const std::string& node) {
            const std::string model = role == "b" ? "a100" : "h100";
            const std::string memory = role == "a" ? "24Gi" : "80Gi";
            return Devices(node,
                           {Device("d0", {{"model", Str(model)}}, {{"memory", Qty(memory)}})});
          },
      .classes = {DeviceClass(name + "-h100",
                              "device.driver == 'dra.gantry.test' && "
                              "device.attributes['dra.gantry.test'].model == 'h100'")},
      .claims = {ExactClaim(
          "big", name + "-h100",
          {{"selectors",
            Cel("device.capacity['dra.gantry.test'].memory.compareTo(quantity('40Gi')) >= 0")}})},
      .pods = {DraPod("p", {"big"})},
      .expect = {{"p", "c"}},
      .results = {{"big", {"gpu=d0"}}},
  }));
}

// constraints.matchAttribute: two devices on one PCIe root, which only b has.
TEST_F(DraSideBySide, MatchAttribute) {
  const std::string name = "dra-match";
  json claim = ExactClaim("pair", AnyOf(name), {{"allocationMode", "ExactCount"}, {"count", 2}});
  claim["spec"]["devices"]["constraints"] = {
      {{"requests", {"gpu"}}, {"matchAttribute", "dra.gantry.test/pcieRoot"}}};
  ASSERT_NO_FATAL_FAILURE(RunBoth({
      .name = name,
      .roles = {"a", "b"},
      .slices =
          [](const std::string& role, const std::string& node) {
            const std::string second = role == "a" ? "pci1" : "pci0";
            return Devices(node, {Device("d0", {{"pcieRoot", Str("pci0")}}),
                                  Device("d1", {{"pcieRoot", Str(second)}})});
          },
      .classes = {AnyClass(name)},
      .claims = {claim},
      .pods = {DraPod("p", {"pair"})},
      .expect = {{"p", "b"}},
      .results = {{"pair", {"gpu=d0", "gpu=d1"}}},
  }));
}

// A 4g.20gb and a 3g.20gb: on a both are placed at memory slice 0, so they cannot both be
// allocated; on b the 3g.20gb starts at slice 4.
TEST_F(DraSideBySide, MigProfilesThatShareCounters) {
  const std::string name = "dra-mig";
  ASSERT_NO_FATAL_FAILURE(RunBoth({
      .name = name,
      .roles = {"a", "b"},
      .slices =
          [](const std::string& role, const std::string& node) {
            return PartitionableGpu(
                node, {Mig(5, "4g.20gb", 0, 4, 56), Mig(9, "3g.20gb", role == "a" ? 0 : 4, 4, 42)});
          },
      .classes = {DeviceClass(name + "-mig", kMigExpression)},
      .claims = {Claim("two-migs", {ProfileRequest("big", name + "-mig", "4g.20gb"),
                                    ProfileRequest("small", name + "-mig", "3g.20gb")})},
      .pods = {DraPod("p", {"two-migs"})},
      .expect = {{"p", "b"}},
      .results = {{"two-migs", {"big=gpu-0-mig-5-0-4", "small=gpu-0-mig-9-4-4"}}},
  }));
}

// The driver's two classes: a MIG device only on a (partitionable), a whole GPU on b (as
// the driver publishes one not partitioned). Once a MIG device of a's GPU is taken, the
// whole GPU there consumes counters no longer free: the first whole-GPU pod goes to b, the
// second waits.
TEST_F(DraSideBySide, NvidiaGpuAndMigClasses) {
  const std::string name = "dra-nvidia";
  const std::string gpu = name + "-gpu", mig = name + "-mig";
  ASSERT_NO_FATAL_FAILURE(RunBoth({
      .name = name,
      .roles = {"a", "b"},
      .slices =
          [](const std::string& role, const std::string& node) {
            if (role == "a") return PartitionableGpu(node, {Mig(9, "3g.20gb", 4, 4, 42)});
            return std::vector<json>{
                Slice(node + "-gpu", kNvidiaDriver, node,
                      {Device("gpu-0",
                              {{"type", Str("gpu")},
                               {"productName", Str("NVIDIA H100 80GB HBM3")},
                               {"index", {{"int", 0}}},
                               {"driverVersion", {{"version", "570.124.6"}}},
                               {"resource.kubernetes.io/pcieRoot", Str("pci0000:40")}},
                              {{"memory", Qty("80Gi")}})})};
          },
      .classes = {DeviceClass(gpu, kGpuExpression), DeviceClass(mig, kMigExpression)},
      .claims = {ExactClaim("mig", mig), ExactClaim("gpu-1", gpu), ExactClaim("gpu-2", gpu)},
      .pods = {DraPod("mig", {"mig"}), DraPod("gpu-1", {"gpu-1"}), DraPod("gpu-2", {"gpu-2"})},
      .expect = {{"mig", "a"}, {"gpu-1", "b"}, {"gpu-2", ""}},
      .results = {{"mig", {"gpu=gpu-0-mig-9-4-4"}}, {"gpu-1", {"gpu=gpu-0"}}},
  }));
}

// Consumable capacity: a device that many claims may share (allowMultipleAllocations), of
// 80Gi. After a's holder took 50Gi, another 50Gi goes to b, while 30Gi shares a's device.
TEST_F(DraSideBySide, ConsumableCapacity) {
  const std::string name = "dra-capacity";
  auto memory = [&](const std::string& claim, const std::string& size) {
    return ExactClaim(claim, AnyOf(name), {{"capacity", {{"requests", {{"memory", size}}}}}});
  };
  ASSERT_NO_FATAL_FAILURE(RunBoth({
      .name = name,
      .roles = {"a", "b"},
      .slices =
          [](const std::string&, const std::string& node) {
            json shared = Device("d0", {}, {{"memory", Qty("80Gi")}});
            shared["allowMultipleAllocations"] = true;
            return Devices(node, {shared});
          },
      .classes = {AnyClass(name)},
      .claims = {memory("holder", "50Gi"), memory("big", "50Gi"), memory("small", "30Gi")},
      .pods = {DraPod("holder", {"holder"}, "a"), DraPod("big", {"big"}),
               DraPod("small", {"small"}, "a")},
      .expect = {{"holder", "a"}, {"big", "b"}, {"small", "a"}},
      .results = {{"holder", {"gpu=d0"}}, {"big", {"gpu=d0"}}, {"small", {"gpu=d0"}}},
      .check = [](const std::map<std::string, json>& claims) -> std::string {
        for (const auto& [name, claim] : claims) {
          const json r =
              claim.value("/status/allocation/devices/results/0"_json_pointer, json::object());
          // Keyed as the device names the capacity ("memory", bare); any spelling
          // of the amount.
          const Milli want = (name == "small" ? 30 : 50) * (Milli{1} << 30) * kMilliPerUnit;
          const Result<Milli> got =
              ParseQuantity(r.value("/consumedCapacity/memory"_json_pointer, std::string()));
          if (!got.ok() || *got != want) {
            return name + " consumed " + r.value("consumedCapacity", json()).dump();
          }
          if (!r.contains("shareID")) return name + " has no shareID";
        }
        return "";
      },
  }));
}

// A device tainted NoSchedule on a, b's device taken: only a request that tolerates the
// taint gets a's device; one that does not waits.
TEST_F(DraSideBySide, DeviceTaintInTheSlice) {
  const std::string name = "dra-taint";
  ASSERT_NO_FATAL_FAILURE(RunBoth({
      .name = name,
      .roles = {"a", "b"},
      .slices =
          [](const std::string& role, const std::string& node) {
            json device = Device("d0");
            if (role == "a") {
              device["taints"] = {{{"key", "dra.gantry.test/unhealthy"},
                                   {"value", "ecc"},
                                   {"effect", "NoSchedule"}}};
            }
            return Devices(node, {device});
          },
      .classes = {AnyClass(name)},
      .claims = {ExactClaim("holder", AnyOf(name)), ExactClaim("plain", AnyOf(name)),
                 ExactClaim("tolerant", AnyOf(name),
                            {{"tolerations",
                              {{{"key", "dra.gantry.test/unhealthy"},
                                {"operator", "Exists"},
                                {"effect", "NoSchedule"}}}}})},
      .pods = {DraPod("holder", {"holder"}, "b"), DraPod("plain", {"plain"}),
               DraPod("tolerant", {"tolerant"})},
      .expect = {{"holder", "b"}, {"plain", ""}, {"tolerant", "a"}},
  }));
}

// A DeviceTaintRule (NoSchedule) on a's device: the pod goes to b, a second one waits.
TEST_F(DraSideBySide, DeviceTaintRule) {
  if (!Served("devicetaintrules")) {
    GTEST_SKIP() << "resource.k8s.io/v1 has no DeviceTaintRule";
  }
  const std::string name = "dra-taint-rule";
  ASSERT_NO_FATAL_FAILURE(RunBoth({
      .name = name,
      .roles = {"a", "b"},
      .slices = [](const std::string&,
                   const std::string& node) { return Devices(node, {Device("d0")}); },
      .classes = {AnyClass(name)},
      .claims = {ExactClaim("first", AnyOf(name)), ExactClaim("second", AnyOf(name))},
      .pods = {DraPod("first", {"first"}), DraPod("second", {"second"})},
      .expect = {{"first", "b"}, {"second", ""}},
      .taint_rules =
          [](const std::string& run) {
            return std::vector<json>{
                {{"apiVersion", "resource.k8s.io/v1"},
                 {"kind", "DeviceTaintRule"},
                 {"metadata", {{"name", run}}},
                 {"spec",
                  {{"deviceSelector",
                    {{"driver", kTestDriver}, {"pool", run + "-a"}, {"device", "d0"}}},
                   {"taint", {{"key", "dra.gantry.test/drain"}, {"effect", "NoSchedule"}}}}}}};
          },
  }));
}

// adminAccess (the namespace allows it): a's only device is in use, yet the admin claim
// gets it; a plain claim waits (b has no device).
TEST_F(DraSideBySide, AdminAccess) {
  const std::string name = "dra-admin";
  ASSERT_NO_FATAL_FAILURE(RunBoth({
      .name = name,
      .roles = {"a", "b"},
      .slices =
          [](const std::string& role, const std::string& node) {
            return role == "a" ? Devices(node, {Device("d0")}) : std::vector<json>{};
          },
      .classes = {AnyClass(name)},
      .claims = {ExactClaim("holder", AnyOf(name)),
                 ExactClaim("admin", AnyOf(name), {{"adminAccess", true}}),
                 ExactClaim("plain", AnyOf(name))},
      .pods = {DraPod("holder", {"holder"}), DraPod("admin", {"admin"}),
               DraPod("plain", {"plain"})},
      .expect = {{"holder", "a"}, {"admin", "a"}, {"plain", ""}},
      .results = {{"holder", {"gpu=d0"}}, {"admin", {"gpu=d0"}}},
      .namespace_labels = {{"resource.kubernetes.io/admin-access", "true"}},
      .check = [](const std::map<std::string, json>& claims) -> std::string {
        const json r = claims.at("admin").value("/status/allocation/devices/results/0"_json_pointer,
                                                json::object());
        return r.value("adminAccess", false) ? "" : "admin's result lacks adminAccess";
      },
  }));
}

// One claim, two pods: the first is placed on a, which pins the second there (b, with a free
// device and less in use, would score higher); the claim is reserved for both.
TEST_F(DraSideBySide, SharedClaimPinsItsSecondPod) {
  const std::string name = "dra-shared";
  ASSERT_NO_FATAL_FAILURE(RunBoth({
      .name = name,
      .roles = {"a", "b"},
      .slices = [](const std::string&,
                   const std::string& node) { return Devices(node, {Device("d0")}); },
      .classes = {AnyClass(name)},
      .claims = {ExactClaim("shared", AnyOf(name))},
      .pods = {DraPod("first", {"shared"}, "a", "1"), DraPod("second", {"shared"}, "", "1")},
      .expect = {{"first", "a"}, {"second", "a"}},
      .results = {{"shared", {"gpu=d0"}}},
      .check = [](const std::map<std::string, json>& claims) -> std::string {
        std::set<std::string> consumers;
        for (const json& r :
             claims.at("shared").value("/status/reservedFor"_json_pointer, json::array())) {
          consumers.insert(r.value("name", ""));
        }
        return consumers == std::set<std::string>{"first", "second"}
                   ? ""
                   : "reserved for " + std::to_string(consumers.size()) + " pods";
      },
  }));
}

}  // namespace
}  // namespace gantry::testing

// The property the engine's verdict cache rests on: nodes of one shape class get the same
// verdict from everything cached per class (every predicate's FilterStatic, and
// FilterByCapacity, which the gantry scorer's rare-capability marks use), for every spec the
// ClusterState holds, whatever the nodes carry: MIG states and layouts, NUMA zones, cached
// datasets, topology labels, CSI drivers, labels, taints, GPUs. Random nodes, specs and
// changes, from fixed seeds.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/filter.h"
#include "engine/random.h"
#include "engine/registry.h"
#include "model/cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {
namespace {

constexpr Milli kGi = Milli{1024} * 1024 * 1024 * kMilliPerUnit;
constexpr const char* kHostname = "kubernetes.io/hostname";
constexpr const char* kA100 = "NVIDIA-A100-SXM4-80GB";

ResourceId Mig(const std::string& profile) {
  return InternResource("nvidia.com/mig-" + profile);
}

class Vocabulary {
 public:
  explicit Vocabulary(uint64_t seed) : rng_(seed) {}

  int64_t Between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(rng_.Uniform(static_cast<uint64_t>(hi - lo + 1)));
  }
  bool OneIn(int64_t n) { return Between(1, n) == 1; }

  Node MakeNode(const std::string& name) {
    Node node;
    node.name = name;
    node.allocatable = {{kCpu, Between(1, 4) * 16000}, {kMemory, 512 * kGi}};
    node.labels.Set(kHostname, name);
    node.labels.Set("unread/serial", std::to_string(Between(0, 1'000'000)));
    if (!OneIn(4)) node.labels.Set("zone", Zone());
    if (OneIn(2)) node.labels.Set("rack", "r" + std::to_string(Between(0, 3)));
    if (OneIn(3)) node.labels.Set("pool", OneIn(2) ? "train" : "infer");
    // Topology levels (ClusterState's default keys): read per node, by the topology search.
    if (OneIn(2)) node.labels.Set("topology.gantry.dev/rack", "t" + std::to_string(Between(0, 3)));
    if (OneIn(2)) node.labels.Set("topology.kubernetes.io/zone", Zone());
    if (OneIn(4)) node.taints.push_back(Taint{"dedicated", "infer", TaintEffect::kNoSchedule});
    node.unschedulable = OneIn(10);
    switch (Between(0, 4)) {
      case 0:
        break;  // no GPUs
      case 1:
        AddMixedMig(node);
        break;
      case 2:
        AddSingleMig(node);
        break;
      default:
        AddWholeGpus(node);
    }
    if (OneIn(3)) AddNuma(node);
    if (OneIn(2)) node.cached_datasets.push_back(OneIn(2) ? "ns/a" : "ns/b");
    if (OneIn(3)) {
      node.csi.has_csi_node = true;
      node.csi.drivers.push_back(
          NodeCsiDriver{"ebs.csi.aws.com", static_cast<int32_t>(Between(0, 2))});
    }
    return node;
  }

  TaskSpec MakeSpec(const std::vector<std::string>& hosts) {
    static const char* kKeys[] = {"zone", "rack", "pool", "missing"};
    using Op = SelectorRequirement::Op;
    TaskSpec spec;
    spec.requests.Set(kCpu, Between(0, 4) * 8000);
    switch (Between(0, 4)) {
      case 0:
        break;
      case 1:
        spec.gpu.count = static_cast<int32_t>(Between(1, 4));
        if (OneIn(3)) spec.gpu.models = {GpuModels().Intern(OneIn(2) ? "shape-A100" : kA100)};
        break;
      case 2:
        spec.gpu.milli = static_cast<int32_t>(Between(1, 9) * 100);
        break;
      default:
        spec.requests.Set(Mig(OneIn(2) ? "1g.10gb" : "3g.40gb"), Between(1, 2) * kMilliPerUnit);
    }
    if (OneIn(3)) spec.node_selector.Set(kKeys[Between(0, 3)], Value());
    if (OneIn(6) && !hosts.empty()) {
      spec.node_selector.Set(kHostname, hosts[static_cast<size_t>(Between(0, hosts.size() - 1))]);
    }
    for (int64_t t = 0, terms = OneIn(2) ? 0 : Between(1, 2); t < terms; ++t) {
      std::vector<SelectorRequirement> term;
      for (int64_t r = 0, n = Between(1, 2); r < n; ++r) {
        SelectorRequirement req;
        req.key = kKeys[Between(0, 3)];
        req.op = static_cast<Op>(Between(0, 3));
        if (req.op == Op::kIn || req.op == Op::kNotIn) req.values = {Value(), Value()};
        term.push_back(req);
      }
      spec.affinity.terms.push_back(term);
    }
    if (OneIn(2)) {
      Toleration t;
      t.key = "dedicated";
      t.op = Toleration::Op::kExists;
      spec.tolerations.push_back(t);
    }
    spec.numa.guaranteed = OneIn(3);
    if (OneIn(3)) spec.datasets = {OneIn(2) ? "ns/a" : "ns/b"};
    return spec;
  }

 private:
  // Two A100-80GB GPUs cut into 7 x 1g.10gb + 2 x 3g.40gb (issue 27's nodes), in either
  // layout or none given, with the MIG manager's state absent, done, busy or failed.
  void AddMixedMig(Node& node) {
    node.labels.Set("nvidia.com/mig.strategy", "mixed");
    node.labels.Set("nvidia.com/gpu.product", kA100);
    MigState(node);
    node.allocatable.Set(Mig("1g.10gb"), 7 * kMilliPerUnit);
    node.allocatable.Set(Mig("3g.40gb"), 2 * kMilliPerUnit);
    node.gpus.assign(2, GpuDevice{.model = GpuModels().Intern(kA100), .memory_mib = 81920});
    if (OneIn(3)) return;  // ClusterState lays the devices out
    const int32_t small_gpu = OneIn(2) ? 0 : 1;
    node.mig.gpus = 2;
    for (int i = 0; i < 7; ++i) node.mig.devices.push_back({Mig("1g.10gb"), small_gpu});
    for (int i = 0; i < 2; ++i) node.mig.devices.push_back({Mig("3g.40gb"), 1 - small_gpu});
  }

  void AddSingleMig(Node& node) {
    node.labels.Set("nvidia.com/mig.strategy", "single");
    MigState(node);
    const std::string profile = OneIn(2) ? "1g.10gb" : "3g.40gb";
    node.gpus.assign(
        static_cast<size_t>(Between(2, 7)),
        GpuDevice{.model = GpuModels().Intern(std::string(kA100) + "-MIG-" + profile)});
  }

  void MigState(Node& node) {
    static const char* kStates[] = {"success", "pending", "failed", "rebooting"};
    if (!OneIn(4)) node.labels.Set("nvidia.com/mig.config.state", kStates[Between(0, 3)]);
  }

  void AddWholeGpus(Node& node) {
    const int64_t gpus = Between(1, 8);
    const GpuModelId model = GpuModels().Intern(OneIn(2) ? "shape-A100" : "shape-T4");
    for (int64_t g = 0; g < gpus; ++g) {
      node.gpus.push_back(GpuDevice{.model = model, .memory_mib = 81920});
    }
  }

  // One or two NUMA zones sharing the node's CPUs and GPUs, under one of the kubelet's
  // policies.
  void AddNuma(Node& node) {
    static const NumaPolicy kPolicies[] = {NumaPolicy::kSingleNumaNode, NumaPolicy::kBestEffort,
                                           NumaPolicy::kRestricted};
    node.numa.policy = kPolicies[Between(0, 2)];
    node.numa.scope = OneIn(2) ? NumaScope::kPod : NumaScope::kContainer;
    const int64_t zones = node.gpus.size() % 2 == 0 ? Between(1, 2) : 1;
    for (int64_t z = 0; z < zones; ++z) {
      NumaZone zone;
      zone.id = static_cast<int32_t>(z);
      zone.allocatable.Set(kCpu, node.allocatable.Get(kCpu) / zones);
      if (!node.gpus.empty()) {
        zone.allocatable.Set(kGpu, static_cast<Milli>(node.gpus.size()) / zones * kMilliPerUnit);
      }
      node.numa.zones.push_back(zone);
    }
  }

  std::string Zone() { return OneIn(2) ? "a" : "b"; }
  std::string Value() {
    static const char* kValues[] = {"a", "b", "r0", "r1", "r2", "train", "infer", "x"};
    return kValues[Between(0, 7)];
  }
  Rng rng_;
};

// Every plugin of the configuration table that is a predicate, with its default arguments.
std::vector<std::unique_ptr<Plugin>> AllPredicatePlugins() {
  std::vector<std::unique_ptr<Plugin>> out;
  for (std::string_view name : KnownPlugins()) {
    std::unique_ptr<Plugin> plugin = Must(MakePlugin(PluginConfig{std::string(name), {}}));
    if (dynamic_cast<const NodePredicate*>(plugin.get()) != nullptr)
      out.push_back(std::move(plugin));
  }
  return out;
}

std::string Describe(const FilterResult& r, const TaskSpec& spec) {
  return r.ok() ? "ok" : "\"" + DescribeFilter(r, spec) + "\"";
}

// Checks that every live spec's class-cached verdicts on each node equal those of the first
// node of its class that was asked (as the session caches them): each predicate's
// FilterStatic, and FilterByCapacity.
void ExpectClassesDecideAlike(const ClusterState& c,
                              const std::vector<std::unique_ptr<Plugin>>& predicates,
                              const std::string& where) {
  struct Verdicts {
    NodeId first;
    std::vector<FilterResult> results;
  };
  for (SpecId s = 0; s < c.specs().size(); ++s) {
    const TaskSpec& spec = c.spec(s);
    std::map<uint32_t, Verdicts> by_class;
    for (NodeId n = 0; n < c.nodes().size(); ++n) {
      const Node& node = c.node(n);
      std::vector<FilterResult> direct;
      for (const auto& plugin : predicates) {
        direct.push_back(dynamic_cast<const NodePredicate&>(*plugin).FilterStatic(spec, node));
      }
      direct.push_back(FilterByCapacity(spec.requests, spec.gpu, node));
      auto [it, first] = by_class.try_emplace(node.shape_class, Verdicts{n, direct});
      for (size_t k = 0; k < direct.size(); ++k) {
        const std::string check = k < predicates.size()
                                      ? std::string(predicates[k]->name()) + " FilterStatic"
                                      : std::string("FilterByCapacity");
        EXPECT_TRUE(it->second.results[k] == direct[k])
            << where << ": spec " << s << ", nodes " << c.node(it->second.first).name << " and "
            << node.name << " share class " << node.shape_class << " but " << check << " says "
            << Describe(it->second.results[k], spec) << " of the first and "
            << Describe(direct[k], spec) << " of the second";
      }
    }
  }
}

TEST(NodeShapeClassPropertyTest, NodesOfOneClassGetOneCachedVerdictWhateverTheyCarry) {
  const std::vector<std::unique_ptr<Plugin>> predicates = AllPredicatePlugins();
  // predicates, nodeports, nodevolumelimits, interpodaffinity, podtopologyspread, numa.
  ASSERT_GE(predicates.size(), 6u);
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    Vocabulary v(seed);
    ClusterState c;
    std::vector<std::string> hosts;
    int next = 0;
    auto add_node = [&] {
      hosts.push_back("h" + std::to_string(next++));
      Must(c.AddNode(v.MakeNode(hosts.back())));
    };
    for (int i = 0, n = static_cast<int>(v.Between(1, 30)); i < n; ++i) add_node();
    for (int step = 0; step < 60; ++step) {
      const std::string where = "seed " + std::to_string(seed) + " step " + std::to_string(step);
      switch (v.Between(0, 5)) {
        case 0:
          add_node();
          break;
        case 1:
          c.AddSpec(v.MakeSpec(hosts));
          break;
        case 2:
          if (!c.specs().empty()) {
            c.ReplaceSpec(static_cast<SpecId>(v.Between(0, c.specs().size() - 1)),
                          v.MakeSpec(hosts));
          }
          break;
        case 3: {
          const NodeId n = static_cast<NodeId>(v.Between(0, c.nodes().size() - 1));
          if (!c.node(n).name.empty()) {
            ASSERT_TRUE(c.UpdateNode(n, v.MakeNode(c.node(n).name)).ok()) << where;
          }
          break;
        }
        case 4: {
          const NodeId n = static_cast<NodeId>(v.Between(0, c.nodes().size() - 1));
          c.RemoveNode(n);
          break;
        }
        default:
          c.AddSpec(v.MakeSpec(hosts));
          c.AddSpec(v.MakeSpec(hosts));
      }
      ExpectClassesDecideAlike(c, predicates, where);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// Issue 27's four nodes: the same two A100-80GB GPUs cut alike, the MIG manager done on two,
// busy on one, failed on one. Only the two done take MIG pods, whichever node came first.
TEST(NodeShapeClassPropertyTest, NodesThatDifferOnlyInTheirMigStateShareNoClass) {
  const std::vector<std::pair<std::string, std::string>> kNodes = {
      {"mig-a", "success"}, {"mig-b", "success"}, {"mig-c", "pending"}, {"mig-d", "failed"}};
  for (bool ready_first : {true, false}) {
    ClusterState c;
    for (size_t i = 0; i < kNodes.size(); ++i) {
      const auto& [name, state] = kNodes[ready_first ? i : kNodes.size() - 1 - i];
      Node node;
      node.name = name;
      node.allocatable = {{kCpu, 64000}, {kMemory, 512 * kGi}};
      node.allocatable.Set(Mig("1g.10gb"), 7 * kMilliPerUnit);
      node.allocatable.Set(Mig("3g.40gb"), 2 * kMilliPerUnit);
      node.labels.Set("nvidia.com/mig.strategy", "mixed");
      node.labels.Set("nvidia.com/gpu.product", kA100);
      node.labels.Set("nvidia.com/mig.config.state", state);
      node.gpus.assign(2, GpuDevice{.model = GpuModels().Intern(kA100)});
      Must(c.AddNode(node));
    }
    TaskSpec small;
    small.requests = {{kCpu, 1000}};
    small.requests.Set(Mig("1g.10gb"), kMilliPerUnit);
    const SpecId s = c.AddSpec(small);
    std::map<uint32_t, bool> verdict_of_class;
    for (NodeId n = 0; n < c.nodes().size(); ++n) {
      const Node& node = c.node(n);
      const bool fits = FilterByCapacity(c.spec(s).requests, c.spec(s).gpu, node).ok();
      EXPECT_EQ(fits, node.name == "mig-a" || node.name == "mig-b") << node.name;
      auto [it, first] = verdict_of_class.try_emplace(node.shape_class, fits);
      EXPECT_EQ(it->second, fits) << node.name << " shares a class with a node that "
                                  << (it->second ? "takes" : "refuses") << " MIG pods";
    }
    EXPECT_EQ(verdict_of_class.size(), 3u) << "success, pending, failed";
  }
}

}  // namespace
}  // namespace gantry

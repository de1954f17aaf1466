// nodeports: kube-scheduler's NodePorts. A task may not go where a task on the node already
// uses one of its host ports (the same port and protocol on the same host IP, 0.0.0.0
// being every IP; HostPort::ConflictsWith).
//
// The ports in use per node are an index of the session (NodeHoldings: built on the first
// search for a task that asks for host ports, kept in step after that, and following the
// views of the working state). A session in which no spec has host ports builds nothing
// and is never asked per node (FiltersDynamically).
#include <algorithm>

#include "engine/node_holdings.h"
#include "engine/plugins/args.h"
#include "engine/plugins/plugins.h"
#include "engine/session.h"

namespace gantry {
namespace {

class NodePortsPlugin : public SessionCopyable<NodePortsPlugin>,
                        public NodePredicate,
                        public PlacementListener {
 public:
  std::string_view name() const override { return "nodeports"; }

  FilterResult FilterStatic(const TaskSpec& /*spec*/, const Node& /*node*/) const override {
    return FilterResult::Ok();
  }

  bool FiltersDynamically(const Session& /*s*/, const TaskSpec& spec) const override {
    return !spec.host_ports.empty();
  }
  // Out of the session (not even told of its changes) while no spec has host ports.
  void OnSessionOpen(Session& s) override {
    const auto& specs = s.cluster().specs();
    active_ = std::any_of(specs.begin(), specs.end(),
                          [](const TaskSpec& spec) { return !spec.host_ports.empty(); });
  }
  bool ActiveInSession() const override { return active_; }

  FilterResult FilterDynamic(const Session& s, const TaskSpec& spec, NodeId node) const override {
    if (spec.host_ports.empty()) return FilterResult::Ok();
    const bool future = s.searching_future();
    const auto& uses = ports_.On(s, node);
    for (size_t i = 0; i < spec.host_ports.size(); ++i) {
      for (const auto& use : uses) {
        if (use.HeldIn(future) && use.item->ConflictsWith(spec.host_ports[i])) {
          return FilterResult::Fail(FilterCode::kNodePorts, static_cast<uint32_t>(i));
        }
      }
    }
    return FilterResult::Ok();
  }

  void OnStateChange(const Session& s, StateChange change, TaskId task, NodeId node,
                     const GpuChoice& /*gpus*/, int sign) override {
    ports_.OnStateChange(s, change, task, node, sign);
  }

 private:
  bool active_ = true;  // some spec of the session has host ports
  NodeHoldings<HostPort, &TaskSpec::host_ports> ports_;
};

}  // namespace

Result<std::unique_ptr<Plugin>> NewNodePortsPlugin(const PluginConfig& config) {
  PluginArgs args(config);
  GANTRY_RETURN_IF_ERROR(args.CheckAllTaken());
  return std::unique_ptr<Plugin>(new NodePortsPlugin());
}

}  // namespace gantry

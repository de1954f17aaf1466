// nodeports: kube-scheduler's NodePorts. A task may not go where a task on the node already
// uses one of its host ports (the same port and protocol on the same host IP, 0.0.0.0
// being every IP; HostPort::ConflictsWith).
//
// The ports in use per node are an index of the session, built on the first search for a
// task that asks for host ports (from the running tasks and what the session changed so
// far) and kept by OnStateChange after that, each change undone exactly. A session in which
// no spec has host ports builds nothing and is never asked per node (FiltersDynamically).
//
// Which tasks hold a port follows the three views of the working state: a releasing task
// holds its ports until it has ended (kube-scheduler counts a terminating pod's ports), a
// pipelined task holds them once the releasing ones have ended. Room free now (`free`)
// is refused where either holds the port; room being released (`future`) only where a
// task that will still be there, or is pipelined there, does.
#include <algorithm>

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
    Build(s);
    const bool future = s.viewing_future();
    for (size_t i = 0; i < spec.host_ports.size(); ++i) {
      for (const PortUse& use : used_[node]) {
        const bool held = future ? use.future > 0 : use.now > 0 || use.future > 0;
        if (held && use.port->ConflictsWith(spec.host_ports[i])) {
          return FilterResult::Fail(FilterCode::kNodePorts, static_cast<uint32_t>(i));
        }
      }
    }
    return FilterResult::Ok();
  }

  void OnStateChange(const Session& s, StateChange change, TaskId task, NodeId node,
                     const GpuChoice& /*gpus*/, int sign) override {
    if (!built_) return;  // Build reads the working state as it is then
    const TaskSpec& spec = s.cluster().spec_of(task);
    if (spec.host_ports.empty()) return;
    switch (change) {
      case StateChange::kAllocate:
        Count(node, spec, sign, sign);
        break;
      case StateChange::kPipeline:
        Count(node, spec, 0, sign);
        break;
      case StateChange::kEvict:  // it holds its ports until it has ended
        Count(node, spec, 0, -sign);
        break;
    }
  }

 private:
  // One (protocol, host IP, port) in use on a node, and by how many tasks in each view.
  struct PortUse {
    const HostPort* port;  // in a spec of the session's cluster
    int32_t now = 0;       // tasks that hold it now: running (releasing too) or allocated
    int32_t future = 0;    // tasks that will hold it: running and not releasing, allocated
                           // or pipelined
  };

  void Count(NodeId node, const TaskSpec& spec, int32_t now, int32_t future) const {
    std::vector<PortUse>& uses = used_[node];
    for (const HostPort& port : spec.host_ports) {
      auto it = std::find_if(uses.begin(), uses.end(),
                             [&](const PortUse& use) { return *use.port == port; });
      if (it == uses.end()) it = uses.insert(uses.end(), PortUse{&port});
      it->now += now;
      it->future += future;
    }
  }

  // The index from the cluster's running tasks and the session's changes so far.
  void Build(const Session& s) const {
    if (built_) return;
    built_ = true;
    const ClusterState& c = s.cluster();
    used_.assign(c.nodes().size(), {});
    for (NodeId node = 0; node < c.nodes().size(); ++node) {
      for (TaskId task : c.tasks_on(node)) {
        const TaskSpec& spec = c.spec_of(task);
        if (spec.host_ports.empty()) continue;
        const bool releasing = s.task_status(task) == TaskStatus::kReleasing;
        Count(node, spec, 1, releasing ? 0 : 1);
      }
    }
    // Tasks the session placed were pending when it opened.
    for (JobId job : s.pending_jobs()) {
      for (TaskId task : c.job(job).tasks) {
        const TaskSpec& spec = c.spec_of(task);
        if (spec.host_ports.empty()) continue;
        const TaskStatus status = s.task_status(task);
        if (status != TaskStatus::kAllocated && status != TaskStatus::kPipelined) continue;
        const bool allocated = status == TaskStatus::kAllocated;
        Count(s.state().placement_of(task).node, spec, allocated ? 1 : 0, 1);
      }
    }
  }

  // Built on first need; FilterDynamic is const, as predicates are.
  mutable bool built_ = false;
  bool active_ = true;                              // some spec of the session has host ports
  mutable std::vector<std::vector<PortUse>> used_;  // per node
};

}  // namespace

Result<std::unique_ptr<Plugin>> NewNodePortsPlugin(const PluginConfig& config) {
  PluginArgs args(config);
  GANTRY_RETURN_IF_ERROR(args.CheckAllTaken());
  return std::unique_ptr<Plugin>(new NodePortsPlugin());
}

}  // namespace gantry

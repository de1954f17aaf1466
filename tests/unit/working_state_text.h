// The whole of a session's working state as text, for tests that compare two states
// (a rollback must equal never having done it): every node's free, idle and future room
// (resources, devices, counts), the node index, every job's and queue's amounts and every
// task's status and placement.
#pragma once

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "engine/session.h"

namespace gantry {

inline std::string NodeTableText(const NodeTable& t, const std::string& name) {
  std::ostringstream out;
  for (NodeId n = 0; n < t.nodes.size(); ++n) {
    const NodeWork& w = t.nodes[n];
    out << name << " node " << n << ": tasks " << w.tasks << " whole " << w.whole_free
        << " partial " << w.partial_count << " used " << w.gpu_used << " max " << w.max_free_milli
        << " free";
    for (uint32_t r = 0; r < t.resource_count; ++r) out << ' ' << t.free[n * t.resource_count + r];
    out << " devices";
    for (int32_t d = 0; d < w.gpu_count; ++d) {
      const auto slot = static_cast<size_t>(w.gpu_begin + d);
      out << ' ' << t.gpu_free_milli[slot] << '/' << t.gpu_free_memory[slot];
    }
    out << '\n';
  }
  return out.str();
}

inline std::string WorkingStateText(const Session& s) {
  const WorkingState& state = s.state();
  const ClusterState& c = s.cluster();
  std::ostringstream out;
  out << NodeTableText(state.free_table(), "free") << NodeTableText(state.idle_table(), "idle")
      << NodeTableText(state.future_table(), "future");
  const NodeIndex& index = state.index();
  // Which nodes each bucket holds; not their order inside it (see WorkingState::Allocate).
  for (int32_t k = 0; k <= index.max_whole(); ++k) {
    std::vector<NodeId> bucket = index.with_whole_free(k);
    std::sort(bucket.begin(), bucket.end());
    out << "index " << k << ":";
    for (NodeId n : bucket) out << ' ' << n << (index.is_partial(n) ? "p" : "");
    out << '\n';
  }
  for (JobId j = 0; j < c.jobs().size(); ++j) {
    const JobWork w = state.CopyOfJob(j);  // the same whether the session made its entry
    out << "job " << c.job(j).name << ": inqueue " << w.inqueue << " ready " << w.ready
        << " placed " << w.placed << " pipelined " << w.pipelined_tasks << " releasing "
        << w.releasing_tasks << " allocated " << w.allocated.ToString() << " pipelined "
        << w.pipelined.ToString() << " releasing " << w.releasing.ToString() << " unplaced";
    for (TaskId t : w.unplaced) out << ' ' << t;
    out << '\n';
  }
  for (TaskId t = 0; t < c.tasks().size(); ++t) {
    const Placement p = state.placement_of(t);
    out << "task " << t << ": " << TaskStatusName(s.task_status(t)) << " on " << p.node;
    for (int32_t d : p.gpus.devices) out << ' ' << d;
    out << " x" << p.gpus.milli_each << '/' << p.gpus.memory_each << '\n';
  }
  for (QueueId q = 0; q < c.queues().size(); ++q) {
    const QueueWork& w = s.queue(q);
    out << "queue " << c.queue(q).name << ": allocated " << w.allocated.ToString() << " pipelined "
        << w.pipelined.ToString() << " releasing " << w.releasing.ToString() << " request "
        << w.request.ToString() << '\n';
  }
  return out.str();
}

}  // namespace gantry

// Building small clusters for engine tests: nodes, queues, specs and jobs in a few words.
#pragma once

#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "engine/decisions.h"
#include "model/cluster.h"
#include "tests/unit/test_util.h"

namespace gantry {

inline constexpr Milli kGi = 1024LL * 1024 * 1024 * kMilliPerUnit;

// ---------------------------------------------------------------- building clusters

inline GpuModelId A100() {
  return GpuModels().Intern("A100-80GB");
}

// A node with `gpus` A100s of `gpu_memory_mib`, NVLink domains of four devices.
inline NodeId AddGpuNode(ClusterState& c, const std::string& name, int gpus, Milli cpu = 64000,
                         int64_t gpu_memory_mib = 81920, Milli memory = 512 * kGi) {
  Node node;
  node.name = name;
  node.allocatable = ResourceVector{{kCpu, cpu}, {kMemory, memory}};
  for (int i = 0; i < gpus; ++i) {
    GpuDevice g;
    g.model = A100();
    g.memory_mib = gpu_memory_mib;
    g.nvlink_domain = i / 4;
    g.numa_node = i / 4;
    node.gpus.push_back(g);
  }
  return Must(c.AddNode(std::move(node)));
}

inline NodeId AddCpuNode(ClusterState& c, const std::string& name, Milli cpu, Labels labels = {}) {
  Node node;
  node.name = name;
  node.allocatable = ResourceVector{{kCpu, cpu}, {kMemory, 64 * kGi}};
  node.labels = std::move(labels);
  return Must(c.AddNode(std::move(node)));
}

inline Labels PoolLabel(const std::string& pool) {
  Labels labels;
  labels.Set("pool", pool);
  return labels;
}

inline QueueId AddQueue(ClusterState& c, const std::string& name, int64_t weight = 1,
                        ResourceVector guarantee = {}, ResourceVector capability = {}) {
  Queue q;
  q.name = name;
  q.weight = weight;
  q.guarantee = std::move(guarantee);
  q.capability = std::move(capability);
  return Must(c.AddQueue(std::move(q)));
}

inline TaskSpec GpuSpec(int32_t count, Milli cpu = 0, int32_t priority = 0) {
  TaskSpec spec;
  spec.role = "worker";
  spec.requests = ResourceVector{{kCpu, cpu}};
  spec.gpu.count = count;
  spec.priority = priority;
  return spec;
}

inline TaskSpec SharedSpec(int32_t milli, int64_t memory_mib = 0) {
  TaskSpec spec;
  spec.role = "shared";
  spec.gpu.milli = milli;
  spec.gpu.memory_mib = memory_mib;
  return spec;
}

inline TaskSpec CpuSpec(Milli cpu) {
  TaskSpec spec;
  spec.role = "cpu";
  spec.requests = ResourceVector{{kCpu, cpu}};
  return spec;
}

inline JobId AddEmptyJob(ClusterState& c, const std::string& name, QueueId queue,
                         int32_t min_member = 1, int32_t priority = 0, int64_t creation = 0) {
  Job job;
  job.name = name;
  job.queue = queue;
  job.min_member = min_member;
  job.priority = priority;
  job.creation = creation;
  return Must(c.AddJob(std::move(job)));
}

// A job of `tasks` tasks "name-0", "name-1", ... sharing one spec.
inline JobId AddJobWithSpec(ClusterState& c, const std::string& name, QueueId queue, SpecId spec,
                            int tasks, int32_t min_member = 1, int32_t priority = 0,
                            int64_t creation = 0) {
  JobId job = AddEmptyJob(c, name, queue, min_member, priority, creation);
  for (int i = 0; i < tasks; ++i) Must(c.AddTask(job, spec, name + "-" + std::to_string(i)));
  return job;
}

inline JobId AddJob(ClusterState& c, const std::string& name, QueueId queue, const TaskSpec& spec,
                    int tasks, int32_t min_member = 1, int32_t priority = 0, int64_t creation = 0) {
  return AddJobWithSpec(c, name, queue, c.AddSpec(spec), tasks, min_member, priority, creation);
}

// Marks `devices` of `node` as used by running one-GPU tasks of a job in `queue`.
inline void Occupy(ClusterState& c, QueueId queue, NodeId node,
                   const std::vector<int32_t>& devices) {
  std::string name = "busy-" + std::to_string(c.jobs().size());
  JobId job = AddJob(c, name, queue, GpuSpec(1), static_cast<int>(devices.size()));
  for (size_t i = 0; i < devices.size(); ++i) {
    int32_t d = devices[i];
    Status st = c.Place(c.job(job).tasks[i], node, std::span<const int32_t>(&d, 1));
    ASSERT_TRUE(st.ok()) << st.message();
  }
}

// ---------------------------------------------------------------- reading decisions

// "task@node" for each bind, space-separated.
inline std::string BindsOf(const ClusterState& c, const Decisions& d) {
  std::string out;
  for (const BindDecision& b : d.binds) {
    out += (out.empty() ? "" : " ") + c.task(b.task).name + "@" + c.node(b.node).name;
  }
  return out;
}

// The reason the session gives for a pending job, or "".
inline std::string PendingReasonOf(const Decisions& d, JobId job) {
  for (const PendingJob& p : d.pending) {
    if (p.job == job) return p.reason;
  }
  return "";
}

}  // namespace gantry

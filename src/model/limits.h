// The limits Gantry holds what it reads to, so that no input, however large or hostile,
// can take unbounded memory or time. Anything above a limit is refused at once with a
// message that names the limit; README.md ("Limits") lists them for users.
#pragma once

#include <cstddef>
#include <cstdint>

namespace gantry {

// GPU devices on one node, and whole GPUs one task may ask for. The largest machines sold
// have 16 GPUs (or 8 GPUs x 7 MIG slices = 56 devices); a node above this is refused.
inline constexpr int32_t kMaxGpusPerNode = 256;

// Nodes in one cluster (a scenario, a node list, or what the daemon keeps). Kubernetes'
// largest managed clusters have 65,000.
inline constexpr int64_t kMaxNodes = 100'000;

// Tasks (pods) in one scenario or simulated workload, and tasks of one job.
inline constexpr int64_t kMaxTasks = 2'000'000;
inline constexpr int64_t kMaxTasksPerJob = 1'000'000;

// Names of nodes, jobs, tasks, queues (Kubernetes' DNS subdomain: 253 bytes), label keys
// (a 253-byte prefix, '/', a 63-byte name) and label values (Kubernetes: 63; we allow
// more for offline files, where no API server checked them).
inline constexpr size_t kMaxNameLength = 253;
inline constexpr size_t kMaxLabelKeyLength = 317;
inline constexpr size_t kMaxLabelValueLength = 1024;

// Distinct resource names in one process (cpu, memory, nvidia.com/gpu, hugepages-2Mi,
// extended resources...). Names are interned for the life of the process, so what pods
// (untrusted: anyone who may create a pod) can add is capped lower than what nodes and
// configuration (trusted) can: a stream of pods with made-up resource names fills the
// pods' share and is then refused, while nodes keep room for theirs.
inline constexpr size_t kMaxResourceNames = 1024;
inline constexpr size_t kMaxResourceNamesFromWorkloads = 256;

// Queues that pods and PodGroups name without a Queue object (gantry.dev/queue, spec.queue):
// the daemon creates them on first use and keeps them for the life of the process, so
// anyone who may create a pod could otherwise add queues (and metric series) without end.
// A job naming a new queue beyond this waits, with a message. Queue objects are not counted.
inline constexpr size_t kMaxQueuesFromWorkloads = 1024;

// The longest duration the scheduler configuration names (a preemption grace, a
// starvation time): a hundred years, so that waits added to a clock cannot overflow.
inline constexpr int64_t kMaxConfiguredSeconds = int64_t{100} * 365 * 86400;

// The jobs remembered as having evicted a job, directly or through a chain (Job::evicted_by):
// bounds that memory. A job past it is never evicted again, nor evicts.
inline constexpr size_t kMaxEvictionChain = 1024;

// The defragment action's budget (config defragmentEvictionsPerHour), and so how many of
// its recent evictions ClusterState remembers.
inline constexpr int64_t kMaxDefragmentEvictionsPerHour = 10'000;

// Topology levels (ClusterState::topology_keys()): each node keeps a value per level.
inline constexpr int kMaxTopologyLevels = 16;

// Levels of the queue tree (a top-level queue is level 1): bounds the walks up a queue's
// ancestors that ordering and limits do for every job.
inline constexpr int kMaxQueueDepth = 16;

// One input file (scenario, node or pod list, job CSV, configuration, manifest).
inline constexpr int64_t kMaxInputFileBytes = int64_t{1} << 30;  // 1 GiB

// YAML (src/yaml/yaml_load.h). Lists and mappings nested in each other, aliases
// expanded: Gantry's own files nest under 10 levels and Kubernetes objects (CRD schemas
// included) under 40; deeper input would only cost stack in every recursive walk.
inline constexpr int kMaxYamlDepth = 100;
// Nodes (scalars, lists, mappings) of one YAML file with its aliases expanded: a few
// hundred bytes of nested aliases describe a tree of billions of nodes ("billion laughs"),
// and every reader walks the expanded tree. yaml-cpp takes about 500 bytes a node, so a
// file at this limit takes a few GB while it is read; a scenario of kMaxNodes nodes written
// out one by one has about 2 million.
inline constexpr int64_t kMaxYamlNodes = 10'000'000;
// Nodes reached through aliases, bounded as Kubernetes' own YAML reader bounds them
// (go-yaml's allowedAliasRatio, which kubectl and the API server use): up to 99% of a file's
// nodes may come from aliases while it has at most 400,000, a share falling linearly to 10%
// at 4,000,000. So a few hundred bytes expand to at most about 400,000 nodes (a few hundred
// MB while read), not kMaxYamlNodes, and any file Kubernetes reads is read here too.
inline constexpr int64_t kYamlAliasRatioLowNodes = 400'000;
inline constexpr int64_t kYamlAliasRatioHighNodes = 4'000'000;
inline constexpr int64_t kYamlAliasPermilleAtLow = 990;
inline constexpr int64_t kYamlAliasPermilleAtHigh = 100;

// ---- Dataset locality (issue 13, model/datasets.h). Pods and node annotations name
// datasets; these bound what one of them can make the process keep.
// Datasets one task reads (a pod's gantry.dev/datasets and its claims of Fluid datasets).
inline constexpr size_t kMaxDatasetsPerTask = 32;
// Datasets one node is known to cache by a loader's word (gantry.dev/cached-datasets).
inline constexpr size_t kMaxCachedDatasetsPerNode = 256;
// Datasets whose size a loader knows (ClusterState::SetDatasets: Fluid Dataset objects, a
// scenario's datasets:, the simulator's generated ones).
inline constexpr size_t kMaxKnownDatasets = 10'000;

}  // namespace gantry

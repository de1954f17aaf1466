// Whether a job with a group tree (Job::groups: Kubernetes' CompositePodGroup) is ready in
// a session: the gang plugin's JobReady and JobPipelined, and which of its running tasks
// preemption may take one at a time. Only such jobs pay for it: a scan of their tasks.
#pragma once

#include <span>
#include <vector>

#include "engine/session.h"

namespace gantry {

// Per group of the job's tree, its running (not releasing) and allocated tasks (inner
// groups: 0). REQUIRES: the job has groups.
std::vector<int32_t> ReadyPerLeaf(const Session& s, const Job& j);

// The job's root is ready counting its running (not releasing) and allocated tasks, and
// its pipelined ones too with `count_pipelined`; and no leaf has tasks placed in this
// session while below its minimum (each leaf is all or nothing, as its own PodGroup).
// REQUIRES: the job has groups.
bool GroupsReady(const Session& s, JobId job, bool count_pipelined);

// The job stays ready without `leaving` (some of its running tasks): its root is ready, and
// each leaf they leave keeps its minimum or goes whole (a child group may be disrupted on
// its own, as kube-scheduler's disruptionMode single allows). REQUIRES: the job has groups.
bool GroupsStayReadyWithout(const Session& s, JobId job, std::span<const TaskId> leaving);

// Of `candidates` (running tasks of the job, in the order they would go), those that may
// go together with the job staying ready: whole leaves where all of a leaf's tasks are
// candidates and the root stays ready without it, else down to each leaf's minimum.
// REQUIRES: the job has groups.
std::vector<TaskId> GroupsMayGive(const Session& s, JobId job, std::span<const TaskId> candidates);

// The running tasks of the task's leaf. REQUIRES: the task is in a leaf.
std::vector<TaskId> RunningInLeafOf(const Session& s, TaskId task);

}  // namespace gantry

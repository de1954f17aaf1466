// The cache's CompositePodGroups (scheduling.k8s.io/v1alpha3): a native PodGroup with a
// parent belongs to the job of its root CompositePodGroup, whose tree of PodGroups and
// CompositePodGroups is the engine job's group tree (model/group_tree.h).
#include "daemon/cluster_cache.h"

namespace gantry {

bool ClusterCache::BuildTree(JobRecord& job) {
  if (job.api != k8s::GroupApi::kComposite || job.tree_version == groups_.tree_version()) {
    return false;
  }
  job.tree_version = groups_.tree_version();
  job.tree.clear();
  job.leaf_of.clear();
  job.tree_problem.clear();
  const k8s::PodGroupInfo* root =
      groups_.Find(PodGroups::Key(k8s::GroupApi::kComposite, job.namespace_, job.group));
  if (root == nullptr) {
    job.tree_problem = "waiting for CompositePodGroup " + job.namespace_ + "/" + job.group +
                       " (scheduling.k8s.io/v1alpha3) to exist";
    return true;
  }
  // Breadth first from the root: parents before children, children by kind and name.
  std::vector<const k8s::PodGroupInfo*> order = {root};
  job.tree.push_back(TaskGroup{root->meta.name, -1, root->min_member, /*leaf=*/false});
  for (size_t i = 0; i < order.size() && order.size() <= kMaxGroupsPerTree; ++i) {
    if (order[i]->api != k8s::GroupApi::kComposite) continue;
    for (const k8s::PodGroupInfo* child : groups_.ChildrenOf(job.namespace_, order[i]->meta.name)) {
      const bool leaf = child->api == k8s::GroupApi::kNative;
      if (leaf) job.leaf_of[child->meta.name] = static_cast<int32_t>(job.tree.size());
      job.tree.push_back(
          TaskGroup{child->meta.name, static_cast<int32_t>(i), child->min_member, leaf});
      order.push_back(child);
    }
  }
  if (order.size() > kMaxGroupsPerTree) {
    job.tree_problem = "CompositePodGroup " + job.namespace_ + "/" + job.group + " has more than " +
                       std::to_string(kMaxGroupsPerTree) + " groups under it";
  } else if (Status valid = ValidateGroupTree(job.tree); !valid.ok()) {
    // Most often children not created yet: kube-scheduler waits for them too.
    job.tree_problem = "CompositePodGroup " + job.namespace_ + "/" + job.group +
                       ": waiting for its groups: " + valid.message();
  }
  if (!job.tree_problem.empty()) {
    job.tree.clear();
    job.leaf_of.clear();  // its indexes were into the tree
  }
  return true;
}

void ClusterCache::SetTaskGroups(const JobRecord& job) {
  for (const std::string& key : job.pods) {
    auto pod = pods_.find(key);
    if (pod == pods_.end() || pod->second.task == kNone) continue;
    auto leaf = job.leaf_of.find(pod->second.info.group);
    // Cannot fail: the leaf is one of the job's (or -1).
    (void)state_.SetTaskGroup(pod->second.task, leaf == job.leaf_of.end() ? -1 : leaf->second);
  }
}

void ClusterCache::ResyncTrees(const std::string& namespace_) {
  const std::string native = PodGroups::Key(k8s::GroupApi::kNative, namespace_, "");
  const std::string composite = PodGroups::Key(k8s::GroupApi::kComposite, namespace_, "");
  std::vector<std::string> pods;
  std::vector<std::string> jobs;
  for (const auto& [key, job] : jobs_) {
    if (!key.starts_with(native) && !key.starts_with(composite)) continue;
    jobs.push_back(key);
    pods.insert(pods.end(), job.pods.begin(), job.pods.end());
  }
  for (const std::string& key : pods) {
    pod_records_visited_++;
    SyncPod(key);
  }
  for (const std::string& key : jobs) {
    ReconsiderHold(key);
    auto job = jobs_.find(key);
    if (job != jobs_.end()) RefreshJob(job->second);
  }
}

}  // namespace gantry

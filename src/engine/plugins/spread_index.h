// The counts kube-scheduler's PodTopologySpread reads, for one session: how many of the
// pods that a constraint's selector matches are in each topology domain, over the nodes
// that count for the constraint (its eligible nodes), and the smallest count of an
// eligible domain. kube-scheduler counts them afresh for every pod (PreFilter, PreScore);
// here each piece is built the first time some spec needs it, from the working state as
// it is then, and kept in step with every change after (Apply, +1 and its exact undo -1),
// so that asking about a candidate costs O(constraints). A session whose specs have no
// spread constraint builds nothing, and Apply returns at once.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "engine/working_state.h"
#include "model/cluster.h"
#include "model/pod_constraints.h"

namespace gantry {

class Session;

// Which pods are counted. kube-scheduler counts the pods on each node, assumed ones too,
// except terminating ones (countPodsMatchSelector skips a pod with a deletion timestamp,
// kubernetes#87621). In a session's terms: running tasks, and tasks allocated or
// pipelined in it (a pipelined task binds where it was placed once its room is free);
// not tasks it evicted (releasing: they are being deleted). ClusterState keeps no
// deletion mark on a running task, so every running task counts.
inline bool CountsForSpread(TaskStatus status) {
  return status == TaskStatus::kRunning || status == TaskStatus::kAllocated ||
         status == TaskStatus::kPipelined;
}

class SpreadIndex {
 public:
  using Id = uint32_t;

  // The domains of one topology key: a dense id per label value, per node; -1 for a node
  // without the label, and for removed nodes (they are in no domain).
  struct Domains {
    std::string key;
    std::vector<int32_t> of_node;
    uint32_t count = 0;
  };

  // The counted pods that `selector` matches in namespace `namespace_`, per node.
  struct Matcher {
    std::string namespace_;
    std::optional<LabelSelector> selector;  // none: matches no pod
    std::vector<int32_t> on_node;
    std::vector<int8_t> matches_spec;  // per SpecId: -1 not asked yet, else 0 or 1
    std::vector<Id> counts;            // the DomainCounts made of it
  };

  // What makes a node eligible for a constraint: it has every label key the spec's
  // constraints of that kind (DoNotSchedule, or ScheduleAnyway) name, and with the
  // constraint's nodeAffinityPolicy Honor it matches the spec's node selector and required
  // node affinity, with nodeTaintsPolicy Honor the spec tolerates its NoSchedule and
  // NoExecute taints. Fields a policy leaves out are empty, so equal keys mean equal sets.
  struct EligibilityKey {
    std::vector<std::string> required_keys;  // sorted, each once
    bool honor_affinity = false;
    Labels node_selector;
    std::vector<std::vector<SelectorRequirement>> affinity_terms;
    bool honor_taints = false;
    std::vector<Toleration> tolerations;
    bool operator==(const EligibilityKey&) const = default;
  };

  // A Matcher's pods per domain of a Domains, over the eligible nodes of an Eligibility;
  // the domains with an eligible node are the eligible domains, and `min` is the smallest
  // count among them (INT32_MAX when there is none). `with_count[c]` is how many eligible
  // domains have count c, so that a change of one moves the minimum exactly.
  struct DomainCounts {
    Id matcher = 0;
    Id domains = 0;
    Id eligibility = 0;
    std::vector<int32_t> count;     // per domain
    std::vector<uint8_t> eligible;  // per domain
    uint32_t eligible_domains = 0;
    std::vector<int32_t> with_count;
    int32_t min = INT32_MAX;

    void Add(int32_t domain, int32_t delta);
  };

  // Each finds the piece or builds it. Ids stay valid for the session.
  Id DomainsOf(const Session& s, const std::string& key);
  Id MatcherOf(const Session& s, const std::string& ns,
               const std::optional<LabelSelector>& selector);
  Id EligibilityOf(const Session& s, EligibilityKey key);
  Id CountsOf(const Session& s, Id matcher, Id domains, Id eligibility);

  const Domains& domains(Id id) const { return domains_[id]; }
  const Matcher& matcher(Id id) const { return matchers_[id]; }
  const DomainCounts& counts(Id id) const { return counts_[id]; }

  // A counted task came (delta +1) to `node` or left it (-1).
  void Apply(const Session& s, TaskId task, NodeId node, int32_t delta);

 private:
  struct Eligibility {
    EligibilityKey key;
    std::vector<uint8_t> of_node;
  };
  bool Matches(const Session& s, Matcher& m, SpecId spec) const;

  std::vector<Domains> domains_;
  std::unordered_map<std::string, Id> domains_by_key_;
  std::vector<Matcher> matchers_;
  std::vector<Eligibility> eligibility_;
  std::vector<DomainCounts> counts_;
  std::map<std::tuple<Id, Id, Id>, Id> counts_by_key_;
};

}  // namespace gantry

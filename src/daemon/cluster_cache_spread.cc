// The selector kube-scheduler's default topology spreading counts a pod's peers by
// (pkg/scheduler/framework/plugins/helper/spread.go, DefaultSelector): the selectors of
// the Services in the pod's namespace that select it (a Service without a selector
// selects nothing), merged; then its controller's, when that is a v1
// ReplicationController (its selector map merged in, its values winning) or an apps/v1
// ReplicaSet or StatefulSet (its selector's requirements added), looked up by name in the
// pod's namespace and left out while unknown. A selector without requirements means no
// default spreading. The podtopologyspread plugin applies its default constraints with it
// to a pod without constraints of its own. Applying the other objects is cluster_cache.cc.
#include <algorithm>

#include "daemon/cluster_cache.h"
#include "k8s/json_fields.h"

namespace gantry {
namespace {

using json = nlohmann::json;

std::string OwnerKey(k8s::SpreadOwnerKind kind, const std::string& namespace_,
                     const std::string& name) {
  return std::string(k8s::SpreadOwnerKindName(kind)) + "|" + namespace_ + "/" + name;
}

// Whether a Service's selector selects a pod: every pair among its labels. An empty one
// selects nothing.
bool ServiceSelects(const Labels& selector, const Labels& pod_labels) {
  if (selector.empty()) return false;
  for (const auto& [key, value] : selector.pairs()) {
    const std::string* have = pod_labels.Find(key);
    if (have == nullptr || *have != value) return false;
  }
  return true;
}

std::string Quoted(const std::string& text) {
  return "\"" + k8s::KeyText(text) + "\"";
}

constexpr const char* kSpreadNeeds =
    "; the pod's default topology spreading (kube-scheduler's, by the selectors of the "
    "Services that select it and of its controller) needs it, so the pod stays pending";

}  // namespace

// ---------------------------------------------------------------------------------------
// A pod's default selector

std::string ClusterCache::ResolveDefaultSpread(PodRecord& pod, TaskSpec* spec) {
  const k8s::PodInfo& info = pod.info;
  if (!default_spreading_ || !spec->spread.empty()) return "";
  const std::string& ns = info.meta.namespace_;
  // A Service that cannot be read might select it.
  if (auto bad = bad_services_.find(ns); bad != bad_services_.end() && !bad->second.empty()) {
    const auto& [name, why] = *bad->second.begin();
    return "service " + Quoted(name) + " cannot be read by gantry: " + why + kSpreadNeeds;
  }
  LabelSelector selector;
  if (auto services = services_.find(ns); services != services_.end()) {
    for (const auto& [name, service_selector] : services->second) {
      if (!ServiceSelects(service_selector, info.spec.labels)) continue;
      pod.spread_services.push_back(name);  // in name order: sorted
      for (const auto& [key, value] : service_selector.pairs()) {
        selector.match_labels.Set(key, value);
      }
    }
  }
  const k8s::SpreadOwner& owner = info.spread_owner;
  if (owner.kind != k8s::SpreadOwnerKind::kNone) {
    const std::string key = OwnerKey(owner.kind, ns, owner.name);
    if (auto bad = bad_spread_owners_.find(key); bad != bad_spread_owners_.end()) {
      return std::string(k8s::SpreadOwnerKindName(owner.kind)) + " " + Quoted(owner.name) +
             " (the pod's controller) cannot be read by gantry: " + bad->second + kSpreadNeeds;
    }
    auto known = spread_owners_.find(key);
    if (known != spread_owners_.end() && known->second.selector.has_value()) {
      const LabelSelector& own = *known->second.selector;
      if (owner.kind == k8s::SpreadOwnerKind::kReplicationController) {
        // Merged into the Services' labels: its values win.
        for (const auto& [k, v] : own.match_labels.pairs()) selector.match_labels.Set(k, v);
      } else {
        // Its requirements added to the Services': both must hold.
        for (const auto& [k, v] : own.match_labels.pairs()) {
          const std::string* have = selector.match_labels.Find(k);
          if (have == nullptr) {
            selector.match_labels.Set(k, v);
          } else if (*have != v) {
            selector.match_expressions.push_back({k, SelectorRequirement::Op::kIn, {v}});
          }
        }
        for (const SelectorRequirement& r : own.match_expressions) {
          if (std::find(selector.match_expressions.begin(), selector.match_expressions.end(), r) ==
              selector.match_expressions.end()) {
            selector.match_expressions.push_back(r);
          }
        }
      }
    }
  }
  if (!selector.empty()) spec->default_spread_selector = std::move(selector);
  return "";
}

// ---------------------------------------------------------------------------------------
// Who a change re-syncs

void ClusterCache::IndexSpreadPod(PodRecord& pod, const std::string& key, bool gone) {
  const k8s::PodInfo& info = pod.info;
  const bool wanted = !gone && default_spreading_ && Ours(info) && info.node_name.empty() &&
                      !info.finished() && info.spec.spread.empty();
  const std::string owner_key =
      wanted && info.spread_owner.kind != k8s::SpreadOwnerKind::kNone
          ? OwnerKey(info.spread_owner.kind, info.meta.namespace_, info.spread_owner.name)
          : "";
  if (wanted == pod.spread_indexed && owner_key == pod.spread_owner_key) return;
  auto leave = [&](std::unordered_map<std::string, std::set<std::string>>& index,
                   const std::string& at) {
    auto it = index.find(at);
    if (it == index.end()) return;
    it->second.erase(key);
    if (it->second.empty()) index.erase(it);
  };
  if (pod.spread_indexed) leave(spread_pods_by_namespace_, info.meta.namespace_);
  if (!pod.spread_owner_key.empty()) leave(spread_pods_by_owner_, pod.spread_owner_key);
  if (wanted) spread_pods_by_namespace_[info.meta.namespace_].insert(key);
  if (!owner_key.empty()) spread_pods_by_owner_[owner_key].insert(key);
  pod.spread_indexed = wanted;
  pod.spread_owner_key = owner_key;
}

void ClusterCache::ResyncSpreadPods(const std::vector<std::string>& keys) {
  for (const std::string& key : keys) {
    pod_records_visited_++;
    auto it = pods_.find(key);
    if (it == pods_.end()) continue;
    const PodRecord& pod = it->second;
    if (!pod.info.node_name.empty() || pod.assumed) continue;  // placed: counts as it is
    SyncPod(key);
  }
}

// ---------------------------------------------------------------------------------------
// Services and controllers

void ClusterCache::OnService(k8s::EventType type, const json& object) {
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return;
  const std::string& ns = meta->namespace_;
  const std::string& name = meta->name;
  std::optional<Labels> before;
  bool was_bad = false;
  if (auto known = services_.find(ns); known != services_.end()) {
    if (auto it = known->second.find(name); it != known->second.end()) {
      before = std::move(it->second);
      known->second.erase(it);
    }
    if (known->second.empty()) services_.erase(known);
  }
  std::string said;  // what was said of it when it could not be read
  if (auto bad = bad_services_.find(ns); bad != bad_services_.end()) {
    if (auto it = bad->second.find(name); it != bad->second.end()) {
      was_bad = true;
      said = std::move(it->second);
      bad->second.erase(it);
    }
    if (bad->second.empty()) bad_services_.erase(bad);
  }
  std::optional<Labels> after;
  bool is_bad = false;
  if (type != k8s::EventType::kDeleted) {
    if (auto service = k8s::ParseService(object); service.ok()) {
      after = std::move(service->selector);
      services_[ns][name] = *after;
    } else {
      is_bad = true;
      std::string message = Bounded(service.status().message(), kMaxMessage);
      if (message != said) {
        Problem({"v1", "Service", ns, name, meta->uid, "Warning", "InvalidService", message});
      }
      bad_services_[ns][name] = std::move(message);
    }
  }
  if (!default_spreading_) return;
  auto pods = spread_pods_by_namespace_.find(ns);
  if (pods == spread_pods_by_namespace_.end()) return;
  // The pods whose default selector it changes: those it selects now and did not, or no
  // longer does, or selects with another selector; every one of the namespace when it
  // could not be read, before or now.
  std::vector<std::string> keys;
  for (const std::string& key : pods->second) {
    pod_records_visited_++;
    auto it = pods_.find(key);
    if (it == pods_.end()) continue;
    const PodRecord& pod = it->second;
    if (was_bad || is_bad) {
      keys.push_back(key);
      continue;
    }
    const bool was =
        std::binary_search(pod.spread_services.begin(), pod.spread_services.end(), name);
    const bool now = after && ServiceSelects(*after, pod.info.spec.labels);
    if (was != now || (now && before != after)) keys.push_back(key);
  }
  ResyncSpreadPods(keys);
}

void ClusterCache::OnSpreadOwner(k8s::SpreadOwnerKind kind, k8s::EventType type,
                                 const json& object) {
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return;
  const std::string key = OwnerKey(kind, meta->namespace_, meta->name);
  spread_owners_.erase(key);
  std::string said;
  if (auto bad = bad_spread_owners_.find(key); bad != bad_spread_owners_.end()) {
    said = std::move(bad->second);
    bad_spread_owners_.erase(bad);
  }
  if (type != k8s::EventType::kDeleted) {
    if (auto owner = k8s::ParseSpreadOwner(object, kind); owner.ok()) {
      spread_owners_.emplace(key, std::move(owner).value());
    } else {
      std::string message = Bounded(owner.status().message(), kMaxMessage);
      if (message != said) {
        Problem({k8s::SpreadOwnerApiVersion(kind), k8s::SpreadOwnerKindTitle(kind),
                 meta->namespace_, meta->name, meta->uid, "Warning",
                 std::string("Invalid") + k8s::SpreadOwnerKindTitle(kind), message});
      }
      bad_spread_owners_.emplace(key, std::move(message));
    }
  }
  if (!default_spreading_) return;
  auto pods = spread_pods_by_owner_.find(key);
  if (pods == spread_pods_by_owner_.end()) return;
  ResyncSpreadPods(std::vector<std::string>(pods->second.begin(), pods->second.end()));
}

}  // namespace gantry

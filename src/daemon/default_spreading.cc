// The selector kube-scheduler's default topology spreading counts a pod's peers by
// (pkg/scheduler/framework/plugins/helper/spread.go, DefaultSelector): the selectors of
// the Services in the pod's namespace that select it (a Service without a selector
// selects nothing), merged; then its controller's, when that is a v1
// ReplicationController (its selector map merged in, its values winning) or an apps/v1
// ReplicaSet or StatefulSet (its selector's requirements added), looked up by name in the
// pod's namespace and left out while unknown. A selector without requirements means no
// default spreading. The podtopologyspread plugin applies its default constraints with it
// to a pod without constraints of its own.
#include <algorithm>

#include "daemon/default_spreading.h"
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

void Leave(std::unordered_map<std::string, std::set<std::string>>& index, const std::string& at,
           const std::string& key) {
  auto it = index.find(at);
  if (it == index.end()) return;
  it->second.erase(key);
  if (it->second.empty()) index.erase(it);
}

constexpr const char* kSpreadNeeds =
    "; the pod's default topology spreading (kube-scheduler's, by the selectors of the "
    "Services that select it and of its controller) needs it, so the pod stays pending";

}  // namespace

// ---------------------------------------------------------------------------------------
// A pod's default selector

std::string DefaultSpreading::Resolve(const std::string& key, const k8s::PodInfo& info,
                                      TaskSpec* spec) {
  auto record = pods_.find(key);
  if (record != pods_.end()) record->second.services.clear();
  if (!enabled_ || !spec->spread.empty()) return "";
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
      // In name order: sorted. (A pod to place is followed: TrackPod saw it so.)
      if (record != pods_.end()) record->second.services.push_back(name);
      for (const auto& [key, value] : service_selector.pairs()) {
        selector.match_labels.Set(key, value);
      }
    }
  }
  const k8s::SpreadOwner& owner = info.spread_owner;
  if (owner.kind != k8s::SpreadOwnerKind::kNone) {
    const std::string key = OwnerKey(owner.kind, ns, owner.name);
    if (auto bad = bad_owners_.find(key); bad != bad_owners_.end()) {
      return std::string(k8s::SpreadOwnerKindName(owner.kind)) + " " + Quoted(owner.name) +
             " (the pod's controller) cannot be read by gantry: " + bad->second + kSpreadNeeds;
    }
    auto known = owners_.find(key);
    if (known != owners_.end() && known->second.selector.has_value()) {
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

void DefaultSpreading::Unresolve(const std::string& key) {
  if (pods_.empty()) return;
  auto record = pods_.find(key);
  if (record != pods_.end()) record->second.services.clear();
}

// ---------------------------------------------------------------------------------------
// Who a change re-syncs

void DefaultSpreading::TrackPod(const std::string& key, const k8s::PodInfo& info, bool ours) {
  const bool wanted =
      enabled_ && ours && info.node_name.empty() && !info.finished() && info.spec.spread.empty();
  if (!wanted) {
    ForgetPod(key);
    return;
  }
  const std::string owner_key =
      info.spread_owner.kind != k8s::SpreadOwnerKind::kNone
          ? OwnerKey(info.spread_owner.kind, info.meta.namespace_, info.spread_owner.name)
          : "";
  auto [it, inserted] = pods_.try_emplace(key);
  PodRecord& record = it->second;
  if (inserted) {
    record.namespace_ = info.meta.namespace_;
    pods_by_namespace_[record.namespace_].insert(key);
  }
  if (inserted || owner_key != record.owner_key) {
    if (!record.owner_key.empty()) Leave(pods_by_owner_, record.owner_key, key);
    if (!owner_key.empty()) pods_by_owner_[owner_key].insert(key);
    record.owner_key = owner_key;
  }
  record.labels = info.spec.labels;
}

void DefaultSpreading::ForgetPod(const std::string& key) {
  auto it = pods_.find(key);
  if (it == pods_.end()) return;
  Leave(pods_by_namespace_, it->second.namespace_, key);
  if (!it->second.owner_key.empty()) Leave(pods_by_owner_, it->second.owner_key, key);
  pods_.erase(it);
}

// ---------------------------------------------------------------------------------------
// Services and controllers

Resync DefaultSpreading::OnService(k8s::EventType type, const json& object) {
  Resync out;
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return out;
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
        out.problems.push_back(
            {"v1", "Service", ns, name, meta->uid, "Warning", "InvalidService", message});
      }
      bad_services_[ns][name] = std::move(message);
    }
  }
  if (!enabled_) return out;
  auto pods = pods_by_namespace_.find(ns);
  if (pods == pods_by_namespace_.end()) return out;
  // The pods whose default selector it changes: those it selects now and did not, or no
  // longer does, or selects with another selector; every one of the namespace when it
  // could not be read, before or now.
  for (const std::string& key : pods->second) {
    pods_visited_++;
    auto it = pods_.find(key);
    if (it == pods_.end()) continue;
    const PodRecord& pod = it->second;
    if (was_bad || is_bad) {
      out.pods.push_back(key);
      continue;
    }
    const bool was = std::binary_search(pod.services.begin(), pod.services.end(), name);
    const bool now = after && ServiceSelects(*after, pod.labels);
    if (was != now || (now && before != after)) out.pods.push_back(key);
  }
  return out;
}

Resync DefaultSpreading::OnOwner(k8s::SpreadOwnerKind kind, k8s::EventType type,
                                 const json& object) {
  Resync out;
  auto meta = k8s::ParseMeta(object);
  if (!meta.ok()) return out;
  const std::string key = OwnerKey(kind, meta->namespace_, meta->name);
  owners_.erase(key);
  std::string said;
  if (auto bad = bad_owners_.find(key); bad != bad_owners_.end()) {
    said = std::move(bad->second);
    bad_owners_.erase(bad);
  }
  if (type != k8s::EventType::kDeleted) {
    if (auto owner = k8s::ParseSpreadOwner(object, kind); owner.ok()) {
      owners_.emplace(key, std::move(owner).value());
    } else {
      std::string message = Bounded(owner.status().message(), kMaxMessage);
      if (message != said) {
        out.problems.push_back({k8s::SpreadOwnerApiVersion(kind), k8s::SpreadOwnerKindTitle(kind),
                                meta->namespace_, meta->name, meta->uid, "Warning",
                                std::string("Invalid") + k8s::SpreadOwnerKindTitle(kind), message});
      }
      bad_owners_.emplace(key, std::move(message));
    }
  }
  if (!enabled_) return out;
  auto pods = pods_by_owner_.find(key);
  if (pods == pods_by_owner_.end()) return out;
  out.pods.assign(pods->second.begin(), pods->second.end());
  return out;
}

DefaultSpreading::Sizes DefaultSpreading::sizes() const {
  Sizes s;
  for (const auto& [ns, names] : services_) s.services += names.size();
  for (const auto& [ns, names] : bad_services_) s.services += names.size();
  s.spread_owners = owners_.size() + bad_owners_.size();
  for (const auto* index : {&pods_by_namespace_, &pods_by_owner_}) {
    for (const auto& [key, keys] : *index) s.spread_index += keys.size();
  }
  s.pods = pods_.size();
  return s;
}

}  // namespace gantry

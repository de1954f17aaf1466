#include "k8s/pod_rules.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <tuple>

#include "k8s/csi_translation.h"
#include "k8s/json_fields.h"
#include "k8s/json_text.h"
#include "model/limits.h"

namespace gantry::k8s {
namespace {

using json = nlohmann::json;
using Op = SelectorRequirement::Op;

std::string Index(const std::string& at, size_t i) {
  return at + "[" + std::to_string(i) + "]";
}

// A list field: absent or null is empty; anything but a list is an error.
Status ListOf(const json& object, const char* key, const std::string& at, const json** out) {
  static const json kEmpty = json::array();  // immutable: a shared empty list, not state
  const json& v = Field(object, key);
  *out = &kEmpty;
  if (v.is_null()) return Status::Ok();
  if (!v.is_array()) {
    return Status::Invalid(at + "." + key + ": expected a list, got " + JsonPrefix(v, 64));
  }
  *out = &v;
  return Status::Ok();
}

Status Strings(const json& object, const char* key, const std::string& at,
               std::vector<std::string>* out) {
  const json* list = nullptr;
  GANTRY_RETURN_IF_ERROR(ListOf(object, key, at, &list));
  for (size_t i = 0; i < list->size(); ++i) {
    if (!(*list)[i].is_string()) {
      return Status::Invalid(Index(at + "." + key, i) + ": expected a string, got " +
                             JsonPrefix((*list)[i], 64));
    }
    out->push_back((*list)[i].get<std::string>());
  }
  return Status::Ok();
}

// One selector requirement. `numeric`: Gt and Lt allowed (node selectors); `field`: a
// matchFields requirement (key metadata.name, In or NotIn, one value).
Status Requirement(const json& r, const std::string& at, bool numeric, bool field,
                   SelectorRequirement* out) {
  out->key = String(r, "key");
  const std::string op = String(r, "operator");
  if (field) {
    if (out->key != "metadata.name") {
      return Status::Invalid(at + ".key: \"" + KeyText(out->key) +
                             "\" is not a field gantry or Kubernetes can select nodes by "
                             "(matchFields supports metadata.name)");
    }
    out->key = std::string(kNodeNameField);
  } else if (out->key.empty()) {
    return Status::Invalid(at + ".key: must not be empty");
  }
  const bool known = ParseSelectorOp(op, &out->op, numeric);
  if (!known || (field && out->op != Op::kIn && out->op != Op::kNotIn)) {
    const char* allowed = field     ? "In, NotIn"
                          : numeric ? "In, NotIn, Exists, DoesNotExist, Gt, Lt"
                                    : "In, NotIn, Exists, DoesNotExist";
    return Status::Invalid(at + ".operator: \"" + KeyText(op) + "\" is not supported (" + allowed +
                           ")");
  }
  GANTRY_RETURN_IF_ERROR(Strings(r, "values", at, &out->values));
  const std::string op_name(SelectorOpName(out->op));
  switch (out->op) {
    case Op::kIn:
    case Op::kNotIn:
      if (out->values.empty()) {
        return Status::Invalid(at + ".values: operator " + op_name + " needs at least one value");
      }
      if (field && out->values.size() != 1) {
        return Status::Invalid(at +
                               ".values: matchFields on metadata.name takes exactly one "
                               "value, got " +
                               std::to_string(out->values.size()));
      }
      break;
    case Op::kExists:
    case Op::kDoesNotExist:
      if (!out->values.empty()) {
        return Status::Invalid(at + ".values: operator " + op_name + " takes no values");
      }
      break;
    case Op::kGt:
    case Op::kLt: {
      if (out->values.size() != 1) {
        return Status::Invalid(at + ".values: operator " + op_name +
                               " takes exactly one value, got " +
                               std::to_string(out->values.size()));
      }
      const std::string& v = out->values[0];
      const size_t digits = v.find_first_not_of("0123456789", v[0] == '-' || v[0] == '+' ? 1 : 0);
      if (v.empty() || digits != std::string::npos || v == "-" || v == "+") {
        return Status::Invalid(at + ".values[0]: operator " + op_name +
                               " needs an integer, got \"" + KeyText(v) + "\"");
      }
      break;
    }
  }
  return Status::Ok();
}

// A NodeSelectorTerm's matchExpressions and matchFields, as one list of requirements.
Status NodeTerm(const json& term, const std::string& at, std::vector<SelectorRequirement>* out) {
  for (const auto& [key, field] : {std::pair{"matchExpressions", false}, {"matchFields", true}}) {
    const json* list = nullptr;
    GANTRY_RETURN_IF_ERROR(ListOf(term, key, at, &list));
    for (size_t j = 0; j < list->size(); ++j) {
      SelectorRequirement r;
      GANTRY_RETURN_IF_ERROR(
          Requirement((*list)[j], Index(at + "." + key, j), /*numeric=*/!field, field, &r));
      out->push_back(std::move(r));
    }
  }
  return Status::Ok();
}

// A metav1.LabelSelector; null stays std::nullopt (matches nothing).
Status Selector(const json& object, const char* key, const std::string& at,
                std::optional<LabelSelector>* out) {
  const json& s = Field(object, key);
  out->reset();
  if (s.is_null()) return Status::Ok();
  const std::string here = at + "." + key;
  if (!s.is_object()) {
    return Status::Invalid(here + ": expected a label selector, got " + JsonPrefix(s, 64));
  }
  LabelSelector selector;
  const json& labels = Field(s, "matchLabels");
  if (!labels.is_null() && !labels.is_object()) {
    return Status::Invalid(here + ".matchLabels: expected a map of strings, got " +
                           JsonPrefix(labels, 64));
  }
  if (labels.is_object()) {
    for (auto it = labels.begin(); it != labels.end(); ++it) {
      if (!it.value().is_string()) {
        return Status::Invalid(here + ".matchLabels." + KeyText(it.key()) +
                               ": expected a string, got " + JsonPrefix(it.value(), 64));
      }
      selector.match_labels.Set(it.key(), it.value().get<std::string>());
    }
  }
  const json* exprs = nullptr;
  GANTRY_RETURN_IF_ERROR(ListOf(s, "matchExpressions", here, &exprs));
  for (size_t j = 0; j < exprs->size(); ++j) {
    SelectorRequirement r;
    GANTRY_RETURN_IF_ERROR(Requirement((*exprs)[j], Index(here + ".matchExpressions", j),
                                       /*numeric=*/false, /*field=*/false, &r));
    selector.match_expressions.push_back(std::move(r));
  }
  *out = std::move(selector);
  return Status::Ok();
}

// matchLabelKeys (In) and mismatchLabelKeys (NotIn) merged into the selector with the
// pod's values, as kube-apiserver does when it admits the pod; a requirement already
// there (merged by the API server) is not added twice.
Status ReadLabelKeys(const json& object, const std::string& at, const Labels& pod_labels,
                     bool with_mismatch, std::optional<LabelSelector>* selector) {
  for (const auto& [key, op] :
       {std::pair{"matchLabelKeys", Op::kIn}, {"mismatchLabelKeys", Op::kNotIn}}) {
    if (op == Op::kNotIn && !with_mismatch) continue;
    std::vector<std::string> keys;
    GANTRY_RETURN_IF_ERROR(Strings(object, key, at, &keys));
    if (keys.empty()) continue;
    if (!selector->has_value()) {
      return Status::Invalid(at + "." + key + ": may only be set together with labelSelector");
    }
    gantry::MergeLabelKeys(keys, op, pod_labels, /*unless_present=*/true, &**selector);
  }
  return Status::Ok();
}

Status AffinityTerm(const json& t, const std::string& at, const Labels& pod_labels,
                    PodAffinityTerm* out) {
  GANTRY_RETURN_IF_ERROR(Selector(t, "labelSelector", at, &out->selector));
  GANTRY_RETURN_IF_ERROR(Strings(t, "namespaces", at, &out->namespaces));
  GANTRY_RETURN_IF_ERROR(Selector(t, "namespaceSelector", at, &out->namespace_selector));
  out->topology_key = String(t, "topologyKey");
  if (out->topology_key.empty()) return Status::Invalid(at + ".topologyKey: must not be empty");
  return ReadLabelKeys(t, at, pod_labels, /*with_mismatch=*/true, &out->selector);
}

Status Weight(const json& object, const std::string& at, int32_t* out) {
  const json& w = Field(object, "weight");
  if (!w.is_number_integer() || w.get<int64_t>() < 1 || w.get<int64_t>() > 100) {
    return Status::Invalid(at + ".weight: must be an integer in 1..100, got " + JsonPrefix(w, 32));
  }
  *out = static_cast<int32_t>(w.get<int64_t>());
  return Status::Ok();
}

Status AffinityTerms(const json& group, const std::string& at, const Labels& pod_labels,
                     std::vector<PodAffinityTerm>* required,
                     std::vector<PodAffinityTerm>* preferred) {
  const json* list = nullptr;
  GANTRY_RETURN_IF_ERROR(
      ListOf(group, "requiredDuringSchedulingIgnoredDuringExecution", at, &list));
  for (size_t i = 0; i < list->size(); ++i) {
    PodAffinityTerm term;
    GANTRY_RETURN_IF_ERROR(
        AffinityTerm((*list)[i], Index(at + ".requiredDuringSchedulingIgnoredDuringExecution", i),
                     pod_labels, &term));
    required->push_back(std::move(term));
  }
  GANTRY_RETURN_IF_ERROR(
      ListOf(group, "preferredDuringSchedulingIgnoredDuringExecution", at, &list));
  for (size_t i = 0; i < list->size(); ++i) {
    const std::string here = Index(at + ".preferredDuringSchedulingIgnoredDuringExecution", i);
    PodAffinityTerm term;
    GANTRY_RETURN_IF_ERROR(Weight((*list)[i], here, &term.weight));
    const json& inner = Field((*list)[i], "podAffinityTerm");
    if (!inner.is_object()) return Status::Invalid(here + ".podAffinityTerm: required");
    GANTRY_RETURN_IF_ERROR(AffinityTerm(inner, here + ".podAffinityTerm", pod_labels, &term));
    preferred->push_back(std::move(term));
  }
  return Status::Ok();
}

}  // namespace

Status ParseLabelSelector(const json& object, const char* key, const std::string& at,
                          std::optional<LabelSelector>* out) {
  return Selector(object, key, at, out);
}

Status ParseNodeSelector(const json& selector, const std::string& at, NodeAffinity* out) {
  const json* terms = nullptr;
  GANTRY_RETURN_IF_ERROR(ListOf(selector, "nodeSelectorTerms", at, &terms));
  for (size_t i = 0; i < terms->size(); ++i) {
    std::vector<SelectorRequirement> term;
    GANTRY_RETURN_IF_ERROR(NodeTerm((*terms)[i], Index(at + ".nodeSelectorTerms", i), &term));
    out->terms.push_back(std::move(term));
  }
  return Status::Ok();
}

Status ParseNodeAffinity(const json& spec, const std::string& where, NodeAffinity* out) {
  const std::string at = where + ".affinity.nodeAffinity";
  const json& node_affinity = Field(Field(spec, "affinity"), "nodeAffinity");
  GANTRY_RETURN_IF_ERROR(
      ParseNodeSelector(Field(node_affinity, "requiredDuringSchedulingIgnoredDuringExecution"),
                        at + ".requiredDuringSchedulingIgnoredDuringExecution", out));
  const json* preferred = nullptr;
  GANTRY_RETURN_IF_ERROR(
      ListOf(node_affinity, "preferredDuringSchedulingIgnoredDuringExecution", at, &preferred));
  for (size_t i = 0; i < preferred->size(); ++i) {
    const std::string here = Index(at + ".preferredDuringSchedulingIgnoredDuringExecution", i);
    PreferredNodeTerm p;
    GANTRY_RETURN_IF_ERROR(Weight((*preferred)[i], here, &p.weight));
    GANTRY_RETURN_IF_ERROR(
        NodeTerm(Field((*preferred)[i], "preference"), here + ".preference", &p.term));
    out->preferred.push_back(std::move(p));
  }
  return Status::Ok();
}

Status ParsePodAffinity(const json& spec, const std::string& where, const Labels& pod_labels,
                        PodAffinity* out) {
  const json& affinity = Field(spec, "affinity");
  GANTRY_RETURN_IF_ERROR(AffinityTerms(Field(affinity, "podAffinity"),
                                       where + ".affinity.podAffinity", pod_labels,
                                       &out->required_affinity, &out->preferred_affinity));
  return AffinityTerms(Field(affinity, "podAntiAffinity"), where + ".affinity.podAntiAffinity",
                       pod_labels, &out->required_anti_affinity, &out->preferred_anti_affinity);
}

Status ParseTopologySpread(const json& spec, const std::string& where, const Labels& pod_labels,
                           std::vector<TopologySpreadConstraint>* out) {
  const json* list = nullptr;
  GANTRY_RETURN_IF_ERROR(ListOf(spec, "topologySpreadConstraints", where, &list));
  for (size_t i = 0; i < list->size(); ++i) {
    const json& c = (*list)[i];
    const std::string at = Index(where + ".topologySpreadConstraints", i);
    TopologySpreadConstraint t;
    const json& skew = Field(c, "maxSkew");
    if (!skew.is_number_integer() || skew.get<int64_t>() < 1 || skew.get<int64_t>() > INT32_MAX) {
      return Status::Invalid(at + ".maxSkew: must be an integer greater than zero, got " +
                             JsonPrefix(skew, 32));
    }
    t.max_skew = static_cast<int32_t>(skew.get<int64_t>());
    t.topology_key = String(c, "topologyKey");
    if (t.topology_key.empty()) return Status::Invalid(at + ".topologyKey: must not be empty");
    const std::string when = String(c, "whenUnsatisfiable");
    if (when == "DoNotSchedule") {
      t.when_unsatisfiable = TopologySpreadConstraint::WhenUnsatisfiable::kDoNotSchedule;
    } else if (when == "ScheduleAnyway") {
      t.when_unsatisfiable = TopologySpreadConstraint::WhenUnsatisfiable::kScheduleAnyway;
    } else {
      return Status::Invalid(at + ".whenUnsatisfiable: \"" + KeyText(when) +
                             "\" is not supported (DoNotSchedule, ScheduleAnyway)");
    }
    const json& min_domains = Field(c, "minDomains");
    if (!min_domains.is_null()) {
      if (!min_domains.is_number_integer() || min_domains.get<int64_t>() < 1 ||
          min_domains.get<int64_t>() > INT32_MAX) {
        return Status::Invalid(at + ".minDomains: must be an integer greater than zero, got " +
                               JsonPrefix(min_domains, 32));
      }
      if (!t.filters()) {
        return Status::Invalid(at +
                               ".minDomains: may only be set with whenUnsatisfiable "
                               "DoNotSchedule");
      }
      t.min_domains = static_cast<int32_t>(min_domains.get<int64_t>());
    }
    for (const auto& [key, honor] : {std::pair{"nodeAffinityPolicy", &t.honor_node_affinity},
                                     {"nodeTaintsPolicy", &t.honor_node_taints}}) {
      const std::string policy = String(c, key);
      if (policy.empty()) continue;  // the defaults: affinity Honor, taints Ignore
      if (policy != "Honor" && policy != "Ignore") {
        return Status::Invalid(at + "." + key + ": \"" + KeyText(policy) +
                               "\" is not supported (Honor, Ignore)");
      }
      *honor = policy == "Honor";
    }
    GANTRY_RETURN_IF_ERROR(Selector(c, "labelSelector", at, &t.selector));
    GANTRY_RETURN_IF_ERROR(ReadLabelKeys(c, at, pod_labels, /*with_mismatch=*/false, &t.selector));
    out->push_back(std::move(t));
  }
  return Status::Ok();
}

Status ParseHostPorts(const json& spec, const std::string& where, std::vector<HostPort>* out) {
  const json* containers = nullptr;
  GANTRY_RETURN_IF_ERROR(ListOf(spec, "containers", where, &containers));
  for (size_t i = 0; i < containers->size(); ++i) {
    const std::string at = Index(where + ".containers", i);
    const json* ports = nullptr;
    GANTRY_RETURN_IF_ERROR(ListOf((*containers)[i], "ports", at, &ports));
    for (size_t j = 0; j < ports->size(); ++j) {
      const json& p = (*ports)[j];
      const std::string here = Index(at + ".ports", j);
      const json& host_port = Field(p, "hostPort");
      if (host_port.is_null() || (host_port.is_number_integer() && host_port.get<int64_t>() == 0)) {
        continue;  // no host port: nothing on the node is taken
      }
      if (!host_port.is_number_integer() || host_port.get<int64_t>() < 1 ||
          host_port.get<int64_t>() > 65535) {
        return Status::Invalid(here + ".hostPort: must be a port number in 1..65535, got " +
                               JsonPrefix(host_port, 32));
      }
      HostPort port;
      port.port = static_cast<int32_t>(host_port.get<int64_t>());
      const std::string protocol = String(p, "protocol");
      if (!protocol.empty()) port.protocol = protocol;
      if (port.protocol != "TCP" && port.protocol != "UDP" && port.protocol != "SCTP") {
        return Status::Invalid(here + ".protocol: \"" + KeyText(protocol) +
                               "\" is not supported (TCP, UDP, SCTP)");
      }
      port.host_ip = String(p, "hostIP");
      if (port.host_ip == "0.0.0.0") port.host_ip.clear();
      out->push_back(std::move(port));
    }
  }
  return Status::Ok();
}

std::vector<std::string> SchedulingGates(const json& spec) {
  std::vector<std::string> gates;
  const json& list = Field(spec, "schedulingGates");
  for (size_t i = 0; list.is_array() && i < list.size(); ++i) {
    const std::string name = String(list[i], "name");
    gates.push_back(name.empty() ? "(unnamed)" : name);
  }
  return gates;
}

std::string PodClaimRef::Field() const {
  return "spec.volumes[" + std::to_string(index) + "]." +
         (ephemeral ? "ephemeral" : "persistentVolumeClaim");
}

Status ParsePodClaims(const json& spec, const std::string& where, const std::string& pod_name,
                      std::vector<PodClaimRef>* out) {
  const json* volumes = nullptr;
  GANTRY_RETURN_IF_ERROR(ListOf(spec, "volumes", where, &volumes));
  for (size_t i = 0; i < volumes->size(); ++i) {
    const json& v = (*volumes)[i];
    const std::string at = Index(where + ".volumes", i);
    PodClaimRef ref;
    ref.index = i;
    ref.volume = String(v, "name");
    if (ref.volume.size() > kMaxNameLength) {
      return Status::Invalid(at + ".name: " + std::to_string(ref.volume.size()) +
                             " bytes long; the limit is " + std::to_string(kMaxNameLength));
    }
    const json& claim = Field(v, "persistentVolumeClaim");
    if (!claim.is_null()) {
      ref.claim = String(claim, "claimName");
      if (ref.claim.empty() || ref.claim.size() > kMaxNameLength) {
        return Status::Invalid(at + ".persistentVolumeClaim.claimName: must be 1.." +
                               std::to_string(kMaxNameLength) + " bytes long, got " +
                               std::to_string(ref.claim.size()));
      }
    } else if (!Field(v, "ephemeral").is_null()) {
      if (ref.volume.empty()) return Status::Invalid(at + ".name: must not be empty");
      ref.ephemeral = true;
      ref.claim = pod_name + "-" + ref.volume;  // what the ephemeral volume controller makes
    } else {
      continue;
    }
    out->push_back(std::move(ref));
  }
  return Status::Ok();
}

std::vector<InlineDisk> InlineDisksOf(const json& spec) {
  std::vector<InlineDisk> out;
  const json& volumes = Field(spec, "volumes");
  auto read_only = [](const json& source) {
    const json& v = Field(source, "readOnly");
    return v.is_boolean() && v.get<bool>();
  };
  for (size_t i = 0; volumes.is_array() && i < volumes.size(); ++i) {
    const json& v = volumes[i];
    if (const json& pd = Field(v, "gcePersistentDisk"); !pd.is_null()) {
      out.push_back({"gce-pd/" + String(pd, "pdName"), read_only(pd)});
    } else if (const json& ebs = Field(v, "awsElasticBlockStore"); !ebs.is_null()) {
      out.push_back({"aws-ebs/" + String(ebs, "volumeID"), false});  // even read-only
    } else if (const json& iscsi = Field(v, "iscsi"); !iscsi.is_null()) {
      out.push_back({"iscsi/" + String(iscsi, "iqn"), read_only(iscsi)});
    } else if (const json& rbd = Field(v, "rbd"); !rbd.is_null()) {
      const json& monitors = Field(rbd, "monitors");
      for (size_t m = 0; monitors.is_array() && m < monitors.size(); ++m) {
        if (!monitors[m].is_string()) continue;
        out.push_back({"rbd/" + String(rbd, "pool") + "/" + String(rbd, "image") + "/" +
                           monitors[m].get<std::string>(),
                       read_only(rbd)});
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const InlineDisk& a, const InlineDisk& b) {
    return std::tie(a.key, a.read_only) < std::tie(b.key, b.read_only);
  });
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::string UnsupportedField(const json& spec) {
  // Inline in-tree volumes that count against node limits once translated to CSI: one
  // that cannot be translated (an Azure disk that is not Managed, an EBS ID of another
  // form) fails CSILimits on every node.
  const json& volumes = Field(spec, "volumes");
  for (size_t i = 0; volumes.is_array() && i < volumes.size(); ++i) {
    for (const char* kind :
         {"awsElasticBlockStore", "gcePersistentDisk", "azureDisk", "cinder", "portworxVolume"}) {
      if (Field(volumes[i], kind).is_null() || AttachableOfInlineVolume(volumes[i])) continue;
      return "spec.volumes[" + std::to_string(i) + "]." + kind + " (volume \"" +
             KeyText(String(volumes[i], "name")) +
             "\"): " + JsonPrefix(Field(volumes[i], kind), 128) +
             " cannot be translated to CSI as CSI migration does (only Managed Azure disks, EBS "
             "volume IDs vol-...), so kube-scheduler cannot count it against a node's volume "
             "limits and places the pod nowhere";
    }
  }
  return "";
}

}  // namespace gantry::k8s

// Services and the controllers whose selectors kube-scheduler's default topology spreading
// reads (helper.DefaultSelector: v1 ReplicationControllers, apps/v1 ReplicaSets and
// StatefulSets): decoded from the API's JSON into their selectors, with errors that name
// the object and the field. What the selectors make for a pod is the daemon's
// (DefaultSpreading).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "k8s/objects.h"
#include "model/labels.h"
#include "model/pod_constraints.h"
#include "model/status.h"

namespace gantry::k8s {

struct ServiceInfo {
  ObjectMeta meta;
  // spec.selector. Empty: the Service selects no pod (a nil selector matches nothing, and
  // the API server drops an empty one).
  Labels selector;
};

struct SpreadOwnerInfo {
  ObjectMeta meta;
  SpreadOwnerKind kind = SpreadOwnerKind::kNone;
  // A ReplicationController's spec.selector (a map) as matchLabels; a ReplicaSet's or a
  // StatefulSet's metav1.LabelSelector. None: adds nothing to a pod's default selector.
  std::optional<LabelSelector> selector;
};

Result<ServiceInfo> ParseService(const nlohmann::json& object);
Result<SpreadOwnerInfo> ParseSpreadOwner(const nlohmann::json& object, SpreadOwnerKind kind);

// "replicaset", "statefulset", "replicationcontroller": the kind as messages name it.
const char* SpreadOwnerKindName(SpreadOwnerKind kind);
// The API's apiVersion and Kind, for events about the object.
const char* SpreadOwnerApiVersion(SpreadOwnerKind kind);
const char* SpreadOwnerKindTitle(SpreadOwnerKind kind);

}  // namespace gantry::k8s

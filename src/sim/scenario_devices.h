// A scenario's Dynamic Resource Allocation objects (resource.k8s.io/v1), written as
// Kubernetes writes them, so that a user's manifests and a driver's slices paste in:
//   dra:
//     objects:
//       - apiVersion: resource.k8s.io/v1
//         kind: DeviceClass            # or ResourceSlice, ResourceClaim, DeviceTaintRule
//         metadata: {name: gpu.example.com}
//         spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
//       - kind: ResourceClaim           # a claim's status.allocation and reservedFor are
//         metadata: {name: a, namespace: ml}   # read too: its devices are taken
//         spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}
//     adminAccessNamespaces: [ops]     # labelled resource.kubernetes.io/admin-access=true
// A task names its claims (`claims: [a]`, in its namespace: TaskSpec::resource_claims); an
// expectation `devices: {task: [pool/device, ...]}` checks what its claims were given.
//
// The objects are read by the API's own decoders (k8s/dra_objects.h), which the simulator
// may not depend on: whoever reads a scenario hands them in as a DeviceObjectReader (the
// command line does). Without one, a scenario with `dra:` is refused.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "engine/snapshot.h"
#include "model/dra.h"
#include "model/dra_inventory.h"
#include "model/status.h"
#include "sim/yaml_reader.h"

namespace gantry {

struct ScenarioDevices {
  std::vector<dra::DeviceClass> classes;
  std::vector<dra::ResourceSlice> slices;
  std::vector<dra::DeviceTaintRule> taint_rules;
  dra::ClaimTable claims;
  std::set<std::string, std::less<>> admin_namespaces;
  dra::Inventory inventory;  // of the three above, once read

  bool empty() const { return classes.empty() && slices.empty() && claims.empty(); }
  // What a session reads of them. REQUIRES: this outlives the session, unchanged.
  DeviceInputs Inputs(const dra::SelectorVerdicts* verdicts) const {
    return DeviceInputs{&inventory, &claims, verdicts, &admin_namespaces};
  }
};

// Reads one API object of DRA's kinds into `devices`: an error names the object and its
// field (the decoders' words); the caller adds where in the file.
class DeviceObjectReader {
 public:
  virtual ~DeviceObjectReader() = default;
  virtual Status Add(const YAML::Node& object, ScenarioDevices* devices) const = 0;
};

// Reads `dra:` (above). REQUIRES: `reader` not null where `node` holds objects.
Status ParseScenarioDevices(const YamlReader& r, const YAML::Node& node,
                            const DeviceObjectReader* reader, ScenarioDevices* out);

}  // namespace gantry

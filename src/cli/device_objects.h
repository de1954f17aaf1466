// The scenario reader's DeviceObjectReader (sim/scenario_devices.h) made of the API's own
// decoders (k8s/dra_objects.h), and CEL for a run's DRA selectors where this build has it:
// the command line is the layer that may use both the simulator and the API's code.
#pragma once

#include <memory>

#include "model/dra_verdicts.h"
#include "sim/scenario_devices.h"

namespace gantry {

class ApiDeviceObjectReader : public DeviceObjectReader {
 public:
  Status Add(const YAML::Node& object, ScenarioDevices* devices) const override;
};

// The CEL verdicts of a run (a SelectorCache of upstream's CEL library behind them), or
// null in a build without it (GANTRY_DRA_CEL off): a selector is then an allocation error.
class RunVerdicts {
 public:
  RunVerdicts();
  ~RunVerdicts();
  const dra::SelectorVerdicts* get() const;

 private:
  struct Parts;
  std::unique_ptr<Parts> parts_;
};

}  // namespace gantry

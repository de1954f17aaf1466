#include "sim/scenario_mig.h"

#include <utility>
#include <vector>

namespace gantry {

Status ParseNodeMig(const YamlReader& r, const YAML::Node& mig, const std::string& field,
                    Node* node) {
  GANTRY_RETURN_IF_ERROR(r.Map(mig, field, {"strategy", "perGpu", "gpus", "state"}));
  if (node->gpus.empty()) return r.Error(mig, field, "a node with no GPUs has no MIG devices");
  const std::string product = GpuModels().Name(node->gpus.front().model);
  const auto count = static_cast<int64_t>(node->gpus.size());
  std::string strategy = "mixed";
  if (mig["strategy"])
    GANTRY_RETURN_IF_ERROR(r.String(mig["strategy"], field + ".strategy", &strategy));
  if (strategy != "mixed" && strategy != "single") {
    return r.Error(mig["strategy"], field + ".strategy",
                   "\"" + strategy + "\" is not mixed or single");
  }
  const YAML::Node& per_gpu = mig["perGpu"];
  if (!per_gpu) return r.Error(mig, field + ".perGpu", "required");
  if (!per_gpu.IsMap() || per_gpu.size() == 0) {
    return r.Error(per_gpu, field + ".perGpu", "expected a map of MIG profile to devices per GPU");
  }
  std::vector<std::string> names;
  std::vector<int64_t> counts;
  for (const auto& entry : per_gpu) {
    std::string name;
    GANTRY_RETURN_IF_ERROR(r.String(entry.first, field + ".perGpu", &name));
    int64_t n = 0;
    GANTRY_RETURN_IF_ERROR(r.Int(entry.second, field + ".perGpu." + name, 1, 8, &n));
    names.push_back(std::move(name));
    counts.push_back(n);
  }
  auto refs = FindMigProfiles(names, product);
  if (!refs.ok()) return r.Error(per_gpu, field + ".perGpu", refs.status().message());
  int64_t cut = count;
  if (mig["gpus"]) GANTRY_RETURN_IF_ERROR(r.Int(mig["gpus"], field + ".gpus", 1, count, &cut));
  if (mig["state"]) {
    std::string state;
    GANTRY_RETURN_IF_ERROR(r.LabelValue(mig["state"], field + ".state", &state));
    node->labels.Set(std::string(kMigConfigStateLabel), state);
  }
  node->labels.Set(std::string(kMigStrategyLabel), strategy);
  if (strategy == "single") {
    if (names.size() != 1) {
      return r.Error(per_gpu, field + ".perGpu", "the single strategy cuts GPUs into one profile");
    }
    if (mig["gpus"] && cut != count) {
      return r.Error(mig["gpus"], field + ".gpus", "the single strategy cuts every GPU");
    }
    const MigProfileRef& ref = refs->front();
    if (counts[0] > MigDevicesPerGpu(ref)) {
      return r.Error(per_gpu, field + ".perGpu." + names[0],
                     "a GPU holds at most " + std::to_string(MigDevicesPerGpu(ref)) + " " +
                         names[0] + " devices");
    }
    GpuDevice device = node->gpus.front();
    device.model = GpuModels().Intern(product + "-MIG-" + names[0]);
    device.memory_mib = ref.profile->memory_mib;
    node->gpus.assign(static_cast<size_t>(count * counts[0]), device);
    node->labels.Set("nvidia.com/gpu.product", GpuModels().Name(device.model));
    return Status::Ok();
  }
  node->labels.Set("nvidia.com/gpu.product", product);
  node->gpus.resize(static_cast<size_t>(count - cut));
  node->mig.gpus = static_cast<int32_t>(cut);
  std::vector<ResourceId> ids;
  for (size_t p = 0; p < names.size(); ++p) {
    auto id = InternResourceName(std::string(kMigResourcePrefix) + names[p], NameSource::kTrusted);
    if (!id.ok()) return r.Error(per_gpu, field + ".perGpu." + names[p], id.status().message());
    node->allocatable.Set(*id, node->allocatable.Get(*id) + cut * counts[p] * kMilliPerUnit);
    ids.push_back(*id);
  }
  for (int64_t g = 0; g < cut; ++g) {
    for (size_t p = 0; p < names.size(); ++p) {
      for (int64_t k = 0; k < counts[p]; ++k) {
        node->mig.devices.push_back({ids[p], static_cast<int32_t>(g), 0, 0, kNoMigHolder});
      }
    }
  }
  return Status::Ok();
}

}  // namespace gantry

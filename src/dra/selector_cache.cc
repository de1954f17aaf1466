#include "dra/selector_cache.h"

#include <utility>

#include "model/quantity.h"

namespace gantry::dra {

DeviceDescription DescribeDevice(std::string_view driver, const Device& device) {
  DeviceDescription description;
  description.driver = std::string(driver);
  description.allow_multiple_allocations = device.allow_multiple_allocations;
  description.attributes = device.attributes;
  for (const auto& [name, capacity] : device.capacity) {
    // Exact: CEL compares quantities by value, so "85899345920" is "80Gi" to it.
    description.capacity[name] = FormatQuantity(capacity.value);
  }
  return description;
}

SelectorCache::CompiledExpression& SelectorCache::Compiled(std::string_view expression) {
  auto it = expressions_.find(expression);
  if (it == expressions_.end()) {
    auto compiled = std::make_unique<CompiledExpression>(
        CompiledExpression{DeviceSelector::Compile(expression), {}});
    it = expressions_.emplace(std::string(expression), std::move(compiled)).first;
  }
  return *it->second;
}

SelectorCache::PreparedDevice& SelectorCache::Prepared(const DeviceName& key,
                                                       std::string_view driver,
                                                       const Device& device) {
  auto it = devices_.find(key);
  if (it != devices_.end() && it->second.driver == driver && it->second.device == device) {
    return it->second;
  }
  if (it != devices_.end()) {
    DropVerdicts(key, it->second);
    devices_.erase(it);
  }
  Result<CelDevice> cel = CelDevice::Prepare(DescribeDevice(driver, device));
  return devices_.emplace(key, PreparedDevice{std::string(driver), device, std::move(cel), {}})
      .first->second;
}

void SelectorCache::DropVerdicts(const DeviceName& key, PreparedDevice& prepared) {
  for (const std::string& expression : prepared.expressions) {
    auto it = expressions_.find(expression);
    if (it != expressions_.end()) it->second->verdicts.erase(key);
  }
  prepared.expressions.clear();
}

Result<bool> SelectorCache::Matches(std::string_view expression, const DeviceName& key,
                                    std::string_view driver, const Device& device) {
  PreparedDevice& prepared = Prepared(key, driver, device);
  CompiledExpression& compiled = Compiled(expression);
  if (!compiled.selector.ok()) return compiled.selector.status();
  auto cached = compiled.verdicts.find(key);
  if (cached != compiled.verdicts.end()) return cached->second;
  Result<bool> verdict = prepared.cel.ok() ? compiled.selector->Matches(*prepared.cel)
                                           : Result<bool>(prepared.cel.status());
  ++evaluations_;
  compiled.verdicts.emplace(key, verdict);
  prepared.expressions.emplace(expression);
  return verdict;
}

void SelectorCache::ForgetDevice(const DeviceName& key) {
  auto it = devices_.find(key);
  if (it == devices_.end()) return;
  DropVerdicts(key, it->second);
  devices_.erase(it);
}

void SelectorCache::ForgetExpression(std::string_view expression) {
  auto it = expressions_.find(expression);
  if (it == expressions_.end()) return;
  for (const auto& [key, verdict] : it->second->verdicts) {
    auto device = devices_.find(key);
    if (device != devices_.end()) {
      auto own = device->second.expressions.find(expression);
      if (own != device->second.expressions.end()) device->second.expressions.erase(own);
    }
  }
  expressions_.erase(it);
}

Result<bool> CelVerdicts::Matches(std::string_view expression, const DeviceRef& device) const {
  return cache_.Matches(
      expression,
      DeviceName{std::string(device.driver), std::string(device.pool), device.device.name},
      device.driver, device.device);
}

}  // namespace gantry::dra

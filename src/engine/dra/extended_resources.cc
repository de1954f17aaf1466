#include "engine/dra/extended_resources.h"

#include <algorithm>
#include <charconv>

namespace gantry::dra {
namespace {

constexpr std::string_view kRequestPrefix = "resource-";

// Upstream's IsDRAExtendedResourceName: an extended resource name (domain-qualified,
// outside kubernetes.io, not "requests."), or a class's implicit name, which is inside
// kubernetes.io and so allowed by its prefix.
bool IsDraExtendedResourceName(std::string_view name) {
  if (name.starts_with(kDeviceClassResourcePrefix)) return true;
  const size_t slash = name.find('/');
  return slash != std::string_view::npos && name.find("kubernetes.io/") == std::string_view::npos &&
         !name.starts_with("requests.");
}

}  // namespace

const DeviceClass* ClassForExtendedResource(std::span<const DeviceClass* const> classes,
                                            std::string_view resource) {
  const DeviceClass* named = nullptr;
  for (const DeviceClass* c : classes) {
    if (c->extended_resource_name == resource && (named == nullptr || c->name < named->name)) {
      named = c;
    }
  }
  if (named != nullptr) return named;
  if (!resource.starts_with(kDeviceClassResourcePrefix)) return nullptr;
  const std::string_view class_name = resource.substr(kDeviceClassResourcePrefix.size());
  for (const DeviceClass* c : classes) {
    if (c->name == class_name) return c;
  }
  return nullptr;
}

void MarkDeviceBacked(std::span<const DeviceClass* const> classes, TaskSpec* spec) {
  spec->device_backed.clear();
  if (classes.empty()) return;
  auto consider = [&](ResourceId id, int64_t count) {
    const std::string& name = ResourceName(id);
    if (count <= 0 || !IsDraExtendedResourceName(name)) return;
    if (const DeviceClass* c = ClassForExtendedResource(classes, name)) {
      DeviceBackedResource backed;
      backed.resource = id;
      backed.device_class = c->name;
      backed.count = count;
      spec->device_backed.push_back(std::move(backed));
    }
  };
  for (const ResourceVector::Entry& e : spec->requests.entries()) {
    consider(e.id, e.amount / kMilliPerUnit);
  }
  consider(kGpu, spec->gpu.count);
  std::sort(spec->device_backed.begin(), spec->device_backed.end(),
            [](const DeviceBackedResource& a, const DeviceBackedResource& b) {
              return ResourceName(a.resource) < ResourceName(b.resource);
            });
}

std::string ExtendedRequestName(size_t index) {
  return std::string(kRequestPrefix) + std::to_string(index);
}

std::optional<size_t> ExtendedRequestIndex(std::string_view request) {
  if (!request.starts_with(kRequestPrefix)) return std::nullopt;
  const std::string_view digits = request.substr(kRequestPrefix.size());
  size_t index = 0;
  auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (error != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return index;
}

std::optional<ResourceClaim> ExtendedResourceClaim(const TaskSpec& spec, const Node& node) {
  std::optional<ResourceClaim> claim;
  for (size_t k = 0; k < spec.device_backed.size(); ++k) {
    const DeviceBackedResource& backed = spec.device_backed[k];
    if (!gantry::ServedByDra(backed.resource, node)) continue;
    if (!claim) {
      claim.emplace();
      claim->name_space = spec.namespace_;
      claim->name = std::string(kExtendedClaimInMemoryName);
      // The allocator derives share IDs from the UID: one per pod's spec is stable.
      claim->uid = spec.namespace_ + "/" + std::string(kExtendedClaimInMemoryName);
    }
    DeviceRequestSpec exactly;
    exactly.device_class_name = backed.device_class;
    exactly.allocation_mode = AllocationMode::kExactCount;
    exactly.count = backed.count;
    DeviceRequest request;
    request.name = ExtendedRequestName(k);
    request.exactly = std::move(exactly);
    claim->spec.requests.push_back(std::move(request));
  }
  return claim;
}

}  // namespace gantry::dra

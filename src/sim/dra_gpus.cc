#include "sim/dra_gpus.h"

#include <charconv>
#include <utility>

#include "model/node.h"

namespace gantry {
namespace {

constexpr Milli kCoresPerGpu = 1000;  // a GPU in thousandths, as kGpuMilliWhole

std::string Qualified(std::string_view id) {
  return std::string(kSimGpuDriver) + "/" + std::string(id);
}

// A CEL string literal (model names are plain, but a quote must not end the literal).
std::string CelString(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

dra::ResourceSlice SliceOf(const Node& node) {
  dra::ResourceSlice slice;
  slice.name = node.name + "-" + std::string(kSimGpuDriver);
  slice.driver = std::string(kSimGpuDriver);
  slice.pool.name = node.name;
  slice.pool.generation = 1;
  slice.pool.resource_slice_count = 1;
  slice.node_selection = dra::NodeSelection{};
  slice.node_selection->node_name = node.name;
  for (size_t i = 0; i < node.gpus.size(); ++i) {
    dra::Device device;
    device.name = "gpu-" + std::to_string(i);
    device.attributes[Qualified("index")] = static_cast<int64_t>(i);
    device.attributes[Qualified("productName")] = GpuModels().Name(node.gpus[i].model);
    dra::DeviceCapacity cores;
    cores.value = kCoresPerGpu * kMilliPerUnit;
    cores.bare_name = true;
    device.capacity[Qualified("cores")] = cores;
    device.allow_multiple_allocations = true;
    slice.devices.push_back(std::move(device));
  }
  return slice;
}

}  // namespace

PublishedGpus::PublishedGpus(const ClusterState& nodes) {
  std::vector<dra::ResourceSlice> slices;
  for (const Node& node : nodes.nodes()) {
    if (!node.removed && !node.gpus.empty()) slices.push_back(SliceOf(node));
  }
  dra::DeviceClass gpu_class;
  gpu_class.name = std::string(kSimGpuClass);
  gpu_class.selectors.push_back("device.driver == " + CelString(std::string(kSimGpuDriver)));
  std::vector<dra::DeviceClass> classes;
  classes.push_back(std::move(gpu_class));
  inventory_ = dra::Inventory(std::move(slices), std::move(classes));
}

Result<std::string> PublishedGpus::AddClaim(const std::string& name, const GpuRequest& gpu) {
  if (gpu.memory_mib > 0) {
    return Status::Invalid("claim " + name +
                           ": GPU memory requests are not published as DRA capacity");
  }
  std::string key = dra::ClaimKey(kSimClaimNamespace, name);
  if (claims_.count(key) > 0) return Status::Invalid("claim " + key + " is made twice");
  dra::DeviceRequestSpec spec;
  spec.device_class_name = std::string(kSimGpuClass);
  if (gpu.shared()) {
    spec.count = 1;
    spec.capacity_requests["cores"] = static_cast<Milli>(gpu.milli) * kMilliPerUnit;
  } else {
    spec.count = gpu.count;
  }
  if (!gpu.models.empty()) {
    std::string list;
    for (GpuModelId model : gpu.models) {
      list += (list.empty() ? "" : ", ") + CelString(GpuModels().Name(model));
    }
    spec.selectors.push_back("device.attributes[" + CelString(std::string(kSimGpuDriver)) +
                             "].productName in [" + list + "]");
  }
  dra::DeviceRequest request;
  request.name = "gpu";
  request.exactly = std::move(spec);
  dra::ResourceClaim claim;
  claim.name_space = std::string(kSimClaimNamespace);
  claim.name = name;
  claim.uid = "uid-" + name;
  claim.spec.requests.push_back(std::move(request));
  claims_.emplace(key, std::move(claim));
  return key;
}

int32_t PublishedGpus::GpuIndex(const Node& node, const dra::ResourceSlice& slice,
                                const dra::Device& device) const {
  if (slice.driver != kSimGpuDriver || slice.pool.name != node.name) return -1;
  auto it = device.attributes.find(Qualified("index"));
  if (it == device.attributes.end()) return -1;
  const int64_t* index = std::get_if<int64_t>(&it->second);
  if (index == nullptr || *index < 0 || *index >= static_cast<int64_t>(node.gpus.size())) {
    return -1;
  }
  return static_cast<int32_t>(*index);
}

Result<std::vector<int32_t>> PublishedGpus::GpusOf(const Node& node,
                                                   const dra::Allocation& allocation) const {
  std::vector<int32_t> gpus;
  for (const dra::AllocationResult& result : allocation.results) {
    int32_t index = -1;
    constexpr std::string_view kPrefix = "gpu-";
    if (result.driver == kSimGpuDriver && result.pool == node.name &&
        result.device.starts_with(kPrefix)) {
      const char* first = result.device.data() + kPrefix.size();
      const char* last = result.device.data() + result.device.size();
      auto [end, error] = std::from_chars(first, last, index);
      if (error != std::errc() || end != last || index >= static_cast<int32_t>(node.gpus.size())) {
        index = -1;
      }
    }
    if (index < 0) {
      return Status::Failed("device " + result.driver + "/" + result.pool + "/" + result.device +
                            " is none of node " + node.name + "'s GPUs");
    }
    gpus.push_back(index);
  }
  return gpus;
}

}  // namespace gantry

// A node's GPU devices (model/node.h): the share a task takes of one.
#include "model/node.h"

#include <algorithm>

#include "model/int128.h"

namespace gantry {

int32_t GpuShareByMemory(const GpuRequest& gpu, const GpuDevice& device) {
  // A memory request on a device of unknown memory cannot be sized: it takes the device.
  if (device.memory_mib <= 0) return kGpuMilliWhole;
  const auto by_memory = static_cast<int64_t>(std::min<Int128>(
      kGpuMilliWhole + 1,
      (static_cast<Int128>(gpu.memory_mib) * kGpuMilliWhole + device.memory_mib - 1) /
          device.memory_mib));
  const auto share = static_cast<int32_t>(
      std::max<int64_t>(gpu.milli, std::min<int64_t>(by_memory, kGpuMilliWhole)));
  return std::max(share, 1);
}

}  // namespace gantry

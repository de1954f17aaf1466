// The labels a GPU node of a real cluster carries, for the benchmarks' synthetic nodes:
// kubelet's well-known labels (a unique hostname), the cloud's instance type and
// topology, GPU feature discovery's nvidia.com/* labels (a per-node timestamp among them)
// and a few of node feature discovery's. A scheduler that tells nodes apart by every
// label sees each real node as its own kind; these make the benchmarks see that too.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace gantry::bench {

// Node `index` of a cluster of 8-GPU H100 machines spread over three zones of one region.
inline std::vector<std::pair<std::string, std::string>> RealisticNodeLabels(
    int index, const std::string& hostname) {
  static const char* const kZones[] = {"us-east-1a", "us-east-1b", "us-east-1c"};
  return {
      {"kubernetes.io/hostname", hostname},
      {"kubernetes.io/arch", "amd64"},
      {"kubernetes.io/os", "linux"},
      {"beta.kubernetes.io/arch", "amd64"},
      {"beta.kubernetes.io/os", "linux"},
      {"node.kubernetes.io/instance-type", "p5.48xlarge"},
      {"topology.kubernetes.io/region", "us-east-1"},
      {"topology.kubernetes.io/zone", kZones[index % 3]},
      {"nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"},
      {"nvidia.com/gpu.memory", "81559"},
      {"nvidia.com/gpu.count", "8"},
      {"nvidia.com/gpu.family", "hopper"},
      {"nvidia.com/gpu.machine", "p5.48xlarge"},
      {"nvidia.com/gpu.compute.major", "9"},
      {"nvidia.com/gpu.compute.minor", "0"},
      {"nvidia.com/cuda.driver.major", "535"},
      {"nvidia.com/cuda.driver.minor", "129"},
      {"nvidia.com/cuda.driver.rev", "03"},
      {"nvidia.com/cuda.runtime.major", "12"},
      {"nvidia.com/cuda.runtime.minor", "2"},
      {"nvidia.com/mig.capable", "true"},
      {"nvidia.com/mig.strategy", "single"},
      {"nvidia.com/gpu.present", "true"},
      {"nvidia.com/gfd.timestamp", std::to_string(1700000000 + index)},
      {"feature.node.kubernetes.io/cpu-cpuid.AVX512F", "true"},
      {"feature.node.kubernetes.io/cpu-model.vendor_id", "Intel"},
      {"feature.node.kubernetes.io/kernel-version.full", "5.15.0-1051-aws"},
      {"feature.node.kubernetes.io/pci-10de.present", "true"},
      {"feature.node.kubernetes.io/system-os_release.ID", "ubuntu"},
      {"feature.node.kubernetes.io/system-os_release.VERSION_ID", "22.04"},
  };
}

}  // namespace gantry::bench

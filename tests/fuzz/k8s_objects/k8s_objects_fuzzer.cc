// The Kubernetes object codecs (k8s/objects.h) on any JSON, as the informers hand it over:
// bytes -> nlohmann::json::parse (no exceptions) -> ParsePod, ParseNode, ParsePodGroup of
// both APIs, ParseQueue, ParsePriorityClass, ParseClaim, ParsePersistentVolume,
// ParseStorageClass, ParseService, ParseSpreadOwner of each kind, and ParseResourceList on
// the whole value.
//
// Checks (tests/fuzz/object_checks.h): refusals have a message; what is accepted keeps the
// limits (GPUs per pod and node, shares below one GPU, no negative amounts, a gang of at
// least 1, a queue weight of at least 1); a node read makes a consistent ClusterState;
// device lists read back as written.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>

#include "tests/fuzz/fuzz_check.h"
#include "tests/fuzz/object_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gantry;
  const nlohmann::json object = nlohmann::json::parse(data, data + size, nullptr, false);
  if (object.is_discarded()) return 0;
  fuzz::CheckObjectCodecs(object);
  ResourceVector resources;
  Status listed =
      k8s::ParseResourceList(object, "fuzz.resources", NameSource::kWorkload, &resources);
  if (listed.ok()) {
    fuzz::CheckNonNegative(resources, "fuzz.resources");
  } else {
    fuzz::CheckErrorNamesSource(listed, "fuzz.resources");
  }
  return 0;
}

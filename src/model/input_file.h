// The one way Gantry reads an input file (scenario, node or pod list, job CSV,
// configuration, manifest, kubeconfig, token): whole, and never more than
// kMaxInputFileBytes, however large the file, pipe or device. The only I/O under src/model,
// so that every layer above reads files alike; parsing is the callers'.
#pragma once

#include <cstdint>
#include <string>

#include "model/status.h"

namespace gantry {

// An error naming `source` unless `bytes` is within kMaxInputFileBytes.
Status CheckInputSize(int64_t bytes, const std::string& source);

// The file's bytes. Errors name the path: NotFound when it does not exist, IoError when it
// is a directory or cannot be read, Invalid when it is larger than the limit (a regular
// file is refused before a byte is read).
Result<std::string> ReadInputFile(const std::string& path);

}  // namespace gantry

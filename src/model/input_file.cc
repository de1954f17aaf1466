#include "model/input_file.h"

#include <filesystem>
#include <fstream>

#include "model/limits.h"

namespace gantry {

Status CheckInputSize(int64_t bytes, const std::string& source) {
  if (bytes > kMaxInputFileBytes) {
    return Status::Invalid(source + ": " + std::to_string(bytes) + " bytes is more than " +
                           std::to_string(kMaxInputFileBytes) +
                           " (1 GiB, the limit on an input file)");
  }
  return Status::Ok();
}

Result<std::string> ReadInputFile(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    return Status::NotFound(path + ": cannot open the file" + (ec ? ": " + ec.message() : ""));
  }
  if (std::filesystem::is_directory(status)) {
    return Status::IoError(path + ": is a directory, not a file");
  }
  if (std::filesystem::is_regular_file(status)) {
    const auto size = std::filesystem::file_size(path, ec);
    if (!ec) GANTRY_RETURN_IF_ERROR(CheckInputSize(static_cast<int64_t>(size), path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IoError(path + ": cannot open the file");
  // In pieces up to the limit: a pipe, a device or a growing file has no size to check.
  std::string text;
  char buffer[1 << 16];
  while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    GANTRY_RETURN_IF_ERROR(CheckInputSize(static_cast<int64_t>(text.size()), path));
  }
  if (in.bad()) return Status::IoError(path + ": cannot read the file");
  return text;
}

}  // namespace gantry

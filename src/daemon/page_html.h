// The live page, src/daemon/page/index.html, as built into the binary by CMake
// (cmake/embed_file.cmake): the daemon looks up no file at run time.
#pragma once

#include <string_view>

namespace gantry {

std::string_view PageHtml();

}  // namespace gantry

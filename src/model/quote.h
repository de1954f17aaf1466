// Quoting a value for an error message, so that messages about any input (a YAML field, a
// plugin argument, a label) show it alike and bounded.
#pragma once

#include <string>
#include <string_view>

namespace gantry {

// A value quoted for a message: "like this", cut to its first 64 bytes ("...", and the
// length) so that a 10 MB value does not make a 10 MB message; control bytes escaped.
std::string QuoteForMessage(std::string_view text);

}  // namespace gantry

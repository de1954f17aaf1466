// A 128-bit integer for exact intermediate products of 64-bit amounts (a * b / c).
#pragma once

namespace gantry {
__extension__ typedef __int128 Int128;  // __extension__: GCC's type, allowed under -Wpedantic
}  // namespace gantry

# Writes OUTPUT, a C++ file defining `std::string_view gantry::SYMBOL()` that returns the
# bytes of INPUT: files served by the daemon are built into it (no lookup at run time).
# cmake -DINPUT=file -DOUTPUT=file.cc -DSYMBOL=Name -P embed_file.cmake
file(READ "${INPUT}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x..,){24})" "\\1\n    " bytes "${bytes}")
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by cmake/embed_file.cmake: do not edit.\n"
  "#include <string_view>\n\n"
  "namespace gantry {\n"
  "namespace {\n"
  "constexpr unsigned char kBytes[] = {\n    ${bytes}0};\n"
  "}  // namespace\n\n"
  "std::string_view ${SYMBOL}() {\n"
  "  return {reinterpret_cast<const char*>(kBytes), sizeof kBytes - 1};\n"
  "}\n\n"
  "}  // namespace gantry\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUTPUT}.tmp")

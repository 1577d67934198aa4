//===- file_bytes.h - A whole file as bytes and back ------------*- C++ -*-===//
//
// The tests read a plan, its weights or an archive whole (to parse it, or to
// corrupt a copy of it) and write bytes of their own as a file.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TESTS_SUPPORT_FILE_BYTES_H
#define EMBER_TESTS_SUPPORT_FILE_BYTES_H

#include <fstream>
#include <iterator>
#include <string>

namespace ember::testing {

/// Every byte of the file at `path`; empty when it cannot be read.
inline std::string readFileBytes(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

/// Writes `bytes` as the whole file at `path` (replacing what was there).
inline void writeFileBytes(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

} // namespace ember::testing

#endif // EMBER_TESTS_SUPPORT_FILE_BYTES_H

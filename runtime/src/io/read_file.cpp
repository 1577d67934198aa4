//===- read_file.cpp - Reading whole input files --------------------------===//
#include "io/read_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/stat.h>

namespace ember::npy {

Result<std::string> readWholeFile(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT)
      return notFound("'" + path + "' does not exist");
    return invalidArgument("cannot open '" + path +
                           "': " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode))
    return invalidArgument("'" + path + "' is not a regular file");
  std::FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return invalidArgument("cannot open '" + path +
                           "': " + std::strerror(errno));
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t n = bytes.empty() ? 0 : std::fread(bytes.data(), 1, bytes.size(), f);
  std::fclose(f);
  if (n != bytes.size())
    return dataLoss("cannot read '" + path + "'");
  return bytes;
}

} // namespace ember::npy

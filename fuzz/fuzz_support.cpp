//===- fuzz_support.cpp - Helpers shared by Ember's fuzz targets ----------===//
#include "fuzz_support.h"

#include <filesystem>
#include <unistd.h>

namespace ember::fuzz {

namespace {
std::string makeScratchDir() {
  const char *env = std::getenv("TMPDIR");
  std::string base = env && *env ? env : "";
  if (base.empty())
    base = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
  std::string tmpl = base + "/ember_fuzz_XXXXXX";
  if (!::mkdtemp(tmpl.data()))
    fail("cannot create a scratch directory under " + base);
  return tmpl;
}

struct Scratch {
  std::string path = makeScratchDir();
  pid_t owner = ::getpid();
  ~Scratch() {
    // Forked children (none today) must not remove their parent's files.
    if (::getpid() != owner)
      return;
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};
} // namespace

const std::string &scratchDir() {
  static Scratch scratch;
  return scratch.path;
}

void writeFile(const std::string &path, const std::string &bytes) {
  std::FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    fail("cannot write " + path);
  size_t n = bytes.empty() ? 0 : std::fwrite(bytes.data(), 1, bytes.size(), f);
  if (std::fclose(f) != 0 || n != bytes.size())
    fail("cannot write " + path);
}

} // namespace ember::fuzz

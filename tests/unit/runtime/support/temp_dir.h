//===- temp_dir.h - A scratch directory for one test ------------*- C++ -*-===//
#ifndef EMBER_TESTS_TEMP_DIR_H
#define EMBER_TESTS_TEMP_DIR_H

#include <cstdlib>
#include <filesystem>
#include <string>

namespace ember::testing {

/// A fresh directory under $TMPDIR (or /tmp), removed with its contents.
class TempDir {
public:
  TempDir() {
    const char *base = std::getenv("TMPDIR");
    std::string tmpl =
        std::string(base && *base ? base : "/tmp") + "/ember_test_XXXXXX";
    char *made = ::mkdtemp(tmpl.data());
    path_ = made ? made : "";
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty())
      std::filesystem::remove_all(path_, ec);
  }
  const std::string &path() const { return path_; }
  std::string file(const std::string &name) const { return path_ + "/" + name; }

private:
  std::string path_;
};

} // namespace ember::testing

#endif // EMBER_TESTS_TEMP_DIR_H

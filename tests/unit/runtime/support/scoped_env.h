//===- scoped_env.h - An environment variable set for one scope -*- C++ -*-===//
#ifndef EMBER_TESTS_UNIT_RUNTIME_SUPPORT_SCOPED_ENV_H
#define EMBER_TESTS_UNIT_RUNTIME_SUPPORT_SCOPED_ENV_H

#include <cstdlib>
#include <string>

namespace ember::testing {

/// Sets `name` to `value` until the end of the scope, then restores what it
/// was (or unsets it).
class ScopedEnv {
public:
  ScopedEnv(const char *name, const std::string &value) : name_(name) {
    if (const char *old = std::getenv(name)) {
      old_ = old;
      hadOld_ = true;
    }
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (hadOld_)
      ::setenv(name_, old_.c_str(), 1);
    else
      ::unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
  const char *name_;
  std::string old_;
  bool hadOld_ = false;
};

} // namespace ember::testing

#endif // EMBER_TESTS_UNIT_RUNTIME_SUPPORT_SCOPED_ENV_H

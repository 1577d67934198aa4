//===- fuzz_support.h - Helpers shared by Ember's fuzz targets --*- C++ -*-===//
//
// A reader that takes bytes from the front of a fuzz input (every read past
// the end gives zeros, so any input is valid), a per-process scratch
// directory for the targets whose entry point reads files, and a check that
// aborts with a message (a finding) when an invariant does not hold.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_FUZZ_FUZZ_SUPPORT_H
#define EMBER_FUZZ_FUZZ_SUPPORT_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace ember::fuzz {

/// Bytes from the front of the input; zeros once it is used up.
class ByteReader {
public:
  ByteReader(const uint8_t *data, size_t size) : data_(data), size_(size) {}

  uint8_t u8() { return pos_ < size_ ? data_[pos_++] : 0; }
  uint32_t u32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i)
      v |= static_cast<uint32_t>(u8()) << (8 * i);
    return v;
  }
  uint64_t u64() {
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
      v |= static_cast<uint64_t>(u8()) << (8 * i);
    return v;
  }
  /// Up to n bytes (fewer at the end of the input).
  std::string bytes(size_t n) {
    n = n < remaining() ? n : remaining();
    std::string s(reinterpret_cast<const char *>(data_ + pos_), n);
    pos_ += n;
    return s;
  }
  std::string rest() { return bytes(remaining()); }
  size_t remaining() const { return size_ - pos_; }

private:
  const uint8_t *data_;
  size_t size_;
  size_t pos_ = 0;
};

/// A directory private to this process (under $TMPDIR, else /dev/shm, else
/// /tmp), removed at exit.
const std::string &scratchDir();

/// Writes `bytes` to `path` (replacing it); aborts when it cannot.
void writeFile(const std::string &path, const std::string &bytes);

/// A violated invariant: print and abort, so that libFuzzer reports it.
[[noreturn]] inline void fail(const std::string &message) {
  std::fprintf(stderr, "FUZZ INVARIANT VIOLATED: %s\n", message.c_str());
  std::fflush(stderr);
  std::abort();
}

#define EMBER_FUZZ_CHECK(cond, message)                                        \
  do {                                                                         \
    if (!(cond))                                                               \
      ::ember::fuzz::fail(std::string(#cond ": ") + (message));                \
  } while (0)

} // namespace ember::fuzz

#endif // EMBER_FUZZ_FUZZ_SUPPORT_H

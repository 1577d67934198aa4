//===- xxhash64.h - XXH64 checksum of weight files --------------*- C++ -*-===//
//
// A self-contained XXH64 (Yann Collet's xxHash, 64-bit variant, seed 0 by
// default), used for the file-level checksum of plan weight files. Streaming,
// so writers can hash as they write.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_PLAN_XXHASH64_H
#define EMBER_PLAN_XXHASH64_H

#include <cstddef>
#include <cstdint>

namespace ember {

class XxHash64 {
public:
  explicit XxHash64(uint64_t seed = 0);
  void update(const void *data, size_t size);
  uint64_t digest() const;

  static uint64_t hash(const void *data, size_t size, uint64_t seed = 0);

private:
  uint64_t v_[4];
  uint64_t seed_;
  uint64_t totalLen_ = 0;
  unsigned char buffer_[32];
  size_t bufferSize_ = 0;
};

} // namespace ember

#endif // EMBER_PLAN_XXHASH64_H

//===- xxhash64.cpp - XXH64 checksum --------------------------------------===//
#include "plan/xxhash64.h"

#include <cstring>

namespace ember {

namespace {
constexpr uint64_t kP1 = 0x9E3779B185EBCA87ULL;
constexpr uint64_t kP2 = 0xC2B2AE3D27D4EB4FULL;
constexpr uint64_t kP3 = 0x165667B19E3779F9ULL;
constexpr uint64_t kP4 = 0x85EBCA77C2B2AE63ULL;
constexpr uint64_t kP5 = 0x27D4EB2F165667C5ULL;

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
// Little-endian loads; the formats Ember writes are little-endian.
inline uint64_t read64(const unsigned char *p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint32_t read32(const unsigned char *p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t round(uint64_t acc, uint64_t input) {
  acc += input * kP2;
  acc = rotl(acc, 31);
  return acc * kP1;
}
inline uint64_t mergeRound(uint64_t acc, uint64_t val) {
  acc ^= round(0, val);
  return acc * kP1 + kP4;
}
} // namespace

XxHash64::XxHash64(uint64_t seed) : seed_(seed) {
  v_[0] = seed + kP1 + kP2;
  v_[1] = seed + kP2;
  v_[2] = seed;
  v_[3] = seed - kP1;
}

void XxHash64::update(const void *data, size_t size) {
  const unsigned char *p = static_cast<const unsigned char *>(data);
  totalLen_ += size;
  if (bufferSize_ + size < 32) {
    if (size)
      std::memcpy(buffer_ + bufferSize_, p, size);
    bufferSize_ += size;
    return;
  }
  if (bufferSize_) {
    size_t fill = 32 - bufferSize_;
    std::memcpy(buffer_ + bufferSize_, p, fill);
    for (int i = 0; i < 4; ++i)
      v_[i] = round(v_[i], read64(buffer_ + 8 * i));
    p += fill;
    size -= fill;
    bufferSize_ = 0;
  }
  while (size >= 32) {
    for (int i = 0; i < 4; ++i)
      v_[i] = round(v_[i], read64(p + 8 * i));
    p += 32;
    size -= 32;
  }
  if (size)
    std::memcpy(buffer_, p, size);
  bufferSize_ = size;
}

uint64_t XxHash64::digest() const {
  uint64_t h;
  if (totalLen_ >= 32) {
    h = rotl(v_[0], 1) + rotl(v_[1], 7) + rotl(v_[2], 12) + rotl(v_[3], 18);
    for (int i = 0; i < 4; ++i)
      h = mergeRound(h, v_[i]);
  } else {
    h = seed_ + kP5;
  }
  h += totalLen_;
  const unsigned char *p = buffer_;
  size_t len = bufferSize_;
  while (len >= 8) {
    h ^= round(0, read64(p));
    h = rotl(h, 27) * kP1 + kP4;
    p += 8;
    len -= 8;
  }
  if (len >= 4) {
    h ^= static_cast<uint64_t>(read32(p)) * kP1;
    h = rotl(h, 23) * kP2 + kP3;
    p += 4;
    len -= 4;
  }
  while (len > 0) {
    h ^= (*p) * kP5;
    h = rotl(h, 11) * kP1;
    ++p;
    --len;
  }
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  h ^= h >> 32;
  return h;
}

uint64_t XxHash64::hash(const void *data, size_t size, uint64_t seed) {
  XxHash64 h(seed);
  h.update(data, size);
  return h.digest();
}

} // namespace ember

//===- arena.cpp - Per-run memory of the executor -------------------------===//
#include "executor/arena.h"

#include <cstdlib>

namespace ember {

namespace {
class HostMemory final : public MemoryResource {
public:
  Result<void *> allocate(size_t bytes) override {
    void *p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p)
      return resourceExhausted("cannot allocate " + std::to_string(bytes) +
                               " bytes of host memory");
    return p;
  }
  void deallocate(void *p) override { std::free(p); }
  const char *name() const override { return "host"; }
};
} // namespace

MemoryResource &hostMemory() {
  static HostMemory memory;
  return memory;
}

size_t arenaSizeClass(size_t bytes) {
  size_t size = bytes < 64 ? 64 : (bytes + 63) / 64 * 64;
  if (size <= 4096)
    return size;
  size_t pow2 = 4096;
  while (pow2 < size)
    pow2 <<= 1;
  size_t step = pow2 / 8;
  return (size + step - 1) / step * step;
}

Arena::~Arena() {
  for (Block &b : blocks_)
    memory_->deallocate(b.data);
}

Result<int> Arena::allocate(size_t bytes) {
  if (bytes > limit_)
    return resourceExhausted(
        "cannot allocate " + std::to_string(bytes) +
        " bytes from the run arena: more than the limit of " +
        std::to_string(limit_) +
        " bytes per buffer (SessionOptions.maxTensorBytes, "
        "EMBER_MAX_TENSOR_BYTES)");
  // Best fit among the free blocks; remember the largest too small one.
  int best = -1, bestPos = -1, largestSmall = -1, largestSmallPos = -1;
  for (int pos = 0; pos < static_cast<int>(free_.size()); ++pos) {
    int id = free_[pos];
    size_t cap = blocks_[id].capacity;
    if (cap >= bytes) {
      if (best < 0 || cap < blocks_[best].capacity) {
        best = id;
        bestPos = pos;
      }
    } else if (largestSmall < 0 || cap > blocks_[largestSmall].capacity) {
      largestSmall = id;
      largestSmallPos = pos;
    }
  }
  if (best >= 0) {
    free_[bestPos] = free_.back();
    free_.pop_back();
    blocks_[best].refs = 1;
    return best;
  }
  size_t capacity = arenaSizeClass(bytes);
  auto allocated = memory_->allocate(capacity);
  if (!allocated.isOk())
    return allocated.status().withContext("growing the run arena (" +
                                          std::string(memory_->name()) + ")");
  void *p = *allocated;
  ++growths_;
  reservedBytes_ += static_cast<int64_t>(capacity);
  if (largestSmall >= 0) {
    // Grow a free block that is too small rather than keep both: the number
    // of blocks stays bounded by the peak number of live buffers.
    Block &b = blocks_[largestSmall];
    memory_->deallocate(b.data);
    reservedBytes_ -= static_cast<int64_t>(b.capacity);
    b.data = p;
    b.capacity = capacity;
    b.refs = 1;
    free_[largestSmallPos] = free_.back();
    free_.pop_back();
    return largestSmall;
  }
  blocks_.push_back({p, capacity, 1});
  if (free_.capacity() < blocks_.size())
    free_.reserve(blocks_.capacity());
  return static_cast<int>(blocks_.size()) - 1;
}

void Arena::release(int block) {
  Block &b = blocks_[block];
  if (b.refs > 0 && --b.refs == 0)
    free_.push_back(block);
}

void Arena::releaseAll() {
  free_.clear();
  for (int i = 0; i < static_cast<int>(blocks_.size()); ++i) {
    blocks_[i].refs = 0;
    free_.push_back(i);
  }
}

StaticArena::~StaticArena() {
  if (data_)
    memory_->deallocate(data_);
}

Status StaticArena::reserve(size_t bytes) {
  if (data_ || bytes == 0)
    return Status::ok();
  auto allocated = memory_->allocate(bytes);
  if (!allocated.isOk())
    return allocated.status().withContext(
        "allocating the plan's static arena of " + std::to_string(bytes) +
        " bytes (" + memory_->name() + ")");
  data_ = static_cast<char *>(*allocated);
  bytes_ = bytes;
  return Status::ok();
}

int Arena::findBlock(const void *p) const {
  const char *c = static_cast<const char *>(p);
  for (int i = 0; i < static_cast<int>(blocks_.size()); ++i) {
    const char *base = static_cast<const char *>(blocks_[i].data);
    if (blocks_[i].refs > 0 && c >= base && c < base + blocks_[i].capacity)
      return i;
  }
  return -1;
}

} // namespace ember

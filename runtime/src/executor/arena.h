//===- arena.h - Per-run memory of the executor -----------------*- C++ -*-===//
//
// The memory plan of a run: slot buffers and kernel scratch come from blocks
// that the arena keeps across runs. A block is returned to the free list when
// the last slot using it dies (liveness computed at load), so later
// instructions reuse it. Allocation is best fit over the free blocks; only
// when none is large enough does the arena call the system allocator (a
// "growth"). A run with the same shapes as an earlier run on the same arena
// therefore allocates nothing.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_EXECUTOR_ARENA_H
#define EMBER_EXECUTOR_ARENA_H

#include "ember/status.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ember {

/// Where an arena's memory comes from: the host heap (default) or a device
/// (the CUDA backend's cudaMalloc resource). Blocks are 64-byte aligned.
class MemoryResource {
public:
  virtual ~MemoryResource() = default;
  virtual Result<void *> allocate(size_t bytes) = 0;
  virtual void deallocate(void *p) = 0;
  /// "host", "cuda:0": for messages.
  virtual const char *name() const = 0;
};

/// The host heap (std::aligned_alloc).
MemoryResource &hostMemory();

class Arena {
public:
  explicit Arena(MemoryResource &memory = hostMemory()) : memory_(&memory) {}
  ~Arena();
  Arena(const Arena &) = delete;
  Arena &operator=(const Arena &) = delete;

  /// A block of at least `bytes` (64-byte aligned) with one reference;
  /// ResourceExhausted above the limit (SessionOptions::maxTensorBytes).
  Result<int> allocate(size_t bytes);
  void setLimit(size_t bytes) { limit_ = bytes; }
  size_t limit() const { return limit_; }
  void *data(int block) const { return blocks_[block].data; }
  size_t capacity(int block) const { return blocks_[block].capacity; }
  void retain(int block) { ++blocks_[block].refs; }
  /// Drops a reference; the block is free again at zero.
  void release(int block);
  /// Frees every block for reuse (end of a run).
  void releaseAll();
  /// The block whose memory contains p, or -1.
  int findBlock(const void *p) const;

  int64_t growths() const { return growths_; }
  int64_t reservedBytes() const { return reservedBytes_; }
  int numBlocks() const { return static_cast<int>(blocks_.size()); }

private:
  struct Block {
    void *data = nullptr;
    size_t capacity = 0;
    int refs = 0;
  };
  MemoryResource *memory_;
  size_t limit_ = size_t{1} << 36;
  std::vector<Block> blocks_;
  std::vector<int> free_;
  int64_t growths_ = 0;
  int64_t reservedBytes_ = 0;
};

/// The compiler-planned part of a run's memory: one 64-byte aligned block,
/// allocated on the first run and kept, in which every slot with an arena
/// offset lives at that fixed offset (no allocator work per slot).
class StaticArena {
public:
  explicit StaticArena(MemoryResource &memory = hostMemory())
      : memory_(&memory) {}
  ~StaticArena();
  StaticArena(const StaticArena &) = delete;
  StaticArena &operator=(const StaticArena &) = delete;

  /// Allocates `bytes` (a multiple of 64) unless already done.
  Status reserve(size_t bytes);
  char *data() const { return data_; }
  size_t bytes() const { return bytes_; }
  bool contains(const void *p) const {
    const char *c = static_cast<const char *>(p);
    return data_ && c >= data_ && c < data_ + bytes_;
  }

private:
  MemoryResource *memory_;
  char *data_ = nullptr;
  size_t bytes_ = 0;
};

/// Rounds a request up to a size class: multiples of 64 bytes, and above
/// 4 KiB multiples of an eighth of the next power of two, so that
/// batch-to-batch variation reuses blocks.
size_t arenaSizeClass(size_t bytes);

} // namespace ember

#endif // EMBER_EXECUTOR_ARENA_H

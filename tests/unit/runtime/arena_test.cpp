//===- arena_test.cpp - The executor's run arena --------------------------===//
#include "executor/arena.h"

#include <gtest/gtest.h>

#include <cstdint>

using namespace ember;

TEST(Arena, SizeClasses) {
  EXPECT_EQ(arenaSizeClass(0), 64u);
  EXPECT_EQ(arenaSizeClass(1), 64u);
  EXPECT_EQ(arenaSizeClass(65), 128u);
  EXPECT_EQ(arenaSizeClass(4096), 4096u);
  EXPECT_EQ(arenaSizeClass(4097), 4096u + 1024u); // eighths of 8192
  EXPECT_EQ(arenaSizeClass(1000000), 1048576u);   // eighths of 2^20: 8 * 131072
  for (size_t n : {size_t{7}, size_t{5000}, size_t{123457}})
    EXPECT_GE(arenaSizeClass(n), n);
}

TEST(Arena, ReusesReleasedBlocksBestFit) {
  Arena arena;
  auto a = arena.allocate(1000), b = arena.allocate(100);
  ASSERT_TRUE(a.isOk() && b.isOk());
  EXPECT_NE(*a, *b);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(arena.data(*a)) % 64, 0u);
  EXPECT_EQ(arena.growths(), 2);
  arena.release(*a);
  arena.release(*b);
  auto c = arena.allocate(90); // best fit: the 128-byte block, not the 1024 one
  ASSERT_TRUE(c.isOk());
  EXPECT_EQ(*c, *b);
  auto d = arena.allocate(900);
  ASSERT_TRUE(d.isOk());
  EXPECT_EQ(*d, *a);
  EXPECT_EQ(arena.growths(), 2);
}

TEST(Arena, RefCountsKeepAliasedBlocks) {
  Arena arena;
  int a = *arena.allocate(256);
  arena.retain(a);
  arena.release(a);
  EXPECT_EQ(arena.findBlock(static_cast<char *>(arena.data(a)) + 10), a);
  int b = *arena.allocate(256); // a is still referenced
  EXPECT_NE(a, b);
  arena.release(a);
  EXPECT_EQ(arena.findBlock(arena.data(a)), -1); // free blocks are not found
  EXPECT_EQ(*arena.allocate(256), a);
}

TEST(Arena, GrowsATooSmallFreeBlockInsteadOfAddingOne) {
  Arena arena;
  int a = *arena.allocate(64);
  arena.release(a);
  int b = *arena.allocate(10000);
  EXPECT_EQ(a, b); // the block was replaced by a larger one
  EXPECT_EQ(arena.numBlocks(), 1);
  EXPECT_GE(arena.capacity(b), 10000u);
  EXPECT_EQ(arena.growths(), 2);
  arena.releaseAll();
  EXPECT_EQ(*arena.allocate(5000), b);
  EXPECT_EQ(arena.growths(), 2);
}

TEST(Arena, RefusesAbsurdSizes) {
  Arena arena;
  auto r = arena.allocate(size_t{1} << 60);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted);
}

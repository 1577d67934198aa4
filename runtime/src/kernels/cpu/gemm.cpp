//===- gemm.cpp - float32 GEMM with a fused bias/activation epilogue ------===//
#include "kernels/cpu/gemm.h"

#include "kernels/cpu/blas_core.h"

#include "threading/thread_pool.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <functional>
#include <mutex>

namespace ember::cpu {
namespace {

std::atomic<GemmThreading> threadingMode{GemmThreading::kRuntimePool};

/// Sets OpenBLAS's thread count when it differs from the last value set.
void setOpenBlasThreads(int threads) {
  static std::atomic<int> current{-1};
  static std::mutex m;
  if (current.load(std::memory_order_acquire) == threads)
    return;
  std::lock_guard<std::mutex> lock(m);
  if (current.load(std::memory_order_relaxed) != threads) {
    openblas_set_num_threads(threads);
    current.store(threads, std::memory_order_release);
  }
}

/// Bias and activation over rows [r0, r1) and columns [c0, c1) of C.
void epilogue(const GemmArgs &g, int64_t r0, int64_t r1, int64_t c0,
              int64_t c1) {
  if (!g.bias && g.activation == Activation::kNone)
    return;
  for (int64_t r = r0; r < r1; ++r) {
    float *row = g.c + r * g.ldc + c0;
    int64_t n = c1 - c0;
    if (g.bias) {
      const float *bias = g.bias + c0;
      for (int64_t j = 0; j < n; ++j)
        row[j] += bias[j];
    }
    applyActivation(g.activation, row, n);
  }
}

/// GEMM of rows [r0, r1) and columns [c0, c1) on the calling thread.
void gemmBlock(const GemmArgs &g, int64_t r0, int64_t r1, int64_t c0,
               int64_t c1) {
  int64_t m = r1 - r0, n = c1 - c0;
  if (m <= 0 || n <= 0)
    return;
  float *c = g.c + r0 * g.ldc + c0;
  if (g.k == 0) {
    for (int64_t r = 0; r < m; ++r)
      std::fill(c + r * g.ldc, c + r * g.ldc + n, 0.f);
  } else {
    const float *b = g.transB ? g.b + c0 * g.ldb : g.b + c0;
    cblas_sgemm(CblasRowMajor, CblasNoTrans,
                g.transB ? CblasTrans : CblasNoTrans, static_cast<blasint>(m),
                static_cast<blasint>(n), static_cast<blasint>(g.k), 1.f,
                g.a + r0 * g.lda, static_cast<blasint>(g.lda), b,
                static_cast<blasint>(g.ldb), 0.f, c,
                static_cast<blasint>(g.ldc));
  }
  epilogue(g, r0, r1, c0, c1);
}

} // namespace

void setGemmThreading(GemmThreading mode) { threadingMode.store(mode); }
GemmThreading gemmThreading() { return threadingMode.load(); }

void runGemm(ThreadPool *pool, const GemmArgs &g) {
  if (g.m <= 0 || g.n <= 0)
    return;
  ensureBlasCoreFitsCpu();
  int threads = pool ? pool->size() : 1;
  double flops = 2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) *
                 static_cast<double>(std::max<int64_t>(g.k, 1));
  // Below ~1 MFLOP the fork/join costs more than it saves.
  bool parallel = threads > 1 && flops >= 1e6;

  if (gemmThreading() == GemmThreading::kOpenBlas) {
    setOpenBlasThreads(parallel ? threads : 1);
    gemmBlock(g, 0, g.m, 0, g.n); // epilogue on the calling thread
    return;
  }
  setOpenBlasThreads(1);
  // C is cut into blocks whose sizes depend on the shape only, never on the
  // thread count, so 1 and N threads give bit-identical results (OpenBLAS's
  // result for a row depends on the block it is computed in). Row blocks of
  // 32..256 rows (about 16 of them); when m is small, column blocks.
  constexpr int64_t kTargetBlocks = 16;
  auto roundUp = [](int64_t v, int64_t to) { return (v + to - 1) / to * to; };
  if (g.m > 32) {
    int64_t rows = std::clamp<int64_t>(
        roundUp((g.m + kTargetBlocks - 1) / kTargetBlocks, 8), 32, 256);
    int64_t blocks = (g.m + rows - 1) / rows;
    auto block = [&g, rows](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b)
        gemmBlock(g, b * rows, std::min(g.m, (b + 1) * rows), 0, g.n);
    };
    if (!parallel) {
      block(0, blocks);
      return;
    }
    std::function<void(int64_t, int64_t)> fn = block;
    pool->parallelFor(0, blocks, 1, fn);
    return;
  }
  int64_t cols = std::clamp<int64_t>(
      roundUp((g.n + kTargetBlocks - 1) / kTargetBlocks, 16), 64, 1024);
  int64_t blocks = (g.n + cols - 1) / cols;
  auto block = [&g, cols](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b)
      gemmBlock(g, 0, g.m, b * cols, std::min(g.n, (b + 1) * cols));
  };
  if (!parallel) {
    block(0, blocks);
    return;
  }
  std::function<void(int64_t, int64_t)> fn = block;
  pool->parallelFor(0, blocks, 1, fn);
}

} // namespace ember::cpu

//===- gemm_lt.cpp - float32 (batched) GEMM through cuBLASLt --------------===//
#include "cuda/dense/gemm_lt.h"

#include "cuda/blas_lt.h"
#include "cuda/cuda_status.h"
#include "cuda/dense/dense_launch.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace ember::cuda::dense {
namespace {

/// Destroys the cuBLASLt descriptors of one call.
struct LtDescriptors {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~LtDescriptors() {
    if (pref)
      cublasLtMatmulPreferenceDestroy(pref);
    if (c)
      cublasLtMatrixLayoutDestroy(c);
    if (b)
      cublasLtMatrixLayoutDestroy(b);
    if (a)
      cublasLtMatrixLayoutDestroy(a);
    if (op)
      cublasLtMatmulDescDestroy(op);
  }
};

using AlgoKey = std::array<int64_t, 20>;
constexpr size_t kMaxCachedAlgos = 4096;

struct AlgoCache {
  std::mutex mu;
  std::map<AlgoKey, cublasLtMatmulAlgo_t> algos;
};

AlgoCache &algoCache() {
  static AlgoCache *cache = new AlgoCache(); // never destroyed (exit order)
  return *cache;
}

/// The largest power of two (<= 256) dividing the address and the batch
/// stride in bytes: what cuBLASLt may assume about every batch's pointer.
uint32_t alignmentOf(const void *p, int64_t strideElements) {
  uint64_t v = reinterpret_cast<uintptr_t>(p) |
               static_cast<uint64_t>(strideElements) * sizeof(float) | 256u;
  return static_cast<uint32_t>(v & (~v + 1));
}

Status layout(cublasLtMatrixLayout_t *out, uint64_t rows, uint64_t cols,
              int64_t ld, int32_t batch, int64_t stride) {
  EMBER_RETURN_IF_ERROR(
      cublasStatus(cublasLtMatrixLayoutCreate(out, CUDA_R_32F, rows, cols, ld),
                   "cublasLtMatrixLayoutCreate"));
  if (batch > 1) {
    EMBER_RETURN_IF_ERROR(cublasStatus(
        cublasLtMatrixLayoutSetAttribute(
            *out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch)),
        "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)"));
    EMBER_RETURN_IF_ERROR(
        cublasStatus(cublasLtMatrixLayoutSetAttribute(
                         *out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                         &stride, sizeof(stride)),
                     "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)"));
  }
  return Status::ok();
}

/// One cuBLASLt call for `batch` (<= INT32_MAX) matrices.
Status ltCall(const KernelEnv &env, const LtGemm &g, int32_t batch,
              const float *a, const float *b, float *c,
              cublasLtEpilogue_t epilogue, const std::string &what) {
  BlasLt &blas = *env.blas;
  bool tf32 = tf32Enabled();
  LtDescriptors d;
  EMBER_RETURN_IF_ERROR(cublasStatus(
      cublasLtMatmulDescCreate(
          &d.op, tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
          CUDA_R_32F),
      what + ": cublasLtMatmulDescCreate"));
  // Column-major view: D'[n, m] = op(B')[n, k] · A'[k, m], where B' is the
  // row-major B buffer and A' the row-major A buffer.
  cublasOperation_t opB = describeLtCall(g).transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opA = CUBLAS_OP_N;
  EMBER_RETURN_IF_ERROR(
      cublasStatus(cublasLtMatmulDescSetAttribute(
                       d.op, CUBLASLT_MATMUL_DESC_TRANSA, &opB, sizeof(opB)),
                   what + ": cublasLtMatmulDescSetAttribute(TRANSA)"));
  EMBER_RETURN_IF_ERROR(
      cublasStatus(cublasLtMatmulDescSetAttribute(
                       d.op, CUBLASLT_MATMUL_DESC_TRANSB, &opA, sizeof(opA)),
                   what + ": cublasLtMatmulDescSetAttribute(TRANSB)"));
  EMBER_RETURN_IF_ERROR(cublasStatus(
      cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                     &epilogue, sizeof(epilogue)),
      what + ": cublasLtMatmulDescSetAttribute(EPILOGUE)"));
  if (g.bias) {
    const void *bias = g.bias;
    EMBER_RETURN_IF_ERROR(cublasStatus(
        cublasLtMatmulDescSetAttribute(d.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                       &bias, sizeof(bias)),
        what + ": cublasLtMatmulDescSetAttribute(BIAS_POINTER)"));
  }
  LtCallShape shape = describeLtCall(g);
  EMBER_RETURN_IF_ERROR(layout(&d.a, shape.a.rows, shape.a.cols, shape.a.ld,
                               batch, shape.a.stride));
  EMBER_RETURN_IF_ERROR(layout(&d.b, shape.b.rows, shape.b.cols, shape.b.ld,
                               batch, shape.b.stride));
  EMBER_RETURN_IF_ERROR(layout(&d.c, shape.d.rows, shape.d.cols, shape.d.ld,
                               batch, shape.d.stride));

  uint32_t alignB = alignmentOf(b, g.strideB),
           alignA = alignmentOf(a, g.strideA),
           alignC = alignmentOf(c, g.strideC);
  AlgoKey key = {env.device,
                 g.m,
                 g.n,
                 g.k,
                 g.lda,
                 g.ldb,
                 g.ldc,
                 g.transB,
                 batch,
                 g.strideA,
                 g.strideB,
                 g.strideC,
                 epilogue,
                 tf32,
                 alignA,
                 alignB,
                 alignC,
                 g.bias ? int64_t(alignmentOf(g.bias, 0)) : 0,
                 static_cast<int64_t>(blas.workspaceBytes()),
                 0};
  cublasLtMatmulAlgo_t algo;
  bool cached = false;
  {
    AlgoCache &cache = algoCache();
    std::lock_guard<std::mutex> lock(cache.mu);
    auto it = cache.algos.find(key);
    if (it != cache.algos.end()) {
      algo = it->second;
      cached = true;
    }
  }
  if (!cached) {
    EMBER_RETURN_IF_ERROR(
        cublasStatus(cublasLtMatmulPreferenceCreate(&d.pref),
                     what + ": cublasLtMatmulPreferenceCreate"));
    uint64_t ws = blas.workspaceBytes();
    EMBER_RETURN_IF_ERROR(cublasStatus(
        cublasLtMatmulPreferenceSetAttribute(
            d.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)),
        what + ": cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)"));
    struct {
      cublasLtMatmulPreferenceAttributes_t attr;
      uint32_t value;
    } aligns[] = {{CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignB},
                  {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignA},
                  {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignC},
                  {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignC}};
    for (auto &al : aligns)
      EMBER_RETURN_IF_ERROR(cublasStatus(
          cublasLtMatmulPreferenceSetAttribute(d.pref, al.attr, &al.value,
                                               sizeof(al.value)),
          what + ": cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT)"));
    cublasLtMatmulHeuristicResult_t result;
    std::memset(&result, 0, sizeof(result));
    int returned = 0;
    EMBER_RETURN_IF_ERROR(cublasStatus(
        cublasLtMatmulAlgoGetHeuristic(blas.handle(), d.op, d.a, d.b, d.c, d.c,
                                       d.pref, 1, &result, &returned),
        what + ": cublasLtMatmulAlgoGetHeuristic"));
    if (returned == 0)
      return unimplemented(
          what + ": cuBLASLt has no algorithm for [" + std::to_string(g.m) +
          ", " + std::to_string(g.k) + "] x [" + std::to_string(g.k) + ", " +
          std::to_string(g.n) + "] (batch " + std::to_string(batch) + ")");
    algo = result.algo;
    AlgoCache &cache = algoCache();
    std::lock_guard<std::mutex> lock(cache.mu);
    if (cache.algos.size() >= kMaxCachedAlgos) // e.g. many batch sizes
      cache.algos.clear();
    cache.algos.emplace(key, algo);
  }
  const float alpha = 1.f, beta = 0.f;
  return cublasStatus(cublasLtMatmul(blas.handle(), d.op, &alpha, b, d.a, a,
                                     d.b, &beta, c, d.c, c, d.c, &algo,
                                     blas.workspace(), blas.workspaceBytes(),
                                     env.stream),
                      what + ": cublasLtMatmul");
}

/// The batches in calls of at most INT32_MAX; a batch with a shared operand
/// (stride 0) that cuBLASLt has no algorithm for runs matrix by matrix.
Status runBatches(const KernelEnv &env, const LtGemm &g,
                  cublasLtEpilogue_t epilogue, const std::string &what) {
  for (int64_t done = 0; done < g.batch;) {
    int32_t count =
        static_cast<int32_t>(std::min<int64_t>(g.batch - done, INT32_MAX));
    Status s =
        ltCall(env, g, count, g.a + done * g.strideA, g.b + done * g.strideB,
               g.c + done * g.strideC, epilogue, what);
    bool refused = s.code() == StatusCode::kUnimplemented ||
                   s.code() == StatusCode::kInvalidArgument;
    if (refused && count > 1 && (g.strideA == 0 || g.strideB == 0)) {
      for (int64_t i = done; i < done + count; ++i)
        EMBER_RETURN_IF_ERROR(ltCall(env, g, 1, g.a + i * g.strideA,
                                     g.b + i * g.strideB, g.c + i * g.strideC,
                                     epilogue, what));
    } else {
      EMBER_RETURN_IF_ERROR(s);
    }
    done += count;
  }
  return Status::ok();
}

} // namespace

LtCallShape describeLtCall(const LtGemm &g) {
  uint64_t m = static_cast<uint64_t>(g.m), n = static_cast<uint64_t>(g.n),
           k = static_cast<uint64_t>(g.k);
  LtCallShape s;
  s.transA = g.transB;
  // g.b row-major [k, n] is column-major [n, k]; with transB it is [n, k]
  // row-major = column-major [k, n], transposed by cuBLASLt.
  s.a = g.transB ? LtMatrix{k, n, g.ldb, g.strideB}
                 : LtMatrix{n, k, g.ldb, g.strideB};
  s.b = LtMatrix{k, m, g.lda, g.strideA}; // g.a row-major [m, k]
  s.d = LtMatrix{n, m, g.ldc, g.strideC}; // g.c row-major [m, n]
  return s;
}

std::vector<LtGemm> planBroadcastGemm(const cpu::BroadcastLayout &batches,
                                      int64_t numBatches, const float *a,
                                      const float *b, float *c, int64_t m,
                                      int64_t n, int64_t k) {
  std::vector<LtGemm> calls;
  if (numBatches == 0 || m == 0 || n == 0)
    return calls;
  LtGemm g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.lda = k;
  g.ldb = n;
  g.ldc = n;
  int last = batches.rank - 1;
  bool bShared = true, aFull = true;
  for (int i = 0; i < batches.rank; ++i) {
    bShared = bShared && (batches.strides[1][i] == 0 || batches.dims[i] == 1);
    aFull = aFull && (batches.strides[0][i] != 0 || batches.dims[i] == 1);
  }
  if (bShared && aFull && batches.rank == 1) {
    // a's batches are contiguous [numBatches * m, k]: one GEMM.
    g.m = numBatches * m;
    g.a = a;
    g.b = b;
    g.c = c;
    calls.push_back(g);
    return calls;
  }
  int64_t inner = batches.inner(), rows = batches.rows();
  g.batch = inner;
  g.strideA = batches.strides[0][last] * m * k;
  g.strideB = batches.strides[1][last] * k * n;
  g.strideC = m * n;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t off[cpu::kMaxBroadcastOperands];
    batches.rowOffsets(r, off);
    g.a = a + off[0] * m * k;
    g.b = b + off[1] * k * n;
    g.c = c + r * inner * m * n;
    calls.push_back(g);
  }
  return calls;
}

LtGemm linearGemm(int64_t m, int64_t n, int64_t k, bool transposeWeight,
                  const float *x, const float *w, const float *bias, float *y,
                  int activation) {
  LtGemm g;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a = x;
  g.lda = k > 0 ? k : 1;
  g.b = w;
  g.ldb = transposeWeight ? (k > 0 ? k : 1) : (n > 0 ? n : 1);
  g.transB = transposeWeight;
  g.c = y;
  g.ldc = n;
  g.bias = bias;
  g.activation = activation;
  return g;
}

bool tf32Enabled() {
  static const bool enabled = [] {
    const char *v = std::getenv("EMBER_CUDA_TF32");
    return v && std::strcmp(v, "1") == 0;
  }();
  return enabled;
}

Status runLtGemm(const KernelEnv &env, const LtGemm &g, const char *what) {
  if (g.m <= 0 || g.n <= 0 || g.batch <= 0)
    return Status::ok();
  std::string name(what);
  int64_t total = g.batch * g.m * g.n; // c is [batch, m, n] with ldc == n
  if (g.k <= 0) {
    // No products: C = act(0 + bias).
    EMBER_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(
        g.c, 0, static_cast<size_t>(total) * sizeof(float), env.stream));
    if (g.bias || g.activation != kActNone)
      return launchBiasActivation(env, g.c, g.bias, g.n, g.activation, total);
    return Status::ok();
  }
  if (!env.blas)
    return failedPrecondition(name + ": the session has no cuBLASLt handle");
  constexpr int64_t kMaxDim = INT32_MAX;
  if (g.n > kMaxDim || g.k > kMaxDim)
    return unimplemented(name + ": a GEMM with N = " + std::to_string(g.n) +
                         " and K = " + std::to_string(g.k) +
                         " exceeds cuBLASLt's int32 dims");
  if (g.m > kMaxDim) {
    if (g.batch != 1)
      return unimplemented(name +
                           ": a batched GEMM with M = " + std::to_string(g.m) +
                           " exceeds cuBLASLt's int32 dims");
    // Rows are independent: run them in blocks.
    constexpr int64_t kRows = int64_t(1) << 30;
    for (int64_t row = 0; row < g.m; row += kRows) {
      LtGemm part = g;
      part.m = std::min(kRows, g.m - row);
      part.a = g.a + row * g.lda;
      part.c = g.c + row * g.ldc;
      EMBER_RETURN_IF_ERROR(runLtGemm(env, part, what));
    }
    return Status::ok();
  }
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  bool relu = g.activation == kActRelu;
  if (g.bias)
    epilogue = relu ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_BIAS;
  else if (relu)
    epilogue = CUBLASLT_EPILOGUE_RELU;
  Status s = runBatches(env, g, epilogue, name);
  if (s.code() == StatusCode::kUnimplemented &&
      epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
    // No algorithm with this epilogue: plain GEMM, then bias + activation.
    EMBER_RETURN_IF_ERROR(runBatches(env, g, CUBLASLT_EPILOGUE_DEFAULT, name));
    return launchBiasActivation(env, g.c, g.bias, g.n, g.activation, total);
  }
  EMBER_RETURN_IF_ERROR(s);
  if (g.activation == kActSigmoid || g.activation == kActTanh)
    return launchBiasActivation(env, g.c, nullptr, g.n, g.activation, total);
  return Status::ok();
}

} // namespace ember::cuda::dense

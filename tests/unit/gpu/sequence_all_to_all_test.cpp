//===- sequence_all_to_all_test.cpp - sequence_all_to_all on CUDA ---------===//
//
// On one GPU: the CUDA kernel as a group of one (device copies, no NCCL)
// against the CPU kernel, bit for bit (float32/float16/bfloat16 rows,
// int32/int64 lengths, empty batches, many rows), and the error paths with
// the CPU's codes and messages. With two or more GPUs: the test re-runs
// itself as one process per GPU (SequenceNcclWorker.Run) that runs the CPU
// kernel over Gloo and the CUDA kernel over NCCL on the same inputs
// (uneven batches, key_splits with zeros) and compares them. Without a GPU
// every test skips and says why.
//
//===----------------------------------------------------------------------===//
#include "cuda_kernel_runner.h"
#include "rank_processes.h"

#include "../runtime/support/test_kernel_context.h"
#include "comm/collective_info.h"
#include "comm/comm_options.h"
#include "comm/nccl/nccl_communicator.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>

using namespace ember;
using namespace ember::testing;

namespace {

constexpr const char *kKernel = "sequence_all_to_all";

class CollectiveContext : public TestKernelContext {
public:
  CollectiveContext(const CollectiveInfo *info, Communicator *comm)
      : info_(info), comm_(comm) {}
  const CollectiveInfo *collective() const override { return info_; }
  Communicator *communicator() const override { return comm_; }

private:
  const CollectiveInfo *info_;
  Communicator *comm_;
};

/// Runs the kernel on the CPU and on the GPU (as a member of `info`'s group
/// when given) and expects the same status and bit-identical outputs.
void expectSameOnBothBackends(const Tensor &rows, const Tensor &lengths,
                              const std::vector<int64_t> &splits,
                              const CollectiveInfo *info = nullptr,
                              Communicator *host = nullptr,
                              NcclCommunicator *nccl = nullptr) {
  CollectiveContext cpu(info, host);
  cpu.addInput(rows).addInput(lengths).setNumOutputs(1);
  cpu.attrs().set("key_splits", splits);
  Status cs = runKernel(kKernel, cpu);

  CudaKernelRunner gpu;
  gpu.addInput(rows).addInput(lengths).setNumOutputs(1);
  gpu.attrs().set("key_splits", splits);
  if (info)
    gpu.setCollective(info, host, nccl);
  Status gs = gpu.run(kKernel);
  ASSERT_EQ(cs.code(), gs.code())
      << "cpu: " << cs.toString() << "\ngpu: " << gs.toString();
  if (!cs.isOk()) {
    EXPECT_EQ(cs.message(), gs.message());
    return;
  }
  const Tensor &a = cpu.output(0), &b = gpu.output(0);
  ASSERT_EQ(a.dtype(), b.dtype());
  ASSERT_EQ(a.shape(), b.shape());
  EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.nbytes())) << "outputs differ";
}

/// Key-major lengths [keys * batch] (some empty bags).
Tensor randomLengths(std::mt19937 &rng, int64_t keys, int64_t batch,
                     bool is64) {
  Tensor l =
      *Tensor::allocate(is64 ? DType::kInt64 : DType::kInt32, {keys * batch});
  for (int64_t i = 0; i < keys * batch; ++i) {
    int64_t v = rng() % 3 == 0 ? 0 : rng() % 6;
    if (is64)
      l.data<int64_t>()[i] = v;
    else
      l.data<int32_t>()[i] = static_cast<int32_t>(v);
  }
  return l;
}

int64_t lengthAt(const Tensor &l, int64_t i) {
  return l.dtype() == DType::kInt64 ? l.data<int64_t>()[i]
                                    : l.data<int32_t>()[i];
}

/// Sum of lengths over keys [first, first + count) (batch bags each).
int64_t sumKeys(const Tensor &l, int64_t batch, int64_t first, int64_t count) {
  int64_t s = 0;
  for (int64_t i = first * batch; i < (first + count) * batch; ++i)
    s += lengthAt(l, i);
  return s;
}

/// Random bytes of `dtype` [n, dims...].
Tensor randomRows(std::mt19937 &rng, DType dtype, int64_t n,
                  std::vector<int64_t> dims) {
  dims.insert(dims.begin(), n);
  Tensor t =
      *Tensor::allocate(dtype, *Shape::fromDims(dims.data(), dims.size()));
  uint8_t *p = static_cast<uint8_t *>(t.data());
  for (size_t i = 0; i < t.nbytes(); ++i)
    p[i] = static_cast<uint8_t>(rng());
  return t;
}

// --- a group of one (one GPU, no NCCL) ---------------------------------------

TEST(CudaSequenceAllToAll, GroupOfOneMatchesCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  std::mt19937 rng(1);
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kBFloat16})
    for (bool is64 : {false, true})
      for (int64_t batch : {int64_t{7}, int64_t{1}, int64_t{0}}) {
        SCOPED_TRACE(std::string(dtypeName(dtype)) + (is64 ? " i64" : " i32") +
                     " batch " + std::to_string(batch));
        Tensor l = randomLengths(rng, 3, batch, is64);
        Tensor rows = randomRows(rng, dtype, sumKeys(l, batch, 0, 3), {5});
        expectSameOnBothBackends(rows, l, {3});
      }
  // Many rows (several blocks of the count kernel), trailing dims.
  Tensor l = randomLengths(rng, 4, 5000, false);
  expectSameOnBothBackends(
      randomRows(rng, DType::kFloat32, sumKeys(l, 5000, 0, 4), {2, 8}), l, {4});
}

TEST(CudaSequenceAllToAll, BadInputsAreErrorsLikeTheCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  std::mt19937 rng(2);
  Tensor rows = randomRows(rng, DType::kFloat32, 4, {3});
  // Negative lengths (the device count finds them), int32 and int64.
  for (bool is64 : {false, true}) {
    Tensor l = *Tensor::allocate(is64 ? DType::kInt64 : DType::kInt32, {4});
    const int64_t v[] = {1, 2, -5, 1};
    for (int i = 0; i < 4; ++i) {
      if (is64)
        l.data<int64_t>()[i] = v[i];
      else
        l.data<int32_t>()[i] = static_cast<int32_t>(v[i]);
    }
    CudaKernelRunner gpu;
    gpu.addInput(rows).addInput(l).setNumOutputs(1);
    gpu.attrs().set("key_splits", std::vector<int64_t>{2});
    Status s = gpu.run(kKernel);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.toString();
    EXPECT_NE(s.message().find("lengths[2] is negative (-5)"),
              std::string::npos)
        << s.toString();
    expectSameOnBothBackends(rows, l, {2});
  }
  // Rows that do not match the lengths; lengths not a multiple of K; a
  // wrong rows dtype.
  Tensor l = *Tensor::allocate(DType::kInt64, {4});
  const int64_t v[] = {1, 2, 0, 2};
  std::memcpy(l.data(), v, sizeof(v));
  CudaKernelRunner gpu;
  gpu.addInput(rows).addInput(l).setNumOutputs(1);
  gpu.attrs().set("key_splits", std::vector<int64_t>{2});
  Status s = gpu.run(kKernel);
  EXPECT_NE(s.message().find("rows has 4 rows but the group's positions "
                             "expect 5 from this rank"),
            std::string::npos)
      << s.toString();
  expectSameOnBothBackends(rows, l, {2});
  expectSameOnBothBackends(rows, l, {3});
  Tensor ids = *Tensor::allocate(DType::kInt32, {5, 3});
  expectSameOnBothBackends(ids, l, {2});
  // A group of two without communicators.
  CollectiveInfo info;
  info.kind = CollectiveInfo::Kind::kAllToAll;
  info.groupRanks = {0, 1};
  info.name = "two";
  expectSameOnBothBackends(randomRows(rng, DType::kFloat32, 5, {3}), l, {1, 1},
                           &info);
}

// --- NCCL (two or more GPUs) -------------------------------------------------

TEST(CudaSequenceAllToAll, NcclMatchesTheCpuOnEveryGpu) {
  EMBER_SKIP_WITHOUT_GPU();
  std::string whyNot;
  const int world = multiGpuWorld(4, whyNot);
  if (world == 0)
    GTEST_SKIP() << whyNot;
  expectEveryRankSucceeded(
      runRankProcesses(world, "SequenceNcclWorker.Run", "", 300));
}

/// Every rank's inputs come from the same seed, so each process knows all.
void runWorker(int rank, int world, Communicator &host,
               NcclCommunicator &nccl) {
  CollectiveInfo info;
  info.kind = CollectiveInfo::Kind::kAllToAll;
  for (int r = 0; r < world; ++r)
    info.groupRanks.push_back(r);
  info.position = rank;
  info.name = "nccl_seq_test";
  for (int variant = 0; variant < 3; ++variant) {
    // key_splits: one key each; with a position without keys; uneven.
    std::vector<int64_t> splits(world);
    for (int r = 0; r < world; ++r)
      splits[r] = variant == 0 ? 1 : variant == 1 ? (r == 1 ? 0 : 2) : 1 + r;
    int64_t keys = 0;
    for (int64_t s : splits)
      keys += s;
    std::mt19937 rng(20 + variant);
    std::vector<Tensor> lengths;
    std::vector<int64_t> batches(world);
    for (int r = 0; r < world; ++r) {
      batches[r] = r == 1 ? 0 : 3 + r; // a rank with batch 0
      lengths.push_back(randomLengths(rng, keys, batches[r], variant == 2));
    }
    // Rank q sends sum over r of r's lengths over q's keys.
    int64_t first = 0;
    for (int q = 0; q < rank; ++q)
      first += splits[q];
    int64_t n = 0;
    for (int r = 0; r < world; ++r)
      n += sumKeys(lengths[r], batches[r], first, splits[rank]);
    for (DType dtype : {DType::kFloat32, DType::kBFloat16}) {
      SCOPED_TRACE("variant " + std::to_string(variant) + " " +
                   std::string(dtypeName(dtype)));
      std::mt19937 rowRng(30 + rank);
      expectSameOnBothBackends(randomRows(rowRng, dtype, n, {6}), lengths[rank],
                               splits, &info, &host, &nccl);
    }
  }
}

TEST(SequenceNcclWorker, Run) {
  std::optional<RankProcess> me = spawnedRank();
  if (!me)
    GTEST_SKIP()
        << "one rank of CudaSequenceAllToAll.NcclMatchesTheCpuOnEveryGpu"
           " (it starts it)";
  const int rank = me->rank, world = me->world;
  ASSERT_EQ(cudaSetDevice(rank), cudaSuccess);
  CommOptions o;
  o.rank = rank;
  o.worldSize = world;
  o.rendezvous = "file:" + me->store;
  o.timeoutSeconds = 60;
  auto host = createCommunicator(o);
  ASSERT_TRUE(host.isOk()) << host.status().toString();
  auto nccl = createNcclCommunicator(**host, rank, 60.0);
  ASSERT_TRUE(nccl.isOk()) << nccl.status().toString();
  runWorker(rank, world, **host, **nccl);
}

} // namespace

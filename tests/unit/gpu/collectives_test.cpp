//===- collectives_test.cpp - CUDA collective kernels and NCCL ------------===//
//
// On one GPU: every collective kernel as a group of one (device copies, no
// NCCL) against the CPU kernel, bit for bit, with and without comm_dtype,
// incl. empty batches and the error paths. With two or more GPUs: the
// test re-runs itself as one process per GPU (NcclWorker.Run) that runs
// the CPU kernels over Gloo and the CUDA kernels over NCCL on the same
// inputs and compares them; and a rank that dies after NCCL init must make
// its peer fail within the timeout instead of hanging. On one GPU: NCCL
// initialization times out when a peer never joins. Without a GPU every
// test skips and says why.
//
//===----------------------------------------------------------------------===//
#include "cuda_kernel_runner.h"
#include "rank_processes.h"

#include "../runtime/support/temp_dir.h"
#include "../runtime/support/test_kernel_context.h"
#include "comm/collective_info.h"
#include "comm/comm_options.h"
#include "comm/nccl/nccl_communicator.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <thread>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace ember;
using namespace ember::testing;

namespace {

// --- helpers
// -------------------------------------------------------------------

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

/// One kernel's inputs and attributes, run on both backends.
struct Case {
  Case(std::string k, std::vector<Tensor> in, int outs = 1)
      : kernel(std::move(k)), inputs(std::move(in)), outputs(outs) {}
  std::string kernel;
  std::vector<Tensor> inputs; // host; undefined = absent
  int outputs = 1;
  Attributes attrs;
};

/// Runs `c` on the CPU (with `info`/`host` when given) and on the GPU (with
/// `nccl` too) and expects the same statuses and bit-identical outputs
/// (`tolerance` > 0: NCCL's own reductions, compared within it).
void expectSameOnBothBackends(const Case &c,
                              const CollectiveInfo *info = nullptr,
                              Communicator *host = nullptr,
                              NcclCommunicator *nccl = nullptr,
                              float tolerance = 0) {
  CollectiveContext cpu(info, host);
  for (const Tensor &t : c.inputs)
    cpu.addInput(t);
  cpu.setNumOutputs(c.outputs);
  cpu.attrs() = c.attrs;
  Status cs = runKernel(c.kernel, cpu);

  CudaKernelRunner gpu;
  for (const Tensor &t : c.inputs)
    gpu.addInput(t);
  gpu.setNumOutputs(c.outputs);
  gpu.attrs() = c.attrs;
  if (info)
    gpu.setCollective(info, host, nccl);
  Status gs = gpu.run(c.kernel);
  ASSERT_EQ(cs.code(), gs.code())
      << "cpu: " << cs.toString() << "\ngpu: " << gs.toString();
  if (!cs.isOk())
    return;
  for (int i = 0; i < c.outputs; ++i) {
    const Tensor &a = cpu.output(i), &b = gpu.output(i);
    ASSERT_EQ(a.dtype(), b.dtype()) << c.kernel << " output " << i;
    ASSERT_EQ(a.shape(), b.shape()) << c.kernel << " output " << i;
    if (tolerance > 0 && a.dtype() == DType::kFloat32) {
      for (int64_t k = 0; k < a.numel(); ++k)
        ASSERT_NEAR(a.data<float>()[k], b.data<float>()[k],
                    tolerance * (1 + std::abs(a.data<float>()[k])))
            << c.kernel << " output " << i << " element " << k;
    } else {
      EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.nbytes()))
          << c.kernel << " output " << i << " differs";
    }
  }
}

Tensor floatTensor(std::mt19937 &rng, const Shape &shape) {
  Tensor t = *Tensor::allocate(DType::kFloat32, shape);
  std::uniform_real_distribution<float> d(-3.f, 3.f);
  for (int64_t i = 0; i < t.numel(); ++i)
    t.data<float>()[i] = d(rng);
  return t;
}

Tensor zeros(DType dtype, const Shape &shape) {
  Tensor t = *Tensor::allocate(dtype, shape);
  if (t.nbytes())
    std::memset(t.data(), 0, t.nbytes());
  return t;
}

/// A KJT with `keys` keys and `batch` bags per key: lengths (mostly short,
/// some empty, some longer than a warp), values, weights.
std::vector<Tensor> randomKjt(std::mt19937 &rng, int64_t keys, int64_t batch,
                              bool is64) {
  std::uniform_int_distribution<int> pick(0, 9);
  std::vector<int64_t> lengths;
  int64_t n = 0;
  for (int64_t i = 0; i < keys * batch; ++i) {
    int k = pick(rng);
    lengths.push_back(k < 3 ? 0 : k < 9 ? k : 40 + pick(rng));
    n += lengths.back();
  }
  DType t = is64 ? DType::kInt64 : DType::kInt32;
  Tensor l = *Tensor::allocate(t, {keys * batch});
  Tensor v = *Tensor::allocate(t, {n});
  for (int64_t i = 0; i < keys * batch; ++i) {
    if (is64)
      l.data<int64_t>()[i] = lengths[i];
    else
      l.data<int32_t>()[i] = static_cast<int32_t>(lengths[i]);
  }
  for (int64_t i = 0; i < n; ++i) {
    if (is64)
      v.data<int64_t>()[i] = (int64_t{1} << 40) + rng();
    else
      v.data<int32_t>()[i] = static_cast<int32_t>(rng() % 1000000);
  }
  Tensor w = floatTensor(rng, {n});
  return {l, v, w};
}

const char *kCodecs[] = {"float32", "float16", "bfloat16"};

/// The reduction `kernel` on inputs() (new ones each time) with every
/// comm_dtype and reduce op, on both backends.
void expectReductionsSameOnBothBackends(
    const char *kernel, const std::function<std::vector<Tensor>()> &inputs,
    const std::string &what) {
  for (const char *codec : kCodecs)
    for (const char *op : {"sum", "max"}) {
      SCOPED_TRACE(std::string(codec) + " " + op + " " + what);
      Case c{kernel, inputs()};
      c.attrs.set("reduce", std::string(op));
      c.attrs.set("comm_dtype", std::string(codec));
      expectSameOnBothBackends(c);
    }
}

// --- groups of one (one GPU, no NCCL)
// ----------------------------------------------

TEST(CudaCollectives, PooledAllToAllGroupOfOneMatchesCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  std::mt19937 rng(1);
  for (int64_t b : {int64_t{5}, int64_t{1}, int64_t{0}})
    for (const char *codec : kCodecs) {
      SCOPED_TRACE(std::string(codec) + " batch " + std::to_string(b));
      Case c{"pooled_all_to_all",
             {floatTensor(rng, {b, 7}), zeros(DType::kFloat32, {b, 2})}};
      c.attrs.set("dim_per_rank", std::vector<int64_t>{7});
      c.attrs.set("comm_dtype", std::string(codec));
      expectSameOnBothBackends(c);
    }
  // Without a codec any dtype travels.
  Tensor ids = *Tensor::allocate(DType::kInt64, {4, 3});
  for (int64_t i = 0; i < 12; ++i)
    ids.data<int64_t>()[i] = (int64_t{1} << 35) + i;
  Case c{"pooled_all_to_all", {ids, zeros(DType::kFloat32, {8})}};
  c.attrs.set("dim_per_rank", std::vector<int64_t>{3});
  c.attrs.set("batch_ref_divisor", int64_t{2});
  expectSameOnBothBackends(c);
}

TEST(CudaCollectives, ReduceScatterGroupOfOneMatchesCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  std::mt19937 rng(2);
  for (int64_t b : {int64_t{6}, int64_t{0}})
    expectReductionsSameOnBothBackends(
        "reduce_scatter",
        [&] {
          return std::vector<Tensor>{floatTensor(rng, {b, 2, 3}),
                                     zeros(DType::kInt32, {b})};
        },
        "batch " + std::to_string(b));
}

TEST(CudaCollectives, AllGatherGroupOfOneMatchesCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  std::mt19937 rng(3);
  expectSameOnBothBackends({"all_gather", {floatTensor(rng, {3, 4})}});
  expectSameOnBothBackends({"all_gather", {floatTensor(rng, {0, 4})}});
  expectSameOnBothBackends({"all_gather", {zeros(DType::kInt32, {5})}});
}

TEST(CudaCollectives, AllReduceGroupOfOneMatchesCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  std::mt19937 rng(4);
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{37}, int64_t{100000}})
    expectReductionsSameOnBothBackends(
        "all_reduce",
        [&] { return std::vector<Tensor>{floatTensor(rng, {n})}; },
        "n " + std::to_string(n));
}

TEST(CudaCollectives, KjtAllToAllGroupOfOneMatchesCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  std::mt19937 rng(5);
  for (bool is64 : {false, true})
    for (bool weighted : {false, true})
      for (int64_t b : {int64_t{9}, int64_t{1}, int64_t{0}}) {
        SCOPED_TRACE(std::string(is64 ? "i64" : "i32") +
                     (weighted ? " weighted" : "") + " batch " +
                     std::to_string(b));
        std::vector<Tensor> kjt = randomKjt(rng, 3, b, is64);
        Case c{"kjt_all_to_all", {kjt[0], kjt[1]}, 2};
        if (weighted) {
          c.inputs.push_back(kjt[2]);
          c.outputs = 3;
        }
        c.attrs.set("key_splits", std::vector<int64_t>{3});
        expectSameOnBothBackends(c);
      }
  // Many bags (several blocks of warps, long bags).
  std::vector<Tensor> kjt = randomKjt(rng, 4, 3000, false);
  Case c{"kjt_all_to_all", {kjt[0], kjt[1], kjt[2]}, 3};
  c.attrs.set("key_splits", std::vector<int64_t>{4});
  expectSameOnBothBackends(c);
}

TEST(CudaCollectives, KjtAllToAllBadLengthsAreErrorsLikeTheCpu) {
  EMBER_SKIP_WITHOUT_GPU();
  Tensor lengths = *Tensor::allocate(DType::kInt32, {6});
  const int32_t l[] = {1, 2, 0, -1, 2, 1};
  std::memcpy(lengths.data(), l, sizeof(l));
  Tensor values = zeros(DType::kInt32, {6});
  Case c{"kjt_all_to_all", {lengths, values}, 2};
  c.attrs.set("key_splits", std::vector<int64_t>{2});
  CudaKernelRunner gpu;
  gpu.addInput(lengths).addInput(values).setNumOutputs(2);
  gpu.attrs() = c.attrs;
  Status s = gpu.run("kjt_all_to_all");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.toString();
  EXPECT_NE(s.message().find("lengths[3] is negative (-1)"), std::string::npos)
      << s.toString();
  expectSameOnBothBackends(c);
  // Lengths that do not sum to the number of values.
  const int32_t l2[] = {1, 2, 0, 1, 2, 1};
  std::memcpy(lengths.data(), l2, sizeof(l2));
  Case d{"kjt_all_to_all", {lengths, zeros(DType::kInt32, {8})}, 2};
  d.attrs.set("key_splits", std::vector<int64_t>{2});
  CudaKernelRunner gpu2;
  gpu2.addInput(d.inputs[0]).addInput(d.inputs[1]).setNumOutputs(2);
  gpu2.attrs() = d.attrs;
  s = gpu2.run("kjt_all_to_all");
  EXPECT_NE(s.message().find("lengths sum to 7 but there are 8 values"),
            std::string::npos)
      << s.toString();
}

TEST(CudaCollectives, BadAttributesAndMissingNcclAreErrors) {
  EMBER_SKIP_WITHOUT_GPU();
  std::mt19937 rng(6);
  Case c{"all_reduce", {floatTensor(rng, {4})}};
  c.attrs.set("comm_dtype", std::string("int8"));
  CudaKernelRunner gpu;
  gpu.addInput(c.inputs[0]);
  gpu.attrs() = c.attrs;
  Status s = gpu.run("all_reduce");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.toString();
  // A group of two in a session without communicators: as on the CPU.
  CollectiveInfo info;
  info.kind = CollectiveInfo::Kind::kAllReduce;
  info.groupRanks = {0, 1};
  info.position = 0;
  info.name = "two";
  Case d{"all_reduce", {floatTensor(rng, {4})}};
  expectSameOnBothBackends(d, &info);
  CudaKernelRunner gpu2;
  gpu2.addInput(d.inputs[0]).setCollective(&info, nullptr, nullptr);
  s = gpu2.run("all_reduce");
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.toString();
}

// --- NCCL
// ----------------------------------------------------------------------

TEST(Nccl, InitTimesOutWhenAPeerNeverJoins) {
  EMBER_SKIP_WITHOUT_GPU();
  if (!haveCommunicatorBackend())
    GTEST_SKIP() << "no Gloo";
  TempDir store;
  std::atomic<bool> done{false};
  std::thread peer([&] {
    CommOptions o;
    o.rank = 1;
    o.worldSize = 2;
    o.rendezvous = "file:" + store.path();
    o.timeoutSeconds = 30;
    auto comm = createCommunicator(o);
    ASSERT_TRUE(comm.isOk()) << comm.status().toString();
    // Takes the unique id like a rank would, then never initializes NCCL.
    auto id = shareNcclUniqueId(**comm, {0, 1}, "test");
    EXPECT_TRUE(id.isOk()) << id.status().toString();
    while (!done)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  });
  CommOptions o;
  o.rank = 0;
  o.worldSize = 2;
  o.rendezvous = "file:" + store.path();
  o.timeoutSeconds = 30;
  auto comm = createCommunicator(o);
  ASSERT_TRUE(comm.isOk()) << comm.status().toString();
  auto start = std::chrono::steady_clock::now();
  auto nccl = createNcclCommunicator(**comm, 0, 2.0);
  double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  done = true;
  peer.join();
  ASSERT_FALSE(nccl.isOk());
  EXPECT_EQ(nccl.status().code(), StatusCode::kDeadlineExceeded)
      << nccl.status().toString();
  EXPECT_NE(nccl.status().message().find("NCCL initialization of rank 0 of 2"),
            std::string::npos)
      << nccl.status().toString();
  EXPECT_LT(took, 15.0);
}

TEST(Nccl, CollectivesOnEveryGpuMatchTheCpuKernels) {
  EMBER_SKIP_WITHOUT_GPU();
  std::string whyNot;
  const int world = multiGpuWorld(4, whyNot);
  if (world == 0)
    GTEST_SKIP() << whyNot;
  expectEveryRankSucceeded(
      runRankProcesses(world, "NcclWorker.Run", "collectives", 300));
}

TEST(Nccl, DeadPeerFailsWithinTheTimeout) {
  EMBER_SKIP_WITHOUT_GPU();
  std::string whyNot;
  if (multiGpuWorld(2, whyNot) == 0)
    GTEST_SKIP() << whyNot;
  expectEveryRankSucceeded(runRankProcesses(2, "NcclWorker.Run", "dead", 120));
}

// --- the worker (one process per rank)
// ------------------------------------------------

/// Every rank's inputs come from the same seed, so each process knows all.
void runCollectivesWorker(int rank, int world, Communicator &host,
                          NcclCommunicator &nccl) {
  auto info = [&](CollectiveInfo::Kind kind, std::vector<int> ranks) {
    CollectiveInfo i;
    i.kind = kind;
    i.groupRanks = ranks;
    i.position = static_cast<int>(std::find(ranks.begin(), ranks.end(), rank) -
                                  ranks.begin());
    i.name = "nccl_test";
    return i;
  };
  std::vector<int> all(world);
  for (int r = 0; r < world; ++r)
    all[r] = r;
  // Uneven batches (one empty rank) and even ones.
  for (bool even : {false, true}) {
    std::vector<int64_t> batches(world);
    for (int r = 0; r < world; ++r)
      batches[r] = even ? 4 : (r == 1 ? 0 : 3 + r);
    int64_t total = 0;
    for (int64_t b : batches)
      total += b;
    SCOPED_TRACE(even ? "even batches" : "uneven batches");
    // pooled_all_to_all
    std::vector<int64_t> dims(world);
    for (int r = 0; r < world; ++r)
      dims[r] = 2 + r;
    for (const char *codec : kCodecs) {
      std::mt19937 rng(11);
      std::vector<Tensor> xs;
      for (int r = 0; r < world; ++r)
        xs.push_back(floatTensor(rng, {total, dims[r]}));
      CollectiveInfo ci = info(CollectiveInfo::Kind::kAllToAll, all);
      Case c{"pooled_all_to_all",
             {xs[rank], zeros(DType::kFloat32, {batches[rank]})}};
      c.attrs.set("dim_per_rank", dims);
      c.attrs.set("comm_dtype", std::string(codec));
      expectSameOnBothBackends(c, &ci, &host, &nccl);
    }
    // reduce_scatter (even batches without codec: ncclReduceScatter)
    for (const char *codec : kCodecs)
      for (const char *op : {"sum", "max"}) {
        std::mt19937 rng(12);
        std::vector<Tensor> xs;
        for (int r = 0; r < world; ++r)
          xs.push_back(floatTensor(rng, {total, 3}));
        CollectiveInfo ci = info(CollectiveInfo::Kind::kReduceScatter, all);
        Case c{"reduce_scatter",
               {xs[rank], zeros(DType::kInt32, {batches[rank]})}};
        c.attrs.set("reduce", std::string(op));
        c.attrs.set("comm_dtype", std::string(codec));
        bool ncclReduces = even && std::string(codec) == "float32";
        expectSameOnBothBackends(c, &ci, &host, &nccl,
                                 ncclReduces ? 1e-5f : 0.f);
      }
    // all_gather
    {
      std::mt19937 rng(13);
      std::vector<Tensor> xs;
      for (int r = 0; r < world; ++r)
        xs.push_back(floatTensor(rng, {batches[r], 5}));
      CollectiveInfo ci = info(CollectiveInfo::Kind::kAllGather, all);
      expectSameOnBothBackends({"all_gather", {xs[rank]}}, &ci, &host, &nccl);
    }
    // kjt_all_to_all: key_splits 1, 0, 2, ... (a rank without keys)
    for (bool is64 : {false, true}) {
      std::vector<int64_t> splits(world);
      int64_t keys = 0;
      for (int r = 0; r < world; ++r)
        keys += splits[r] = r == 1 ? 0 : 1 + r % 2;
      std::mt19937 rng(14);
      std::vector<std::vector<Tensor>> kjts;
      for (int r = 0; r < world; ++r)
        kjts.push_back(randomKjt(rng, keys, batches[r], is64));
      CollectiveInfo ci = info(CollectiveInfo::Kind::kKjtAllToAll, all);
      Case c{"kjt_all_to_all", kjts[rank], 3};
      c.attrs.set("key_splits", splits);
      expectSameOnBothBackends(c, &ci, &host, &nccl);
    }
  }
  // all_reduce: ncclAllReduce without a codec, the chunked path with one.
  for (int64_t n : {int64_t{1}, int64_t{37}, int64_t{100000}})
    for (const char *codec : kCodecs)
      for (const char *op : {"sum", "max"}) {
        std::mt19937 rng(15);
        std::vector<Tensor> xs;
        for (int r = 0; r < world; ++r)
          xs.push_back(floatTensor(rng, {n}));
        CollectiveInfo ci = info(CollectiveInfo::Kind::kAllReduce, all);
        Case c{"all_reduce", {xs[rank]}};
        c.attrs.set("reduce", std::string(op));
        c.attrs.set("comm_dtype", std::string(codec));
        expectSameOnBothBackends(c, &ci, &host, &nccl,
                                 std::string(codec) == "float32" ? 1e-5f : 0.f);
      }
  // A subgroup (ranks 0 and 2 of 3 or more): split once, used by members.
  if (world >= 3) {
    std::vector<int> sub = {0, 2};
    ASSERT_TRUE(nccl.prepareGroups({sub}).isOk());
    if (rank == 0 || rank == 2) {
      std::mt19937 rng(16);
      std::vector<Tensor> xs = {floatTensor(rng, {9}), floatTensor(rng, {9})};
      CollectiveInfo ci = info(CollectiveInfo::Kind::kAllReduce, sub);
      expectSameOnBothBackends({"all_reduce", {xs[rank / 2]}}, &ci, &host,
                               &nccl, 1e-5f);
      CollectiveInfo ag = info(CollectiveInfo::Kind::kAllGather, sub);
      expectSameOnBothBackends({"all_gather", {xs[rank / 2]}}, &ag, &host,
                               &nccl);
    }
  }
}

TEST(NcclWorker, Run) {
  std::optional<RankProcess> me = spawnedRank();
  if (!me)
    GTEST_SKIP() << "one rank of the Nccl.* tests (they start it)";
  const int rank = me->rank, world = me->world;
  const std::string mode = me->mode;
  ASSERT_EQ(cudaSetDevice(rank), cudaSuccess);
  CommOptions o;
  o.rank = rank;
  o.worldSize = world;
  o.rendezvous = "file:" + me->store;
  o.timeoutSeconds = 60;
  auto host = createCommunicator(o);
  ASSERT_TRUE(host.isOk()) << host.status().toString();
  const double timeout = mode == "dead" ? 3.0 : 60.0;
  auto nccl = createNcclCommunicator(**host, rank, timeout);
  ASSERT_TRUE(nccl.isOk()) << nccl.status().toString();
  if (mode == "collectives") {
    runCollectivesWorker(rank, world, **host, **nccl);
    return;
  }
  // mode "dead": rank 1 dies right after NCCL init; rank 0's all-reduce must
  // fail within the timeout (NCCL error or no progress), then fail at once.
  if (rank == 1)
    _exit(0);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  float *buf = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void **>(&buf), 1 << 20), cudaSuccess);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking),
            cudaSuccess);
  auto start = std::chrono::steady_clock::now();
  Status s = (*nccl)->allReduce(
      {0, 1}, buf, buf, (1 << 20) / 4, DType::kFloat32,
      NcclCommunicator::ReduceOp::kSum, stream, "all_reduce 'dead_peer'");
  if (s.isOk())
    s = (*nccl)->synchronize(stream, "end of run");
  double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_FALSE(s.isOk());
  EXPECT_TRUE(s.code() == StatusCode::kDeadlineExceeded ||
              s.code() == StatusCode::kUnavailable)
      << s.toString();
  EXPECT_NE(s.message().find("dead_peer"), std::string::npos) << s.toString();
  EXPECT_LT(took, 30.0) << s.toString();
  EXPECT_FALSE((*nccl)->health().isOk());
  Status again =
      (*nccl)->allReduce({0, 1}, buf, buf, 4, DType::kFloat32,
                         NcclCommunicator::ReduceOp::kSum, stream, "again");
  EXPECT_FALSE(again.isOk());
  cudaStreamSynchronize(stream);
  cudaFree(buf);
  cudaStreamDestroy(stream);
}

} // namespace

//===- collectives_emulation_test.cpp - Device code of collectives on CPU -===//
//
// The per-thread bodies of the CUDA collective kernels
// (cuda/collectives/collective_device.cuh) compiled by the host compiler and
// run over an emulated grid (several blocks, grid-stride loops, warps of 32
// lanes) against the CPU collective kernels on 1, 2 and 4 ranks (threads
// with Gloo communicators): the received staging buffers are built from
// every rank's inputs exactly as the exchange delivers them (the same send
// ranges as the kernels), then unpacked / reduced / reordered by the device
// code. Also: the 16-bit codecs bit for bit against the CPU's conversions.
//
//===----------------------------------------------------------------------===//
#include "cuda/collectives/collective_device.cuh"

#include "../runtime/support/collective_cases.h"
#include "../runtime/support/collective_ranks.h"
#include "../runtime/support/test_kernel_context.h"
#include "comm/collective_info.h"
#include "comm/comm_options.h"
#include "comm/kernels/pooled_all_to_all_layout.h"
#include "comm/nccl/nccl_communicator.h"
#include "ember/dtype.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <random>

using namespace ember;
using namespace ember::testing;
namespace dev = ember::cuda::collectives;

namespace {

// --- emulated launch shapes --------------------------------------------------

constexpr int kBlocks = 3, kThreadsPerBlock = 64, kLanes = 32;

/// A grid-stride loop of kBlocks x kThreadsPerBlock threads over [0, n).
void forGrid(int64_t n, const std::function<void(int64_t)> &body) {
  const int64_t stride = int64_t{kBlocks} * kThreadsPerBlock;
  for (int64_t t = 0; t < stride; ++t)
    for (int64_t i = t; i < n; i += stride)
      body(i);
}

// --- CPU reference over ranks ------------------------------------------------

/// What the collectives' errors call the group.
constexpr const char *kGroup = "emulation";

/// Payloads are drawn from [-kBound, kBound).
constexpr float kBound = 3.f;

/// Host copies of every output of a CPU kernel run on each rank.
using RankOutputs = std::vector<std::vector<Tensor>>;

Tensor copyOf(const Tensor &t) {
  auto c = Tensor::allocate(t.dtype(), t.shape());
  EXPECT_TRUE(c.isOk());
  if (t.nbytes())
    std::memcpy(c->data(), t.data(), t.nbytes());
  return *c;
}

const char *codecAttr(int wire) {
  return wire == dev::kWireFloat16    ? "float16"
         : wire == dev::kWireBFloat16 ? "bfloat16"
                                      : "float32";
}

/// What a sender puts on the wire: float32 as is, else 16-bit values
/// (the encode kernel, emulated).
std::vector<uint8_t> toWire(const std::vector<float> &x, int wire) {
  if (wire == dev::kWireFloat32) {
    std::vector<uint8_t> b(x.size() * 4);
    std::memcpy(b.data(), x.data(), b.size());
    return b;
  }
  std::vector<uint8_t> b(x.size() * 2);
  forGrid(static_cast<int64_t>(x.size()),
          [&](int64_t i) { dev::storeWire(b.data(), wire, i, x[i]); });
  return b;
}

bool sameBits(float a, float b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  uint32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y;
}

// --- codecs ------------------------------------------------------------------

TEST(CollectivesEmulation, CodecsMatchTheCpuConversionsBitForBit) {
  std::vector<float> values = {0.f,
                               -0.f,
                               1.f,
                               -1.5f,
                               65504.f,
                               65519.99f,
                               65520.f,
                               -70000.f,
                               1e-8f,
                               5.9604645e-8f, // smallest half subnormal
                               2.9802322e-8f, // half of it: ties to even (0)
                               6.1035156e-5f, // smallest normal half
                               3.4e38f,
                               1.17549435e-38f,
                               1e-45f,
                               std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::quiet_NaN()};
  // Ties: 1 + 2^-11 (half), 1 + 2^-8 (bfloat16), and their odd neighbours.
  values.push_back(1.f + std::ldexp(1.f, -11));
  values.push_back(1.f + 3 * std::ldexp(1.f, -11));
  values.push_back(1.f + std::ldexp(1.f, -8));
  values.push_back(1.f + 3 * std::ldexp(1.f, -8));
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 200000; ++i) {
    uint32_t b = bits(rng);
    float f;
    std::memcpy(&f, &b, 4);
    values.push_back(f);
  }
  for (float v : values) {
    uint16_t h = dev::encodeWire(dev::kWireFloat16, v);
    uint16_t bf = dev::encodeWire(dev::kWireBFloat16, v);
    if (std::isnan(v)) {
      EXPECT_TRUE(std::isnan(halfToFloat(h)));
      EXPECT_TRUE(std::isnan(bfloat16ToFloat(bf)));
      continue;
    }
    ASSERT_EQ(h, floatToHalf(v)) << "float16 of " << v;
    ASSERT_EQ(bf, floatToBFloat16(v)) << "bfloat16 of " << v;
  }
  for (uint32_t u = 0; u < 65536; ++u) {
    uint16_t w = static_cast<uint16_t>(u);
    ASSERT_TRUE(sameBits(dev::decodeWire(dev::kWireFloat16, w), halfToFloat(w)))
        << u;
    ASSERT_TRUE(
        sameBits(dev::decodeWire(dev::kWireBFloat16, w), bfloat16ToFloat(w)))
        << u;
  }
}

TEST(CollectivesEmulation, FindSegmentSkipsEmptySegments) {
  std::vector<int64_t> off = {0, 0, 2, 2, 2, 5, 6, 6};
  const int g = static_cast<int>(off.size()) - 1;
  for (int64_t x = 0; x < off[g]; ++x) {
    int q = dev::findSegment(off.data(), g, x);
    EXPECT_LE(off[q], x);
    EXPECT_LT(x, off[q + 1]) << x;
  }
  std::vector<int64_t> one = {0, 9};
  EXPECT_EQ(dev::findSegment(one.data(), 1, 0), 0);
  EXPECT_EQ(dev::findSegment(one.data(), 1, 8), 0);
}

// --- pooled_all_to_all -------------------------------------------------------

class EmulationTest : public RankCountTest {};

/// The segment attributes of a permuted pooled_all_to_all: each position's
/// columns cut into runs of at most 2, placed in reverse wire order.
std::pair<std::vector<int64_t>, std::vector<int64_t>>
reversedSegments(const std::vector<int64_t> &dims) {
  std::vector<int64_t> widths;
  for (int64_t d : dims)
    for (int64_t c = 0; c < d; c += 2)
      widths.push_back(std::min<int64_t>(2, d - c));
  std::vector<size_t> order(widths.size());
  std::iota(order.rbegin(), order.rend(), size_t{0});
  return {widths, segmentColumns(widths, order)};
}

TEST_P(EmulationTest, PooledUnpackMatchesCpuKernel) {
  const int w = world();
  const std::vector<int64_t> batches = batchesFor(w);
  const std::vector<int64_t> dims = pooledDimsFor(w);
  const std::vector<int64_t> rowOff = prefixSums(batches),
                             colOff = prefixSums(dims);
  const int64_t total = rowOff[w], dSum = colOff[w];
  for (bool permuted : {false, true})
  for (int wire : {dev::kWireFloat32, dev::kWireFloat16, dev::kWireBFloat16}) {
    SCOPED_TRACE(std::string(codecAttr(wire)) +
                 (permuted ? " permuted" : " wire order"));
    std::mt19937 rng(100 + w + wire);
    std::vector<std::vector<float>> x(w);
    for (int q = 0; q < w; ++q)
      x[q] = randomFloats(rng, total * dims[q], kBound);
    Attributes attrs;
    attrs.set("dim_per_rank", dims);
    attrs.set("comm_dtype", std::string(codecAttr(wire)));
    if (permuted) {
      auto [widths, columns] = reversedSegments(dims);
      attrs.set("segment_dims", widths);
      attrs.set("segment_columns", columns);
    }
    RankOutputs cpu(w);
    runPooledAllToAllRanks(
        kGroup, batches, dims, x, attrs,
        [&](int r, const Tensor &out) { cpu[r] = {copyOf(out)}; });
    auto segments = ember::collective::pooledSegments(attrs, dims);
    ASSERT_TRUE(segments.isOk()) << segments.status().toString();
    const int n = static_cast<int>(segments->size());
    const size_t es = wire == dev::kWireFloat32 ? 4 : 2;
    for (int me = 0; me < w; ++me) {
      const int64_t bMe = batches[me];
      const std::vector<int64_t> table =
          ember::collective::pooledUnpackTable(*segments, dims, bMe);
      // Staging: source q's rows for me, [bMe, dims[q]], at bMe * colOff[q].
      std::vector<uint8_t> staging(std::max<int64_t>(bMe * dSum, 1) * es);
      for (int q = 0; q < w; ++q) {
        std::vector<uint8_t> sent = toWire(x[q], wire);
        std::memcpy(staging.data() + bMe * colOff[q] * es,
                    sent.data() + rowOff[me] * dims[q] * es,
                    bMe * dims[q] * es);
      }
      std::vector<float> out(bMe * dSum, -99.f);
      forGrid(bMe * dSum, [&](int64_t i) {
        int64_t src = dev::pooledSourceIndex(i, dSum, table.data(), n);
        if (wire == dev::kWireFloat32)
          ember::cuda::copyElement(out.data(), i, staging.data(), src, 4);
        else
          out[i] = dev::loadWire(staging.data(), wire, src);
      });
      ASSERT_EQ(cpu[me][0].shape(), Shape({bMe, dSum}));
      EXPECT_EQ(out, floatsOf(cpu[me][0])) << "rank " << me;
    }
  }
}

TEST(CollectivesEmulation, PooledUnpackCopiesEveryElementSize) {
  // Uncoded pooled_all_to_all keeps any dtype: 1, 2, 4 and 8-byte elements.
  // Positions of 2, 0 and 3 columns; position 2's columns go first, then
  // position 0's.
  const std::vector<int64_t> dims = {2, 0, 3}, colOff = {0, 2, 2, 5};
  Attributes attrs;
  attrs.set("segment_dims", std::vector<int64_t>{2, 3});
  attrs.set("segment_columns", std::vector<int64_t>{3, 0});
  auto segments = ember::collective::pooledSegments(attrs, dims);
  ASSERT_TRUE(segments.isOk()) << segments.status().toString();
  const int64_t bMe = 3, dSum = 5;
  const std::vector<int64_t> table =
      ember::collective::pooledUnpackTable(*segments, dims, bMe);
  for (int bytes : {1, 2, 4, 8}) {
    std::vector<uint8_t> staging(bMe * dSum * bytes);
    std::iota(staging.begin(), staging.end(), 1);
    std::vector<uint8_t> out(staging.size(), 0);
    forGrid(bMe * dSum, [&](int64_t i) {
      ember::cuda::copyElement(
          out.data(), i, staging.data(),
          dev::pooledSourceIndex(i, dSum, table.data(), 2), bytes);
    });
    for (int64_t b = 0; b < bMe; ++b)
      for (int64_t c = 0; c < dSum; ++c) {
        // Output columns 0..2: position 2's; 3..4: position 0's.
        int q = c < 3 ? 2 : 0;
        int64_t d = dims[q], col = c < 3 ? c : c - 3;
        int64_t src = bMe * colOff[q] + b * d + col;
        EXPECT_EQ(0, std::memcmp(out.data() + (b * dSum + c) * bytes,
                                 staging.data() + src * bytes, bytes))
            << bytes << " bytes, b " << b << " c " << c;
      }
  }
}

// --- reduce_scatter / all_reduce ---------------------------------------------

TEST_P(EmulationTest, ReduceBlocksMatchReduceScatterCpuKernel) {
  const int w = world();
  const std::vector<int64_t> batches = batchesFor(w);
  const std::vector<int64_t> rowOff = prefixSums(batches);
  const int64_t total = rowOff[w], e = 6;
  for (int wire : {dev::kWireFloat32, dev::kWireFloat16, dev::kWireBFloat16})
    for (const char *op : {"sum", "max"}) {
      SCOPED_TRACE(std::string(codecAttr(wire)) + " " + op);
      std::mt19937 rng(200 + w + wire);
      std::vector<std::vector<float>> x(w);
      for (int q = 0; q < w; ++q)
        x[q] = randomFloats(rng, total * e, kBound);
      Attributes attrs;
      attrs.set("reduce", std::string(op));
      attrs.set("comm_dtype", std::string(codecAttr(wire)));
      RankOutputs cpu(w);
      runReduceScatterRanks(
          kGroup, batches, {2, 3}, x, attrs,
          [&](int r, const Tensor &out) { cpu[r] = {copyOf(out)}; });
      const size_t es = wire == dev::kWireFloat32 ? 4 : 2;
      for (int me = 0; me < w; ++me) {
        const int64_t block = batches[me] * e;
        std::vector<uint8_t> staging(std::max<int64_t>(block * w, 1) * es);
        for (int q = 0; q < w; ++q) {
          std::vector<uint8_t> sent = toWire(x[q], wire);
          std::memcpy(staging.data() + q * block * es,
                      sent.data() + rowOff[me] * e * es, block * es);
        }
        std::vector<float> out(block);
        forGrid(block, [&](int64_t i) {
          out[i] = dev::reduceBlocksAt(staging.data(), wire, w, block, i,
                                       op[0] == 'm');
        });
        EXPECT_EQ(out, floatsOf(cpu[me][0])) << "rank " << me;
      }
    }
}

TEST_P(EmulationTest, ChunkedAllReduceWithCodecMatchesCpuKernel) {
  const int w = world();
  for (int wire : {dev::kWireFloat16, dev::kWireBFloat16})
    for (int64_t n : {int64_t{1}, int64_t{3}, int64_t{41}}) {
      SCOPED_TRACE(std::string(codecAttr(wire)) + " n " + std::to_string(n));
      std::mt19937 rng(300 + w + wire + n);
      std::vector<std::vector<float>> x(w);
      for (int q = 0; q < w; ++q)
        x[q] = randomFloats(rng, n, kBound);
      Attributes attrs;
      attrs.set("comm_dtype", std::string(codecAttr(wire)));
      RankOutputs cpu(w);
      runAllReduceRanks(kGroup, x, attrs, [&](int r, const Tensor &out) {
        cpu[r] = {copyOf(out)};
      });
      std::vector<int64_t> chunk(w + 1);
      for (int q = 0; q <= w; ++q)
        chunk[q] = n * q / w;
      // Each owner reduces its chunk and rounds it (reduce kernel with
      // outWire); every rank then widens the gathered 16-bit chunks.
      std::vector<uint16_t> gathered(n);
      for (int me = 0; me < w; ++me) {
        const int64_t mine = chunk[me + 1] - chunk[me];
        std::vector<uint16_t> staging(std::max<int64_t>(mine * w, 1));
        for (int q = 0; q < w; ++q) {
          std::vector<uint8_t> sent = toWire(x[q], wire);
          std::memcpy(staging.data() + q * mine, sent.data() + chunk[me] * 2,
                      mine * 2);
        }
        forGrid(mine, [&](int64_t i) {
          float v =
              dev::reduceBlocksAt(staging.data(), wire, w, mine, i, false);
          gathered[chunk[me] + i] = dev::encodeWire(wire, v);
        });
      }
      std::vector<float> out(n);
      forGrid(n,
              [&](int64_t i) { out[i] = dev::decodeWire(wire, gathered[i]); });
      for (int r = 0; r < w; ++r)
        EXPECT_EQ(out, floatsOf(cpu[r][0])) << "rank " << r;
    }
}

// --- kjt_all_to_all ----------------------------------------------------------

struct HostSink {
  std::vector<int64_t> sums;
  int64_t firstNegative = std::numeric_limits<int64_t>::max();
  void add(int p, int64_t s) { sums[p] += s; }
  void negative(int64_t i) { firstNegative = std::min(firstNegative, i); }
};

/// The count kernel, emulated: `threads` threads, each over a contiguous
/// chunk of the lengths.
HostSink countEmulated(const void *lengths, bool is64, int64_t n,
                       const std::vector<int64_t> &lenOff, int threads) {
  const int g = static_cast<int>(lenOff.size()) - 1;
  HostSink sink;
  sink.sums.assign(g, 0);
  const int64_t chunk = (n + threads - 1) / threads;
  for (int t = 0; t < threads; ++t) {
    int64_t begin = t * chunk, end = std::min(n, begin + chunk);
    dev::kjtCountRange(lengths, is64, lenOff.data(), g, begin, end, sink);
  }
  return sink;
}

struct RankKjt {
  int64_t batch = 0;
  std::vector<int64_t> lengths; // [K * batch], key-major
  std::vector<int64_t> values;
  std::vector<float> weights;
};

/// lengths/values as `is64` int64 or int32 bytes.
std::vector<uint8_t> asIndex(const std::vector<int64_t> &v, bool is64) {
  std::vector<uint8_t> b(std::max<size_t>(v.size(), 1) * (is64 ? 8 : 4));
  for (size_t i = 0; i < v.size(); ++i)
    dev::storeIndex(b.data(), is64, static_cast<int64_t>(i), v[i]);
  return b;
}

Tensor indexTensor(std::vector<uint8_t> &bytes, bool is64, int64_t n) {
  return Tensor::view(bytes.data(), is64 ? DType::kInt64 : DType::kInt32, {n});
}

class KjtEmulationTest
    : public ::testing::TestWithParam<std::tuple<int, bool, bool>> {
protected:
  void SetUp() override {
    if (std::get<0>(GetParam()) > 1 && !haveCommunicatorBackend())
      GTEST_SKIP() << "this build has no Gloo";
  }
};

TEST_P(KjtEmulationTest, CountPermuteScanCopyMatchCpuKernel) {
  const auto [w, is64, weighted] = GetParam();
  const std::vector<int64_t> batches = batchesFor(w);
  const std::vector<int64_t> splits = w == 1 ? std::vector<int64_t>{3}
                                      : w == 2
                                          ? std::vector<int64_t>{2, 1}
                                          : std::vector<int64_t>{1, 0, 3, 2};
  const std::vector<int64_t> keyOff = prefixSums(splits);
  const int64_t numKeys = keyOff[w];
  std::mt19937 rng(400 + w * 4 + is64 * 2 + weighted);
  // Bag lengths: mostly short, some empty, some longer than a warp.
  std::uniform_int_distribution<int> pick(0, 9);
  std::vector<RankKjt> in(w);
  for (int q = 0; q < w; ++q) {
    in[q].batch = batches[q];
    for (int64_t i = 0; i < numKeys * batches[q]; ++i) {
      int k = pick(rng);
      int64_t len = k < 3 ? 0 : k < 9 ? k : 40 + pick(rng);
      in[q].lengths.push_back(len);
      for (int64_t j = 0; j < len; ++j) {
        in[q].values.push_back(is64 ? (int64_t{1} << 40) + rng()
                                    : rng() % 1000000);
        in[q].weights.push_back(
            std::uniform_real_distribution<float>(0, 1)(rng));
      }
    }
  }
  std::vector<std::vector<uint8_t>> lengthBytes(w), valueBytes(w);
  for (int q = 0; q < w; ++q) {
    lengthBytes[q] = asIndex(in[q].lengths, is64);
    valueBytes[q] = asIndex(in[q].values, is64);
  }
  RankOutputs cpu(w);
  runRanks(w, 30, [&](int r, Communicator *comm) {
    CollectiveContext ctx(
        worldCollective(CollectiveInfo::Kind::kKjtAllToAll, w, r, kGroup),
        comm);
    ctx.addInput(indexTensor(lengthBytes[r], is64, in[r].lengths.size()));
    ctx.addInput(indexTensor(valueBytes[r], is64, in[r].values.size()));
    if (weighted)
      ctx.addInput(Tensor::view(in[r].weights.data(), DType::kFloat32,
                                {static_cast<int64_t>(in[r].weights.size())}));
    ctx.setNumOutputs(weighted ? 3 : 2);
    ctx.attrs().set("key_splits", splits);
    Status s = runKernel("kjt_all_to_all", ctx);
    ASSERT_TRUE(s.isOk()) << s.toString();
    for (int i = 0; i < ctx.numOutputs(); ++i)
      cpu[r].push_back(copyOf(ctx.output(i)));
  });

  // Step 1 on every source: values per destination, vs a naive sum.
  std::vector<std::vector<int64_t>> valueOff(w);
  for (int q = 0; q < w; ++q) {
    std::vector<int64_t> lenOff(w + 1);
    for (int p = 0; p <= w; ++p)
      lenOff[p] = keyOff[p] * batches[q];
    for (int threads : {1, 2, 7, 64}) {
      HostSink sink = countEmulated(lengthBytes[q].data(), is64,
                                    in[q].lengths.size(), lenOff, threads);
      EXPECT_EQ(sink.firstNegative, std::numeric_limits<int64_t>::max());
      std::vector<int64_t> naive(w, 0);
      for (int p = 0; p < w; ++p)
        for (int64_t i = lenOff[p]; i < lenOff[p + 1]; ++i)
          naive[p] += in[q].lengths[i];
      EXPECT_EQ(sink.sums, naive)
          << "source " << q << ", " << threads << " threads";
      valueOff[q] = prefixSums(sink.sums);
    }
  }
  // Steps 2-4 on every destination.
  const std::vector<int64_t> batchOff = prefixSums(batches);
  const int64_t bTotal = batchOff[w];
  const size_t es = is64 ? 8 : 4;
  for (int me = 0; me < w; ++me) {
    const int64_t kMe = splits[me], bags = kMe * bTotal;
    // What the three exchanges deliver: source-major blocks.
    std::vector<uint8_t> rl, rv;
    std::vector<float> rw;
    for (int q = 0; q < w; ++q) {
      const int64_t lb = keyOff[me] * batches[q],
                    le = keyOff[me + 1] * batches[q];
      rl.insert(rl.end(), lengthBytes[q].begin() + lb * es,
                lengthBytes[q].begin() + le * es);
      const int64_t vb = valueOff[q][me], ve = valueOff[q][me + 1];
      rv.insert(rv.end(), valueBytes[q].begin() + vb * es,
                valueBytes[q].begin() + ve * es);
      rw.insert(rw.end(), in[q].weights.begin() + vb,
                in[q].weights.begin() + ve);
    }
    const int64_t nOut = static_cast<int64_t>(rv.size() / es);
    std::vector<uint8_t> outLengths(std::max<int64_t>(bags, 1) * es);
    std::vector<int64_t> outLen64(bags, -1), inLen64(bags, -1);
    forGrid(bags, [&](int64_t i) {
      int64_t src = dev::kjtSourceBag(i, kMe, bTotal, batchOff.data(), w);
      int64_t len = dev::loadIndex(rl.data(), is64, src);
      dev::storeIndex(outLengths.data(), is64, i, len);
      outLen64[i] = len;
      inLen64[src] = len;
    });
    for (int64_t v : inLen64)
      ASSERT_GE(v, 0) << "the permutation missed a received bag";
    std::vector<int64_t> outOff(bags), inOff(bags);
    std::exclusive_scan(outLen64.begin(), outLen64.end(), outOff.begin(),
                        int64_t{0});
    std::exclusive_scan(inLen64.begin(), inLen64.end(), inOff.begin(),
                        int64_t{0});
    std::vector<uint8_t> outValues(std::max<int64_t>(nOut, 1) * es, 0xab);
    std::vector<float> outWeights(nOut, -1.f);
    // Warps over bags (grid-stride), 32 lanes each.
    const int64_t warps = int64_t{kBlocks} * (kThreadsPerBlock / kLanes);
    for (int64_t wp = 0; wp < warps; ++wp)
      for (int64_t i = wp; i < bags; i += warps) {
        int64_t len = outLen64[i], dst = outOff[i];
        int64_t src =
            inOff[dev::kjtSourceBag(i, kMe, bTotal, batchOff.data(), w)];
        ASSERT_TRUE(dev::kjtBagInBounds(len, src, dst, nOut));
        for (int lane = 0; lane < kLanes; ++lane)
          dev::kjtCopyBag(rv.data(), outValues.data(), static_cast<int>(es),
                          rw.data(), weighted ? outWeights.data() : nullptr,
                          src, dst, len, lane, kLanes);
      }
    const std::vector<Tensor> &ref = cpu[me];
    ASSERT_EQ(ref[0].numel(), bags);
    ASSERT_EQ(ref[1].numel(), nOut);
    EXPECT_EQ(0, std::memcmp(outLengths.data(), ref[0].data(), bags * es))
        << "lengths, rank " << me;
    EXPECT_EQ(0, std::memcmp(outValues.data(), ref[1].data(), nOut * es))
        << "values, rank " << me;
    if (weighted) {
      EXPECT_EQ(outWeights, floatsOf(ref[2])) << "weights, rank " << me;
    }
  }
}

TEST(CollectivesEmulation, KjtCountFindsTheFirstNegativeLengthLikeTheCpu) {
  std::vector<int64_t> lengths = {1, 2, 0, 3, -1, 2, -5, 1};
  std::vector<uint8_t> bytes = asIndex(lengths, false);
  std::vector<int64_t> lenOff = {0, 4, 8};
  for (int threads : {1, 3, 8}) {
    HostSink sink = countEmulated(bytes.data(), false, 8, lenOff, threads);
    EXPECT_EQ(sink.firstNegative, 4) << threads;
    EXPECT_EQ(sink.sums, (std::vector<int64_t>{6, 3})) << threads;
  }
  TestKernelContext ctx;
  std::vector<int32_t> l32(lengths.begin(), lengths.end());
  std::vector<int32_t> values(8, 1);
  ctx.addInput(Tensor::view(l32.data(), DType::kInt32, {8}))
      .addInput(Tensor::view(values.data(), DType::kInt32, {8}));
  ctx.setNumOutputs(2);
  ctx.attrs().set("key_splits", std::vector<int64_t>{2});
  Status s = runKernel("kjt_all_to_all", ctx);
  EXPECT_NE(s.message().find("lengths[4] is negative (-1)"), std::string::npos)
      << s.toString();
}

TEST(CollectivesEmulation, KjtBagBoundsRejectWhatWouldOverrun) {
  EXPECT_TRUE(dev::kjtBagInBounds(0, 10, 10, 10));
  EXPECT_TRUE(dev::kjtBagInBounds(3, 7, 0, 10));
  EXPECT_FALSE(dev::kjtBagInBounds(4, 7, 0, 10));
  EXPECT_FALSE(dev::kjtBagInBounds(4, 0, 7, 10));
  EXPECT_FALSE(dev::kjtBagInBounds(-1, 0, 0, 10));
  EXPECT_FALSE(dev::kjtBagInBounds(1, -1, 0, 10));
  const int64_t big = std::numeric_limits<int64_t>::max();
  EXPECT_FALSE(dev::kjtBagInBounds(big, 2, 0, 10)); // no overflow
}

// --- NcclCommunicator host side (no GPU needed) ------------------------------

TEST_P(EmulationTest, NcclUniqueIdTravelsThroughTheHostCommunicator) {
  const int w = world();
  if (w == 1)
    GTEST_SKIP() << "needs a host communicator";
  std::vector<NcclUniqueIdBytes> ids(w), subIds(w);
  runRanks(w, 30, [&](int r, Communicator *comm) {
    auto id = shareNcclUniqueId(
        *comm,
        [&] {
          std::vector<int> all(w);
          std::iota(all.begin(), all.end(), 0);
          return all;
        }(),
        "test");
    ASSERT_TRUE(id.isOk()) << id.status().toString();
    ids[r] = *id;
    // A subgroup: only its members take part.
    if (w == 4 && (r == 1 || r == 3)) {
      auto sub = shareNcclUniqueId(*comm, {1, 3}, "test subgroup");
      ASSERT_TRUE(sub.isOk()) << sub.status().toString();
      subIds[r] = *sub;
    }
    auto bad = shareNcclUniqueId(*comm, {r == 0 ? 1 : 0}, "test");
    EXPECT_FALSE(bad.isOk()); // not a member
  });
  const NcclUniqueIdBytes zero{};
  EXPECT_NE(ids[0], zero);
  for (int r = 1; r < w; ++r)
    EXPECT_EQ(ids[r], ids[0]) << "rank " << r;
  if (w == 4) {
    EXPECT_EQ(subIds[1], subIds[3]);
    EXPECT_NE(subIds[1], ids[0]);
  }
}

/// A host communicator of one rank (no peers to exchange with).
class SoloCommunicator : public Communicator {
public:
  int rank() const override { return 0; }
  int worldSize() const override { return 1; }
  Status exchange(const std::vector<int> &, const std::vector<SendBuffer> &s,
                  const std::vector<RecvBuffer> &r,
                  const std::string &what) override {
    return exchangeLocally(0, s, r, what);
  }
};

TEST(CollectivesEmulation, NcclCommunicatorCreationSaysWhyItFails) {
  SoloCommunicator host;
  auto bad = createNcclCommunicator(host, 0, 0);
  ASSERT_FALSE(bad.isOk());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0)
    GTEST_SKIP() << "a GPU is present: collectives_test covers NCCL";
  auto none = createNcclCommunicator(host, 0, 5);
  ASSERT_FALSE(none.isOk());
  EXPECT_EQ(none.status().code(), StatusCode::kUnavailable)
      << none.status().toString();
  EXPECT_NE(none.status().message().find(
                "NCCL initialization of rank 0 of 1 on CUDA device 0"),
            std::string::npos)
      << none.status().toString();
}

INSTANTIATE_TEST_SUITE_P(Ranks, EmulationTest, ::testing::Values(1, 2, 4),
                         rankCountName);

INSTANTIATE_TEST_SUITE_P(Ranks, KjtEmulationTest,
                         ::testing::Combine(::testing::Values(1, 2, 4),
                                            ::testing::Bool(),
                                            ::testing::Bool()),
                         [](const auto &info) {
                           return std::to_string(std::get<0>(info.param)) +
                                  "ranks_" +
                                  (std::get<1>(info.param) ? "i64" : "i32") +
                                  (std::get<2>(info.param) ? "_weighted" : "");
                         });

} // namespace

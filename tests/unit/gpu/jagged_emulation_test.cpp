//===- jagged_emulation_test.cpp - CUDA jagged/KJT kernels, emulated ------===//
//
// Runs the per-thread bodies of the CUDA jagged and KJT kernels
// (cuda/jagged/jagged_device.cuh, compiled here by the host compiler) over
// an emulated grid, with the host orchestration of each kernel's .cu file
// mirrored step by step (CUB's prefix sums become std::inclusive_scan), and
// compares the outputs with the CPU kernels on random data. Work items run
// in a shuffled order: the kernels must not depend on the order of threads.
// Bad data must be recorded in the error record like the device would, and
// never read out of bounds: those inputs sit right before a PROT_NONE page.
//
//===----------------------------------------------------------------------===//
#include "cuda/jagged/jagged_device.cuh"
#include "cuda/jagged/jagged_launch.h"

#include "../runtime/kjt_test_support.h"
#include "../runtime/support/test_kernel_context.h"
#include "kernels/shared/kjt_kernel_attrs.h"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>

using namespace ember;
using namespace ember::testing;
using namespace ember::cuda;
using namespace ember::cuda::jagged;

namespace {

//===----------------------------------------------------------------------===//
// The emulated device
//===----------------------------------------------------------------------===//

struct Emulator {
  DeviceErrorRecord record{};
  ErrorSink sink{&record, 7};
  std::mt19937 order{12345};

  /// Runs f(i) for every i < n, in a shuffled order.
  template <typename Fn> void grid(int64_t n, Fn &&f) {
    std::vector<int64_t> items(n);
    std::iota(items.begin(), items.end(), 0);
    std::shuffle(items.begin(), items.end(), order);
    for (int64_t i : items)
      f(i);
  }

  /// lengthsToOffsetsOnDevice: first pass, scan, sum check.
  std::vector<int64_t> offsets(const Tensor &lengths, int64_t expectedSum) {
    const int64_t count = lengths.numel();
    std::vector<int64_t> out(count + 1, -99);
    if (count == 0) {
      out[0] = 0;
      return out;
    }
    const bool is64 = lengths.dtype() == DType::kInt64;
    grid(count, [&](int64_t i) {
      lengthForScan(i, lengths.data(), is64, out.data() + 1, sink);
    });
    std::inclusive_scan(out.begin() + 1, out.end(), out.begin() + 1);
    if (expectedSum >= 0)
      checkLengthsSum(out.data(), count, expectedSum, sink);
    return out;
  }
  bool ok() const { return record.code == 0; }
  DeviceErrorCode code() const {
    return static_cast<DeviceErrorCode>(record.code);
  }
};

/// A copy of a tensor's bytes that ends right before an inaccessible page:
/// reading past it faults.
class Guarded {
public:
  explicit Guarded(const Tensor &t) : dtype_(t.dtype()), shape_(t.shape()) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t bytes = t.nbytes();
    dataBytes_ = (bytes + page - 1) / page * page;
    size_ = dataBytes_ + page;
    base_ = static_cast<uint8_t *>(mmap(nullptr, size_, PROT_READ | PROT_WRITE,
                                        MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    EXPECT_NE(base_, MAP_FAILED);
    EXPECT_EQ(mprotect(base_ + dataBytes_, page, PROT_NONE), 0);
    data_ = base_ + dataBytes_ - bytes;
    if (bytes)
      std::memcpy(data_, t.data(), bytes);
  }
  ~Guarded() { munmap(base_, size_); }
  Guarded(const Guarded &) = delete;
  Guarded &operator=(const Guarded &) = delete;
  Tensor view() const { return Tensor::view(data_, dtype_, shape_); }

private:
  DType dtype_;
  Shape shape_;
  uint8_t *base_ = nullptr, *data_ = nullptr;
  size_t size_ = 0, dataBytes_ = 0;
};

Tensor allocate(DType dtype, std::vector<int64_t> dims) {
  Shape shape = *Shape::fromDims(dims.data(), dims.size());
  Tensor t = *Tensor::allocate(dtype, shape);
  if (t.nbytes())
    std::memset(t.data(), 0xAB, t.nbytes()); // not zero: unwritten shows
  return t;
}

void expectSameTensor(const Tensor &got, const Tensor &want,
                      const std::string &what) {
  ASSERT_EQ(got.defined(), want.defined()) << what;
  if (!want.defined())
    return;
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(got.shape(), want.shape()) << what;
  EXPECT_EQ(std::memcmp(got.data(), want.data(), want.nbytes()), 0) << what;
}

std::vector<Tensor> cpuOutputs(TestKernelContext &ctx) {
  std::vector<Tensor> out;
  for (int i = 0; i < ctx.numOutputs(); ++i)
    out.push_back(ctx.output(i));
  return out;
}

Tensor randomBytes(DType dtype, std::vector<int64_t> dims, std::mt19937 &gen) {
  Tensor t = allocate(dtype, dims);
  std::uniform_int_distribution<int> byte(0, 255);
  for (size_t i = 0; i < t.nbytes(); ++i)
    t.data<uint8_t>()[i] = static_cast<uint8_t>(byte(gen));
  return t;
}

int elemBytes(const Tensor &t) {
  return static_cast<int>(dtypeSize(t.dtype()));
}

//===----------------------------------------------------------------------===//
// Each CUDA kernel's orchestration, emulated (mirrors jagged/*.cu)
//===----------------------------------------------------------------------===//

Tensor emuLengthsToOffsets(Emulator &emu, const Tensor &lengths) {
  std::vector<int64_t> o = emu.offsets(lengths, -1);
  return indexTensor(o, DType::kInt64);
}

std::vector<int64_t> emuRowOffsets(Emulator &emu, const Tensor &offsets,
                                   int64_t limit, int64_t maxLength) {
  std::vector<int64_t> clamped(offsets.numel(), -99);
  emu.grid(offsets.numel(), [&](int64_t i) {
    checkRowOffset(i, offsets.data(), offsets.dtype() == DType::kInt64, limit,
                   maxLength, clamped.data(), emu.sink);
  });
  return clamped;
}

Tensor emuJaggedToPadded(Emulator &emu, const Tensor &values,
                         const Tensor &offsets, int64_t L, double pad) {
  const int64_t B = offsets.numel() - 1;
  std::vector<int64_t> dims = {B, L};
  int64_t rowElems = 1;
  for (int i = 1; i < values.rank(); ++i) {
    dims.push_back(values.dim(i));
    rowElems *= values.dim(i);
  }
  Tensor out = allocate(values.dtype(), dims);
  std::vector<int64_t> clamped = emuRowOffsets(emu, offsets, values.dim(0), -1);
  std::vector<uint8_t> padBytes =
      ember::jagged::paddingBytes(pad, values.dtype());
  uint64_t padBits = 0;
  std::memcpy(&padBits, padBytes.data(), padBytes.size());
  emu.grid(out.numel(), [&](int64_t e) {
    toPaddedElement(e, values.data(), clamped.data(), L, rowElems,
                    elemBytes(values), &padBits, out.data());
  });
  return out;
}

/// Undefined when the offsets are bad (the CUDA kernel returns the device
/// error at its read-back).
Tensor emuPaddedToJagged(Emulator &emu, const Tensor &padded,
                         const Tensor &offsets) {
  const int64_t B = padded.dim(0), L = padded.dim(1);
  std::vector<int64_t> clamped = emuRowOffsets(emu, offsets, -1, L);
  if (!emu.ok())
    return Tensor();
  std::vector<int64_t> dims = {clamped[B]};
  int64_t rowElems = 1;
  for (int i = 2; i < padded.rank(); ++i) {
    dims.push_back(padded.dim(i));
    rowElems *= padded.dim(i);
  }
  Tensor out = allocate(padded.dtype(), dims);
  emu.grid(out.numel(), [&](int64_t e) {
    toJaggedElement(e, padded.data(), clamped.data(), B, L, rowElems,
                    elemBytes(padded), out.data());
  });
  return out;
}

/// A KJT's host inputs.
struct KjtTensors {
  Tensor values, lengths, weights;
};

KjtTensors kjtTensors(const TestKjt &k, DType vt, DType lt) {
  KjtTensors t{indexTensor(k.values, vt), indexTensor(k.lengths, lt), {}};
  if (k.isWeighted())
    t.weights = floatTensor(k.weights);
  return t;
}

std::vector<Tensor> emuPermute(Emulator &emu, const KjtTensors &in, int64_t K,
                               const std::vector<int64_t> &perm) {
  const int64_t B = K > 0 ? in.lengths.numel() / K : 0;
  const int64_t P = static_cast<int64_t>(perm.size()), N = in.values.numel();
  std::vector<int64_t> offsets = emu.offsets(in.lengths, N);
  std::vector<int64_t> outKeyBegin(P + 1, 0);
  emu.grid(P, [&](int64_t i) {
    permuteKeyCount(i, perm.data(), offsets.data(), B, outKeyBegin.data() + 1);
  });
  std::inclusive_scan(outKeyBegin.begin() + 1, outKeyBegin.end(),
                      outKeyBegin.begin() + 1);
  // As the kernel: a permutation that keeps every key once has N values;
  // others read their total back (a device error then ends the kernel).
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  const bool keepsEveryKeyOnce =
      P == K &&
      std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end();
  if (!keepsEveryKeyOnce && !emu.ok())
    return {};
  const int64_t total = keepsEveryKeyOnce ? N : outKeyBegin[P];
  Tensor values = allocate(in.values.dtype(), {total});
  Tensor lengths = allocate(in.lengths.dtype(), {P * B});
  Tensor weights;
  if (in.weights.defined())
    weights = allocate(in.weights.dtype(), {total});
  emu.grid(P * B, [&](int64_t j) {
    permuteLength(j, perm.data(), B, in.lengths.data(), lengths.data(),
                  elemBytes(in.lengths));
  });
  emu.grid(total, [&](int64_t j) {
    permuteValue(j, perm.data(), offsets.data(), B, outKeyBegin.data(), P,
                 in.values.data(), N, values.data(), elemBytes(in.values),
                 weights.defined() ? in.weights.data() : nullptr,
                 weights.defined() ? weights.data() : nullptr,
                 weights.defined() ? elemBytes(in.weights) : 0);
  });
  return {values, lengths, weights};
}

std::vector<Tensor> emuSplit(Emulator &emu, const KjtTensors &in,
                             const std::vector<int64_t> &counts) {
  int64_t F = 0;
  for (int64_t c : counts)
    F += c;
  const int64_t B = in.lengths.numel() / F, N = in.values.numel();
  std::vector<int64_t> offsets = emu.offsets(in.lengths, N);
  std::vector<int64_t> partBegin = {0, N};
  if (counts.size() > 1) {
    partBegin.assign(counts.size() + 1, 0);
    int64_t key = 0;
    for (size_t s = 0; s <= counts.size(); ++s) {
      partBegin[s] = offsets[key * B]; // the gather kernel
      if (s < counts.size())
        key += counts[s];
    }
  }
  std::vector<Tensor> out;
  const size_t vb = dtypeSize(in.values.dtype()),
               lb = dtypeSize(in.lengths.dtype());
  int64_t key = 0;
  for (size_t s = 0; s < counts.size(); ++s) {
    const int64_t begin = partBegin[s], count = partBegin[s + 1] - begin;
    Tensor v = allocate(in.values.dtype(), {count});
    Tensor l = allocate(in.lengths.dtype(), {counts[s] * B});
    ember::jagged::copyBytes(v.data(), in.values.data<uint8_t>() + begin * vb,
                             count * vb);
    ember::jagged::copyBytes(l.data(),
                             in.lengths.data<uint8_t>() + key * B * lb,
                             counts[s] * B * lb);
    Tensor w;
    if (in.weights.defined()) {
      w = allocate(DType::kFloat32, {count});
      ember::jagged::copyBytes(w.data(), in.weights.data<float>() + begin,
                               count * 4);
    }
    out.insert(out.end(), {v, l, w});
    key += counts[s];
  }
  return out;
}

std::vector<Tensor> emuBucketize(Emulator &emu, const KjtTensors &in,
                                 const std::vector<int64_t> &blockSizes,
                                 int64_t numBuckets) {
  const int64_t F = static_cast<int64_t>(blockSizes.size());
  const int64_t n = in.values.numel(), B = in.lengths.numel() / F, FB = F * B;
  const int64_t numLengths = numBuckets * FB;
  Tensor values = allocate(in.values.dtype(), {n});
  Tensor lengths = allocate(in.lengths.dtype(), {numLengths});
  Tensor weights;
  if (in.weights.defined())
    weights = allocate(in.weights.dtype(), {n});
  Tensor permute = allocate(DType::kInt64, {n});
  std::vector<int64_t> offsets = emu.offsets(in.lengths, n);
  if (numLengths == 0)
    return {values, lengths, weights, permute};
  std::vector<int64_t> cursor(numLengths + 1, 0);
  const bool ids64 = in.values.dtype() == DType::kInt64;
  const uint64_t buckets = static_cast<uint64_t>(numBuckets);
  emu.grid(FB, [&](int64_t s) {
    bucketizeCount(s, B, FB, offsets.data(), in.values.data(), ids64, n,
                   blockSizes.data(), buckets, cursor.data() + 1);
  });
  emu.grid(numLengths, [&](int64_t j) {
    bucketizeLength(j, cursor.data() + 1, lengths.data(),
                    in.lengths.dtype() == DType::kInt64);
  });
  std::inclusive_scan(cursor.begin() + 1, cursor.end(), cursor.begin() + 1);
  emu.grid(FB, [&](int64_t s) {
    bucketizePlace(s, B, FB, offsets.data(), in.values.data(), ids64, n,
                   blockSizes.data(), buckets, cursor.data(), values.data(),
                   permute.data<int64_t>(),
                   weights.defined() ? in.weights.data() : nullptr,
                   weights.defined() ? weights.data() : nullptr,
                   weights.defined() ? elemBytes(in.weights) : 0);
  });
  return {values, lengths, weights, permute};
}

/// One feature of kjt_from_bags.
struct Bags {
  Tensor ids, offsets, weights;
  bool includeLast = false;
};

/// Undefined outputs when a read-back met a device error.
std::vector<Tensor> emuFromBags(Emulator &emu, const std::vector<Bags> &bags,
                                DType lengthsDType,
                                const std::vector<int64_t> &numRows) {
  const int64_t F = static_cast<int64_t>(bags.size());
  const int64_t B = bags[0].offsets.numel() - (bags[0].includeLast ? 1 : 0);
  std::vector<BagFeatureInfo> features(F);
  std::vector<int64_t> used(F);
  bool anyIncludeLast = false;
  int64_t totalOffsets = 0, totalIds = 0;
  for (int64_t f = 0; f < F; ++f) {
    const Bags &g = bags[f];
    BagFeatureInfo &b = features[f];
    b.ids = g.ids.data();
    b.offsets = g.offsets.data();
    b.weights = g.weights.defined() ? g.weights.data() : nullptr;
    b.ids64 = g.ids.dtype() == DType::kInt64;
    b.offsets64 = g.offsets.dtype() == DType::kInt64;
    b.includeLast = g.includeLast;
    b.numIds = g.ids.numel();
    b.numOffsets = g.offsets.numel();
    b.numRows = numRows.empty() ? -1 : numRows[f];
    anyIncludeLast |= g.includeLast;
    used[f] = B > 0 ? b.numIds : 0;
    totalOffsets += b.numOffsets;
    totalIds += b.numIds;
  }
  const std::vector<int64_t> table = fromBagsTable(features);
  const BagFeatures t = bagFeaturesAt(table.data(), F);
  Tensor lengths = allocate(lengthsDType, {F * B});
  std::vector<int64_t> usedDevice(F, -99);
  emu.grid(totalOffsets, [&](int64_t g) {
    fromBagsOffset(g, t, B, lengths.data(), lengthsDType == DType::kInt64,
                   usedDevice.data(), emu.sink);
  });
  if (!numRows.empty())
    emu.grid(totalIds, [&](int64_t g) { fromBagsCheckId(g, t, B, emu.sink); });
  if (anyIncludeLast) {
    if (!emu.ok())
      return {};
    for (int64_t f = 0; f < F; ++f)
      if (features[f].includeLast)
        used[f] = usedDevice[f];
  }
  std::vector<int64_t> outBegin(F + 1, 0);
  for (int64_t f = 0; f < F; ++f)
    outBegin[f + 1] = outBegin[f] + used[f];
  const DType idsDType = bags[0].ids.dtype();
  Tensor values = allocate(idsDType, {outBegin[F]}), weights;
  if (bags[0].weights.defined())
    weights = allocate(DType::kFloat32, {outBegin[F]});
  if (outBegin[F] > 0)
    emu.grid(totalIds, [&](int64_t g) {
      fromBagsCopy(g, t, outBegin.data(), values.data(),
                   static_cast<int>(dtypeSize(idsDType)),
                   weights.defined() ? weights.data() : nullptr);
    });
  return {values, lengths, weights};
}

//===----------------------------------------------------------------------===//
// Tests
//===----------------------------------------------------------------------===//

TEST(JaggedEmulation, LengthsToOffsetsMatchesCpu) {
  std::mt19937 gen(1);
  for (DType dt : {DType::kInt32, DType::kInt64})
    for (int64_t k : {0, 1, 17, 1000}) {
      Tensor lengths = indexTensor(randomLengths(k, 9, gen), dt);
      TestKernelContext ctx;
      ctx.addInput(lengths).setNumOutputs(1);
      ASSERT_TRUE(runKernel("lengths_to_offsets", ctx).isOk());
      Emulator emu;
      expectSameTensor(emuLengthsToOffsets(emu, lengths), ctx.output(0),
                       "k " + std::to_string(k));
      EXPECT_TRUE(emu.ok());
    }
}

TEST(JaggedEmulation, NegativeLengthIsRecorded) {
  Emulator emu;
  Guarded lengths(indexTensor({1, 2, -1, 3}, DType::kInt32));
  std::vector<int64_t> o = emu.offsets(lengths.view(), -1);
  ASSERT_EQ(emu.code(), DeviceErrorCode::kNegativeLength);
  EXPECT_EQ(emu.record.a, -1);
  EXPECT_EQ(emu.record.b, 2);
  EXPECT_EQ(emu.record.instruction, 7);
  EXPECT_EQ(o, (std::vector<int64_t>{0, 1, 3, 3, 6})); // counted as 0
  EXPECT_EQ(describeDeviceError(emu.record),
            "length -1 at position 2 is negative");
}

TEST(JaggedEmulation, LengthsSumMismatchIsRecorded) {
  Emulator emu;
  emu.offsets(indexTensor({2, 2}, DType::kInt64), 5);
  ASSERT_EQ(emu.code(), DeviceErrorCode::kLengthsSumMismatch);
  EXPECT_EQ(emu.record.a, 4);
  EXPECT_EQ(emu.record.b, 5);
}

TEST(JaggedEmulation, JaggedToPaddedMatchesCpu) {
  std::mt19937 gen(2);
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kBFloat16,
                      DType::kInt64, DType::kInt8, DType::kBool})
    for (std::vector<int64_t> trailing :
         {std::vector<int64_t>{}, std::vector<int64_t>{3},
          std::vector<int64_t>{2, 5}})
      for (int64_t B : {0, 1, 6})
        for (int64_t L : {0, 3, 9}) {
          std::vector<int64_t> lengths = randomLengths(B, 6, gen);
          std::vector<int64_t> offsets = offsetsOf(lengths);
          std::vector<int64_t> dims = {offsets.back()};
          dims.insert(dims.end(), trailing.begin(), trailing.end());
          Tensor values = randomBytes(dtype, dims, gen);
          if (dtype == DType::kBool)
            for (size_t i = 0; i < values.nbytes(); ++i)
              values.data<uint8_t>()[i] &= 1;
          for (DType ot : {DType::kInt32, DType::kInt64}) {
            Tensor off = indexTensor(offsets, ot);
            TestKernelContext ctx;
            ctx.addInput(values).addInput(off).setNumOutputs(1);
            ctx.attrs().set("max_length", L).set("padding_value", -1.5);
            Status s = runKernel("jagged_to_padded", ctx);
            ASSERT_TRUE(s.isOk()) << s.toString();
            Emulator emu;
            expectSameTensor(emuJaggedToPadded(emu, values, off, L, -1.5),
                             ctx.output(0),
                             std::string(dtypeName(dtype)) + " B " +
                                 std::to_string(B) + " L " + std::to_string(L));
            EXPECT_TRUE(emu.ok());
          }
        }
}

TEST(JaggedEmulation, PaddedToJaggedMatchesCpu) {
  std::mt19937 gen(3);
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kInt32})
    for (std::vector<int64_t> trailing :
         {std::vector<int64_t>{}, std::vector<int64_t>{4}})
      for (int64_t B : {0, 1, 7})
        for (int64_t L : {0, 1, 5}) {
          std::vector<int64_t> lengths = randomLengths(B, L, gen);
          std::vector<int64_t> dims = {B, L};
          dims.insert(dims.end(), trailing.begin(), trailing.end());
          Tensor padded = randomBytes(dtype, dims, gen);
          Tensor off = indexTensor(offsetsOf(lengths), DType::kInt64);
          TestKernelContext ctx;
          ctx.addInput(padded).addInput(off).setNumOutputs(1);
          Status s = runKernel("padded_to_jagged", ctx);
          ASSERT_TRUE(s.isOk()) << s.toString();
          Emulator emu;
          expectSameTensor(emuPaddedToJagged(emu, padded, off), ctx.output(0),
                           "B " + std::to_string(B) + " L " +
                               std::to_string(L));
          EXPECT_TRUE(emu.ok());
        }
}

TEST(JaggedEmulation, BadRowOffsetsAreRecordedWithoutStrayReads) {
  std::mt19937 gen(4);
  Guarded values(randomBytes(DType::kFloat32, {6, 2}, gen));
  struct Case {
    std::vector<int64_t> offsets;
    DeviceErrorCode code;
    int64_t a, b;
  };
  for (const Case &c :
       {Case{{1, 2, 6}, DeviceErrorCode::kFirstOffsetNotZero, 1, 0},
        Case{{0, 4, 2, 6}, DeviceErrorCode::kOffsetsDecreasing, 2, 2},
        Case{{0, 3, 9}, DeviceErrorCode::kOffsetOutOfRange, 2, 9},
        Case{{0, -5, 6}, DeviceErrorCode::kOffsetsDecreasing, 1, -5}}) {
    Guarded off(indexTensor(c.offsets, DType::kInt64));
    Emulator emu;
    emuJaggedToPadded(emu, values.view(), off.view(), 5, 0.0);
    EXPECT_EQ(emu.code(), c.code);
    EXPECT_EQ(emu.record.a, c.a);
    EXPECT_EQ(emu.record.b, c.b);
    // The CPU kernel refuses the same offsets.
    TestKernelContext ctx;
    ctx.addInput(values.view()).addInput(off.view()).setNumOutputs(1);
    ctx.attrs().set("max_length", int64_t{5});
    EXPECT_FALSE(runKernel("jagged_to_padded", ctx).isOk());
  }
  // padded_to_jagged: a row longer than the padded length.
  Guarded padded(randomBytes(DType::kFloat32, {2, 3}, gen));
  Guarded off(indexTensor({0, 2, 6}, DType::kInt32));
  Emulator emu;
  EXPECT_FALSE(emuPaddedToJagged(emu, padded.view(), off.view()).defined());
  ASSERT_EQ(emu.code(), DeviceErrorCode::kLengthTooLarge);
  EXPECT_EQ(describeDeviceError(emu.record),
            "segment 1 has length 4, more than the limit 3");
}

/// Random KJT shapes, incl. the edge cases: no samples, batch 1, zero
/// lengths only, many keys.
struct Shape2 {
  int64_t keys, batch, maxLength;
};
const std::vector<Shape2> &kjtShapes() {
  static const std::vector<Shape2> shapes = {{1, 1, 4},  {3, 1, 5}, {4, 5, 6},
                                             {2, 3, 0},  {3, 0, 3}, {64, 3, 4},
                                             {8, 300, 5}};
  return shapes;
}

TEST(JaggedEmulation, KjtPermuteMatchesCpu) {
  std::mt19937 gen(5);
  for (const Shape2 &sh : kjtShapes())
    for (bool weighted : {false, true})
      for (DType vt : {DType::kInt32, DType::kInt64})
        for (DType lt : {DType::kInt32, DType::kInt64}) {
          TestKjt in =
              randomKjt(sh.keys, sh.batch, weighted, gen, sh.maxLength);
          // A permutation of every key, then one that repeats and drops.
          std::vector<int64_t> full(sh.keys);
          std::iota(full.begin(), full.end(), 0);
          std::shuffle(full.begin(), full.end(), gen);
          std::uniform_int_distribution<int64_t> key(0, sh.keys - 1);
          std::vector<int64_t> mixed;
          for (int64_t i = 0; i < sh.keys + 2; ++i)
            mixed.push_back(key(gen));
          for (const auto &perm : {full, mixed, std::vector<int64_t>{}}) {
            TestKernelContext ctx;
            addKjtInputs(ctx, in, vt, lt);
            ctx.setNumOutputs(3);
            ctx.attrs().set("permutation", perm).set("num_keys", sh.keys);
            Status s = runKernel("kjt_permute", ctx);
            ASSERT_TRUE(s.isOk()) << s.toString();
            Emulator emu;
            std::vector<Tensor> got =
                emuPermute(emu, kjtTensors(in, vt, lt), sh.keys, perm);
            EXPECT_TRUE(emu.ok());
            std::vector<Tensor> want = cpuOutputs(ctx);
            for (int i = 0; i < 3; ++i)
              expectSameTensor(got[i], want[i],
                               "keys " + std::to_string(sh.keys) + " output " +
                                   std::to_string(i));
          }
        }
}

TEST(JaggedEmulation, KjtPermuteWithBadLengthsStaysInBounds) {
  // Lengths that sum past the values (and a negative one): the kernel
  // records the error and writes zeros instead of reading past the values.
  Guarded values(indexTensor({5, 6, 7}, DType::kInt64));
  Guarded lengths(indexTensor({2, -1, 4, 1}, DType::kInt32));
  Emulator emu;
  KjtTensors in{values.view(), lengths.view(), {}};
  std::vector<Tensor> got = emuPermute(emu, in, 2, {1, 0});
  EXPECT_EQ(emu.code(), DeviceErrorCode::kNegativeLength);
  ASSERT_EQ(got[0].numel(), 3); // a permutation of every key: N values
  std::vector<int64_t> v = toVector(got[0]);
  EXPECT_EQ(v, (std::vector<int64_t>{7, 0, 0})); // key 1 starts at value 2
  // A permutation that repeats keys reads its total back: the error ends it.
  Emulator emu2;
  EXPECT_TRUE(emuPermute(emu2, in, 2, {1, 1}).empty());
  EXPECT_EQ(emu2.code(), DeviceErrorCode::kNegativeLength);
}

TEST(JaggedEmulation, KjtSplitMatchesCpu) {
  std::mt19937 gen(6);
  for (const Shape2 &sh : kjtShapes())
    for (bool weighted : {false, true}) {
      TestKjt in = randomKjt(sh.keys, sh.batch, weighted, gen, sh.maxLength);
      std::vector<std::vector<int64_t>> splits = {{sh.keys}};
      if (sh.keys >= 3)
        splits.push_back({1, 0, sh.keys - 1});
      if (sh.keys >= 2)
        splits.push_back({sh.keys - 1, 1});
      for (const auto &counts : splits) {
        TestKernelContext ctx;
        addKjtInputs(ctx, in, DType::kInt64, DType::kInt32);
        ctx.setNumOutputs(3 * static_cast<int>(counts.size()));
        ctx.attrs().set("key_counts", counts);
        Status s = runKernel("kjt_split", ctx);
        ASSERT_TRUE(s.isOk()) << s.toString();
        Emulator emu;
        std::vector<Tensor> got =
            emuSplit(emu, kjtTensors(in, DType::kInt64, DType::kInt32), counts);
        EXPECT_TRUE(emu.ok());
        std::vector<Tensor> want = cpuOutputs(ctx);
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < want.size(); ++i)
          expectSameTensor(got[i], want[i], "output " + std::to_string(i));
      }
    }
}

TEST(JaggedEmulation, KjtConcatValidatesEveryKjt) {
  // kjt_concat's device work is the lengths check of each KJT (the copies
  // are cudaMemcpyAsync): a KJT whose lengths do not match is recorded.
  std::mt19937 gen(7);
  TestKjt a = randomKjt(2, 3, false, gen), b = randomKjt(3, 3, false, gen);
  for (const TestKjt *k : {&a, &b}) {
    Emulator emu;
    emu.offsets(indexTensor(k->lengths, DType::kInt32),
                static_cast<int64_t>(k->values.size()));
    EXPECT_TRUE(emu.ok());
  }
  Emulator emu;
  emu.offsets(indexTensor(b.lengths, DType::kInt32),
              static_cast<int64_t>(b.values.size()) + 1);
  EXPECT_EQ(emu.code(), DeviceErrorCode::kLengthsSumMismatch);
}

/// Ids for bucketize: in range, past block * buckets, negative.
TestKjt bucketizeInput(int64_t keys, int64_t batch, bool weighted,
                       std::mt19937 &gen) {
  TestKjt in = randomKjt(keys, batch, weighted, gen, 6, 150);
  std::uniform_int_distribution<int> pick(0, 9);
  for (auto &id : in.values) {
    int p = pick(gen);
    if (p == 0)
      id = -id - 1;
    else if (p == 1)
      id += 100000;
  }
  return in;
}

TEST(JaggedEmulation, KjtBucketizeMatchesCpu) {
  std::mt19937 gen(8);
  for (const Shape2 &sh : kjtShapes())
    for (bool weighted : {false, true})
      for (DType vt : {DType::kInt32, DType::kInt64})
        for (DType lt : {DType::kInt32, DType::kInt64})
          for (int64_t buckets : {1, 2, 7}) {
            TestKjt in = bucketizeInput(sh.keys, sh.batch, weighted, gen);
            std::vector<int64_t> blocks(sh.keys);
            std::uniform_int_distribution<int64_t> block(0, 40);
            for (auto &b : blocks)
              b = block(gen); // 0: every id takes the cyclic path
            TestKernelContext ctx;
            addKjtInputs(ctx, in, vt, lt);
            ctx.setNumOutputs(4);
            ctx.attrs().set("block_sizes", blocks).set("num_buckets", buckets);
            Status s = runKernel("kjt_bucketize", ctx);
            ASSERT_TRUE(s.isOk()) << s.toString();
            Emulator emu;
            std::vector<Tensor> got =
                emuBucketize(emu, kjtTensors(in, vt, lt), blocks, buckets);
            EXPECT_TRUE(emu.ok());
            std::vector<Tensor> want = cpuOutputs(ctx);
            for (int i = 0; i < 4; ++i)
              expectSameTensor(got[i], want[i],
                               "keys " + std::to_string(sh.keys) + " B " +
                                   std::to_string(sh.batch) + " buckets " +
                                   std::to_string(buckets) + " output " +
                                   std::to_string(i));
          }
}

TEST(JaggedEmulation, KjtBucketizeWithBadLengthsStaysInBounds) {
  Guarded values(indexTensor({1, 2, 3}, DType::kInt64));
  Guarded lengths(indexTensor({2, 5}, DType::kInt64));
  Emulator emu;
  KjtTensors in{values.view(), lengths.view(), {}};
  std::vector<Tensor> got = emuBucketize(emu, in, {2, 2}, 2);
  EXPECT_EQ(emu.code(), DeviceErrorCode::kLengthsSumMismatch);
  EXPECT_EQ(got[0].numel(), 3);
}

Bags randomBags(int64_t B, bool includeLast, bool weighted, DType idt, DType ot,
                int64_t rows, std::mt19937 &gen) {
  std::vector<int64_t> lengths = randomLengths(B, 4, gen);
  std::vector<int64_t> offsets = offsetsOf(lengths);
  int64_t n = offsets.back();
  // With include_last_offset the ids may go on past the last offset.
  const int64_t extra =
      includeLast ? std::uniform_int_distribution<int64_t>(0, 2)(gen) : 0;
  if (!includeLast)
    offsets.pop_back();
  Bags g;
  g.ids = indexTensor(randomIds(n + extra, rows, gen), idt);
  g.offsets = indexTensor(offsets, ot);
  if (weighted)
    g.weights = floatTensor(randomWeights(n + extra, gen));
  g.includeLast = includeLast;
  return g;
}

void addBags(TestKernelContext &ctx, const std::vector<Bags> &bags) {
  for (const Bags &g : bags) {
    ctx.addInput(g.ids).addInput(g.offsets);
    if (g.weights.defined())
      ctx.addInput(g.weights);
    else
      ctx.addAbsentInput();
  }
}

TEST(JaggedEmulation, KjtFromBagsMatchesCpu) {
  std::mt19937 gen(9);
  for (int64_t F : {1, 3, 40})
    for (int64_t B : {0, 1, 5})
      for (bool weighted : {false, true})
        for (int mode : {0, 1, 2}) { // include_last: none, all, mixed
          std::vector<Bags> bags;
          std::vector<int64_t> includeLast;
          for (int64_t f = 0; f < F; ++f) {
            bool il = mode == 1 || (mode == 2 && f % 2 == 1);
            bags.push_back(randomBags(B, il, weighted, DType::kInt64,
                                      f % 2 ? DType::kInt32 : DType::kInt64, 50,
                                      gen));
            includeLast.push_back(il);
          }
          for (DType lt : {DType::kInt32, DType::kInt64}) {
            TestKernelContext ctx;
            addBags(ctx, bags);
            ctx.setNumOutputs(3);
            ctx.attrs()
                .set("include_last_offset", includeLast)
                .set("num_rows", std::vector<int64_t>(F, 50))
                .set("lengths_dtype", std::string(dtypeName(lt)));
            Status s = runKernel("kjt_from_bags", ctx);
            ASSERT_TRUE(s.isOk()) << s.toString();
            Emulator emu;
            std::vector<Tensor> got =
                emuFromBags(emu, bags, lt, std::vector<int64_t>(F, 50));
            EXPECT_TRUE(emu.ok()) << describeDeviceError(emu.record);
            ASSERT_EQ(got.size(), 3u);
            std::vector<Tensor> want = cpuOutputs(ctx);
            for (int i = 0; i < 3; ++i)
              expectSameTensor(got[i], want[i],
                               "F " + std::to_string(F) + " B " +
                                   std::to_string(B) + " mode " +
                                   std::to_string(mode) + " output " +
                                   std::to_string(i));
          }
        }
}

TEST(JaggedEmulation, KjtFromBagsChecksOnlyIdsInBags) {
  // No bags (offsets [] without include_last_offset), and ids past the last
  // offset with it: those ids are not part of the KJT and not checked.
  Bags none{indexTensor({5, 99}, DType::kInt64), indexTensor({}, DType::kInt64),
            Tensor(), false};
  Bags past{indexTensor({3, 99}, DType::kInt64),
            indexTensor({0, 1}, DType::kInt32), Tensor(), true};
  for (const Bags &g : {none, past}) {
    TestKernelContext ctx;
    addBags(ctx, {g});
    ctx.setNumOutputs(3);
    ctx.attrs()
        .set("include_last_offset", std::vector<int64_t>{g.includeLast})
        .set("num_rows", std::vector<int64_t>{10});
    Status s = runKernel("kjt_from_bags", ctx);
    ASSERT_TRUE(s.isOk()) << s.toString();
    Emulator emu;
    std::vector<Tensor> got = emuFromBags(emu, {g}, DType::kInt64, {10});
    EXPECT_TRUE(emu.ok()) << describeDeviceError(emu.record);
    ASSERT_EQ(got.size(), 3u);
    for (int i = 0; i < 3; ++i)
      expectSameTensor(got[i], ctx.output(i), "output " + std::to_string(i));
  }
}

TEST(JaggedEmulation, KjtFromBagsRecordsBadIdsAndOffsets) {
  // An id outside the table: the record names the feature, position and
  // sample, like the CPU kernel's message.
  {
    Bags g0, g1;
    g0.ids = indexTensor({1, 2, 3}, DType::kInt64);
    g0.offsets = indexTensor({0, 1}, DType::kInt64);
    g1.ids = indexTensor({4, 9, 5}, DType::kInt64);
    g1.offsets = indexTensor({0, 1}, DType::kInt32);
    Guarded ids1(g1.ids);
    g1.ids = ids1.view();
    Emulator emu;
    emuFromBags(emu, {g0, g1}, DType::kInt64, {10, 8});
    ASSERT_EQ(emu.code(), DeviceErrorCode::kFeatureIdOutOfRange);
    EXPECT_EQ(describeDeviceError(emu.record),
              "feature 1: id 9 at position 1 (sample 1) is outside the "
              "table's 8 rows");
    EXPECT_EQ(statusCodeOf(emu.code()), StatusCode::kOutOfRange);
    TestKernelContext ctx;
    addBags(ctx, {g0, g1});
    ctx.setNumOutputs(3);
    ctx.attrs()
        .set("include_last_offset", std::vector<int64_t>{0, 0})
        .set("num_rows", std::vector<int64_t>{10, 8});
    Status s = runKernel("kjt_from_bags", ctx);
    ASSERT_FALSE(s.isOk());
    EXPECT_NE(s.message().find("feature 1: id 9 at position 1 (sample 1) is "
                               "outside the table's 8 rows"),
              std::string::npos)
        << s.message();
  }
  // Negative ids and ids past the last offset (not covered: not checked).
  {
    Bags g;
    g.ids = indexTensor({0, -3, 77}, DType::kInt32);
    g.offsets = indexTensor({0, 1, 2}, DType::kInt64);
    g.includeLast = true;
    Emulator emu;
    emuFromBags(emu, {g}, DType::kInt64, {10});
    ASSERT_EQ(emu.code(), DeviceErrorCode::kFeatureIdOutOfRange);
    EXPECT_EQ(emu.record.a, -3);
    EXPECT_EQ(unpackSample(emu.record.c), 1);
  }
  struct Case {
    std::vector<int64_t> offsets;
    bool includeLast;
    std::string message;
  };
  for (const Case &c :
       {Case{{1, 2}, false, "feature 0: offsets[0] must be 0, got 1"},
        Case{{0, 3, 2},
             false,
             "feature 0: offsets decrease at bag 1 (offsets[2] = 2"},
        Case{{0, 2, 9},
             true,
             "feature 0: offsets[2] = 9 (end of bag 1) is past the 4 "
             "indices"},
        Case{{0, 5},
             false,
             "feature 0: offsets[1] = 5 (end of bag 0) is past the 4 "
             "indices"}}) {
    Guarded ids(indexTensor({1, 2, 3, 4}, DType::kInt64));
    Guarded offsets(indexTensor(c.offsets, DType::kInt64));
    Bags g{ids.view(), offsets.view(), Tensor(), c.includeLast};
    Emulator emu;
    std::vector<Tensor> got = emuFromBags(emu, {g}, DType::kInt64, {10});
    ASSERT_EQ(emu.code(), DeviceErrorCode::kFeatureOffsetInvalid);
    EXPECT_NE(describeDeviceError(emu.record).find(c.message),
              std::string::npos)
        << describeDeviceError(emu.record);
    TestKernelContext ctx;
    addBags(ctx, {g});
    ctx.setNumOutputs(3);
    ctx.attrs().set("include_last_offset",
                    std::vector<int64_t>{c.includeLast ? 1 : 0});
    EXPECT_FALSE(runKernel("kjt_from_bags", ctx).isOk());
  }
}

//===----------------------------------------------------------------------===//
// Host-side launch helpers (jagged_launch.cu; no CUDA call is made)
//===----------------------------------------------------------------------===//

TEST(JaggedLaunch, GridsFitAnIntForAnySize) {
  KernelEnv env;
  env.multiprocessors = 132;
  EXPECT_EQ(blocksFor(1, env), 1);
  EXPECT_EQ(blocksFor(256, env), 1);
  EXPECT_EQ(blocksFor(257, env), 2);
  EXPECT_EQ(blocksFor(int64_t{1} << 40, env), 132 * 16);
  EXPECT_EQ(blocksFor(std::numeric_limits<int64_t>::max(), env), 132 * 16);
  env.multiprocessors = 0; // never a zero grid
  EXPECT_EQ(blocksFor(1000000, env), 16);
}

TEST(JaggedLaunch, DeviceErrorStatusNamesTheInstruction) {
  KernelEnv env;
  env.instruction = 7;
  DeviceErrorRecord record{};
  EXPECT_TRUE(deviceErrorStatus(record, env, "instr 7").isOk());
  record.code = static_cast<int32_t>(DeviceErrorCode::kFeatureIdOutOfRange);
  record.instruction = 7;
  record.a = 9;
  record.b = 1;
  record.c = packFeatureSample(3, 5);
  record.d = 8;
  Status s = deviceErrorStatus(record, env, "instr 7");
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(), "instr 7: feature 3: id 9 at position 1 (sample 5) "
                         "is outside the table's 8 rows");
  record.instruction = 4; // raised by an earlier kernel of the run
  EXPECT_NE(deviceErrorStatus(record, env, "instr 7")
                .message()
                .find("(found by instruction 4)"),
            std::string::npos);
  EXPECT_EQ(
      unpackFeature(packFeatureSample((1 << 23) - 1, (int64_t{1} << 40) - 1)),
      (1 << 23) - 1);
}

TEST(JaggedLaunch, ReadBackNeedsEnoughStaging) {
  TestKernelContext ctx;
  KernelEnv env; // no staging memory
  auto r = readBackInts(ctx, env, nullptr, 4);
  ASSERT_FALSE(r.isOk());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
  EXPECT_NE(r.status().message().find("host staging memory"),
            std::string::npos);
  // A CUDA kernel run without a device context says so.
  auto e = envOf(ctx, "kjt_bucketize");
  ASSERT_FALSE(e.isOk());
  EXPECT_NE(e.status().message().find("kjt_bucketize"), std::string::npos);
}

} // namespace

//===- collective_cases.h - Data and launches of collective tests -*- C++
//-*-===//
//
// What the CPU collective kernel tests (collective_test) and the emulated
// device code of the CUDA collectives (gpu/collectives_emulation_test)
// run on: the batches and pooled columns per rank, random payloads, column
// segments in a chosen order, and pooled_all_to_all / reduce_scatter /
// all_reduce launched on threads as ranks, each rank's output handed to a
// check on its own thread.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TESTS_SUPPORT_COLLECTIVE_CASES_H
#define EMBER_TESTS_SUPPORT_COLLECTIVE_CASES_H

#include "collective_ranks.h"
#include "ember/tensor.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace ember::testing {

/// Batch sizes per rank: uneven, with an empty rank when there are several.
inline std::vector<int64_t> batchesFor(int world) {
  switch (world) {
  case 1:
    return {5};
  case 2:
    return {3, 0};
  default:
    return {4, 1, 0, 6};
  }
}

/// Columns per position of the pooled_all_to_all cases: uneven, with a
/// position of none when there are several.
inline std::vector<int64_t> pooledDimsFor(int world) {
  switch (world) {
  case 1:
    return {4};
  case 2:
    return {3, 5};
  default:
    return {2, 0, 4, 3};
  }
}

/// {0, v[0], v[0] + v[1], ...}: where each entry's run starts, the total
/// last.
inline std::vector<int64_t> prefixSums(const std::vector<int64_t> &v) {
  std::vector<int64_t> o(v.size() + 1, 0);
  for (size_t i = 0; i < v.size(); ++i)
    o[i + 1] = o[i] + v[i];
  return o;
}

/// `n` floats drawn uniformly from [-bound, bound).
inline std::vector<float> randomFloats(std::mt19937 &rng, size_t n,
                                       float bound) {
  std::uniform_real_distribution<float> d(-bound, bound);
  std::vector<float> v(n);
  for (float &x : v)
    x = d(rng);
  return v;
}

/// The elements of a float32 tensor.
inline std::vector<float> floatsOf(const Tensor &t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

/// segment_columns for segments of `widths` placed side by side in the
/// order `order` (a permutation of the segment indices).
inline std::vector<int64_t> segmentColumns(const std::vector<int64_t> &widths,
                                           const std::vector<size_t> &order) {
  std::vector<int64_t> columns(widths.size());
  int64_t column = 0;
  for (size_t s : order) {
    columns[s] = column;
    column += widths[s];
  }
  return columns;
}

/// What a launch hands each rank's thread: its rank and its output.
using RankOutputCheck = std::function<void(int, const Tensor &)>;

/// Runs `kernel`, the collective `kind` named `group`, on `world` ranks:
/// addInputs(r, ctx) gives rank r's inputs, `attrs` are the kernel's.
/// check(r, output) runs on rank r's thread once the kernel succeeded.
inline void runCollectiveRanks(
    const std::string &group, CollectiveInfo::Kind kind,
    const std::string &kernel, int world, const Attributes &attrs,
    const std::function<void(int, CollectiveContext &)> &addInputs,
    const RankOutputCheck &check) {
  runRanks(world, 30, [&](int r, Communicator *comm) {
    CollectiveContext ctx(worldCollective(kind, world, r, group), comm);
    addInputs(r, ctx);
    ctx.setNumOutputs(1);
    ctx.attrs() = attrs;
    Status s = runKernel(kernel, ctx);
    ASSERT_TRUE(s.isOk()) << "rank " << r << ": " << s.toString();
    check(r, ctx.output(0));
  });
}

/// pooled_all_to_all named `group` on x.size() ranks: rank r sends x[r],
/// [sum of batches, dims[r]], and receives its batches[r] rows; `attrs` are
/// the kernel's (dim_per_rank among them). check(r, output) runs on rank r's
/// thread once the kernel succeeded.
inline void runPooledAllToAllRanks(const std::string &group,
                                   const std::vector<int64_t> &batches,
                                   const std::vector<int64_t> &dims,
                                   const std::vector<std::vector<float>> &x,
                                   const Attributes &attrs,
                                   const RankOutputCheck &check) {
  const int w = static_cast<int>(x.size());
  const int64_t total = prefixSums(batches)[w];
  std::vector<std::vector<float>> refs(w); // only their row counts matter
  for (int r = 0; r < w; ++r)
    refs[r].resize(batches[r]);
  runCollectiveRanks(
      group, CollectiveInfo::Kind::kAllToAll, "pooled_all_to_all", w, attrs,
      [&](int r, CollectiveContext &ctx) {
        ctx.addInput(
            Tensor::view(x[r].data(), DType::kFloat32, {total, dims[r]}));
        ctx.addInput(
            Tensor::view(refs[r].data(), DType::kFloat32, {batches[r]}));
      },
      check);
}

/// reduce_scatter named `group` on x.size() ranks: rank r sends x[r], [sum
/// of batches, rowDims...], and receives its batches[r] rows reduced over
/// the ranks; `attrs` are the kernel's (reduce among them). check(r, output)
/// runs on rank r's thread once the kernel succeeded.
inline void runReduceScatterRanks(const std::string &group,
                                  const std::vector<int64_t> &batches,
                                  const std::vector<int64_t> &rowDims,
                                  const std::vector<std::vector<float>> &x,
                                  const Attributes &attrs,
                                  const RankOutputCheck &check) {
  const int w = static_cast<int>(x.size());
  std::vector<int64_t> dims = {prefixSums(batches)[w]};
  dims.insert(dims.end(), rowDims.begin(), rowDims.end());
  auto shape = Shape::fromDims(dims.data(), dims.size());
  ASSERT_TRUE(shape.isOk()) << shape.status().toString();
  std::vector<std::vector<int32_t>> refs(w); // only their row counts matter
  for (int r = 0; r < w; ++r)
    refs[r].resize(batches[r]);
  runCollectiveRanks(
      group, CollectiveInfo::Kind::kReduceScatter, "reduce_scatter", w, attrs,
      [&](int r, CollectiveContext &ctx) {
        ctx.addInput(Tensor::view(x[r].data(), DType::kFloat32, *shape));
        ctx.addInput(Tensor::view(refs[r].data(), DType::kInt32, {batches[r]}));
      },
      check);
}

/// all_reduce named `group` of x[r] (1-D) on x.size() ranks with `attrs`;
/// check(r, output) runs on rank r's thread once the kernel succeeded.
inline void runAllReduceRanks(const std::string &group,
                              const std::vector<std::vector<float>> &x,
                              const Attributes &attrs,
                              const RankOutputCheck &check) {
  runCollectiveRanks(
      group, CollectiveInfo::Kind::kAllReduce, "all_reduce",
      static_cast<int>(x.size()), attrs,
      [&](int r, CollectiveContext &ctx) {
        ctx.addInput(Tensor::view(x[r].data(), DType::kFloat32,
                                  {static_cast<int64_t>(x[r].size())}));
      },
      check);
}

} // namespace ember::testing

#endif // EMBER_TESTS_SUPPORT_COLLECTIVE_CASES_H

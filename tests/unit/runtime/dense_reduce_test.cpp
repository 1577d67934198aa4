//===- dense_reduce_test.cpp - reduce_sum/max vs naive loops --------------===//
#include "dense_test_support.h"

#include <cmath>
#include <limits>

using namespace ember;
using namespace ember::testing;

namespace {

/// Naive reduction: output index = input index with reduced dims zeroed.
std::vector<double> naiveReduce(const std::string &op, const Tensor &x,
                                const std::vector<bool> &reduced) {
  std::vector<int64_t> outDims;
  for (int i = 0; i < x.rank(); ++i)
    outDims.push_back(reduced[i] ? 1 : x.dim(i));
  Shape outShape = *Shape::fromDims(outDims.data(), outDims.size());
  std::vector<double> acc(static_cast<size_t>(outShape.numel()),
                          op == "reduce_max" ? -INFINITY : 0.0);
  for (int64_t i = 0; i < x.numel(); ++i) {
    std::vector<int64_t> idx = unravel(i, x.shape());
    int64_t o = 0;
    for (int k = 0; k < x.rank(); ++k)
      o = o * outShape[k] + (reduced[k] ? 0 : idx[k]);
    double v = x.data<float>()[i];
    acc[o] = op == "reduce_max" ? std::max(acc[o], v) : acc[o] + v;
  }
  return acc;
}

TEST(Reduce, MatchesNaiveForAxesAndKeepdims) {
  uint32_t seed = 1;
  struct Case {
    Shape x;
    std::vector<int64_t> axes;
  };
  const Case cases[] = {
      {{4, 5}, {1}},       {{4, 5}, {0}},     {{4, 5}, {}},
      {{2, 3, 4}, {0, 2}}, {{2, 3, 4}, {-1}}, {{2, 3, 4, 5}, {1, 2}},
      {{1, 7}, {0}},       {{3, 1, 2}, {1}},  {{6}, {0}},
      {{300, 129}, {0}},   {{0, 3}, {1}},     {{2, 0, 3}, {1}},
      // The middle-axis path: [outer, reduced, inner] with inner kept.
      {{9, 32, 64}, {1}},  {{5, 7, 3}, {-2}}, {{33, 17}, {0}},
      {{4, 2, 3, 5}, {1, 2}},
  };
  for (const char *op : {"reduce_sum", "reduce_max"}) {
    for (const Case &c : cases) {
      std::vector<bool> reduced(c.x.rank(), c.axes.empty());
      bool emptyExtent = false;
      for (int64_t a : c.axes)
        reduced[a < 0 ? a + c.x.rank() : a] = true;
      for (int i = 0; i < c.x.rank(); ++i)
        emptyExtent |= reduced[i] && c.x[i] == 0;
      Tensor x = randomFloats(c.x, seed++, -2.f, 2.f);
      for (int64_t keep : {0, 1}) {
        auto setup = [&](TestKernelContext &ctx) {
          ctx.addInput(x);
          if (!c.axes.empty())
            ctx.attrs().set("axes", c.axes);
          ctx.attrs().set("keepdims", keep);
        };
        std::string what = std::string(op) + " " + c.x.toString() + " keep " +
                           std::to_string(keep);
        if (emptyExtent && std::string(op) == "reduce_max") {
          expectError(runStatus(op, setup), {"test kernel", "empty axis"});
          continue;
        }
        std::vector<double> ref = naiveReduce(op, x, reduced);
        Tensor one = runOk(op, setup, 1), four = runOk(op, setup, 4);
        std::vector<int64_t> dims;
        for (int i = 0; i < c.x.rank(); ++i)
          if (!reduced[i] || keep)
            dims.push_back(reduced[i] ? 1 : c.x[i]);
        ASSERT_EQ(one.shape(), *Shape::fromDims(dims.data(), dims.size()))
            << what;
        expectClose(one, ref, 1e-5, what);
        expectIdentical(one, four, what);
      }
    }
  }
}

TEST(Reduce, MalformedAttributesAreClearErrors) {
  Tensor x = randomFloats({2, 3}, 1);
  expectError(runStatus("reduce_sum",
                        [&](TestKernelContext &c) {
                          c.addInput(x);
                          c.attrs().set("axes", std::vector<int64_t>{2});
                        }),
              {"test kernel", "axes", "out of range"});
  expectError(runStatus("reduce_sum",
                        [&](TestKernelContext &c) {
                          c.addInput(x);
                          c.attrs().set("axes", std::vector<int64_t>{1, -1});
                        }),
              {"twice"});
  expectError(runStatus("reduce_sum",
                        [&](TestKernelContext &c) {
                          c.addInput(x);
                          c.attrs().set("axes", int64_t{1});
                        }),
              {"attribute 'axes' of kernel 'reduce_sum' must be a list of "
               "ints"});
  expectError(runStatus("reduce_max",
                        [&](TestKernelContext &c) {
                          c.addInput(x);
                          c.attrs().set("keepdims", int64_t{3});
                        }),
              {"keepdims", "0 or 1"});
}

} // namespace

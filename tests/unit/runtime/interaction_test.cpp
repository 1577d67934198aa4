//===- interaction_test.cpp - dot_interaction vs hand and naive references ===//
#include "dense_test_support.h"

using namespace ember;
using namespace ember::testing;

namespace {

Tensor runInteraction(const Tensor &dense, const Tensor &sparse, int64_t f,
                      int64_t self, const char *order, int threads = 1) {
  return runOk(
      "dot_interaction",
      [&](TestKernelContext &c) {
        c.addInput(dense).addInput(sparse);
        c.attrs().set("num_features", f);
        c.attrs().set("self_interaction", self);
        if (order)
          c.attrs().set("pair_order", std::string(order));
      },
      threads);
}

// T rows t0 = (1, 0) (dense), t1 = (0, 1), t2 = (1, 1), t3 = (2, -1): the
// expected values were computed by hand and checked against torch (the DLRM
// reference's li/lj and TorchRec InteractionArch's triu_indices(offset=1)).
TEST(DotInteraction, HandWrittenExampleInEveryOrder) {
  Tensor dense = floats({1, 2}, {1, 0});
  Tensor sparse = floats({1, 6}, {0, 1, 1, 1, 2, -1});
  // DLRM: (1,0) (2,0) (2,1) (3,0) (3,1) (3,2)
  expectClose(runInteraction(dense, sparse, 3, 0, nullptr),
              {1, 0, 0, 1, 1, 2, -1, 1});
  expectClose(runInteraction(dense, sparse, 3, 0, "dlrm"),
              {1, 0, 0, 1, 1, 2, -1, 1});
  // DLRM with self interaction: (0,0) (1,0) (1,1) (2,0) (2,1) (2,2) (3,0) ...
  expectClose(runInteraction(dense, sparse, 3, 1, nullptr),
              {1, 0, 1, 0, 1, 1, 1, 2, 2, -1, 1, 5});
  // TorchRec: (0,1) (0,2) (0,3) (1,2) (1,3) (2,3)
  expectClose(runInteraction(dense, sparse, 3, 0, "torchrec"),
              {1, 0, 0, 1, 2, 1, -1, 1});
  expectClose(runInteraction(dense, sparse, 3, 1, "torchrec"),
              {1, 0, 1, 0, 1, 2, 1, 1, -1, 2, 1, 5});
}

std::vector<double> naiveInteraction(const Tensor &dense, const Tensor &sparse,
                                     int64_t f, bool self, bool torchrec) {
  int64_t b = dense.dim(0), d = dense.dim(1), n = f + 1;
  std::vector<double> out;
  for (int64_t s = 0; s < b; ++s) {
    std::vector<std::vector<double>> t(n, std::vector<double>(d));
    for (int64_t k = 0; k < d; ++k)
      t[0][k] = dense.data<float>()[s * d + k];
    for (int64_t i = 1; i < n; ++i)
      for (int64_t k = 0; k < d; ++k)
        t[i][k] = sparse.data<float>()[s * f * d + (i - 1) * d + k];
    auto z = [&](int64_t i, int64_t j) {
      double acc = 0;
      for (int64_t k = 0; k < d; ++k)
        acc += t[i][k] * t[j][k];
      return acc;
    };
    for (int64_t k = 0; k < d; ++k)
      out.push_back(t[0][k]);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        bool take =
            torchrec ? (self ? j >= i : j > i) : (self ? j <= i : j < i);
        if (take)
          out.push_back(z(i, j));
      }
  }
  return out;
}

TEST(DotInteraction, RandomMatchesNaiveAcrossShapesOrdersAndThreads) {
  uint32_t seed = 10;
  struct Case {
    int64_t b, f, d;
  };
  for (Case c :
       {Case{1, 1, 1}, Case{1, 26, 128}, Case{7, 3, 5}, Case{64, 8, 16},
        Case{5, 0, 4}, Case{0, 3, 4}, Case{3, 2, 0}, Case{33, 13, 9}}) {
    Tensor dense = randomFloats({c.b, c.d}, seed++);
    Tensor sparse = randomFloats({c.b, c.f * c.d}, seed++);
    for (int64_t self : {0, 1}) {
      for (const char *order : {"dlrm", "torchrec"}) {
        bool torchrec = std::string(order) == "torchrec";
        std::vector<double> ref =
            naiveInteraction(dense, sparse, c.f, self, torchrec);
        Tensor one = runInteraction(dense, sparse, c.f, self, order, 1);
        Tensor four = runInteraction(dense, sparse, c.f, self, order, 4);
        int64_t n = c.f + 1, pairs = self ? n * (n + 1) / 2 : n * (n - 1) / 2;
        std::string what = "B" + std::to_string(c.b) + " F" +
                           std::to_string(c.f) + " D" + std::to_string(c.d) +
                           " self " + std::to_string(self) + " " + order;
        ASSERT_EQ(one.shape(), Shape({c.b, c.d + pairs})) << what;
        expectClose(one, ref, 1e-5 * std::max<double>(1, c.d), what);
        expectIdentical(one, four, what);
      }
    }
  }
}

TEST(DotInteraction, MalformedInputsAreClearErrors) {
  Tensor dense = randomFloats({4, 8}, 1), sparse = randomFloats({4, 24}, 2);
  auto run = [&](const Tensor &d, const Tensor &s, int64_t f) {
    return runStatus("dot_interaction", [&](TestKernelContext &c) {
      c.addInput(d).addInput(s);
      c.attrs().set("num_features", f);
    });
  };
  expectError(run(dense, sparse, 2),
              {"test kernel", "sparse must be [4, 2 * 8]", "[4, 24]"});
  expectError(run(dense, randomFloats({3, 24}, 3), 3), {"sparse must be"});
  expectError(run(randomFloats({4, 8, 1}, 3), sparse, 3),
              {"dense must have rank 2"});
  expectError(run(dense, randomInts({4, 24}, 3, 0, 1), 3),
              {"float32", "int64[4, 24]"});
  expectError(runStatus("dot_interaction",
                        [&](TestKernelContext &c) {
                          c.addInput(dense).addInput(sparse);
                        }),
              {"kernel 'dot_interaction' needs the attribute 'num_features'"});
  expectError(run(dense, sparse, -1), {"num_features", ">= 0"});
  expectError(runStatus("dot_interaction",
                        [&](TestKernelContext &c) {
                          c.addInput(dense).addInput(sparse);
                          c.attrs().set("num_features", int64_t{3});
                          c.attrs().set("pair_order", std::string("upper"));
                        }),
              {"pair_order", "upper"});
  expectError(runStatus("dot_interaction",
                        [&](TestKernelContext &c) {
                          c.addInput(dense).addInput(sparse);
                          c.attrs().set("num_features", int64_t{3});
                          c.attrs().set("self_interaction", int64_t{2});
                        }),
              {"self_interaction", "0 or 1"});
}

} // namespace

//===- shape_index_test.cpp - gather gather_elements scatter_nd vs naive --===//
#include "dense_test_support.h"

using namespace ember;
using namespace ember::testing;

namespace {

TEST(Gather, MatchesNaiveOnEveryAxisWithNegativeIndices) {
  Tensor data = randomFloats({4, 5, 6}, 1);
  uint32_t seed = 2;
  for (int axis = -3; axis < 3; ++axis) {
    int a = axis < 0 ? axis + 3 : axis;
    int64_t dim = data.dim(a);
    for (DType idxType : {DType::kInt64, DType::kInt32}) {
      for (Shape idxShape : {Shape{3}, Shape{2, 2}, Shape{}, Shape{0}}) {
        Tensor idx = randomInts(idxShape, seed++, -dim, dim - 1, idxType);
        for (int threads : {1, 4}) {
          Tensor y = runOk(
              "gather",
              [&](TestKernelContext &c) {
                c.addInput(data).addInput(idx);
                c.attrs().set("axis", int64_t{axis});
              },
              threads);
          std::vector<int64_t> dims;
          for (int k = 0; k < a; ++k)
            dims.push_back(data.dim(k));
          for (int64_t d : idxShape)
            dims.push_back(d);
          for (int k = a + 1; k < 3; ++k)
            dims.push_back(data.dim(k));
          ASSERT_EQ(y.shape(), *Shape::fromDims(dims.data(), dims.size()));
          for (int64_t i = 0; i < y.numel(); ++i) {
            std::vector<int64_t> o = unravel(i, y.shape());
            // Split o into data-prefix, index position, data-suffix.
            std::vector<int64_t> src(3);
            for (int k = 0; k < a; ++k)
              src[k] = o[k];
            int64_t flat = 0;
            for (int k = 0; k < idxShape.rank(); ++k)
              flat = flat * idxShape[k] + o[a + k];
            int64_t v = idxType == DType::kInt64 ? idx.data<int64_t>()[flat]
                                                 : idx.data<int32_t>()[flat];
            src[a] = v < 0 ? v + dim : v;
            for (int k = a + 1; k < 3; ++k)
              src[k] = o[k - 1 + idxShape.rank()];
            ASSERT_EQ(y.data<float>()[i],
                      data.data<float>()[(src[0] * 5 + src[1]) * 6 + src[2]]);
          }
        }
      }
    }
  }
}

TEST(Gather, EmbeddingStyleRowsAtTheTableEdge) {
  Tensor table = randomInts({10, 3}, 3, 0, 1000);
  Tensor ids = int64s({4}, {0, 9, -1, -10});
  Tensor y = runOk(
      "gather", [&](TestKernelContext &c) { c.addInput(table).addInput(ids); });
  std::vector<int64_t> rows = {0, 9, 9, 0};
  for (int r = 0; r < 4; ++r)
    for (int k = 0; k < 3; ++k)
      EXPECT_EQ(y.data<int64_t>()[r * 3 + k],
                table.data<int64_t>()[rows[r] * 3 + k]);
}

TEST(Gather, OutOfRangeIndexNamesIt) {
  Tensor data = randomFloats({5, 2}, 1);
  Status s = runStatus("gather", [&](TestKernelContext &c) {
    c.addInput(data).addInput(int64s({3}, {1, 5, 0}));
  });
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  expectError(s, {"test kernel", "index 5", "position 1", "axis 0 of size 5"});
  expectError(runStatus("gather",
                        [&](TestKernelContext &c) {
                          c.addInput(data).addInput(int64s({1}, {-6}));
                        }),
              {"index -6"});
  expectError(runStatus("gather",
                        [&](TestKernelContext &c) {
                          c.addInput(data).addInput(randomFloats({1}, 2));
                        }),
              {"indices must be int32 or int64", "float32[1]"});
  expectError(runStatus("gather",
                        [&](TestKernelContext &c) {
                          c.addInput(data).addInput(int64s({1}, {0}));
                          c.attrs().set("axis", int64_t{2});
                        }),
              {"axis", "out of range"});
}

TEST(GatherElements, MatchesNaive) {
  Tensor data = randomInts({4, 5}, 4, -100, 100);
  for (int axis : {0, 1, -1}) {
    int a = axis < 0 ? axis + 2 : axis;
    Tensor idx = randomInts({3, 5}, 5 + axis, -data.dim(a), data.dim(a) - 1);
    Tensor y = runOk("gather_elements", [&](TestKernelContext &c) {
      c.addInput(data).addInput(idx);
      c.attrs().set("axis", int64_t{axis});
    });
    ASSERT_EQ(y.shape(), Shape({3, 5}));
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 5; ++j) {
        int64_t v = idx.data<int64_t>()[i * 5 + j];
        if (v < 0)
          v += data.dim(a);
        int64_t src = a == 0 ? v * 5 + j : i * 5 + v;
        ASSERT_EQ(y.data<int64_t>()[i * 5 + j], data.data<int64_t>()[src]);
      }
  }
  expectError(runStatus("gather_elements",
                        [&](TestKernelContext &c) {
                          c.addInput(data).addInput(int64s({1, 1}, {4}));
                        }),
              {"test kernel", "index 4", "axis 0 of size 4"});
  expectError(runStatus("gather_elements",
                        [&](TestKernelContext &c) {
                          c.addInput(data).addInput(int64s({2}, {0, 1}));
                        }),
              {"must have the rank of data"});
  expectError(
      runStatus("gather_elements",
                [&](TestKernelContext &c) {
                  c.addInput(data).addInput(int64s({1, 6}, {0, 0, 0, 0, 0, 0}));
                }),
      {"exceed data"});
}

TEST(ScatterNd, MatchesOnnxExamples) {
  // ONNX ScatterND example 1: data [8], indices [[4],[3],[1],[7]].
  Tensor data = floats({8}, {1, 2, 3, 4, 5, 6, 7, 8});
  Tensor y = runOk("scatter_nd", [&](TestKernelContext &c) {
    c.addInput(data)
        .addInput(int64s({4, 1}, {4, 3, 1, 7}))
        .addInput(floats({4}, {9, 10, 11, 12}));
  });
  expectClose(y, {1, 11, 3, 10, 9, 6, 7, 12});
  // Example 2: slices of a [4, 4, 4] tensor; negative index -4 == 0.
  Tensor d3 = randomFloats({4, 4, 4}, 6);
  Tensor upd = randomFloats({2, 4, 4}, 7);
  Tensor y3 = runOk("scatter_nd", [&](TestKernelContext &c) {
    c.addInput(d3).addInput(int64s({2, 1}, {-4, 2})).addInput(upd);
  });
  for (int64_t i = 0; i < 64; ++i) {
    int64_t blk = i / 16;
    float ref = blk == 0   ? upd.data<float>()[i % 16]
                : blk == 2 ? upd.data<float>()[16 + i % 16]
                           : d3.data<float>()[i];
    ASSERT_EQ(y3.data<float>()[i], ref) << i;
  }
  // Element updates with k == rank, int32 indices, and the input untouched.
  Tensor m = int64s({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor ym = runOk("scatter_nd", [&](TestKernelContext &c) {
    c.addInput(m)
        .addInput(tensorOf<int32_t>(DType::kInt32, {2, 2}, {0, 2, 1, -3}))
        .addInput(int64s({2}, {-1, -2}));
  });
  EXPECT_EQ(valuesOf<int64_t>(ym), (std::vector<int64_t>{1, 2, -1, -2, 5, 6}));
  EXPECT_EQ(valuesOf<int64_t>(m), (std::vector<int64_t>{1, 2, 3, 4, 5, 6}));
}

TEST(ScatterNd, MalformedInputsAreClearErrors) {
  Tensor data = randomFloats({4, 3}, 1);
  expectError(runStatus("scatter_nd",
                        [&](TestKernelContext &c) {
                          c.addInput(data)
                              .addInput(int64s({1, 1}, {4}))
                              .addInput(randomFloats({1, 3}, 2));
                        }),
              {"test kernel", "index 4", "size 4"});
  expectError(runStatus("scatter_nd",
                        [&](TestKernelContext &c) {
                          c.addInput(data)
                              .addInput(int64s({1, 1}, {0}))
                              .addInput(randomFloats({1, 4}, 2));
                        }),
              {"updates float32[1, 4]"});
  expectError(runStatus("scatter_nd",
                        [&](TestKernelContext &c) {
                          c.addInput(data)
                              .addInput(int64s({1, 3}, {0, 0, 0}))
                              .addInput(randomFloats({1}, 2));
                        }),
              {"last dim of indices"});
  expectError(runStatus("scatter_nd",
                        [&](TestKernelContext &c) {
                          c.addInput(data)
                              .addInput(int64s({1, 1}, {0}))
                              .addInput(randomFloats({1, 3}, 2));
                          c.attrs().set("reduction", std::string("add"));
                        }),
              {"reduction", "add"});
}

} // namespace

//===- shape_fill_test.cpp - range and constant_of_shape ------------------===//
#include "dense_test_support.h"

#include <cmath>

using namespace ember;
using namespace ember::testing;

namespace {

TEST(Range, IntegerAndFloatSequences) {
  auto run64 = [](int64_t s, int64_t l, int64_t d) {
    return valuesOf<int64_t>(runOk("range", [&](TestKernelContext &c) {
      c.addInput(int64s({}, {s}))
          .addInput(int64s({}, {l}))
          .addInput(int64s({1}, {d}));
    }));
  };
  EXPECT_EQ(run64(0, 5, 1), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(run64(1, 8, 3), (std::vector<int64_t>{1, 4, 7}));
  EXPECT_EQ(run64(10, 4, -3), (std::vector<int64_t>{10, 7}));
  EXPECT_EQ(run64(3, 3, 1), (std::vector<int64_t>{}));
  EXPECT_EQ(run64(5, 1, 1), (std::vector<int64_t>{}));
  Tensor f = runOk("range", [&](TestKernelContext &c) {
    c.addInput(floats({}, {1.f}))
        .addInput(floats({}, {2.f}))
        .addInput(floats({}, {0.3f}));
  });
  ASSERT_EQ(f.shape(), Shape({4})); // ceil(1 / 0.3) = 4
  expectClose(f, {1.0, 1.3, 1.6, 1.9}, 1e-6);
  expectError(runStatus("range",
                        [&](TestKernelContext &c) {
                          c.addInput(int64s({}, {0}))
                              .addInput(int64s({}, {4}))
                              .addInput(int64s({}, {0}));
                        }),
              {"test kernel", "delta is 0"});
  expectError(runStatus("range",
                        [&](TestKernelContext &c) {
                          c.addInput(int64s({}, {0}))
                              .addInput(floats({}, {4}))
                              .addInput(int64s({}, {1}));
                        }),
              {"one dtype"});
  expectError(runStatus("range",
                        [&](TestKernelContext &c) {
                          c.addInput(int64s({2}, {0, 1}))
                              .addInput(int64s({}, {4}))
                              .addInput(int64s({}, {1}));
                        }),
              {"start must be a scalar"});
}

TEST(ConstantOfShape, FillsWithValueAndDtype) {
  Tensor y = runOk("constant_of_shape", [&](TestKernelContext &c) {
    c.addInput(int64s({2}, {2, 3}));
  });
  ASSERT_EQ(y.shape(), Shape({2, 3}));
  expectClose(y, {0, 0, 0, 0, 0, 0});
  Tensor z = runOk("constant_of_shape", [&](TestKernelContext &c) {
    c.addInput(int64s({1}, {3}));
    c.attrs().set("value", int64_t{7});
    c.attrs().set("dtype", std::string("int64"));
  });
  EXPECT_EQ(valuesOf<int64_t>(z), (std::vector<int64_t>{7, 7, 7}));
  Tensor e = runOk("constant_of_shape", [&](TestKernelContext &c) {
    c.addInput(int64s({2}, {0, 5}));
  });
  EXPECT_EQ(e.shape(), Shape({0, 5}));
  expectError(runStatus("constant_of_shape",
                        [&](TestKernelContext &c) {
                          c.addInput(int64s({2}, {2, -1}));
                        }),
              {"test kernel", "negative dimension"});
  expectError(runStatus("constant_of_shape",
                        [&](TestKernelContext &c) {
                          c.addInput(int64s({1}, {2}));
                          c.attrs().set("dtype", std::string("complex"));
                        }),
              {"unknown dtype 'complex'"});
}

} // namespace

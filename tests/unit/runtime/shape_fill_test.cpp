//===- shape_fill_test.cpp - constant_of_shape ----------------------------===//
#include "dense_test_support.h"

#include <cmath>

using namespace ember;
using namespace ember::testing;

namespace {

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

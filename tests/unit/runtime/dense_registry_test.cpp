//===- dense_registry_test.cpp - Registration and plan-load validation ----===//
//
// The kernel contract's attribute checks and the validate hooks of the
// dense/shape kernels reject malformed attributes at plan load (before any
// run), as prepareKernelAttributes applies them. That every kernel is
// registered, with a summary and the contract's arity, is
// kernel_contract_test.cpp's.
//
//===----------------------------------------------------------------------===//
#include "kernels/attributes.h"
#include "kernels/kernel_registry.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace ember;

namespace {

struct BadAttrs {
  const char *kernel;
  int numInputs;
  Attributes attrs;
  const char *expect; // substring of the message
};

TEST(DenseRegistry, ValidateRejectsMalformedAttributesAtLoad) {
  std::vector<BadAttrs> cases;
  auto add = [&](const char *k, int n, Attributes a, const char *e) {
    cases.push_back({k, n, std::move(a), e});
  };
  add("linear", 2, Attributes().set("activation", std::string("swish")),
      "activation");
  add("linear", 2, Attributes().set("activation", int64_t{1}), "activation");
  add("linear", 2, Attributes().set("transpose_weight", int64_t{3}),
      "transpose_weight");
  add("softmax", 1, Attributes().set("axis", std::string("x")), "axis");
  add("layer_norm", 1, Attributes().set("epsilon", -1.0), "epsilon");
  add("reduce_sum", 1, Attributes().set("axes", int64_t{0}), "axes");
  add("dot_interaction", 2, Attributes(), "num_features");
  add("dot_interaction", 2,
      Attributes()
          .set("num_features", int64_t{2})
          .set("pair_order", std::string("x")),
      "pair_order");
  add("dcn_cross", 3, Attributes().set("low_rank", int64_t{1}), "low_rank");
  add("dcn_cross", 5, Attributes(), "optional bias");
  add("concat", 2, Attributes(), "axis");
  add("reshape", 1, Attributes(), "shape");
  add("reshape", 1, Attributes().set("shape", std::vector<int64_t>{-1, -1}),
      "-1");
  add("transpose", 1, Attributes().set("perm", std::vector<int64_t>{0, 2}),
      "perm");
  add("slice", 1, Attributes().set("starts", std::vector<int64_t>{0}), "ends");
  add("slice", 1,
      Attributes()
          .set("starts", std::vector<int64_t>{0})
          .set("ends", std::vector<int64_t>{1})
          .set("steps", std::vector<int64_t>{0}),
      "steps");
  add("gather", 2, Attributes().set("axis", 0.5), "axis");
  add("cast", 1, Attributes().set("to", std::string("int4")), "int4");
  add("unsqueeze", 1, Attributes(), "axes");
  add("expand", 1, Attributes().set("shape", std::vector<int64_t>{-2}),
      "negative");
  add("scatter_nd", 3, Attributes().set("reduction", std::string("mul")),
      "reduction");
  add("constant_of_shape", 1, Attributes().set("dtype", std::string("f32")),
      "f32");
  for (const BadAttrs &c : cases) {
    const KernelDef *def = cpuKernels().find(c.kernel);
    ASSERT_NE(def, nullptr) << c.kernel;
    ASSERT_NE(def->validate, nullptr) << c.kernel;
    Attributes attrs = c.attrs;
    Status s = prepareKernelAttributes(*def, attrs, c.numInputs, 1);
    ASSERT_FALSE(s.isOk()) << c.kernel << " accepted " << c.expect;
    EXPECT_NE(s.message().find(c.expect), std::string::npos)
        << c.kernel << ": " << s.message();
  }
}

} // namespace

//===- executor_test.cpp - The executor with test-only kernels ------------===//
//
// Plans over a local KernelRegistry of small test kernels: slot liveness and
// arena reuse, aliasing outputs, scratch, kernel errors with locations,
// output checks, and no heap allocation at all in a steady-state run
// (counted by replacing the global operator new in this test binary).
//
//===----------------------------------------------------------------------===//
#include "ember/session.h"
#include "kernels/kernel_context.h"
#include "kernels/kernel_registry.h"
#include "support/expect_status.h"
#include "support/plan_builder.h"
#include "support/temp_dir.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

// Counts heap allocations made by this process. (GCC cannot see that the
// replaced operator new and delete below pair malloc with free.)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
static std::atomic<int64_t> gAllocations{0};
void *operator new(size_t n) {
  gAllocations.fetch_add(1, std::memory_order_relaxed);
  if (void *p = std::malloc(n ? n : 1))
    return p;
  throw std::bad_alloc();
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, size_t) noexcept { std::free(p); }

using namespace ember;
using namespace ember::testing;

namespace {

/// out = in + attr "value" (float32), through allocateOutput.
Status addScalar(KernelContext &ctx) {
  const Tensor &in = ctx.input(0);
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocateOutput(0, in.dtype(), in.shape()));
  double value = 1.0; // a made-up kernel: no contract fills in a default
  if (ctx.attrs().has("value")) {
    EMBER_ASSIGN_OR_RETURN(value, ctx.attrs().getFloat("value"));
  }
  float v = static_cast<float>(value);
  for (int64_t i = 0; i < in.numel(); ++i)
    out->data<float>()[i] = in.data<float>()[i] + v;
  return Status::ok();
}
/// out = in seen as [numel] (an alias, no copy).
Status flatten(KernelContext &ctx) {
  const Tensor &in = ctx.input(0);
  EMBER_ASSIGN_OR_RETURN(Tensor flat, in.reshaped({in.numel()}));
  return ctx.setOutput(0, flat);
}
/// out = in * 2 computed through scratch memory.
Status doubleViaScratch(KernelContext &ctx) {
  const Tensor &in = ctx.input(0);
  EMBER_ASSIGN_OR_RETURN(void *tmp, ctx.scratch(in.nbytes()));
  float *t = static_cast<float *>(tmp);
  for (int64_t i = 0; i < in.numel(); ++i)
    t[i] = in.data<float>()[i] * 2;
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocateOutput(0, in.dtype(), in.shape()));
  for (int64_t i = 0; i < in.numel(); ++i)
    out->data<float>()[i] = t[i];
  return Status::ok();
}
Status failing(KernelContext &ctx) {
  return invalidArgument("the test kernel failed");
}
/// Claims an int64 output: a plan that says float32 must be caught.
Status wrongDType(KernelContext &ctx) {
  EMBER_ASSIGN_OR_RETURN(
      Tensor * out, ctx.allocateOutput(0, DType::kInt64, ctx.input(0).shape()));
  (void)out;
  return Status::ok();
}
Status noOutput(KernelContext &) { return Status::ok(); }
/// Output 0 = in + 1; output 1 (optional) = in, or undefined unless attr
/// "produce" is 1 (as kjt_split leaves the weights of an unweighted KJT).
Status optionalSecond(KernelContext &ctx) {
  EMBER_RETURN_IF_ERROR(addScalar(ctx));
  int64_t produce = 0;
  if (ctx.attrs().has("produce")) {
    EMBER_ASSIGN_OR_RETURN(produce, ctx.attrs().getInt("produce"));
  }
  if (produce == 1)
    return ctx.setOutput(1, ctx.input(0));
  return ctx.setOutput(1, Tensor());
}
Status validateValue(const Attributes &attrs, int, int) {
  if (attrs.has("value") && !attrs.getFloat("value").isOk())
    return invalidArgument("attribute 'value' must be a number");
  return Status::ok();
}

const KernelRegistry &testKernels() {
  static const KernelRegistry registry = [] {
    KernelRegistry r(KernelContractCheck::kOff); // made-up kernels
    auto add = [&](const char *name, KernelFn fn,
                   KernelValidateFn validate = nullptr) {
      KernelDef def;
      def.name = name;
      def.run = fn;
      def.validate = validate;
      def.minInputs = def.maxInputs = 1;
      EXPECT_TRUE(r.add(def).isOk());
    };
    add("add_scalar", addScalar, validateValue);
    add("flatten", flatten);
    add("double", doubleViaScratch);
    add("fail", failing);
    add("wrong_dtype", wrongDType);
    add("no_output", noOutput);
    KernelDef def;
    def.name = "optional_second";
    def.run = optionalSecond;
    def.minInputs = def.maxInputs = 1;
    def.minOutputs = def.maxOutputs = 2;
    EXPECT_TRUE(r.add(def).isOk());
    return r;
  }();
  return registry;
}

/// x [B, 4] -> `chain` x add_scalar(+1) -> double -> flatten -> y [4*B]
Result<std::string> writeChain(const TempDir &dir, int chain,
                               const char *lastKernel = "flatten") {
  PlanBuilder b;
  int x = b.input("x", DType::kFloat32, {"B", 4});
  for (int i = 0; i < chain; ++i) {
    int y = b.slot("h" + std::to_string(i), DType::kFloat32, {"B", 4});
    b.instruction("add_scalar", {x}, {y}, "chain." + std::to_string(i))
        .attr("value", 1.0);
    x = y;
  }
  int d = b.slot("d", DType::kFloat32, {"B", 4});
  b.instruction("double", {x}, {d}, "double");
  int y = b.slot("y", DType::kFloat32, {Dim("B", 4)});
  b.instruction(lastKernel, {d}, {y}, "last");
  b.output("y", y);
  return b.write(dir.path(), "chain");
}

TEST(Executor, RunsAChainAndReusesMemory) {
  TempDir dir;
  auto path = writeChain(dir, 50);
  ASSERT_TRUE(path.isOk()) << path.status().toString();
  auto session = Session::load(*path, {}, testKernels());
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  std::vector<float> x = {0, 1, 2, 3, 4, 5, 6, 7};
  RunInputs in;
  in.set("x", Tensor::view(x.data(), DType::kFloat32, {2, 4}));
  RunOutputs out;
  ASSERT_TRUE((*session)->run(in, &out).isOk());
  const Tensor &y = *out.find("y");
  ASSERT_EQ(y.shape(), Shape({8}));
  for (int i = 0; i < 8; ++i)
    EXPECT_FLOAT_EQ(y.data<float>()[i], (x[i] + 50) * 2);
  // 52 intermediate buffers, but each dies after its one use: the arena
  // needs two blocks for the chain (+1 for double's scratch).
  EXPECT_LE((*session)->stats().arenaGrowths, 3);
}

TEST(Executor, SteadyStateRunAllocatesNothing) {
  TempDir dir;
  auto path = writeChain(dir, 10);
  ASSERT_TRUE(path.isOk());
  auto session = Session::load(*path, {}, testKernels());
  ASSERT_TRUE(session.isOk());
  std::vector<float> x(64 * 4, 1.5f);
  RunInputs in;
  in.set("x", Tensor::view(x.data(), DType::kFloat32, {64, 4}));
  RunOutputs out;
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE((*session)->run(in, &out).isOk());
  int64_t before = gAllocations.load();
  for (int i = 0; i < 10; ++i)
    ASSERT_TRUE((*session)->run(in, &out).isOk());
  EXPECT_EQ(gAllocations.load() - before, 0)
      << "heap allocations in steady-state runs";
  EXPECT_FLOAT_EQ(out.find("y")->data<float>()[0], (1.5f + 10) * 2);
}

TEST(Executor, KernelErrorsNameTheInstruction) {
  TempDir dir;
  auto path = writeChain(dir, 2, "fail");
  ASSERT_TRUE(path.isOk());
  auto session = Session::load(*path, {}, testKernels());
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  std::vector<float> x(4);
  RunInputs in;
  in.set("x", Tensor::view(x.data(), DType::kFloat32, {1, 4}));
  EXPECT_ERROR((*session)->run(in).status(), StatusCode::kInvalidArgument,
               "instruction 3 'fail' (last): the test kernel failed");
}

TEST(Executor, KernelOutputsAreCheckedAgainstThePlan) {
  TempDir dir;
  std::vector<float> x(4);
  RunInputs in;
  in.set("x", Tensor::view(x.data(), DType::kFloat32, {1, 4}));
  {
    auto path = writeChain(dir, 1, "wrong_dtype");
    auto session = Session::load(*path, {}, testKernels());
    ASSERT_TRUE(session.isOk());
    EXPECT_ERROR((*session)->run(in).status(), StatusCode::kInternal,
                 "output 0 is int64[1, 4] but the plan declares float32[4*B]");
  }
  {
    auto path = writeChain(dir, 1, "no_output");
    auto session = Session::load(*path, {}, testKernels());
    ASSERT_TRUE(session.isOk());
    EXPECT_ERROR((*session)->run(in).status(), StatusCode::kInternal,
                 "the kernel did not produce it");
  }
  {
    // add_scalar keeps [B, 4] but the plan claims [B, 5].
    PlanBuilder b;
    int xs = b.input("x", DType::kFloat32, {"B", 4});
    int y = b.slot("y", DType::kFloat32, {"B", 5});
    b.instruction("add_scalar", {xs}, {y});
    b.output("y", y);
    auto path = b.write(dir.path(), "shape");
    auto session = Session::load(*path, {}, testKernels());
    ASSERT_TRUE(session.isOk());
    EXPECT_ERROR(
        (*session)->run(in).status(), StatusCode::kInternal,
        "output 0 is float32[1, 4] but the plan declares float32[B, 5]");
  }
}

TEST(Executor, OptionalOutputLeftOutWithMinusOne) {
  TempDir dir;
  std::vector<float> x = {1, 2, 3, 4};
  RunInputs in;
  in.set("x", Tensor::view(x.data(), DType::kFloat32, {1, 4}));
  for (int produce : {0, 1}) {
    PlanBuilder b;
    int xs = b.input("x", DType::kFloat32, {"B", 4});
    int y = b.slot("y", DType::kFloat32, {"B", 4});
    b.instruction("optional_second", {xs}, {y, -1}, "opt")
        .attr("produce", static_cast<int64_t>(produce));
    b.output("y", y);
    auto path = b.write(dir.path(), "opt" + std::to_string(produce));
    ASSERT_TRUE(path.isOk());
    auto session = Session::load(*path, {}, testKernels());
    ASSERT_TRUE(session.isOk()) << session.status().toString();
    auto out = (*session)->run(in);
    if (produce == 0) {
      ASSERT_TRUE(out.isOk()) << out.status().toString();
      EXPECT_EQ(out->find("y")->data<float>()[3], 5.0f);
    } else {
      EXPECT_ERROR(out.status(), StatusCode::kInternal,
                   "output 1 is left out by the plan (slot -1) but the "
                   "kernel produces it");
    }
  }
}

TEST(Executor, ValidateHookRunsAtLoad) {
  TempDir dir;
  PlanBuilder b;
  int x = b.input("x", DType::kFloat32, {"B", 4});
  int y = b.slot("y", DType::kFloat32, {"B", 4});
  b.instruction("add_scalar", {x}, {y}, "bad").attr("value", "seven");
  b.output("y", y);
  auto path = b.write(dir.path(), "bad");
  ASSERT_TRUE(path.isOk());
  EXPECT_ERROR(
      Session::load(*path, {}, testKernels()).status(),
      StatusCode::kInvalidArgument,
      "instruction 0 'add_scalar' (bad): attribute 'value' must be a number");
}

TEST(Executor, OutputThatIsAnInputOrConstant) {
  TempDir dir;
  PlanBuilder b;
  int x = b.input("x", DType::kFloat32, {"B", 2});
  float c[2] = {3, 4};
  int k = b.constant("k", DType::kFloat32, {2}, c);
  b.output("x_again", x);
  b.output("k", k);
  auto path = b.write(dir.path(), "passthrough");
  ASSERT_TRUE(path.isOk());
  auto session = Session::load(*path, {}, testKernels());
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  float xs[4] = {1, 2, 3, 4};
  RunInputs in;
  in.set("x", Tensor::view(xs, DType::kFloat32, {2, 2}));
  auto out = (*session)->run(in);
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  EXPECT_EQ(out->find("x_again")->data<float>()[3], 4.0f);
  EXPECT_NE(out->find("x_again")->data(),
            static_cast<void *>(xs)); // outputs own their memory
  EXPECT_EQ(out->find("k")->data<float>()[1], 4.0f);
}

} // namespace

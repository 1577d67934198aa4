//===- plan_builder.h - Building plans in tests -----------------*- C++ -*-===//
//
// A small helper over the plan protobuf for tests and test tools:
//
//   PlanBuilder b;
//   int x = b.input("x", DType::kFloat32, {"B", 4});
//   int w = b.constant("w", DType::kFloat32, {3, 4}, weights);
//   int y = b.slot("y", DType::kFloat32, {"B", 3});
//   b.instruction("linear", {x, w}, {y}).attr("activation", "relu");
//   b.output("y", y);
//   ASSERT_TRUE(b.write(dir, "model").isOk());   // model.plan +
//   model.rank0.weights
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TESTS_PLAN_BUILDER_H
#define EMBER_TESTS_PLAN_BUILDER_H

#include "ember/dtype.h"
#include "ember/status.h"
#include "plan/ember_plan.pb.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ember::testing {

/// A dimension: a size, a symbol, or factor * symbol.
struct Dim {
  Dim(int64_t size) : size(size) {}
  Dim(int size) : size(size) {}
  Dim(const char *symbol, int64_t factor = 1)
      : symbol(symbol), factor(factor) {}
  int64_t size = 0;
  std::string symbol;
  int64_t factor = 1;
};

plan::DataType toPlanDType(DType dtype);

class InstructionBuilder {
public:
  explicit InstructionBuilder(plan::Instruction *in) : in_(in) {}
  InstructionBuilder &attr(const std::string &name, int64_t v);
  InstructionBuilder &attr(const std::string &name, int v) {
    return attr(name, int64_t{v});
  }
  InstructionBuilder &attr(const std::string &name, double v);
  InstructionBuilder &attr(const std::string &name, const char *v);
  InstructionBuilder &attr(const std::string &name, const std::string &v);
  InstructionBuilder &attr(const std::string &name,
                           const std::vector<int64_t> &v);
  InstructionBuilder &attr(const std::string &name,
                           const std::vector<std::string> &v);
  plan::Instruction &proto() { return *in_; }

private:
  plan::Instruction *in_;
};

struct KjtSlotIds {
  int values = -1, lengths = -1, weights = -1;
};

class PlanBuilder {
public:
  PlanBuilder();

  int slot(const std::string &name, DType dtype, const std::vector<Dim> &dims);
  int input(const std::string &name, DType dtype, const std::vector<Dim> &dims);
  KjtSlotIds kjtInput(const std::string &name,
                      const std::vector<std::string> &keys,
                      DType valuesType = DType::kInt64,
                      DType lengthsType = DType::kInt64, bool weights = false);
  /// A constant stored in the rank's weights file (bytes copied now).
  int constant(const std::string &name, DType dtype,
               const std::vector<int64_t> &dims, const void *data);
  InstructionBuilder instruction(const std::string &kernel,
                                 const std::vector<int> &inputs,
                                 const std::vector<int> &outputs,
                                 const std::string &name = "");
  void output(const std::string &name, int slot);

  plan::Plan &proto() { return plan_; }
  plan::RankProgram &program() { return *plan_.mutable_programs(0); }

  /// Writes the constants to DIR/NAME and records that file in the program
  /// (for multi-rank plans assembled from one builder per rank).
  Status writeWeights(const std::string &dir, const std::string &name);
  /// Writes DIR/BASE.plan (or .plan.txt when text) and DIR/BASE.rank0.weights.
  /// Returns the plan's path.
  Result<std::string> write(const std::string &dir, const std::string &base,
                            bool text = false);

private:
  void setDims(google::protobuf::RepeatedPtrField<plan::Dim> *out,
               const std::vector<Dim> &dims);
  plan::Plan plan_;
  struct PendingConstant {
    int constantIndex;
    std::string bytes;
  };
  std::vector<PendingConstant> constants_;
};

} // namespace ember::testing

#endif // EMBER_TESTS_PLAN_BUILDER_H

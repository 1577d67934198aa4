//===- ember-opt.cpp - Ember's mlir-opt ------------------------------------===//
//
// Parses, verifies, transforms and prints IR in the Ember dialect together with
// the upstream dialects Ember programs use (func, arith, tensor, tosa, scf).
//
//===----------------------------------------------------------------------===//

#include "dialects/ember/EmberDialect.h"
#include "passes/Passes.h"
#include "plan/EmissionContract.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  mlir::ember::registerEmberPasses();
  mlir::ember::plan_emitter::registerEmissionContractPass();

  mlir::DialectRegistry registry;
  registry.insert<mlir::ember::EmberDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::tensor::TensorDialect,
                  mlir::tosa::TosaDialect, mlir::scf::SCFDialect,
                  mlir::affine::AffineDialect>();

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Ember optimizer driver\n", registry));
}

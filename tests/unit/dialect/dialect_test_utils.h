//===- dialect_test_utils.h - shared fixtures for dialect tests -*- C++ -*-===//
#ifndef EMBER_TESTS_UNIT_DIALECT_DIALECT_TEST_UTILS_H
#define EMBER_TESTS_UNIT_DIALECT_DIALECT_TEST_UTILS_H

#include "dialects/ember/EmberDialect.h"
#include "dialects/ember/EmberOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace ember_test {

/// A context with Ember and the upstream dialects loaded, which records every
/// diagnostic instead of printing it.
class DialectTest : public ::testing::Test {
protected:
  DialectTest()
      : handler(&context, [this](mlir::Diagnostic &diag) {
          messages.push_back(diag.str());
          return mlir::success();
        }) {
    context
        .loadDialect<mlir::ember::EmberDialect, mlir::func::FuncDialect,
                     mlir::arith::ArithDialect, mlir::tensor::TensorDialect>();
  }

  /// True when some recorded diagnostic contains `text`.
  bool sawDiagnostic(const std::string &text) const {
    for (const std::string &message : messages)
      if (message.find(text) != std::string::npos)
        return true;
    return false;
  }

  std::string allDiagnostics() const {
    std::string all;
    for (const std::string &message : messages)
      all += message + "\n";
    return all;
  }

  mlir::MLIRContext context;
  std::vector<std::string> messages;
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace ember_test

#endif // EMBER_TESTS_UNIT_DIALECT_DIALECT_TEST_UTILS_H

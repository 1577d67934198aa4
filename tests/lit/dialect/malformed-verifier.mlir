// RUN: not ember-opt %s 2>&1 | FileCheck %s
// A verifier failure outside -verify-diagnostics: the location, the op and the
// message, then a non-zero exit and no output IR.

// CHECK: malformed-verifier.mlir:[[@LINE+4]]:8: error: 'ember.kjt.permute' op permutation[0] = 5 is out of range for 1 keys
// CHECK-NOT: func.func
func.func @f(%k: !ember.kjt<["a"], values = i64, lengths = i32>)
    -> !ember.kjt<["a"], values = i64, lengths = i32> {
  %p = ember.kjt.permute %k [5] : !ember.kjt<["a"], values = i64, lengths = i32> -> !ember.kjt<["a"], values = i64, lengths = i32>
  return %p : !ember.kjt<["a"], values = i64, lengths = i32>
}

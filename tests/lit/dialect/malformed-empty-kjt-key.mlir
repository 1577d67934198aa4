// RUN: not ember-opt %s 2>&1 | FileCheck %s

// CHECK: malformed-empty-kjt-key.mlir:[[@LINE+1]]:28: error: kjt key #0 is empty
func.func @f(%a: !ember.kjt<[""], values = i64, lengths = i32>) {
  return
}

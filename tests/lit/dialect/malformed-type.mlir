// RUN: not ember-opt %s 2>&1 | FileCheck %s
// Bad type syntax: a clear diagnostic with file:line:col, non-zero exit.

// CHECK: malformed-type.mlir:[[@LINE+2]]:{{[0-9]+}}: error: expected ','
// CHECK-NOT: PLEASE submit a bug report
func.func @f(%a: !ember.kjt<["a"] values = i64, lengths = i32>) {
  return
}

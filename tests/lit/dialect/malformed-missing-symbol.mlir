// RUN: not ember-opt %s 2>&1 | FileCheck %s

func.func @f() -> !ember.table<4x2, f32> {
  // CHECK: malformed-missing-symbol.mlir:[[@LINE+1]]:8: error: 'ember.table.ref' op refers to unknown table @t_missing
  %t = ember.table.ref @t_missing : !ember.table<4x2, f32>
  return %t : !ember.table<4x2, f32>
}

// RUN: head -c 200 %s | not ember-opt 2>&1 | FileCheck %s
// Input cut off in the middle of an op: the parser reports where it stopped.

// CHECK: <stdin>:{{[0-9]+}}:{{[0-9]+}}: error:
func.func @f(%t: !ember.table<10x4, f32>, %i: tensor<?xi64>, %o: tensor<?xi64>) -> tensor<?x4xf32> {
  %r = ember.embedding_bag %t[%i, %o] pooling = sum : !ember.table<10x4, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// RUN: not ember-opt %s 2>&1 | FileCheck %s

// CHECK: malformed-format.mlir:[[@LINE+1]]:{{[0-9]+}}: error: unknown table format 'fp32'; expected f32, f16, bf16, int8_rowwise or int4_rowwise
ember.table @t : !ember.table<10x4, fp32>

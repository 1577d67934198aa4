// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s -mlir-print-op-generic | ember-opt | FileCheck %s

!kjt = !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>

// CHECK-LABEL: func.func @create
func.func @create(%v: tensor<?xi64>, %l: tensor<?xi32>, %o: tensor<?xi32>,
                  %w: tensor<?xf32>, %bs: tensor<2xi64>, %l6: tensor<6xi32>,
                  %o7: tensor<7xi32>) {
  // CHECK: ember.kjt.create values(%{{.*}} : tensor<?xi64>) lengths(%{{.*}} : tensor<?xi32>) -> !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>
  %0 = ember.kjt.create values(%v : tensor<?xi64>) lengths(%l : tensor<?xi32>) -> !kjt
  // CHECK: ember.kjt.create values(%{{.*}} : tensor<?xi64>) offsets(%{{.*}} : tensor<?xi32>) -> !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>
  %1 = ember.kjt.create values(%v : tensor<?xi64>) offsets(%o : tensor<?xi32>) -> !kjt
  // CHECK: ember.kjt.create values(%{{.*}} : tensor<?xi64>) lengths(%{{.*}} : tensor<6xi32>) offsets(%{{.*}} : tensor<7xi32>) weights(%{{.*}} : tensor<?xf32>)
  // CHECK-SAME: -> !ember.kjt<["a", "b", "c"], values = i64, lengths = i32, weighted>
  %2 = ember.kjt.create values(%v : tensor<?xi64>) lengths(%l6 : tensor<6xi32>)
      offsets(%o7 : tensor<7xi32>) weights(%w : tensor<?xf32>)
      -> !ember.kjt<["a", "b", "c"], values = i64, lengths = i32, weighted>
  // CHECK: ember.kjt.create values(%{{.*}} : tensor<?xi64>) lengths(%{{.*}} : tensor<?xi32>) batch_sizes(%{{.*}} : tensor<2xi64>) -> !ember.kjt<["a", "b"], values = i64, lengths = i32, variable_batch>
  %3 = ember.kjt.create values(%v : tensor<?xi64>) lengths(%l : tensor<?xi32>)
      batch_sizes(%bs : tensor<2xi64>)
      -> !ember.kjt<["a", "b"], values = i64, lengths = i32, variable_batch>
  return
}

// CHECK-LABEL: func.func @from_bags
func.func @from_bags(%a: tensor<?xi64>, %b: tensor<?xi64>, %oa: tensor<?xi64>,
                     %ob: tensor<?xi32>, %wa: tensor<?xf32>, %wb: tensor<?xf32>) {
  // CHECK: ember.kjt.from_bags values(%{{.*}}, %{{.*}} : tensor<?xi64>, tensor<?xi64>) offsets(%{{.*}}, %{{.*}} : tensor<?xi64>, tensor<?xi32>) include_last_offset = [false, true] -> !ember.kjt<["a", "b"], values = i64, lengths = i64>
  %0 = ember.kjt.from_bags values(%a, %b : tensor<?xi64>, tensor<?xi64>)
      offsets(%oa, %ob : tensor<?xi64>, tensor<?xi32>)
      include_last_offset = [false, true]
      -> !ember.kjt<["a", "b"], values = i64, lengths = i64>
  // CHECK: ember.kjt.from_bags {{.*}} include_last_offset = [false, true] num_rows = [10, 20] -> !ember.kjt<["a", "b"], values = i64, lengths = i64>
  %2 = ember.kjt.from_bags values(%a, %b : tensor<?xi64>, tensor<?xi64>)
      offsets(%oa, %ob : tensor<?xi64>, tensor<?xi32>)
      include_last_offset = [false, true] num_rows = [10, 20]
      -> !ember.kjt<["a", "b"], values = i64, lengths = i64>
  // CHECK: ember.kjt.from_bags values(%{{.*}}, %{{.*}} : tensor<?xi64>, tensor<?xi64>) offsets(%{{.*}}, %{{.*}} : tensor<?xi64>, tensor<?xi64>) weights(%{{.*}}, %{{.*}} : tensor<?xf32>, tensor<?xf32>) include_last_offset = [false, false]
  // CHECK-SAME: -> !ember.kjt<["a", "a:c1"], values = i64, lengths = i32, weighted>
  %1 = ember.kjt.from_bags values(%a, %a : tensor<?xi64>, tensor<?xi64>)
      offsets(%oa, %oa : tensor<?xi64>, tensor<?xi64>)
      weights(%wa, %wa : tensor<?xf32>, tensor<?xf32>)
      include_last_offset = [false, false]
      -> !ember.kjt<["a", "a:c1"], values = i64, lengths = i32, weighted>
  return
}

// CHECK-LABEL: func.func @accessors
func.func @accessors(%k: !ember.kjt<["a", "b"], values = i64, lengths = i32, weighted, variable_batch>) {
  // CHECK: ember.kjt.values %{{.*}} : !ember.kjt<["a", "b"], values = i64, lengths = i32, weighted, variable_batch> -> tensor<?xi64>
  %v = ember.kjt.values %k : !ember.kjt<["a", "b"], values = i64, lengths = i32, weighted, variable_batch> -> tensor<?xi64>
  // CHECK: ember.kjt.lengths %{{.*}} -> tensor<?xi32>
  %l = ember.kjt.lengths %k : !ember.kjt<["a", "b"], values = i64, lengths = i32, weighted, variable_batch> -> tensor<?xi32>
  // CHECK: ember.kjt.offsets %{{.*}} -> tensor<?xi32>
  %o = ember.kjt.offsets %k : !ember.kjt<["a", "b"], values = i64, lengths = i32, weighted, variable_batch> -> tensor<?xi32>
  // CHECK: ember.kjt.weights %{{.*}} -> tensor<?xf32>
  %w = ember.kjt.weights %k : !ember.kjt<["a", "b"], values = i64, lengths = i32, weighted, variable_batch> -> tensor<?xf32>
  // CHECK: ember.kjt.stride %{{.*}} : !ember.kjt<["a", "b"], values = i64, lengths = i32, weighted, variable_batch>{{$}}
  %s = ember.kjt.stride %k : !ember.kjt<["a", "b"], values = i64, lengths = i32, weighted, variable_batch>
  return
}

// CHECK-LABEL: func.func @restructure
func.func @restructure(%k: !kjt) {
  // CHECK: ember.kjt.permute %{{.*}} [2, 0] : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32> -> !ember.kjt<["c", "a"], values = i64, lengths = i32>
  %p = ember.kjt.permute %k [2, 0] : !kjt -> !ember.kjt<["c", "a"], values = i64, lengths = i32>
  // CHECK: ember.kjt.split %{{.*}} [2, 0, 1] : !ember.kjt<["a", "b", "c"], values = i64, lengths = i32>
  // CHECK-SAME: -> !ember.kjt<["a", "b"], values = i64, lengths = i32>, !ember.kjt<[], values = i64, lengths = i32>, !ember.kjt<["c"], values = i64, lengths = i32>
  %s:3 = ember.kjt.split %k [2, 0, 1] : !kjt
      -> !ember.kjt<["a", "b"], values = i64, lengths = i32>,
         !ember.kjt<[], values = i64, lengths = i32>,
         !ember.kjt<["c"], values = i64, lengths = i32>
  // CHECK: ember.kjt.concat %{{.*}}, %{{.*}} : !ember.kjt<["c"], values = i64, lengths = i32>, !ember.kjt<["a", "b"], values = i64, lengths = i32>
  // CHECK-SAME: -> !ember.kjt<["c", "a", "b"], values = i64, lengths = i32>
  %c = ember.kjt.concat %s#2, %s#0
      : !ember.kjt<["c"], values = i64, lengths = i32>, !ember.kjt<["a", "b"], values = i64, lengths = i32>
      -> !ember.kjt<["c", "a", "b"], values = i64, lengths = i32>
  return
}

// CHECK-LABEL: func.func @bucketize
func.func @bucketize(%k: !ember.kjt<["a", "b"], values = i64, lengths = i32, weighted>) {
  // CHECK: ember.kjt.bucketize %{{.*}} block_sizes = [500, 30] num_buckets = 2
  // CHECK-SAME: : !ember.kjt<["a", "b"], values = i64, lengths = i32, weighted>
  // CHECK-SAME: -> !ember.kjt<["a@0", "b@0", "a@1", "b@1"], values = i64, lengths = i32, weighted>, tensor<?xi64>
  %b, %perm = ember.kjt.bucketize %k block_sizes = [500, 30] num_buckets = 2
      : !ember.kjt<["a", "b"], values = i64, lengths = i32, weighted>
      -> !ember.kjt<["a@0", "b@0", "a@1", "b@1"], values = i64, lengths = i32, weighted>, tensor<?xi64>
  return
}

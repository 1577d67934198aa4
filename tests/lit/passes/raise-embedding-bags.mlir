// RUN: ember-opt --ember-raise-embedding-bags %s -split-input-file | FileCheck %s

// The inputs are what `ember-translate --import-onnx` makes of
// torch.onnx.export(nn.EmbeddingBag(10, 4, mode=...)) with torch 1.13 (the
// weights are replaced by a splat to keep the file short); the negative
// cases change one thing in such a loop and must be left alone.

// Opset 17, dynamic ids and offsets, mode="sum": offsets ++ [len(ids)].
// CHECK-LABEL: func.func @sum_dynamic(
// CHECK-SAME: %[[IDS:[^:]*]]: tensor<?xi64> {{.*}}, %[[OFF:[^:]*]]: tensor<?xi64>
// CHECK: %[[W:.*]] = arith.constant dense<5.000000e-01> : tensor<10x4xf32>
// CHECK-NOT: scf.for
// CHECK: %[[T:.*]] = ember.table.from_tensor %[[W]] : tensor<10x4xf32> -> !ember.table<10x4, f32>
// CHECK: %[[R:.*]] = ember.embedding_bag %[[T]][%[[IDS]], %[[OFF]]] pooling = sum : !ember.table<10x4, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf32>
// CHECK-NOT: scf.for
// CHECK: return %[[R]] : tensor<?x4xf32>
func.func @sum_dynamic(%arg0: tensor<?xi64> {onnx.dim_params = ["n"], onnx.name = "ids"}, %arg1: tensor<?xi64> {onnx.dim_params = ["batch"], onnx.name = "offsets"}) -> (tensor<?x4xf32> {onnx.name = "pooled"}) {
  %cst = arith.constant dense<5.000000e-01> : tensor<10x4xf32>
  %c0 = arith.constant 0 : index
  %dim = tensor.dim %arg0, %c0 : tensor<?xi64>
  %0 = arith.index_cast %dim : index to i64
  %from_elements = tensor.from_elements %0 : tensor<1xi64>
  %1 = tosa.concat %arg1, %from_elements {axis = 0 : i32} : (tensor<?xi64>, tensor<1xi64>) -> tensor<?xi64>
  %dim_0 = tensor.dim %1, %c0 : tensor<?xi64>
  %c1 = arith.constant 1 : index
  %2 = arith.minsi %c1, %dim_0 : index
  %c9223372036854775807 = arith.constant 9223372036854775807 : index
  %3 = arith.minsi %c9223372036854775807, %dim_0 : index
  %4 = arith.subi %3, %2 : index
  %5 = arith.maxsi %4, %c0 : index
  %extracted_slice = tensor.extract_slice %1[%2] [%5] [1] : tensor<?xi64> to tensor<?xi64>
  %dim_1 = tensor.dim %extracted_slice, %c0 : tensor<?xi64>
  %6 = arith.index_cast %dim_1 : index to i64
  %from_elements_2 = tensor.from_elements %6 : tensor<i64>
  %extracted = tensor.extract %from_elements_2[] : tensor<i64>
  %7 = arith.index_cast %extracted : i64 to index
  %8 = tensor.empty(%7) : tensor<?x4xf32>
  %9 = scf.for %arg2 = %c0 to %7 step %c1 iter_args(%arg3 = %8) -> (tensor<?x4xf32>) {
    %10 = arith.index_cast %arg2 : index to i64
    %from_elements_3 = tensor.from_elements %10 : tensor<i64>
    %11 = tosa.const_shape  {values = dense<[1, -1, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %12 = tosa.reshape %1, %11 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %13 = arith.trunci %from_elements_3 : tensor<i64> to tensor<i32>
    %14 = tosa.const_shape  {values = dense<1> : tensor<2xindex>} : () -> !tosa.shape<2>
    %15 = tosa.reshape %13, %14 : (tensor<i32>, !tosa.shape<2>) -> tensor<1x1xi32>
    %16 = tosa.gather %12, %15 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %17 = tosa.const_shape  {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
    %18 = tosa.reshape %16, %17 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %19 = tosa.reshape %extracted_slice, %11 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %20 = tosa.gather %19, %15 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %21 = tosa.reshape %20, %17 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %expanded = tensor.expand_shape %18 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %expanded_4 = tensor.expand_shape %21 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %extracted_5 = tensor.extract %expanded[%c0] : tensor<1xi64>
    %22 = arith.index_cast %extracted_5 : i64 to index
    %23 = arith.cmpi slt, %22, %c0 : index
    %24 = arith.addi %22, %dim : index
    %25 = arith.select %23, %24, %22 : index
    %26 = arith.maxsi %25, %c0 : index
    %27 = arith.minsi %26, %dim : index
    %extracted_6 = tensor.extract %expanded_4[%c0] : tensor<1xi64>
    %28 = arith.index_cast %extracted_6 : i64 to index
    %29 = arith.cmpi slt, %28, %c0 : index
    %30 = arith.addi %28, %dim : index
    %31 = arith.select %29, %30, %28 : index
    %32 = arith.maxsi %31, %c0 : index
    %33 = arith.minsi %32, %dim : index
    %34 = arith.subi %33, %27 : index
    %35 = arith.maxsi %34, %c0 : index
    %extracted_slice_7 = tensor.extract_slice %arg0[%27] [%35] [1] : tensor<?xi64> to tensor<?xi64>
    %36 = tosa.const_shape  {values = dense<[1, 10, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %37 = tosa.reshape %cst, %36 : (tensor<10x4xf32>, !tosa.shape<3>) -> tensor<1x10x4xf32>
    %38 = arith.trunci %extracted_slice_7 : tensor<?xi64> to tensor<?xi32>
    %cst_8 = arith.constant dense<0> : tensor<1xi32>
    %39 = tosa.greater %cst_8, %38 : (tensor<1xi32>, tensor<?xi32>) -> tensor<?xi1>
    %cst_9 = arith.constant dense<10> : tensor<1xi32>
    %40 = tosa.add %38, %cst_9 : (tensor<?xi32>, tensor<1xi32>) -> tensor<?xi32>
    %41 = tosa.select %39, %40, %38 : (tensor<?xi1>, tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
    %42 = tosa.const_shape  {values = dense<[1, -1]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %43 = tosa.reshape %41, %42 : (tensor<?xi32>, !tosa.shape<2>) -> tensor<1x?xi32>
    %44 = tosa.gather %37, %43 : (tensor<1x10x4xf32>, tensor<1x?xi32>) -> tensor<1x?x4xf32>
    %45 = tosa.const_shape  {values = dense<[-1, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %46 = tosa.reshape %44, %45 : (tensor<1x?x4xf32>, !tosa.shape<2>) -> tensor<?x4xf32>
    %47 = tosa.reduce_sum %46 {axis = 0 : i32} : (tensor<?x4xf32>) -> tensor<1x4xf32>
    %collapsed = tensor.collapse_shape %47 [[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
    %expanded_10 = tensor.expand_shape %collapsed [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
    %inserted_slice = tensor.insert_slice %expanded_10 into %arg3[%arg2, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<?x4xf32>
    scf.yield %inserted_slice : tensor<?x4xf32>
  }
  return %9 : tensor<?x4xf32>
}

// -----

// mode="mean": ReduceMean is a sum times the reciprocal of the bag size.
// CHECK-LABEL: func.func @mean_dynamic(
// CHECK-SAME: %[[IDS:[^:]*]]: tensor<?xi64> {{.*}}, %[[OFF:[^:]*]]: tensor<?xi64>
// CHECK-NOT: scf.for
// CHECK: %[[T:.*]] = ember.table.from_tensor
// CHECK: %[[R:.*]] = ember.embedding_bag %[[T]][%[[IDS]], %[[OFF]]] pooling = mean : !ember.table<10x4, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf32>
// CHECK-NOT: scf.for
// CHECK: return %[[R]]
func.func @mean_dynamic(%arg0: tensor<?xi64> {onnx.dim_params = ["n"], onnx.name = "ids"}, %arg1: tensor<?xi64> {onnx.dim_params = ["batch"], onnx.name = "offsets"}) -> (tensor<?x4xf32> {onnx.name = "pooled"}) {
  %cst = arith.constant dense<5.000000e-01> : tensor<10x4xf32>
  %c0 = arith.constant 0 : index
  %dim = tensor.dim %arg0, %c0 : tensor<?xi64>
  %0 = arith.index_cast %dim : index to i64
  %from_elements = tensor.from_elements %0 : tensor<1xi64>
  %1 = tosa.concat %arg1, %from_elements {axis = 0 : i32} : (tensor<?xi64>, tensor<1xi64>) -> tensor<?xi64>
  %dim_0 = tensor.dim %1, %c0 : tensor<?xi64>
  %c1 = arith.constant 1 : index
  %2 = arith.minsi %c1, %dim_0 : index
  %c9223372036854775807 = arith.constant 9223372036854775807 : index
  %3 = arith.minsi %c9223372036854775807, %dim_0 : index
  %4 = arith.subi %3, %2 : index
  %5 = arith.maxsi %4, %c0 : index
  %extracted_slice = tensor.extract_slice %1[%2] [%5] [1] : tensor<?xi64> to tensor<?xi64>
  %dim_1 = tensor.dim %extracted_slice, %c0 : tensor<?xi64>
  %6 = arith.index_cast %dim_1 : index to i64
  %from_elements_2 = tensor.from_elements %6 : tensor<i64>
  %extracted = tensor.extract %from_elements_2[] : tensor<i64>
  %7 = arith.index_cast %extracted : i64 to index
  %8 = tensor.empty(%7) : tensor<?x4xf32>
  %9 = scf.for %arg2 = %c0 to %7 step %c1 iter_args(%arg3 = %8) -> (tensor<?x4xf32>) {
    %10 = arith.index_cast %arg2 : index to i64
    %from_elements_3 = tensor.from_elements %10 : tensor<i64>
    %11 = tosa.const_shape  {values = dense<[1, -1, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %12 = tosa.reshape %1, %11 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %13 = arith.trunci %from_elements_3 : tensor<i64> to tensor<i32>
    %14 = tosa.const_shape  {values = dense<1> : tensor<2xindex>} : () -> !tosa.shape<2>
    %15 = tosa.reshape %13, %14 : (tensor<i32>, !tosa.shape<2>) -> tensor<1x1xi32>
    %16 = tosa.gather %12, %15 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %17 = tosa.const_shape  {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
    %18 = tosa.reshape %16, %17 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %19 = tosa.reshape %extracted_slice, %11 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %20 = tosa.gather %19, %15 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %21 = tosa.reshape %20, %17 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %expanded = tensor.expand_shape %18 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %expanded_4 = tensor.expand_shape %21 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %extracted_5 = tensor.extract %expanded[%c0] : tensor<1xi64>
    %22 = arith.index_cast %extracted_5 : i64 to index
    %23 = arith.cmpi slt, %22, %c0 : index
    %24 = arith.addi %22, %dim : index
    %25 = arith.select %23, %24, %22 : index
    %26 = arith.maxsi %25, %c0 : index
    %27 = arith.minsi %26, %dim : index
    %extracted_6 = tensor.extract %expanded_4[%c0] : tensor<1xi64>
    %28 = arith.index_cast %extracted_6 : i64 to index
    %29 = arith.cmpi slt, %28, %c0 : index
    %30 = arith.addi %28, %dim : index
    %31 = arith.select %29, %30, %28 : index
    %32 = arith.maxsi %31, %c0 : index
    %33 = arith.minsi %32, %dim : index
    %34 = arith.subi %33, %27 : index
    %35 = arith.maxsi %34, %c0 : index
    %extracted_slice_7 = tensor.extract_slice %arg0[%27] [%35] [1] : tensor<?xi64> to tensor<?xi64>
    %36 = tosa.const_shape  {values = dense<[1, 10, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %37 = tosa.reshape %cst, %36 : (tensor<10x4xf32>, !tosa.shape<3>) -> tensor<1x10x4xf32>
    %38 = arith.trunci %extracted_slice_7 : tensor<?xi64> to tensor<?xi32>
    %cst_8 = arith.constant dense<0> : tensor<1xi32>
    %39 = tosa.greater %cst_8, %38 : (tensor<1xi32>, tensor<?xi32>) -> tensor<?xi1>
    %cst_9 = arith.constant dense<10> : tensor<1xi32>
    %40 = tosa.add %38, %cst_9 : (tensor<?xi32>, tensor<1xi32>) -> tensor<?xi32>
    %41 = tosa.select %39, %40, %38 : (tensor<?xi1>, tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
    %42 = tosa.const_shape  {values = dense<[1, -1]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %43 = tosa.reshape %41, %42 : (tensor<?xi32>, !tosa.shape<2>) -> tensor<1x?xi32>
    %44 = tosa.gather %37, %43 : (tensor<1x10x4xf32>, tensor<1x?xi32>) -> tensor<1x?x4xf32>
    %45 = tosa.const_shape  {values = dense<[-1, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %46 = tosa.reshape %44, %45 : (tensor<1x?x4xf32>, !tosa.shape<2>) -> tensor<?x4xf32>
    %47 = tosa.reduce_sum %46 {axis = 0 : i32} : (tensor<?x4xf32>) -> tensor<1x4xf32>
    %dim_10 = tensor.dim %46, %c0 : tensor<?x4xf32>
    %48 = arith.muli %c1, %dim_10 : index
    %49 = arith.index_cast %48 : index to i64
    %50 = arith.sitofp %49 : i64 to f32
    %from_elements_11 = tensor.from_elements %50 : tensor<1x1xf32>
    %51 = tosa.reciprocal %from_elements_11 : (tensor<1x1xf32>) -> tensor<1x1xf32>
    %52 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %53 = tosa.mul %47, %51, %52 : (tensor<1x4xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<1x4xf32>
    %collapsed = tensor.collapse_shape %53 [[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
    %expanded_12 = tensor.expand_shape %collapsed [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
    %inserted_slice = tensor.insert_slice %expanded_12 into %arg3[%arg2, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<?x4xf32>
    scf.yield %inserted_slice : tensor<?x4xf32>
  }
  return %9 : tensor<?x4xf32>
}

// -----

// Opset 13, static shapes, mode="max": the bounds, ends and trip count are
// constants or static slices, and the gathers wrap by static sizes.
// CHECK-LABEL: func.func @max_static(
// CHECK-SAME: %[[IDS:[^:]*]]: tensor<4xi64> {{.*}}, %[[OFF:[^:]*]]: tensor<2xi64>
// CHECK-NOT: scf.for
// CHECK: %[[T:.*]] = ember.table.from_tensor
// CHECK: %[[R:.*]] = ember.embedding_bag %[[T]][%[[IDS]], %[[OFF]]] pooling = max : !ember.table<10x4, f32>, tensor<4xi64>, tensor<2xi64> -> tensor<2x4xf32>
// CHECK: %[[C:.*]] = tensor.cast %[[R]] : tensor<2x4xf32> to tensor<?x4xf32>
// CHECK-NOT: scf.for
// CHECK: return %[[C]]
func.func @max_static(%arg0: tensor<4xi64> {onnx.name = "ids"}, %arg1: tensor<2xi64> {onnx.name = "offsets"}) -> (tensor<?x4xf32> {onnx.name = "pooled"}) {
  %cst = arith.constant dense<5.000000e-01> : tensor<10x4xf32>
  %cst_0 = arith.constant dense<4> : tensor<1xi64>
  %0 = tosa.concat %arg1, %cst_0 {axis = 0 : i32} : (tensor<2xi64>, tensor<1xi64>) -> tensor<3xi64>
  %extracted_slice = tensor.extract_slice %0[1] [2] [1] : tensor<3xi64> to tensor<2xi64>
  %cst_1 = arith.constant dense<2> : tensor<i64>
  %extracted = tensor.extract %cst_1[] : tensor<i64>
  %1 = arith.index_cast %extracted : i64 to index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %2 = tensor.empty(%1) : tensor<?x4xf32>
  %3 = scf.for %arg2 = %c0 to %1 step %c1 iter_args(%arg3 = %2) -> (tensor<?x4xf32>) {
    %4 = arith.index_cast %arg2 : index to i64
    %from_elements = tensor.from_elements %4 : tensor<i64>
    %5 = tosa.const_shape  {values = dense<[1, 3, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %6 = tosa.reshape %0, %5 : (tensor<3xi64>, !tosa.shape<3>) -> tensor<1x3x1xi64>
    %7 = arith.trunci %from_elements : tensor<i64> to tensor<i32>
    %cst_2 = arith.constant dense<0> : tensor<i32>
    %8 = tosa.greater %cst_2, %7 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %cst_3 = arith.constant dense<3> : tensor<i32>
    %9 = tosa.add %7, %cst_3 : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %10 = tosa.select %8, %9, %7 : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %11 = tosa.const_shape  {values = dense<1> : tensor<2xindex>} : () -> !tosa.shape<2>
    %12 = tosa.reshape %10, %11 : (tensor<i32>, !tosa.shape<2>) -> tensor<1x1xi32>
    %13 = tosa.gather %6, %12 : (tensor<1x3x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %14 = tosa.const_shape  {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
    %15 = tosa.reshape %13, %14 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %16 = tosa.const_shape  {values = dense<[1, 2, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %17 = tosa.reshape %extracted_slice, %16 : (tensor<2xi64>, !tosa.shape<3>) -> tensor<1x2x1xi64>
    %cst_4 = arith.constant dense<2> : tensor<i32>
    %18 = tosa.add %7, %cst_4 : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %19 = tosa.select %8, %18, %7 : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %20 = tosa.reshape %19, %11 : (tensor<i32>, !tosa.shape<2>) -> tensor<1x1xi32>
    %21 = tosa.gather %17, %20 : (tensor<1x2x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %22 = tosa.reshape %21, %14 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %expanded = tensor.expand_shape %15 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %expanded_5 = tensor.expand_shape %22 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %c4 = arith.constant 4 : index
    %extracted_6 = tensor.extract %expanded[%c0] : tensor<1xi64>
    %23 = arith.index_cast %extracted_6 : i64 to index
    %24 = arith.cmpi slt, %23, %c0 : index
    %25 = arith.addi %23, %c4 : index
    %26 = arith.select %24, %25, %23 : index
    %27 = arith.maxsi %26, %c0 : index
    %28 = arith.minsi %27, %c4 : index
    %extracted_7 = tensor.extract %expanded_5[%c0] : tensor<1xi64>
    %29 = arith.index_cast %extracted_7 : i64 to index
    %30 = arith.cmpi slt, %29, %c0 : index
    %31 = arith.addi %29, %c4 : index
    %32 = arith.select %30, %31, %29 : index
    %33 = arith.maxsi %32, %c0 : index
    %34 = arith.minsi %33, %c4 : index
    %35 = arith.subi %34, %28 : index
    %36 = arith.maxsi %35, %c0 : index
    %extracted_slice_8 = tensor.extract_slice %arg0[%28] [%36] [1] : tensor<4xi64> to tensor<?xi64>
    %37 = tosa.const_shape  {values = dense<[1, 10, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %38 = tosa.reshape %cst, %37 : (tensor<10x4xf32>, !tosa.shape<3>) -> tensor<1x10x4xf32>
    %39 = arith.trunci %extracted_slice_8 : tensor<?xi64> to tensor<?xi32>
    %cst_9 = arith.constant dense<0> : tensor<1xi32>
    %40 = tosa.greater %cst_9, %39 : (tensor<1xi32>, tensor<?xi32>) -> tensor<?xi1>
    %cst_10 = arith.constant dense<10> : tensor<1xi32>
    %41 = tosa.add %39, %cst_10 : (tensor<?xi32>, tensor<1xi32>) -> tensor<?xi32>
    %42 = tosa.select %40, %41, %39 : (tensor<?xi1>, tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
    %43 = tosa.const_shape  {values = dense<[1, -1]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %44 = tosa.reshape %42, %43 : (tensor<?xi32>, !tosa.shape<2>) -> tensor<1x?xi32>
    %45 = tosa.gather %38, %44 : (tensor<1x10x4xf32>, tensor<1x?xi32>) -> tensor<1x?x4xf32>
    %46 = tosa.const_shape  {values = dense<[-1, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %47 = tosa.reshape %45, %46 : (tensor<1x?x4xf32>, !tosa.shape<2>) -> tensor<?x4xf32>
    %48 = tosa.reduce_max %47 {axis = 0 : i32} : (tensor<?x4xf32>) -> tensor<1x4xf32>
    %collapsed = tensor.collapse_shape %48 [[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
    %expanded_11 = tensor.expand_shape %collapsed [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
    %inserted_slice = tensor.insert_slice %expanded_11 into %arg3[%arg2, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<?x4xf32>
    scf.yield %inserted_slice : tensor<?x4xf32>
  }
  return %3 : tensor<?x4xf32>
}

// -----

// per_sample_weights: the rows are multiplied by the bag's slice of the weights.
// CHECK-LABEL: func.func @sum_per_sample_weights(
// CHECK-SAME: %[[IDS:[^:]*]]: tensor<?xi64> {{.*}}, %[[OFF:[^:]*]]: tensor<?xi64> {{.*}}, %[[PSW:[^:]*]]: tensor<?xf32>
// CHECK-NOT: scf.for
// CHECK: %[[T:.*]] = ember.table.from_tensor
// CHECK: %[[R:.*]] = ember.embedding_bag %[[T]][%[[IDS]], %[[OFF]]] weights(%[[PSW]]) pooling = sum : !ember.table<10x4, f32>, tensor<?xi64>, tensor<?xi64>, tensor<?xf32> -> tensor<?x4xf32>
// CHECK-NOT: scf.for
// CHECK: return %[[R]]
func.func @sum_per_sample_weights(%arg0: tensor<?xi64> {onnx.dim_params = ["n"], onnx.name = "ids"}, %arg1: tensor<?xi64> {onnx.dim_params = ["batch"], onnx.name = "offsets"}, %arg2: tensor<?xf32> {onnx.dim_params = ["n"], onnx.name = "w"}) -> (tensor<?x4xf32> {onnx.name = "pooled"}) {
  %cst = arith.constant dense<5.000000e-01> : tensor<10x4xf32>
  %c0 = arith.constant 0 : index
  %dim = tensor.dim %arg0, %c0 : tensor<?xi64>
  %0 = arith.index_cast %dim : index to i64
  %from_elements = tensor.from_elements %0 : tensor<1xi64>
  %1 = tosa.concat %arg1, %from_elements {axis = 0 : i32} : (tensor<?xi64>, tensor<1xi64>) -> tensor<?xi64>
  %dim_0 = tensor.dim %1, %c0 : tensor<?xi64>
  %c1 = arith.constant 1 : index
  %2 = arith.minsi %c1, %dim_0 : index
  %c9223372036854775807 = arith.constant 9223372036854775807 : index
  %3 = arith.minsi %c9223372036854775807, %dim_0 : index
  %4 = arith.subi %3, %2 : index
  %5 = arith.maxsi %4, %c0 : index
  %extracted_slice = tensor.extract_slice %1[%2] [%5] [1] : tensor<?xi64> to tensor<?xi64>
  %dim_1 = tensor.dim %extracted_slice, %c0 : tensor<?xi64>
  %6 = arith.index_cast %dim_1 : index to i64
  %from_elements_2 = tensor.from_elements %6 : tensor<i64>
  %extracted = tensor.extract %from_elements_2[] : tensor<i64>
  %7 = arith.index_cast %extracted : i64 to index
  %8 = tensor.empty(%7) : tensor<?x4xf32>
  %9 = scf.for %arg3 = %c0 to %7 step %c1 iter_args(%arg4 = %8) -> (tensor<?x4xf32>) {
    %10 = arith.index_cast %arg3 : index to i64
    %from_elements_3 = tensor.from_elements %10 : tensor<i64>
    %11 = tosa.const_shape  {values = dense<[1, -1, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %12 = tosa.reshape %1, %11 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %13 = arith.trunci %from_elements_3 : tensor<i64> to tensor<i32>
    %14 = tosa.const_shape  {values = dense<1> : tensor<2xindex>} : () -> !tosa.shape<2>
    %15 = tosa.reshape %13, %14 : (tensor<i32>, !tosa.shape<2>) -> tensor<1x1xi32>
    %16 = tosa.gather %12, %15 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %17 = tosa.const_shape  {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
    %18 = tosa.reshape %16, %17 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %19 = tosa.reshape %extracted_slice, %11 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %20 = tosa.gather %19, %15 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %21 = tosa.reshape %20, %17 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %expanded = tensor.expand_shape %18 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %expanded_4 = tensor.expand_shape %21 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %extracted_5 = tensor.extract %expanded[%c0] : tensor<1xi64>
    %22 = arith.index_cast %extracted_5 : i64 to index
    %23 = arith.cmpi slt, %22, %c0 : index
    %24 = arith.addi %22, %dim : index
    %25 = arith.select %23, %24, %22 : index
    %26 = arith.maxsi %25, %c0 : index
    %27 = arith.minsi %26, %dim : index
    %extracted_6 = tensor.extract %expanded_4[%c0] : tensor<1xi64>
    %28 = arith.index_cast %extracted_6 : i64 to index
    %29 = arith.cmpi slt, %28, %c0 : index
    %30 = arith.addi %28, %dim : index
    %31 = arith.select %29, %30, %28 : index
    %32 = arith.maxsi %31, %c0 : index
    %33 = arith.minsi %32, %dim : index
    %34 = arith.subi %33, %27 : index
    %35 = arith.maxsi %34, %c0 : index
    %extracted_slice_7 = tensor.extract_slice %arg0[%27] [%35] [1] : tensor<?xi64> to tensor<?xi64>
    %36 = tosa.const_shape  {values = dense<[1, 10, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %37 = tosa.reshape %cst, %36 : (tensor<10x4xf32>, !tosa.shape<3>) -> tensor<1x10x4xf32>
    %38 = arith.trunci %extracted_slice_7 : tensor<?xi64> to tensor<?xi32>
    %cst_8 = arith.constant dense<0> : tensor<1xi32>
    %39 = tosa.greater %cst_8, %38 : (tensor<1xi32>, tensor<?xi32>) -> tensor<?xi1>
    %cst_9 = arith.constant dense<10> : tensor<1xi32>
    %40 = tosa.add %38, %cst_9 : (tensor<?xi32>, tensor<1xi32>) -> tensor<?xi32>
    %41 = tosa.select %39, %40, %38 : (tensor<?xi1>, tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
    %42 = tosa.const_shape  {values = dense<[1, -1]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %43 = tosa.reshape %41, %42 : (tensor<?xi32>, !tosa.shape<2>) -> tensor<1x?xi32>
    %44 = tosa.gather %37, %43 : (tensor<1x10x4xf32>, tensor<1x?xi32>) -> tensor<1x?x4xf32>
    %45 = tosa.const_shape  {values = dense<[-1, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %46 = tosa.reshape %44, %45 : (tensor<1x?x4xf32>, !tosa.shape<2>) -> tensor<?x4xf32>
    %dim_10 = tensor.dim %arg2, %c0 : tensor<?xf32>
    %47 = arith.addi %22, %dim_10 : index
    %48 = arith.select %23, %47, %22 : index
    %49 = arith.maxsi %48, %c0 : index
    %50 = arith.minsi %49, %dim_10 : index
    %51 = arith.addi %28, %dim_10 : index
    %52 = arith.select %29, %51, %28 : index
    %53 = arith.maxsi %52, %c0 : index
    %54 = arith.minsi %53, %dim_10 : index
    %55 = arith.subi %54, %50 : index
    %56 = arith.maxsi %55, %c0 : index
    %extracted_slice_11 = tensor.extract_slice %arg2[%50] [%56] [1] : tensor<?xf32> to tensor<?xf32>
    %dim_12 = tensor.dim %extracted_slice_11, %c0 : tensor<?xf32>
    %expanded_13 = tensor.expand_shape %extracted_slice_11 [[0, 1]] output_shape [%dim_12, 1] : tensor<?xf32> into tensor<?x1xf32>
    %57 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %58 = tosa.mul %46, %expanded_13, %57 : (tensor<?x4xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x4xf32>
    %59 = tosa.reduce_sum %58 {axis = 0 : i32} : (tensor<?x4xf32>) -> tensor<1x4xf32>
    %collapsed = tensor.collapse_shape %59 [[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
    %expanded_14 = tensor.expand_shape %collapsed [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
    %inserted_slice = tensor.insert_slice %expanded_14 into %arg4[%arg3, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<?x4xf32>
    scf.yield %inserted_slice : tensor<?x4xf32>
  }
  return %9 : tensor<?x4xf32>
}

// -----

// include_last_offset=True: the offsets are the bounds themselves.
// CHECK-LABEL: func.func @sum_include_last_offset(
// CHECK-SAME: %[[IDS:[^:]*]]: tensor<?xi64> {{.*}}, %[[OFF:[^:]*]]: tensor<?xi64>
// CHECK-NOT: scf.for
// CHECK: %[[T:.*]] = ember.table.from_tensor
// CHECK: %[[R:.*]] = ember.embedding_bag %[[T]][%[[IDS]], %[[OFF]]] pooling = sum include_last_offset : !ember.table<10x4, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf32>
// CHECK-NOT: scf.for
// CHECK: return %[[R]]
func.func @sum_include_last_offset(%arg0: tensor<?xi64> {onnx.dim_params = ["n"], onnx.name = "ids"}, %arg1: tensor<?xi64> {onnx.dim_params = ["batch"], onnx.name = "offsets"}) -> (tensor<?x4xf32> {onnx.name = "pooled"}) {
  %cst = arith.constant dense<5.000000e-01> : tensor<10x4xf32>
  %c0 = arith.constant 0 : index
  %dim = tensor.dim %arg1, %c0 : tensor<?xi64>
  %c1 = arith.constant 1 : index
  %0 = arith.minsi %c1, %dim : index
  %c9223372036854775807 = arith.constant 9223372036854775807 : index
  %1 = arith.minsi %c9223372036854775807, %dim : index
  %2 = arith.subi %1, %0 : index
  %3 = arith.maxsi %2, %c0 : index
  %extracted_slice = tensor.extract_slice %arg1[%0] [%3] [1] : tensor<?xi64> to tensor<?xi64>
  %dim_0 = tensor.dim %extracted_slice, %c0 : tensor<?xi64>
  %4 = arith.index_cast %dim_0 : index to i64
  %from_elements = tensor.from_elements %4 : tensor<i64>
  %extracted = tensor.extract %from_elements[] : tensor<i64>
  %5 = arith.index_cast %extracted : i64 to index
  %6 = tensor.empty(%5) : tensor<?x4xf32>
  %7 = scf.for %arg2 = %c0 to %5 step %c1 iter_args(%arg3 = %6) -> (tensor<?x4xf32>) {
    %8 = arith.index_cast %arg2 : index to i64
    %from_elements_1 = tensor.from_elements %8 : tensor<i64>
    %9 = tosa.const_shape  {values = dense<[1, -1, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %10 = tosa.reshape %arg1, %9 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %11 = arith.trunci %from_elements_1 : tensor<i64> to tensor<i32>
    %12 = tosa.const_shape  {values = dense<1> : tensor<2xindex>} : () -> !tosa.shape<2>
    %13 = tosa.reshape %11, %12 : (tensor<i32>, !tosa.shape<2>) -> tensor<1x1xi32>
    %14 = tosa.gather %10, %13 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %15 = tosa.const_shape  {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
    %16 = tosa.reshape %14, %15 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %17 = tosa.reshape %extracted_slice, %9 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %18 = tosa.gather %17, %13 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %19 = tosa.reshape %18, %15 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %expanded = tensor.expand_shape %16 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %expanded_2 = tensor.expand_shape %19 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %dim_3 = tensor.dim %arg0, %c0 : tensor<?xi64>
    %extracted_4 = tensor.extract %expanded[%c0] : tensor<1xi64>
    %20 = arith.index_cast %extracted_4 : i64 to index
    %21 = arith.cmpi slt, %20, %c0 : index
    %22 = arith.addi %20, %dim_3 : index
    %23 = arith.select %21, %22, %20 : index
    %24 = arith.maxsi %23, %c0 : index
    %25 = arith.minsi %24, %dim_3 : index
    %extracted_5 = tensor.extract %expanded_2[%c0] : tensor<1xi64>
    %26 = arith.index_cast %extracted_5 : i64 to index
    %27 = arith.cmpi slt, %26, %c0 : index
    %28 = arith.addi %26, %dim_3 : index
    %29 = arith.select %27, %28, %26 : index
    %30 = arith.maxsi %29, %c0 : index
    %31 = arith.minsi %30, %dim_3 : index
    %32 = arith.subi %31, %25 : index
    %33 = arith.maxsi %32, %c0 : index
    %extracted_slice_6 = tensor.extract_slice %arg0[%25] [%33] [1] : tensor<?xi64> to tensor<?xi64>
    %34 = tosa.const_shape  {values = dense<[1, 10, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %35 = tosa.reshape %cst, %34 : (tensor<10x4xf32>, !tosa.shape<3>) -> tensor<1x10x4xf32>
    %36 = arith.trunci %extracted_slice_6 : tensor<?xi64> to tensor<?xi32>
    %cst_7 = arith.constant dense<0> : tensor<1xi32>
    %37 = tosa.greater %cst_7, %36 : (tensor<1xi32>, tensor<?xi32>) -> tensor<?xi1>
    %cst_8 = arith.constant dense<10> : tensor<1xi32>
    %38 = tosa.add %36, %cst_8 : (tensor<?xi32>, tensor<1xi32>) -> tensor<?xi32>
    %39 = tosa.select %37, %38, %36 : (tensor<?xi1>, tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
    %40 = tosa.const_shape  {values = dense<[1, -1]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %41 = tosa.reshape %39, %40 : (tensor<?xi32>, !tosa.shape<2>) -> tensor<1x?xi32>
    %42 = tosa.gather %35, %41 : (tensor<1x10x4xf32>, tensor<1x?xi32>) -> tensor<1x?x4xf32>
    %43 = tosa.const_shape  {values = dense<[-1, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %44 = tosa.reshape %42, %43 : (tensor<1x?x4xf32>, !tosa.shape<2>) -> tensor<?x4xf32>
    %45 = tosa.reduce_sum %44 {axis = 0 : i32} : (tensor<?x4xf32>) -> tensor<1x4xf32>
    %collapsed = tensor.collapse_shape %45 [[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
    %expanded_9 = tensor.expand_shape %collapsed [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
    %inserted_slice = tensor.insert_slice %expanded_9 into %arg3[%arg2, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<?x4xf32>
    scf.yield %inserted_slice : tensor<?x4xf32>
  }
  return %7 : tensor<?x4xf32>
}

// -----

// Two bags in one model: a 2-D input (torch computes constant offsets
// [0, 2] and the importer folds the bounds to constants) and a dynamic one.
// CHECK-LABEL: func.func @two_bags_constant_offsets(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x2xi64> {{.*}}, %[[IDS:[^:]*]]: tensor<?xi64> {{.*}}, %[[OFF:[^:]*]]: tensor<?xi64>
// CHECK-NOT: scf.for
// CHECK: %[[FLAT:.*]] = tosa.reshape %[[X]]
// CHECK-DAG: %[[T1:.*]] = ember.table.from_tensor %{{.*}} : tensor<10x4xf32> -> !ember.table<10x4, f32>
// CHECK-DAG: %[[C:.*]] = arith.constant dense<[0, 2]> : tensor<2xi64>
// CHECK: %[[R1:.*]] = ember.embedding_bag %[[T1]][%[[FLAT]], %[[C]]] pooling = sum : !ember.table<10x4, f32>, tensor<4xi64>, tensor<2xi64> -> tensor<2x4xf32>
// CHECK: %[[T2:.*]] = ember.table.from_tensor %{{.*}} : tensor<7x4xf32> -> !ember.table<7x4, f32>
// CHECK: %[[R2:.*]] = ember.embedding_bag %[[T2]][%[[IDS]], %[[OFF]]] pooling = max : !ember.table<7x4, f32>, tensor<?xi64>, tensor<?xi64> -> tensor<?x4xf32>
// CHECK-NOT: scf.for
// CHECK: tosa.concat %{{.*}}, %[[R2]] {axis = 1 : i32}
func.func @two_bags_constant_offsets(%arg0: tensor<2x2xi64> {onnx.name = "x"}, %arg1: tensor<?xi64> {onnx.dim_params = ["n"], onnx.name = "ids"}, %arg2: tensor<?xi64> {onnx.dim_params = ["b"], onnx.name = "off"}) -> (tensor<?x8xf32> {onnx.name = "69"}) {
  %cst = arith.constant dense<5.000000e-01> : tensor<10x4xf32>
  %cst_0 = arith.constant dense<5.000000e-01> : tensor<7x4xf32>
  %0 = tosa.const_shape  {values = dense<4> : tensor<1xindex>} : () -> !tosa.shape<1>
  %1 = tosa.reshape %arg0, %0 : (tensor<2x2xi64>, !tosa.shape<1>) -> tensor<4xi64>
  %cst_1 = arith.constant dense<[0, 2, 4]> : tensor<3xi64>
  %cst_2 = arith.constant dense<[2, 4]> : tensor<2xi64>
  %cst_3 = arith.constant dense<2> : tensor<i64>
  %extracted = tensor.extract %cst_3[] : tensor<i64>
  %2 = arith.index_cast %extracted : i64 to index
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %3 = tensor.empty(%2) : tensor<?x4xf32>
  %4 = scf.for %arg3 = %c0 to %2 step %c1 iter_args(%arg4 = %3) -> (tensor<?x4xf32>) {
    %16 = arith.index_cast %arg3 : index to i64
    %from_elements_8 = tensor.from_elements %16 : tensor<i64>
    %17 = tosa.const_shape  {values = dense<[1, 3, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %18 = tosa.reshape %cst_1, %17 : (tensor<3xi64>, !tosa.shape<3>) -> tensor<1x3x1xi64>
    %19 = arith.trunci %from_elements_8 : tensor<i64> to tensor<i32>
    %cst_9 = arith.constant dense<0> : tensor<i32>
    %20 = tosa.greater %cst_9, %19 : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %cst_10 = arith.constant dense<3> : tensor<i32>
    %21 = tosa.add %19, %cst_10 : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %22 = tosa.select %20, %21, %19 : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %23 = tosa.const_shape  {values = dense<1> : tensor<2xindex>} : () -> !tosa.shape<2>
    %24 = tosa.reshape %22, %23 : (tensor<i32>, !tosa.shape<2>) -> tensor<1x1xi32>
    %25 = tosa.gather %18, %24 : (tensor<1x3x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %26 = tosa.const_shape  {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
    %27 = tosa.reshape %25, %26 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %28 = tosa.const_shape  {values = dense<[1, 2, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %29 = tosa.reshape %cst_2, %28 : (tensor<2xi64>, !tosa.shape<3>) -> tensor<1x2x1xi64>
    %cst_11 = arith.constant dense<2> : tensor<i32>
    %30 = tosa.add %19, %cst_11 : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %31 = tosa.select %20, %30, %19 : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %32 = tosa.reshape %31, %23 : (tensor<i32>, !tosa.shape<2>) -> tensor<1x1xi32>
    %33 = tosa.gather %29, %32 : (tensor<1x2x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %34 = tosa.reshape %33, %26 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %expanded = tensor.expand_shape %27 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %expanded_12 = tensor.expand_shape %34 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %c4 = arith.constant 4 : index
    %extracted_13 = tensor.extract %expanded[%c0] : tensor<1xi64>
    %35 = arith.index_cast %extracted_13 : i64 to index
    %36 = arith.cmpi slt, %35, %c0 : index
    %37 = arith.addi %35, %c4 : index
    %38 = arith.select %36, %37, %35 : index
    %39 = arith.maxsi %38, %c0 : index
    %40 = arith.minsi %39, %c4 : index
    %extracted_14 = tensor.extract %expanded_12[%c0] : tensor<1xi64>
    %41 = arith.index_cast %extracted_14 : i64 to index
    %42 = arith.cmpi slt, %41, %c0 : index
    %43 = arith.addi %41, %c4 : index
    %44 = arith.select %42, %43, %41 : index
    %45 = arith.maxsi %44, %c0 : index
    %46 = arith.minsi %45, %c4 : index
    %47 = arith.subi %46, %40 : index
    %48 = arith.maxsi %47, %c0 : index
    %extracted_slice_15 = tensor.extract_slice %1[%40] [%48] [1] : tensor<4xi64> to tensor<?xi64>
    %49 = tosa.const_shape  {values = dense<[1, 10, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %50 = tosa.reshape %cst, %49 : (tensor<10x4xf32>, !tosa.shape<3>) -> tensor<1x10x4xf32>
    %51 = arith.trunci %extracted_slice_15 : tensor<?xi64> to tensor<?xi32>
    %cst_16 = arith.constant dense<0> : tensor<1xi32>
    %52 = tosa.greater %cst_16, %51 : (tensor<1xi32>, tensor<?xi32>) -> tensor<?xi1>
    %cst_17 = arith.constant dense<10> : tensor<1xi32>
    %53 = tosa.add %51, %cst_17 : (tensor<?xi32>, tensor<1xi32>) -> tensor<?xi32>
    %54 = tosa.select %52, %53, %51 : (tensor<?xi1>, tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
    %55 = tosa.const_shape  {values = dense<[1, -1]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %56 = tosa.reshape %54, %55 : (tensor<?xi32>, !tosa.shape<2>) -> tensor<1x?xi32>
    %57 = tosa.gather %50, %56 : (tensor<1x10x4xf32>, tensor<1x?xi32>) -> tensor<1x?x4xf32>
    %58 = tosa.const_shape  {values = dense<[-1, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %59 = tosa.reshape %57, %58 : (tensor<1x?x4xf32>, !tosa.shape<2>) -> tensor<?x4xf32>
    %60 = tosa.reduce_sum %59 {axis = 0 : i32} : (tensor<?x4xf32>) -> tensor<1x4xf32>
    %collapsed = tensor.collapse_shape %60 [[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
    %expanded_18 = tensor.expand_shape %collapsed [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
    %inserted_slice = tensor.insert_slice %expanded_18 into %arg4[%arg3, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<?x4xf32>
    scf.yield %inserted_slice : tensor<?x4xf32>
  }
  %dim = tensor.dim %arg1, %c0 : tensor<?xi64>
  %5 = arith.index_cast %dim : index to i64
  %from_elements = tensor.from_elements %5 : tensor<1xi64>
  %6 = tosa.concat %arg2, %from_elements {axis = 0 : i32} : (tensor<?xi64>, tensor<1xi64>) -> tensor<?xi64>
  %dim_4 = tensor.dim %6, %c0 : tensor<?xi64>
  %7 = arith.minsi %c1, %dim_4 : index
  %c9223372036854775807 = arith.constant 9223372036854775807 : index
  %8 = arith.minsi %c9223372036854775807, %dim_4 : index
  %9 = arith.subi %8, %7 : index
  %10 = arith.maxsi %9, %c0 : index
  %extracted_slice = tensor.extract_slice %6[%7] [%10] [1] : tensor<?xi64> to tensor<?xi64>
  %dim_5 = tensor.dim %extracted_slice, %c0 : tensor<?xi64>
  %11 = arith.index_cast %dim_5 : index to i64
  %from_elements_6 = tensor.from_elements %11 : tensor<i64>
  %extracted_7 = tensor.extract %from_elements_6[] : tensor<i64>
  %12 = arith.index_cast %extracted_7 : i64 to index
  %13 = tensor.empty(%12) : tensor<?x4xf32>
  %14 = scf.for %arg3 = %c0 to %12 step %c1 iter_args(%arg4 = %13) -> (tensor<?x4xf32>) {
    %16 = arith.index_cast %arg3 : index to i64
    %from_elements_8 = tensor.from_elements %16 : tensor<i64>
    %17 = tosa.const_shape  {values = dense<[1, -1, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %18 = tosa.reshape %6, %17 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %19 = arith.trunci %from_elements_8 : tensor<i64> to tensor<i32>
    %20 = tosa.const_shape  {values = dense<1> : tensor<2xindex>} : () -> !tosa.shape<2>
    %21 = tosa.reshape %19, %20 : (tensor<i32>, !tosa.shape<2>) -> tensor<1x1xi32>
    %22 = tosa.gather %18, %21 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %23 = tosa.const_shape  {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
    %24 = tosa.reshape %22, %23 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %25 = tosa.reshape %extracted_slice, %17 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %26 = tosa.gather %25, %21 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %27 = tosa.reshape %26, %23 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %expanded = tensor.expand_shape %24 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %expanded_9 = tensor.expand_shape %27 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %extracted_10 = tensor.extract %expanded[%c0] : tensor<1xi64>
    %28 = arith.index_cast %extracted_10 : i64 to index
    %29 = arith.cmpi slt, %28, %c0 : index
    %30 = arith.addi %28, %dim : index
    %31 = arith.select %29, %30, %28 : index
    %32 = arith.maxsi %31, %c0 : index
    %33 = arith.minsi %32, %dim : index
    %extracted_11 = tensor.extract %expanded_9[%c0] : tensor<1xi64>
    %34 = arith.index_cast %extracted_11 : i64 to index
    %35 = arith.cmpi slt, %34, %c0 : index
    %36 = arith.addi %34, %dim : index
    %37 = arith.select %35, %36, %34 : index
    %38 = arith.maxsi %37, %c0 : index
    %39 = arith.minsi %38, %dim : index
    %40 = arith.subi %39, %33 : index
    %41 = arith.maxsi %40, %c0 : index
    %extracted_slice_12 = tensor.extract_slice %arg1[%33] [%41] [1] : tensor<?xi64> to tensor<?xi64>
    %42 = tosa.const_shape  {values = dense<[1, 7, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %43 = tosa.reshape %cst_0, %42 : (tensor<7x4xf32>, !tosa.shape<3>) -> tensor<1x7x4xf32>
    %44 = arith.trunci %extracted_slice_12 : tensor<?xi64> to tensor<?xi32>
    %cst_13 = arith.constant dense<0> : tensor<1xi32>
    %45 = tosa.greater %cst_13, %44 : (tensor<1xi32>, tensor<?xi32>) -> tensor<?xi1>
    %cst_14 = arith.constant dense<7> : tensor<1xi32>
    %46 = tosa.add %44, %cst_14 : (tensor<?xi32>, tensor<1xi32>) -> tensor<?xi32>
    %47 = tosa.select %45, %46, %44 : (tensor<?xi1>, tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
    %48 = tosa.const_shape  {values = dense<[1, -1]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %49 = tosa.reshape %47, %48 : (tensor<?xi32>, !tosa.shape<2>) -> tensor<1x?xi32>
    %50 = tosa.gather %43, %49 : (tensor<1x7x4xf32>, tensor<1x?xi32>) -> tensor<1x?x4xf32>
    %51 = tosa.const_shape  {values = dense<[-1, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %52 = tosa.reshape %50, %51 : (tensor<1x?x4xf32>, !tosa.shape<2>) -> tensor<?x4xf32>
    %53 = tosa.reduce_max %52 {axis = 0 : i32} : (tensor<?x4xf32>) -> tensor<1x4xf32>
    %collapsed = tensor.collapse_shape %53 [[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
    %expanded_15 = tensor.expand_shape %collapsed [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
    %inserted_slice = tensor.insert_slice %expanded_15 into %arg4[%arg3, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<?x4xf32>
    scf.yield %inserted_slice : tensor<?x4xf32>
  }
  %15 = tosa.concat %4, %14 {axis = 1 : i32} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x8xf32>
  return %15 : tensor<?x8xf32>
}

// -----

// The loop starts at 1: the first row is never written.
// CHECK-LABEL: func.func @lower_bound_one(
// CHECK: scf.for
// CHECK-NOT: ember.embedding_bag
// CHECK: return
func.func @lower_bound_one(%arg0: tensor<?xi64> {onnx.dim_params = ["n"], onnx.name = "ids"}, %arg1: tensor<?xi64> {onnx.dim_params = ["batch"], onnx.name = "offsets"}) -> (tensor<?x4xf32> {onnx.name = "pooled"}) {
  %cst = arith.constant dense<5.000000e-01> : tensor<10x4xf32>
  %c0 = arith.constant 0 : index
  %dim = tensor.dim %arg0, %c0 : tensor<?xi64>
  %0 = arith.index_cast %dim : index to i64
  %from_elements = tensor.from_elements %0 : tensor<1xi64>
  %1 = tosa.concat %arg1, %from_elements {axis = 0 : i32} : (tensor<?xi64>, tensor<1xi64>) -> tensor<?xi64>
  %dim_0 = tensor.dim %1, %c0 : tensor<?xi64>
  %c1 = arith.constant 1 : index
  %2 = arith.minsi %c1, %dim_0 : index
  %c9223372036854775807 = arith.constant 9223372036854775807 : index
  %3 = arith.minsi %c9223372036854775807, %dim_0 : index
  %4 = arith.subi %3, %2 : index
  %5 = arith.maxsi %4, %c0 : index
  %extracted_slice = tensor.extract_slice %1[%2] [%5] [1] : tensor<?xi64> to tensor<?xi64>
  %dim_1 = tensor.dim %extracted_slice, %c0 : tensor<?xi64>
  %6 = arith.index_cast %dim_1 : index to i64
  %from_elements_2 = tensor.from_elements %6 : tensor<i64>
  %extracted = tensor.extract %from_elements_2[] : tensor<i64>
  %7 = arith.index_cast %extracted : i64 to index
  %8 = tensor.empty(%7) : tensor<?x4xf32>
  %9 = scf.for %arg2 = %c1 to %7 step %c1 iter_args(%arg3 = %8) -> (tensor<?x4xf32>) {
    %10 = arith.index_cast %arg2 : index to i64
    %from_elements_3 = tensor.from_elements %10 : tensor<i64>
    %11 = tosa.const_shape  {values = dense<[1, -1, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %12 = tosa.reshape %1, %11 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %13 = arith.trunci %from_elements_3 : tensor<i64> to tensor<i32>
    %14 = tosa.const_shape  {values = dense<1> : tensor<2xindex>} : () -> !tosa.shape<2>
    %15 = tosa.reshape %13, %14 : (tensor<i32>, !tosa.shape<2>) -> tensor<1x1xi32>
    %16 = tosa.gather %12, %15 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %17 = tosa.const_shape  {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
    %18 = tosa.reshape %16, %17 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %19 = tosa.reshape %extracted_slice, %11 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %20 = tosa.gather %19, %15 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %21 = tosa.reshape %20, %17 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %expanded = tensor.expand_shape %18 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %expanded_4 = tensor.expand_shape %21 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %extracted_5 = tensor.extract %expanded[%c0] : tensor<1xi64>
    %22 = arith.index_cast %extracted_5 : i64 to index
    %23 = arith.cmpi slt, %22, %c0 : index
    %24 = arith.addi %22, %dim : index
    %25 = arith.select %23, %24, %22 : index
    %26 = arith.maxsi %25, %c0 : index
    %27 = arith.minsi %26, %dim : index
    %extracted_6 = tensor.extract %expanded_4[%c0] : tensor<1xi64>
    %28 = arith.index_cast %extracted_6 : i64 to index
    %29 = arith.cmpi slt, %28, %c0 : index
    %30 = arith.addi %28, %dim : index
    %31 = arith.select %29, %30, %28 : index
    %32 = arith.maxsi %31, %c0 : index
    %33 = arith.minsi %32, %dim : index
    %34 = arith.subi %33, %27 : index
    %35 = arith.maxsi %34, %c0 : index
    %extracted_slice_7 = tensor.extract_slice %arg0[%27] [%35] [1] : tensor<?xi64> to tensor<?xi64>
    %36 = tosa.const_shape  {values = dense<[1, 10, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %37 = tosa.reshape %cst, %36 : (tensor<10x4xf32>, !tosa.shape<3>) -> tensor<1x10x4xf32>
    %38 = arith.trunci %extracted_slice_7 : tensor<?xi64> to tensor<?xi32>
    %cst_8 = arith.constant dense<0> : tensor<1xi32>
    %39 = tosa.greater %cst_8, %38 : (tensor<1xi32>, tensor<?xi32>) -> tensor<?xi1>
    %cst_9 = arith.constant dense<10> : tensor<1xi32>
    %40 = tosa.add %38, %cst_9 : (tensor<?xi32>, tensor<1xi32>) -> tensor<?xi32>
    %41 = tosa.select %39, %40, %38 : (tensor<?xi1>, tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
    %42 = tosa.const_shape  {values = dense<[1, -1]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %43 = tosa.reshape %41, %42 : (tensor<?xi32>, !tosa.shape<2>) -> tensor<1x?xi32>
    %44 = tosa.gather %37, %43 : (tensor<1x10x4xf32>, tensor<1x?xi32>) -> tensor<1x?x4xf32>
    %45 = tosa.const_shape  {values = dense<[-1, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %46 = tosa.reshape %44, %45 : (tensor<1x?x4xf32>, !tosa.shape<2>) -> tensor<?x4xf32>
    %47 = tosa.reduce_sum %46 {axis = 0 : i32} : (tensor<?x4xf32>) -> tensor<1x4xf32>
    %collapsed = tensor.collapse_shape %47 [[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
    %expanded_10 = tensor.expand_shape %collapsed [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
    %inserted_slice = tensor.insert_slice %expanded_10 into %arg3[%arg2, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<?x4xf32>
    scf.yield %inserted_slice : tensor<?x4xf32>
  }
  return %9 : tensor<?x4xf32>
}

// -----

// Step 2: every other bag.
// CHECK-LABEL: func.func @step_two(
// CHECK: scf.for
// CHECK-NOT: ember.embedding_bag
// CHECK: return
func.func @step_two(%arg0: tensor<?xi64> {onnx.dim_params = ["n"], onnx.name = "ids"}, %arg1: tensor<?xi64> {onnx.dim_params = ["batch"], onnx.name = "offsets"}) -> (tensor<?x4xf32> {onnx.name = "pooled"}) {
  %cst = arith.constant dense<5.000000e-01> : tensor<10x4xf32>
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %dim = tensor.dim %arg0, %c0 : tensor<?xi64>
  %0 = arith.index_cast %dim : index to i64
  %from_elements = tensor.from_elements %0 : tensor<1xi64>
  %1 = tosa.concat %arg1, %from_elements {axis = 0 : i32} : (tensor<?xi64>, tensor<1xi64>) -> tensor<?xi64>
  %dim_0 = tensor.dim %1, %c0 : tensor<?xi64>
  %c1 = arith.constant 1 : index
  %2 = arith.minsi %c1, %dim_0 : index
  %c9223372036854775807 = arith.constant 9223372036854775807 : index
  %3 = arith.minsi %c9223372036854775807, %dim_0 : index
  %4 = arith.subi %3, %2 : index
  %5 = arith.maxsi %4, %c0 : index
  %extracted_slice = tensor.extract_slice %1[%2] [%5] [1] : tensor<?xi64> to tensor<?xi64>
  %dim_1 = tensor.dim %extracted_slice, %c0 : tensor<?xi64>
  %6 = arith.index_cast %dim_1 : index to i64
  %from_elements_2 = tensor.from_elements %6 : tensor<i64>
  %extracted = tensor.extract %from_elements_2[] : tensor<i64>
  %7 = arith.index_cast %extracted : i64 to index
  %8 = tensor.empty(%7) : tensor<?x4xf32>
  %9 = scf.for %arg2 = %c0 to %7 step %c2 iter_args(%arg3 = %8) -> (tensor<?x4xf32>) {
    %10 = arith.index_cast %arg2 : index to i64
    %from_elements_3 = tensor.from_elements %10 : tensor<i64>
    %11 = tosa.const_shape  {values = dense<[1, -1, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %12 = tosa.reshape %1, %11 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %13 = arith.trunci %from_elements_3 : tensor<i64> to tensor<i32>
    %14 = tosa.const_shape  {values = dense<1> : tensor<2xindex>} : () -> !tosa.shape<2>
    %15 = tosa.reshape %13, %14 : (tensor<i32>, !tosa.shape<2>) -> tensor<1x1xi32>
    %16 = tosa.gather %12, %15 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %17 = tosa.const_shape  {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
    %18 = tosa.reshape %16, %17 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %19 = tosa.reshape %extracted_slice, %11 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %20 = tosa.gather %19, %15 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %21 = tosa.reshape %20, %17 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %expanded = tensor.expand_shape %18 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %expanded_4 = tensor.expand_shape %21 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %extracted_5 = tensor.extract %expanded[%c0] : tensor<1xi64>
    %22 = arith.index_cast %extracted_5 : i64 to index
    %23 = arith.cmpi slt, %22, %c0 : index
    %24 = arith.addi %22, %dim : index
    %25 = arith.select %23, %24, %22 : index
    %26 = arith.maxsi %25, %c0 : index
    %27 = arith.minsi %26, %dim : index
    %extracted_6 = tensor.extract %expanded_4[%c0] : tensor<1xi64>
    %28 = arith.index_cast %extracted_6 : i64 to index
    %29 = arith.cmpi slt, %28, %c0 : index
    %30 = arith.addi %28, %dim : index
    %31 = arith.select %29, %30, %28 : index
    %32 = arith.maxsi %31, %c0 : index
    %33 = arith.minsi %32, %dim : index
    %34 = arith.subi %33, %27 : index
    %35 = arith.maxsi %34, %c0 : index
    %extracted_slice_7 = tensor.extract_slice %arg0[%27] [%35] [1] : tensor<?xi64> to tensor<?xi64>
    %36 = tosa.const_shape  {values = dense<[1, 10, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %37 = tosa.reshape %cst, %36 : (tensor<10x4xf32>, !tosa.shape<3>) -> tensor<1x10x4xf32>
    %38 = arith.trunci %extracted_slice_7 : tensor<?xi64> to tensor<?xi32>
    %cst_8 = arith.constant dense<0> : tensor<1xi32>
    %39 = tosa.greater %cst_8, %38 : (tensor<1xi32>, tensor<?xi32>) -> tensor<?xi1>
    %cst_9 = arith.constant dense<10> : tensor<1xi32>
    %40 = tosa.add %38, %cst_9 : (tensor<?xi32>, tensor<1xi32>) -> tensor<?xi32>
    %41 = tosa.select %39, %40, %38 : (tensor<?xi1>, tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
    %42 = tosa.const_shape  {values = dense<[1, -1]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %43 = tosa.reshape %41, %42 : (tensor<?xi32>, !tosa.shape<2>) -> tensor<1x?xi32>
    %44 = tosa.gather %37, %43 : (tensor<1x10x4xf32>, tensor<1x?xi32>) -> tensor<1x?x4xf32>
    %45 = tosa.const_shape  {values = dense<[-1, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %46 = tosa.reshape %44, %45 : (tensor<1x?x4xf32>, !tosa.shape<2>) -> tensor<?x4xf32>
    %47 = tosa.reduce_sum %46 {axis = 0 : i32} : (tensor<?x4xf32>) -> tensor<1x4xf32>
    %collapsed = tensor.collapse_shape %47 [[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
    %expanded_10 = tensor.expand_shape %collapsed [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
    %inserted_slice = tensor.insert_slice %expanded_10 into %arg3[%arg2, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<?x4xf32>
    scf.yield %inserted_slice : tensor<?x4xf32>
  }
  return %9 : tensor<?x4xf32>
}

// -----

// One iteration per id, not per bag.
// CHECK-LABEL: func.func @trip_count_of_ids(
// CHECK: scf.for
// CHECK-NOT: ember.embedding_bag
// CHECK: return
func.func @trip_count_of_ids(%arg0: tensor<?xi64> {onnx.dim_params = ["n"], onnx.name = "ids"}, %arg1: tensor<?xi64> {onnx.dim_params = ["batch"], onnx.name = "offsets"}) -> (tensor<?x4xf32> {onnx.name = "pooled"}) {
  %cst = arith.constant dense<5.000000e-01> : tensor<10x4xf32>
  %c0 = arith.constant 0 : index
  %dim = tensor.dim %arg0, %c0 : tensor<?xi64>
  %0 = arith.index_cast %dim : index to i64
  %from_elements = tensor.from_elements %0 : tensor<1xi64>
  %1 = tosa.concat %arg1, %from_elements {axis = 0 : i32} : (tensor<?xi64>, tensor<1xi64>) -> tensor<?xi64>
  %dim_0 = tensor.dim %1, %c0 : tensor<?xi64>
  %c1 = arith.constant 1 : index
  %2 = arith.minsi %c1, %dim_0 : index
  %c9223372036854775807 = arith.constant 9223372036854775807 : index
  %3 = arith.minsi %c9223372036854775807, %dim_0 : index
  %4 = arith.subi %3, %2 : index
  %5 = arith.maxsi %4, %c0 : index
  %extracted_slice = tensor.extract_slice %1[%2] [%5] [1] : tensor<?xi64> to tensor<?xi64>
  %dim_1 = tensor.dim %extracted_slice, %c0 : tensor<?xi64>
  %6 = arith.index_cast %dim_1 : index to i64
  %from_elements_2 = tensor.from_elements %6 : tensor<i64>
  %extracted = tensor.extract %from_elements_2[] : tensor<i64>
  %7 = arith.index_cast %extracted : i64 to index
  %8 = tensor.empty(%7) : tensor<?x4xf32>
  %9 = scf.for %arg2 = %c0 to %dim step %c1 iter_args(%arg3 = %8) -> (tensor<?x4xf32>) {
    %10 = arith.index_cast %arg2 : index to i64
    %from_elements_3 = tensor.from_elements %10 : tensor<i64>
    %11 = tosa.const_shape  {values = dense<[1, -1, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %12 = tosa.reshape %1, %11 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %13 = arith.trunci %from_elements_3 : tensor<i64> to tensor<i32>
    %14 = tosa.const_shape  {values = dense<1> : tensor<2xindex>} : () -> !tosa.shape<2>
    %15 = tosa.reshape %13, %14 : (tensor<i32>, !tosa.shape<2>) -> tensor<1x1xi32>
    %16 = tosa.gather %12, %15 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %17 = tosa.const_shape  {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
    %18 = tosa.reshape %16, %17 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %19 = tosa.reshape %extracted_slice, %11 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %20 = tosa.gather %19, %15 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %21 = tosa.reshape %20, %17 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %expanded = tensor.expand_shape %18 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %expanded_4 = tensor.expand_shape %21 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %extracted_5 = tensor.extract %expanded[%c0] : tensor<1xi64>
    %22 = arith.index_cast %extracted_5 : i64 to index
    %23 = arith.cmpi slt, %22, %c0 : index
    %24 = arith.addi %22, %dim : index
    %25 = arith.select %23, %24, %22 : index
    %26 = arith.maxsi %25, %c0 : index
    %27 = arith.minsi %26, %dim : index
    %extracted_6 = tensor.extract %expanded_4[%c0] : tensor<1xi64>
    %28 = arith.index_cast %extracted_6 : i64 to index
    %29 = arith.cmpi slt, %28, %c0 : index
    %30 = arith.addi %28, %dim : index
    %31 = arith.select %29, %30, %28 : index
    %32 = arith.maxsi %31, %c0 : index
    %33 = arith.minsi %32, %dim : index
    %34 = arith.subi %33, %27 : index
    %35 = arith.maxsi %34, %c0 : index
    %extracted_slice_7 = tensor.extract_slice %arg0[%27] [%35] [1] : tensor<?xi64> to tensor<?xi64>
    %36 = tosa.const_shape  {values = dense<[1, 10, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %37 = tosa.reshape %cst, %36 : (tensor<10x4xf32>, !tosa.shape<3>) -> tensor<1x10x4xf32>
    %38 = arith.trunci %extracted_slice_7 : tensor<?xi64> to tensor<?xi32>
    %cst_8 = arith.constant dense<0> : tensor<1xi32>
    %39 = tosa.greater %cst_8, %38 : (tensor<1xi32>, tensor<?xi32>) -> tensor<?xi1>
    %cst_9 = arith.constant dense<10> : tensor<1xi32>
    %40 = tosa.add %38, %cst_9 : (tensor<?xi32>, tensor<1xi32>) -> tensor<?xi32>
    %41 = tosa.select %39, %40, %38 : (tensor<?xi1>, tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
    %42 = tosa.const_shape  {values = dense<[1, -1]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %43 = tosa.reshape %41, %42 : (tensor<?xi32>, !tosa.shape<2>) -> tensor<1x?xi32>
    %44 = tosa.gather %37, %43 : (tensor<1x10x4xf32>, tensor<1x?xi32>) -> tensor<1x?x4xf32>
    %45 = tosa.const_shape  {values = dense<[-1, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %46 = tosa.reshape %44, %45 : (tensor<1x?x4xf32>, !tosa.shape<2>) -> tensor<?x4xf32>
    %47 = tosa.reduce_sum %46 {axis = 0 : i32} : (tensor<?x4xf32>) -> tensor<1x4xf32>
    %collapsed = tensor.collapse_shape %47 [[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
    %expanded_10 = tensor.expand_shape %collapsed [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
    %inserted_slice = tensor.insert_slice %expanded_10 into %arg3[%arg2, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<?x4xf32>
    scf.yield %inserted_slice : tensor<?x4xf32>
  }
  return %9 : tensor<?x4xf32>
}

// -----

// The bag ends at offsets[i] (the starts), not at the next bound.
// CHECK-LABEL: func.func @end_from_starts(
// CHECK: scf.for
// CHECK-NOT: ember.embedding_bag
// CHECK: return
func.func @end_from_starts(%arg0: tensor<?xi64> {onnx.dim_params = ["n"], onnx.name = "ids"}, %arg1: tensor<?xi64> {onnx.dim_params = ["batch"], onnx.name = "offsets"}) -> (tensor<?x4xf32> {onnx.name = "pooled"}) {
  %cst = arith.constant dense<5.000000e-01> : tensor<10x4xf32>
  %c0 = arith.constant 0 : index
  %dim = tensor.dim %arg0, %c0 : tensor<?xi64>
  %0 = arith.index_cast %dim : index to i64
  %from_elements = tensor.from_elements %0 : tensor<1xi64>
  %1 = tosa.concat %arg1, %from_elements {axis = 0 : i32} : (tensor<?xi64>, tensor<1xi64>) -> tensor<?xi64>
  %dim_0 = tensor.dim %1, %c0 : tensor<?xi64>
  %c1 = arith.constant 1 : index
  %2 = arith.minsi %c1, %dim_0 : index
  %c9223372036854775807 = arith.constant 9223372036854775807 : index
  %3 = arith.minsi %c9223372036854775807, %dim_0 : index
  %4 = arith.subi %3, %2 : index
  %5 = arith.maxsi %4, %c0 : index
  %extracted_slice = tensor.extract_slice %1[%2] [%5] [1] : tensor<?xi64> to tensor<?xi64>
  %dim_1 = tensor.dim %extracted_slice, %c0 : tensor<?xi64>
  %6 = arith.index_cast %dim_1 : index to i64
  %from_elements_2 = tensor.from_elements %6 : tensor<i64>
  %extracted = tensor.extract %from_elements_2[] : tensor<i64>
  %7 = arith.index_cast %extracted : i64 to index
  %8 = tensor.empty(%7) : tensor<?x4xf32>
  %9 = scf.for %arg2 = %c0 to %7 step %c1 iter_args(%arg3 = %8) -> (tensor<?x4xf32>) {
    %10 = arith.index_cast %arg2 : index to i64
    %from_elements_3 = tensor.from_elements %10 : tensor<i64>
    %11 = tosa.const_shape  {values = dense<[1, -1, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %12 = tosa.reshape %1, %11 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %13 = arith.trunci %from_elements_3 : tensor<i64> to tensor<i32>
    %14 = tosa.const_shape  {values = dense<1> : tensor<2xindex>} : () -> !tosa.shape<2>
    %15 = tosa.reshape %13, %14 : (tensor<i32>, !tosa.shape<2>) -> tensor<1x1xi32>
    %16 = tosa.gather %12, %15 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %17 = tosa.const_shape  {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
    %18 = tosa.reshape %16, %17 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %19 = tosa.reshape %1, %11 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %20 = tosa.gather %19, %15 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %21 = tosa.reshape %20, %17 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %expanded = tensor.expand_shape %18 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %expanded_4 = tensor.expand_shape %21 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %extracted_5 = tensor.extract %expanded[%c0] : tensor<1xi64>
    %22 = arith.index_cast %extracted_5 : i64 to index
    %23 = arith.cmpi slt, %22, %c0 : index
    %24 = arith.addi %22, %dim : index
    %25 = arith.select %23, %24, %22 : index
    %26 = arith.maxsi %25, %c0 : index
    %27 = arith.minsi %26, %dim : index
    %extracted_6 = tensor.extract %expanded_4[%c0] : tensor<1xi64>
    %28 = arith.index_cast %extracted_6 : i64 to index
    %29 = arith.cmpi slt, %28, %c0 : index
    %30 = arith.addi %28, %dim : index
    %31 = arith.select %29, %30, %28 : index
    %32 = arith.maxsi %31, %c0 : index
    %33 = arith.minsi %32, %dim : index
    %34 = arith.subi %33, %27 : index
    %35 = arith.maxsi %34, %c0 : index
    %extracted_slice_7 = tensor.extract_slice %arg0[%27] [%35] [1] : tensor<?xi64> to tensor<?xi64>
    %36 = tosa.const_shape  {values = dense<[1, 10, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %37 = tosa.reshape %cst, %36 : (tensor<10x4xf32>, !tosa.shape<3>) -> tensor<1x10x4xf32>
    %38 = arith.trunci %extracted_slice_7 : tensor<?xi64> to tensor<?xi32>
    %cst_8 = arith.constant dense<0> : tensor<1xi32>
    %39 = tosa.greater %cst_8, %38 : (tensor<1xi32>, tensor<?xi32>) -> tensor<?xi1>
    %cst_9 = arith.constant dense<10> : tensor<1xi32>
    %40 = tosa.add %38, %cst_9 : (tensor<?xi32>, tensor<1xi32>) -> tensor<?xi32>
    %41 = tosa.select %39, %40, %38 : (tensor<?xi1>, tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
    %42 = tosa.const_shape  {values = dense<[1, -1]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %43 = tosa.reshape %41, %42 : (tensor<?xi32>, !tosa.shape<2>) -> tensor<1x?xi32>
    %44 = tosa.gather %37, %43 : (tensor<1x10x4xf32>, tensor<1x?xi32>) -> tensor<1x?x4xf32>
    %45 = tosa.const_shape  {values = dense<[-1, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %46 = tosa.reshape %44, %45 : (tensor<1x?x4xf32>, !tosa.shape<2>) -> tensor<?x4xf32>
    %47 = tosa.reduce_sum %46 {axis = 0 : i32} : (tensor<?x4xf32>) -> tensor<1x4xf32>
    %collapsed = tensor.collapse_shape %47 [[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
    %expanded_10 = tensor.expand_shape %collapsed [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
    %inserted_slice = tensor.insert_slice %expanded_10 into %arg3[%arg2, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<?x4xf32>
    scf.yield %inserted_slice : tensor<?x4xf32>
  }
  return %9 : tensor<?x4xf32>
}

// -----

// The bag start is clamped to the size of the bounds, not of the ids.
// CHECK-LABEL: func.func @start_clamped_to_bounds(
// CHECK: scf.for
// CHECK-NOT: ember.embedding_bag
// CHECK: return
func.func @start_clamped_to_bounds(%arg0: tensor<?xi64> {onnx.dim_params = ["n"], onnx.name = "ids"}, %arg1: tensor<?xi64> {onnx.dim_params = ["batch"], onnx.name = "offsets"}) -> (tensor<?x4xf32> {onnx.name = "pooled"}) {
  %cst = arith.constant dense<5.000000e-01> : tensor<10x4xf32>
  %c0 = arith.constant 0 : index
  %dim = tensor.dim %arg0, %c0 : tensor<?xi64>
  %0 = arith.index_cast %dim : index to i64
  %from_elements = tensor.from_elements %0 : tensor<1xi64>
  %1 = tosa.concat %arg1, %from_elements {axis = 0 : i32} : (tensor<?xi64>, tensor<1xi64>) -> tensor<?xi64>
  %dim_0 = tensor.dim %1, %c0 : tensor<?xi64>
  %c1 = arith.constant 1 : index
  %2 = arith.minsi %c1, %dim_0 : index
  %c9223372036854775807 = arith.constant 9223372036854775807 : index
  %3 = arith.minsi %c9223372036854775807, %dim_0 : index
  %4 = arith.subi %3, %2 : index
  %5 = arith.maxsi %4, %c0 : index
  %extracted_slice = tensor.extract_slice %1[%2] [%5] [1] : tensor<?xi64> to tensor<?xi64>
  %dim_1 = tensor.dim %extracted_slice, %c0 : tensor<?xi64>
  %6 = arith.index_cast %dim_1 : index to i64
  %from_elements_2 = tensor.from_elements %6 : tensor<i64>
  %extracted = tensor.extract %from_elements_2[] : tensor<i64>
  %7 = arith.index_cast %extracted : i64 to index
  %8 = tensor.empty(%7) : tensor<?x4xf32>
  %9 = scf.for %arg2 = %c0 to %7 step %c1 iter_args(%arg3 = %8) -> (tensor<?x4xf32>) {
    %10 = arith.index_cast %arg2 : index to i64
    %from_elements_3 = tensor.from_elements %10 : tensor<i64>
    %11 = tosa.const_shape  {values = dense<[1, -1, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %12 = tosa.reshape %1, %11 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %13 = arith.trunci %from_elements_3 : tensor<i64> to tensor<i32>
    %14 = tosa.const_shape  {values = dense<1> : tensor<2xindex>} : () -> !tosa.shape<2>
    %15 = tosa.reshape %13, %14 : (tensor<i32>, !tosa.shape<2>) -> tensor<1x1xi32>
    %16 = tosa.gather %12, %15 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %17 = tosa.const_shape  {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
    %18 = tosa.reshape %16, %17 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %19 = tosa.reshape %extracted_slice, %11 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %20 = tosa.gather %19, %15 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %21 = tosa.reshape %20, %17 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %expanded = tensor.expand_shape %18 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %expanded_4 = tensor.expand_shape %21 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %extracted_5 = tensor.extract %expanded[%c0] : tensor<1xi64>
    %22 = arith.index_cast %extracted_5 : i64 to index
    %23 = arith.cmpi slt, %22, %c0 : index
    %24 = arith.addi %22, %dim : index
    %25 = arith.select %23, %24, %22 : index
    %26 = arith.maxsi %25, %c0 : index
    %27 = arith.minsi %26, %dim_0 : index
    %extracted_6 = tensor.extract %expanded_4[%c0] : tensor<1xi64>
    %28 = arith.index_cast %extracted_6 : i64 to index
    %29 = arith.cmpi slt, %28, %c0 : index
    %30 = arith.addi %28, %dim : index
    %31 = arith.select %29, %30, %28 : index
    %32 = arith.maxsi %31, %c0 : index
    %33 = arith.minsi %32, %dim : index
    %34 = arith.subi %33, %27 : index
    %35 = arith.maxsi %34, %c0 : index
    %extracted_slice_7 = tensor.extract_slice %arg0[%27] [%35] [1] : tensor<?xi64> to tensor<?xi64>
    %36 = tosa.const_shape  {values = dense<[1, 10, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %37 = tosa.reshape %cst, %36 : (tensor<10x4xf32>, !tosa.shape<3>) -> tensor<1x10x4xf32>
    %38 = arith.trunci %extracted_slice_7 : tensor<?xi64> to tensor<?xi32>
    %cst_8 = arith.constant dense<0> : tensor<1xi32>
    %39 = tosa.greater %cst_8, %38 : (tensor<1xi32>, tensor<?xi32>) -> tensor<?xi1>
    %cst_9 = arith.constant dense<10> : tensor<1xi32>
    %40 = tosa.add %38, %cst_9 : (tensor<?xi32>, tensor<1xi32>) -> tensor<?xi32>
    %41 = tosa.select %39, %40, %38 : (tensor<?xi1>, tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
    %42 = tosa.const_shape  {values = dense<[1, -1]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %43 = tosa.reshape %41, %42 : (tensor<?xi32>, !tosa.shape<2>) -> tensor<1x?xi32>
    %44 = tosa.gather %37, %43 : (tensor<1x10x4xf32>, tensor<1x?xi32>) -> tensor<1x?x4xf32>
    %45 = tosa.const_shape  {values = dense<[-1, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %46 = tosa.reshape %44, %45 : (tensor<1x?x4xf32>, !tosa.shape<2>) -> tensor<?x4xf32>
    %47 = tosa.reduce_sum %46 {axis = 0 : i32} : (tensor<?x4xf32>) -> tensor<1x4xf32>
    %collapsed = tensor.collapse_shape %47 [[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
    %expanded_10 = tensor.expand_shape %collapsed [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
    %inserted_slice = tensor.insert_slice %expanded_10 into %arg3[%arg2, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<?x4xf32>
    scf.yield %inserted_slice : tensor<?x4xf32>
  }
  return %9 : tensor<?x4xf32>
}

// -----

// Every bag's row is written at row 0.
// CHECK-LABEL: func.func @row_written_at_zero(
// CHECK: scf.for
// CHECK-NOT: ember.embedding_bag
// CHECK: return
func.func @row_written_at_zero(%arg0: tensor<?xi64> {onnx.dim_params = ["n"], onnx.name = "ids"}, %arg1: tensor<?xi64> {onnx.dim_params = ["batch"], onnx.name = "offsets"}) -> (tensor<?x4xf32> {onnx.name = "pooled"}) {
  %cst = arith.constant dense<5.000000e-01> : tensor<10x4xf32>
  %c0 = arith.constant 0 : index
  %dim = tensor.dim %arg0, %c0 : tensor<?xi64>
  %0 = arith.index_cast %dim : index to i64
  %from_elements = tensor.from_elements %0 : tensor<1xi64>
  %1 = tosa.concat %arg1, %from_elements {axis = 0 : i32} : (tensor<?xi64>, tensor<1xi64>) -> tensor<?xi64>
  %dim_0 = tensor.dim %1, %c0 : tensor<?xi64>
  %c1 = arith.constant 1 : index
  %2 = arith.minsi %c1, %dim_0 : index
  %c9223372036854775807 = arith.constant 9223372036854775807 : index
  %3 = arith.minsi %c9223372036854775807, %dim_0 : index
  %4 = arith.subi %3, %2 : index
  %5 = arith.maxsi %4, %c0 : index
  %extracted_slice = tensor.extract_slice %1[%2] [%5] [1] : tensor<?xi64> to tensor<?xi64>
  %dim_1 = tensor.dim %extracted_slice, %c0 : tensor<?xi64>
  %6 = arith.index_cast %dim_1 : index to i64
  %from_elements_2 = tensor.from_elements %6 : tensor<i64>
  %extracted = tensor.extract %from_elements_2[] : tensor<i64>
  %7 = arith.index_cast %extracted : i64 to index
  %8 = tensor.empty(%7) : tensor<?x4xf32>
  %9 = scf.for %arg2 = %c0 to %7 step %c1 iter_args(%arg3 = %8) -> (tensor<?x4xf32>) {
    %10 = arith.index_cast %arg2 : index to i64
    %from_elements_3 = tensor.from_elements %10 : tensor<i64>
    %11 = tosa.const_shape  {values = dense<[1, -1, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %12 = tosa.reshape %1, %11 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %13 = arith.trunci %from_elements_3 : tensor<i64> to tensor<i32>
    %14 = tosa.const_shape  {values = dense<1> : tensor<2xindex>} : () -> !tosa.shape<2>
    %15 = tosa.reshape %13, %14 : (tensor<i32>, !tosa.shape<2>) -> tensor<1x1xi32>
    %16 = tosa.gather %12, %15 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %17 = tosa.const_shape  {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
    %18 = tosa.reshape %16, %17 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %19 = tosa.reshape %extracted_slice, %11 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %20 = tosa.gather %19, %15 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %21 = tosa.reshape %20, %17 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %expanded = tensor.expand_shape %18 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %expanded_4 = tensor.expand_shape %21 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %extracted_5 = tensor.extract %expanded[%c0] : tensor<1xi64>
    %22 = arith.index_cast %extracted_5 : i64 to index
    %23 = arith.cmpi slt, %22, %c0 : index
    %24 = arith.addi %22, %dim : index
    %25 = arith.select %23, %24, %22 : index
    %26 = arith.maxsi %25, %c0 : index
    %27 = arith.minsi %26, %dim : index
    %extracted_6 = tensor.extract %expanded_4[%c0] : tensor<1xi64>
    %28 = arith.index_cast %extracted_6 : i64 to index
    %29 = arith.cmpi slt, %28, %c0 : index
    %30 = arith.addi %28, %dim : index
    %31 = arith.select %29, %30, %28 : index
    %32 = arith.maxsi %31, %c0 : index
    %33 = arith.minsi %32, %dim : index
    %34 = arith.subi %33, %27 : index
    %35 = arith.maxsi %34, %c0 : index
    %extracted_slice_7 = tensor.extract_slice %arg0[%27] [%35] [1] : tensor<?xi64> to tensor<?xi64>
    %36 = tosa.const_shape  {values = dense<[1, 10, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %37 = tosa.reshape %cst, %36 : (tensor<10x4xf32>, !tosa.shape<3>) -> tensor<1x10x4xf32>
    %38 = arith.trunci %extracted_slice_7 : tensor<?xi64> to tensor<?xi32>
    %cst_8 = arith.constant dense<0> : tensor<1xi32>
    %39 = tosa.greater %cst_8, %38 : (tensor<1xi32>, tensor<?xi32>) -> tensor<?xi1>
    %cst_9 = arith.constant dense<10> : tensor<1xi32>
    %40 = tosa.add %38, %cst_9 : (tensor<?xi32>, tensor<1xi32>) -> tensor<?xi32>
    %41 = tosa.select %39, %40, %38 : (tensor<?xi1>, tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
    %42 = tosa.const_shape  {values = dense<[1, -1]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %43 = tosa.reshape %41, %42 : (tensor<?xi32>, !tosa.shape<2>) -> tensor<1x?xi32>
    %44 = tosa.gather %37, %43 : (tensor<1x10x4xf32>, tensor<1x?xi32>) -> tensor<1x?x4xf32>
    %45 = tosa.const_shape  {values = dense<[-1, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %46 = tosa.reshape %44, %45 : (tensor<1x?x4xf32>, !tosa.shape<2>) -> tensor<?x4xf32>
    %47 = tosa.reduce_sum %46 {axis = 0 : i32} : (tensor<?x4xf32>) -> tensor<1x4xf32>
    %collapsed = tensor.collapse_shape %47 [[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
    %expanded_10 = tensor.expand_shape %collapsed [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
    %inserted_slice = tensor.insert_slice %expanded_10 into %arg3[%c0, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<?x4xf32>
    scf.yield %inserted_slice : tensor<?x4xf32>
  }
  return %9 : tensor<?x4xf32>
}

// -----

// Negative ids wrap by 9, not by the 10 rows of the table.
// CHECK-LABEL: func.func @ids_wrapped_by_nine(
// CHECK: scf.for
// CHECK-NOT: ember.embedding_bag
// CHECK: return
func.func @ids_wrapped_by_nine(%arg0: tensor<?xi64> {onnx.dim_params = ["n"], onnx.name = "ids"}, %arg1: tensor<?xi64> {onnx.dim_params = ["batch"], onnx.name = "offsets"}) -> (tensor<?x4xf32> {onnx.name = "pooled"}) {
  %cst = arith.constant dense<5.000000e-01> : tensor<10x4xf32>
  %c0 = arith.constant 0 : index
  %dim = tensor.dim %arg0, %c0 : tensor<?xi64>
  %0 = arith.index_cast %dim : index to i64
  %from_elements = tensor.from_elements %0 : tensor<1xi64>
  %1 = tosa.concat %arg1, %from_elements {axis = 0 : i32} : (tensor<?xi64>, tensor<1xi64>) -> tensor<?xi64>
  %dim_0 = tensor.dim %1, %c0 : tensor<?xi64>
  %c1 = arith.constant 1 : index
  %2 = arith.minsi %c1, %dim_0 : index
  %c9223372036854775807 = arith.constant 9223372036854775807 : index
  %3 = arith.minsi %c9223372036854775807, %dim_0 : index
  %4 = arith.subi %3, %2 : index
  %5 = arith.maxsi %4, %c0 : index
  %extracted_slice = tensor.extract_slice %1[%2] [%5] [1] : tensor<?xi64> to tensor<?xi64>
  %dim_1 = tensor.dim %extracted_slice, %c0 : tensor<?xi64>
  %6 = arith.index_cast %dim_1 : index to i64
  %from_elements_2 = tensor.from_elements %6 : tensor<i64>
  %extracted = tensor.extract %from_elements_2[] : tensor<i64>
  %7 = arith.index_cast %extracted : i64 to index
  %8 = tensor.empty(%7) : tensor<?x4xf32>
  %9 = scf.for %arg2 = %c0 to %7 step %c1 iter_args(%arg3 = %8) -> (tensor<?x4xf32>) {
    %10 = arith.index_cast %arg2 : index to i64
    %from_elements_3 = tensor.from_elements %10 : tensor<i64>
    %11 = tosa.const_shape  {values = dense<[1, -1, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %12 = tosa.reshape %1, %11 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %13 = arith.trunci %from_elements_3 : tensor<i64> to tensor<i32>
    %14 = tosa.const_shape  {values = dense<1> : tensor<2xindex>} : () -> !tosa.shape<2>
    %15 = tosa.reshape %13, %14 : (tensor<i32>, !tosa.shape<2>) -> tensor<1x1xi32>
    %16 = tosa.gather %12, %15 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %17 = tosa.const_shape  {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
    %18 = tosa.reshape %16, %17 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %19 = tosa.reshape %extracted_slice, %11 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %20 = tosa.gather %19, %15 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %21 = tosa.reshape %20, %17 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %expanded = tensor.expand_shape %18 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %expanded_4 = tensor.expand_shape %21 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %extracted_5 = tensor.extract %expanded[%c0] : tensor<1xi64>
    %22 = arith.index_cast %extracted_5 : i64 to index
    %23 = arith.cmpi slt, %22, %c0 : index
    %24 = arith.addi %22, %dim : index
    %25 = arith.select %23, %24, %22 : index
    %26 = arith.maxsi %25, %c0 : index
    %27 = arith.minsi %26, %dim : index
    %extracted_6 = tensor.extract %expanded_4[%c0] : tensor<1xi64>
    %28 = arith.index_cast %extracted_6 : i64 to index
    %29 = arith.cmpi slt, %28, %c0 : index
    %30 = arith.addi %28, %dim : index
    %31 = arith.select %29, %30, %28 : index
    %32 = arith.maxsi %31, %c0 : index
    %33 = arith.minsi %32, %dim : index
    %34 = arith.subi %33, %27 : index
    %35 = arith.maxsi %34, %c0 : index
    %extracted_slice_7 = tensor.extract_slice %arg0[%27] [%35] [1] : tensor<?xi64> to tensor<?xi64>
    %36 = tosa.const_shape  {values = dense<[1, 10, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %37 = tosa.reshape %cst, %36 : (tensor<10x4xf32>, !tosa.shape<3>) -> tensor<1x10x4xf32>
    %38 = arith.trunci %extracted_slice_7 : tensor<?xi64> to tensor<?xi32>
    %cst_8 = arith.constant dense<0> : tensor<1xi32>
    %39 = tosa.greater %cst_8, %38 : (tensor<1xi32>, tensor<?xi32>) -> tensor<?xi1>
    %cst_9 = arith.constant dense<9> : tensor<1xi32>
    %40 = tosa.add %38, %cst_9 : (tensor<?xi32>, tensor<1xi32>) -> tensor<?xi32>
    %41 = tosa.select %39, %40, %38 : (tensor<?xi1>, tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
    %42 = tosa.const_shape  {values = dense<[1, -1]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %43 = tosa.reshape %41, %42 : (tensor<?xi32>, !tosa.shape<2>) -> tensor<1x?xi32>
    %44 = tosa.gather %37, %43 : (tensor<1x10x4xf32>, tensor<1x?xi32>) -> tensor<1x?x4xf32>
    %45 = tosa.const_shape  {values = dense<[-1, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %46 = tosa.reshape %44, %45 : (tensor<1x?x4xf32>, !tosa.shape<2>) -> tensor<?x4xf32>
    %47 = tosa.reduce_sum %46 {axis = 0 : i32} : (tensor<?x4xf32>) -> tensor<1x4xf32>
    %collapsed = tensor.collapse_shape %47 [[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
    %expanded_10 = tensor.expand_shape %collapsed [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
    %inserted_slice = tensor.insert_slice %expanded_10 into %arg3[%arg2, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<?x4xf32>
    scf.yield %inserted_slice : tensor<?x4xf32>
  }
  return %9 : tensor<?x4xf32>
}

// -----

// The mean divides by the number of all ids, not by the bag size.
// CHECK-LABEL: func.func @mean_over_all_ids(
// CHECK: scf.for
// CHECK-NOT: ember.embedding_bag
// CHECK: return
func.func @mean_over_all_ids(%arg0: tensor<?xi64> {onnx.dim_params = ["n"], onnx.name = "ids"}, %arg1: tensor<?xi64> {onnx.dim_params = ["batch"], onnx.name = "offsets"}) -> (tensor<?x4xf32> {onnx.name = "pooled"}) {
  %cst = arith.constant dense<5.000000e-01> : tensor<10x4xf32>
  %c0 = arith.constant 0 : index
  %dim = tensor.dim %arg0, %c0 : tensor<?xi64>
  %0 = arith.index_cast %dim : index to i64
  %from_elements = tensor.from_elements %0 : tensor<1xi64>
  %1 = tosa.concat %arg1, %from_elements {axis = 0 : i32} : (tensor<?xi64>, tensor<1xi64>) -> tensor<?xi64>
  %dim_0 = tensor.dim %1, %c0 : tensor<?xi64>
  %c1 = arith.constant 1 : index
  %2 = arith.minsi %c1, %dim_0 : index
  %c9223372036854775807 = arith.constant 9223372036854775807 : index
  %3 = arith.minsi %c9223372036854775807, %dim_0 : index
  %4 = arith.subi %3, %2 : index
  %5 = arith.maxsi %4, %c0 : index
  %extracted_slice = tensor.extract_slice %1[%2] [%5] [1] : tensor<?xi64> to tensor<?xi64>
  %dim_1 = tensor.dim %extracted_slice, %c0 : tensor<?xi64>
  %6 = arith.index_cast %dim_1 : index to i64
  %from_elements_2 = tensor.from_elements %6 : tensor<i64>
  %extracted = tensor.extract %from_elements_2[] : tensor<i64>
  %7 = arith.index_cast %extracted : i64 to index
  %8 = tensor.empty(%7) : tensor<?x4xf32>
  %9 = scf.for %arg2 = %c0 to %7 step %c1 iter_args(%arg3 = %8) -> (tensor<?x4xf32>) {
    %10 = arith.index_cast %arg2 : index to i64
    %from_elements_3 = tensor.from_elements %10 : tensor<i64>
    %11 = tosa.const_shape  {values = dense<[1, -1, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %12 = tosa.reshape %1, %11 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %13 = arith.trunci %from_elements_3 : tensor<i64> to tensor<i32>
    %14 = tosa.const_shape  {values = dense<1> : tensor<2xindex>} : () -> !tosa.shape<2>
    %15 = tosa.reshape %13, %14 : (tensor<i32>, !tosa.shape<2>) -> tensor<1x1xi32>
    %16 = tosa.gather %12, %15 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %17 = tosa.const_shape  {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
    %18 = tosa.reshape %16, %17 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %19 = tosa.reshape %extracted_slice, %11 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %20 = tosa.gather %19, %15 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %21 = tosa.reshape %20, %17 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %expanded = tensor.expand_shape %18 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %expanded_4 = tensor.expand_shape %21 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %extracted_5 = tensor.extract %expanded[%c0] : tensor<1xi64>
    %22 = arith.index_cast %extracted_5 : i64 to index
    %23 = arith.cmpi slt, %22, %c0 : index
    %24 = arith.addi %22, %dim : index
    %25 = arith.select %23, %24, %22 : index
    %26 = arith.maxsi %25, %c0 : index
    %27 = arith.minsi %26, %dim : index
    %extracted_6 = tensor.extract %expanded_4[%c0] : tensor<1xi64>
    %28 = arith.index_cast %extracted_6 : i64 to index
    %29 = arith.cmpi slt, %28, %c0 : index
    %30 = arith.addi %28, %dim : index
    %31 = arith.select %29, %30, %28 : index
    %32 = arith.maxsi %31, %c0 : index
    %33 = arith.minsi %32, %dim : index
    %34 = arith.subi %33, %27 : index
    %35 = arith.maxsi %34, %c0 : index
    %extracted_slice_7 = tensor.extract_slice %arg0[%27] [%35] [1] : tensor<?xi64> to tensor<?xi64>
    %36 = tosa.const_shape  {values = dense<[1, 10, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %37 = tosa.reshape %cst, %36 : (tensor<10x4xf32>, !tosa.shape<3>) -> tensor<1x10x4xf32>
    %38 = arith.trunci %extracted_slice_7 : tensor<?xi64> to tensor<?xi32>
    %cst_8 = arith.constant dense<0> : tensor<1xi32>
    %39 = tosa.greater %cst_8, %38 : (tensor<1xi32>, tensor<?xi32>) -> tensor<?xi1>
    %cst_9 = arith.constant dense<10> : tensor<1xi32>
    %40 = tosa.add %38, %cst_9 : (tensor<?xi32>, tensor<1xi32>) -> tensor<?xi32>
    %41 = tosa.select %39, %40, %38 : (tensor<?xi1>, tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
    %42 = tosa.const_shape  {values = dense<[1, -1]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %43 = tosa.reshape %41, %42 : (tensor<?xi32>, !tosa.shape<2>) -> tensor<1x?xi32>
    %44 = tosa.gather %37, %43 : (tensor<1x10x4xf32>, tensor<1x?xi32>) -> tensor<1x?x4xf32>
    %45 = tosa.const_shape  {values = dense<[-1, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %46 = tosa.reshape %44, %45 : (tensor<1x?x4xf32>, !tosa.shape<2>) -> tensor<?x4xf32>
    %47 = tosa.reduce_sum %46 {axis = 0 : i32} : (tensor<?x4xf32>) -> tensor<1x4xf32>
    %dim_10 = tensor.dim %arg0, %c0 : tensor<?xi64>
    %48 = arith.muli %c1, %dim_10 : index
    %49 = arith.index_cast %48 : index to i64
    %50 = arith.sitofp %49 : i64 to f32
    %from_elements_11 = tensor.from_elements %50 : tensor<1x1xf32>
    %51 = tosa.reciprocal %from_elements_11 : (tensor<1x1xf32>) -> tensor<1x1xf32>
    %52 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %53 = tosa.mul %47, %51, %52 : (tensor<1x4xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<1x4xf32>
    %collapsed = tensor.collapse_shape %53 [[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
    %expanded_12 = tensor.expand_shape %collapsed [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
    %inserted_slice = tensor.insert_slice %expanded_12 into %arg3[%arg2, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<?x4xf32>
    scf.yield %inserted_slice : tensor<?x4xf32>
  }
  return %9 : tensor<?x4xf32>
}

// -----

// The weights' slice starts at the bound clamped to the ids, not to the weights.
// CHECK-LABEL: func.func @weights_slice_of_ids_bounds(
// CHECK: scf.for
// CHECK-NOT: ember.embedding_bag
// CHECK: return
func.func @weights_slice_of_ids_bounds(%arg0: tensor<?xi64> {onnx.dim_params = ["n"], onnx.name = "ids"}, %arg1: tensor<?xi64> {onnx.dim_params = ["batch"], onnx.name = "offsets"}, %arg2: tensor<?xf32> {onnx.dim_params = ["n"], onnx.name = "w"}) -> (tensor<?x4xf32> {onnx.name = "pooled"}) {
  %cst = arith.constant dense<5.000000e-01> : tensor<10x4xf32>
  %c0 = arith.constant 0 : index
  %dim = tensor.dim %arg0, %c0 : tensor<?xi64>
  %0 = arith.index_cast %dim : index to i64
  %from_elements = tensor.from_elements %0 : tensor<1xi64>
  %1 = tosa.concat %arg1, %from_elements {axis = 0 : i32} : (tensor<?xi64>, tensor<1xi64>) -> tensor<?xi64>
  %dim_0 = tensor.dim %1, %c0 : tensor<?xi64>
  %c1 = arith.constant 1 : index
  %2 = arith.minsi %c1, %dim_0 : index
  %c9223372036854775807 = arith.constant 9223372036854775807 : index
  %3 = arith.minsi %c9223372036854775807, %dim_0 : index
  %4 = arith.subi %3, %2 : index
  %5 = arith.maxsi %4, %c0 : index
  %extracted_slice = tensor.extract_slice %1[%2] [%5] [1] : tensor<?xi64> to tensor<?xi64>
  %dim_1 = tensor.dim %extracted_slice, %c0 : tensor<?xi64>
  %6 = arith.index_cast %dim_1 : index to i64
  %from_elements_2 = tensor.from_elements %6 : tensor<i64>
  %extracted = tensor.extract %from_elements_2[] : tensor<i64>
  %7 = arith.index_cast %extracted : i64 to index
  %8 = tensor.empty(%7) : tensor<?x4xf32>
  %9 = scf.for %arg3 = %c0 to %7 step %c1 iter_args(%arg4 = %8) -> (tensor<?x4xf32>) {
    %10 = arith.index_cast %arg3 : index to i64
    %from_elements_3 = tensor.from_elements %10 : tensor<i64>
    %11 = tosa.const_shape  {values = dense<[1, -1, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %12 = tosa.reshape %1, %11 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %13 = arith.trunci %from_elements_3 : tensor<i64> to tensor<i32>
    %14 = tosa.const_shape  {values = dense<1> : tensor<2xindex>} : () -> !tosa.shape<2>
    %15 = tosa.reshape %13, %14 : (tensor<i32>, !tosa.shape<2>) -> tensor<1x1xi32>
    %16 = tosa.gather %12, %15 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %17 = tosa.const_shape  {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
    %18 = tosa.reshape %16, %17 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %19 = tosa.reshape %extracted_slice, %11 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %20 = tosa.gather %19, %15 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %21 = tosa.reshape %20, %17 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %expanded = tensor.expand_shape %18 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %expanded_4 = tensor.expand_shape %21 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %extracted_5 = tensor.extract %expanded[%c0] : tensor<1xi64>
    %22 = arith.index_cast %extracted_5 : i64 to index
    %23 = arith.cmpi slt, %22, %c0 : index
    %24 = arith.addi %22, %dim : index
    %25 = arith.select %23, %24, %22 : index
    %26 = arith.maxsi %25, %c0 : index
    %27 = arith.minsi %26, %dim : index
    %extracted_6 = tensor.extract %expanded_4[%c0] : tensor<1xi64>
    %28 = arith.index_cast %extracted_6 : i64 to index
    %29 = arith.cmpi slt, %28, %c0 : index
    %30 = arith.addi %28, %dim : index
    %31 = arith.select %29, %30, %28 : index
    %32 = arith.maxsi %31, %c0 : index
    %33 = arith.minsi %32, %dim : index
    %34 = arith.subi %33, %27 : index
    %35 = arith.maxsi %34, %c0 : index
    %extracted_slice_7 = tensor.extract_slice %arg0[%27] [%35] [1] : tensor<?xi64> to tensor<?xi64>
    %36 = tosa.const_shape  {values = dense<[1, 10, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %37 = tosa.reshape %cst, %36 : (tensor<10x4xf32>, !tosa.shape<3>) -> tensor<1x10x4xf32>
    %38 = arith.trunci %extracted_slice_7 : tensor<?xi64> to tensor<?xi32>
    %cst_8 = arith.constant dense<0> : tensor<1xi32>
    %39 = tosa.greater %cst_8, %38 : (tensor<1xi32>, tensor<?xi32>) -> tensor<?xi1>
    %cst_9 = arith.constant dense<10> : tensor<1xi32>
    %40 = tosa.add %38, %cst_9 : (tensor<?xi32>, tensor<1xi32>) -> tensor<?xi32>
    %41 = tosa.select %39, %40, %38 : (tensor<?xi1>, tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
    %42 = tosa.const_shape  {values = dense<[1, -1]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %43 = tosa.reshape %41, %42 : (tensor<?xi32>, !tosa.shape<2>) -> tensor<1x?xi32>
    %44 = tosa.gather %37, %43 : (tensor<1x10x4xf32>, tensor<1x?xi32>) -> tensor<1x?x4xf32>
    %45 = tosa.const_shape  {values = dense<[-1, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %46 = tosa.reshape %44, %45 : (tensor<1x?x4xf32>, !tosa.shape<2>) -> tensor<?x4xf32>
    %dim_10 = tensor.dim %arg2, %c0 : tensor<?xf32>
    %47 = arith.addi %22, %dim_10 : index
    %48 = arith.select %23, %47, %22 : index
    %49 = arith.maxsi %48, %c0 : index
    %50 = arith.minsi %49, %dim_10 : index
    %51 = arith.addi %28, %dim_10 : index
    %52 = arith.select %29, %51, %28 : index
    %53 = arith.maxsi %52, %c0 : index
    %54 = arith.minsi %53, %dim_10 : index
    %55 = arith.subi %54, %50 : index
    %56 = arith.maxsi %55, %c0 : index
    %extracted_slice_11 = tensor.extract_slice %arg2[%27] [%56] [1] : tensor<?xf32> to tensor<?xf32>
    %dim_12 = tensor.dim %extracted_slice_11, %c0 : tensor<?xf32>
    %expanded_13 = tensor.expand_shape %extracted_slice_11 [[0, 1]] output_shape [%dim_12, 1] : tensor<?xf32> into tensor<?x1xf32>
    %57 = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
    %58 = tosa.mul %46, %expanded_13, %57 : (tensor<?x4xf32>, tensor<?x1xf32>, tensor<1xi8>) -> tensor<?x4xf32>
    %59 = tosa.reduce_sum %58 {axis = 0 : i32} : (tensor<?x4xf32>) -> tensor<1x4xf32>
    %collapsed = tensor.collapse_shape %59 [[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
    %expanded_14 = tensor.expand_shape %collapsed [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
    %inserted_slice = tensor.insert_slice %expanded_14 into %arg4[%arg3, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<?x4xf32>
    scf.yield %inserted_slice : tensor<?x4xf32>
  }
  return %9 : tensor<?x4xf32>
}

// -----

// The body has an effect (a call) the raised op would drop.
// CHECK-LABEL: func.func @call_in_body(
// CHECK: scf.for
// CHECK-NOT: ember.embedding_bag
// CHECK: return
func.func private @observe(index)
func.func @call_in_body(%arg0: tensor<?xi64> {onnx.dim_params = ["n"], onnx.name = "ids"}, %arg1: tensor<?xi64> {onnx.dim_params = ["batch"], onnx.name = "offsets"}) -> (tensor<?x4xf32> {onnx.name = "pooled"}) {
  %cst = arith.constant dense<5.000000e-01> : tensor<10x4xf32>
  %c0 = arith.constant 0 : index
  %dim = tensor.dim %arg0, %c0 : tensor<?xi64>
  %0 = arith.index_cast %dim : index to i64
  %from_elements = tensor.from_elements %0 : tensor<1xi64>
  %1 = tosa.concat %arg1, %from_elements {axis = 0 : i32} : (tensor<?xi64>, tensor<1xi64>) -> tensor<?xi64>
  %dim_0 = tensor.dim %1, %c0 : tensor<?xi64>
  %c1 = arith.constant 1 : index
  %2 = arith.minsi %c1, %dim_0 : index
  %c9223372036854775807 = arith.constant 9223372036854775807 : index
  %3 = arith.minsi %c9223372036854775807, %dim_0 : index
  %4 = arith.subi %3, %2 : index
  %5 = arith.maxsi %4, %c0 : index
  %extracted_slice = tensor.extract_slice %1[%2] [%5] [1] : tensor<?xi64> to tensor<?xi64>
  %dim_1 = tensor.dim %extracted_slice, %c0 : tensor<?xi64>
  %6 = arith.index_cast %dim_1 : index to i64
  %from_elements_2 = tensor.from_elements %6 : tensor<i64>
  %extracted = tensor.extract %from_elements_2[] : tensor<i64>
  %7 = arith.index_cast %extracted : i64 to index
  %8 = tensor.empty(%7) : tensor<?x4xf32>
  %9 = scf.for %arg2 = %c0 to %7 step %c1 iter_args(%arg3 = %8) -> (tensor<?x4xf32>) {
    func.call @observe(%arg2) : (index) -> ()
    %10 = arith.index_cast %arg2 : index to i64
    %from_elements_3 = tensor.from_elements %10 : tensor<i64>
    %11 = tosa.const_shape  {values = dense<[1, -1, 1]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %12 = tosa.reshape %1, %11 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %13 = arith.trunci %from_elements_3 : tensor<i64> to tensor<i32>
    %14 = tosa.const_shape  {values = dense<1> : tensor<2xindex>} : () -> !tosa.shape<2>
    %15 = tosa.reshape %13, %14 : (tensor<i32>, !tosa.shape<2>) -> tensor<1x1xi32>
    %16 = tosa.gather %12, %15 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %17 = tosa.const_shape  {values = dense<> : tensor<0xindex>} : () -> !tosa.shape<0>
    %18 = tosa.reshape %16, %17 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %19 = tosa.reshape %extracted_slice, %11 : (tensor<?xi64>, !tosa.shape<3>) -> tensor<1x?x1xi64>
    %20 = tosa.gather %19, %15 : (tensor<1x?x1xi64>, tensor<1x1xi32>) -> tensor<1x1x1xi64>
    %21 = tosa.reshape %20, %17 : (tensor<1x1x1xi64>, !tosa.shape<0>) -> tensor<i64>
    %expanded = tensor.expand_shape %18 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %expanded_4 = tensor.expand_shape %21 [] output_shape [1] : tensor<i64> into tensor<1xi64>
    %extracted_5 = tensor.extract %expanded[%c0] : tensor<1xi64>
    %22 = arith.index_cast %extracted_5 : i64 to index
    %23 = arith.cmpi slt, %22, %c0 : index
    %24 = arith.addi %22, %dim : index
    %25 = arith.select %23, %24, %22 : index
    %26 = arith.maxsi %25, %c0 : index
    %27 = arith.minsi %26, %dim : index
    %extracted_6 = tensor.extract %expanded_4[%c0] : tensor<1xi64>
    %28 = arith.index_cast %extracted_6 : i64 to index
    %29 = arith.cmpi slt, %28, %c0 : index
    %30 = arith.addi %28, %dim : index
    %31 = arith.select %29, %30, %28 : index
    %32 = arith.maxsi %31, %c0 : index
    %33 = arith.minsi %32, %dim : index
    %34 = arith.subi %33, %27 : index
    %35 = arith.maxsi %34, %c0 : index
    %extracted_slice_7 = tensor.extract_slice %arg0[%27] [%35] [1] : tensor<?xi64> to tensor<?xi64>
    %36 = tosa.const_shape  {values = dense<[1, 10, 4]> : tensor<3xindex>} : () -> !tosa.shape<3>
    %37 = tosa.reshape %cst, %36 : (tensor<10x4xf32>, !tosa.shape<3>) -> tensor<1x10x4xf32>
    %38 = arith.trunci %extracted_slice_7 : tensor<?xi64> to tensor<?xi32>
    %cst_8 = arith.constant dense<0> : tensor<1xi32>
    %39 = tosa.greater %cst_8, %38 : (tensor<1xi32>, tensor<?xi32>) -> tensor<?xi1>
    %cst_9 = arith.constant dense<10> : tensor<1xi32>
    %40 = tosa.add %38, %cst_9 : (tensor<?xi32>, tensor<1xi32>) -> tensor<?xi32>
    %41 = tosa.select %39, %40, %38 : (tensor<?xi1>, tensor<?xi32>, tensor<?xi32>) -> tensor<?xi32>
    %42 = tosa.const_shape  {values = dense<[1, -1]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %43 = tosa.reshape %41, %42 : (tensor<?xi32>, !tosa.shape<2>) -> tensor<1x?xi32>
    %44 = tosa.gather %37, %43 : (tensor<1x10x4xf32>, tensor<1x?xi32>) -> tensor<1x?x4xf32>
    %45 = tosa.const_shape  {values = dense<[-1, 4]> : tensor<2xindex>} : () -> !tosa.shape<2>
    %46 = tosa.reshape %44, %45 : (tensor<1x?x4xf32>, !tosa.shape<2>) -> tensor<?x4xf32>
    %47 = tosa.reduce_sum %46 {axis = 0 : i32} : (tensor<?x4xf32>) -> tensor<1x4xf32>
    %collapsed = tensor.collapse_shape %47 [[0, 1]] : tensor<1x4xf32> into tensor<4xf32>
    %expanded_10 = tensor.expand_shape %collapsed [[0, 1]] output_shape [1, 4] : tensor<4xf32> into tensor<1x4xf32>
    %inserted_slice = tensor.insert_slice %expanded_10 into %arg3[%arg2, 0] [1, 4] [1, 1] : tensor<1x4xf32> into tensor<?x4xf32>
    scf.yield %inserted_slice : tensor<?x4xf32>
  }
  return %9 : tensor<?x4xf32>
}

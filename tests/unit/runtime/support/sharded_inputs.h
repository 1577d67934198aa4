//===- sharded_inputs.h - A ShardedTestBatch as session inputs --*- C++ -*-===//
#ifndef EMBER_TESTS_UNIT_RUNTIME_SUPPORT_SHARDED_INPUTS_H
#define EMBER_TESTS_UNIT_RUNTIME_SUPPORT_SHARDED_INPUTS_H

#include "ember/kjt.h"
#include "ember/session.h"
#include "support/sharded_model.h"

#include <gtest/gtest.h>

namespace ember::testing {

/// Views of `b` as the sharded model's inputs "dense" and "sparse" (a KJT);
/// `b` must outlive them.
inline RunInputs shardedTestInputs(const ShardedTestModel &m,
                                   ShardedTestBatch &b) {
  RunInputs in;
  in.set("dense", Tensor::view(b.dense.data(), DType::kFloat32,
                               {b.batch, ShardedTestModel::kDenseWidth}));
  Tensor weights;
  if (m.weighted)
    weights = Tensor::view(b.weights.data(), DType::kFloat32,
                           {static_cast<int64_t>(b.weights.size())});
  auto kjt = KeyedJaggedTensor::fromLengths(
      m.keys,
      Tensor::view(b.values.data(), DType::kInt64,
                   {static_cast<int64_t>(b.values.size())}),
      Tensor::view(b.lengths.data(), DType::kInt64,
                   {static_cast<int64_t>(b.lengths.size())}),
      weights);
  EXPECT_TRUE(kjt.isOk()) << kjt.status().toString();
  in.set("sparse", *kjt);
  return in;
}

} // namespace ember::testing

#endif // EMBER_TESTS_UNIT_RUNTIME_SUPPORT_SHARDED_INPUTS_H

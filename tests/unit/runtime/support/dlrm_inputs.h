//===- dlrm_inputs.h - Session inputs for the test DLRM ---------*- C++ -*-===//
#ifndef EMBER_TESTS_DLRM_INPUTS_H
#define EMBER_TESTS_DLRM_INPUTS_H

#include "ember/session.h"
#include "support/dlrm_model.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ember::testing {

/// RunInputs viewing the batch's buffers (the batch must outlive them).
inline RunInputs dlrmInputs(const DlrmModel &model, DlrmBatch &batch) {
  RunInputs in;
  in.set("dense", Tensor::view(batch.dense.data(), DType::kFloat32,
                               {batch.batch, DlrmModel::kDenseIn}));
  auto kjt = KeyedJaggedTensor::fromLengths(
      model.keys,
      Tensor::view(batch.values.data(), DType::kInt64,
                   {static_cast<int64_t>(batch.values.size())}),
      Tensor::view(batch.lengths.data(), DType::kInt64,
                   {static_cast<int64_t>(batch.lengths.size())}));
  EXPECT_TRUE(kjt.isOk()) << kjt.status().toString();
  in.set("sparse", std::move(*kjt));
  return in;
}

/// Checks prob [B, 1] against the reference.
inline void expectMatchesReference(const Tensor &prob,
                                   const std::vector<float> &expected) {
  ASSERT_TRUE(prob.defined());
  ASSERT_EQ(prob.dtype(), DType::kFloat32);
  ASSERT_EQ(prob.shape(), Shape({static_cast<int64_t>(expected.size()), 1}));
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_NEAR(prob.data<float>()[i], expected[i],
                1e-5f + 1e-4f * std::fabs(expected[i]))
        << "sample " << i;
}

} // namespace ember::testing

#endif // EMBER_TESTS_DLRM_INPUTS_H

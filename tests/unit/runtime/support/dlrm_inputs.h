//===- dlrm_inputs.h - Session inputs for the test DLRM ---------*- C++ -*-===//
#ifndef EMBER_TESTS_DLRM_INPUTS_H
#define EMBER_TESTS_DLRM_INPUTS_H

#include "ember/session.h"
#include "support/dlrm_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

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

/// The batch without the ids at `positions` (in values order): the reference
/// for a run that replaced those ids by zero rows (BoundsCheckMode::kWarning).
inline DlrmBatch withoutIds(const DlrmBatch &batch,
                            const std::vector<int64_t> &positions) {
  DlrmBatch kept = batch;
  kept.values.clear();
  int64_t pos = 0;
  for (size_t i = 0; i < batch.lengths.size(); ++i) {
    int64_t n = 0;
    for (int64_t k = 0; k < batch.lengths[i]; ++k, ++pos)
      if (std::find(positions.begin(), positions.end(), pos) ==
          positions.end()) {
        kept.values.push_back(batch.values[pos]);
        ++n;
      }
    kept.lengths[i] = n;
  }
  return kept;
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

//===- dlrm_model.h - A small DLRM plan and its reference -------*- C++ -*-===//
//
// A small DLRM with random weights (fixed seed), written as an Ember plan by
// writeDlrmPlan and computed independently by referenceDlrm in plain loops:
//
//   dense [B, 4] -> linear 4->8 relu -> linear 8->4 relu            = x [B, 4]
//   sparse KJT (f0, f1, f2) -> grouped_embedding_bag over t0 (10 rows, sum),
//        t1 (20 rows, mean), t2 (5 rows, sum), dim 4                = e [B, 12]
//   dot_interaction(x, e)  (DLRM pair order)                        = z [B, 10]
//   linear 10->8 relu -> linear 8->1 sigmoid                        = prob [B,
//   1]
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TESTS_DLRM_MODEL_H
#define EMBER_TESTS_DLRM_MODEL_H

#include "ember/status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ember::testing {

struct DlrmLayer {
  int64_t in = 0, out = 0;
  std::vector<float> weight; // [out, in]
  std::vector<float> bias;   // [out]
};

struct DlrmModel {
  static constexpr int64_t kDenseIn = 4;
  static constexpr int64_t kDim = 4;
  std::vector<DlrmLayer> bottom, top;
  std::vector<int64_t> tableRows;         // per table
  std::vector<std::vector<float>> tables; // [rows, kDim] each
  std::vector<std::string> keys;          // f0, f1, f2 (feature f -> table f)
  std::vector<std::string> pooling;       // per feature
  int64_t numFeatures() const { return static_cast<int64_t>(keys.size()); }
};

struct DlrmBatch {
  int64_t batch = 0;
  std::vector<float> dense;     // [B, 4]
  std::vector<int64_t> values;  // ids, key-major
  std::vector<int64_t> lengths; // [F * B]
};

DlrmModel makeDlrmModel(uint64_t seed);
/// Random ids within the tables (bags of 0..maxLen ids, some empty).
DlrmBatch makeDlrmBatch(const DlrmModel &model, int64_t batch, uint64_t seed,
                        int maxLen = 4);
/// Writes DIR/BASE.plan (text: DIR/BASE.plan.txt) and DIR/BASE.rank0.weights.
Result<std::string> writeDlrmPlan(const DlrmModel &model,
                                  const std::string &dir,
                                  const std::string &base, bool text = false);
/// prob [B] computed with plain loops, in double precision.
std::vector<float> referenceDlrm(const DlrmModel &model,
                                 const DlrmBatch &batch);

} // namespace ember::testing

#endif // EMBER_TESTS_DLRM_MODEL_H

//===- kjt_from_bags_kernel.cpp - kjt_from_bags ---------------------------===//
//
// inputs: F features as consecutive triples (ids [N_f], offsets, weights
//         [N_f] float32 or absent), nn.EmbeddingBag's (ids, offsets) form
// attrs:  include_last_offset (F ints 0/1: offsets have B + 1 entries, else
//         B and the last bag ends at N_f), optional lengths_dtype ("int32" or
//         "int64", default "int64"), optional num_rows (F ints: the ids of
//         feature f must lie in [0, num_rows[f]); an id outside is an error
//         naming the feature, the position and the sample, whatever the
//         session's bounds-check mode: the ids are about to be bucketized or
//         sent to other ranks, where a wrong id cannot be told any more),
//         optional feature_names (F strings, for messages)
// outputs: values [sum N_f] (the ids' dtype), lengths [F * B] key-major,
//          weights (undefined when the features have none)
//
// Every feature must have the same batch size, ids of one dtype, and
// weights all or none. Offsets are validated as embedding_bag validates them
// (start at 0, non-decreasing, end at most at N_f); errors name the feature.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/jagged_kernel_defs.h"
#include "kernels/kernel_context.h"
#include "kernels/shared/jagged_index.h"
#include "kernels/shared/kjt_kernel_attrs.h"
#include "kernels/shared/kjt_view.h"

#include <vector>

namespace ember::jagged {

Result<FromBagsAttrs> readFromBagsAttrs(const Attributes &attrs,
                                        int numInputs) {
  FromBagsAttrs a;
  if (numInputs % 3 != 0)
    return invalidArgument("kjt_from_bags has " + std::to_string(numInputs) +
                           " inputs; it takes (ids, offsets, "
                           "weights-or-absent) triples");
  EMBER_ASSIGN_OR_RETURN(a.includeLastOffset,
                         attrs.getInts("include_last_offset"));
  if (static_cast<int>(a.includeLastOffset.size()) != numInputs / 3)
    return invalidArgument("attribute 'include_last_offset' has " +
                           std::to_string(a.includeLastOffset.size()) +
                           " entries, expected one per feature (" +
                           std::to_string(numInputs / 3) + ")");
  for (size_t f = 0; f < a.includeLastOffset.size(); ++f)
    if (a.includeLastOffset[f] != 0 && a.includeLastOffset[f] != 1)
      return invalidArgument("include_last_offset[" + std::to_string(f) +
                             "] must be 0 or 1");
  if (attrs.has("num_rows")) {
    EMBER_ASSIGN_OR_RETURN(a.numRows, attrs.getInts("num_rows"));
    if (a.numRows.size() != a.includeLastOffset.size())
      return invalidArgument("attribute 'num_rows' has " +
                             std::to_string(a.numRows.size()) +
                             " entries, expected one per feature (" +
                             std::to_string(a.includeLastOffset.size()) + ")");
    for (size_t f = 0; f < a.numRows.size(); ++f)
      if (a.numRows[f] < 0)
        return invalidArgument("num_rows[" + std::to_string(f) +
                               "] is negative");
  }
  if (attrs.has("feature_names")) {
    EMBER_ASSIGN_OR_RETURN(a.featureNames, attrs.getStrings("feature_names"));
    if (a.featureNames.size() != a.includeLastOffset.size())
      return invalidArgument("attribute 'feature_names' has " +
                             std::to_string(a.featureNames.size()) +
                             " entries, expected one per feature (" +
                             std::to_string(a.includeLastOffset.size()) + ")");
  }
  EMBER_ASSIGN_OR_RETURN(std::string name, attrs.getString("lengths_dtype"));
  std::optional<DType> dtype = parseDType(name);
  if (!dtype || !isIndexDType(*dtype))
    return invalidArgument("attribute 'lengths_dtype' must be \"int32\" or "
                           "\"int64\", got \"" +
                           name + "\"");
  a.lengthsDType = *dtype;
  return a;
}

std::string fromBagsFeatureName(const FromBagsAttrs &a, int64_t f) {
  return a.featureNames.empty() ? "feature " + std::to_string(f)
                                : "feature " + std::to_string(f) + " ('" +
                                      a.featureNames[f] + "')";
}

Result<FromBagsInputs> readFromBagsInputs(const KernelContext &ctx,
                                          const FromBagsAttrs &a,
                                          bool readData) {
  const std::string where = ctx.location();
  const int64_t F = static_cast<int64_t>(a.includeLastOffset.size());
  FromBagsInputs in;
  std::vector<std::vector<int64_t>> &offsets = in.offsets;
  if (readData)
    offsets.resize(F);
  int64_t B = -1;
  DType &idsDType = in.idsDType;
  bool &weighted = in.weighted;
  for (int64_t f = 0; f < F; ++f) {
    const std::string what = fromBagsFeatureName(a, f);
    const Tensor &ids = ctx.input(3 * f);
    const Tensor &offs = ctx.input(3 * f + 1);
    const Tensor &weights = ctx.input(3 * f + 2);
    EMBER_RETURN_IF_ERROR(checkIndexVector(ids, what + " ids", where));
    EMBER_RETURN_IF_ERROR(checkIndexVector(offs, what + " offsets", where));
    EMBER_RETURN_IF_ERROR(
        checkWeights(weights, ids.numel(), what + " weights", where));
    if (f == 0) {
      idsDType = ids.dtype();
      weighted = weights.defined();
    } else if (ids.dtype() != idsDType) {
      return errorAt(StatusCode::kInvalidArgument, where,
                     what + " ids are " + ids.describe() +
                         " but feature 0's are " + ctx.input(0).describe());
    } else if (weights.defined() != weighted) {
      return errorAt(StatusCode::kInvalidArgument, where,
                     what + (weighted ? " has no weights" : " has weights") +
                         " but feature 0 " + (weighted ? "has" : "has none"));
    }
    const bool includeLast = a.includeLastOffset[f] != 0;
    const int64_t bags = numBagsOf(offs, includeLast);
    if (bags < 0)
      return errorAt(StatusCode::kInvalidArgument, where,
                     what + " offsets are empty but include_last_offset needs "
                            "at least one entry");
    if (B < 0)
      B = bags;
    else if (bags != B)
      return errorAt(StatusCode::kInvalidArgument, where,
                     what + " has " + std::to_string(bags) +
                         " bags but feature 0 has " + std::to_string(B) +
                         " (every feature needs the same batch size)");
    if (!readData)
      continue;
    offsets[f].resize(bags + 1);
    EMBER_RETURN_IF_ERROR(normalizeBagOffsets(offs, ids.numel(), includeLast,
                                              offsets[f].data(),
                                              where + ", " + what));
    if (!a.numRows.empty()) {
      const int64_t rows = a.numRows[f];
      for (int64_t b = 0; b < bags; ++b)
        for (int64_t i = offsets[f][b]; i < offsets[f][b + 1]; ++i) {
          int64_t id = indexAt(ids, i);
          if (id < 0 || id >= rows)
            return errorAt(StatusCode::kOutOfRange, where,
                           what + ": id " + std::to_string(id) +
                               " at position " + std::to_string(i) +
                               " (sample " + std::to_string(b) +
                               ") is outside the table's " +
                               std::to_string(rows) + " rows");
        }
    }
  }
  in.batchSize = B < 0 ? 0 : B;
  return in;
}

namespace {

Status validate(const Attributes &attrs, int numInputs, int) {
  return readFromBagsAttrs(attrs, numInputs).status();
}

Status run(KernelContext &ctx) {
  const std::string where = ctx.location();
  auto attrsOr = readFromBagsAttrs(ctx.attrs(), ctx.numInputs());
  if (!attrsOr.isOk())
    return attrsOr.status().withContext(where);
  const FromBagsAttrs &a = *attrsOr;
  const int64_t F = static_cast<int64_t>(a.includeLastOffset.size());

  // Validate every feature first: nothing is written on an error.
  EMBER_ASSIGN_OR_RETURN(FromBagsInputs in, readFromBagsInputs(ctx, a, true));
  const std::vector<std::vector<int64_t>> &offsets = in.offsets;
  const int64_t B = in.batchSize;
  const DType idsDType = in.idsDType;
  const bool weighted = in.weighted;
  int64_t totalValues = 0;
  for (int64_t f = 0; f < F; ++f)
    totalValues += offsets[f][B]; // the ids the bags cover

  EMBER_ASSIGN_OR_RETURN(uint8_t * values,
                         allocateVector(ctx, 0, idsDType, totalValues));
  EMBER_ASSIGN_OR_RETURN(uint8_t * lengths,
                         allocateVector(ctx, 1, a.lengthsDType, F * B));
  float *weights = nullptr;
  if (weighted) {
    EMBER_ASSIGN_OR_RETURN(
        uint8_t * w, allocateVector(ctx, 2, DType::kFloat32, totalValues));
    weights = reinterpret_cast<float *>(w);
  } else if (ctx.numOutputs() > 2) {
    EMBER_RETURN_IF_ERROR(ctx.setOutput(2, Tensor()));
  }
  const size_t idBytes = dtypeSize(idsDType);
  for (int64_t f = 0; f < F; ++f) {
    // Only the ids the bags cover (offsets may end before N_f with
    // include_last_offset, as in PyTorch).
    const int64_t used = offsets[f][B];
    copyBytes(values, ctx.input(3 * f).data(), used * idBytes);
    values += used * idBytes;
    if (weights) {
      copyBytes(weights, ctx.input(3 * f + 2).data(), used * sizeof(float));
      weights += used;
    }
    for (int64_t b = 0; b < B; ++b) {
      int64_t len = offsets[f][b + 1] - offsets[f][b];
      if (a.lengthsDType == DType::kInt32)
        reinterpret_cast<int32_t *>(lengths)[f * B + b] =
            static_cast<int32_t>(len);
      else
        reinterpret_cast<int64_t *>(lengths)[f * B + b] = len;
    }
  }
  return Status::ok();
}

} // namespace

KernelEntry kjtFromBagsKernelEntry() {
  return {"kjt_from_bags", run, validate,
          "a KJT from per-feature nn.EmbeddingBag (ids, offsets) bags"};
}

} // namespace ember::jagged

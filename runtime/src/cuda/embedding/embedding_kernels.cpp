//===- embedding_kernels.cpp - embedding_bag & co. on the GPU -------------===//
//
// The CUDA versions of embedding_bag, grouped_embedding_bag and
// embedding_sequence: same inputs, attributes and outputs as the CPU kernels
// (runtime/src/kernels/cpu/*embedding*_kernel.cpp), whose attribute parsing
// (kernels/shared/embedding_attrs.h) and host-side checks (shapes, dtypes,
// table views) they reuse. Value checks (offsets, lengths, ids) happen on the
// device (embedding_lookup.cuh) and come back as device errors.
//
//===----------------------------------------------------------------------===//
#include "cuda/embedding/embedding_kernels.h"

#include "cuda/cuda_status.h"
#include "cuda/embedding/embedding_lookup.h"
#include "cuda/kernel_env.h"
#include "kernels/kernel_context.h"
#include "kernels/shared/embedding_attrs.h"
#include "kernels/shared/embedding_input_checks.h"
#include "kernels/shared/embedding_table.h"
#include "kernels/shared/jagged_index.h"

#include <algorithm>
#include <vector>

namespace ember::cuda::embedding {

namespace {

using ember::embedding::BagAttrs;
using ember::embedding::EmbeddingBagInputs;
using ember::embedding::EmbeddingSequenceInputs;
using ember::embedding::GroupedAttrs;
using ember::embedding::GroupedEmbeddingBagInputs;
using ember::embedding::Pooling;
using ember::embedding::TableView;

LookupPooling toLookupPooling(Pooling p) {
  switch (p) {
  case Pooling::kSum:
    return LookupPooling::kSum;
  case Pooling::kMean:
    return LookupPooling::kMean;
  case Pooling::kMax:
    return LookupPooling::kMax;
  }
  return LookupPooling::kSum;
}

LookupBounds toLookupBounds(BoundsCheckMode mode) {
  switch (mode) {
  case BoundsCheckMode::kFatal:
    return LookupBounds::kFatal;
  case BoundsCheckMode::kWarning:
    return LookupBounds::kWarning;
  case BoundsCheckMode::kIgnore:
    return LookupBounds::kIgnore;
  }
  return LookupBounds::kFatal;
}

TableDesc tableDesc(const TableView &v) {
  TableDesc t;
  t.data = v.data;
  t.rows = v.rows;
  t.rowBytes = v.rowBytes;
  t.dim = static_cast<int32_t>(v.dim);
  t.format = static_cast<uint8_t>(v.format);
  return t;
}

Result<KernelEnv *> envOf(KernelContext &ctx, const std::string &where) {
  KernelEnv *env = ctx.gpu();
  if (!env)
    return internalError(where +
                         ": a CUDA kernel ran without a CUDA environment");
  return env;
}

/// The error fields and bounds mode every launch shares.
void setRunFields(LookupParams &p, KernelContext &ctx, const KernelEnv &env) {
  p.errors = env.errors;
  p.invalidIds = env.invalidIds;
  p.instruction = env.instruction;
  p.bounds = static_cast<uint8_t>(toLookupBounds(ctx.boundsCheck()));
}

/// Row dims beyond int32 cannot be described (and make no sense).
Status checkDim(const TableView &v, const std::string &what,
                const std::string &where) {
  if (v.dim > (int64_t{1} << 30))
    return jagged::errorAt(StatusCode::kInvalidArgument, where,
                           what + " has " + std::to_string(v.dim) +
                               " columns, more than the CUDA lookup's 2^30");
  return Status::ok();
}

} // namespace

Status runEmbeddingBag(KernelContext &ctx) {
  const std::string where = ctx.location();
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx, where));
  EMBER_ASSIGN_OR_RETURN(
      EmbeddingBagInputs in,
      ember::embedding::checkEmbeddingBagInputs(ctx, checkDim));
  const BagAttrs &a = in.attrs;
  const TableView &table = in.table;
  const Tensor &indices = ctx.input(1);
  const Tensor &offsets = ctx.input(2);
  const Tensor noWeights;
  const Tensor &weights = ctx.numInputs() > 3 ? ctx.input(3) : noWeights;
  const int64_t numBags = in.numBags;
  EMBER_ASSIGN_OR_RETURN(
      Tensor * out,
      ctx.allocateOutput(0, DType::kFloat32, {numBags, table.dim}));
  if (numBags == 0)
    return Status::ok();

  LookupParams p;
  FeatureDesc feature;
  feature.pooling = static_cast<uint8_t>(toLookupPooling(a.pooling));
  EMBER_RETURN_IF_ERROR(setLookupDescriptors(p, {tableDesc(table)}, {feature},
                                             nullptr, env->stream));
  p.ids = indices.data();
  p.ids64 = indices.dtype() == DType::kInt64;
  p.numIds = indices.numel();
  p.weights = weights.defined() ? weights.data<float>() : nullptr;
  p.offsets = offsets.data();
  p.offsets64 = offsets.dtype() == DType::kInt64;
  p.numOffsets = offsets.numel();
  p.numBags = numBags;
  p.bagsPerFeature = numBags;
  p.paddingIdx = a.paddingIdx;
  p.out = out->data();
  p.outStride = table.dim;
  p.checkOffsets = 1;
  setRunFields(p, ctx, *env);
  Status s = launchLookup(p, env->multiprocessors, env->stream);
  return s.isOk() ? s : s.withContext(where);
}

Status runEmbeddingSequence(KernelContext &ctx) {
  const std::string where = ctx.location();
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx, where));
  EMBER_ASSIGN_OR_RETURN(
      EmbeddingSequenceInputs in,
      ember::embedding::checkEmbeddingSequenceInputs(ctx, checkDim));
  const TableView &table = in.table;
  const Tensor &indices = ctx.input(1);
  const int64_t n = indices.numel();
  EMBER_ASSIGN_OR_RETURN(
      Tensor * out, ctx.allocateOutput(0, DType::kFloat32, {n, table.dim}));
  if (n == 0)
    return Status::ok();
  LookupParams p;
  EMBER_RETURN_IF_ERROR(setLookupDescriptors(
      p, {tableDesc(table)}, {FeatureDesc()}, nullptr, env->stream));
  p.ids = indices.data();
  p.ids64 = indices.dtype() == DType::kInt64;
  p.numIds = n;
  p.numBags = n;
  p.bagsPerFeature = n;
  p.out = out->data();
  p.outStride = table.dim;
  setRunFields(p, ctx, *env);
  Status s = launchLookup(p, env->multiprocessors, env->stream);
  return s.isOk() ? s : s.withContext(where);
}

Status runGroupedEmbeddingBag(KernelContext &ctx) {
  const std::string where = ctx.location();
  EMBER_ASSIGN_OR_RETURN(KernelEnv * env, envOf(ctx, where));
  EMBER_ASSIGN_OR_RETURN(
      GroupedEmbeddingBagInputs in,
      ember::embedding::checkGroupedEmbeddingBagInputs(ctx, checkDim));
  const GroupedAttrs &a = in.attrs;
  const Tensor &values = ctx.input(0);
  const Tensor &lengths = ctx.input(1);
  const Tensor &weights = ctx.input(2);
  const int64_t F = in.numFeatures, B = in.batch;
  std::vector<TableDesc> tables;
  for (const TableView &view : in.tables)
    tables.push_back(tableDesc(view));
  const int64_t W = a.outputWidth;
  EMBER_ASSIGN_OR_RETURN(Tensor * out,
                         ctx.allocateOutput(0, DType::kFloat32, {B, W}));
  if (B == 0)
    return Status::ok();

  std::vector<FeatureDesc> features(F);
  int64_t covered = 0;
  for (int64_t f = 0; f < F; ++f) {
    features[f].table = static_cast<int32_t>(a.featureTables[f]);
    features[f].outOffset = a.outputOffsets[f];
    features[f].pooling = static_cast<uint8_t>(toLookupPooling(a.pooling[f]));
    covered += tables[a.featureTables[f]].dim;
  }
  // Feature column ranges do not overlap (readGroupedAttrs): the output is
  // fully written unless they cover fewer than W columns.
  if (covered < W)
    EMBER_RETURN_IF_ERROR(
        cudaStatus(cudaMemsetAsync(out->data(), 0,
                                   static_cast<size_t>(B) * W * sizeof(float),
                                   env->stream),
                   "cudaMemsetAsync(grouped_embedding_bag output)")
            .withContext(where));

  const int64_t numBags = F * B;
  const size_t descBytes = lookupDescriptorBytes(tables.size(), F);
  void *descs = nullptr;
  if (descBytes > 0) {
    EMBER_ASSIGN_OR_RETURN(descs, ctx.scratch(descBytes));
  }
  EMBER_ASSIGN_OR_RETURN(size_t offsetBytes,
                         lengthsToOffsetsScratchBytes(numBags));
  EMBER_ASSIGN_OR_RETURN(void *offsetScratch, ctx.scratch(offsetBytes));
  Status s = launchLengthsToOffsets(
      lengths.data(), lengths.dtype() == DType::kInt64, numBags, offsetScratch,
      offsetBytes, env->errors, env->instruction, env->multiprocessors,
      env->stream);
  if (!s.isOk())
    return s.withContext(where);

  LookupParams p;
  s = setLookupDescriptors(p, tables, features, descs, env->stream);
  if (!s.isOk())
    return s.withContext(where);
  p.ids = values.data();
  p.ids64 = values.dtype() == DType::kInt64;
  p.numIds = values.numel();
  p.weights = weights.defined() ? weights.data<float>() : nullptr;
  p.offsets = offsetScratch; // int64 [numBags + 1] at its start
  p.offsets64 = 1;
  p.numOffsets = numBags + 1;
  p.numBags = numBags;
  p.bagsPerFeature = B;
  p.out = out->data();
  p.outStride = W;
  p.checkLengthSum = 1;
  setRunFields(p, ctx, *env);
  s = launchLookup(p, env->multiprocessors, env->stream);
  return s.isOk() ? s : s.withContext(where);
}

} // namespace ember::cuda::embedding

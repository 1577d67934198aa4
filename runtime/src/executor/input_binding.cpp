//===- input_binding.cpp - Checking and binding run inputs ----------------===//
#include "executor/input_binding.h"

namespace ember {

namespace {

std::string describeInputs(const Program &program) {
  std::string s;
  for (const DenseInputBinding &in : program.inputs)
    s += (s.empty() ? "" : ", ") + in.name + " (" +
         std::string(dtypeName(program.slots[in.slot].dtype)) +
         program.describeDims(program.slots[in.slot]) + ")";
  for (const KjtInputBinding &in : program.kjtInputs)
    s += (s.empty() ? "" : ", ") + in.name + " (KJT)";
  return s;
}

int64_t lengthAt(const Tensor &t, int64_t i) {
  return t.dtype() == DType::kInt32 ? t.data<int32_t>()[i]
                                    : t.data<int64_t>()[i];
}

Status bindDense(const Program &program, const DenseInputBinding &in,
                 const Tensor &t, RunContext &ctx) {
  const SlotInfo &slot = program.slots[in.slot];
  auto expected = [&] {
    return std::string(dtypeName(slot.dtype)) + program.describeDims(slot);
  };
  std::string where = "input '" + in.name + "'";
  if (!t.defined())
    return invalidArgument(where + " is an undefined tensor");
  if (!t.shape().valid())
    return invalidArgument(where + " has dimensions " + t.shape().toString() +
                           " (negative, or more than 2^60 elements)");
  if (t.dtype() != slot.dtype || t.rank() != slot.rank)
    return invalidArgument(where + " is " + t.describe() +
                           " but the plan expects " + expected());
  if (t.numel() > 0 && !t.data())
    return invalidArgument(where + " has no data");
  for (int d = 0; d < slot.rank; ++d) {
    const DimSpec &spec = slot.dims[d];
    int64_t size = t.dim(d);
    if (!spec.isSymbolic()) {
      if (size != spec.size)
        return invalidArgument(where + " is " + t.describe() +
                               " but the plan expects " + expected() +
                               " (dimension " + std::to_string(d) + ")");
      continue;
    }
    if (size % spec.factor != 0)
      return invalidArgument(
          where + " dimension " + std::to_string(d) + " is " +
          std::to_string(size) + ", not a multiple of " +
          std::to_string(spec.factor) + " as " + expected() + " needs");
    Status s =
        ctx.bindSymbol(program, spec.symbol, size / spec.factor, in.name);
    if (!s.isOk())
      return s.withContext(where + " dimension " + std::to_string(d));
  }
  ctx.slots[in.slot].tensor = t;
  return Status::ok();
}

/// Lengths from offsets, written into an arena block.
Result<Tensor> offsetsToLengths(const std::string &where, const Tensor &offsets,
                                int64_t numValues, DType lengthsType,
                                RunContext &ctx, int &block) {
  int64_t n = offsets.numel() - 1;
  if (n < 0)
    return invalidArgument(where + ": offsets must have at least one entry");
  if (lengthAt(offsets, 0) != 0)
    return invalidArgument(where + ": offsets[0] is " +
                           std::to_string(lengthAt(offsets, 0)) + ", not 0");
  if (lengthAt(offsets, n) != numValues)
    return invalidArgument(
        where + ": the last offset is " + std::to_string(lengthAt(offsets, n)) +
        " but there are " + std::to_string(numValues) + " values");
  EMBER_ASSIGN_OR_RETURN(block, ctx.arena.allocate(static_cast<size_t>(n) *
                                                   dtypeSize(lengthsType)));
  Tensor lengths = Tensor::view(ctx.arena.data(block), lengthsType, {n});
  for (int64_t i = 0; i < n; ++i) {
    // Offsets are checked to increase, so the difference cannot overflow.
    if (lengthAt(offsets, i + 1) < lengthAt(offsets, i))
      return invalidArgument(where + ": offsets decrease at position " +
                             std::to_string(i + 1));
    int64_t len = lengthAt(offsets, i + 1) - lengthAt(offsets, i);
    if (len < 0)
      return invalidArgument(where + ": offsets decrease at position " +
                             std::to_string(i + 1));
    if (lengthsType == DType::kInt32)
      lengths.data<int32_t>()[i] = static_cast<int32_t>(len);
    else
      lengths.data<int64_t>()[i] = len;
  }
  return lengths;
}

Status bindKjt(const Program &program, const KjtInputBinding &in,
               const KeyedJaggedTensor &kjt, RunContext &ctx) {
  std::string where = "KJT input '" + in.name + "'";
  if (!kjt.defined())
    return invalidArgument(where + " is an empty KeyedJaggedTensor");
  if (kjt.keys() != in.keys) {
    auto join = [](const std::vector<std::string> &v) {
      std::string s;
      for (const std::string &k : v)
        s += (s.empty() ? "" : ", ") + k;
      return "[" + s + "]";
    };
    return invalidArgument(where + " has keys " + join(kjt.keys()) +
                           " but the plan expects " + join(in.keys));
  }
  const SlotInfo &valuesSlot = program.slots[in.valuesSlot];
  const SlotInfo &lengthsSlot = program.slots[in.lengthsSlot];
  for (const Tensor *t :
       {&kjt.values(), &kjt.lengths(), &kjt.offsets(), &kjt.weights()})
    if (t->defined() && !t->shape().valid())
      return invalidArgument(where + " has a tensor of dimensions " +
                             t->shape().toString() + " (negative)");
  const Tensor &values = kjt.values();
  if (values.dtype() != valuesSlot.dtype)
    return invalidArgument(where + " has " +
                           std::string(dtypeName(values.dtype())) +
                           " values but the plan expects " +
                           std::string(dtypeName(valuesSlot.dtype)));
  int64_t numValues = values.numel();
  if (numValues > 0 && !values.data())
    return invalidArgument(where + " values have no data");
  Tensor lengths;
  int block = -1;
  if (kjt.hasLengths()) {
    lengths = kjt.lengths();
    if (lengths.dtype() != lengthsSlot.dtype)
      return invalidArgument(where + " has " +
                             std::string(dtypeName(lengths.dtype())) +
                             " lengths but the plan expects " +
                             std::string(dtypeName(lengthsSlot.dtype)));
    if (lengths.numel() > 0 && !lengths.data())
      return invalidArgument(where + " lengths have no data");
    int64_t sum = 0;
    for (int64_t i = 0; i < lengths.numel(); ++i) {
      int64_t len = lengthAt(lengths, i);
      if (len < 0)
        return invalidArgument(where + ": lengths[" + std::to_string(i) +
                               "] is " + std::to_string(len) + " (negative)");
      // sum <= numValues here, so this cannot overflow; past it the lengths
      // already describe more ids than there are.
      if (len > numValues - sum)
        return invalidArgument(where + ": the lengths sum to more than the " +
                               std::to_string(numValues) +
                               " values (from lengths[" + std::to_string(i) +
                               "] on)");
      sum += len;
    }
    if (sum != numValues)
      return invalidArgument(where + ": the lengths sum to " +
                             std::to_string(sum) + " but there are " +
                             std::to_string(numValues) + " values");
  } else {
    if (kjt.offsets().numel() > 0 && !kjt.offsets().data())
      return invalidArgument(where + " offsets have no data");
    EMBER_ASSIGN_OR_RETURN(lengths,
                           offsetsToLengths(where, kjt.offsets(), numValues,
                                            lengthsSlot.dtype, ctx, block));
  }
  int64_t numKeys = static_cast<int64_t>(in.keys.size());
  if (lengths.numel() % numKeys != 0)
    return invalidArgument(where + " has " + std::to_string(lengths.numel()) +
                           " lengths, not a multiple of its " +
                           std::to_string(numKeys) + " keys");
  EMBER_RETURN_IF_ERROR(ctx.bindSymbol(program, in.batchSymbol,
                                       lengths.numel() / numKeys, in.name)
                            .withContext(where + " batch size"));
  if (valuesSlot.dims[0].isSymbolic() && valuesSlot.dims[0].factor == 1)
    EMBER_RETURN_IF_ERROR(
        ctx.bindSymbol(program, valuesSlot.dims[0].symbol, numValues, in.name)
            .withContext(where + " values"));
  else if (!valuesSlot.dims[0].isSymbolic() &&
           valuesSlot.dims[0].size != numValues)
    return invalidArgument(where + " has " + std::to_string(numValues) +
                           " values but the plan expects " +
                           std::to_string(valuesSlot.dims[0].size));
  if (kjt.hasWeights() != (in.weightsSlot >= 0))
    return invalidArgument(
        where + (kjt.hasWeights() ? " has weights but the plan takes none"
                                  : " has no weights but the plan needs them"));
  if (in.weightsSlot >= 0) {
    const Tensor &w = kjt.weights();
    if (w.dtype() != DType::kFloat32 || w.numel() != numValues)
      return invalidArgument(where + " weights are " + w.describe() +
                             " but must be float32[" +
                             std::to_string(numValues) + "]");
    ctx.slots[in.weightsSlot].tensor = w;
  }
  ctx.slots[in.valuesSlot].tensor = values;
  ctx.slots[in.lengthsSlot].tensor = lengths;
  ctx.slots[in.lengthsSlot].block = block;
  return Status::ok();
}

} // namespace

Status bindInputs(const Program &program, const RunInputs &inputs,
                  RunContext &ctx) {
  // Every given name must be an input of the plan, of the right kind.
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string &name = inputs.name(i);
    bool dense = false, kjt = false;
    for (const DenseInputBinding &in : program.inputs)
      dense = dense || in.name == name;
    for (const KjtInputBinding &in : program.kjtInputs)
      kjt = kjt || in.name == name;
    if (!dense && !kjt)
      return notFound("unknown input '" + name +
                      "'; the plan's inputs are: " + describeInputs(program));
    if (dense && inputs.isKjt(i))
      return invalidArgument(
          "input '" + name +
          "' is a dense tensor, but a KeyedJaggedTensor was given");
    if (kjt && !inputs.isKjt(i))
      return invalidArgument(
          "input '" + name +
          "' is a KeyedJaggedTensor, but a dense tensor was given");
  }
  auto find = [&](const std::string &name) -> int {
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs.name(i) == name)
        return static_cast<int>(i);
    return -1;
  };
  for (const KjtInputBinding &in : program.kjtInputs) {
    int i = find(in.name);
    if (i < 0)
      return invalidArgument("missing input '" + in.name +
                             "' (a KeyedJaggedTensor)");
    EMBER_RETURN_IF_ERROR(bindKjt(program, in, inputs.kjt(i), ctx));
  }
  for (const DenseInputBinding &in : program.inputs) {
    int i = find(in.name);
    if (i < 0)
      return invalidArgument(
          "missing input '" + in.name + "' (" +
          std::string(dtypeName(program.slots[in.slot].dtype)) +
          program.describeDims(program.slots[in.slot]) + ")");
    EMBER_RETURN_IF_ERROR(bindDense(program, in, inputs.tensor(i), ctx));
  }
  return Status::ok();
}

} // namespace ember

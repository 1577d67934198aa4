//===- fuzz_plan_loader.cpp - Fuzzing the plan loader ---------------------===//
//
// Input: [flags: u8][world: u8][plan length: u32 LE][plan bytes][weights
// bytes]. The
// plan is written to SCRATCH/model.plan (model.plan.txt when flags bit 1 is
// set: the text format) and the rest to SCRATCH/model.rank0.weights (the
// seeds' plans name that file); Session::load must give a session or a
// Status, never crash, hang or allocate for what the plan merely declares.
//
// flags bit 0: verify the weights file's checksum (off otherwise, so that
//              mutated weights reach the constants' checks)
// flags bit 2: run a plan that loads once, on inputs made from its
//              signature: every symbol bound to the value of bits 4-7
//              (0..15), zeros for dense inputs, KJTs of one id 0 per bag;
//              the run must succeed or fail with a Status.
// flags bit 3: bounds-check mode kWarning instead of kFatal for that run.
// world:       the session is rank 0 of world + 1 ranks; with more than one
//              rank the plan is validated in full and the load then fails
//              for want of a rendezvous (nothing runs).
//
// The session's allocation limit is 256 MiB (below libFuzzer's RSS limit),
// so a plan that declares more must be refused, not allocated.
//
//===----------------------------------------------------------------------===//
#include "ember/session.h"
#include "fuzz_support.h"

#include <cctype>

using namespace ember;
using namespace ember::fuzz;

namespace {

constexpr int64_t kFuzzMaxTensorBytes = int64_t{256} << 20;

/// A signature dim ("13", "B", "4*B") at symbol value `sym`; -1 if unknown.
int64_t dimValue(const std::string &dim, int64_t sym) {
  if (dim.empty())
    return -1;
  bool digits = true;
  for (char c : dim)
    digits = digits && std::isdigit(static_cast<unsigned char>(c));
  if (digits)
    return dim.size() > 12 ? -1 : std::stoll(dim);
  size_t star = dim.find('*');
  if (star == std::string::npos)
    return sym;
  std::string factor = dim.substr(0, star);
  if (factor.empty() || factor.size() > 12)
    return -1;
  for (char c : factor)
    if (!std::isdigit(static_cast<unsigned char>(c)))
      return -1;
  return std::stoll(factor) * sym;
}

void runOnce(const Session &session, int64_t sym) {
  const ModelSignature &sig = session.signature();
  RunInputs inputs;
  std::vector<Tensor> keep;
  for (const TensorInfo &in : sig.inputs) {
    std::vector<int64_t> dims;
    int64_t numel = 1;
    for (const std::string &d : in.dims) {
      int64_t v = dimValue(d, sym);
      if (v < 0 || v > (1 << 16))
        return;
      dims.push_back(v);
      numel *= v;
      if (numel > (1 << 16))
        return;
    }
    auto shape = Shape::fromDims(dims.data(), dims.size());
    if (!shape)
      return;
    auto t = Tensor::zeros(in.dtype, *shape);
    if (!t)
      return;
    keep.push_back(*t);
    inputs.set(in.name, *t);
  }
  for (const KjtInfo &in : sig.kjtInputs) {
    int64_t n = static_cast<int64_t>(in.keys.size()) * sym;
    if (n > (1 << 16))
      return;
    auto values = Tensor::zeros(in.valuesDType, Shape::fromDims(&n, 1).value());
    auto lengths =
        Tensor::allocate(in.lengthsDType, Shape::fromDims(&n, 1).value());
    if (!values || !lengths)
      return;
    for (int64_t i = 0; i < n; ++i) {
      if (in.lengthsDType == DType::kInt32)
        lengths->data<int32_t>()[i] = 1;
      else
        lengths->data<int64_t>()[i] = 1;
    }
    Tensor weights;
    if (in.hasWeights) {
      auto w = Tensor::zeros(DType::kFloat32, Shape::fromDims(&n, 1).value());
      if (!w)
        return;
      weights = *w;
    }
    auto kjt =
        KeyedJaggedTensor::fromLengths(in.keys, *values, *lengths, weights);
    if (!kjt)
      return;
    inputs.set(in.name, *kjt);
  }
  RunOutputs outputs;
  Status s = session.run(inputs, &outputs);
  if (s.isOk())
    EMBER_FUZZ_CHECK(outputs.size() == sig.outputs.size(), "outputs missing");
  else
    EMBER_FUZZ_CHECK(outputs.size() == 0, "outputs left after an error");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ByteReader in(data, size);
  uint8_t flags = in.u8();
  int world = 1 + in.u8() % 16;
  uint32_t planLen = in.u32();
  std::string plan = in.bytes(planLen);
  std::string weights = in.rest();
  const std::string &dir = scratchDir();
  std::string planPath =
      dir + ((flags & 2) ? "/model.plan.txt" : "/model.plan");
  writeFile(planPath, plan);
  writeFile(dir + "/model.rank0.weights", weights);

  SessionOptions options;
  options.verifyChecksums = flags & 1;
  options.boundsCheck =
      (flags & 8) ? BoundsCheckMode::kWarning : BoundsCheckMode::kFatal;
  options.maxTensorBytes = kFuzzMaxTensorBytes;
  options.worldSize = world;
  auto session = Session::load(planPath, options);
  if (!session) {
    EMBER_FUZZ_CHECK(!session.status().message().empty(), "an empty message");
    return 0;
  }
  EMBER_FUZZ_CHECK(world == 1, "a multi-rank session without a rendezvous");
  if (flags & 4)
    runOnce(**session, (flags >> 4) & 15);
  return 0;
}

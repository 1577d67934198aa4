//===- InstructionCost.cpp - what each instruction of a plan costs --------===//
//
// docs/timeline.md writes the formulas down; keep the two in step.
//
//===----------------------------------------------------------------------===//
#include "timeline/InstructionCost.h"

#include "kernel_contract/kernel_contract.h"
#include "plan/PlanDataTypes.h"
#include "sharding/CostModel.h"

#include <algorithm>
#include <map>

namespace ember::timeline {
namespace {

namespace pb = ::ember::plan;
namespace plan_emitter = ::mlir::ember::plan_emitter;
namespace kn = ::ember::contract::kernel_names;
using ::ember::sharding::CostModel;
using ::ember::sharding::PlannerOptions;
using ::ember::sharding::TableFormat;
using ::ember::sharding::TableSpec;
using ::ember::sharding::Topology;

const pb::Attribute *attrNamed(const pb::Instruction &in,
                               const std::string &name) {
  for (const pb::Attribute &a : in.attrs())
    if (a.name() == name)
      return &a;
  return nullptr;
}

std::vector<int64_t> intsAttr(const pb::Instruction &in,
                              const std::string &name) {
  const pb::Attribute *a = attrNamed(in, name);
  if (!a || !a->has_ints())
    return {};
  return {a->ints().values().begin(), a->ints().values().end()};
}

int64_t intAttr(const pb::Instruction &in, const std::string &name,
                int64_t otherwise) {
  const pb::Attribute *a = attrNamed(in, name);
  return a && a->value_case() == pb::Attribute::kI ? a->i() : otherwise;
}

std::string stringAttr(const pb::Instruction &in, const std::string &name) {
  const pb::Attribute *a = attrNamed(in, name);
  return a && a->value_case() == pb::Attribute::kS ? a->s() : std::string();
}

/// The run-time dims of one rank's program: each symbol's assumed value,
/// fixed where it first appears (an input, or an instruction's output).
class SlotSizes {
public:
  SlotSizes(const pb::RankProgram &program) : program(program) {}

  bool known(const std::string &symbol) const {
    return values.count(symbol) != 0;
  }
  void set(const std::string &symbol, double value) {
    values.emplace(symbol, std::max(value, 0.0));
  }

  bool valid(int slot) const {
    return slot >= 0 && slot < program.slots_size();
  }
  double dim(int slot, int d) const {
    const pb::Dim &dim = program.slots(slot).shape(d);
    if (dim.symbol().empty())
      return static_cast<double>(dim.size());
    auto it = values.find(dim.symbol());
    double factor = dim.factor() == 0 ? 1.0 : static_cast<double>(dim.factor());
    return it == values.end() ? 0.0 : factor * it->second;
  }
  int rankOf(int slot) const { return program.slots(slot).shape_size(); }
  double lastDim(int slot) const {
    int r = rankOf(slot);
    return r == 0 ? 1.0 : dim(slot, r - 1);
  }
  double elements(int slot) const {
    if (!valid(slot))
      return 0;
    double n = 1;
    for (int d = 0; d < rankOf(slot); ++d)
      n *= dim(slot, d);
    return n;
  }
  double bytes(int slot) const {
    return valid(slot) ? elements(slot) *
                             static_cast<double>(plan_emitter::planDtypeBytes(
                                 program.slots(slot).dtype()))
                       : 0.0;
  }

  /// Fixes the unknown symbols of `slot` so that it holds `count` elements
  /// (the first unknown symbol takes what the known dims leave; any other
  /// unknown one is 1).
  void fit(int slot, double count) {
    if (!valid(slot))
      return;
    double known = 1;
    const pb::Dim *first = nullptr;
    for (const pb::Dim &dim : program.slots(slot).shape()) {
      double factor =
          dim.factor() == 0 ? 1.0 : static_cast<double>(dim.factor());
      if (dim.symbol().empty())
        known *= static_cast<double>(dim.size());
      else if (this->known(dim.symbol()))
        known *= factor * values.at(dim.symbol());
      else if (!first) {
        first = &dim;
        known *= factor;
      } else {
        set(dim.symbol(), 1);
        known *= factor;
      }
    }
    if (first)
      set(first->symbol(), known > 0 ? count / known : 0);
  }
  bool hasUnknown(int slot) const {
    if (!valid(slot))
      return false;
    for (const pb::Dim &dim : program.slots(slot).shape())
      if (!dim.symbol().empty() && !known(dim.symbol()))
        return true;
    return false;
  }

private:
  const pb::RankProgram &program;
  std::map<std::string, double> values;
};

/// The run-time sizes of the program's inputs (docs/timeline.md, "Sizes").
void sizeInputs(const pb::Plan &plan, const pb::RankProgram &program,
                const SizeAssumptions &assume, SlotSizes &sizes) {
  const double batch = static_cast<double>(assume.batchPerRank);
  const pb::Signature &signature = plan.signature();
  if (!signature.batch_symbol().empty())
    sizes.set(signature.batch_symbol(), batch);
  for (int i = 0; i < signature.inputs_size() && i < program.input_slots_size();
       ++i) {
    int slot = program.input_slots(i);
    if (!signature.inputs(i).bag_offsets().empty())
      sizes.fit(slot, batch * assume.idsPerBag);
  }
  for (int k = 0;
       k < signature.kjt_inputs_size() && k < program.kjt_input_slots_size();
       ++k) {
    double keys = static_cast<double>(signature.kjt_inputs(k).keys_size());
    const pb::KjtSlots &slots = program.kjt_input_slots(k);
    sizes.fit(slots.lengths(), keys * batch);
    sizes.fit(slots.values(), keys * batch * assume.idsPerBag);
    sizes.fit(slots.weights(), keys * batch * assume.idsPerBag);
  }
  // Any other run-time dim of an input: the batch.
  for (int slot : program.input_slots())
    if (sizes.valid(slot))
      for (const pb::Dim &dim : program.slots(slot).shape())
        if (!dim.symbol().empty() && !sizes.known(dim.symbol()))
          sizes.set(dim.symbol(), batch);
}

/// The element count of output `o` of `in` whose dims are not all known.
double expectedOutputElements(const pb::Plan &plan, const pb::Instruction &in,
                              int rank, int o, const SlotSizes &sizes) {
  auto input = [&](int i) {
    return i < in.inputs_size() ? sizes.elements(in.inputs(i)) : 0.0;
  };
  const std::string &k = in.kernel();
  if (k == kn::kKjtFromBags) {
    // (ids, offsets, weights) per feature -> (values, lengths, weights).
    // With include_last_offset a feature's offsets have one entry more
    // than its bags.
    std::vector<int64_t> includeLast = intsAttr(in, "include_last_offset");
    double ids = 0, bags = 0;
    for (int i = 0; i + 1 < in.inputs_size(); i += 3) {
      size_t feature = static_cast<size_t>(i / 3);
      bool last = feature < includeLast.size() && includeLast[feature] != 0;
      ids += input(i);
      bags += std::max(0.0, input(i + 1) - (last ? 1 : 0));
    }
    return o == 1 ? bags : ids;
  }
  if (k == kn::kKjtAllToAll && in.collective() > 0 &&
      in.collective() <= plan.collectives_size()) {
    // (lengths, values, weights) -> the same, for this rank's keys from
    // every peer's batch.
    const pb::CollectiveDescriptor &d = plan.collectives(in.collective() - 1);
    std::vector<int64_t> splits = intsAttr(in, "key_splits");
    int group = d.group_ranks_size();
    int position = 0;
    for (int p = 0; p < group; ++p)
      if (d.group_ranks(p) == rank)
        position = p;
    double totalKeys = 0;
    for (int64_t s : splits)
      totalKeys += static_cast<double>(s);
    double mine = position < static_cast<int>(splits.size())
                      ? static_cast<double>(splits[position])
                      : totalKeys;
    double lengths = input(0);
    double bagsPerKey = totalKeys > 0 ? lengths / totalKeys : lengths;
    double received = mine * bagsPerKey * group;
    double idsPerBag = lengths > 0 ? input(1) / lengths : 0;
    return o == 0 ? received : received * idsPerBag;
  }
  if (k == kn::kKjtSplit) {
    // (values, lengths, weights) -> (values, lengths, weights) per group of
    // keys: each group its share of the keys' bags and ids.
    std::vector<int64_t> counts = intsAttr(in, "key_counts");
    double total = 0;
    for (int64_t c : counts)
      total += static_cast<double>(c);
    size_t group = static_cast<size_t>(o / 3);
    double share = total > 0 && group < counts.size()
                       ? static_cast<double>(counts[group]) / total
                       : 1.0;
    return (o % 3 == 1 ? input(1) : input(0)) * share;
  }
  if (k == kn::kKjtConcat) {
    // (values, lengths, weights) per input -> their concatenation.
    double sum = 0;
    int part = o == 1 ? 1 : 0;
    for (int i = part; i < in.inputs_size(); i += 3)
      sum += input(i);
    return sum;
  }
  if (k == kn::kKjtPermute) {
    // (values, lengths, weights) -> the same, keys reordered.
    return o == 1 ? input(1) : input(0);
  }
  if (k == kn::kGroupedEmbeddingBag) {
    // (values, lengths, weights, tables...) -> [bags, width].
    double features =
        std::max<double>(1, intsAttr(in, "feature_tables").size());
    return input(1) / features *
           static_cast<double>(intAttr(in, "output_width", 1));
  }
  if (k == kn::kEmbeddingBag) {
    // (table, ids, offsets, weights) -> [bags, dim].
    double bags = input(2) - (intAttr(in, "include_last_offset", 0) ? 1 : 0);
    return std::max(bags, 0.0) * sizes.lastDim(in.inputs(0));
  }
  if (k == kn::kKjtBucketize) {
    // (lengths, values, weights) -> lengths per bucket, values, weights,
    // positions.
    return o == 0 ? input(0) * static_cast<double>(
                                   std::max<int64_t>(
                                       1, intAttr(in, "num_buckets", 1)))
                  : input(1);
  }
  // Anything else: as large as its largest input.
  double largest = 0;
  for (int i = 0; i < in.inputs_size(); ++i)
    largest = std::max(largest, input(i));
  return largest;
}

TableFormat formatNamed(const std::string &name) {
  if (name == "float16")
    return TableFormat::F16;
  if (name == "bfloat16")
    return TableFormat::BF16;
  if (name == "int8_rowwise")
    return TableFormat::Int8RowWise;
  if (name == "int4_rowwise")
    return TableFormat::Int4RowWise;
  return TableFormat::F32;
}

/// The topology a collective over `group` sees from `rank`: its size, and
/// the members on `rank`'s node as the node.
Topology groupTopology(const Topology &topology,
                       const pb::CollectiveDescriptor &d, int rank) {
  Topology group = topology;
  int64_t size = d.group_ranks_size(), onNode = 0;
  for (int64_t member : d.group_ranks())
    if (topology.nodeOf(member) == topology.nodeOf(rank))
      ++onNode;
  group.worldSize = std::max<int64_t>(size, 1);
  group.ranksPerNode = std::max<int64_t>(onNode, 1);
  return group;
}

double allToAllSeconds(const Topology &topology, double bytes) {
  PlannerOptions options;
  options.topology = topology;
  return CostModel(options).allToAllSeconds(bytes);
}

InstructionCost costCollective(const pb::Plan &plan, const pb::Instruction &in,
                               int rank, const Topology &topology,
                               const SlotSizes &sizes) {
  InstructionCost cost;
  const pb::CollectiveDescriptor &d = plan.collectives(in.collective() - 1);
  const std::string &k = in.kernel();
  // A 16-bit codec halves a float payload (docs/cuda-nccl.md).
  std::string codec = stringAttr(in, "comm_dtype");
  double payload = codec.empty() || codec == "float32" ? 1.0 : 0.5;
  double sent = 0, received = 0;
  if (k == kn::kKjtAllToAll) {
    for (int s : in.inputs())
      sent += sizes.bytes(s);
  } else if (in.inputs_size() > 0) {
    // The second input of a pooled all-to-all or reduce-scatter is a batch
    // reference (lengths), not sent.
    sent = sizes.bytes(in.inputs(0)) * payload;
  }
  for (int s : in.outputs())
    received += sizes.bytes(s) * (k == kn::kKjtAllToAll ? 1.0 : payload);
  cost.bytes = sent + received;
  Topology group = groupTopology(topology, d, rank);
  double seconds = allToAllSeconds(group, std::max(sent, received));
  // An all-reduce is a reduce-scatter then an all-gather; a KJT all-to-all
  // exchanges its splits, then the values: two rounds of latency each.
  bool twoRounds = k == kn::kAllReduce || k == kn::kKjtAllToAll;
  cost.seconds = (k == kn::kAllReduce ? 2 * seconds : seconds) +
                 (twoRounds ? 2 : 1) * topology.collectiveLatencySeconds;
  return cost;
}

InstructionCost costLookup(const pb::RankProgram &program,
                           const pb::Instruction &in, const Topology &topology,
                           const SlotSizes &sizes) {
  PlannerOptions options;
  options.topology = topology;
  CostModel model(options);
  InstructionCost cost;
  double outputBytes = in.outputs_size() ? sizes.bytes(in.outputs(0)) : 0;
  auto tableSpec = [](TableFormat format) {
    TableSpec spec;
    spec.format = format;
    return spec;
  };
  auto rowBytes = [&](TableFormat format, int64_t cols) {
    return static_cast<double>(::ember::sharding::storedRowBytes(format, cols));
  };
  if (in.kernel() == kn::kEmbeddingBag) {
    int table = in.inputs(0);
    double ids = sizes.elements(in.inputs(1));
    pb::DataType dtype = program.slots(table).dtype();
    TableFormat format = dtype == pb::FLOAT16    ? TableFormat::F16
                         : dtype == pb::BFLOAT16 ? TableFormat::BF16
                                                 : TableFormat::F32;
    int64_t cols = static_cast<int64_t>(sizes.lastDim(table));
    cost.seconds = model.lookupSeconds(tableSpec(format),
                                       ::ember::sharding::ComputeKernel::Fused,
                                       ids, cols, outputBytes);
    cost.bytes = ids * rowBytes(format, cols) + outputBytes +
                 sizes.bytes(in.inputs(1)) +
                 (in.inputs_size() > 2 ? sizes.bytes(in.inputs(2)) : 0);
    return cost;
  }
  // grouped_embedding_bag: (values, lengths, weights, tables...); the ids
  // spread over the features, each feature's table read at its format.
  std::vector<int64_t> featureTables = intsAttr(in, "feature_tables");
  std::vector<int64_t> dims = intsAttr(in, "table_dims");
  const pb::Attribute *formats = attrNamed(in, "table_formats");
  double ids = sizes.elements(in.inputs(0));
  double perFeature =
      featureTables.empty() ? ids : ids / static_cast<double>(featureTables.size());
  double readBytes = 0;
  for (int64_t t : featureTables) {
    TableFormat format =
        formats && formats->has_strings() &&
                t < formats->strings().values_size()
            ? formatNamed(formats->strings().values(static_cast<int>(t)))
            : TableFormat::F32;
    int64_t cols = t < static_cast<int64_t>(dims.size()) ? dims[t] : 0;
    // The output written once, below.
    cost.seconds += model.lookupSeconds(tableSpec(format),
                                        ::ember::sharding::ComputeKernel::Fused,
                                        perFeature, cols, 0);
    readBytes += perFeature * rowBytes(format, cols);
  }
  cost.seconds += model.lookupSeconds(TableSpec(),
                                      ::ember::sharding::ComputeKernel::Fused,
                                      0, 0, outputBytes);
  cost.bytes = readBytes + outputBytes + sizes.bytes(in.inputs(0)) +
               sizes.bytes(in.inputs(1));
  return cost;
}

/// Kernels that copy elements without computing: they read as many bytes
/// as they write.
bool isDataMovement(const std::string &kernel) {
  for (const char *k : {kn::kSlice, kn::kConcat, kn::kGather,
                        kn::kGatherElements, kn::kExpand, kn::kTranspose})
    if (kernel == k)
      return true;
  return false;
}

InstructionCost costDense(const pb::RankProgram &program,
                          const pb::Instruction &in, const Topology &topology,
                          const SlotSizes &sizes,
                          const std::vector<char> &isConstant) {
  InstructionCost cost;
  const std::string &k = in.kernel();
  double written = 0;
  for (int s : in.outputs())
    written += sizes.bytes(s);
  if (isDataMovement(k)) {
    // Reads what it writes (a slice reads its window, not its input).
    cost.bytes = 2 * written;
  } else {
    for (int s : in.inputs())
      cost.bytes += sizes.bytes(s);
    cost.bytes += written;
  }
  auto input = [&](int i) { return i < in.inputs_size() ? in.inputs(i) : -1; };
  auto rows = [&](int slot) {
    double last = sizes.lastDim(slot);
    return last > 0 ? sizes.elements(slot) / last : 0.0;
  };
  if (k == kn::kLinear || k == kn::kDcnCross) {
    // Each row of the input meets every weight once (multiply and add).
    double weights = 0;
    for (int s : in.inputs())
      if (sizes.valid(s) && isConstant[s] && sizes.rankOf(s) >= 2)
        weights += sizes.elements(s);
    cost.flops = 2 * rows(input(0)) * weights;
  } else if (k == kn::kMatmul) {
    cost.flops = 2 * (in.outputs_size() ? sizes.elements(in.outputs(0)) : 0) *
                 sizes.lastDim(input(0));
  } else if (k == kn::kDotInteraction) {
    double vectors = static_cast<double>(intAttr(in, "num_features", 0) + 1);
    cost.flops = 2 * rows(input(0)) * vectors * vectors *
                 sizes.lastDim(input(0));
  } else if (in.outputs_size()) {
    cost.flops = sizes.elements(in.outputs(0));
  }
  (void)program;
  cost.seconds = std::max(cost.flops / topology.deviceFlops,
                          cost.bytes / topology.deviceBandwidth);
  return cost;
}

} // namespace

std::vector<InstructionCost>
costInstructions(const pb::Plan &plan, int rank, const Topology &topology,
                 const SizeAssumptions &assume) {
  const pb::RankProgram &program = plan.programs(rank);
  SlotSizes sizes(program);
  sizeInputs(plan, program, assume, sizes);
  // Constants: the slots no instruction defines and no input binds (the
  // plan's constant list is filled only when weights are written).
  std::vector<char> isConstant(program.slots_size(), 1);
  for (int slot : program.input_slots())
    if (sizes.valid(slot))
      isConstant[slot] = 0;
  for (const pb::KjtSlots &kjt : program.kjt_input_slots())
    for (int slot : {kjt.values(), kjt.lengths(), kjt.weights()})
      if (sizes.valid(slot))
        isConstant[slot] = 0;
  for (const pb::Instruction &in : program.instructions())
    for (int slot : in.outputs())
      if (sizes.valid(slot))
        isConstant[slot] = 0;

  std::vector<InstructionCost> costs;
  costs.reserve(program.instructions_size());
  for (const pb::Instruction &in : program.instructions()) {
    for (int o = 0; o < in.outputs_size(); ++o)
      if (sizes.hasUnknown(in.outputs(o)))
        sizes.fit(in.outputs(o),
                  expectedOutputElements(plan, in, program.rank(), o, sizes));
    const ::ember::contract::KernelContract *contract =
        ::ember::contract::findKernelContract(in.kernel());
    InstructionCost cost;
    if (in.collective() > 0 && in.collective() <= plan.collectives_size())
      cost = costCollective(plan, in, program.rank(), topology, sizes);
    else if (contract && contract->outputsAliasInputs())
      cost.view = true;
    else if (in.kernel() == kn::kEmbeddingBag ||
             in.kernel() == kn::kGroupedEmbeddingBag)
      cost = costLookup(program, in, topology, sizes);
    else
      cost = costDense(program, in, topology, sizes, isConstant);
    if (!cost.view && !(in.collective() > 0))
      cost.seconds += topology.kernelLaunchSeconds;
    costs.push_back(cost);
  }
  return costs;
}

} // namespace ember::timeline

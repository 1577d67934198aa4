//===- PlanOutput.cpp - Every rank's program into one plan and its files --===//
//
// Emits the function of each rank (FunctionEmitter), checks that the ranks
// agree (one signature, the same collectives in the same order), finishes
// the plan (PlanFinalization.h), then writes the weights files and the plan
// together: all of them or none (FileTransaction).
//
//===----------------------------------------------------------------------===//
#include "plan/EmissionContract.h"
#include "plan/PlanConstantFolding.h"
#include "plan/PlanEmitter.h"
#include "plan/PlanFinalization.h"
#include "plan/PlanFunctionEmitter.h"
#include "plan/PlanTextPrinter.h"
#include "plan/PlanWeightsWriter.h"
#include "plan/plan_writer.h"

#include "llvm/Support/Path.h"

#include <set>

namespace mlir::ember::plan_emitter {
namespace {

std::string stemOf(llvm::StringRef planPath) {
  llvm::StringRef file = llvm::sys::path::filename(planPath);
  for (llvm::StringRef suffix :
       {".plan.txt", ".plan.pbtxt", ".plan", ".txt", ".pbtxt"})
    if (file.ends_with(suffix) && file.size() > suffix.size())
      return file.drop_back(suffix.size()).str();
  return file.str();
}

} // namespace

std::string weightsFileNameFor(llvm::StringRef planPath) {
  return weightsFileNameFor(planPath, 0);
}

std::string weightsFileNameFor(llvm::StringRef planPath, int rank) {
  return stemOf(planPath) + ".rank" + std::to_string(rank) + ".weights";
}

namespace {

/// Marks the inputs that hold the ids (and per-sample weights) of
/// nn.EmbeddingBag-style bags with their offsets input, and records the
/// batch symbol (dim 0 of the first output, else of the first input), so
/// that tools splitting a global batch over ranks split them by bags.
void annotateSignature(func::FuncOp func, pb::Signature &signature) {
  auto inputNamed = [&](Value v) -> pb::TensorSpec * {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner() != &func.getBody().front())
      return nullptr;
    std::string name = "arg" + std::to_string(arg.getArgNumber());
    if (auto n =
            func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "onnx.name"))
      name = n.getValue().str();
    for (pb::TensorSpec &spec : *signature.mutable_inputs())
      if (spec.name() == name)
        return &spec;
    return nullptr;
  };
  auto mark = [&](Value ids, Value offsets, Value weights, bool includeLast) {
    pb::TensorSpec *offsetsSpec = inputNamed(offsets);
    if (!offsetsSpec || !offsetsSpec->bag_offsets().empty())
      return;
    for (Value member : {ids, weights})
      if (pb::TensorSpec *spec = member ? inputNamed(member) : nullptr) {
        spec->set_bag_offsets(offsetsSpec->name());
        spec->set_include_last_offset(includeLast);
      }
  };
  func.walk([&](Operation *op) {
    if (auto bag = dyn_cast<EmbeddingBagOp>(op))
      mark(bag.getIndices(), bag.getOffsets(), bag.getPerSampleWeights(),
           bag.getIncludeLastOffset());
    else if (auto fromBags = dyn_cast<KJTFromBagsOp>(op))
      for (size_t f = 0; f < fromBags.getValues().size(); ++f)
        mark(fromBags.getValues()[f], fromBags.getOffsets()[f],
             fromBags.getWeights().empty() ? Value() : fromBags.getWeights()[f],
             fromBags.getIncludeLastOffset()[f]);
  });
  for (const auto *specs : {&signature.outputs(), &signature.inputs()})
    if (!specs->empty() && specs->Get(0).shape_size() > 0 &&
        !specs->Get(0).shape(0).symbol().empty()) {
      signature.set_batch_symbol(specs->Get(0).shape(0).symbol());
      return;
    }
}

/// Renames the symbols of `program` (emitted with `own` as its signature)
/// to those `reference` uses at the same input/output positions, so that
/// every rank's program matches the plan's one signature. Fresh symbols
/// differ between ranks whose programs differ; the dims they stand for do
/// not.
LogicalResult unifySymbols(func::FuncOp func, const pb::Signature &own,
                           const pb::Signature &reference,
                           pb::RankProgram &program) {
  std::map<std::string, std::string> rename;
  auto match =
      [&](const google::protobuf::RepeatedPtrField<pb::TensorSpec> &mine,
          const google::protobuf::RepeatedPtrField<pb::TensorSpec> &theirs)
      -> LogicalResult {
    if (mine.size() != theirs.size())
      return func.emitError("this rank's program has ")
             << mine.size() << " inputs/outputs, rank 0's " << theirs.size();
    for (int i = 0; i < mine.size(); ++i) {
      if (mine[i].shape_size() != theirs[i].shape_size() ||
          mine[i].dtype() != theirs[i].dtype())
        return func.emitError("'")
               << mine[i].name() << "' differs from rank 0's signature";
      for (int d = 0; d < mine[i].shape_size(); ++d) {
        const pb::Dim &a = mine[i].shape(d), &b = theirs[i].shape(d);
        if (a.symbol().empty() != b.symbol().empty() ||
            (a.symbol().empty() && a.size() != b.size()))
          return func.emitError("dim ") << d << " of '" << mine[i].name()
                                        << "' differs from rank 0's signature";
        if (a.symbol().empty())
          continue;
        auto [it, inserted] = rename.emplace(a.symbol(), b.symbol());
        if (!inserted && it->second != b.symbol())
          return func.emitError("symbol '")
                 << a.symbol() << "' of this rank stands for both '"
                 << it->second << "' and '" << b.symbol() << "' of rank 0";
      }
    }
    return success();
  };
  if (failed(match(own.inputs(), reference.inputs())) ||
      failed(match(own.outputs(), reference.outputs())))
    return failure();
  // Symbols of this rank that rank 0 uses for something else get a suffix.
  std::set<std::string> taken;
  for (const auto &[from, to] : rename)
    taken.insert(to);
  auto renamed = [&](const std::string &symbol) {
    auto it = rename.find(symbol);
    if (it != rename.end())
      return it->second;
    std::string fresh = symbol;
    while (taken.count(fresh))
      fresh += "_r" + std::to_string(program.rank());
    return rename[symbol] = fresh;
  };
  for (pb::Slot &slot : *program.mutable_slots())
    for (pb::Dim &dim : *slot.mutable_shape())
      if (!dim.symbol().empty())
        dim.set_symbol(renamed(dim.symbol()));
  return success();
}

/// Writes one weights file per rank into `files` (published with the plan).
LogicalResult writeWeights(ModuleOp module, pb::Plan &plan,
                           std::vector<std::vector<PendingConstant>> &constants,
                           llvm::StringRef planPath,
                           ::ember::FileTransaction &files) {
  llvm::SmallString<256> dir(planPath);
  llvm::sys::path::remove_filename(dir);
  uint64_t total = 0;
  for (const auto &rankConstants : constants)
    for (const PendingConstant &c : rankConstants)
      total += c.size();
  ::ember::progress::Phase phase("writing weights", total,
                                 ::ember::progress::Unit::Bytes);
  for (int r = 0; r < plan.programs_size(); ++r) {
    if (constants[r].empty())
      continue;
    pb::RankProgram *program = plan.mutable_programs(r);
    std::string weightsName = weightsFileNameFor(planPath, r);
    llvm::SmallString<256> weightsPath(dir);
    llvm::sys::path::append(weightsPath, weightsName);
    std::string error;
    ::ember::WeightsFileWriter weights;
    if (!weights.open(std::string(weightsPath), &error, &files))
      return module.emitError()
             << "cannot write '" << weightsPath << "': " << error;
    // Streamed from the constants' own bytes (attributes, file mappings).
    ConstantStreamer streamer(weights, &phase);
    for (const PendingConstant &c : constants[r]) {
      pb::Constant *pc = program->add_constants();
      pc->set_slot(c.slot);
      pc->set_file(0);
      pc->set_offset(streamer.append(c));
      pc->set_nbytes(c.size());
    }
    if (!weights.finish(program->add_weight_files(), weightsName, &error))
      return module.emitError()
             << "cannot write '" << weightsPath << "': " << error;
  }
  return success();
}

/// Every rank's program in one plan, finished (bounds, streams, memory),
/// with each rank's constants; nothing written yet.
struct EmittedPlan {
  pb::Plan plan;
  std::vector<std::vector<PendingConstant>> constants;
};

FailureOr<EmittedPlan> emitPlan(ModuleOp module,
                                const PlanEmitterOptions &options) {
  if (failed(verifyEmissionContract(module, options.functionName)))
    return failure();
  FailureOr<SmallVector<func::FuncOp>> funcs =
      functionsToEmit(module, options.functionName);
  if (failed(funcs))
    return failure();
  const int worldSize = static_cast<int>(funcs->size());
  // Every rank folds the same replicated weights: once is enough.
  FoldedConstantCache foldedConstants;
  EmittedPlan out;
  pb::Plan &plan = out.plan;
  plan.set_producer(options.producer);
  plan.set_world_size(worldSize);
  out.constants.resize(worldSize);
  for (int r = 0; r < worldSize; ++r) {
    // Each rank's program is emitted on its own; rank 0 gives the
    // signature and the collective descriptors, which every other rank's
    // k-th collective must match.
    pb::Plan rankPlan;
    FunctionEmitter emitter((*funcs)[r], &rankPlan);
    int next = 0;
    if (worldSize > 1)
      emitter.setCollectiveHook([&,
                                 r](Operation *op, int kind,
                                    ArrayRef<int64_t> group) -> FailureOr<int> {
        int index = next++;
        if (r == 0) {
          pb::CollectiveDescriptor *d = plan.add_collectives();
          d->set_kind(static_cast<pb::CollectiveDescriptor::Kind>(kind));
          for (int64_t rank : group)
            d->add_group_ranks(rank);
          d->set_name(locationName(op->getLoc()));
          return index;
        }
        if (index >= plan.collectives_size() ||
            plan.collectives(index).kind() != kind ||
            plan.collectives(index).group_ranks_size() !=
                static_cast<int>(group.size()))
          return op->emitError("collective ")
                 << index << " of rank " << r
                 << " does not match rank 0's (the ranks' programs must run "
                    "the same collectives in the same order)";
        return index;
      });
    if (failed(emitter.run()))
      return failure();
    if (r > 0 && next != plan.collectives_size())
      return (*funcs)[r].emitError("rank ")
             << r << " runs " << next << " collectives, rank 0 runs "
             << plan.collectives_size();
    if (r == 0) {
      *plan.mutable_signature() = rankPlan.signature();
      annotateSignature((*funcs)[r], *plan.mutable_signature());
    }
    pb::RankProgram *program = plan.add_programs();
    *program = std::move(*rankPlan.mutable_programs(0));
    program->set_rank(r);
    if (r > 0 && failed(unifySymbols((*funcs)[r], rankPlan.signature(),
                                     plan.signature(), *program)))
      return failure();
    out.constants[r] = std::move(emitter.constants());
  }
  if (failed(finishPlan(module, plan, options)))
    return failure();
  return out;
}

} // namespace

LogicalResult writePlan(ModuleOp module, llvm::StringRef planPath,
                        const PlanEmitterOptions &options) {
  FailureOr<EmittedPlan> emitted = emitPlan(module, options);
  if (failed(emitted))
    return failure();
  // Everything translated: the weights files and the plan, whole or none.
  ::ember::FileTransaction files;
  if (failed(writeWeights(module, emitted->plan, emitted->constants, planPath,
                          files)))
    return failure();
  std::string error;
  if (!::ember::writePlanFile(emitted->plan, planPath.str(), &error, &files))
    return module.emitError() << "cannot write '" << planPath << "': " << error;
  return success();
}

LogicalResult emitPlanMessage(ModuleOp module,
                              const PlanEmitterOptions &options,
                              pb::Plan &plan) {
  FailureOr<EmittedPlan> emitted = emitPlan(module, options);
  if (failed(emitted))
    return failure();
  plan = std::move(emitted->plan);
  return success();
}

FailureOr<std::string> planText(ModuleOp module,
                                const PlanEmitterOptions &options) {
  FailureOr<EmittedPlan> emitted = emitPlan(module, options);
  if (failed(emitted))
    return failure();
  return printPlanText(emitted->plan, emitted->constants);
}

} // namespace mlir::ember::plan_emitter

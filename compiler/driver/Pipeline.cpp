//===- Pipeline.cpp - ember-compile's options and pass pipeline -----------===//
#include "driver/Pipeline.h"

#include "passes/Passes.h"
#include "progress/progress.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

namespace mlir::ember::driver {

namespace {

/// Writes the IR after each pass to <dir>/NN-<pass argument>.mlir.
class NumberedFileDumper : public PassManager::IRPrinterConfig {
public:
  explicit NumberedFileDumper(std::string dir)
      : IRPrinterConfig(/*printModuleScope=*/true), dir_(std::move(dir)) {}

  /// Writes <dir>/00-input.mlir; false (with a message) on error.
  bool writeInput(Operation *op) {
    return write("input", [&](raw_ostream &os) { op->print(os); });
  }

  void printAfterIfEnabled(Pass *pass, Operation *,
                           PrintCallbackFn printCallback) override {
    llvm::StringRef name = pass->getArgument();
    write(name.empty() ? pass->getName() : name, printCallback);
  }

  bool failed() const { return failed_; }

private:
  bool write(llvm::StringRef name, PrintCallbackFn print) {
    llvm::SmallString<256> path(dir_);
    llvm::sys::path::append(path,
                            llvm::formatv("{0:02}-{1}.mlir", next_++, name));
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
    if (!ec) {
      print(os);
      os << "\n";
      os.close();
      ec = os.error();
    }
    if (ec) {
      llvm::errs() << "ember-compile: cannot write '" << path
                   << "': " << ec.message() << "\n";
      failed_ = true;
      os.clear_error();
      return false;
    }
    return true;
  }

  std::string dir_;
  int next_ = 0;
  bool failed_ = false;
};

/// Progress of the pipeline (progress/progress.h): "running passes" counts
/// the passes run on the module; the sharding planner, which may search for
/// long, is a phase of its own ("planning sharding").
class PassProgress : public PassInstrumentation {
public:
  PassProgress(Operation *module, size_t passes)
      : module_(module), passes_("running passes", passes,
                                 ::ember::progress::Unit::Items) {}

  void runBeforePass(Pass *pass, Operation *op) override {
    if (op == module_ && isPlanning(pass))
      planning_.emplace("planning sharding", 1, ::ember::progress::Unit::Items);
  }
  void runAfterPass(Pass *pass, Operation *op) override {
    finish(pass, op, /*succeeded=*/true);
  }
  void runAfterPassFailed(Pass *pass, Operation *op) override {
    finish(pass, op, /*succeeded=*/false);
  }

private:
  static bool isPlanning(Pass *pass) {
    return pass->getArgument() == "ember-plan-sharding";
  }
  void finish(Pass *pass, Operation *op, bool succeeded) {
    if (op != module_)
      return;
    if (isPlanning(pass) && planning_) {
      if (succeeded)
        planning_->advance(1);
      planning_.reset();
    }
    if (succeeded)
      passes_.advance(1);
  }

  Operation *module_;
  ::ember::progress::Phase passes_;
  std::optional<::ember::progress::Phase> planning_;
};

} // namespace

void buildCompilePipeline(PassManager &pm, const CompileOptions &options) {
  pm.addPass(createEmberRaiseEmbeddingBags());
  pm.addPass(createEmberFunctionalize());
  pm.addPass(createEmberSimplifySlices());
  pm.addPass(createEmberFoldShapes());
  // EmbeddingCollections: one sequence lookup per feature, which the planner,
  // the partitioning and the plan emitter take.
  pm.addPass(createEmberSplitEmbeddingCollections());
  if (!options.sharded()) {
    pm.addPass(createEmberGroupTables());
    pm.addPass(createCanonicalizerPass());
    // The importer's decomposed dense layers become Ember ops (one kernel
    // each), on canonical IR (a layer norm's scale of ones and shift of
    // zeros are gone by then).
    pm.addPass(createEmberRaiseDenseOps());
    return;
  }
  // Sharded: plan the tables' sharding on the bags as the model has them,
  // then one program per rank (each rank's lookups are grouped by the
  // partitioning itself).
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createEmberRaiseDenseOps()); // as above, before planning
  EmberPlanShardingOptions planning;
  planning.worldSize = options.worldSize;
  planning.ranksPerNode = options.ranksPerNode;
  planning.batchSize = options.batchPerRank;
  planning.sharding = options.sharding;
  planning.tableSharding.assign(options.tableSharding.begin(),
                                options.tableSharding.end());
  planning.topologyFile = options.topologyFile;
  planning.statsFile = options.statsFile;
  planning.planFile = options.importPlanFile;
  planning.exportFile = options.exportPlanFile;
  planning.reportFile = options.reportFile;
  planning.objective = options.objective;
  planning.memoryReservation = options.memoryReservation;
  planning.leanSlack = options.leanSlack;
  planning.reportFormat = options.reportFormat;
  pm.addPass(createEmberPlanSharding(planning));
  if (options.planShardingOnly)
    return;
  pm.addPass(createEmberPartition());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // The output dist's column slices that the model concatenates back in
  // order become one slice, then none (docs/sharding.md, "Output dist").
  pm.addPass(createEmberSimplifySlices());
  // --comm-dtype: the collectives' float payloads travel narrower.
  if (options.commDType == "float16" || options.commDType == "bfloat16") {
    EmberSetCommCodecOptions codec;
    codec.codec = options.commDType == "float16" ? "fp16" : "bf16";
    pm.addPass(createEmberSetCommCodec(codec));
  }
  // Collectives on the communication stream: by default for CUDA and for
  // every multi-rank plan (the CPU backend runs stream 1 on its
  // communication thread; docs/runtime.md, "Overlapping communication").
  bool commStream = options.commStream < 0
                        ? options.target == plan_emitter::PlanTarget::Cuda ||
                              options.worldSize != 1
                        : options.commStream > 0;
  if (commStream)
    pm.addPass(createEmberAssignStreams());
}

LogicalResult runCompilePipeline(ModuleOp module, const CompileOptions &options,
                                 TimingScope *timing) {
  MLIRContext *context = module.getContext();
  PassManager pm(context);
  buildCompilePipeline(pm, options);
  NumberedFileDumper *dumper = nullptr;
  if (!options.dumpAfterEachDir.empty()) {
    if (std::error_code ec =
            llvm::sys::fs::create_directories(options.dumpAfterEachDir))
      return module.emitError()
             << "--dump-after-each: cannot create directory '"
             << options.dumpAfterEachDir << "': " << ec.message();
    // The pass manager prints IR only when it runs passes on one thread.
    context->disableMultithreading();
    auto config =
        std::make_unique<NumberedFileDumper>(options.dumpAfterEachDir);
    dumper = config.get();
    if (!dumper->writeInput(module))
      return failure();
    pm.enableIRPrinting(std::move(config));
  }
  if (timing)
    pm.enableTiming(*timing);
  pm.addInstrumentation(std::make_unique<PassProgress>(module, pm.size()));
  if (failed(pm.run(module)))
    return failure();
  if (dumper && dumper->failed())
    return failure();
  return success();
}

plan_emitter::PlanEmitterOptions
planEmitterOptions(const CompileOptions &options) {
  plan_emitter::PlanEmitterOptions out;
  out.target = options.target;
  out.maxBatch = options.maxBatch;
  out.planMemory = options.planMemory;
  return out;
}

} // namespace mlir::ember::driver

//===- ember-compile.cpp - ONNX/MLIR -> Ember plan ------------------------===//
//
//   ember-compile INPUT.onnx|INPUT.mlir -o OUT.plan
//       [--emit plan|plan-text|mlir|sharding-report|sharding-plan|timeline]
//       [--ids-per-bag L] (--emit timeline: docs/timeline.md)
//       [--world-size N --ranks-per-node K --sharding TYPE --topology FILE
//        --plan FILE ...] (docs/sharding.md)
//       [--target cpu|cuda] [--max-batch N] [--dump-after-each DIR]
//       [--no-memory-plan] [--memory-stats]
//
// Imports an ONNX model (EmberOnnxImporter) or parses MLIR, runs the
// compiler driver's pipeline (compiler/driver/Pipeline.h) and writes the plan
// with its weights file (--emit plan, the default), the plan as readable text
// (--emit plan-text, no weights), the IR after the passes (--emit mlir) or
// the predicted timeline of the plan (--emit timeline, no weights). On any error it prints diagnostics with their locations,
// exits with status 1 and leaves no output file. Every output appears whole
// or not at all, also when the process is killed (io/atomic_file.h: an
// unnamed temporary, fsync, rename); SIGINT/SIGTERM stop it with a message
// and status 130/143, leaving no temporary behind.
//
//===----------------------------------------------------------------------===//

#include "dialects/ember/EmberDialect.h"
#include "driver/Pipeline.h"
#include "driver/PredictedTimeline.h"
#include "frontends/onnx/OnnxImporter.h"
#include "io/atomic_file.h"
#include "plan/PlanEmitter.h"
#include "progress/progress.h"
#include "sharding/PlanReport.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

namespace cl = llvm::cl;

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<model.onnx|input.mlir>"),
                                          cl::Required);
static cl::opt<std::string> outputFilename("o", cl::desc("Output file"),
                                           cl::value_desc("filename"),
                                           cl::Required);
enum class EmitKind {
  Plan,
  PlanText,
  Mlir,
  ShardingReport,
  ShardingPlan,
  Timeline
};
static cl::opt<EmitKind> emitKind(
    "emit", cl::desc("What to write"), cl::init(EmitKind::Plan),
    cl::values(
        clEnumValN(EmitKind::Plan, "plan",
                   "the plan and its weights files (default)"),
        clEnumValN(EmitKind::PlanText, "plan-text",
                   "the plan as text, one line per instruction (no weights)"),
        clEnumValN(EmitKind::Mlir, "mlir", "the IR after the passes"),
        clEnumValN(EmitKind::ShardingReport, "sharding-report",
                   "the sharding planner's per-rank memory and cost report"),
        clEnumValN(EmitKind::ShardingPlan, "sharding-plan",
                   "the chosen sharding as TorchRec ParameterSharding JSON"),
        clEnumValN(EmitKind::Timeline, "timeline",
                   "the plan's predicted timeline (Chrome trace JSON, "
                   "docs/timeline.md; no weights)")));
static cl::opt<double> idsPerBag(
    "ids-per-bag",
    cl::desc("--emit timeline: ids per bag of every id input (default 1)"),
    cl::value_desc("L"), cl::init(1.0));
static cl::opt<mlir::ember::plan_emitter::PlanTarget>
    target("target", cl::desc("The backend the plan is for"),
           cl::init(mlir::ember::plan_emitter::PlanTarget::Cpu),
           cl::values(clEnumValN(mlir::ember::plan_emitter::PlanTarget::Cpu,
                                 "cpu", "the CPU backend (default)"),
                      clEnumValN(mlir::ember::plan_emitter::PlanTarget::Cuda,
                                 "cuda", "the CUDA backend")));
static cl::opt<int64_t> maxBatch(
    "max-batch",
    cl::desc("Largest batch the plan accepts (the runtime refuses larger "
             "ones); lets the memory planner place batch-sized buffers"),
    cl::value_desc("N"), cl::init(0));
static cl::opt<std::string> dumpAfterEach(
    "dump-after-each",
    cl::desc("Write the IR before the passes and after each pass to "
             "numbered files in DIR"),
    cl::value_desc("DIR"));
static cl::opt<bool>
    noMemoryPlan("no-memory-plan",
                 cl::desc("Leave every buffer to the runtime's dynamic arena"));
static cl::opt<cl::boolOrDefault> commStream(
    "comm-stream",
    cl::desc("Collectives on their own stream, reordered to overlap compute "
             "(default: for --target cuda and for more than one rank)"));
static cl::opt<std::string> commDType(
    "comm-dtype",
    cl::desc("Payload of the pooled all-to-all, reduce-scatter and "
             "all-reduce: float32 (exact, default), float16 or bfloat16"),
    cl::value_desc("DTYPE"), cl::init("float32"));
static cl::opt<bool>
    printStats("memory-stats",
               cl::desc("Print the memory plan's figures to stderr"));
static cl::OptionCategory shardingCategory("Sharding (docs/sharding.md)");
static cl::opt<int64_t> worldSize(
    "world-size",
    cl::desc("Number of ranks: plans the sharding of the embedding tables "
             "and writes one program per rank (default 1)"),
    cl::value_desc("N"), cl::init(1), cl::cat(shardingCategory));
static cl::opt<int64_t> ranksPerNode(
    "ranks-per-node", cl::desc("Ranks per node (default: the topology's)"),
    cl::value_desc("K"), cl::init(0), cl::cat(shardingCategory));
static cl::opt<std::string> shardingType(
    "sharding",
    cl::desc("auto (default: the planner chooses), table_wise, row_wise, "
             "column_wise, table_row_wise or data_parallel for every table "
             "that allows it"),
    cl::init("auto"), cl::cat(shardingCategory));
static cl::list<std::string> tableSharding(
    "table-sharding",
    cl::desc("Force one table: NAME=KIND[:KERNEL][@R1/R2/...] (repeatable)"),
    cl::cat(shardingCategory));
static cl::opt<int64_t> batchPerRank(
    "batch-per-rank",
    cl::desc("Batch size per rank the planner's cost model assumes"),
    cl::init(0), cl::cat(shardingCategory));
static cl::opt<std::string>
    topologyFile("topology", cl::desc("Topology JSON (docs/sharding.md)"),
                 cl::value_desc("FILE"), cl::cat(shardingCategory));
static cl::opt<std::string>
    statsFile("sharding-stats",
              cl::desc("Table and feature statistics JSON (pooling factors)"),
              cl::value_desc("FILE"), cl::cat(shardingCategory));
static cl::opt<std::string> importPlan(
    "plan",
    cl::desc("Use this sharding (TorchRec ParameterSharding JSON) instead of "
             "planning"),
    cl::value_desc("FILE"), cl::cat(shardingCategory));
static cl::opt<std::string> objective(
    "objective",
    cl::desc("What the sharding planner minimises: inference (the forward "
             "step, default), training (also the backward pass and the "
             "gradient all-reduce of replicated tables) or training-lean (the "
             "training step, with no rank moving or holding more bytes than "
             "the inference plan's busiest)"),
    cl::value_desc("inference|training|training-lean"), cl::init("inference"),
    cl::cat(shardingCategory));
static cl::opt<double> leanSlack(
    "lean-slack",
    cl::desc("With --objective training-lean: how far above the inference "
             "plan's busiest rank each rank's bytes may go, as a fraction "
             "(default 0.05; larger trades bytes for training step)"),
    cl::value_desc("FRACTION"), cl::init(-1.0), cl::cat(shardingCategory));
static cl::opt<std::string> memoryReservation(
    "memory-reservation",
    cl::desc("Device memory kept from the embeddings: ember (the topology's "
             "reserved_device_fraction, default 10%) or torchrec (15% plus "
             "20 copies of the input ids, as TorchRec's planner)"),
    cl::value_desc("ember|torchrec"), cl::init("ember"),
    cl::cat(shardingCategory));
static cl::opt<std::string> reportFormat(
    "report-format",
    cl::desc("--emit sharding-report as text or html (default: html when "
             "the output file ends in .html or .htm, else text)"),
    cl::value_desc("text|html"), cl::cat(shardingCategory));
static cl::opt<bool>
    quiet("quiet", cl::desc("No progress on stderr (also EMBER_QUIET=1)"));
static cl::opt<bool> skipChecker(
    "skip-onnx-checker",
    cl::desc("Do not run the ONNX checker and shape inference first"));

/// "file:line:col" for source locations ("file" for the whole file), "<model
/// file>: node '<name>'" for ONNX node locations, the printed location
/// otherwise.
static std::string describeLocation(mlir::Location loc) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto name = llvm::dyn_cast<mlir::NameLoc>(loc)) {
    if (auto file = llvm::dyn_cast<mlir::FileLineColLoc>(name.getChildLoc()))
      os << file.getFilename().getValue() << ": ";
    os << "node '" << name.getName().getValue() << "'";
    return text;
  }
  if (auto file = llvm::dyn_cast<mlir::FileLineColLoc>(loc)) {
    os << file.getFilename().getValue();
    if (file.getLine() != 0) // line 0: the file as a whole
      os << ":" << file.getLine() << ":" << file.getColumn();
    return text;
  }
  loc.print(os);
  return text;
}

/// "<location>: error: <message>", notes likewise.
static void installDiagnosticPrinter(mlir::MLIRContext &context) {
  context.printOpOnDiagnostic(false);
  context.getDiagEngine().registerHandler([](mlir::Diagnostic &diag) {
    ember::progress::clearBar(); // a message starts on a clean line
    auto print = [](const mlir::Diagnostic &d) {
      const char *severity = "error";
      switch (d.getSeverity()) {
      case mlir::DiagnosticSeverity::Note:
        severity = "note";
        break;
      case mlir::DiagnosticSeverity::Warning:
        severity = "warning";
        break;
      case mlir::DiagnosticSeverity::Remark:
        severity = "remark";
        break;
      case mlir::DiagnosticSeverity::Error:
        break;
      }
      llvm::errs() << describeLocation(d.getLocation()) << ": " << severity
                   << ": " << d.str() << "\n";
    };
    print(diag);
    for (const mlir::Diagnostic &note : diag.getNotes())
      print(note);
    return mlir::success();
  });
}

static mlir::OwningOpRef<mlir::ModuleOp> loadInput(mlir::MLIRContext &context) {
  if (llvm::StringRef(inputFilename).ends_with(".onnx")) {
    mlir::ember::onnx_importer::OnnxImportOptions options;
    options.runChecker = options.runShapeInference = !skipChecker;
    return mlir::ember::onnx_importer::importOnnxFile(inputFilename, &context,
                                                      options);
  }
  std::string error;
  auto file = mlir::openInputFile(inputFilename, &error);
  if (!file) {
    llvm::errs() << "ember-compile: cannot read '" << inputFilename
                 << "': " << error << "\n";
    return nullptr;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  return mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
}

/// The termination handler's hook: erase a progress bar (the message then
/// starts on a clean line), then LLVM's interrupt handlers.
static void onTermination() {
  ember::progress::clearBarForSignal();
  llvm::sys::RunInterruptHandlers();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // SIGINT/SIGTERM/SIGHUP: remove temporaries (ours and LLVM's), say so,
  // exit 128 + signal.
  ember::installTerminationHandler("ember-compile");
  ember::setTerminationHook(onTermination);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerDefaultTimingManagerCLOptions(); // --mlir-timing
  cl::ParseCommandLineOptions(argc, argv, "Ember compiler: model -> plan\n");
  // Progress of the long steps on stderr (docs/runtime.md, "Progress").
  ember::progress::setProgramName("ember-compile");
  if (quiet)
    ember::progress::setQuiet(true);

  mlir::DialectRegistry registry;
  registry.insert<mlir::ember::EmberDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::tensor::TensorDialect,
                  mlir::tosa::TosaDialect, mlir::scf::SCFDialect,
                  mlir::affine::AffineDialect>();
  mlir::ember::onnx_importer::registerOnnxImportDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  installDiagnosticPrinter(context);

  if (worldSize < 1) {
    llvm::errs() << "ember-compile: --world-size must be at least 1 (got "
                 << worldSize << ")\n";
    return 1;
  }
  if (maxBatch < 0) {
    llvm::errs() << "ember-compile: --max-batch must be positive (got "
                 << maxBatch << ")\n";
    return 1;
  }
  if (commDType != "float32" && commDType != "float16" &&
      commDType != "bfloat16") {
    llvm::errs() << "ember-compile: --comm-dtype must be float32, float16 or "
                    "bfloat16, not '"
                 << commDType << "'\n";
    return 1;
  }
  if (objective != "inference" && objective != "training" &&
      objective != "training-lean") {
    llvm::errs() << "ember-compile: --objective must be inference, training "
                    "or training-lean, not '"
                 << objective << "'\n";
    return 1;
  }
  if (memoryReservation != "ember" && memoryReservation != "torchrec") {
    llvm::errs() << "ember-compile: --memory-reservation must be ember or "
                    "torchrec, not '"
                 << memoryReservation << "'\n";
    return 1;
  }
  if (idsPerBag.getNumOccurrences() && emitKind != EmitKind::Timeline) {
    llvm::errs() << "ember-compile: --ids-per-bag applies to --emit timeline "
                    "only\n";
    return 1;
  }
  if (!(idsPerBag > 0) || !std::isfinite(idsPerBag)) {
    llvm::errs() << "ember-compile: --ids-per-bag must be a positive number "
                    "(got "
                 << llvm::format("%g", idsPerBag.getValue()) << ")\n";
    return 1;
  }
  // The report's form (text or HTML, docs/sharding.md), before the import.
  if (reportFormat.getNumOccurrences() &&
      emitKind != EmitKind::ShardingReport) {
    llvm::errs() << "ember-compile: --report-format applies to --emit "
                    "sharding-report only\n";
    return 1;
  }
  if (emitKind == EmitKind::ShardingReport)
    if (llvm::Error error =
            ember::sharding::chooseReportFormat(outputFilename, reportFormat)
                .takeError()) {
      llvm::errs() << "ember-compile: " << llvm::toString(std::move(error))
                   << "\n";
      return 1;
    }
  // --mlir-timing reports import, each pass and plan emission.
  mlir::DefaultTimingManager timing;
  mlir::applyDefaultTimingManagerCLOptions(timing);
  mlir::TimingScope rootTiming = timing.getRootScope();
  mlir::TimingScope importTiming = rootTiming.nest("import");
  mlir::OwningOpRef<mlir::ModuleOp> module;
  {
    ember::progress::Phase importing("importing " + inputFilename.getValue(),
                                     1, ember::progress::Unit::Items);
    if ((module = loadInput(context)))
      importing.advance(1);
  }
  importTiming.stop();
  if (!module)
    return 1;

  mlir::ember::driver::CompileOptions options;
  options.target = target;
  options.maxBatch = maxBatch;
  options.dumpAfterEachDir = dumpAfterEach;
  options.planMemory = !noMemoryPlan;
  options.commDType = commDType;
  options.commStream = commStream == cl::BOU_UNSET  ? -1
                       : commStream == cl::BOU_TRUE ? 1
                                                    : 0;
  // Without --world-size, a topology file gives it.
  options.worldSize =
      worldSize.getNumOccurrences() == 0 && !topologyFile.empty() ? 0
                                                                  : worldSize;
  options.ranksPerNode = ranksPerNode;
  options.batchPerRank = batchPerRank;
  options.sharding = shardingType;
  options.tableSharding.assign(tableSharding.begin(), tableSharding.end());
  options.topologyFile = topologyFile;
  options.statsFile = statsFile;
  options.importPlanFile = importPlan;
  options.objective = objective;
  options.memoryReservation = memoryReservation;
  options.leanSlack = leanSlack;
  options.reportFormat = reportFormat;
  if (emitKind == EmitKind::ShardingReport ||
      emitKind == EmitKind::ShardingPlan) {
    // The planner writes the file itself, only when planning succeeds.
    options.planShardingOnly = true;
    (emitKind == EmitKind::ShardingReport ? options.reportFile
                                          : options.exportPlanFile) =
        outputFilename;
    return mlir::failed(
               mlir::ember::driver::runCompilePipeline(*module, options))
               ? 1
               : 0;
  }
  mlir::TimingScope passTiming = rootTiming.nest("passes");
  if (mlir::failed(mlir::ember::driver::runCompilePipeline(*module, options,
                                                           &passTiming)))
    return 1;
  passTiming.stop();

  if (emitKind == EmitKind::Timeline) {
    mlir::ember::driver::TimelineRequest request;
    request.idsPerBag = idsPerBag;
    request.modelFile = inputFilename;
    return mlir::failed(mlir::ember::driver::writePredictedTimeline(
               *module, options, request, outputFilename))
               ? 1
               : 0;
  }
  if (emitKind == EmitKind::Mlir || emitKind == EmitKind::PlanText) {
    std::string text;
    if (emitKind == EmitKind::PlanText) {
      mlir::FailureOr<std::string> plan = mlir::ember::plan_emitter::planText(
          *module, mlir::ember::driver::planEmitterOptions(options));
      if (mlir::failed(plan))
        return 1;
      text = std::move(*plan);
    } else {
      llvm::raw_string_ostream os(text);
      module->print(os);
      os << "\n";
    }
    if (outputFilename == "-") {
      llvm::outs() << text;
      return 0;
    }
    std::string error;
    if (!ember::writeFileAtomically(outputFilename, text, &error)) {
      llvm::errs() << "ember-compile: " << error << "\n";
      return 1;
    }
    return 0;
  }
  mlir::TimingScope emitTiming = rootTiming.nest("plan emission");
  mlir::ember::plan_emitter::MemoryPlanStats stats;
  mlir::ember::plan_emitter::PlanEmitterOptions emitterOptions =
      mlir::ember::driver::planEmitterOptions(options);
  emitterOptions.memoryStats = &stats;
  {
    ember::progress::Phase emitting("emitting " + outputFilename.getValue(), 1,
                                    ember::progress::Unit::Items);
    if (mlir::failed(mlir::ember::plan_emitter::writePlan(
            *module, outputFilename, emitterOptions)))
      return 1;
    emitting.advance(1);
  }
  if (printStats)
    llvm::errs() << "memory plan: " << stats.plannedSlots
                 << " slots in a static arena of " << stats.arenaBytes
                 << " bytes (" << stats.sumBytes << " without reuse), "
                 << stats.dynamicSlots << " slots left to the dynamic arena\n";
  return 0;
}

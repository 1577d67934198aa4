//===- ember-compile.cpp - ONNX/MLIR -> Ember plan
//-------------------------===//
//
//   ember-compile INPUT.onnx|INPUT.mlir -o OUT.plan [--emit plan|mlir]
//
// Imports an ONNX model (EmberOnnxImporter) or parses MLIR, runs the cleanup
// passes (--ember-raise-embedding-bags --ember-functionalize
// --ember-simplify-slices --canonicalize) and writes the plan with its
// weights file (--emit plan, the default) or the IR after the passes
// (--emit mlir). On any error it prints diagnostics with their locations,
// exits with status 1 and leaves no output file (outputs are written to
// temporary files and renamed on success).
//
//===----------------------------------------------------------------------===//

#include "ember/EmberDialect.h"
#include "frontends/onnx/OnnxImporter.h"
#include "passes/Passes.h"
#include "plan/PlanEmitter.h"

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
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

static cl::opt<std::string> inputFilename(cl::Positional,
                                          cl::desc("<model.onnx|input.mlir>"),
                                          cl::Required);
static cl::opt<std::string> outputFilename("o", cl::desc("Output file"),
                                           cl::value_desc("filename"),
                                           cl::Required);
enum class EmitKind { Plan, Mlir };
static cl::opt<EmitKind> emitKind(
    "emit", cl::desc("What to write"), cl::init(EmitKind::Plan),
    cl::values(clEnumValN(EmitKind::Plan, "plan",
                          "the plan and its weights file (default)"),
               clEnumValN(EmitKind::Mlir, "mlir", "the IR after the passes")));
static cl::opt<bool> skipChecker(
    "skip-onnx-checker",
    cl::desc("Do not run the ONNX checker and shape inference first"));

/// "file:line:col" for source locations, "<model file>: node '<name>'" for
/// ONNX node locations, the printed location otherwise.
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
    os << file.getFilename().getValue() << ":" << file.getLine() << ":"
       << file.getColumn();
    return text;
  }
  loc.print(os);
  return text;
}

/// "<location>: error: <message>", notes likewise.
static void installDiagnosticPrinter(mlir::MLIRContext &context) {
  context.printOpOnDiagnostic(false);
  context.getDiagEngine().registerHandler([](mlir::Diagnostic &diag) {
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

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  cl::ParseCommandLineOptions(argc, argv, "Ember compiler: model -> plan\n");

  mlir::DialectRegistry registry;
  registry.insert<mlir::ember::EmberDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::tensor::TensorDialect,
                  mlir::tosa::TosaDialect, mlir::scf::SCFDialect,
                  mlir::affine::AffineDialect>();
  mlir::ember::onnx_importer::registerOnnxImportDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  installDiagnosticPrinter(context);

  mlir::OwningOpRef<mlir::ModuleOp> module = loadInput(context);
  if (!module)
    return 1;

  mlir::PassManager pm(&context);
  pm.addPass(mlir::ember::createEmberRaiseEmbeddingBags());
  pm.addPass(mlir::ember::createEmberFunctionalize());
  pm.addPass(mlir::ember::createEmberSimplifySlices());
  pm.addPass(mlir::ember::createEmberGroupTables());
  pm.addPass(mlir::createCanonicalizerPass());
  if (mlir::failed(pm.run(*module)))
    return 1;

  if (emitKind == EmitKind::Mlir) {
    if (llvm::Error error = llvm::writeToOutput(
            outputFilename, [&](llvm::raw_ostream &os) -> llvm::Error {
              module->print(os);
              os << "\n";
              return llvm::Error::success();
            })) {
      llvm::errs() << "ember-compile: cannot write '" << outputFilename
                   << "': " << llvm::toString(std::move(error)) << "\n";
      return 1;
    }
    return 0;
  }
  if (mlir::failed(
          mlir::ember::plan_emitter::writePlan(*module, outputFilename)))
    return 1;
  return 0;
}

//===- ember-translate.cpp - Translate models into Ember IR ---------------===//
//
// mlir-translate style: `ember-translate --import-onnx model.onnx -o out.mlir`
// imports an ONNX model and prints the verified module. On any error it
// prints diagnostics (located at the ONNX node name), exits non-zero, and
// leaves no output file behind (the output is written to a temporary file
// and renamed only on success).
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/OnnxImporter.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

static cl::opt<std::string>
    inputFilename(cl::Positional, cl::desc("<input model>"), cl::Required);
static cl::opt<std::string> outputFilename("o", cl::desc("Output file"),
                                           cl::value_desc("filename"),
                                           cl::init("-"));
static cl::opt<bool> importOnnx("import-onnx",
                                cl::desc("Import an ONNX model (ModelProto)"));
static cl::opt<bool> skipChecker(
    "skip-onnx-checker",
    cl::desc("Do not run the ONNX checker and shape inference first"));
static cl::opt<std::string>
    functionName("function-name", cl::desc("Name of the imported function"),
                 cl::init("main"));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  cl::ParseCommandLineOptions(argc, argv, "Ember translation driver\n");
  if (!importOnnx) {
    llvm::errs() << "ember-translate: choose a translation (--import-onnx)\n";
    return 1;
  }

  mlir::MLIRContext context;
  // "<model file>: error: node '<name>' (<OpType>): ..." - the message names
  // the node; the location's file is the model.
  context.getDiagEngine().registerHandler([](mlir::Diagnostic &diag) {
    auto print = [](const mlir::Diagnostic &d) {
      std::string file = "ember-translate";
      if (auto fileLoc =
              d.getLocation()->findInstanceOf<mlir::FileLineColLoc>())
        file = fileLoc.getFilename().str();
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
      llvm::errs() << file << ": " << severity << ": " << d.str() << "\n";
    };
    print(diag);
    for (const mlir::Diagnostic &note : diag.getNotes())
      print(note);
    return mlir::success();
  });
  mlir::ember::onnx_importer::OnnxImportOptions options;
  options.functionName = functionName;
  options.runChecker = options.runShapeInference = !skipChecker;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::ember::onnx_importer::importOnnxFile(inputFilename, &context,
                                                 options);
  if (!module)
    return 1;

  if (outputFilename == "-") {
    module->print(llvm::outs());
    llvm::outs() << "\n";
    llvm::outs().flush();
    return 0;
  }
  // writeToOutput writes a temporary file and renames it on success.
  if (llvm::Error error = llvm::writeToOutput(
          outputFilename, [&](llvm::raw_ostream &os) -> llvm::Error {
            module->print(os);
            os << "\n";
            return llvm::Error::success();
          })) {
    llvm::errs() << "ember-translate: cannot write '" << outputFilename
                 << "': " << llvm::toString(std::move(error)) << "\n";
    return 1;
  }
  return 0;
}

//===- options.h - ember-run's command line ---------------------*- C++ -*-===//
#ifndef EMBER_TOOLS_EMBER_RUN_OPTIONS_H
#define EMBER_TOOLS_EMBER_RUN_OPTIONS_H

#include "ember/bounds_check.h"
#include "ember/status.h"

#include <string>
#include <utility>
#include <vector>

namespace ember::tools {

struct RunOptions {
  std::string planPath;
  std::vector<std::pair<std::string, std::string>> inputFiles; // NAME=FILE.npy
  std::vector<std::string> npzFiles;
  /// --inputs A.npz,B.npz,... or --inputs DIR: one batch per file.
  std::string batchList;
  int pipelineDepth = 1; // --pipeline-depth N
  std::string outputDir;
  int repeat = 1;
  int warmup = 0;
  int threads = 1;
  std::string reportJson;
  BoundsCheckMode boundsCheck = BoundsCheckMode::kFatal;
  std::string weightMemory = "mmap"; // --weight-memory mmap|huge_pages|auto
  std::string quantizedSums = "auto"; // --quantized-sums fast|fbgemm|auto
  bool listKernels = false;
  std::string device = "cpu"; // --device cpu | cuda | cuda:N
  bool verbose = false;       // --verbose: device and host-run instructions
  bool quiet = false;         // --quiet: no progress on stderr (EMBER_QUIET=1)
  bool cudaGraphs = false;    // --cuda-graphs
  bool help = false;
  // Multi-rank (docs/runtime.md, "Multi-rank runs").
  int nproc = 0;              // --nproc N: start N local ranks
  double timeoutSeconds = 60; // --timeout S: rendezvous and collectives
  bool timeoutGiven = false;
  std::string rendezvous;  // --rendezvous file:DIR | tcp:HOST:PORT
  bool splitBatch = false; // --split-batch: inputs are the global batch
  std::string overlap = "auto"; // --overlap streams|off
  std::string tracePath;        // --trace FILE
  bool stats = false;           // --stats: step, comm and exposed comm
};

/// Parses argv; an error is a usage error (exit code 2).
Result<RunOptions> parseRunOptions(int argc, char **argv);
const char *usageText();

} // namespace ember::tools

#endif // EMBER_TOOLS_EMBER_RUN_OPTIONS_H

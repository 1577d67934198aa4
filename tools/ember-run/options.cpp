//===- options.cpp - ember-run's command line -----------------------------===//
#include "options.h"

#include <filesystem>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace ember::tools {

const char *usageText() {
  return R"(usage: ember-run PLAN [options]
       ember-run --list-kernels

Runs an Ember plan (PLAN.plan, or PLAN.plan.txt in text format) on inputs
read from NumPy files and writes its outputs as NAME.npy files.

  --input NAME=FILE.npy    a dense input; KJT inputs come as NAME.values,
                           NAME.lengths (or NAME.offsets) and NAME.weights
  --inputs FILE.npz        every array of an .npz (np.savez or
                           np.savez_compressed), named as above
  --inputs A.npz,B.npz,... several batches, run in this order (or
  --inputs DIR             DIR's *.npz by name); --input arrays go to every
                           batch; outputs go to DIR/batchK/NAME.npy
  --pipeline-depth N       run the batches with up to N in flight: the input
                           distribution of the next ones and this one's
                           pooled all-to-all overlap compute (default 1: one
                           after the other; 3 hides the most; needs a
                           multi-rank plan compiled with pipeline stages)
  --output-dir DIR         write each output to DIR/NAME.npy
  --repeat N               run N times (the list of batches N times) and
                           report latency (default 1)
  --warmup K               untimed runs before those (default 0)
  --threads T              kernel threads (default 1; 0 = one per core)
  --bounds-check MODE      fatal (default), warning or ignore
  --weight-memory MODE     mmap (default: weights mapped from the file,
                           zero-copy), huge_pages (tables of 2 MiB and more
                           copied into transparent huge pages at load) or
                           auto (huge_pages when the kernel enables them)
  --quantized-sums ORDER   how pooled lookups add up int8/int4 rows: fast
                           (one fused multiply-add per row and column, the
                           biases summed once per bag), fbgemm (FBGEMM's
                           order: the same bits as torch's quantized ops)
                           or auto (default: EMBER_QUANTIZED_SUMS, else
                           fast)
  --device DEV             cpu (default), cuda or cuda:N: run on a GPU (a
                           plan compiled with --target cuda); with --nproc
                           or a launcher, cuda means cuda:LOCAL_RANK
  --cuda-graphs            with --device cuda: replay the steady state as a
                           CUDA graph while input shapes stay the same
  --verbose                say on stderr where the plan runs and which
                           instructions have no kernel on that device (they
                           run on the CPU with copies)
  --report-json FILE       write the latency report as JSON
  --overlap MODE           streams (default when the plan has a
                           communication stream: collectives run on a
                           communication thread, overlapping compute) or
                           off (program order on one thread, for comparison)
  --trace FILE             write a Chrome/Perfetto trace of the timed runs
                           (docs/trace-format.md): one process per rank,
                           one track per stream, collectives linked across
                           ranks
  --stats                  print per rank the mean step time, time in
                           collectives and exposed communication (time the
                           compute stream spent in or waiting for them)
  --quiet                  no progress on stderr (loading and verifying the
                           weights of a large plan; also EMBER_QUIET=1)
  --nproc N                start N local ranks (a plan for N ranks): the
                           inputs are one global batch, split over the
                           ranks; outputs are gathered in rank order
  --timeout S              seconds after which rendezvous or a collective
                           fails when a rank is dead or hung (default 60)
  --rendezvous SPEC        file:DIR or tcp:HOST:PORT for ranks started by
                           an outside launcher (default: MASTER_ADDR and
                           MASTER_PORT, or EMBER_RENDEZVOUS)
  --split-batch            with an outside launcher: every rank reads the
                           same global inputs and takes its part of the
                           batch (otherwise each reads its own; '{rank}' in
                           an input path is replaced by the rank)
  --list-kernels           list the kernels of this build and exit (with the
                           CUDA backend: which have a CUDA version)
  --help                   this text

Exit status: 0 success, 1 runtime error (bad plan, files or inputs), 2 usage.
)";
}

namespace {
Result<int> parseCount(const std::string &flag, const char *text, int minimum) {
  errno = 0;
  char *end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (errno || !end || *end || end == text || v < minimum || v > 100000000)
    return invalidArgument(flag + " needs an integer >= " +
                           std::to_string(minimum) + ", not '" + text + "'");
  return static_cast<int>(v);
}
} // namespace

Result<RunOptions> parseRunOptions(int argc, char **argv) {
  RunOptions o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    std::string value;
    bool hasInlineValue = false;
    // --flag=value (for --input=NAME=FILE the value is NAME=FILE).
    if (arg.rfind("--", 0) == 0 && arg.find('=') != std::string::npos) {
      size_t eq = arg.find('=');
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      hasInlineValue = true;
    }
    auto next = [&]() -> Result<std::string> {
      if (hasInlineValue)
        return value;
      if (i + 1 >= argc)
        return invalidArgument(arg + " needs a value");
      return std::string(argv[++i]);
    };
    if (arg == "--help" || arg == "-h") {
      o.help = true;
    } else if (arg == "--list-kernels") {
      o.listKernels = true;
    } else if (arg == "--verbose" || arg == "-v") {
      o.verbose = true;
    } else if (arg == "--quiet" || arg == "-q") {
      if (hasInlineValue)
        return invalidArgument("--quiet takes no value");
      o.quiet = true;
    } else if (arg == "--cuda-graphs") {
      o.cudaGraphs = true;
    } else if (arg == "--device") {
      EMBER_ASSIGN_OR_RETURN(o.device, next());
      bool cudaIndex =
          o.device.rfind("cuda:", 0) == 0 && o.device.size() > 5 &&
          o.device.size() <= 9 &&
          o.device.find_first_not_of("0123456789", 5) == std::string::npos;
      if (o.device != "cpu" && o.device != "cuda" && !cudaIndex)
        return invalidArgument("--device needs cpu, cuda or cuda:N, not '" +
                               o.device + "'");
    } else if (arg == "--input") {
      EMBER_ASSIGN_OR_RETURN(std::string spec, next());
      size_t eq = spec.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
        return invalidArgument("--input needs NAME=FILE.npy, not '" + spec +
                               "'");
      o.inputFiles.emplace_back(spec.substr(0, eq), spec.substr(eq + 1));
    } else if (arg == "--inputs") {
      EMBER_ASSIGN_OR_RETURN(std::string f, next());
      bool isDir = std::filesystem::is_directory(f);
      if (f.find(',') != std::string::npos || isDir) {
        if (!o.batchList.empty())
          return invalidArgument("--inputs: a list of batches is given twice "
                                 "('" + o.batchList + "' and '" + f + "')");
        o.batchList = f;
      } else {
        o.npzFiles.push_back(f);
      }
    } else if (arg == "--pipeline-depth") {
      EMBER_ASSIGN_OR_RETURN(std::string v, next());
      EMBER_ASSIGN_OR_RETURN(o.pipelineDepth, parseCount(arg, v.c_str(), 1));
    } else if (arg == "--output-dir") {
      EMBER_ASSIGN_OR_RETURN(o.outputDir, next());
    } else if (arg == "--report-json") {
      EMBER_ASSIGN_OR_RETURN(o.reportJson, next());
    } else if (arg == "--repeat") {
      EMBER_ASSIGN_OR_RETURN(std::string v, next());
      EMBER_ASSIGN_OR_RETURN(o.repeat, parseCount(arg, v.c_str(), 1));
    } else if (arg == "--warmup") {
      EMBER_ASSIGN_OR_RETURN(std::string v, next());
      EMBER_ASSIGN_OR_RETURN(o.warmup, parseCount(arg, v.c_str(), 0));
    } else if (arg == "--threads") {
      EMBER_ASSIGN_OR_RETURN(std::string v, next());
      EMBER_ASSIGN_OR_RETURN(o.threads, parseCount(arg, v.c_str(), 0));
      if (o.threads > 1024)
        return invalidArgument("--threads " + v + " is too many");
    } else if (arg == "--nproc") {
      EMBER_ASSIGN_OR_RETURN(std::string v, next());
      EMBER_ASSIGN_OR_RETURN(o.nproc, parseCount(arg, v.c_str(), 1));
      if (o.nproc > 1024)
        return invalidArgument("--nproc " + v + " is too many (at most 1024)");
    } else if (arg == "--timeout") {
      EMBER_ASSIGN_OR_RETURN(std::string v, next());
      char *end = nullptr;
      errno = 0;
      double t = std::strtod(v.c_str(), &end);
      if (errno || !end || *end || end == v.c_str() || !(t > 0) || t > 86400)
        return invalidArgument("--timeout needs seconds in (0, 86400], not '" +
                               v + "'");
      o.timeoutSeconds = t;
      o.timeoutGiven = true;
    } else if (arg == "--rendezvous") {
      EMBER_ASSIGN_OR_RETURN(o.rendezvous, next());
    } else if (arg == "--overlap") {
      EMBER_ASSIGN_OR_RETURN(o.overlap, next());
      if (o.overlap != "streams" && o.overlap != "off" && o.overlap != "auto")
        return invalidArgument("--overlap must be streams or off, not '" +
                               o.overlap + "'");
    } else if (arg == "--trace") {
      EMBER_ASSIGN_OR_RETURN(o.tracePath, next());
      if (o.tracePath.empty())
        return invalidArgument("--trace needs a file name");
    } else if (arg == "--stats") {
      if (hasInlineValue)
        return invalidArgument("--stats takes no value");
      o.stats = true;
    } else if (arg == "--split-batch") {
      o.splitBatch = true;
    } else if (arg == "--weight-memory") {
      EMBER_ASSIGN_OR_RETURN(o.weightMemory, next());
      if (o.weightMemory != "mmap" && o.weightMemory != "huge_pages" &&
          o.weightMemory != "auto")
        return invalidArgument(
            "--weight-memory must be mmap, huge_pages or auto, not '" +
            o.weightMemory + "'");
    } else if (arg == "--quantized-sums") {
      EMBER_ASSIGN_OR_RETURN(o.quantizedSums, next());
      if (o.quantizedSums != "fast" && o.quantizedSums != "fbgemm" &&
          o.quantizedSums != "auto")
        return invalidArgument(
            "--quantized-sums must be fast, fbgemm or auto, not '" +
            o.quantizedSums + "'");
    } else if (arg == "--bounds-check") {
      EMBER_ASSIGN_OR_RETURN(std::string v, next());
      auto mode = parseBoundsCheckMode(v);
      if (!mode)
        return invalidArgument(
            "--bounds-check must be fatal, warning or ignore, not '" + v + "'");
      o.boundsCheck = *mode;
    } else if (arg.rfind("-", 0) == 0 && arg != "-") {
      return invalidArgument("unknown option '" + arg + "'");
    } else if (o.planPath.empty()) {
      o.planPath = arg;
    } else {
      return invalidArgument("more than one plan given ('" + o.planPath +
                             "' and '" + arg + "')");
    }
  }
  if (!o.help && !o.listKernels && o.planPath.empty())
    return invalidArgument("no plan given");
  if (!o.batchList.empty() && !o.npzFiles.empty())
    return invalidArgument("--inputs '" + o.batchList +
                           "' is a list of batches: give the other .npz files "
                           "in it, not as --inputs '" + o.npzFiles[0] + "'");
  if (o.cudaGraphs && o.device == "cpu")
    return invalidArgument("--cuda-graphs needs --device cuda");
  return o;
}

} // namespace ember::tools

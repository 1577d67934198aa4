//===- ember-run.cpp - Run an Ember plan on NumPy inputs ------------------===//
//
// ember-run PLAN [--input NAME=FILE.npy ...] [--inputs FILE.npz]
//           [--output-dir DIR] [--repeat N] [--warmup K] [--threads T]
//           [--bounds-check fatal|warning|ignore] [--report-json FILE]
//           [--quantized-sums fast|fbgemm|auto]
//           [--overlap streams|off] [--trace FILE] [--stats]
//           [--inputs A.npz,B.npz,...|DIR] [--pipeline-depth N]
//
// Exit status: 0 success, 1 runtime error, 2 usage error, 128 + signal when
// stopped by SIGINT/SIGTERM/SIGHUP (130/143/129, with a message). Outputs
// and the report are written only when every run succeeded, each whole or
// not at all, also when the process is killed (io/atomic_file.h): all are
// written and fsynced first, then renamed into place together.
//
// Multi-rank: --nproc N starts N local ranks (launcher.h); a rank started by
// an outside launcher (RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT or
// EMBER_RENDEZVOUS in its environment) runs its program, the outputs are
// gathered in rank order and rank 0 alone prints and writes them.
//
//===----------------------------------------------------------------------===//
#include "batch_split.h"
#include "ember/session.h"
#include "io/atomic_file.h"
#include "io/npy.h"
#include "kernel_contract/kernel_contract.h"
#include "kernels/attribute_contract.h"
#include "kernels/kernel_registry.h"
#include "latency.h"
#include "launcher.h"
#include "options.h"
#include "trace_output.h"
#include "progress/progress.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <unistd.h>

using namespace ember;
using namespace ember::tools;

namespace {

constexpr int kExitRuntime = 1;
constexpr int kExitUsage = 2;

/// Arrays read from the input files, by name.
using NamedArrays = std::map<std::string, Tensor>;

/// '{rank}' in an input path becomes the rank (outside launchers).
std::string forRank(std::string path, int rank) {
  for (size_t at; (at = path.find("{rank}")) != std::string::npos;)
    path.replace(at, 6, std::to_string(rank));
  return path;
}

Status readInputs(const RunOptions &o, const std::vector<std::string> &npzFiles,
                  int rank, NamedArrays &arrays) {
  auto add = [&](const std::string &name, Tensor t,
                 const std::string &from) -> Status {
    if (!arrays.emplace(name, std::move(t)).second)
      return invalidArgument("input array '" + name +
                             "' is given twice (again in " + from + ")");
    return Status::ok();
  };
  for (const std::string &npzPattern : npzFiles) {
    std::string npz = forRank(npzPattern, rank);
    EMBER_ASSIGN_OR_RETURN(auto entries, npy::readNpz(npz));
    for (auto &e : entries)
      EMBER_RETURN_IF_ERROR(add(e.first, std::move(e.second), "'" + npz + "'"));
  }
  for (const auto &[name, filePattern] : o.inputFiles) {
    std::string file = forRank(filePattern, rank);
    EMBER_ASSIGN_OR_RETURN(Tensor t, npy::readNpy(file));
    EMBER_RETURN_IF_ERROR(add(name, std::move(t), "'" + file + "'"));
  }
  return Status::ok();
}

/// The .npz files of each batch: --inputs as given (one batch), or the
/// list of --inputs A.npz,B.npz,... / the *.npz of --inputs DIR, by name.
Result<std::vector<std::vector<std::string>>> batchFiles(const RunOptions &o,
                                                         int rank) {
  std::vector<std::vector<std::string>> batches;
  if (o.batchList.empty()) {
    batches.push_back(o.npzFiles);
    return batches;
  }
  const std::string list = forRank(o.batchList, rank);
  std::error_code ec;
  if (std::filesystem::is_directory(list, ec)) {
    std::vector<std::string> files;
    for (const auto &entry : std::filesystem::directory_iterator(list, ec))
      if (entry.path().extension() == ".npz")
        files.push_back(entry.path().string());
    if (ec)
      return invalidArgument("cannot list the directory '" + list +
                             "': " + ec.message());
    std::sort(files.begin(), files.end());
    if (files.empty())
      return invalidArgument("--inputs '" + list +
                             "': the directory has no .npz file");
    for (std::string &f : files)
      batches.push_back({std::move(f)});
    return batches;
  }
  size_t begin = 0;
  for (;;) {
    size_t comma = list.find(',', begin);
    std::string file = list.substr(begin, comma == std::string::npos
                                              ? std::string::npos
                                              : comma - begin);
    if (file.empty())
      return invalidArgument("--inputs '" + list +
                             "': an empty file name in the list of batches");
    batches.push_back({file});
    if (comma == std::string::npos)
      break;
    begin = comma + 1;
  }
  return batches;
}

/// Groups NAME.values / NAME.lengths / NAME.offsets / NAME.weights into the
/// plan's KJT inputs; every other array is a dense input of its name.
Status buildRunInputs(const ModelSignature &sig, NamedArrays &arrays,
                      RunInputs &in) {
  for (const KjtInfo &kjt : sig.kjtInputs) {
    auto take = [&](const char *part) {
      auto it = arrays.find(kjt.name + "." + part);
      if (it == arrays.end())
        return Tensor();
      Tensor t = it->second;
      arrays.erase(it);
      return t;
    };
    Tensor values = take("values"), lengths = take("lengths"),
           offsets = take("offsets"), weights = take("weights");
    std::string where = "KJT input '" + kjt.name + "'";
    if (!values.defined() && !lengths.defined() && !offsets.defined())
      continue; // reported as a missing input by the session
    if (!values.defined())
      return invalidArgument(where + " needs the array '" + kjt.name +
                             ".values'");
    if (lengths.defined() == offsets.defined())
      return invalidArgument(where + " needs exactly one of '" + kjt.name +
                             ".lengths' and '" + kjt.name + ".offsets'");
    auto made =
        lengths.defined()
            ? KeyedJaggedTensor::fromLengths(kjt.keys, values, lengths, weights)
            : KeyedJaggedTensor::fromOffsets(kjt.keys, values, offsets,
                                             weights);
    if (!made)
      return made.status().withContext(where);
    in.set(kjt.name, std::move(*made));
  }
  for (auto &[name, tensor] : arrays)
    in.set(name, tensor);
  return Status::ok();
}

std::string outputFileName(const std::string &name) {
  std::string safe = name;
  for (char &c : safe)
    if (c == '/' || c == '\\' || c == '\0')
      c = '_';
  if (safe.empty() || safe == "." || safe == "..")
    safe = "_" + safe;
  return safe + ".npy";
}

/// Adds `bytes` as `path` to the files published together at the end.
Status stageFile(FileTransaction &files, const std::string &path,
                 const std::string &bytes) {
  AtomicFile f;
  std::string error;
  if (!f.open(path, &error))
    return invalidArgument(error);
  f.write(bytes.data(), bytes.size());
  if (!f.finish(&error))
    return invalidArgument(error);
  files.add(std::move(f));
  return Status::ok();
}

/// Every output as DIR/NAME.npy, staged: nothing appears before commit.
Status stageOutputs(const std::string &dir, const RunOutputs &out,
                    FileTransaction &files) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return invalidArgument("cannot create the output directory '" + dir +
                           "': " + ec.message());
  for (size_t i = 0; i < out.size(); ++i) {
    auto bytes = npy::encodeNpy(out.tensor(i));
    Status s = bytes.isOk()
                   ? stageFile(files, dir + "/" + outputFileName(out.name(i)),
                               *bytes)
                   : bytes.status();
    if (!s.isOk())
      return s.withContext("output '" + out.name(i) + "'");
  }
  return Status::ok();
}

/// Rank 0 under `ember-run --nproc` (EMBER_RUN_COMMIT_FD set by the
/// launcher): its files are complete but unnamed; it says so and publishes
/// them only when the launcher answers that every other rank succeeded. A
/// launcher that fails or is killed never answers (its end closes), and the
/// files vanish with this process.
Status awaitLauncher() {
  const char *fdText = std::getenv("EMBER_RUN_COMMIT_FD");
  if (!fdText || !*fdText)
    return Status::ok();
  int fd = std::atoi(fdText);
  char c = 'R';
  ssize_t n;
  while ((n = ::write(fd, &c, 1)) < 0 && errno == EINTR) {
  }
  c = 0;
  while (n == 1 && (n = ::read(fd, &c, 1)) < 0 && errno == EINTR) {
  }
  if (n != 1 || c != 'C')
    return failedPrecondition("the launcher stopped the run before the outputs were "
                   "published (another rank failed)");
  return Status::ok();
}

int64_t batchSizeOf(const RunOutputs &out) {
  for (size_t i = 0; i < out.size(); ++i)
    if (out.tensor(i).rank() > 0)
      return out.tensor(i).dim(0);
  return 1;
}

std::string reportJson(const RunOptions &o, const LatencyStats &s,
                       int64_t batch, const RunOutputs &out,
                       const SessionStats &stats) {
  char buf[512];
  std::string json = "{\n  \"plan\": " + jsonString(o.planPath) + ",\n" +
                     "  \"device\": " + jsonString(o.device) + ",\n";
  std::snprintf(
      buf, sizeof(buf),
      "  \"repeat\": %d,\n  \"warmup\": %d,\n  \"threads\": %d,\n"
      "  \"bounds_check\": \"%s\",\n  \"batch_size\": %lld,\n"
      "  \"latency_ms\": {\"min\": %.6f, \"median\": %.6f, \"p90\": %.6f, "
      "\"p99\": %.6f, \"mean\": %.6f, \"max\": %.6f},\n"
      "  \"throughput_samples_per_s\": %.3f,\n  \"cpu_ms_per_run\": %.3f,\n"
      "  \"invalid_ids\": %lld,\n  \"arena_bytes\": %lld,\n",
      o.repeat, o.warmup, o.threads,
      std::string(boundsCheckModeName(o.boundsCheck)).c_str(),
      static_cast<long long>(batch), s.minMs, s.medianMs, s.p90Ms, s.p99Ms,
      s.meanMs, s.maxMs, s.samplesPerSecond, s.cpuMsPerRun,
      static_cast<long long>(out.invalidIds()),
      static_cast<long long>(stats.arenaBytes));
  json += buf;
  json += "  \"outputs\": {";
  for (size_t i = 0; i < out.size(); ++i)
    json += std::string(i ? ", " : "") + jsonString(out.name(i)) + ": " +
            jsonString(out.tensor(i).describe());
  json += "}\n}\n";
  return json;
}

std::string gRankPrefix; // "rank 2: " in a multi-rank run

int fail(const Status &s) {
  progress::clearBar();
  std::fprintf(stderr, "ember-run: %serror: %s\n", gRankPrefix.c_str(),
               s.toString().c_str());
  return kExitRuntime;
}

/// Test-only: EMBER_RUN_TEST_FAULT=R:exit[@K] makes rank R exit (status 3)
/// and R:hang[@K] makes it hang, just before its run number K (default 0,
/// warmup runs counted), while its peers go on into that run's collectives.
void injectTestFault(int rank, int runIndex) {
  const char *fault = std::getenv("EMBER_RUN_TEST_FAULT");
  if (!fault)
    return;
  std::string f = fault;
  size_t colon = f.find(':');
  if (colon == std::string::npos || std::atoi(f.c_str()) != rank)
    return;
  std::string what = f.substr(colon + 1);
  int at = 0;
  size_t atSign = what.find('@');
  if (atSign != std::string::npos) {
    at = std::atoi(what.c_str() + atSign + 1);
    what.resize(atSign);
  }
  if (runIndex != at)
    return;
  std::fflush(stdout);
  if (what == "exit")
    ::_exit(3);
  if (what == "hang")
    for (;;)
      ::pause();
}

int report(const RunOptions &o, const Session &session,
           const std::vector<const RunOutputs *> &outs,
           const std::vector<double> &latencies, double cpuMsPerRun,
           const std::string &trace);

/// What otherData of the trace says about the run.
std::vector<std::pair<std::string, std::string>>
traceProvenance(const RunOptions &o, const SessionTrace &trace) {
  return {{"plan", jsonString(o.planPath)},
          {"overlap", jsonString(trace.overlap)},
          {"runs", std::to_string(trace.runs.size())},
          {"threads", std::to_string(o.threads)},
          {"device", jsonString(o.device)}};
}

int run(const RunOptions &o) {
  SessionOptions sessionOptions;
  sessionOptions.threads = o.threads;
  sessionOptions.boundsCheck = o.boundsCheck;
  sessionOptions.weightMemory = o.weightMemory;
  sessionOptions.quantizedSums = o.quantizedSums;
  sessionOptions.overlap = o.overlap;
  sessionOptions.recordTrace = !o.tracePath.empty() || o.stats;
  Status s = applyLaunchEnvironment(sessionOptions);
  if (!s.isOk())
    return fail(s);
  if (!o.rendezvous.empty())
    sessionOptions.rendezvous = o.rendezvous;
  if (o.timeoutGiven)
    sessionOptions.collectiveTimeoutSeconds = o.timeoutSeconds;
  const int rank = sessionOptions.rank, world = sessionOptions.worldSize;
  const bool multi = world > 1;
  // A trace that could not be written fails now, not after the runs.
  if (!o.tracePath.empty() && !(s = checkTraceDestination(o.tracePath)).isOk())
    return fail(s);
  if (multi) {
    gRankPrefix = "rank " + std::to_string(rank) + ": ";
    setTerminationPrefix("ember-run: rank " + std::to_string(rank));
    progress::setProgramName("ember-run: rank " + std::to_string(rank));
    // The ranks share the launcher's terminal: rank 0 alone draws bars
    // (lines, when not a terminal, come from every rank).
    if (rank != 0 && ::isatty(2))
      progress::setQuiet(true);
  }
  sessionOptions.device = o.device;
  sessionOptions.cudaGraphs = o.cudaGraphs;
  if (o.device == "cuda" && multi)
    sessionOptions.device = "cuda:" + std::to_string(sessionOptions.localRank);
  Result<std::unique_ptr<Session>> session = [&] {
    progress::Phase loading("loading " + o.planPath, 1, progress::Unit::Items);
    auto loaded = Session::load(o.planPath, sessionOptions);
    if (loaded)
      loading.advance(1);
    return loaded;
  }();
  if (!session)
    return fail(session.status());
  if (o.verbose) {
    std::vector<std::string> onHost = (*session)->hostInstructions();
    std::fprintf(stderr, "ember-run: %sruns on %s\n", gRankPrefix.c_str(),
                 (*session)->deviceDescription().c_str());
    if (!onHost.empty())
      std::fprintf(stderr,
                   "ember-run: %s%zu instruction%s without a kernel on that "
                   "device run on the CPU (with copies):\n",
                   gRankPrefix.c_str(), onHost.size(),
                   onHost.size() == 1 ? "" : "s");
    for (const std::string &where : onHost)
      std::fprintf(stderr, "  %s\n", where.c_str());
  }
  auto files = batchFiles(o, rank);
  if (!files)
    return fail(files.status());
  const size_t numBatches = files->size();
  std::vector<RunInputs> batches(numBatches);
  for (size_t b = 0; b < numBatches; ++b) {
    NamedArrays arrays;
    s = readInputs(o, (*files)[b], rank, arrays);
    if (s.isOk() && o.splitBatch)
      s = splitGlobalBatch((*session)->signature(), arrays, rank, world);
    if (s.isOk())
      s = buildRunInputs((*session)->signature(), arrays, batches[b]);
    if (!s.isOk())
      return fail(numBatches > 1
                      ? s.withContext("batch " + std::to_string(b) + " ('" +
                                      (*files)[b][0] + "')")
                      : s);
  }

  // The outputs of the last repetition, per batch.
  std::vector<RunOutputs> outs(numBatches);
  for (int i = 0; i < o.warmup; ++i) {
    injectTestFault(rank, i);
    if (!(s = (*session)->run(batches[i % numBatches], &outs[i % numBatches]))
             .isOk())
      return fail(s);
  }
  (*session)->takeTrace(); // the warmup runs are not traced
  std::vector<double> latencies;
  const size_t total = numBatches * static_cast<size_t>(o.repeat);
  latencies.reserve(total);
  const double cpuStart = processCpuMs();
  if (o.pipelineDepth > 1) {
    // One pipelined call over the list, --repeat times: the time per batch
    // is the call's over the number of batches.
    std::vector<RunInputs> all;
    all.reserve(total);
    for (int r = 0; r < o.repeat; ++r)
      all.insert(all.end(), batches.begin(), batches.end());
    injectTestFault(rank, o.warmup);
    std::vector<RunOutputs> results;
    auto start = std::chrono::steady_clock::now();
    s = (*session)->runPipelined(all, o.pipelineDepth, &results);
    auto end = std::chrono::steady_clock::now();
    if (!s.isOk())
      return fail(s);
    const double ms =
        std::chrono::duration<double, std::milli>(end - start).count();
    latencies.assign(total, ms / static_cast<double>(total));
    for (size_t b = 0; b < numBatches; ++b)
      outs[b] = std::move(results[total - numBatches + b]);
  } else {
    for (size_t i = 0; i < total; ++i) {
      injectTestFault(rank, o.warmup + static_cast<int>(i));
      auto start = std::chrono::steady_clock::now();
      s = (*session)->run(batches[i % numBatches], &outs[i % numBatches]);
      auto end = std::chrono::steady_clock::now();
      if (!s.isOk())
        return fail(numBatches > 1
                        ? s.withContext("batch " +
                                        std::to_string(i % numBatches))
                        : s);
      latencies.push_back(
          std::chrono::duration<double, std::milli>(end - start).count());
    }
  }
  const double cpuMsPerRun =
      (processCpuMs() - cpuStart) / static_cast<double>(total);
  SessionTrace trace;
  if (sessionOptions.recordTrace)
    trace = (*session)->takeTrace();
  if (o.stats)
    std::printf("%s\n", formatTraceSplit(trace).c_str());
  std::string tracePart;
  if (!o.tracePath.empty())
    tracePart = encodeTracePart(trace, total > 1);
  // Each rank's part is complete before the final barrier.
  if (multi && !o.tracePath.empty() &&
      !(s = writeTracePart(o.tracePath, rank, tracePart)).isOk())
    return fail(s);
  std::vector<RunOutputs> gathered(multi ? numBatches : 0);
  std::vector<const RunOutputs *> results;
  for (const RunOutputs &out : outs)
    results.push_back(&out);
  if (multi) {
    // Every rank takes part in the gathers (batch by batch, the same order
    // everywhere); the final barrier makes sure that rank 0 writes only
    // when no rank failed up to here.
    for (size_t b = 0; b < numBatches && s.isOk(); ++b) {
      s = (*session)->gatherOutputs(outs[b], &gathered[b]);
      results[b] = &gathered[b];
    }
    if (!s.isOk() || !(s = (*session)->barrier()).isOk()) {
      if (!o.tracePath.empty())
        removeTracePart(o.tracePath, rank);
      return fail(s);
    }
    if (rank != 0)
      return 0;
  }
  std::string traceJson;
  if (!o.tracePath.empty()) {
    Result<std::string> merged =
        multi ? mergeRankParts(o.tracePath, world, traceProvenance(o, trace))
              : mergeTraceParts({tracePart}, traceProvenance(o, trace));
    if (!merged)
      return fail(merged.status());
    traceJson = std::move(*merged);
  }
  return report(o, **session, results, latencies, cpuMsPerRun, traceJson);
}

int report(const RunOptions &o, const Session &session,
           const std::vector<const RunOutputs *> &outs,
           const std::vector<double> &latencies, double cpuMsPerRun,
           const std::string &trace) {
  Status s;
  const RunOutputs &out = *outs[0];
  const bool several = outs.size() > 1;
  int64_t batch = batchSizeOf(out);
  LatencyStats stats = computeLatencyStats(latencies, batch);
  stats.cpuMsPerRun = cpuMsPerRun;

  for (size_t b = 0; b < outs.size(); ++b) {
    const std::string prefix = several ? "batch " + std::to_string(b) + " " : "";
    for (size_t i = 0; i < outs[b]->size(); ++i)
      std::printf("%soutput %s: %s\n", prefix.c_str(),
                  outs[b]->name(i).c_str(),
                  outs[b]->tensor(i).describe().c_str());
    if (outs[b]->invalidIds() > 0)
      std::printf("%sinvalid ids (zeroed, --bounds-check warning): %lld\n",
                  prefix.c_str(),
                  static_cast<long long>(outs[b]->invalidIds()));
  }
  if (o.pipelineDepth > 1)
    std::printf("pipeline depth %d: %zu batch(es) in %.3f ms\n",
                o.pipelineDepth, latencies.size(),
                stats.meanMs * static_cast<double>(latencies.size()));
  std::printf(
      "latency over %zu run(s), batch %lld: min %.3f ms, median %.3f ms, "
      "p90 %.3f ms, p99 %.3f ms; throughput %.1f samples/s\n",
      latencies.size(), static_cast<long long>(batch), stats.minMs,
      stats.medianMs, stats.p90Ms, stats.p99Ms, stats.samplesPerSecond);

  // Outputs and report are written in full first, then published together.
  FileTransaction files;
  for (size_t b = 0; b < outs.size() && !o.outputDir.empty(); ++b)
    if (!(s = stageOutputs(several ? o.outputDir + "/batch" + std::to_string(b)
                                   : o.outputDir,
                           *outs[b], files))
             .isOk())
      return fail(several ? s.withContext("batch " + std::to_string(b)) : s);
  if (!o.reportJson.empty() &&
      !(s = stageFile(files, o.reportJson,
                      reportJson(o, stats, batch, out, session.stats())))
           .isOk())
    return fail(s);
  if (!o.tracePath.empty() &&
      !(s = stageFile(files, o.tracePath, trace)).isOk())
    return fail(s);
  if (files.size() == 0)
    return 0;
  if (!(s = awaitLauncher()).isOk())
    return fail(s);
  std::string error;
  if (!files.commit(&error))
    return fail(invalidArgument(error));
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  // SIGINT/SIGTERM/SIGHUP: no temporary left, a message, exit 128 + signal.
  installTerminationHandler("ember-run");
  setTerminationHook(progress::clearBarForSignal); // the message on a clean line
  progress::setProgramName("ember-run");
  try {
    auto options = parseRunOptions(argc, argv);
    if (!options) {
      std::fprintf(stderr, "ember-run: %s\n\n%s",
                   options.status().message().c_str(), usageText());
      return kExitUsage;
    }
    if (options->quiet)
      progress::setQuiet(true);
    if (options->help) {
      std::printf("%s", usageText());
      return 0;
    }
    if (options->listKernels) {
      // The kernel contract, with each kernel's summary from the CPU
      // registry (which kernel_contract_test keeps equal to the contract).
      for (const contract::KernelContract &c : contract::kKernelContracts) {
        const KernelDef *def = cpuKernels().find(c.name);
        const std::string name(c.name);
        const char *summary = def ? def->summary.c_str() : "";
        if (haveCudaBackend())
          std::printf("%-24s %-5s %s\n", name.c_str(), c.onCuda() ? "cuda" : "",
                      summary);
        else
          std::printf("%-24s %s\n", name.c_str(), summary);
        // Its attributes (kernels.def): "name: kind [= default]".
        for (const contract::KernelAttr &a : contract::attributesOf(c.id))
          std::printf("    %s\n", describeAttribute(a).c_str());
      }
      return 0;
    }
    if (options->nproc > 0) {
      Status s;
      if (!options->tracePath.empty() &&
          !(s = checkTraceDestination(options->tracePath)).isOk())
        return fail(s);
      return launchLocalRanks(argc, argv, *options);
    }
    return run(*options);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "ember-run: internal error: %s\n", e.what());
    return kExitRuntime;
  }
}

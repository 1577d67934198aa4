//===- embedding_driver.cpp - Embedding lookups on inputs from files ------===//
//
// Runs Ember's embedding_bag or grouped_embedding_bag on raw little-endian
// files written by bench/embedding_vs_pytorch.py and
// bench/embedding_vs_peers.py, so Ember and its peers see identical inputs.
//
// One table (embedding_bag, the default kernel):
//
//   ember_embedding_driver --table T.bin --rows R --dim D
//       [--format float32|float16|bfloat16|int8_rowwise]
//       --indices I.bin --offsets O.bin --pooling sum --threads 2
//       --iters 20 [--out out.bin] [--hugepages 1] [--flush-mib 64]
//       [--serve 1]
//
// indices and offsets are int64 (offsets has B + 1 entries). An int8_rowwise
// table is uint8 [R, D + 8]: D codes, then float32 scale and bias per row
// (FBGEMM's and torch's byte row-wise layout). --dtype is accepted as an old
// name of --format.
//
// Many tables (one grouped_embedding_bag over a KJT, sum pooling):
//
//   ember_embedding_driver --kernel grouped_embedding_bag
//       --tables t0.bin,t1.bin,... --table-rows r0,r1,... --dim D
//       --feature-tables 0,1,... --values V.bin --lengths L.bin ...
//
// values and lengths are int64; lengths is key-major [F * B]; feature f
// looks up table feature-tables[f] and fills output columns
// [f * D, (f + 1) * D) of the [B, F * D] float32 output.
//
// Without --serve: one warm-up, --iters timed runs, prints the best and
// median time and writes the pooled output of the last run to --out.
// With --serve 1 the driver loads once, warms up, prints "ready" and then
// reads commands from stdin, one a line, so a script can interleave it with
// other libraries without reloading the tables:
//   run K     K timed runs; prints "times s1 ... sK" (seconds)
//   out PATH  writes the last output to PATH (atomically)
//   ceiling K K timed runs of the loads-only loop over the same table and
//             ids (bench/row_read_ceiling.h: the loads alone) at
//             the prefetch distance that was fastest when first asked;
//             prints "times s1 ... sK distance D" (embedding_bag, 1 thread)
//   pages     prints "pages HUGE TOTAL": bytes of the tables that
//             transparent huge pages back (from /proc/self/smaps, see
//             bench_table_memory.h) and the tables' bytes, so a script can
//             check every side's tables have the same page policy
//   quit      exits 0
// An unknown command is an error (exit 1).
//
// --hugepages 1 puts the tables in transparent huge pages (see
// bench_table_memory.h); by default they are in ordinary 4 KiB pages.
// --flush-mib N reads an N MiB buffer before every timed run (not timed),
// so rows of the previous run are not in the caches.
// Exits non-zero with a message on any error.
//
//===----------------------------------------------------------------------===//
#include "bench_kernel_context.h"
#include "bench_table_memory.h"
#include "embedding_bag_inputs.h"
#include "row_read_ceiling.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

using namespace ember;

namespace {

Result<Tensor> readFile(const std::string &path, DType dtype,
                        const Shape &shape, bool hugePages = false) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in)
    return notFound("cannot open " + path);
  EMBER_ASSIGN_OR_RETURN(Tensor t,
                         bench::allocateTable(dtype, shape, hugePages));
  std::streamsize size = in.tellg();
  if (size != static_cast<std::streamsize>(t.nbytes()))
    return dataLoss(path + " has " + std::to_string(size) +
                    " bytes, expected " + std::to_string(t.nbytes()) + " for " +
                    t.describe());
  in.seekg(0);
  if (!in.read(static_cast<char *>(t.data()), size))
    return dataLoss("cannot read " + path);
  return t;
}

int64_t fileElements(const std::string &path, size_t elemBytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  return in ? static_cast<int64_t>(in.tellg()) / static_cast<int64_t>(elemBytes)
            : -1;
}

int fail(const std::string &message) {
  std::fprintf(stderr, "ember_embedding_driver: %s\n", message.c_str());
  return 1;
}

std::vector<std::string> splitCommas(const std::string &s) {
  std::vector<std::string> parts;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, ','))
    parts.push_back(part);
  return parts;
}

/// Parses a whole decimal integer; nullopt on anything else.
std::optional<int64_t> parseInt(const std::string &s) {
  if (s.empty())
    return std::nullopt;
  char *end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (*end != '\0')
    return std::nullopt;
  return static_cast<int64_t>(v);
}

Result<std::vector<int64_t>> parseInts(const std::string &flag,
                                       const std::string &s) {
  std::vector<int64_t> values;
  for (const std::string &part : splitCommas(s)) {
    auto v = parseInt(part);
    if (!v)
      return invalidArgument("--" + flag + ": '" + part +
                             "' is not an integer");
    values.push_back(*v);
  }
  return values;
}

Status writeOutput(const Tensor &out, const std::string &path) {
  std::string tmp = path + ".partial";
  std::ofstream f(tmp, std::ios::binary);
  if (!f.write(static_cast<const char *>(out.data()), out.nbytes()) ||
      !f.flush()) {
    std::remove(tmp.c_str());
    return dataLoss("cannot write " + tmp);
  }
  f.close();
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return dataLoss("cannot rename " + tmp + " to " + path);
  }
  return Status::ok();
}

using Args = std::map<std::string, std::string>;

/// Sets up one embedding_bag: table, indices, offsets and attributes.
Status setUpEmbeddingBag(Args &args, bool hugePages,
                         bench::BenchKernelContext &ctx) {
  for (const char *required : {"table", "rows", "dim", "indices", "offsets"})
    if (!args.count(required))
      return invalidArgument(std::string("missing --") + required);
  auto rows = parseInt(args["rows"]), dim = parseInt(args["dim"]);
  if (!rows || !dim || *rows <= 0 || *dim <= 0)
    return invalidArgument("--rows and --dim must be positive integers");
  const std::string format = args.count("format")  ? args["format"]
                             : args.count("dtype") ? args["dtype"]
                                                   : "float32";
  EMBER_ASSIGN_OR_RETURN(auto layout,
                         bench::embeddingTableLayout(format, *rows, *dim));
  EMBER_ASSIGN_OR_RETURN(Tensor table, readFile(args["table"], layout.first,
                                                layout.second, hugePages));
  int64_t n = fileElements(args["indices"], 8),
          b1 = fileElements(args["offsets"], 8);
  if (n < 0 || b1 < 1)
    return invalidArgument("cannot read --indices/--offsets (int64 files, "
                           "offsets with B + 1 entries)");
  EMBER_ASSIGN_OR_RETURN(Tensor indices,
                         readFile(args["indices"], DType::kInt64, {n}));
  EMBER_ASSIGN_OR_RETURN(Tensor offsets,
                         readFile(args["offsets"], DType::kInt64, {b1}));
  bench::setEmbeddingBagInputs(ctx, table, format, *dim, indices, offsets,
                               args.count("pooling") ? args["pooling"]
                                                     : std::string("sum"));
  return Status::ok();
}

/// Sets up one grouped_embedding_bag over several tables (sum pooling).
Status setUpGrouped(Args &args, bool hugePages,
                    bench::BenchKernelContext &ctx) {
  for (const char *required :
       {"tables", "table-rows", "dim", "feature-tables", "values", "lengths"})
    if (!args.count(required))
      return invalidArgument(std::string("missing --") + required);
  std::vector<std::string> paths = splitCommas(args["tables"]);
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> rows,
                         parseInts("table-rows", args["table-rows"]));
  EMBER_ASSIGN_OR_RETURN(std::vector<int64_t> featureTables,
                         parseInts("feature-tables", args["feature-tables"]));
  auto dim = parseInt(args["dim"]);
  if (!dim || *dim <= 0)
    return invalidArgument("--dim must be a positive integer");
  if (paths.empty() || rows.size() != paths.size())
    return invalidArgument("--tables and --table-rows must name as many "
                           "tables (" +
                           std::to_string(paths.size()) + " vs " +
                           std::to_string(rows.size()) + ")");
  const int64_t T = static_cast<int64_t>(paths.size());
  const int64_t F = static_cast<int64_t>(featureTables.size());
  for (int64_t t : featureTables)
    if (t < 0 || t >= T)
      return invalidArgument("--feature-tables: table " + std::to_string(t) +
                             " out of range [0, " + std::to_string(T) + ")");
  int64_t n = fileElements(args["values"], 8),
          fb = fileElements(args["lengths"], 8);
  if (n < 0 || fb < 0)
    return invalidArgument("cannot read --values/--lengths (int64 files)");
  std::vector<Tensor> inputs;
  EMBER_ASSIGN_OR_RETURN(Tensor values,
                         readFile(args["values"], DType::kInt64, {n}));
  EMBER_ASSIGN_OR_RETURN(Tensor lengths,
                         readFile(args["lengths"], DType::kInt64, {fb}));
  inputs.push_back(values);
  inputs.push_back(lengths);
  inputs.push_back(Tensor()); // no per-sample weights
  for (int64_t t = 0; t < T; ++t) {
    if (rows[t] <= 0)
      return invalidArgument("--table-rows: table " + std::to_string(t) +
                             " has " + std::to_string(rows[t]) + " rows");
    EMBER_ASSIGN_OR_RETURN(
        Tensor table,
        readFile(paths[t], DType::kFloat32, {rows[t], *dim}, hugePages));
    inputs.push_back(table);
  }
  std::vector<int64_t> outputOffsets(F);
  for (int64_t f = 0; f < F; ++f)
    outputOffsets[f] = f * *dim;
  ctx.setInputs(std::move(inputs));
  ctx.attrs().set("feature_tables", featureTables);
  ctx.attrs().set("pooling", std::vector<std::string>(F, "sum"));
  ctx.attrs().set("table_formats", std::vector<std::string>(T, "float32"));
  ctx.attrs().set("table_dims", std::vector<int64_t>(T, *dim));
  ctx.attrs().set("output_offsets", outputOffsets);
  ctx.attrs().set("output_width", F * *dim);
  return Status::ok();
}

/// Times `iters` runs, each after reading the flush buffer (not timed).
Result<std::vector<double>> timeRuns(bench::BenchKernelContext &ctx,
                                     const std::string &kernel, int iters,
                                     const std::vector<uint64_t> &flush) {
  std::vector<double> times;
  for (int i = 0; i < iters; ++i) {
    bench::readFlush(flush);
    auto start = std::chrono::steady_clock::now();
    Status s = ctx.run(kernel);
    auto end = std::chrono::steady_clock::now();
    if (!s.isOk())
      return s;
    times.push_back(std::chrono::duration<double>(end - start).count());
  }
  return times;
}

/// The tables' bytes in huge pages and in all: embedding_bag's input 0,
/// grouped_embedding_bag's inputs 3 and on. Huge is -1 when smaps cannot
/// tell.
std::pair<int64_t, int64_t> tablePages(const bench::BenchKernelContext &ctx,
                                       const std::string &kernel) {
  int64_t huge = 0, total = 0;
  const int first = kernel == "embedding_bag" ? 0 : 3;
  const int last = kernel == "embedding_bag" ? 1 : ctx.numInputs();
  for (int i = first; i < last; ++i) {
    const Tensor &t = ctx.input(i);
    const int64_t h = bench::hugePageBytesIn(t.data(), t.nbytes());
    huge = h < 0 || huge < 0 ? -1 : huge + h;
    total += static_cast<int64_t>(t.nbytes());
  }
  return {huge, total};
}

/// The loads-only loop over embedding_bag's table and ids (inputs 0 and 1).
bench::RowReads rowReadsOf(const bench::BenchKernelContext &ctx) {
  const Tensor &table = ctx.input(0), &ids = ctx.input(1);
  bench::RowReads r;
  r.table = static_cast<const uint8_t *>(table.data());
  r.rows = table.shape()[0];
  r.rowBytes = r.rows > 0 ? static_cast<int64_t>(table.nbytes()) / r.rows : 0;
  r.ids = static_cast<const int64_t *>(ids.data());
  r.numIds = ids.shape().numel();
  return r;
}

/// The --serve loop: commands from stdin until quit or end of input.
int serve(bench::BenchKernelContext &ctx, const std::string &kernel,
          const std::vector<uint64_t> &flush, int threads) {
  int64_t ceilingDistance = -1; // chosen at the first `ceiling`
  std::printf("ready\n");
  std::fflush(stdout);
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string command, argument;
    in >> command >> argument;
    if (command == "quit")
      return 0;
    if (command == "run") {
      auto k = parseInt(argument);
      if (!k || *k <= 0)
        return fail("run: expected a positive count, got '" + argument + "'");
      auto times = timeRuns(ctx, kernel, static_cast<int>(*k), flush);
      if (!times.isOk())
        return fail(times.status().toString());
      std::printf("times");
      for (double t : *times)
        std::printf(" %.9f", t);
      std::printf("\n");
    } else if (command == "ceiling") {
      auto k = parseInt(argument);
      if (!k || *k <= 0)
        return fail("ceiling: expected a positive count, got '" + argument +
                    "'");
      if (kernel != "embedding_bag")
        return fail("ceiling: only for --kernel embedding_bag");
      if (threads != 1)
        return fail("ceiling: only with --threads 1");
      const bench::RowReads reads = rowReadsOf(ctx);
      if (reads.rowBytes < 4)
        return fail("ceiling: rows of " + std::to_string(reads.rowBytes) +
                    " bytes (the loads-only loop reads 4 at a time)");
      if (ceilingDistance < 0)
        ceilingDistance = bench::fastestCeilingDistance(reads, flush);
      std::printf("times");
      for (int64_t i = 0; i < *k; ++i) {
        bench::readFlush(flush);
        std::printf(" %.9f", bench::timeRowReads(reads, ceilingDistance));
      }
      std::printf(" distance %lld\n", static_cast<long long>(ceilingDistance));
    } else if (command == "out") {
      if (argument.empty())
        return fail("out: expected a path");
      Status s = writeOutput(ctx.output(0), argument);
      if (!s.isOk())
        return fail(s.toString());
      std::printf("written %s\n", argument.c_str());
    } else if (command == "pages") {
      auto [huge, total] = tablePages(ctx, kernel);
      std::printf("pages %lld %lld\n", static_cast<long long>(huge),
                  static_cast<long long>(total));
    } else {
      return fail("unknown command '" + line +
                  "' (expected run K, ceiling K, out PATH, pages or quit)");
    }
    std::fflush(stdout);
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  Args args;
  for (int i = 1; i < argc; i += 2) {
    if (i + 1 >= argc || std::string(argv[i]).rfind("--", 0) != 0)
      return fail(std::string("expected --flag value pairs, got '") + argv[i] +
                  "'");
    args[argv[i] + 2] = argv[i + 1];
  }
  const std::string kernel =
      args.count("kernel") ? args["kernel"] : "embedding_bag";
  if (kernel != "embedding_bag" && kernel != "grouped_embedding_bag")
    return fail("--kernel must be embedding_bag or grouped_embedding_bag, "
                "got '" +
                kernel + "'");
  auto threads = parseInt(args.count("threads") ? args["threads"] : "1");
  auto iters = parseInt(args.count("iters") ? args["iters"] : "10");
  auto flushMib = parseInt(args.count("flush-mib") ? args["flush-mib"] : "0");
  if (!threads || !iters || *threads <= 0 || *iters <= 0)
    return fail("--threads and --iters must be positive integers");
  if (!flushMib || *flushMib < 0)
    return fail("--flush-mib must be an integer >= 0");
  const bool hugePages = args.count("hugepages") && args["hugepages"] == "1";
  const bool serveMode = args.count("serve") && args["serve"] == "1";

  bench::BenchKernelContext ctx(static_cast<int>(*threads));
  ctx.setNumOutputs(1);
  Status s = kernel == "embedding_bag" ? setUpEmbeddingBag(args, hugePages, ctx)
                                       : setUpGrouped(args, hugePages, ctx);
  if (!s.isOk())
    return fail(s.toString());
  s = ctx.run(kernel); // warm-up
  if (!s.isOk())
    return fail(s.toString());
  std::vector<uint64_t> flush(static_cast<size_t>(*flushMib) << 17, 1);
  if (serveMode)
    return serve(ctx, kernel, flush, static_cast<int>(*threads));

  auto times = timeRuns(ctx, kernel, static_cast<int>(*iters), flush);
  if (!times.isOk())
    return fail(times.status().toString());
  std::sort(times->begin(), times->end());
  std::printf("ember %s threads=%d best_s=%.6f median_s=%.6f\n", kernel.c_str(),
              static_cast<int>(*threads), times->front(),
              (*times)[times->size() / 2]);
  if (args.count("out")) {
    s = writeOutput(ctx.output(0), args["out"]);
    if (!s.isOk())
      return fail(s.toString());
  }
  return 0;
}

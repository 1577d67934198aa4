//===- embedding_driver.cpp - embedding_bag on inputs from files ----------===//
//
// Runs Ember's embedding_bag on raw little-endian files written by
// bench/embedding_vs_pytorch.py, so Ember and PyTorch see identical inputs:
//
//   ember_embedding_driver --table T.bin --rows R --dim D --dtype float32
//       --indices I.bin --offsets O.bin --pooling sum --threads 2
//       --iters 20 [--out out.bin] [--hugepages 1] [--flush-mib 64]
//
// indices and offsets are int64 (offsets has B + 1 entries). Prints the best
// and median time of --iters runs (after one warm-up) and writes the pooled
// output of the last run to --out. Exits non-zero with a message on any
// error. --hugepages 1 puts the table in transparent huge pages (see
// bench_table_memory.h); by default it is in ordinary 4 KiB pages, as
// PyTorch's tables are. --flush-mib N reads an N MiB buffer before every
// timed run (not timed), so rows of the previous run are not in the caches
// (the script passes 64, twice this machine's L3).
//
//===----------------------------------------------------------------------===//
#include "bench_kernel_context.h"
#include "bench_table_memory.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
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

} // namespace

int main(int argc, char **argv) {
  std::map<std::string, std::string> args;
  for (int i = 1; i < argc; i += 2) {
    if (i + 1 >= argc || std::string(argv[i]).rfind("--", 0) != 0)
      return fail(std::string("expected --flag value pairs, got '") + argv[i] +
                  "'");
    args[argv[i] + 2] = argv[i + 1];
  }
  for (const char *required : {"table", "rows", "dim", "indices", "offsets"})
    if (!args.count(required))
      return fail(std::string("missing --") + required);
  const int64_t rows = std::atoll(args["rows"].c_str());
  const int64_t dim = std::atoll(args["dim"].c_str());
  const std::string dtypeName = args.count("dtype") ? args["dtype"] : "float32";
  auto dtype = parseDType(dtypeName);
  if (!dtype || (*dtype != DType::kFloat32 && *dtype != DType::kFloat16 &&
                 *dtype != DType::kBFloat16))
    return fail("--dtype must be float32, float16 or bfloat16");
  if (rows <= 0 || dim <= 0)
    return fail("--rows and --dim must be positive");
  const int threads =
      args.count("threads") ? std::atoi(args["threads"].c_str()) : 1;
  const int iters = args.count("iters") ? std::atoi(args["iters"].c_str()) : 10;
  if (threads <= 0 || iters <= 0)
    return fail("--threads and --iters must be positive");

  const bool hugePages = args.count("hugepages") && args["hugepages"] == "1";
  auto table = readFile(args["table"], *dtype, {rows, dim}, hugePages);
  if (!table.isOk())
    return fail(table.status().toString());
  int64_t n = fileElements(args["indices"], 8),
          b1 = fileElements(args["offsets"], 8);
  if (n < 0 || b1 < 1)
    return fail("cannot read --indices/--offsets (int64 files, offsets with B "
                "+ 1 entries)");
  auto indices = readFile(args["indices"], DType::kInt64, {n});
  auto offsets = readFile(args["offsets"], DType::kInt64, {b1});
  if (!indices.isOk() || !offsets.isOk())
    return fail("cannot read --indices/--offsets");

  bench::BenchKernelContext ctx(threads);
  ctx.setInputs({*table, *indices, *offsets});
  ctx.setNumOutputs(1);
  ctx.attrs().set("pooling",
                  args.count("pooling") ? args["pooling"] : std::string("sum"));
  Status s = ctx.run("embedding_bag"); // warm-up
  if (!s.isOk())
    return fail(s.toString());
  const int64_t flushMib =
      args.count("flush-mib") ? std::atoll(args["flush-mib"].c_str()) : 0;
  if (flushMib < 0)
    return fail("--flush-mib must be >= 0");
  std::vector<uint64_t> flush(static_cast<size_t>(flushMib) << 17, 1);
  volatile uint64_t sink = 0;
  std::vector<double> times;
  for (int i = 0; i < iters; ++i) {
    uint64_t sum = 0;
    for (uint64_t v : flush)
      sum += v;
    sink = sink + sum;
    auto start = std::chrono::steady_clock::now();
    s = ctx.run("embedding_bag");
    auto end = std::chrono::steady_clock::now();
    if (!s.isOk())
      return fail(s.toString());
    times.push_back(std::chrono::duration<double>(end - start).count());
  }
  std::sort(times.begin(), times.end());
  std::printf("ember embedding_bag threads=%d best_s=%.6f median_s=%.6f\n",
              threads, times.front(), times[times.size() / 2]);
  if (args.count("out")) {
    const Tensor &out = ctx.output(0);
    std::string tmp = args["out"] + ".partial";
    std::ofstream f(tmp, std::ios::binary);
    if (!f.write(static_cast<const char *>(out.data()), out.nbytes()) ||
        !f.flush())
      return fail("cannot write " + tmp);
    f.close();
    if (std::rename(tmp.c_str(), args["out"].c_str()) != 0)
      return fail("cannot rename " + tmp + " to " + args["out"]);
  }
  return 0;
}

//===- tbe_bench.cu - Times the CUDA TBE forward --------------------------===//
//
// Times launchTbeForward (runtime/src/cuda/embedding/embedding_lookup.h):
// T tables of R rows x D columns, a batch of B samples with one bag of L ids
// per table (uniform random ids), pooled (sum) into a [B, T * D] output, and
// reports
//   - the time per forward (mean over --iters launches after --warmup),
//   - the useful bandwidth: bytes of rows read + bytes of output written,
//   - that bandwidth as a fraction of a device-to-device cudaMemcpy's,
//     measured in the same run (its bytes = read + written = 2 x size).
// Without a GPU it prints "no GPU: <why>" and exits with status 2.
//
//   ember_tbe_bench                       # the three standard cases
//   ember_tbe_bench --case fbgemm         # 2 x 10M rows, D 192, fp16, B 65536,
//   L 32 ember_tbe_bench --rows 100000 --dim 64 --batch 1024 --bag 8 --format
//   fp32
//
// Used by tbe_vs_pytorch.py: --ids-file (T * B * L raw int64 ids, table
// major: the bags of table 0 first), --table-pattern (rows hold the values
// tablePatternValue() gives, the same formula the script fills PyTorch's
// tables with) and --output-file (the pooled output as float32, B rows).
//
//===----------------------------------------------------------------------===//
#include "cuda/cuda_status.h"
#include "cuda/device.h"
#include "cuda/embedding/embedding_lookup.h"

#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

using namespace ember;
using namespace ember::cuda;
using namespace ember::cuda::embedding;

namespace {

struct Options {
  std::string caseName; // empty: from the flags below
  int64_t tables = 2, rows = 10'000'000, dim = 192, batch = 65536, bag = 32;
  std::string format = "fp16", output = "fp32";
  int iters = 20, warmup = 3;
  std::string idsFile, outputFile;
  bool tablePattern = false;
  uint64_t seed = 2026;
  /// --shapes LANESxCHUNKS|auto,...: sub-warp shapes to time one after
  /// another on the same inputs (auto, or none given: the kernel's choice).
  std::vector<std::pair<int, int>> shapes;
};

/// "8x3,32x1,auto" -> {(8, 3), (32, 1), (0, 0)}; false on anything else.
bool parseShapes(const char *text, std::vector<std::pair<int, int>> &out) {
  out.clear();
  std::string s = text;
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    std::string item = s.substr(
        pos, comma == std::string::npos ? std::string::npos : comma - pos);
    int lanes = 0, chunks = 0;
    char extra = 0;
    if (item == "auto") { // the kernel's own choice
      out.emplace_back(0, 0);
      if (comma == std::string::npos)
        break;
      pos = comma + 1;
      continue;
    }
    if (std::sscanf(item.c_str(), "%dx%d%c", &lanes, &chunks, &extra) != 2 ||
        lanes < 1 || lanes > 32 || (lanes & (lanes - 1)) != 0 || chunks < 1 ||
        chunks > kMaxChunksPerLane)
      return false;
    out.emplace_back(lanes, chunks);
    if (comma == std::string::npos)
      break;
    pos = comma + 1;
  }
  return !out.empty();
}

void usage() {
  std::fprintf(
      stderr,
      "usage: ember_tbe_bench [--case fbgemm|d128-fp32|d128-fp16|all]\n"
      "  [--tables T] [--rows R] [--dim D] [--batch B] [--bag L]\n"
      "  [--format fp32|fp16|bf16|int8|int4] [--output fp32|fp16]\n"
      "  [--iters N] [--warmup N] [--seed S] [--ids-file F]\n"
      "  [--table-pattern] [--output-file F] [--shapes LANESxCHUNKS,...]\n"
      "Without --case and without shape flags it runs --case all.\n");
}

bool parse(int argc, char **argv, Options &o, bool &shapeGiven) {
  shapeGiven = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&](const char *what) -> const char * {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "ember_tbe_bench: %s needs a value\n", what);
        return nullptr;
      }
      return argv[++i];
    };
    auto num = [&](const char *what, int64_t &v) {
      const char *s = next(what);
      if (!s)
        return false;
      char *end = nullptr;
      long long x = std::strtoll(s, &end, 10);
      if (*end != '\0' || x <= 0) {
        std::fprintf(stderr,
                     "ember_tbe_bench: %s must be a positive integer, "
                     "got '%s'\n",
                     what, s);
        return false;
      }
      v = x;
      shapeGiven = true;
      return true;
    };
    int64_t tmp = 0;
    if (a == "--case") {
      const char *s = next("--case");
      if (!s)
        return false;
      o.caseName = s;
    } else if (a == "--tables") {
      if (!num("--tables", o.tables))
        return false;
    } else if (a == "--rows") {
      if (!num("--rows", o.rows))
        return false;
    } else if (a == "--dim") {
      if (!num("--dim", o.dim))
        return false;
    } else if (a == "--batch") {
      if (!num("--batch", o.batch))
        return false;
    } else if (a == "--bag") {
      if (!num("--bag", o.bag))
        return false;
    } else if (a == "--iters" || a == "--warmup" || a == "--seed") {
      bool keep = shapeGiven;
      if (!num(a.c_str(), tmp))
        return false;
      shapeGiven = keep;
      if (a == "--iters")
        o.iters = static_cast<int>(tmp);
      else if (a == "--warmup")
        o.warmup = static_cast<int>(tmp);
      else
        o.seed = static_cast<uint64_t>(tmp);
    } else if (a == "--format") {
      const char *s = next("--format");
      if (!s)
        return false;
      o.format = s;
      shapeGiven = true;
    } else if (a == "--output") {
      const char *s = next("--output");
      if (!s)
        return false;
      o.output = s;
    } else if (a == "--ids-file") {
      const char *s = next("--ids-file");
      if (!s)
        return false;
      o.idsFile = s;
    } else if (a == "--output-file") {
      const char *s = next("--output-file");
      if (!s)
        return false;
      o.outputFile = s;
    } else if (a == "--shapes") {
      const char *v = next("--shapes");
      if (!v)
        return false;
      if (!parseShapes(v, o.shapes)) {
        std::fprintf(stderr,
                     "ember_tbe_bench: --shapes needs LANESxCHUNKS,... "
                     "or auto (lanes a power of two <= 32, chunks 1..%d), not "
                     "'%s'\n",
                     kMaxChunksPerLane, v);
        return false;
      }
    } else if (a == "--table-pattern") {
      o.tablePattern = true;
    } else if (a == "--help" || a == "-h") {
      usage();
      std::exit(0);
    } else {
      std::fprintf(stderr, "ember_tbe_bench: unknown argument '%s'\n",
                   a.c_str());
      usage();
      return false;
    }
  }
  return true;
}

bool formatOf(const std::string &name, TableFormat &f) {
  if (name == "fp32")
    f = TableFormat::kFloat32;
  else if (name == "fp16")
    f = TableFormat::kFloat16;
  else if (name == "bf16")
    f = TableFormat::kBFloat16;
  else if (name == "int8")
    f = TableFormat::kInt8RowWise;
  else if (name == "int4")
    f = TableFormat::kInt4RowWise;
  else
    return false;
  return true;
}

__host__ __device__ inline uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// The value tbe_vs_pytorch.py fills its tables with (exact in float16).
__host__ __device__ inline float tablePatternValue(int64_t table, int64_t row,
                                                   int64_t col) {
  return static_cast<float>((row * 131 + col * 7 + table * 977) % 2003 - 1001) /
         1024.0f;
}

/// Fills table `t` ([rows, rowBytes]): pattern or hashed values per format.
__global__ void fillTable(uint8_t *data, int64_t rows, int64_t dim,
                          int64_t rowBytes, int format, int64_t table,
                          bool pattern, uint64_t seed) {
  const int64_t total = rows * dim;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < total; i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / dim, d = i % dim;
    const uint64_t h = mix(seed ^ (static_cast<uint64_t>(table) << 56) ^ i);
    const float v = pattern
                        ? tablePatternValue(table, r, d)
                        : (static_cast<float>(h >> 40) / 16777216.0f - 0.5f);
    uint8_t *row = data + r * rowBytes;
    switch (static_cast<TableFormat>(format)) {
    case TableFormat::kFloat32:
      reinterpret_cast<float *>(row)[d] = v;
      break;
    case TableFormat::kFloat16:
      reinterpret_cast<__half *>(row)[d] = __float2half_rn(v);
      break;
    case TableFormat::kBFloat16:
      reinterpret_cast<uint16_t *>(row)[d] =
          static_cast<uint16_t>(__float_as_uint(v) >> 16);
      break;
    case TableFormat::kInt8RowWise:
      row[d] = static_cast<uint8_t>(h >> 56);
      if (d == 0) {
        float sb[2] = {1.0f / 255, -0.5f};
        memcpy(row + dim, sb, 8); // any alignment
      }
      break;
    case TableFormat::kInt4RowWise:
      if ((d & 1) == 0)
        row[d / 2] = static_cast<uint8_t>(h >> 56);
      if (d == 0) {
        const int64_t codes = (dim + 1) / 2;
        float sb[2] = {1.0f / 15, -0.5f};
        memcpy(row + codes, sb, 8);
      }
      break;
    }
  }
}

/// Uniform random ids: bag b of table t holds ids [(t * B + b) * L, + L).
__global__ void fillIds(int64_t *ids, int64_t n, int64_t rows, uint64_t seed) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < n; i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    ids[i] = static_cast<int64_t>(mix(seed ^ (0x5bd1e995ull * i)) %
                                  static_cast<uint64_t>(rows));
}

__global__ void fillOffsets(int64_t *offsets, int64_t n, int64_t bag) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i <= n; i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    offsets[i] = i * bag;
}

struct DeviceBuffers {
  std::vector<void *> ptrs;
  ~DeviceBuffers() {
    for (void *p : ptrs)
      cudaFree(p);
  }
  Result<void *> alloc(size_t bytes, const char *what) {
    void *p = nullptr;
    cudaError_t e = cudaMalloc(&p, bytes);
    if (e != cudaSuccess)
      return cudaStatus(e, std::string("cudaMalloc(") + what + ", " +
                               std::to_string(bytes) + " bytes)");
    ptrs.push_back(p);
    return p;
  }
};

/// Milliseconds of `iters` calls of `enqueue` (each enqueues work on the
/// default stream), between two events.
template <class Enqueue> Result<float> timeLoop(int iters, Enqueue &&enqueue) {
  cudaEvent_t start, stop;
  EMBER_CUDA_RETURN_IF_ERROR(cudaEventCreate(&start));
  EMBER_CUDA_RETURN_IF_ERROR(cudaEventCreate(&stop));
  Status status = cudaStatus(cudaEventRecord(start), "cudaEventRecord");
  for (int i = 0; status.isOk() && i < iters; ++i)
    status = enqueue();
  float ms = 0;
  if (status.isOk())
    status = cudaStatus(cudaEventRecord(stop), "cudaEventRecord");
  if (status.isOk())
    status = cudaStatus(cudaEventSynchronize(stop), "cudaEventSynchronize");
  if (status.isOk())
    status = cudaStatus(cudaEventElapsedTime(&ms, start, stop),
                        "cudaEventElapsedTime");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (!status.isOk())
    return status;
  return ms;
}

/// Device-to-device cudaMemcpy bandwidth (bytes read + written per second).
Result<double> memcpyBandwidth(size_t bytes, int iters) {
  DeviceBuffers buf;
  EMBER_ASSIGN_OR_RETURN(void *a, buf.alloc(bytes, "memcpy source"));
  EMBER_ASSIGN_OR_RETURN(void *b, buf.alloc(bytes, "memcpy destination"));
  EMBER_CUDA_RETURN_IF_ERROR(cudaMemset(a, 1, bytes));
  EMBER_CUDA_RETURN_IF_ERROR(
      cudaMemcpy(b, a, bytes, cudaMemcpyDeviceToDevice)); // warm-up
  EMBER_ASSIGN_OR_RETURN(
      float ms, timeLoop(iters, [&] {
        return cudaStatus(
            cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice),
            "cudaMemcpyAsync");
      }));
  return 2.0 * static_cast<double>(bytes) * iters / (ms * 1e-3);
}

Status runCase(const std::string &label, const Options &o, double memcpyBw,
               int multiprocessors) {
  TableFormat format;
  if (!formatOf(o.format, format))
    return invalidArgument("unknown --format '" + o.format + "'");
  if (o.output != "fp32" && o.output != "fp16")
    return invalidArgument("--output must be fp32 or fp16");
  if (o.dim > (1 << 20))
    return invalidArgument("--dim too large");
  const bool half = o.output == "fp16";
  const int64_t T = o.tables, R = o.rows, D = o.dim, B = o.batch, L = o.bag;
  const int64_t rowBytes = tableRowBytes(format, D);
  const int64_t numIds = T * B * L;
  DeviceBuffers buf;
  TbeForwardArgs args;
  for (int64_t t = 0; t < T; ++t) {
    EMBER_ASSIGN_OR_RETURN(
        void *p, buf.alloc(static_cast<size_t>(R * rowBytes), "table"));
    fillTable<<<1024, 256>>>(static_cast<uint8_t *>(p), R, D, rowBytes,
                             static_cast<int>(format), t, o.tablePattern,
                             o.seed);
    EMBER_RETURN_IF_ERROR(launchStatus("fillTable"));
    TableDesc d;
    d.data = static_cast<const uint8_t *>(p);
    d.rows = R;
    d.rowBytes = rowBytes;
    d.dim = static_cast<int32_t>(D);
    d.format = static_cast<uint8_t>(format);
    args.tables.push_back(d);
    FeatureDesc f;
    f.table = static_cast<int32_t>(t);
    f.outOffset = t * D;
    args.features.push_back(f);
  }
  EMBER_ASSIGN_OR_RETURN(void *ids, buf.alloc(numIds * 8, "ids"));
  if (!o.idsFile.empty()) {
    std::vector<int64_t> host(numIds);
    FILE *f = std::fopen(o.idsFile.c_str(), "rb");
    if (!f)
      return notFound("cannot open --ids-file " + o.idsFile);
    size_t got = std::fread(host.data(), 8, host.size(), f);
    bool more = std::fgetc(f) != EOF;
    std::fclose(f);
    if (got != host.size() || more)
      return invalidArgument(o.idsFile + " must hold exactly " +
                             std::to_string(numIds) + " int64 ids");
    for (int64_t i = 0; i < numIds; ++i)
      if (host[i] < 0 || host[i] >= R)
        return invalidArgument("id " + std::to_string(host[i]) +
                               " of --ids-file is outside [0, rows)");
    EMBER_CUDA_RETURN_IF_ERROR(
        cudaMemcpy(ids, host.data(), numIds * 8, cudaMemcpyHostToDevice));
  } else {
    fillIds<<<1024, 256>>>(static_cast<int64_t *>(ids), numIds, R, o.seed);
    EMBER_RETURN_IF_ERROR(launchStatus("fillIds"));
  }
  EMBER_ASSIGN_OR_RETURN(void *offsets, buf.alloc((T * B + 1) * 8, "offsets"));
  fillOffsets<<<256, 256>>>(static_cast<int64_t *>(offsets), T * B, L);
  EMBER_RETURN_IF_ERROR(launchStatus("fillOffsets"));
  const size_t outBytes = static_cast<size_t>(B * T * D) * (half ? 2 : 4);
  EMBER_ASSIGN_OR_RETURN(void *out, buf.alloc(outBytes, "output"));
  EMBER_ASSIGN_OR_RETURN(void *errors,
                         buf.alloc(sizeof(DeviceErrorRecord), "errors"));
  EMBER_CUDA_RETURN_IF_ERROR(cudaMemset(errors, 0, sizeof(DeviceErrorRecord)));
  args.ids = ids;
  args.ids64 = true;
  args.numIds = numIds;
  args.offsets = static_cast<const int64_t *>(offsets);
  args.batch = B;
  args.out = out;
  args.outStride = T * D;
  args.output = half ? TbeOutput::kFloat16 : TbeOutput::kFloat32;
  args.errors = static_cast<DeviceErrorRecord *>(errors);
  EMBER_CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());

  // The bags of the ids file are table-major: bag t * B + b, as TBE wants.
  std::vector<std::pair<int, int>> shapes = o.shapes;
  if (shapes.empty())
    shapes.emplace_back(0, 0); // the kernel's own choice
  for (auto [lanes, chunksPerLane] : shapes) {
    args.lanes = lanes;
    args.chunksPerLane = chunksPerLane;
    for (int i = 0; i < o.warmup; ++i)
      EMBER_RETURN_IF_ERROR(launchTbeForward(args, multiprocessors, nullptr));
    EMBER_ASSIGN_OR_RETURN(float ms, timeLoop(o.iters, [&] {
                             return launchTbeForward(args, multiprocessors,
                                                     nullptr);
                           }));
    DeviceErrorRecord record;
    EMBER_CUDA_RETURN_IF_ERROR(
        cudaMemcpy(&record, errors, sizeof record, cudaMemcpyDeviceToHost));
    if (record.code != 0)
      return internalError("the lookup raised: " + describeDeviceError(record));

    const double perIter = ms * 1e-3 / o.iters;
    const double useful =
        static_cast<double>(numIds) * rowBytes + static_cast<double>(outBytes);
    const double bw = useful / perIter;
    std::printf("case=%s tables=%lld rows=%lld dim=%lld batch=%lld bag=%lld "
                "format=%s output=%s time_ms=%.4f useful_GBps=%.1f "
                "memcpy_GBps=%.1f fraction_of_memcpy=%.3f%s\n",
                label.c_str(), static_cast<long long>(T),
                static_cast<long long>(R), static_cast<long long>(D),
                static_cast<long long>(B), static_cast<long long>(L),
                o.format.c_str(), o.output.c_str(), perIter * 1e3, bw / 1e9,
                memcpyBw / 1e9, bw / memcpyBw,
                lanes ? (" shape=" + std::to_string(lanes) + "x" +
                         std::to_string(chunksPerLane))
                            .c_str()
                      : " shape=auto");
    std::fflush(stdout);
  }

  if (!o.outputFile.empty()) {
    std::vector<float> host(static_cast<size_t>(B * T * D));
    if (half) {
      std::vector<uint16_t> h(host.size());
      EMBER_CUDA_RETURN_IF_ERROR(
          cudaMemcpy(h.data(), out, outBytes, cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < h.size(); ++i)
        host[i] = halfToFloat(h[i]);
    } else {
      EMBER_CUDA_RETURN_IF_ERROR(
          cudaMemcpy(host.data(), out, outBytes, cudaMemcpyDeviceToHost));
    }
    FILE *f = std::fopen(o.outputFile.c_str(), "wb");
    if (!f)
      return invalidArgument("cannot write --output-file " + o.outputFile);
    bool ok = std::fwrite(host.data(), 4, host.size(), f) == host.size();
    ok = std::fclose(f) == 0 && ok;
    if (!ok)
      return dataLoss("writing " + o.outputFile + " failed");
  }
  return Status::ok();
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  bool shapeGiven = false;
  if (!parse(argc, argv, o, shapeGiven))
    return 1;
  auto devices = listDevices();
  if (!devices.isOk()) {
    std::printf("no GPU: %s\n", devices.status().message().c_str());
    return 2;
  }
  const DeviceInfo *device = nullptr;
  for (const DeviceInfo &d : *devices)
    if (isSupported(d)) {
      device = &d;
      break;
    }
  if (!device) {
    std::printf("no GPU: no CUDA device of compute capability 8.0 or newer\n");
    return 2;
  }
  if (cudaSetDevice(device->index) != cudaSuccess) {
    std::printf("no GPU: cudaSetDevice(%d) failed\n", device->index);
    return 2;
  }
  std::printf("device=\"%s\" sm=%d%d multiprocessors=%d\n",
              device->name.c_str(), device->computeCapabilityMajor,
              device->computeCapabilityMinor, device->multiprocessors);
  auto bw = memcpyBandwidth(size_t{1} << 30, 10);
  if (!bw.isOk()) {
    std::fprintf(stderr, "ember_tbe_bench: %s\n",
                 bw.status().toString().c_str());
    return 1;
  }

  std::vector<std::pair<std::string, Options>> cases;
  std::string which = o.caseName.empty() && !shapeGiven ? "all" : o.caseName;
  auto add = [&](const std::string &name, int64_t dim, const char *format) {
    Options c = o;
    c.tables = 2;
    c.rows = 10'000'000;
    c.batch = 65536;
    c.bag = 32;
    c.dim = dim;
    c.format = format;
    cases.emplace_back(name, c);
  };
  if (which == "fbgemm" || which == "all")
    add("fbgemm", 192, "fp16");
  if (which == "d128-fp32" || which == "all")
    add("d128-fp32", 128, "fp32");
  if (which == "d128-fp16" || which == "all")
    add("d128-fp16", 128, "fp16");
  if (which.empty())
    cases.emplace_back("custom", o);
  if (cases.empty()) {
    std::fprintf(stderr, "ember_tbe_bench: unknown --case '%s'\n",
                 o.caseName.c_str());
    return 1;
  }
  for (auto &[name, c] : cases) {
    Status s = runCase(name, c, *bw, device->multiprocessors);
    if (!s.isOk()) {
      std::fprintf(stderr, "ember_tbe_bench: case %s: %s\n", name.c_str(),
                   s.toString().c_str());
      return 1;
    }
  }
  return 0;
}

//===- fuzz_session_run.cpp - Fuzzing Session::run / ember_session_run ----===//
//
// Two small plans are written once at start-up into the scratch directory:
//
//   dlrm      the test DLRM (tests/unit/runtime/support/dlrm_model.h):
//             dense float32[B, 4], KJT "sparse" (f0, f1, f2; int64 values and
//             lengths) -> prob float32[B, 1]
//   weighted  KJT "ids" (a, b; int32 values and lengths, float32 weights) ->
//             grouped_embedding_bag (sum) -> + dense "x" float32[B, 6] -> y;
//             B bounded by 32 (Plan.symbol_bounds)
//
// The fuzz input describes one request (dense shapes and dtypes, KJT keys,
// lengths or offsets, ids, weights, extra or missing inputs; see
// Request::read) that goes through the C++ API or the C API. The target
// knows whether the request is well formed, and checks the run against it:
// a well-formed request with ids inside the tables succeeds and equals the
// plain-loop reference; one with an id outside a table fails with
// OutOfRange (kFatal) or succeeds with that many invalid ids (kWarning); any
// other request fails with a Status and leaves no outputs.
//
//===----------------------------------------------------------------------===//
#include "ember/c_api.h"
#include "ember/session.h"
#include "fuzz_support.h"
#include "support/dlrm_model.h"
#include "support/plan_builder.h"

#include <cmath>

using namespace ember;
using namespace ember::fuzz;
using namespace ember::testing;

namespace {

constexpr int64_t kWeightedBound = 32;
constexpr int64_t kWeightedDim = 3;
const std::vector<int64_t> kWeightedRows = {7, 3};

struct Model {
  std::string planPath;
  std::string denseName, kjtName;
  std::vector<std::string> keys;
  std::vector<int64_t> rows; // per key (feature f uses table f)
  int64_t denseWidth = 0;
  DType indexType = DType::kInt64;
  bool weighted = false;
  int64_t batchBound = -1;
  std::unique_ptr<Session> fatal, warning;
  EmberSession *cFatal = nullptr, *cWarning = nullptr;
};

struct Fixture {
  DlrmModel dlrm = makeDlrmModel(7);
  std::vector<std::vector<float>> weightedTables;
  Model models[2];
};

Result<std::string> writeWeightedPlan(const Fixture &f,
                                      const std::string &dir) {
  PlanBuilder b;
  KjtSlotIds ids =
      b.kjtInput("ids", {"a", "b"}, DType::kInt32, DType::kInt32, true);
  int x = b.input("x", DType::kFloat32, {"B", Dim(2 * kWeightedDim)});
  std::vector<int> lookupInputs = {ids.values, ids.lengths, ids.weights};
  for (size_t t = 0; t < kWeightedRows.size(); ++t)
    lookupInputs.push_back(b.constant("t" + std::to_string(t), DType::kFloat32,
                                      {kWeightedRows[t], kWeightedDim},
                                      f.weightedTables[t].data()));
  int e = b.slot("pooled", DType::kFloat32, {"B", Dim(2 * kWeightedDim)});
  b.instruction("grouped_embedding_bag", lookupInputs, {e}, "ebc")
      .attr("feature_tables", std::vector<int64_t>{0, 1})
      .attr("pooling", std::vector<std::string>{"sum", "sum"})
      .attr("table_formats", std::vector<std::string>{"float32", "float32"})
      .attr("table_dims", std::vector<int64_t>{kWeightedDim, kWeightedDim})
      .attr("output_offsets", std::vector<int64_t>{0, kWeightedDim})
      .attr("output_width", 2 * kWeightedDim)
      .attr("feature_names", std::vector<std::string>{"a", "b"});
  int y = b.slot("y", DType::kFloat32, {"B", Dim(2 * kWeightedDim)});
  b.instruction("add", {e, x}, {y}, "residual");
  b.output("y", y);
  plan::SymbolBound *bound = b.proto().add_symbol_bounds();
  bound->set_symbol("B");
  bound->set_max(kWeightedBound);
  return b.write(dir, "weighted");
}

void openSessions(Model &m) {
  for (BoundsCheckMode mode :
       {BoundsCheckMode::kFatal, BoundsCheckMode::kWarning}) {
    SessionOptions options;
    options.boundsCheck = mode;
    auto s = Session::load(m.planPath, options);
    if (!s)
      fail("cannot load " + m.planPath + ": " + s.status().toString());
    (mode == BoundsCheckMode::kFatal ? m.fatal : m.warning) = std::move(*s);
    EmberSessionOptions *o = ember_session_options_create();
    ember_session_options_set_bounds_check(o,
                                           mode == BoundsCheckMode::kFatal
                                               ? EMBER_BOUNDS_FATAL
                                               : EMBER_BOUNDS_WARNING,
                                           nullptr);
    EmberStatus *st = nullptr;
    EmberSession **c =
        mode == BoundsCheckMode::kFatal ? &m.cFatal : &m.cWarning;
    if (ember_session_create(m.planPath.c_str(), o, c, &st) != EMBER_OK)
      fail(std::string("ember_session_create: ") + ember_status_message(st));
    ember_session_options_free(o);
  }
}

Fixture &fixture() {
  static Fixture *f = [] {
    auto *fx = new Fixture();
    const std::string &dir = scratchDir();
    auto dlrmPath = writeDlrmPlan(fx->dlrm, dir, "dlrm");
    if (!dlrmPath)
      fail(dlrmPath.status().toString());
    Model &d = fx->models[0];
    d.planPath = *dlrmPath;
    d.denseName = "dense";
    d.kjtName = "sparse";
    d.keys = fx->dlrm.keys;
    d.rows = fx->dlrm.tableRows;
    d.denseWidth = DlrmModel::kDenseIn;
    for (size_t t = 0; t < kWeightedRows.size(); ++t) {
      std::vector<float> table(kWeightedRows[t] * kWeightedDim);
      for (size_t i = 0; i < table.size(); ++i)
        table[i] = static_cast<float>((i * 7 + t * 3) % 11) / 4.0f - 1.0f;
      fx->weightedTables.push_back(std::move(table));
    }
    auto weightedPath = writeWeightedPlan(*fx, dir);
    if (!weightedPath)
      fail(weightedPath.status().toString());
    Model &w = fx->models[1];
    w.planPath = *weightedPath;
    w.denseName = "x";
    w.kjtName = "ids";
    w.keys = {"a", "b"};
    w.rows = kWeightedRows;
    w.denseWidth = 2 * kWeightedDim;
    w.indexType = DType::kInt32;
    w.weighted = true;
    w.batchBound = kWeightedBound;
    for (Model &m : fx->models)
      openSessions(m);
    return fx;
  }();
  return *f;
}

/// One request read from the fuzz input, and whether it is well formed.
struct Request {
  int model = 0;
  bool cApi = false, offsets = false, warning = false;
  bool extraInput = false, dropDense = false, dropKjt = false, swap = false;
  int64_t batch = 0;
  // dense
  DType denseType = DType::kFloat32;
  std::vector<int64_t> denseDims;
  std::vector<uint8_t> denseStorage;
  bool denseOk = true;
  // KJT
  std::vector<std::string> keys;
  std::vector<int64_t> lengths; // as the caller gives them (int64 here)
  std::vector<int64_t> values;
  std::vector<float> weights;
  bool withWeights = false;
  bool kjtOk = true;
  int64_t invalidIds = 0;

  bool wellFormed(const Model &m) const {
    return !extraInput && !dropDense && !dropKjt && !swap && denseOk && kjtOk &&
           (m.batchBound < 0 || batch <= m.batchBound);
  }

  void read(ByteReader &in, const Model &m);
};

int64_t readLength(ByteReader &in) {
  uint8_t v = in.u8();
  if (v < 200)
    return v % 6;
  if (v < 250)
    return -static_cast<int64_t>(v - 199);
  return static_cast<int64_t>(in.u64());
}

void Request::read(ByteReader &in, const Model &m) {
  batch = in.u8() % 48;
  // Dense input: mode 0 is right; otherwise dtype, rank and dims from bytes.
  uint8_t denseMode = in.u8();
  if (denseMode % 4 == 0) {
    denseDims = {batch, m.denseWidth};
  } else {
    denseType = static_cast<DType>(in.u8() % 9);
    int rank = in.u8() % 10;
    for (int i = 0; i < rank; ++i) {
      uint8_t d = in.u8();
      denseDims.push_back(d == 255 ? int64_t{1} << 40 : d % 9);
    }
    denseOk = denseType == DType::kFloat32 && rank == 2 &&
              denseDims[0] == batch && denseDims[1] == m.denseWidth;
  }
  // Keys.
  keys = m.keys;
  switch (in.u8() % 12) {
  case 1:
    std::swap(keys.front(), keys.back());
    kjtOk = false;
    break;
  case 2:
    keys.pop_back();
    kjtOk = false;
    break;
  case 3:
    keys.push_back("zz");
    kjtOk = false;
    break;
  case 4:
    keys[0] += "x";
    kjtOk = false;
    break;
  default:
    break;
  }
  // Lengths: F * B of them (F from the keys given), maybe a few more or less.
  int64_t numLengths = static_cast<int64_t>(keys.size()) * batch;
  int8_t lengthsDelta = static_cast<int8_t>(in.u8());
  if (lengthsDelta < -100 || lengthsDelta > 100) {
    numLengths += lengthsDelta % 3;
    if (numLengths < 0)
      numLengths = 0;
  }
  if (numLengths != static_cast<int64_t>(m.keys.size()) * batch)
    kjtOk = false;
  int64_t sum = 0;
  bool sumOverflow = false;
  for (int64_t i = 0; i < numLengths; ++i) {
    int64_t len = readLength(in);
    if (m.indexType == DType::kInt32)
      len = static_cast<int32_t>(len);
    lengths.push_back(len);
    if (len < 0)
      kjtOk = false;
    else if (__builtin_add_overflow(sum, len, &sum))
      sumOverflow = true;
  }
  // Values: as many as the lengths say (at most 4096), maybe off by a few.
  int64_t numValues = (sumOverflow || sum < 0 || sum > 4096) ? 4096 : sum;
  int8_t valuesDelta = static_cast<int8_t>(in.u8());
  if (valuesDelta < -100 || valuesDelta > 100) {
    numValues += valuesDelta % 3;
    if (numValues < 0)
      numValues = 0;
  }
  if (sumOverflow || numValues != sum)
    kjtOk = false;
  // Ids: mostly in range; 250..255 read 8 bytes (negative, huge).
  int64_t pos = 0;
  for (int64_t s = 0; s < numLengths; ++s) {
    int64_t f = batch > 0 ? s / batch : 0;
    int64_t rows = f < static_cast<int64_t>(m.rows.size()) ? m.rows[f] : 1;
    for (int64_t j = 0; j < lengths[s] && pos < numValues; ++j, ++pos) {
      uint8_t b = in.u8();
      int64_t id = b < 250 ? b % (rows + 1) : static_cast<int64_t>(in.u64());
      if (m.indexType == DType::kInt32)
        id = static_cast<int32_t>(id);
      values.push_back(id);
      if (id < 0 || id >= rows)
        ++invalidIds;
    }
  }
  while (pos++ < numValues)
    values.push_back(0);
  // Weights: required by the weighted plan, refused by the DLRM.
  uint8_t weightsMode = in.u8();
  withWeights = m.weighted ? weightsMode % 8 != 1 : weightsMode % 8 == 1;
  if (withWeights != m.weighted)
    kjtOk = false;
  if (withWeights) {
    int64_t n = numValues;
    if (weightsMode % 8 == 2) {
      n += 1;
      kjtOk = false;
    }
    for (int64_t i = 0; i < n; ++i)
      weights.push_back(static_cast<int8_t>(in.u8()) / 16.0f);
  }
  // Dense data last: small exact values from the bytes (zeros at the end).
  int64_t numel = 1;
  bool tooBig = false;
  for (int64_t d : denseDims) {
    if (d > (1 << 20) || __builtin_mul_overflow(numel, d, &numel) ||
        numel > (1 << 20))
      tooBig = true;
  }
  if (!tooBig) {
    denseStorage.resize(static_cast<size_t>(numel) * dtypeSize(denseType));
    if (denseType == DType::kFloat32) {
      float *p = reinterpret_cast<float *>(denseStorage.data());
      for (int64_t i = 0; i < numel; ++i)
        p[i] = static_cast<int8_t>(in.u8()) / 8.0f;
    }
  }
}

/// The model's output for a well-formed request, in plain loops.
std::vector<float> reference(const Fixture &fx, int model, const Request &r) {
  const float *dense = reinterpret_cast<const float *>(r.denseStorage.data());
  if (model == 0) {
    DlrmBatch batch;
    batch.batch = r.batch;
    batch.dense.assign(dense, dense + r.batch * DlrmModel::kDenseIn);
    batch.values = r.values;
    batch.lengths = r.lengths;
    return referenceDlrm(fx.dlrm, batch);
  }
  const int64_t width = 2 * kWeightedDim;
  std::vector<float> out(dense, dense + r.batch * width);
  int64_t pos = 0;
  for (int64_t f = 0; f < 2; ++f)
    for (int64_t b = 0; b < r.batch; ++b)
      for (int64_t j = 0; j < r.lengths[f * r.batch + b]; ++j, ++pos)
        for (int64_t d = 0; d < kWeightedDim; ++d)
          out[b * width + f * kWeightedDim + d] +=
              r.weights[pos] *
              fx.weightedTables[f][r.values[pos] * kWeightedDim + d];
  return out;
}

/// Index data in the plan's dtype.
struct IndexBuffer {
  std::vector<int32_t> i32;
  std::vector<int64_t> i64;
  DType type;
  IndexBuffer(const std::vector<int64_t> &v, DType t) : type(t) {
    if (t == DType::kInt32)
      i32.assign(v.begin(), v.end());
    else
      i64 = v;
  }
  void *data() {
    return type == DType::kInt32 ? static_cast<void *>(i32.data())
                                 : static_cast<void *>(i64.data());
  }
  int64_t size() const {
    return type == DType::kInt32 ? static_cast<int64_t>(i32.size())
                                 : static_cast<int64_t>(i64.size());
  }
};

struct Outcome {
  StatusCode code = StatusCode::kOk;
  std::string message;
  std::vector<float> output; // the model's only output, flattened
  std::vector<int64_t> outputShape;
  int64_t invalidIds = 0;
  size_t numOutputs = 0;
};

Outcome runCpp(const Model &m, Request &r) {
  IndexBuffer values(r.values, m.indexType);
  std::vector<int64_t> offsets = {0};
  for (int64_t len : r.lengths) // wrapping: hostile lengths make any offsets
    offsets.push_back(static_cast<int64_t>(
        static_cast<uint64_t>(offsets.back()) + static_cast<uint64_t>(len)));
  IndexBuffer lengths(r.offsets ? offsets : r.lengths, m.indexType);
  RunInputs inputs;
  Outcome o;
  if (!r.dropKjt) {
    int64_t nv = values.size(), nl = lengths.size();
    Tensor v = Tensor::view(values.data(), m.indexType, {nv});
    Tensor l = Tensor::view(lengths.data(), m.indexType, {nl});
    Tensor w;
    if (r.withWeights)
      w = Tensor::view(r.weights.data(), DType::kFloat32,
                       {static_cast<int64_t>(r.weights.size())});
    auto kjt = r.offsets ? KeyedJaggedTensor::fromOffsets(r.keys, v, l, w)
                         : KeyedJaggedTensor::fromLengths(r.keys, v, l, w);
    if (!kjt) {
      o.code = kjt.status().code();
      o.message = kjt.status().message();
      return o;
    }
    inputs.set(r.swap ? m.denseName : m.kjtName, *kjt);
  }
  if (!r.dropDense) {
    if (r.denseStorage.empty() && !r.denseDims.empty()) {
      // Declared dims too large to back with memory: a view with no data.
      auto shape = Shape::fromDims(r.denseDims.data(), r.denseDims.size());
      if (!shape) {
        o.code = shape.status().code();
        return o;
      }
      inputs.set(
          r.swap ? m.kjtName : m.denseName,
          Tensor::view(static_cast<void *>(nullptr), r.denseType, *shape));
    } else {
      auto shape = Shape::fromDims(r.denseDims.data(), r.denseDims.size());
      if (!shape) {
        o.code = shape.status().code();
        return o;
      }
      inputs.set(r.swap ? m.kjtName : m.denseName,
                 Tensor::view(r.denseStorage.data(), r.denseType, *shape));
    }
  }
  if (r.extraInput)
    inputs.set("unknown_input",
               Tensor::view(r.denseStorage.data(), DType::kUInt8, {0}));
  const Session &session = r.warning ? *m.warning : *m.fatal;
  RunOutputs outputs;
  Status s = session.run(inputs, &outputs);
  o.code = s.code();
  o.message = s.message();
  o.numOutputs = outputs.size();
  o.invalidIds = outputs.invalidIds();
  if (s.isOk() && outputs.size() == 1) {
    const Tensor &t = outputs.tensor(0);
    o.output.assign(t.data<float>(), t.data<float>() + t.numel());
    for (int d = 0; d < t.rank(); ++d)
      o.outputShape.push_back(t.dim(d));
  }
  return o;
}

Outcome runC(const Model &m, Request &r) {
  Outcome o;
  IndexBuffer values(r.values, m.indexType);
  IndexBuffer lengths(r.lengths, m.indexType);
  EmberDType indexType =
      m.indexType == DType::kInt32 ? EMBER_INT32 : EMBER_INT64;
  EmberInputs *inputs = ember_inputs_create();
  std::vector<EmberTensor *> tensors;
  EmberStatus *st = nullptr;
  auto failed = [&](EmberStatusCode code) {
    o.code = static_cast<StatusCode>(code);
    o.message = st ? ember_status_message(st) : "";
    ember_status_free(st);
    st = nullptr;
  };
  auto view = [&](EmberDType t, const std::vector<int64_t> &dims,
                  void *data) -> EmberTensor * {
    EmberTensor *tensor = nullptr;
    EmberStatusCode c = ember_tensor_create_view(t, dims.data(), dims.size(),
                                                 data, &tensor, &st);
    if (c != EMBER_OK) {
      failed(c);
      return nullptr;
    }
    tensors.push_back(tensor);
    return tensor;
  };
  bool ok = true;
  if (!r.dropKjt) {
    EmberTensor *v = view(indexType, {values.size()}, values.data());
    EmberTensor *l =
        v ? view(indexType, {lengths.size()}, lengths.data()) : nullptr;
    EmberTensor *w = nullptr;
    if (l && r.withWeights)
      w = view(EMBER_FLOAT32, {static_cast<int64_t>(r.weights.size())},
               r.weights.data());
    ok = l && (!r.withWeights || w);
    if (ok) {
      std::vector<const char *> keys;
      for (const std::string &k : r.keys)
        keys.push_back(k.c_str());
      EmberStatusCode c = ember_inputs_set_kjt(
          inputs, (r.swap ? m.denseName : m.kjtName).c_str(), keys.data(),
          keys.size(), v, l, w, &st);
      if (c != EMBER_OK) {
        failed(c);
        ok = false;
      }
    }
  }
  if (ok && !r.dropDense) {
    void *data = r.denseStorage.empty() ? nullptr : r.denseStorage.data();
    EmberTensor *d =
        view(static_cast<EmberDType>(r.denseType), r.denseDims, data);
    ok = d != nullptr;
    if (ok) {
      EmberStatusCode c = ember_inputs_set_tensor(
          inputs, (r.swap ? m.kjtName : m.denseName).c_str(), d, &st);
      if (c != EMBER_OK) {
        failed(c);
        ok = false;
      }
    }
  }
  if (ok && r.extraInput) {
    EmberTensor *e = view(EMBER_UINT8, {0}, nullptr);
    ok = e &&
         ember_inputs_set_tensor(inputs, "unknown_input", e, &st) == EMBER_OK;
    if (!ok && st)
      failed(ember_status_code(st));
  }
  if (ok) {
    EmberOutputs *outputs = nullptr;
    EmberStatusCode c = ember_session_run(r.warning ? m.cWarning : m.cFatal,
                                          inputs, &outputs, &st);
    if (c != EMBER_OK) {
      failed(c);
    } else {
      o.numOutputs = ember_outputs_count(outputs);
      o.invalidIds = ember_outputs_invalid_ids(outputs);
      const EmberTensor *t = nullptr;
      if (ember_outputs_get(outputs, ember_outputs_name(outputs, 0), &t, &st) !=
          EMBER_OK)
        fail("ember_outputs_get failed after a successful run");
      const float *p = static_cast<const float *>(ember_tensor_data(t));
      o.output.assign(p, p + ember_tensor_numel(t));
      for (size_t d = 0; d < ember_tensor_rank(t); ++d)
        o.outputShape.push_back(ember_tensor_dim(t, d));
    }
    ember_outputs_free(outputs);
  }
  for (EmberTensor *t : tensors)
    ember_tensor_free(t);
  ember_inputs_free(inputs);
  return o;
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  fixture();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Fixture &fx = fixture();
  ByteReader in(data, size);
  uint8_t flags = in.u8();
  Request r;
  r.model = flags & 1;
  r.cApi = flags & 2;
  r.offsets = (flags & 4) && !r.cApi; // the C API takes lengths only
  r.warning = flags & 8;
  uint8_t faults = in.u8();
  r.extraInput = faults % 16 == 1;
  r.dropDense = faults % 16 == 2;
  r.dropKjt = faults % 16 == 3;
  r.swap = faults % 16 == 4;
  const Model &m = fx.models[r.model];
  r.read(in, m);

  Outcome o = r.cApi ? runC(m, r) : runCpp(m, r);
  std::string what = std::string(r.cApi ? "C API" : "C++ API") + ", plan " +
                     (r.model ? "weighted" : "dlrm") + ", batch " +
                     std::to_string(r.batch) + ": " + o.message;
  if (!r.wellFormed(m)) {
    EMBER_FUZZ_CHECK(o.code != StatusCode::kOk,
                     "a malformed request succeeded; " + what);
    EMBER_FUZZ_CHECK(o.numOutputs == 0, "outputs left after an error; " + what);
    EMBER_FUZZ_CHECK(!o.message.empty() || !r.cApi, "no message; " + what);
    return 0;
  }
  if (r.invalidIds > 0 && !r.warning) {
    EMBER_FUZZ_CHECK(o.code == StatusCode::kOutOfRange,
                     "an id outside its table was not refused; " + what);
    return 0;
  }
  EMBER_FUZZ_CHECK(o.code == StatusCode::kOk,
                   "a well-formed request failed; " + what);
  EMBER_FUZZ_CHECK(o.invalidIds == r.invalidIds,
                   std::to_string(o.invalidIds) + " invalid ids reported, " +
                       std::to_string(r.invalidIds) + " given; " + what);
  if (r.invalidIds > 0)
    return 0; // zero rows replace them: no reference for that
  int64_t width = r.model == 0 ? 1 : 2 * kWeightedDim;
  EMBER_FUZZ_CHECK(o.outputShape == std::vector<int64_t>({r.batch, width}),
                   "wrong output shape; " + what);
  std::vector<float> want = reference(fx, r.model, r);
  for (size_t i = 0; i < want.size(); ++i)
    EMBER_FUZZ_CHECK(
        std::fabs(o.output[i] - want[i]) <= 1e-4f + 1e-4f * std::fabs(want[i]),
        "output " + std::to_string(i) + " is " + std::to_string(o.output[i]) +
            ", the reference " + std::to_string(want[i]) + "; " + what);
  return 0;
}

//===- runtime_module.cpp - Ember's runtime for Python (pybind11) ---------===//
//
// The module `_ember_runtime`, wrapped by compiler/frontends/torch/ember/
// runtime.py (ember.Session): a loaded plan, run on numpy arrays (or any
// buffer) and KJTs given as (keys, values, lengths, weights). Inputs are
// viewed, not copied, when they are C-contiguous (PEP 3118 buffers, so no
// dependency on numpy's C ABI, which changed in numpy 2); each output is a
// numpy array over the runtime's own buffer (no copy), which it keeps
// alive. Runs release the GIL and are thread-safe (ember::Session::run
// is); run_pipelined is Session::runPipelined over a list of such input
// dicts. Errors raise EmberError carrying the runtime's message and code.
//
//===----------------------------------------------------------------------===//
#include "ember/session.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

/// ember.EmberError (set when the module is imported).
PyObject *gEmberError = nullptr;

[[noreturn]] void raise(const ember::Status &status) {
  py::object error = py::reinterpret_borrow<py::object>(gEmberError)(
      status.message());
  error.attr("code") = static_cast<int>(status.code());
  PyErr_SetObject(gEmberError, error.ptr());
  throw py::error_already_set();
}

template <typename T> T take(ember::Result<T> result) {
  if (!result.isOk())
    raise(result.status());
  return std::move(*result);
}

/// The Ember dtype of a PEP 3118 format ("f", "<q", "?", ...) of
/// `itemsize` bytes; none for other formats (big-endian ones included).
std::optional<ember::DType> dtypeOf(std::string format, py::ssize_t itemsize) {
  if (!format.empty() && (format[0] == '@' || format[0] == '=' ||
                          format[0] == '<'))
    format.erase(0, 1);
  if (format.size() != 1)
    return std::nullopt;
  switch (format[0]) {
  case 'f':
    return ember::DType::kFloat32;
  case 'e':
    return ember::DType::kFloat16;
  case 'd':
    return ember::DType::kFloat64;
  case 'b':
    return ember::DType::kInt8;
  case 'B':
    return ember::DType::kUInt8;
  case '?':
    return ember::DType::kBool;
  case 'i':
  case 'l':
  case 'q':
    if (itemsize == 4)
      return ember::DType::kInt32;
    if (itemsize == 8)
      return ember::DType::kInt64;
    return std::nullopt;
  }
  return std::nullopt;
}

/// The buffer format and numpy dtype name of an Ember dtype.
std::pair<const char *, const char *> formatOf(ember::DType dtype) {
  switch (dtype) {
  case ember::DType::kFloat32:
    return {"f", "float32"};
  case ember::DType::kFloat16:
    return {"e", "float16"};
  case ember::DType::kBFloat16:
    return {"H", "uint16"}; // numpy has no bfloat16: the raw bits
  case ember::DType::kFloat64:
    return {"d", "float64"};
  case ember::DType::kInt8:
    return {"b", "int8"};
  case ember::DType::kUInt8:
    return {"B", "uint8"};
  case ember::DType::kInt32:
    return {"i", "int32"};
  case ember::DType::kInt64:
    return {"q", "int64"};
  case ember::DType::kBool:
    return {"?", "bool"};
  }
  return {"f", "float32"};
}

bool cContiguous(const py::buffer_info &info) {
  py::ssize_t expected = info.itemsize;
  for (py::ssize_t d = info.ndim - 1; d >= 0; --d) {
    if (info.shape[d] != 1 && info.strides[d] != expected)
      return false;
    expected *= info.shape[d];
  }
  return true;
}

/// A view of `obj` (anything with the buffer protocol: numpy arrays,
/// memoryviews, ...; copied by numpy.ascontiguousarray only when it is not
/// C-contiguous) as a tensor; `keep` holds what it views for the run.
ember::Tensor viewOf(const std::string &what, py::handle obj,
                     std::vector<py::object> &keep) {
  if (!PyObject_CheckBuffer(obj.ptr()))
    raise(ember::invalidArgument(
        what + ": a " + std::string(py::str(obj.get_type().attr("__name__"))) +
        " is not an array (numpy arrays, torch tensors and buffers are)"));
  py::object holder = py::reinterpret_borrow<py::object>(obj);
  py::buffer_info info = py::buffer(holder).request();
  if (!cContiguous(info)) {
    holder = py::module_::import("numpy").attr("ascontiguousarray")(obj);
    info = py::buffer(holder).request();
  }
  std::optional<ember::DType> dtype = dtypeOf(info.format, info.itemsize);
  if (!dtype)
    raise(ember::invalidArgument(
        what + ": element format '" + info.format + "' (" +
        std::to_string(info.itemsize) +
        " bytes) has no Ember dtype (float32/16/64, int8/32/64, uint8, "
        "bool; not complex, not big-endian)"));
  std::vector<int64_t> dims(info.shape.begin(), info.shape.end());
  ember::Shape shape = take(ember::Shape::fromDims(dims.data(), dims.size()));
  keep.push_back(holder);
  return ember::Tensor::view(info.ptr, *dtype, shape);
}

/// An output's memory, exported through the buffer protocol: the numpy
/// array made over it keeps it (and so the tensor) alive.
struct OutputBuffer {
  ember::Tensor tensor;
};

/// A numpy array over the output's buffer (no copy).
py::object toNumpy(const ember::Tensor &tensor) {
  py::object buffer = py::cast(OutputBuffer{tensor});
  return py::module_::import("numpy").attr("asarray")(buffer);
}

py::list tensorInfos(const std::vector<ember::TensorInfo> &infos) {
  py::list out;
  for (const ember::TensorInfo &t : infos) {
    py::dict d;
    d["name"] = t.name;
    d["dtype"] = std::string(ember::dtypeName(t.dtype));
    d["dims"] = t.dims;
    if (!t.bagOffsets.empty())
      d["bag_offsets"] = t.bagOffsets;
    out.append(d);
  }
  return out;
}

/// The inputs of one run: name -> array, or name -> (keys, values, lengths,
/// weights|None) for a KJT input. `where` ("batch 2: " or empty) prefixes
/// the errors; `keep` holds what the tensors view.
ember::RunInputs runInputsOf(const py::dict &inputs, const std::string &where,
                             std::vector<py::object> &keep) {
  ember::RunInputs in;
  for (auto [key, value] : inputs) {
    std::string name = py::str(key);
    if (py::isinstance<py::tuple>(value)) {
      auto parts = value.cast<py::tuple>();
      if (parts.size() != 4)
        raise(ember::invalidArgument(
            where + "KJT input '" + name +
            "': expected (keys, values, lengths, weights or None)"));
      auto keys = parts[0].cast<std::vector<std::string>>();
      ember::Tensor values = viewOf(where + name + ".values", parts[1], keep);
      ember::Tensor lengths = viewOf(where + name + ".lengths", parts[2], keep);
      ember::Tensor weights;
      if (!parts[3].is_none())
        weights = viewOf(where + name + ".weights", parts[3], keep);
      auto kjt = ember::KeyedJaggedTensor::fromLengths(std::move(keys), values,
                                                       lengths, weights);
      if (!kjt.isOk())
        raise(kjt.status().withContext(where + "KJT input '" + name + "'"));
      in.set(name, std::move(*kjt));
    } else {
      in.set(name, viewOf(where + name, value, keep));
    }
  }
  return in;
}

/// name -> numpy array over each output's buffer.
py::dict outputsDict(const ember::RunOutputs &out) {
  py::dict result;
  for (size_t i = 0; i < out.size(); ++i)
    result[py::str(out.name(i))] = toNumpy(out.tensor(i));
  return result;
}

class PySession {
public:
  PySession(const std::string &plan, int threads, const std::string &device,
            const std::string &boundsCheck, bool verifyChecksums,
            bool launchEnvironment, double timeoutSeconds,
            int64_t maxTensorBytes, const std::string &rendezvous,
            const std::string &weightMemory, const std::string &overlap,
            const std::string &quantizedSums) {
    ember::SessionOptions options;
    options.weightMemory = weightMemory;
    options.overlap = overlap;
    options.quantizedSums = quantizedSums;
    options.threads = threads;
    options.device = device;
    options.verifyChecksums = verifyChecksums;
    options.collectiveTimeoutSeconds = timeoutSeconds;
    options.maxTensorBytes = maxTensorBytes;
    if (boundsCheck == "fatal")
      options.boundsCheck = ember::BoundsCheckMode::kFatal;
    else if (boundsCheck == "warning")
      options.boundsCheck = ember::BoundsCheckMode::kWarning;
    else if (boundsCheck == "ignore")
      options.boundsCheck = ember::BoundsCheckMode::kIgnore;
    else
      raise(ember::invalidArgument("bounds_check must be fatal, warning or "
                                   "ignore, not '" + boundsCheck + "'"));
    if (launchEnvironment) {
      ember::Status s = ember::applyLaunchEnvironment(options);
      if (!s.isOk())
        raise(s);
    }
    if (!rendezvous.empty())
      options.rendezvous = rendezvous;
    py::gil_scoped_release release;
    auto loaded = ember::Session::load(plan, options);
    if (!loaded.isOk()) {
      py::gil_scoped_acquire acquire;
      raise(loaded.status());
    }
    session_ = std::move(*loaded);
  }

  /// inputs: name -> array, or name -> (keys, values, lengths, weights|None)
  /// for a KJT input.
  py::dict run(const py::dict &inputs, bool gather) {
    std::vector<py::object> keep;
    ember::RunInputs in = runInputsOf(inputs, "", keep);
    ember::RunOutputs local, global;
    ember::Status status;
    {
      py::gil_scoped_release release;
      status = session_->run(in, &local);
      if (status.isOk() && gather)
        status = session_->gatherOutputs(local, &global);
    }
    if (!status.isOk())
      raise(status);
    return outputsDict(gather ? global : local);
  }

  /// Cross-batch pipelining (Session::runPipelined): `batches` is a list of
  /// input dicts as `run` takes; returns one output dict per batch, in
  /// order. With `gather`, each batch's outputs are gathered from every rank
  /// after the pipelined run (in batch order, so every rank pairs them).
  py::list runPipelined(const py::list &batches, int depth, bool gather) {
    std::vector<py::object> keep;
    std::vector<ember::RunInputs> in;
    in.reserve(batches.size());
    for (size_t b = 0; b < batches.size(); ++b) {
      const std::string where = "batch " + std::to_string(b);
      py::handle batch = batches[b];
      if (!py::isinstance<py::dict>(batch))
        throw py::type_error(
            "run_pipelined: " + where + " is a " +
            std::string(py::str(batch.get_type().attr("__name__"))) +
            ", not a dict of named inputs");
      in.push_back(runInputsOf(batch.cast<py::dict>(), where + ": ", keep));
    }
    std::vector<ember::RunOutputs> local, global;
    ember::Status status;
    {
      py::gil_scoped_release release;
      status = session_->runPipelined(in, depth, &local);
      if (status.isOk() && gather) {
        global.resize(local.size());
        for (size_t b = 0; b < local.size() && status.isOk(); ++b) {
          status = session_->gatherOutputs(local[b], &global[b]);
          if (!status.isOk())
            status = status.withContext("gathering the outputs of batch " +
                                        std::to_string(b));
        }
      }
    }
    if (!status.isOk())
      raise(status);
    py::list result;
    for (const ember::RunOutputs &out : gather ? global : local)
      result.append(outputsDict(out));
    return result;
  }

  py::dict signature() const {
    const ember::ModelSignature &sig = session_->signature();
    py::dict d;
    d["inputs"] = tensorInfos(sig.inputs);
    d["outputs"] = tensorInfos(sig.outputs);
    py::list kjts;
    for (const ember::KjtInfo &k : sig.kjtInputs) {
      py::dict kd;
      kd["name"] = k.name;
      kd["keys"] = k.keys;
      kd["values_dtype"] = std::string(ember::dtypeName(k.valuesDType));
      kd["lengths_dtype"] = std::string(ember::dtypeName(k.lengthsDType));
      kd["weighted"] = k.hasWeights;
      kd["batch_symbol"] = k.batchSymbol;
      kjts.append(kd);
    }
    d["kjt_inputs"] = kjts;
    d["batch_symbol"] = sig.batchSymbol;
    return d;
  }

  int rank() const { return session_->options().rank; }
  int worldSize() const { return session_->options().worldSize; }
  std::string device() const { return session_->deviceDescription(); }

  void barrier() const {
    ember::Status status;
    {
      py::gil_scoped_release release;
      status = session_->barrier();
    }
    if (!status.isOk())
      raise(status);
  }

private:
  std::unique_ptr<ember::Session> session_;
};

} // namespace

PYBIND11_MODULE(_ember_runtime, m) {
  m.doc() = "Ember's runtime: load a compiled plan and run it "
            "(use ember.Session)";
  py::object base = py::module_::import("builtins").attr("RuntimeError");
  py::object error = py::reinterpret_steal<py::object>(
      PyErr_NewExceptionWithDoc(
          "ember.EmberError",
          "An error of Ember's runtime; .code is its status code.",
          base.ptr(), nullptr));
  gEmberError = error.ptr();
  m.attr("EmberError") = error;
  m.attr("have_cuda") = ember::haveCudaBackend();
  py::class_<OutputBuffer>(m, "_OutputBuffer", py::buffer_protocol())
      .def_buffer([](OutputBuffer &b) -> py::buffer_info {
        const ember::Tensor &t = b.tensor;
        std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end());
        std::vector<py::ssize_t> strides(shape.size());
        py::ssize_t stride = static_cast<py::ssize_t>(ember::dtypeSize(t.dtype()));
        for (size_t d = shape.size(); d-- > 0;) {
          strides[d] = stride;
          stride *= shape[d];
        }
        return py::buffer_info(const_cast<void *>(t.data()),
                               static_cast<py::ssize_t>(ember::dtypeSize(t.dtype())),
                               formatOf(t.dtype()).first,
                               static_cast<py::ssize_t>(shape.size()), shape,
                               strides, /*readonly=*/false);
      });
  py::class_<PySession>(m, "Session")
      .def(py::init<const std::string &, int, const std::string &,
                    const std::string &, bool, bool, double, int64_t,
                    const std::string &, const std::string &,
                    const std::string &, const std::string &>(),
           py::arg("plan"), py::arg("threads") = 1, py::arg("device") = "cpu",
           py::arg("bounds_check") = "fatal",
           py::arg("verify_checksums") = true,
           py::arg("launch_environment") = true, py::arg("timeout") = 60.0,
           py::arg("max_tensor_bytes") = 0, py::arg("rendezvous") = "",
           py::arg("weight_memory") = "mmap", py::arg("overlap") = "auto",
           py::arg("quantized_sums") = "auto")
      .def("run", &PySession::run, py::arg("inputs"), py::arg("gather") = false)
      .def("run_pipelined", &PySession::runPipelined, py::arg("batches"),
           py::arg("depth") = 2, py::arg("gather") = false)
      .def("barrier", &PySession::barrier)
      .def_property_readonly("signature", &PySession::signature)
      .def_property_readonly("rank", &PySession::rank)
      .def_property_readonly("world_size", &PySession::worldSize)
      .def_property_readonly("device", &PySession::device);
}

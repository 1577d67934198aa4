//===- c_api.cpp - The Ember runtime's C API ------------------------------===//
//
// Every entry point catches every exception (std::bad_alloc included) and
// turns it into a status; NULL handles are errors.
//
//===----------------------------------------------------------------------===//
#include "ember/c_api.h"

#include "ember/session.h"
#include "ember/trace.h"
#include "io/atomic_file.h"

#include <new>
#include <string>
#include <vector>

struct EmberStatus {
  EmberStatusCode code;
  std::string message;
};

struct EmberSessionOptions {
  ember::SessionOptions options;
};

struct EmberTensor {
  ember::Tensor tensor;
};

struct EmberSession {
  std::unique_ptr<ember::Session> session;
  std::vector<std::string> inputNames; // dense, then KJT
  std::vector<std::string> outputNames;
};

struct EmberInputs {
  ember::RunInputs inputs;
};

struct EmberOutputs {
  ember::RunOutputs outputs;
  std::vector<EmberTensor> tensors; // parallel to outputs
};

namespace {

EmberStatusCode fail(EmberStatus **status, EmberStatusCode code,
                     std::string message) {
  if (status) {
    *status = nullptr;
    try {
      *status = new EmberStatus{code, std::move(message)};
    } catch (...) {
      // Out of memory while reporting an error: the code still tells.
    }
  }
  return code;
}

EmberStatusCode report(EmberStatus **status, const ember::Status &s) {
  if (s.isOk()) {
    if (status)
      *status = nullptr;
    return EMBER_OK;
  }
  return fail(status, static_cast<EmberStatusCode>(s.code()), s.message());
}

EmberStatusCode ok(EmberStatus **status) {
  if (status)
    *status = nullptr;
  return EMBER_OK;
}

/// Runs body, converting any exception into a status.
template <typename Fn>
EmberStatusCode guarded(EmberStatus **status, const char *fn, Fn &&body) {
  try {
    return body();
  } catch (const std::bad_alloc &) {
    return fail(status, EMBER_RESOURCE_EXHAUSTED,
                std::string(fn) + ": out of memory");
  } catch (const std::exception &e) {
    return fail(status, EMBER_INTERNAL, std::string(fn) + ": " + e.what());
  } catch (...) {
    return fail(status, EMBER_INTERNAL,
                std::string(fn) + ": unknown exception");
  }
}

EmberStatusCode nullArgument(EmberStatus **status, const char *fn,
                             const char *arg) {
  return fail(status, EMBER_INVALID_ARGUMENT,
              std::string(fn) + ": " + arg + " is NULL");
}

bool validDType(int d) { return d >= EMBER_FLOAT32 && d <= EMBER_FLOAT64; }

} // namespace

extern "C" {

EmberStatusCode ember_status_code(const EmberStatus *status) {
  return status ? status->code : EMBER_OK;
}

const char *ember_status_message(const EmberStatus *status) {
  return status ? status->message.c_str() : "";
}

void ember_status_free(EmberStatus *status) { delete status; }

const char *ember_status_code_name(EmberStatusCode code) {
  if (code < EMBER_OK || code > EMBER_INTERNAL)
    return "Unknown";
  return ember::statusCodeName(static_cast<ember::StatusCode>(code));
}

EmberSessionOptions *ember_session_options_create(void) {
  try {
    return new EmberSessionOptions();
  } catch (...) {
    return nullptr;
  }
}

void ember_session_options_free(EmberSessionOptions *options) {
  delete options;
}

EmberStatusCode ember_session_options_set_threads(EmberSessionOptions *options,
                                                  int threads,
                                                  EmberStatus **status) {
  if (!options)
    return nullArgument(status, "ember_session_options_set_threads", "options");
  if (threads < 0 || threads > 1024)
    return fail(
        status, EMBER_INVALID_ARGUMENT,
        "ember_session_options_set_threads: " + std::to_string(threads) +
            " threads is out of range (0 = one per core)");
  options->options.threads = threads;
  return ok(status);
}

EmberStatusCode ember_session_options_set_rank(EmberSessionOptions *options,
                                               int rank, int world_size,
                                               EmberStatus **status) {
  if (!options)
    return nullArgument(status, "ember_session_options_set_rank", "options");
  if (world_size < 1 || world_size > 65536 || rank < 0 || rank >= world_size)
    return fail(status, EMBER_INVALID_ARGUMENT,
                "ember_session_options_set_rank: rank " + std::to_string(rank) +
                    " is not in a world of " + std::to_string(world_size));
  options->options.rank = rank;
  options->options.worldSize = world_size;
  return ok(status);
}

EmberStatusCode
ember_session_options_set_rendezvous(EmberSessionOptions *options,
                                     const char *rendezvous,
                                     EmberStatus **status) {
  if (!options)
    return nullArgument(status, "ember_session_options_set_rendezvous",
                        "options");
  if (!rendezvous)
    return nullArgument(status, "ember_session_options_set_rendezvous",
                        "rendezvous");
  try {
    options->options.rendezvous = rendezvous;
  } catch (...) {
    return fail(status, EMBER_RESOURCE_EXHAUSTED, "out of memory");
  }
  return ok(status);
}

EmberStatusCode ember_session_options_set_device(EmberSessionOptions *options,
                                                 const char *device,
                                                 EmberStatus **status) {
  if (!options)
    return nullArgument(status, "ember_session_options_set_device", "options");
  if (!device)
    return nullArgument(status, "ember_session_options_set_device", "device");
  std::string d = device;
  bool cudaIndex = d.rfind("cuda:", 0) == 0 && d.size() > 5 && d.size() <= 9 &&
                   d.find_first_not_of("0123456789", 5) == std::string::npos;
  if (d != "cpu" && d != "cuda" && !cudaIndex)
    return fail(status, EMBER_INVALID_ARGUMENT,
                "ember_session_options_set_device: '" + d +
                    "' is not cpu, cuda or cuda:N");
  try {
    options->options.device = d;
  } catch (...) {
    return fail(status, EMBER_RESOURCE_EXHAUSTED, "out of memory");
  }
  return ok(status);
}

EmberStatusCode ember_session_options_set_collective_timeout(
    EmberSessionOptions *options, double seconds, EmberStatus **status) {
  if (!options)
    return nullArgument(status, "ember_session_options_set_collective_timeout",
                        "options");
  if (!(seconds > 0) || seconds > 86400)
    return fail(status, EMBER_INVALID_ARGUMENT,
                "ember_session_options_set_collective_timeout: " +
                    std::to_string(seconds) + " s is out of range (0, 86400]");
  options->options.collectiveTimeoutSeconds = seconds;
  return ok(status);
}

EmberStatusCode ember_session_options_set_max_tensor_bytes(
    EmberSessionOptions *options, int64_t bytes, EmberStatus **status) {
  if (!options)
    return nullArgument(status, "ember_session_options_set_max_tensor_bytes",
                        "options");
  if (bytes < 0)
    return fail(status, EMBER_INVALID_ARGUMENT,
                "ember_session_options_set_max_tensor_bytes: " +
                    std::to_string(bytes) + " is negative (0 = the default)");
  options->options.maxTensorBytes = bytes;
  return ok(status);
}

EmberStatusCode ember_session_options_set_overlap(EmberSessionOptions *options,
                                                  const char *mode,
                                                  EmberStatus **status) {
  if (!options)
    return nullArgument(status, "ember_session_options_set_overlap",
                        "options");
  if (!mode)
    return nullArgument(status, "ember_session_options_set_overlap", "mode");
  try {
    std::string m = mode;
    if (m != "auto" && m != "streams" && m != "off")
      return fail(status, EMBER_INVALID_ARGUMENT,
                  "ember_session_options_set_overlap: '" + m +
                      "' is not auto, streams or off");
    options->options.overlap = m;
  } catch (...) {
    return fail(status, EMBER_RESOURCE_EXHAUSTED, "out of memory");
  }
  return ok(status);
}

EmberStatusCode ember_session_options_set_quantized_sums(
    EmberSessionOptions *options, const char *order, EmberStatus **status) {
  const char *fn = "ember_session_options_set_quantized_sums";
  if (!options)
    return nullArgument(status, fn, "options");
  if (!order)
    return nullArgument(status, fn, "order");
  try {
    std::string o = order;
    if (o != "auto" && o != "fast" && o != "fbgemm")
      return fail(status, EMBER_INVALID_ARGUMENT,
                  std::string(fn) + ": '" + o +
                      "' is not auto, fast or fbgemm");
    options->options.quantizedSums = o;
  } catch (...) {
    return fail(status, EMBER_RESOURCE_EXHAUSTED, "out of memory");
  }
  return ok(status);
}

EmberStatusCode
ember_session_options_set_record_trace(EmberSessionOptions *options,
                                       int record, EmberStatus **status) {
  if (!options)
    return nullArgument(status, "ember_session_options_set_record_trace",
                        "options");
  options->options.recordTrace = record != 0;
  return ok(status);
}

EmberStatusCode
ember_session_options_apply_launch_environment(EmberSessionOptions *options,
                                               EmberStatus **status) {
  if (!options)
    return nullArgument(
        status, "ember_session_options_apply_launch_environment", "options");
  try {
    ember::SessionOptions copy = options->options;
    ember::Status s = ember::applyLaunchEnvironment(copy);
    if (!s.isOk())
      return fail(status, static_cast<EmberStatusCode>(s.code()), s.message());
    options->options = copy;
  } catch (...) {
    return fail(status, EMBER_RESOURCE_EXHAUSTED, "out of memory");
  }
  return ok(status);
}

EmberStatusCode ember_session_options_set_bounds_check(
    EmberSessionOptions *options, EmberBoundsCheck mode, EmberStatus **status) {
  if (!options)
    return nullArgument(status, "ember_session_options_set_bounds_check",
                        "options");
  switch (mode) {
  case EMBER_BOUNDS_FATAL:
    options->options.boundsCheck = ember::BoundsCheckMode::kFatal;
    break;
  case EMBER_BOUNDS_WARNING:
    options->options.boundsCheck = ember::BoundsCheckMode::kWarning;
    break;
  case EMBER_BOUNDS_IGNORE:
    options->options.boundsCheck = ember::BoundsCheckMode::kIgnore;
    break;
  default:
    return fail(status, EMBER_INVALID_ARGUMENT,
                "ember_session_options_set_bounds_check: unknown mode " +
                    std::to_string(static_cast<int>(mode)));
  }
  return ok(status);
}

EmberStatusCode ember_session_create(const char *plan_path,
                                     const EmberSessionOptions *options,
                                     EmberSession **session,
                                     EmberStatus **status) {
  const char *fn = "ember_session_create";
  return guarded(status, fn, [&]() -> EmberStatusCode {
    if (!session)
      return nullArgument(status, fn, "session");
    *session = nullptr;
    if (!plan_path)
      return nullArgument(status, fn, "plan_path");
    ember::SessionOptions opts =
        options ? options->options : ember::SessionOptions();
    auto loaded = ember::Session::load(plan_path, opts);
    if (!loaded)
      return report(status, loaded.status());
    auto handle = std::make_unique<EmberSession>();
    handle->session = std::move(*loaded);
    const ember::ModelSignature &sig = handle->session->signature();
    for (const auto &in : sig.inputs)
      handle->inputNames.push_back(in.name);
    for (const auto &in : sig.kjtInputs)
      handle->inputNames.push_back(in.name);
    for (const auto &out : sig.outputs)
      handle->outputNames.push_back(out.name);
    *session = handle.release();
    return ok(status);
  });
}

void ember_session_free(EmberSession *session) { delete session; }

EmberStatusCode ember_session_write_trace(const EmberSession *session,
                                          const char *path,
                                          EmberStatus **status) {
  if (!session)
    return nullArgument(status, "ember_session_write_trace", "session");
  if (!path)
    return nullArgument(status, "ember_session_write_trace", "path");
  try {
    if (!session->session->options().recordTrace)
      return fail(status, EMBER_FAILED_PRECONDITION,
                  "ember_session_write_trace: the session does not record "
                  "traces (ember_session_options_set_record_trace)");
    // The file first: a path that cannot be written keeps the runs.
    ember::AtomicFile file;
    std::string error;
    if (!file.open(path, &error))
      return fail(status, EMBER_INVALID_ARGUMENT,
                  "ember_session_write_trace: " + error);
    ember::SessionTrace trace = session->session->takeTrace();
    auto json = ember::mergeTraceParts(
        {ember::encodeTracePart(trace, trace.runs.size() > 1)},
        {{"overlap", "\"" + trace.overlap + "\""}});
    if (!json.isOk())
      return fail(status, static_cast<EmberStatusCode>(json.status().code()),
                  json.status().message());
    file.write(json->data(), json->size());
    if (!file.commit(&error))
      return fail(status, EMBER_INVALID_ARGUMENT,
                  "ember_session_write_trace: " + error);
  } catch (...) {
    return fail(status, EMBER_RESOURCE_EXHAUSTED, "out of memory");
  }
  return ok(status);
}

size_t ember_session_num_inputs(const EmberSession *session) {
  return session ? session->inputNames.size() : 0;
}

const char *ember_session_input_name(const EmberSession *session,
                                     size_t index) {
  if (!session || index >= session->inputNames.size())
    return nullptr;
  return session->inputNames[index].c_str();
}

int ember_session_input_is_kjt(const EmberSession *session, size_t index) {
  if (!session || index >= session->inputNames.size())
    return 0;
  return index >= session->session->signature().inputs.size() ? 1 : 0;
}

namespace {
const ember::TensorInfo *denseInfo(const EmberSession *session, size_t index) {
  if (!session || index >= session->session->signature().inputs.size())
    return nullptr;
  return &session->session->signature().inputs[index];
}
const ember::KjtInfo *kjtInfo(const EmberSession *session, size_t index) {
  if (!session)
    return nullptr;
  const auto &sig = session->session->signature();
  if (index < sig.inputs.size() ||
      index >= sig.inputs.size() + sig.kjtInputs.size())
    return nullptr;
  return &sig.kjtInputs[index - sig.inputs.size()];
}
} // namespace

EmberDType ember_session_input_dtype(const EmberSession *session,
                                     size_t index) {
  if (const ember::TensorInfo *info = denseInfo(session, index))
    return static_cast<EmberDType>(info->dtype);
  if (const ember::KjtInfo *info = kjtInfo(session, index))
    return static_cast<EmberDType>(info->valuesDType);
  return EMBER_FLOAT32;
}

size_t ember_session_input_rank(const EmberSession *session, size_t index) {
  if (const ember::TensorInfo *info = denseInfo(session, index))
    return info->dims.size();
  return kjtInfo(session, index) ? 1 : 0;
}

int64_t ember_session_input_dim(const EmberSession *session, size_t index,
                                size_t d) {
  const ember::TensorInfo *info = denseInfo(session, index);
  if (!info || d >= info->dims.size())
    return -1;
  const std::string &dim = info->dims[d];
  if (dim.empty() || dim.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::stoll(dim);
}

size_t ember_session_kjt_num_keys(const EmberSession *session, size_t index) {
  const ember::KjtInfo *info = kjtInfo(session, index);
  return info ? info->keys.size() : 0;
}

const char *ember_session_kjt_key(const EmberSession *session, size_t index,
                                  size_t k) {
  const ember::KjtInfo *info = kjtInfo(session, index);
  if (!info || k >= info->keys.size())
    return nullptr;
  return info->keys[k].c_str();
}

size_t ember_session_num_outputs(const EmberSession *session) {
  return session ? session->outputNames.size() : 0;
}

const char *ember_session_output_name(const EmberSession *session,
                                      size_t index) {
  if (!session || index >= session->outputNames.size())
    return nullptr;
  return session->outputNames[index].c_str();
}

EmberStatusCode ember_tensor_create_view(EmberDType dtype, const int64_t *dims,
                                         size_t rank, void *data,
                                         EmberTensor **tensor,
                                         EmberStatus **status) {
  const char *fn = "ember_tensor_create_view";
  return guarded(status, fn, [&]() -> EmberStatusCode {
    if (!tensor)
      return nullArgument(status, fn, "tensor");
    *tensor = nullptr;
    if (!validDType(dtype))
      return fail(status, EMBER_INVALID_ARGUMENT,
                  std::string(fn) + ": unknown dtype " +
                      std::to_string(static_cast<int>(dtype)));
    if (rank > 0 && !dims)
      return nullArgument(status, fn, "dims");
    auto shape = ember::Shape::fromDims(dims, rank);
    if (!shape)
      return report(status, shape.status().withContext(fn));
    if (!data && shape->numel() > 0)
      return nullArgument(status, fn, "data");
    *tensor = new EmberTensor{
        ember::Tensor::view(data, static_cast<ember::DType>(dtype), *shape)};
    return ok(status);
  });
}

void ember_tensor_free(EmberTensor *tensor) { delete tensor; }

EmberDType ember_tensor_dtype(const EmberTensor *tensor) {
  return tensor ? static_cast<EmberDType>(tensor->tensor.dtype())
                : EMBER_FLOAT32;
}

size_t ember_tensor_rank(const EmberTensor *tensor) {
  return tensor ? static_cast<size_t>(tensor->tensor.rank()) : 0;
}

int64_t ember_tensor_dim(const EmberTensor *tensor, size_t i) {
  if (!tensor || i >= static_cast<size_t>(tensor->tensor.rank()))
    return -1;
  return tensor->tensor.dim(static_cast<int>(i));
}

int64_t ember_tensor_numel(const EmberTensor *tensor) {
  return tensor ? tensor->tensor.numel() : 0;
}

size_t ember_tensor_nbytes(const EmberTensor *tensor) {
  return tensor ? tensor->tensor.nbytes() : 0;
}

const void *ember_tensor_data(const EmberTensor *tensor) {
  return tensor ? tensor->tensor.data() : nullptr;
}

EmberInputs *ember_inputs_create(void) {
  try {
    return new EmberInputs();
  } catch (...) {
    return nullptr;
  }
}

void ember_inputs_free(EmberInputs *inputs) { delete inputs; }

EmberStatusCode ember_inputs_set_tensor(EmberInputs *inputs, const char *name,
                                        const EmberTensor *tensor,
                                        EmberStatus **status) {
  const char *fn = "ember_inputs_set_tensor";
  return guarded(status, fn, [&]() -> EmberStatusCode {
    if (!inputs)
      return nullArgument(status, fn, "inputs");
    if (!name)
      return nullArgument(status, fn, "name");
    if (!tensor)
      return nullArgument(status, fn, "tensor");
    inputs->inputs.set(name, tensor->tensor);
    return ok(status);
  });
}

EmberStatusCode ember_inputs_set_kjt(EmberInputs *inputs, const char *name,
                                     const char *const *keys, size_t num_keys,
                                     const EmberTensor *values,
                                     const EmberTensor *lengths,
                                     const EmberTensor *weights,
                                     EmberStatus **status) {
  const char *fn = "ember_inputs_set_kjt";
  return guarded(status, fn, [&]() -> EmberStatusCode {
    if (!inputs)
      return nullArgument(status, fn, "inputs");
    if (!name)
      return nullArgument(status, fn, "name");
    if (!keys && num_keys > 0)
      return nullArgument(status, fn, "keys");
    if (!values)
      return nullArgument(status, fn, "values");
    if (!lengths)
      return nullArgument(status, fn, "lengths");
    std::vector<std::string> keyList;
    for (size_t i = 0; i < num_keys; ++i) {
      if (!keys[i])
        return nullArgument(status, fn,
                            ("keys[" + std::to_string(i) + "]").c_str());
      keyList.emplace_back(keys[i]);
    }
    auto kjt = ember::KeyedJaggedTensor::fromLengths(
        std::move(keyList), values->tensor, lengths->tensor,
        weights ? weights->tensor : ember::Tensor());
    if (!kjt)
      return report(status, kjt.status().withContext("input '" +
                                                     std::string(name) + "'"));
    inputs->inputs.set(name, std::move(*kjt));
    return ok(status);
  });
}

EmberStatusCode ember_session_run(const EmberSession *session,
                                  const EmberInputs *inputs,
                                  EmberOutputs **outputs,
                                  EmberStatus **status) {
  const char *fn = "ember_session_run";
  return guarded(status, fn, [&]() -> EmberStatusCode {
    if (!session)
      return nullArgument(status, fn, "session");
    if (!inputs)
      return nullArgument(status, fn, "inputs");
    if (!outputs)
      return nullArgument(status, fn, "outputs");
    if (!*outputs)
      *outputs = new EmberOutputs();
    EmberOutputs &out = **outputs;
    out.tensors.clear();
    ember::Status s = session->session->run(inputs->inputs, &out.outputs);
    if (!s.isOk())
      return report(status, s);
    for (size_t i = 0; i < out.outputs.size(); ++i)
      out.tensors.push_back(EmberTensor{out.outputs.tensor(i)});
    return ok(status);
  });
}

EmberStatusCode ember_session_run_pipelined(const EmberSession *session,
                                            const EmberInputs *const *inputs,
                                            size_t num_batches, int depth,
                                            EmberOutputs **outputs,
                                            EmberStatus **status) {
  const char *fn = "ember_session_run_pipelined";
  return guarded(status, fn, [&]() -> EmberStatusCode {
    if (!session)
      return nullArgument(status, fn, "session");
    if (num_batches > 0 && !inputs)
      return nullArgument(status, fn, "inputs");
    if (num_batches > 0 && !outputs)
      return nullArgument(status, fn, "outputs");
    std::vector<ember::RunInputs> batches;
    batches.reserve(num_batches);
    for (size_t b = 0; b < num_batches; ++b) {
      if (!inputs[b])
        return nullArgument(status, fn,
                            ("inputs[" + std::to_string(b) + "]").c_str());
      batches.push_back(inputs[b]->inputs);
    }
    std::vector<ember::RunOutputs> results;
    ember::Status s = session->session->runPipelined(batches, depth, &results);
    if (!s.isOk())
      return report(status, s);
    for (size_t b = 0; b < num_batches; ++b) {
      if (!outputs[b])
        outputs[b] = new EmberOutputs();
      EmberOutputs &out = *outputs[b];
      out.tensors.clear();
      out.outputs = std::move(results[b]);
      for (size_t i = 0; i < out.outputs.size(); ++i)
        out.tensors.push_back(EmberTensor{out.outputs.tensor(i)});
    }
    return ok(status);
  });
}

void ember_outputs_free(EmberOutputs *outputs) { delete outputs; }

size_t ember_outputs_count(const EmberOutputs *outputs) {
  return outputs ? outputs->tensors.size() : 0;
}

const char *ember_outputs_name(const EmberOutputs *outputs, size_t index) {
  if (!outputs || index >= outputs->tensors.size())
    return nullptr;
  return outputs->outputs.name(index).c_str();
}

EmberStatusCode ember_outputs_get(const EmberOutputs *outputs, const char *name,
                                  const EmberTensor **tensor,
                                  EmberStatus **status) {
  const char *fn = "ember_outputs_get";
  return guarded(status, fn, [&]() -> EmberStatusCode {
    if (!tensor)
      return nullArgument(status, fn, "tensor");
    *tensor = nullptr;
    if (!outputs)
      return nullArgument(status, fn, "outputs");
    if (!name)
      return nullArgument(status, fn, "name");
    for (size_t i = 0; i < outputs->tensors.size(); ++i)
      if (outputs->outputs.name(i) == name) {
        *tensor = &outputs->tensors[i];
        return ok(status);
      }
    std::string names;
    for (size_t i = 0; i < outputs->tensors.size(); ++i)
      names += (i ? ", " : "") + outputs->outputs.name(i);
    return fail(status, EMBER_NOT_FOUND,
                std::string(fn) + ": no output '" + name +
                    "'; the outputs are: " +
                    (names.empty() ? std::string("(none: the last run failed?)")
                                   : names));
  });
}

int64_t ember_outputs_invalid_ids(const EmberOutputs *outputs) {
  return outputs ? outputs->outputs.invalidIds() : 0;
}

} // extern "C"

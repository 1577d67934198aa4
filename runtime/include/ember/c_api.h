/*===- c_api.h - The Ember runtime's C API ------------------------*- C -*-===*
 *
 * A stable C ABI over ember::Session: opaque handles, status codes with
 * messages. No C++ exception crosses it, and a NULL or invalid argument is
 * an error status, never a crash.
 *
 * Every function that can fail returns an EmberStatusCode and, when `status`
 * is not NULL, stores a status object there on failure (NULL on success)
 * that the caller frees with ember_status_free.
 *
 *   EmberSession *session = NULL;
 *   EmberStatus *status = NULL;
 *   if (ember_session_create("model.plan", NULL, &session, &status)) {
 *     fprintf(stderr, "%s\n", ember_status_message(status));
 *     ember_status_free(status);
 *   }
 *
 * Tensors given as inputs are views of caller memory (no copy); the memory
 * must stay valid until ember_session_run returns. Output tensors belong to
 * their EmberOutputs and stay valid until it is freed or reused.
 *
 *===----------------------------------------------------------------------===*/
#ifndef EMBER_C_API_H
#define EMBER_C_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum EmberStatusCode {
  EMBER_OK = 0,
  EMBER_INVALID_ARGUMENT = 1,
  EMBER_NOT_FOUND = 2,
  EMBER_OUT_OF_RANGE = 3,
  EMBER_DATA_LOSS = 4,
  EMBER_FAILED_PRECONDITION = 5,
  EMBER_UNIMPLEMENTED = 6,
  EMBER_RESOURCE_EXHAUSTED = 7,
  EMBER_UNAVAILABLE = 8,
  EMBER_DEADLINE_EXCEEDED = 9,
  EMBER_INTERNAL = 10,
  /* Makes every int a valid value of the type, so that a bad value from a
   * caller is an error status, not undefined behaviour. Not a code. */
  EMBER_STATUS_CODE_MAX_ENUM = 0x7fffffff
} EmberStatusCode;

typedef enum EmberDType {
  EMBER_FLOAT32 = 0,
  EMBER_FLOAT16 = 1,
  EMBER_BFLOAT16 = 2,
  EMBER_INT8 = 3,
  EMBER_UINT8 = 4,
  EMBER_INT32 = 5,
  EMBER_INT64 = 6,
  EMBER_BOOL = 7,
  EMBER_FLOAT64 = 8,
  EMBER_DTYPE_MAX_ENUM = 0x7fffffff /* not a dtype; see EmberStatusCode */
} EmberDType;

typedef enum EmberBoundsCheck {
  EMBER_BOUNDS_FATAL = 0,
  EMBER_BOUNDS_WARNING = 1,
  EMBER_BOUNDS_IGNORE = 2,
  EMBER_BOUNDS_CHECK_MAX_ENUM = 0x7fffffff /* not a mode; see EmberStatusCode */
} EmberBoundsCheck;

typedef struct EmberStatus EmberStatus;
typedef struct EmberSessionOptions EmberSessionOptions;
typedef struct EmberSession EmberSession;
typedef struct EmberTensor EmberTensor;
typedef struct EmberInputs EmberInputs;
typedef struct EmberOutputs EmberOutputs;

/* --- status ------------------------------------------------------------- */
EmberStatusCode ember_status_code(const EmberStatus *status);
/* Never NULL; "" for a NULL status. Valid until the status is freed. */
const char *ember_status_message(const EmberStatus *status);
void ember_status_free(EmberStatus *status);
/* "InvalidArgument", ... */
const char *ember_status_code_name(EmberStatusCode code);

/* --- session options ---------------------------------------------------- */
EmberSessionOptions *ember_session_options_create(void);
void ember_session_options_free(EmberSessionOptions *options);
EmberStatusCode ember_session_options_set_threads(EmberSessionOptions *options,
                                                  int threads,
                                                  EmberStatus **status);
EmberStatusCode ember_session_options_set_bounds_check(
    EmberSessionOptions *options, EmberBoundsCheck mode, EmberStatus **status);

/* Multi-rank sessions (docs/runtime.md, "Multi-rank"): this process runs
 * rank `rank` of `world_size` (default 0 of 1); the ranks meet through
 * `rendezvous` ("file:DIR" or "tcp:HOST:PORT"); rendezvous and collectives
 * fail after `seconds` without hearing from a peer (default 60). */
EmberStatusCode ember_session_options_set_rank(EmberSessionOptions *options,
                                               int rank, int world_size,
                                               EmberStatus **status);
EmberStatusCode ember_session_options_set_rendezvous(
    EmberSessionOptions *options, const char *rendezvous, EmberStatus **status);
EmberStatusCode ember_session_options_set_collective_timeout(
    EmberSessionOptions *options, double seconds, EmberStatus **status);
/* Where the plan runs: "cpu" (default), "cuda" or "cuda:N" (a plan compiled
 * with --target cuda; docs/cuda.md). Checked here for its form; whether the
 * device exists is checked by ember_session_create. */
EmberStatusCode ember_session_options_set_device(EmberSessionOptions *options,
                                                 const char *device,
                                                 EmberStatus **status);
/* The largest buffer a run may allocate and a plan may declare
 * (SessionOptions::maxTensorBytes); 0 = EMBER_MAX_TENSOR_BYTES, else 64 GiB. */
EmberStatusCode
ember_session_options_set_max_tensor_bytes(EmberSessionOptions *options,
                                           int64_t bytes, EmberStatus **status);
/* How a plan's streams run on the CPU (SessionOptions::overlap): "auto"
 * (default) or "streams" run the collectives of stream 1 on a communication
 * thread of the session; "off" runs program order on the calling thread
 * (docs/runtime.md, "Overlapping communication"). */
EmberStatusCode ember_session_options_set_overlap(EmberSessionOptions *options,
                                                  const char *mode,
                                                  EmberStatus **status);
/* How pooled lookups add up quantized rows (SessionOptions::quantizedSums):
 * "auto" (default: EMBER_QUANTIZED_SUMS, else fast), "fast" or "fbgemm"
 * (FBGEMM's order and bits; docs/runtime.md, "Quantized lookups"). */
EmberStatusCode ember_session_options_set_quantized_sums(
    EmberSessionOptions *options, const char *order, EmberStatus **status);
/* Non-zero: record when each instruction of each run ran
 * (SessionOptions::recordTrace), for ember_session_write_trace. */
EmberStatusCode
ember_session_options_set_record_trace(EmberSessionOptions *options,
                                       int record, EmberStatus **status);
/* RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR + MASTER_PORT, EMBER_RENDEZVOUS,
 * EMBER_COMM_TIMEOUT, EMBER_COMM_HOST from the environment. */
EmberStatusCode
ember_session_options_apply_launch_environment(EmberSessionOptions *options,
                                               EmberStatus **status);

/* --- session ------------------------------------------------------------ */
/* options may be NULL (defaults: 1 thread, fatal bounds checks). */
EmberStatusCode ember_session_create(const char *plan_path,
                                     const EmberSessionOptions *options,
                                     EmberSession **session,
                                     EmberStatus **status);
void ember_session_free(EmberSession *session);
/* Writes the runs recorded since the last call (a session created with
 * ember_session_options_set_record_trace) as a Chrome/Perfetto trace of this
 * rank (docs/trace-format.md) to `path`, whole or not at all. */
EmberStatusCode ember_session_write_trace(const EmberSession *session,
                                          const char *path,
                                          EmberStatus **status);
/* Signature: names valid while the session lives. Dense inputs first, then
 * KJT inputs; ember_session_input_is_kjt tells which. */
size_t ember_session_num_inputs(const EmberSession *session);
const char *ember_session_input_name(const EmberSession *session, size_t index);
int ember_session_input_is_kjt(const EmberSession *session, size_t index);
/* Dense input `index`: its dtype, rank and dims (-1 for a symbolic dim such
 * as the batch "B"). For a KJT input: the values' dtype, rank 1, dim -1. */
EmberDType ember_session_input_dtype(const EmberSession *session, size_t index);
size_t ember_session_input_rank(const EmberSession *session, size_t index);
int64_t ember_session_input_dim(const EmberSession *session, size_t index,
                                size_t d);
/* The keys of a KJT input (0 / NULL for dense inputs). */
size_t ember_session_kjt_num_keys(const EmberSession *session, size_t index);
const char *ember_session_kjt_key(const EmberSession *session, size_t index,
                                  size_t k);
size_t ember_session_num_outputs(const EmberSession *session);
const char *ember_session_output_name(const EmberSession *session,
                                      size_t index);

/* --- tensors ------------------------------------------------------------ */
/* A view of caller memory (no copy). dims may be NULL when rank is 0. */
EmberStatusCode ember_tensor_create_view(EmberDType dtype, const int64_t *dims,
                                         size_t rank, void *data,
                                         EmberTensor **tensor,
                                         EmberStatus **status);
void ember_tensor_free(EmberTensor *tensor);
EmberDType ember_tensor_dtype(const EmberTensor *tensor);
size_t ember_tensor_rank(const EmberTensor *tensor);
/* Dimension i, or -1 when out of range. */
int64_t ember_tensor_dim(const EmberTensor *tensor, size_t i);
int64_t ember_tensor_numel(const EmberTensor *tensor);
size_t ember_tensor_nbytes(const EmberTensor *tensor);
const void *ember_tensor_data(const EmberTensor *tensor);

/* --- inputs ------------------------------------------------------------- */
EmberInputs *ember_inputs_create(void);
void ember_inputs_free(EmberInputs *inputs);
/* The input keeps its own handle to the tensor's view; the tensor object may
 * be freed afterwards (the memory it views may not). */
EmberStatusCode ember_inputs_set_tensor(EmberInputs *inputs, const char *name,
                                        const EmberTensor *tensor,
                                        EmberStatus **status);
/* A keyed jagged tensor: keys[num_keys], values int32|int64 [N], lengths
 * int32|int64 [num_keys * B], weights float32 [N] or NULL. */
EmberStatusCode ember_inputs_set_kjt(EmberInputs *inputs, const char *name,
                                     const char *const *keys, size_t num_keys,
                                     const EmberTensor *values,
                                     const EmberTensor *lengths,
                                     const EmberTensor *weights,
                                     EmberStatus **status);

/* --- running ------------------------------------------------------------ */
/* Thread-safe. *outputs is created on first use; pass the same EmberOutputs
 * again to reuse its buffers. */
EmberStatusCode ember_session_run(const EmberSession *session,
                                  const EmberInputs *inputs,
                                  EmberOutputs **outputs, EmberStatus **status);
/* Cross-batch pipelining (Session::runPipelined, docs/runtime.md): runs
 * inputs[0..num_batches) in order with up to `depth` batches in flight;
 * outputs[b] (created when NULL, else overwritten)
 * receives batch b's outputs, identical to running the batches one by one.
 * Depth 1 runs them one by one; depth > 1 needs a plan compiled with
 * pipeline stages and overlap on. Every rank passes the same depth and
 * number of batches (checked first: ranks that differ all get
 * EMBER_INVALID_ARGUMENT naming both ranks' values). */
EmberStatusCode ember_session_run_pipelined(const EmberSession *session,
                                            const EmberInputs *const *inputs,
                                            size_t num_batches, int depth,
                                            EmberOutputs **outputs,
                                            EmberStatus **status);
void ember_outputs_free(EmberOutputs *outputs);
size_t ember_outputs_count(const EmberOutputs *outputs);
const char *ember_outputs_name(const EmberOutputs *outputs, size_t index);
/* The output tensor (owned by outputs), or NULL with EMBER_NOT_FOUND. */
EmberStatusCode ember_outputs_get(const EmberOutputs *outputs, const char *name,
                                  const EmberTensor **tensor,
                                  EmberStatus **status);
/* Ids that EMBER_BOUNDS_WARNING replaced by zero rows in the last run. */
int64_t ember_outputs_invalid_ids(const EmberOutputs *outputs);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* EMBER_C_API_H */

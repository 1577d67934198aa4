/*===- serving.c - Serving an Ember plan from C --------------------------===*
 *
 *   ember-serving-c PLAN [BATCH]
 *
 * Loads a plan through the C API only (ember/c_api.h), makes a batch of
 * inputs for whatever signature the plan has (dense inputs filled with a
 * fixed pseudo-random sequence; KJT inputs with 0..3 ids per bag, ids in
 * [0, 5)), runs it twice reusing the same output object, and prints the
 * outputs. Exit status 0 on success, 1 on any error (with its message).
 *
 *===---------------------------------------------------------------------===*/
#include "ember/c_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INPUTS 16

static unsigned long long rngState = 12345;
static unsigned next_random(void) {
  rngState = rngState * 6364136223846793005ULL + 1442695040888963407ULL;
  return (unsigned)(rngState >> 33);
}

static size_t dtype_size(EmberDType dtype) {
  switch (dtype) {
  case EMBER_FLOAT64:
  case EMBER_INT64:
    return 8;
  case EMBER_FLOAT32:
  case EMBER_INT32:
    return 4;
  case EMBER_FLOAT16:
  case EMBER_BFLOAT16:
    return 2;
  default:
    return 1;
  }
}

/* Reports a failed call. Takes the status by address: it is read after the
 * call that sets it (argument evaluation order is unspecified in C). */
static int check(EmberStatusCode code, EmberStatus **status, const char *what) {
  if (code == EMBER_OK)
    return 0;
  fprintf(stderr, "ember-serving-c: %s failed: %s: %s\n", what,
          ember_status_code_name(code), ember_status_message(*status));
  ember_status_free(*status);
  *status = NULL;
  return 1;
}

/* Fills n elements of dtype with small values. */
static void fill(void *data, EmberDType dtype, int64_t n, int ids) {
  for (int64_t i = 0; i < n; ++i) {
    unsigned r = next_random();
    switch (dtype) {
    case EMBER_FLOAT32:
      ((float *)data)[i] = (float)(r % 2000) / 1000.0f - 1.0f;
      break;
    case EMBER_INT64:
      ((int64_t *)data)[i] = ids ? (int64_t)(r % 5) : (int64_t)(r % 100);
      break;
    case EMBER_INT32:
      ((int32_t *)data)[i] = ids ? (int32_t)(r % 5) : (int32_t)(r % 100);
      break;
    default:
      memset((char *)data + i * dtype_size(dtype), 0, dtype_size(dtype));
      break;
    }
  }
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: %s PLAN [BATCH]\n", argv[0]);
    return 2;
  }
  int64_t batch = argc == 3 ? atoll(argv[2]) : 4;
  if (batch <= 0 || batch > 1000000) {
    fprintf(stderr, "ember-serving-c: BATCH must be in [1, 1000000]\n");
    return 2;
  }

  EmberStatus *status = NULL;
  EmberSessionOptions *options = ember_session_options_create();
  EmberSession *session = NULL;
  if (!options ||
      check(ember_session_options_set_threads(options, 2, &status), &status,
            "set_threads") ||
      check(ember_session_options_set_bounds_check(
                options, EMBER_BOUNDS_WARNING, &status),
            &status, "set_bounds_check") ||
      check(ember_session_create(argv[1], options, &session, &status), &status,
            "loading the plan")) {
    ember_session_options_free(options);
    return 1;
  }
  ember_session_options_free(options);

  size_t numInputs = ember_session_num_inputs(session);
  if (numInputs > MAX_INPUTS) {
    fprintf(stderr, "ember-serving-c: more than %d inputs\n", MAX_INPUTS);
    ember_session_free(session);
    return 1;
  }
  /* Buffers the input tensors view; they must live until the runs end. */
  void *buffers[3 * MAX_INPUTS];
  size_t numBuffers = 0;
  EmberInputs *inputs = ember_inputs_create();
  int failed = inputs == NULL;
  for (size_t i = 0; i < numInputs && !failed; ++i) {
    const char *name = ember_session_input_name(session, i);
    EmberDType dtype = ember_session_input_dtype(session, i);
    EmberTensor *tensor = NULL;
    if (!ember_session_input_is_kjt(session, i)) {
      int64_t dims[8];
      size_t rank = ember_session_input_rank(session, i);
      int64_t numel = 1;
      for (size_t d = 0; d < rank && d < 8; ++d) {
        dims[d] = ember_session_input_dim(session, i, d);
        if (dims[d] < 0)
          dims[d] = batch; /* the symbolic batch dimension */
        numel *= dims[d];
      }
      void *data = buffers[numBuffers++] =
          calloc((size_t)numel + 1, dtype_size(dtype));
      fill(data, dtype, numel, 0);
      failed = check(ember_tensor_create_view(dtype, dims, rank, data, &tensor,
                                              &status),
                     &status, "creating a tensor") ||
               check(ember_inputs_set_tensor(inputs, name, tensor, &status),
                     &status, "setting an input");
      ember_tensor_free(tensor);
      printf("input %s: dense, %lld elements\n", name, (long long)numel);
    } else {
      size_t numKeys = ember_session_kjt_num_keys(session, i);
      const char *keys[64];
      int64_t numBags = (int64_t)numKeys * batch, numValues = 0;
      int64_t *lengths = buffers[numBuffers++] =
          calloc((size_t)numBags + 1, sizeof(int64_t));
      for (size_t k = 0; k < numKeys && k < 64; ++k)
        keys[k] = ember_session_kjt_key(session, i, k);
      for (int64_t b = 0; b < numBags; ++b)
        numValues += lengths[b] = next_random() % 4;
      void *values = buffers[numBuffers++] =
          calloc((size_t)numValues + 1, dtype_size(dtype));
      fill(values, dtype, numValues, 1);
      EmberTensor *valuesTensor = NULL, *lengthsTensor = NULL;
      failed =
          check(ember_tensor_create_view(dtype, &numValues, 1, values,
                                         &valuesTensor, &status),
                &status, "creating KJT values") ||
          check(ember_tensor_create_view(EMBER_INT64, &numBags, 1, lengths,
                                         &lengthsTensor, &status),
                &status, "creating KJT lengths") ||
          check(ember_inputs_set_kjt(inputs, name, keys, numKeys, valuesTensor,
                                     lengthsTensor, NULL, &status),
                &status, "setting a KJT input");
      ember_tensor_free(valuesTensor);
      ember_tensor_free(lengthsTensor);
      printf("input %s: KJT with %zu keys, %lld ids\n", name, numKeys,
             (long long)numValues);
    }
  }

  EmberOutputs *outputs = NULL;
  for (int run = 0; run < 2 && !failed; ++run)
    failed = check(ember_session_run(session, inputs, &outputs, &status),
                   &status, "running");
  for (size_t o = 0; !failed && o < ember_outputs_count(outputs); ++o) {
    const char *name = ember_outputs_name(outputs, o);
    const EmberTensor *t = NULL;
    if ((failed = check(ember_outputs_get(outputs, name, &t, &status), &status,
                        "an output")))
      break;
    printf("output %s: rank %zu, dims [", name, ember_tensor_rank(t));
    for (size_t d = 0; d < ember_tensor_rank(t); ++d)
      printf("%s%lld", d ? ", " : "", (long long)ember_tensor_dim(t, d));
    printf("]");
    if (ember_tensor_dtype(t) == EMBER_FLOAT32) {
      const float *p = (const float *)ember_tensor_data(t);
      printf(" values");
      for (int64_t i = 0; i < ember_tensor_numel(t) && i < 8; ++i)
        printf(" %.6f", p[i]);
    }
    printf("\n");
  }
  if (!failed)
    printf("invalid ids: %lld\n",
           (long long)ember_outputs_invalid_ids(outputs));

  ember_outputs_free(outputs);
  ember_inputs_free(inputs);
  for (size_t b = 0; b < numBuffers; ++b)
    free(buffers[b]);
  ember_session_free(session);
  return failed ? 1 : 0;
}

//===- input_binding.h - Checking and binding run inputs --------*- C++ -*-===//
#ifndef EMBER_EXECUTOR_INPUT_BINDING_H
#define EMBER_EXECUTOR_INPUT_BINDING_H

#include "ember/session.h"
#include "executor/run_context.h"
#include "plan/program.h"

namespace ember {

/// Checks the user's inputs against the signature (names, dtypes, ranks,
/// fixed dims, symbolic dims consistent across inputs, KJT keys, lengths
/// non-negative and summing to the number of values) and binds them to their
/// slots without copying. KJT offsets are turned into lengths in the arena.
/// Messages name the input.
Status bindInputs(const Program &program, const RunInputs &inputs,
                  RunContext &ctx);

} // namespace ember

#endif // EMBER_EXECUTOR_INPUT_BINDING_H

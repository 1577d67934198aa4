//===- executor.h - Running a program's instructions ------------*- C++ -*-===//
//
// Runs the instructions of a loaded Program in order over the slots of a
// RunContext. Kernel outputs and scratch come from the context's arena;
// slots are released after their last use so their blocks are reused by
// later instructions. Inputs must be bound (bindInputs) first.
//
// On the CPU backend all streams run in program order on the calling thread
// (kernels parallelize internally over the session's thread pool); the
// plan's order is a valid schedule, which the loader checks (every slot is
// defined before it is read, every awaited event was recorded earlier).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_EXECUTOR_EXECUTOR_H
#define EMBER_EXECUTOR_EXECUTOR_H

#include "ember/bounds_check.h"
#include "executor/run_context.h"
#include "plan/program.h"

namespace ember {

class ThreadPool;
class Communicator;

/// `comm` is the session's communicator (nullptr for a single-rank session).
Status executeProgram(const Program &program, RunContext &ctx, ThreadPool &pool,
                      BoundsCheckMode boundsCheck,
                      Communicator *comm = nullptr);

} // namespace ember

#endif // EMBER_EXECUTOR_EXECUTOR_H

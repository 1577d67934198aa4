//===- stream_schedule.h - A program's streams, checked for the CPU -*- C++
//-*-===//
//
// What running a program's streams concurrently needs, computed and checked
// once at load (docs/plan-format.md, "Streams and events"):
//   - per instruction, the instructions of other streams it waits for (the
//     latest recorder, in program order, of each event it awaits);
//   - a check that the events order everything that crosses streams: an
//     instruction that reads a slot written on another stream must wait,
//     directly or through other waits, for an event recorded at or after
//     that write on that stream; and a slot of the static arena must not be
//     overwritten on one stream (a slot placed over it by the memory plan)
//     before the other stream is done with it. A plan that breaks this is
//     refused with an error naming both instructions, whatever the overlap
//     mode: it would race on any backend that honours its streams;
//   - per slot, how many times instructions name it, so that a run frees
//     a slot's dynamic memory when its last user, on either stream, is done.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_EXECUTOR_STREAM_SCHEDULE_H
#define EMBER_EXECUTOR_STREAM_SCHEDULE_H

#include "ember/status.h"
#include "plan/program.h"

#include <vector>

namespace ember {

struct StreamSchedule {
  /// True when some instruction is on stream 1 and every one is on stream
  /// 0 or 1: the CPU backend can then run stream 1 on its communication
  /// thread.
  bool concurrent = false;
  /// Per instruction: the instructions on other streams whose completion
  /// it waits for (from its wait_events).
  std::vector<std::vector<int>> awaits;
  /// Per instruction: whether some instruction of another stream waits for
  /// it.
  std::vector<char> awaited;
  /// Per slot: how many times instructions name it (inputs and outputs).
  std::vector<int> slotUses;
  /// Per instruction: its collective's sequence number in program order
  /// (0 for the first collective instruction), or -1.
  std::vector<int> collectiveSequence;
};

/// Computes and checks the schedule of `program` (see above).
Result<StreamSchedule> buildStreamSchedule(const Program &program);

} // namespace ember

#endif // EMBER_EXECUTOR_STREAM_SCHEDULE_H

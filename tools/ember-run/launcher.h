//===- launcher.h - ember-run --nproc: N local ranks ------------*- C++ -*-===//
//
// Starts N copies of this ember-run as ranks 0..N-1 (fork + exec with RANK,
// WORLD_SIZE, LOCAL_RANK and EMBER_RENDEZVOUS=file:<a fresh temporary
// directory>), each with --split-batch so it takes its part of the global
// batch. Rank 0 writes the gathered outputs (and the report) in full as
// unnamed files, tells the launcher over a socket (EMBER_RUN_COMMIT_FD) and
// publishes them only when the launcher answers that every other rank
// exited with 0: a failed, interrupted or killed run leaves no output file
// and no staging directory. When a rank fails, the others get a short grace
// period to report their own errors and are then killed: a hung rank never
// keeps the launcher waiting. SIGINT/SIGTERM stop every rank (SIGTERM, then
// SIGKILL after the grace period) and exit with 128 + the signal.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TOOLS_EMBER_RUN_LAUNCHER_H
#define EMBER_TOOLS_EMBER_RUN_LAUNCHER_H

#include "options.h"

namespace ember::tools {

/// Runs the ranks; returns ember-run's exit status (0 when every rank
/// succeeded, 1 otherwise).
int launchLocalRanks(int argc, char **argv, const RunOptions &options);

} // namespace ember::tools

#endif // EMBER_TOOLS_EMBER_RUN_LAUNCHER_H

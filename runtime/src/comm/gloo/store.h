//===- store.h - Rendezvous stores for the Gloo communicator ----*- C++ -*-===//
//
// Gloo meets its peers through a key-value store. Two kinds:
//   file:DIR       Gloo's file store over a directory every rank can reach
//                  (one machine, or a shared file system); fresh per job.
//   tcp:HOST:PORT  Ember's TCP store: rank 0 serves it on PORT (all
//                  interfaces), every rank (rank 0 too) is a client of
//                  HOST:PORT. The MASTER_ADDR / MASTER_PORT convention.
// Every wait gives up after the communicator's timeout.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMM_GLOO_STORE_H
#define EMBER_COMM_GLOO_STORE_H

#include "comm/comm_options.h"

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <memory>

namespace ember {

Result<std::unique_ptr<gloo::rendezvous::Store>>
openStore(const CommOptions &options, std::chrono::milliseconds timeout);

} // namespace ember

#endif // EMBER_COMM_GLOO_STORE_H

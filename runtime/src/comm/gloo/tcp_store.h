//===- tcp_store.h - A key-value store over TCP for rendezvous --*- C++ -*-===//
//
// Rank 0 serves the store (a thread per client) on PORT of every interface;
// every rank, rank 0 included, connects to HOST:PORT as a client, retrying
// until the server is up or the timeout passes. Requests: set(key, bytes),
// get(key) which blocks until the key exists (up to the timeout).
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMM_GLOO_TCP_STORE_H
#define EMBER_COMM_GLOO_TCP_STORE_H

#include "ember/status.h"

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <memory>
#include <string>

namespace ember {

Result<std::unique_ptr<gloo::rendezvous::Store>>
openTcpStore(const std::string &host, int port, bool serve,
             std::chrono::milliseconds timeout);

} // namespace ember

#endif // EMBER_COMM_GLOO_TCP_STORE_H

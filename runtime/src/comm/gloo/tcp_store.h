//===- tcp_store.h - A key-value store over TCP for rendezvous --*- C++ -*-===//
//
// Rank 0 serves the store on HOST:PORT: by default only on the addresses
// HOST (MASTER_ADDR) resolves to, so it listens where the job said and
// nowhere else; `bind` ("*" = every interface, or an address) overrides
// that. It serves for the length of the rendezvous only (the communicator
// closes it once every rank is connected). Every rank, rank 0 included,
// connects to HOST:PORT as a client, retrying until the server is up or the
// deadline passes.
//
// The server is one thread polling every connection; it trusts nobody:
// a connection must greet with the store's magic first, requests are
// bounded (keys 1 KiB, values 16 MiB, 256 MiB and 2^20 keys in all, 1024
// connections), a key is set once, and anything malformed closes that
// connection (reported on stderr, the first few times) without disturbing
// the others. There is no authentication: see docs/reliability.md for what
// that means and how to deploy it.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_COMM_GLOO_TCP_STORE_H
#define EMBER_COMM_GLOO_TCP_STORE_H

#include "comm/gloo/store.h"

namespace ember {

/// serve: this rank (0) runs the server. bind: "" = HOST's addresses, "*" =
/// every interface, else an address (or host name) to listen on.
Result<std::unique_ptr<RendezvousStore>>
openTcpStore(const std::string &host, int port, bool serve,
             const std::string &bind, StoreClock::time_point deadline);

} // namespace ember

#endif // EMBER_COMM_GLOO_TCP_STORE_H

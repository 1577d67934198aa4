//===- serving_threads.cpp - Serving an Ember plan from C++ threads -------===//
//
//   ember-serving-threads PLAN DENSE.npy VALUES.npy LENGTHS.npy [THREADS]
//   [REQUESTS]
//
// The shape of a serving process: one ember::Session shared by several
// request threads, each reusing its own RunInputs/RunOutputs so that a
// steady-state request allocates nothing. The inputs (for a plan with a
// dense input "dense" and a KJT input "sparse") are read once; every thread
// checks that its results equal the first run's, and the program prints
// requests per second. Exit status 0 on success, 1 on any error.
//
//===----------------------------------------------------------------------===//
#include "ember/ember.h"
#include "io/npy.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

int main(int argc, char **argv) {
  if (argc < 5 || argc > 7) {
    std::fprintf(stderr,
                 "usage: %s PLAN DENSE.npy VALUES.npy LENGTHS.npy [THREADS] "
                 "[REQUESTS]\n",
                 argv[0]);
    return 2;
  }
  int threads = argc > 5 ? std::atoi(argv[5]) : 4;
  int requests = argc > 6 ? std::atoi(argv[6]) : 200;
  if (threads <= 0 || threads > 256 || requests <= 0) {
    std::fprintf(stderr, "THREADS must be in [1, 256] and REQUESTS positive\n");
    return 2;
  }
  auto fail = [](const ember::Status &s) {
    std::fprintf(stderr, "ember-serving-threads: %s\n", s.toString().c_str());
    return 1;
  };
  ember::SessionOptions options;
  options.threads = 1;
  auto session = ember::Session::load(argv[1], options);
  if (!session)
    return fail(session.status());
  auto dense = ember::npy::readNpy(argv[2]);
  auto values = ember::npy::readNpy(argv[3]);
  auto lengths = ember::npy::readNpy(argv[4]);
  for (auto *r : {&dense, &values, &lengths})
    if (!*r)
      return fail(r->status());
  const ember::ModelSignature &sig = (*session)->signature();
  if (sig.kjtInputs.size() != 1)
    return fail(ember::invalidArgument("this example expects one KJT input"));
  auto kjt = ember::KeyedJaggedTensor::fromLengths(sig.kjtInputs[0].keys,
                                                   *values, *lengths);
  if (!kjt)
    return fail(kjt.status());
  ember::RunInputs inputs;
  inputs.set("dense", *dense);
  inputs.set(sig.kjtInputs[0].name, *kjt);

  auto first = (*session)->run(inputs);
  if (!first)
    return fail(first.status());
  std::atomic<int> mismatches{0}, errors{0};
  auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      ember::RunOutputs out; // reused: no allocation after the first request
      for (int r = 0; r < requests; ++r) {
        if (!(*session)->run(inputs, &out).isOk()) {
          errors.fetch_add(1);
          continue;
        }
        for (size_t o = 0; o < out.size(); ++o)
          if (std::memcmp(out.tensor(o).data(), first->tensor(o).data(),
                          first->tensor(o).nbytes()) != 0)
            mismatches.fetch_add(1);
      }
    });
  for (auto &th : pool)
    th.join();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf(
      "%d threads x %d requests: %.0f requests/s, %d errors, %d mismatches\n",
      threads, requests, threads * requests / seconds, errors.load(),
      mismatches.load());
  for (size_t o = 0; o < first->size(); ++o)
    std::printf("output %s: %s\n", first->name(o).c_str(),
                first->tensor(o).describe().c_str());
  return errors.load() == 0 && mismatches.load() == 0 ? 0 : 1;
}

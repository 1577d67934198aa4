//===- ShardingDriver.h - planner options from the command line -*- C++ -*-===//
//
// What ember-compile and the --ember-plan-sharding pass share: the options a
// user gives (world size, sharding, overrides, files) turned into
// PlannerOptions, and atomic writing of the plan's JSON and report.
//
//===----------------------------------------------------------------------===//

#ifndef EMBER_SHARDING_SHARDINGDRIVER_H
#define EMBER_SHARDING_SHARDINGDRIVER_H

#include "sharding/ShardingTypes.h"
#include "llvm/Support/Error.h"

namespace ember::sharding {

/// The user's sharding options (ember-compile flags, pass options).
struct ShardingRequest {
  /// 0: the topology file's world_size, else 1.
  int64_t worldSize = 0;
  /// 0: the topology file's ranks_per_node, else 8.
  int64_t ranksPerNode = 0;
  /// 0: 512.
  int64_t batchSizePerRank = 0;
  /// auto | table_wise | row_wise | column_wise | table_row_wise |
  /// data_parallel.
  std::string sharding = "auto";
  /// "NAME=KIND[:KERNEL][@R1/R2/...]" (see parseTableOverride).
  std::vector<std::string> tableOverrides;
  /// none | sgd | rowwise_adagrad | adagrad | adam.
  std::string optimizer = "none";
  /// Count the backward estimate in the cost (training plans).
  bool includeBackward = false;
  /// inference | training | training-lean ("": training when
  /// includeBackward, else inference). Training counts the backward pass and
  /// the gradient all-reduce of replicas (includeBackward); training-lean
  /// lowers the training step only as far as no rank moves or holds more
  /// bytes than the inference plan's busiest (PlannerOptions::leanTraffic).
  std::string objective;
  /// How much device memory is kept from the embeddings:
  ///   ember     the topology's reserved_device_fraction (default 10%);
  ///   torchrec  TorchRec's HeuristicalStorageReservation: 15% of device
  ///             memory plus 20 copies (2 pipelined batches x 10 internal
  ///             copies) of the input ids of a rank's batch, 8 bytes each
  ///             (torchrecReservedBytes).
  std::string memoryReservation = "ember";
  /// training-lean only: PlannerOptions::leanSlack (negative: the default).
  double leanSlack = -1;
  /// Batches in flight (0: 2).
  int64_t pipelineDepth = 0;
  /// Files (empty: none): topology JSON, statistics JSON, a plan to import.
  std::string topologyFile;
  std::string statsFile;
  std::string planFile;
};

/// TorchRec's reservation as a fraction of device memory
/// (memoryReservation=torchrec): 15%, plus 20 x 8 bytes per input id of a
/// rank's batch, B * sum of every feature's pooling factor.
constexpr double kTorchRecReservedFraction = 0.15;
constexpr double kTorchRecInputCopies = 20;
double torchrecReservedFraction(const std::vector<TableSpec> &tables,
                                int64_t batchSizePerRank,
                                int64_t deviceMemoryBytes);

/// Reads the request's files and options into PlannerOptions, and applies
/// the statistics file to `tables`. Errors name the file or option.
llvm::Expected<PlannerOptions>
preparePlannerOptions(const ShardingRequest &request,
                      std::vector<TableSpec> &tables);

/// Writes `text` to `path` ("-": standard output) through a temporary file
/// renamed into place, so a failure leaves no partial file.
llvm::Error writeTextFile(llvm::StringRef path, llvm::StringRef text);

} // namespace ember::sharding

#endif // EMBER_SHARDING_SHARDINGDRIVER_H

//===- ShardingDriver.cpp - planner options from the command line ---------===//

#include "sharding/ShardingDriver.h"
#include "io/atomic_file.h"
#include "sharding/PlanJson.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>
#include <cmath>

using namespace ember::sharding;

namespace {

llvm::Expected<std::string> readFile(llvm::StringRef path,
                                     llvm::StringRef what) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(
        buffer.getError(), "cannot read the " + what + " file '" + path +
                               "': " + buffer.getError().message());
  return (*buffer)->getBuffer().str();
}

llvm::Error inFile(llvm::StringRef path, llvm::Error error) {
  if (!error)
    return error;
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 path.str() + ": " +
                                     llvm::toString(std::move(error)));
}

} // namespace

llvm::Expected<PlannerOptions>
ember::sharding::preparePlannerOptions(const ShardingRequest &request,
                                       std::vector<TableSpec> &tables) {
  PlannerOptions options;
  if (!request.topologyFile.empty()) {
    llvm::Expected<std::string> text =
        readFile(request.topologyFile, "topology");
    if (!text)
      return text.takeError();
    llvm::Expected<Topology> topology =
        parseTopologyJson(*text, options.topology);
    if (!topology)
      return inFile(request.topologyFile, topology.takeError());
    options.topology = *topology;
  }
  if (request.worldSize < 0 || request.ranksPerNode < 0 ||
      request.batchSizePerRank < 0 || request.pipelineDepth < 0)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "world size, ranks per node, batch size "
                                   "and pipeline depth must be positive");
  if (request.pipelineDepth > 0)
    options.pipelineDepth = request.pipelineDepth;
  if (request.objective == "training" || request.objective == "training-lean") {
    options.includeBackward = true;
    options.leanTraffic = request.objective == "training-lean";
  } else if (request.objective == "inference" && request.includeBackward)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "objective 'inference' contradicts include-backward (the training "
        "objective)");
  else if (request.objective.empty() || request.objective == "inference")
    options.includeBackward = request.includeBackward;
  else
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "unknown objective '" + request.objective +
                                       "' (expected inference, training or "
                                       "training-lean)");
  if (request.leanSlack != -1.0) { // -1: not given
    if (!options.leanTraffic)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "lean-slack applies to objective 'training-lean' only");
    if (!std::isfinite(request.leanSlack) || request.leanSlack < 0)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          llvm::formatv("lean-slack must be a finite fraction of at least 0 "
                        "(0.05: 5%), not {0}",
                        request.leanSlack)
              .str());
    options.leanSlack = request.leanSlack;
  }
  if (request.memoryReservation != "ember" &&
      request.memoryReservation != "torchrec")
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "unknown memory reservation '" + request.memoryReservation +
            "' (expected ember or torchrec)");
  if (request.worldSize > 0)
    options.topology.worldSize = request.worldSize;
  if (request.ranksPerNode > 0)
    options.topology.ranksPerNode = request.ranksPerNode;
  if (request.batchSizePerRank > 0)
    options.batchSizePerRank = request.batchSizePerRank;

  llvm::Expected<std::optional<ShardingKind>> kind =
      parseShardingChoice(request.sharding);
  if (!kind)
    return kind.takeError();
  options.globalKind = *kind;
  std::optional<Optimizer> optimizer = parseOptimizer(request.optimizer);
  if (!optimizer)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "unknown optimizer '" + request.optimizer +
            "' (expected none, sgd, rowwise_adagrad, adagrad or adam)");
  options.optimizer = *optimizer;

  for (const std::string &text : request.tableOverrides) {
    llvm::Expected<std::pair<std::string, TableConstraint>> entry =
        parseTableOverride(text);
    if (!entry)
      return entry.takeError();
    if (!options.tables.emplace(entry->first, entry->second).second)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "table '" + entry->first +
                                         "' is overridden twice");
  }

  if (!request.statsFile.empty()) {
    llvm::Expected<std::string> text =
        readFile(request.statsFile, "statistics");
    if (!text)
      return text.takeError();
    if (llvm::Error error = applyStatsJson(*text, tables))
      return inFile(request.statsFile, std::move(error));
  }
  if (!request.planFile.empty()) {
    llvm::Expected<std::string> text = readFile(request.planFile, "plan");
    if (!text)
      return text.takeError();
    llvm::Expected<std::map<std::string, TableSharding>> plan =
        parsePlanJson(*text);
    if (!plan)
      return inFile(request.planFile, plan.takeError());
    options.imported = std::move(*plan);
  }
  if (request.memoryReservation == "torchrec") {
    // After the statistics: the reservation grows with the pooling factors.
    double fraction = torchrecReservedFraction(
        tables, options.batchSizePerRank, options.topology.deviceMemoryBytes);
    if (!(fraction < 1))
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "TorchRec's memory reservation (15% of device memory and 20 copies "
          "of the input ids) takes all of the " +
              std::to_string(options.topology.deviceMemoryBytes) +
              " bytes of device memory");
    options.topology.reservedDeviceFraction = fraction;
    options.topology.reservationRule = "torchrec";
  }
  return options;
}

double ember::sharding::torchrecReservedFraction(
    const std::vector<TableSpec> &tables, int64_t batchSizePerRank,
    int64_t deviceMemoryBytes) {
  double ids = 0;
  for (const TableSpec &table : tables)
    for (const FeatureSpec &feature : table.features)
      ids += feature.poolingFactor;
  double inputBytes = kTorchRecInputCopies * 8.0 *
                      static_cast<double>(batchSizePerRank) * ids;
  return kTorchRecReservedFraction +
         inputBytes / static_cast<double>(std::max<int64_t>(
                          deviceMemoryBytes, 1));
}

llvm::Error ember::sharding::writeTextFile(llvm::StringRef path,
                                           llvm::StringRef text) {
  if (path == "-") {
    llvm::outs() << text;
    llvm::outs().flush();
    return llvm::Error::success();
  }
  // Whole or not at all, also when killed (io/atomic_file.h).
  std::string error;
  if (!ember::writeFileAtomically(path.str(), text.str(), &error))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), error);
  return llvm::Error::success();
}

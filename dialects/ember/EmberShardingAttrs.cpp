//===- EmberShardingAttrs.cpp - sharding and process groups ---------------===//
//
// Verifiers, helpers and the assembly format of #ember.group, #ember.shard and
// #ember.sharding, and verifyTableSharding. The attribute classes are
// generated with the dialect's other attributes (EmberAttrs.cpp).
//
//===----------------------------------------------------------------------===//

#include "dialects/ember/EmberShardingAttrs.h"
#include "dialects/ember/EmberDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <limits>

using namespace mlir;
using namespace mlir::ember;

namespace {
/// Number of dimensions of an embedding table (rows, columns).
constexpr int64_t kTableRank = 2;

/// Prints `[a, b, c]` into a diagnostic.
std::string formatList(ArrayRef<int64_t> values) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(values, os);
  os << "]";
  return text;
}
} // namespace

//===----------------------------------------------------------------------===//
// GroupAttr
//===----------------------------------------------------------------------===//

LogicalResult GroupAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                DenseI64ArrayAttr ranks, int64_t ranksPerNode) {
  if (!ranks || ranks.empty())
    return emitError() << "a group needs at least one rank";
  llvm::SmallDenseMap<int64_t, int64_t> positionOf;
  for (auto [position, rank] : llvm::enumerate(ranks.asArrayRef())) {
    if (rank < 0)
      return emitError() << "group rank #" << position << " is negative ("
                         << rank << ")";
    auto [it, inserted] = positionOf.try_emplace(rank, position);
    if (!inserted)
      return emitError() << "rank " << rank << " appears twice in the group "
                         << "(positions " << it->second << " and " << position
                         << ")";
  }
  if (ranksPerNode < 0)
    return emitError() << "ranks_per_node must be positive, got "
                       << ranksPerNode;
  return success();
}

std::optional<int64_t> GroupAttr::getPosition(int64_t rank) const {
  ArrayRef<int64_t> ranks = getRankList();
  const auto *it = llvm::find(ranks, rank);
  if (it == ranks.end())
    return std::nullopt;
  return it - ranks.begin();
}

std::optional<int64_t> GroupAttr::getNodeOf(int64_t rank) const {
  if (getRanksPerNode() <= 0 || rank < 0)
    return std::nullopt;
  return rank / getRanksPerNode();
}

//===----------------------------------------------------------------------===//
// ShardAttr
//===----------------------------------------------------------------------===//

/// A placement device is "<type>" or "<type>:<index>" (TorchRec: "cuda:0").
static bool isValidDevice(StringRef device) {
  auto [type, index] = device.split(':');
  if (type.empty() ||
      !llvm::all_of(type, [](char c) { return llvm::isAlnum(c) || c == '_'; }))
    return false;
  if (device.contains(':'))
    return !index.empty() && llvm::all_of(index, llvm::isDigit);
  return true;
}

LogicalResult ShardAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                DenseI64ArrayAttr offsets,
                                DenseI64ArrayAttr sizes, int64_t rank,
                                StringRef device) {
  if (!offsets || offsets.size() != kTableRank)
    return emitError() << "shard offsets need one entry per table dimension ("
                       << kTableRank << "), got "
                       << (offsets ? offsets.size() : 0);
  if (!sizes || sizes.size() != kTableRank)
    return emitError() << "shard sizes need one entry per table dimension ("
                       << kTableRank << "), got " << (sizes ? sizes.size() : 0);
  for (int64_t d = 0; d < kTableRank; ++d) {
    if (offsets[d] < 0)
      return emitError() << "shard offset of dimension " << d
                         << " is negative (" << offsets[d] << ")";
    if (sizes[d] < 0)
      return emitError() << "shard size of dimension " << d << " is negative ("
                         << sizes[d] << ")";
    if (!llvm::checkedAdd(offsets[d], sizes[d]))
      return emitError() << "shard ends past "
                         << std::numeric_limits<int64_t>::max()
                         << " in dimension " << d;
  }
  if (rank < 0)
    return emitError() << "shard rank is negative (" << rank << ")";
  if (!device.empty() && !isValidDevice(device))
    return emitError() << "shard device '" << device
                       << "' is not of the form \"<type>\" or "
                          "\"<type>:<index>\" (e.g. \"cuda:0\")";
  return success();
}

std::string ShardAttr::getPlacement(int64_t ranksPerNode) const {
  std::string placement = "rank:" + std::to_string(getRank()) + "/";
  if (!getDevice().empty())
    return placement + getDevice().str();
  int64_t local = ranksPerNode > 0 ? getRank() % ranksPerNode : getRank();
  return placement + "cuda:" + std::to_string(local);
}

//===----------------------------------------------------------------------===//
// ShardingAttr
//===----------------------------------------------------------------------===//

/// Row-wise style shardings: full-width shards that follow each other down the
/// rows from row 0, one per rank.
static LogicalResult
verifyRowShards(function_ref<InFlightDiagnostic()> emitError, StringRef kind,
                ArrayRef<ShardAttr> shards) {
  int64_t nextRow = 0;
  llvm::SmallDenseMap<int64_t, size_t> shardOnRank;
  for (auto [i, shard] : llvm::enumerate(shards)) {
    if (shard.getColumnOffset() != 0)
      return emitError() << kind << " shard #" << i << " starts at column "
                         << shard.getColumnOffset()
                         << "; row-wise shards take full rows (column 0 on)";
    if (shard.getNumColumns() != shards.front().getNumColumns())
      return emitError() << kind << " shard #" << i << " has "
                         << shard.getNumColumns()
                         << " columns but shard #0 has "
                         << shards.front().getNumColumns()
                         << "; row-wise shards take full rows";
    if (shard.getRowOffset() != nextRow)
      return emitError() << kind << " shard #" << i << " starts at row "
                         << shard.getRowOffset() << " but "
                         << (i == 0 ? std::string("the first shard must start "
                                                  "at row 0")
                                    : "shard #" + std::to_string(i - 1) +
                                          " ends at row " +
                                          std::to_string(nextRow));
    nextRow = shard.getRowOffset() + shard.getNumRows();
    auto [it, inserted] = shardOnRank.try_emplace(shard.getRank(), i);
    if (!inserted)
      return emitError() << kind << " places shards #" << it->second << " and #"
                         << i << " on the same rank " << shard.getRank()
                         << " (one shard per rank)";
  }
  return success();
}

/// Column-wise shardings: full-height shards that follow each other across the
/// columns from column 0. A rank may hold several.
static LogicalResult
verifyColumnShards(function_ref<InFlightDiagnostic()> emitError,
                   ArrayRef<ShardAttr> shards) {
  int64_t nextColumn = 0;
  for (auto [i, shard] : llvm::enumerate(shards)) {
    if (shard.getRowOffset() != 0)
      return emitError() << "column_wise shard #" << i << " starts at row "
                         << shard.getRowOffset()
                         << "; column-wise shards take full columns (row 0 on)";
    if (shard.getNumRows() != shards.front().getNumRows())
      return emitError() << "column_wise shard #" << i << " has "
                         << shard.getNumRows() << " rows but shard #0 has "
                         << shards.front().getNumRows()
                         << "; column-wise shards take full columns";
    if (shard.getColumnOffset() != nextColumn)
      return emitError() << "column_wise shard #" << i << " starts at column "
                         << shard.getColumnOffset() << " but "
                         << (i == 0 ? std::string("the first shard must start "
                                                  "at column 0")
                                    : "shard #" + std::to_string(i - 1) +
                                          " ends at column " +
                                          std::to_string(nextColumn));
    nextColumn = shard.getColumnOffset() + shard.getNumColumns();
  }
  return success();
}

LogicalResult ShardingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   ShardingType shardingType,
                                   ArrayRef<ShardAttr> shards,
                                   DenseI64ArrayAttr ranks,
                                   int64_t ranksPerNode,
                                   StringRef computeKernel) {
  StringRef kind = stringifyShardingType(shardingType);
  if (computeKernel.empty())
    return emitError() << "compute_kernel must not be empty";
  if (llvm::any_of(shards, [](ShardAttr shard) { return !shard; }))
    return emitError() << "shards must be #ember.shard attributes";
  if (ranksPerNode < 0)
    return emitError() << "ranks_per_node must be positive, got "
                       << ranksPerNode;
  if (ranksPerNode != 0 && shardingType != ShardingType::table_row_wise)
    return emitError() << "'ranks_per_node' is only used by table_row_wise, "
                          "not "
                       << kind;

  if (shardingType == ShardingType::data_parallel) {
    if (!shards.empty())
      return emitError() << "data_parallel replicates the table and takes no "
                            "shards, got "
                         << shards.size();
    if (!ranks)
      return success();
    llvm::SmallSet<int64_t, 8> seen;
    for (int64_t rank : ranks.asArrayRef()) {
      if (rank < 0)
        return emitError() << "data_parallel replica rank is negative (" << rank
                           << ")";
      if (!seen.insert(rank).second)
        return emitError() << "data_parallel lists rank " << rank << " twice";
    }
    if (ranks.empty())
      return emitError() << "data_parallel 'ranks' must not be empty (omit it "
                            "to replicate on every rank)";
    return success();
  }

  if (ranks)
    return emitError() << "'ranks' lists the replicas of a data_parallel "
                          "table; "
                       << kind << " shards carry their own ranks";
  if (shards.empty())
    return emitError() << kind << " needs at least one shard";

  switch (shardingType) {
  case ShardingType::table_wise:
    if (shards.size() != 1)
      return emitError() << "table_wise places the whole table on one rank: "
                            "expected 1 shard, got "
                         << shards.size();
    if (shards[0].getRowOffset() != 0 || shards[0].getColumnOffset() != 0)
      return emitError() << "table_wise shard must start at [0, 0], got "
                         << formatList(shards[0].getOffsets().asArrayRef());
    return success();
  case ShardingType::row_wise:
    return verifyRowShards(emitError, kind, shards);
  case ShardingType::table_row_wise: {
    if (failed(verifyRowShards(emitError, kind, shards)))
      return failure();
    if (ranksPerNode == 0)
      return emitError() << "table_row_wise needs 'ranks_per_node' to place "
                            "its shards on one node";
    int64_t node = shards.front().getRank() / ranksPerNode;
    for (auto [i, shard] : llvm::enumerate(shards)) {
      int64_t shardNode = shard.getRank() / ranksPerNode;
      if (shardNode != node)
        return emitError() << "table_row_wise shard #" << i << " is on rank "
                           << shard.getRank() << " (node " << shardNode
                           << ") but shard #0 is on rank "
                           << shards.front().getRank() << " (node " << node
                           << "); its shards must share one node";
    }
    return success();
  }
  case ShardingType::column_wise:
    return verifyColumnShards(emitError, shards);
  case ShardingType::data_parallel:
    break;
  }
  return success();
}

SmallVector<int64_t> ShardingAttr::getShardRanks() const {
  if (isReplicated())
    return getRanks() ? SmallVector<int64_t>(getRanks().asArrayRef())
                      : SmallVector<int64_t>();
  return llvm::map_to_vector(getShards(),
                             [](ShardAttr shard) { return shard.getRank(); });
}

// #ember.sharding<kind (, key = value)*>, keys in any order:
//   shards = [#ember.shard<...>, ...]   ranks = [0, 1]
//   ranks_per_node = 8                  compute_kernel = "fused"
Attribute ShardingAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess())
    return {};
  StringRef kindName;
  SMLoc kindLoc = parser.getCurrentLocation();
  if (parser.parseKeyword(&kindName))
    return {};
  std::optional<ShardingType> kind = symbolizeShardingType(kindName);
  if (!kind) {
    parser.emitError(kindLoc)
        << "unknown sharding type '" << kindName
        << "'; expected table_wise, row_wise, column_wise, table_row_wise or "
           "data_parallel";
    return {};
  }

  SmallVector<ShardAttr> shards;
  DenseI64ArrayAttr ranks;
  int64_t ranksPerNode = 0;
  std::string computeKernel = "fused";
  llvm::SmallSet<StringRef, 4> seenKeys;
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    SMLoc keyLoc = parser.getCurrentLocation();
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    if (!seenKeys.insert(key).second) {
      parser.emitError(keyLoc) << "'" << key << "' is given twice";
      return {};
    }
    if (key == "shards") {
      if (parser.parseCommaSeparatedList(
              AsmParser::Delimiter::Square, [&]() -> ParseResult {
                ShardAttr shard;
                if (parser.parseCustomAttributeWithFallback(shard))
                  return failure();
                shards.push_back(shard);
                return success();
              }))
        return {};
    } else if (key == "ranks") {
      ranks = llvm::dyn_cast_or_null<DenseI64ArrayAttr>(
          DenseI64ArrayAttr::parse(parser, Type()));
      if (!ranks)
        return {};
    } else if (key == "ranks_per_node") {
      if (parser.parseInteger(ranksPerNode))
        return {};
    } else if (key == "compute_kernel") {
      if (parser.parseString(&computeKernel))
        return {};
    } else {
      parser.emitError(keyLoc)
          << "unknown key '" << key
          << "' in #ember.sharding; expected shards, ranks, ranks_per_node or "
             "compute_kernel";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return ShardingAttr::getChecked([&] { return parser.emitError(loc); },
                                  parser.getContext(), *kind,
                                  ArrayRef<ShardAttr>(shards), ranks,
                                  ranksPerNode, StringRef(computeKernel));
}

void ShardingAttr::print(AsmPrinter &printer) const {
  printer << "<" << stringifyShardingType(getShardingType());
  if (!getShards().empty()) {
    printer << ", shards = [";
    llvm::interleaveComma(getShards(), printer,
                          [&](ShardAttr shard) { printer << shard; });
    printer << "]";
  }
  if (getRanks())
    printer << ", ranks = " << formatList(getRanks().asArrayRef());
  if (getRanksPerNode() != 0)
    printer << ", ranks_per_node = " << getRanksPerNode();
  if (getComputeKernel() != "fused") {
    printer << ", compute_kernel = ";
    printer.printString(getComputeKernel());
  }
  printer << ">";
}

//===----------------------------------------------------------------------===//
// verifyTableSharding
//===----------------------------------------------------------------------===//

LogicalResult
mlir::ember::verifyTableSharding(ShardingAttr sharding, int64_t rows,
                                 int64_t dim,
                                 function_ref<InFlightDiagnostic()> emitError) {
  if (!sharding)
    return emitError() << "missing sharding";
  if (rows < 0 || dim < 0)
    return emitError() << "cannot shard a table of " << rows << "x" << dim;
  if (sharding.isReplicated())
    return success();

  StringRef kind = stringifyShardingType(sharding.getShardingType());
  ArrayRef<ShardAttr> shards = sharding.getShards();
  auto describe = [](ShardAttr shard) {
    return "offsets " + formatList(shard.getOffsets().asArrayRef()) +
           ", sizes " + formatList(shard.getSizes().asArrayRef());
  };

  for (auto [i, shard] : llvm::enumerate(shards)) {
    switch (sharding.getShardingType()) {
    case ShardingType::table_wise:
      if (shard.getNumRows() != rows || shard.getNumColumns() != dim)
        return emitError() << "table_wise shard must cover the whole " << rows
                           << "x" << dim << " table, got sizes "
                           << formatList(shard.getSizes().asArrayRef());
      break;
    case ShardingType::row_wise:
    case ShardingType::table_row_wise:
      if (shard.getNumColumns() != dim)
        return emitError() << kind << " shard #" << i << " has "
                           << shard.getNumColumns()
                           << " columns but the table has " << dim
                           << " (row-wise shards take full rows)";
      break;
    case ShardingType::column_wise:
      if (shard.getNumRows() != rows)
        return emitError() << "column_wise shard #" << i << " has "
                           << shard.getNumRows() << " rows but the table has "
                           << rows << " (column-wise shards take full columns)";
      break;
    case ShardingType::data_parallel:
      break;
    }
    // Subtractions: offsets and sizes are non-negative, so no overflow.
    if (shard.getRowOffset() > rows ||
        shard.getNumRows() > rows - shard.getRowOffset() ||
        shard.getColumnOffset() > dim ||
        shard.getNumColumns() > dim - shard.getColumnOffset())
      return emitError() << kind << " shard #" << i << " (" << describe(shard)
                         << ") lies outside the " << rows << "x" << dim
                         << " table";
  }

  // The attribute verifier made the shards disjoint (row shards follow each
  // other down the rows at full width, column shards across the columns at
  // full height, table_wise has one): inside the table, they tile it iff
  // their areas add up.
  std::optional<int64_t> elements = llvm::checkedMul(rows, dim);
  if (!elements)
    return emitError() << "cannot shard a table of " << rows << "x" << dim
                       << ": more than " << std::numeric_limits<int64_t>::max()
                       << " elements";
  // Each shard lies inside the table, so its area and the running total stay
  // below rows * dim unless the shards overlap, which the verifier excluded.
  int64_t covered = 0;
  for (ShardAttr shard : shards)
    covered += shard.getNumRows() * shard.getNumColumns();
  if (covered != *elements)
    return emitError() << kind << " shards cover " << covered << " of the "
                       << *elements << " elements of the " << rows << "x" << dim
                       << " table; they must tile it without gaps";
  return success();
}

//===- loader.cpp - Loading and validating plans --------------------------===//
#include "plan/loader.h"

#include "kernels/kernel_registry.h"
#include "plan/ember_plan.pb.h"
#include "plan/mapped_file.h"
#include "plan/memory_plan.h"
#include "plan/plan_format.h"
#include "plan/weight_memory.h"
#include "plan/xxhash64.h"
#include "progress/progress.h"

#include <cstdio>

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace ember {

namespace {

bool endsWith(const std::string &s, const char *suffix) {
  size_t n = std::char_traits<char>::length(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

std::string directoryOf(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? std::string(".") : path.substr(0, slash);
}

std::string hex64(uint64_t v) {
  char buf[19];
  std::snprintf(buf, sizeof(buf), "0x%016llx",
                static_cast<unsigned long long>(v));
  return buf;
}

/// Collects text-format parse errors instead of printing them.
class TextErrors : public google::protobuf::io::ErrorCollector {
public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string &message) override {
    if (first.empty())
      first = "line " + std::to_string(line + 1) + ", column " +
              std::to_string(column + 1) + ": " + message;
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber,
                  const std::string &) override {}
  std::string first;
};

Result<plan::Plan> parsePlan(const std::string &path,
                             const std::string &bytes) {
  plan::Plan proto;
  if (endsWith(path, ".txt") || endsWith(path, ".pbtxt")) {
    google::protobuf::TextFormat::Parser parser;
    TextErrors errors;
    parser.RecordErrorsTo(&errors);
    if (!parser.ParseFromString(bytes, &proto))
      return invalidArgument(
          "not a valid text-format Ember plan: " +
          (errors.first.empty() ? std::string("parse error") : errors.first));
    return proto;
  }
  if (bytes.empty())
    return dataLoss("the plan file is empty");
  if (!proto.ParseFromString(bytes))
    return dataLoss("not a valid Ember plan: the protobuf does not parse "
                    "(truncated or corrupt file?)");
  if (proto.end_marker() != kPlanEndMarker)
    return dataLoss("the plan is truncated or corrupt: its end marker is " +
                    hex64(proto.end_marker()) + ", expected " +
                    hex64(kPlanEndMarker));
  return proto;
}

Result<DType> convertDType(int value, const std::string &what) {
  switch (value) {
  case plan::FLOAT32:
    return DType::kFloat32;
  case plan::FLOAT16:
    return DType::kFloat16;
  case plan::BFLOAT16:
    return DType::kBFloat16;
  case plan::INT8:
    return DType::kInt8;
  case plan::UINT8:
    return DType::kUInt8;
  case plan::INT32:
    return DType::kInt32;
  case plan::INT64:
    return DType::kInt64;
  case plan::BOOL:
    return DType::kBool;
  case plan::FLOAT64:
    return DType::kFloat64;
  case plan::DATA_TYPE_UNSPECIFIED:
    return invalidArgument(what + " has no dtype");
  default:
    return invalidArgument(what + " has an unknown dtype " +
                           std::to_string(value));
  }
}

/// Builds a Program from a parsed plan, validating as it goes.
class ProgramBuilder {
public:
  ProgramBuilder(const plan::Plan &plan, const std::string &planDir,
                 const LoadOptions &options, const KernelRegistry &kernels)
      : plan_(plan), planDir_(planDir), options_(options), kernels_(kernels) {}

  Result<std::shared_ptr<const Program>> build();

private:
  Status checkHeader();
  Status checkCollectives();
  Status checkTarget() const;
  Status buildSymbolBounds();
  Status buildSlots(const plan::RankProgram &rp);
  Result<std::vector<DimSpec>>
  convertDims(const google::protobuf::RepeatedPtrField<plan::Dim> &dims,
              const std::string &what);
  Status checkSlotIndex(int64_t slot, const std::string &what) const;
  Status define(int slot, SlotInfo::Kind kind, int instruction,
                const std::string &what);
  Status checkSameTypeAsSlot(DType dtype, const std::vector<DimSpec> &dims,
                             int slot, const std::string &what) const;
  Status buildSignature(const plan::RankProgram &rp);
  Status buildConstants(const plan::RankProgram &rp);
  Status buildInstructions(const plan::RankProgram &rp);
  Status buildInstruction(const plan::RankProgram &rp, int index,
                          std::vector<char> &recordedEvents);
  Status buildOutputs(const plan::RankProgram &rp);
  Status checkDeclaredSizes() const;
  Status checkCollectiveUse(const KernelDef &def, const plan::Instruction &in,
                            InstructionInfo &info);
  void computeLiveness();
  int internSymbol(const std::string &name);
  std::string dimsToString(const std::vector<DimSpec> &dims) const;

  const plan::Plan &plan_;
  std::string planDir_;
  LoadOptions options_;
  const KernelRegistry &kernels_;
  std::shared_ptr<Program> program_ = std::make_shared<Program>();
  std::map<std::string, int> symbolIds_;
  std::set<std::string> ioNames_;
};

Status ProgramBuilder::checkHeader() {
  uint32_t version = plan_.format_version();
  if (version == 0)
    return dataLoss("the plan has no format_version (not an Ember plan?)");
  if (version > kPlanFormatVersion)
    return failedPrecondition(
        "the plan has format version " + std::to_string(version) +
        ", newer than the newest this runtime reads (" +
        std::to_string(kPlanFormatVersion) +
        "); load it with a newer Ember runtime or recompile the model");
  int64_t world = plan_.world_size() == 0 ? 1 : plan_.world_size();
  if (world < 0 || world > 65536)
    return invalidArgument("world_size " + std::to_string(plan_.world_size()) +
                           " is out of range");
  if (plan_.programs_size() != world)
    return invalidArgument(
        "world_size is " + std::to_string(world) + " but the plan has " +
        std::to_string(plan_.programs_size()) + " rank programs");
  for (int r = 0; r < plan_.programs_size(); ++r)
    if (plan_.programs(r).rank() != r)
      return invalidArgument("rank program " + std::to_string(r) +
                             " says it is rank " +
                             std::to_string(plan_.programs(r).rank()));
  if (options_.rank < 0 || options_.rank >= world)
    return invalidArgument("rank " + std::to_string(options_.rank) +
                           " is not in a plan for " + std::to_string(world) +
                           " rank(s)");
  if (world != options_.worldSize)
    return failedPrecondition(
        "the plan is for " + std::to_string(world) + " rank(s) but " +
        (options_.worldSize == 1
             ? std::string("this is a single-rank session")
             : "this session's world has " +
                   std::to_string(options_.worldSize) + " ranks") +
        "; run it with " + std::to_string(world) +
        " ranks (ember-run --nproc " + std::to_string(world) +
        ", or SessionOptions.worldSize/rank and a rendezvous per rank)");
  return Status::ok();
}

const char *targetName(int target) {
  switch (target) {
  case plan::TARGET_UNSPECIFIED: // format 1 plans
  case plan::TARGET_CPU:
    return "cpu";
  case plan::TARGET_CUDA:
    return "cuda";
  default:
    return nullptr;
  }
}

Status ProgramBuilder::checkTarget() const {
  const char *target = targetName(plan_.target());
  if (!target)
    return invalidArgument("the plan has an unknown target " +
                           std::to_string(plan_.target()));
  if (options_.backend != target)
    return failedPrecondition(
        std::string("the plan was compiled for the ") + target +
        " target (ember-compile --target " + target +
        ") but this session runs on the " + options_.backend +
        " backend; recompile the model with --target " + options_.backend +
        " or run it on the " + target + " backend (ember-run --device " +
        target + ", SessionOptions.device)");
  return Status::ok();
}

Status ProgramBuilder::buildSymbolBounds() {
  for (const plan::SymbolBound &b : plan_.symbol_bounds()) {
    if (b.symbol().empty())
      return invalidArgument("a symbol bound has no symbol");
    if (b.max() < 1 || b.max() > (int64_t{1} << 40))
      return invalidArgument("the bound of symbol '" + b.symbol() + "' is " +
                             std::to_string(b.max()) + " (must be in 1..2^40)");
    int id = internSymbol(b.symbol());
    if (program_->symbolMax[id] >= 0)
      return invalidArgument("symbol '" + b.symbol() + "' is bounded twice");
    program_->symbolMax[id] = b.max();
  }
  return Status::ok();
}

Status ProgramBuilder::checkCollectives() {
  int64_t world = plan_.programs_size();
  for (int c = 0; c < plan_.collectives_size(); ++c) {
    const plan::CollectiveDescriptor &cd = plan_.collectives(c);
    std::string what =
        "collective " + std::to_string(c) + " '" + cd.name() + "'";
    if (cd.kind() == plan::CollectiveDescriptor::KIND_UNSPECIFIED ||
        !plan::CollectiveDescriptor::Kind_IsValid(cd.kind()))
      return invalidArgument(what + " has no valid kind (" +
                             std::to_string(cd.kind()) + ")");
    if (cd.group_ranks_size() == 0)
      return invalidArgument(what + " has an empty group");
    int prev = -1;
    for (int r : cd.group_ranks()) {
      if (r < 0 || r >= world)
        return invalidArgument(what + ": group rank " + std::to_string(r) +
                               " is outside the world of " +
                               std::to_string(world));
      if (r <= prev)
        return invalidArgument(what +
                               ": group ranks must be ascending and distinct");
      prev = r;
    }
    int g = cd.group_ranks_size();
    auto checkSplits = [&](const google::protobuf::RepeatedField<int64_t> &s,
                           const char *field) -> Status {
      if (s.size() != 0 && s.size() != g)
        return invalidArgument(what + ": " + field + " has " +
                               std::to_string(s.size()) +
                               " entries for a group of " + std::to_string(g));
      for (int64_t v : s)
        if (v < 0)
          return invalidArgument(what + ": " + field + " has a negative split");
      return Status::ok();
    };
    EMBER_RETURN_IF_ERROR(checkSplits(cd.input_splits(), "input_splits"));
    EMBER_RETURN_IF_ERROR(checkSplits(cd.output_splits(), "output_splits"));
    if (cd.keys_per_rank_size() != 0 && cd.keys_per_rank_size() != g)
      return invalidArgument(what + ": keys_per_rank has " +
                             std::to_string(cd.keys_per_rank_size()) +
                             " entries for a group of " + std::to_string(g));
    CollectiveInfo info;
    info.kind = static_cast<CollectiveInfo::Kind>(cd.kind());
    info.groupRanks.assign(cd.group_ranks().begin(), cd.group_ranks().end());
    info.name = cd.name();
    info.position = -1;
    for (int i = 0; i < g; ++i)
      if (cd.group_ranks(i) == options_.rank)
        info.position = i;
    program_->collectives.push_back(std::move(info));
  }
  return Status::ok();
}

int ProgramBuilder::internSymbol(const std::string &name) {
  auto it = symbolIds_.find(name);
  if (it != symbolIds_.end())
    return it->second;
  int id = static_cast<int>(program_->symbols.size());
  program_->symbols.push_back(name);
  program_->symbolMax.push_back(-1);
  symbolIds_.emplace(name, id);
  return id;
}

std::string
ProgramBuilder::dimsToString(const std::vector<DimSpec> &dims) const {
  SlotInfo tmp;
  tmp.rank = static_cast<int>(dims.size());
  for (size_t i = 0; i < dims.size(); ++i)
    tmp.dims[i] = dims[i];
  return program_->describeDims(tmp);
}

Result<std::vector<DimSpec>> ProgramBuilder::convertDims(
    const google::protobuf::RepeatedPtrField<plan::Dim> &dims,
    const std::string &what) {
  if (dims.size() > Shape::kMaxRank)
    return invalidArgument(what + " has rank " + std::to_string(dims.size()) +
                           ", more than the maximum of " +
                           std::to_string(Shape::kMaxRank));
  std::vector<DimSpec> out;
  for (int i = 0; i < dims.size(); ++i) {
    const plan::Dim &d = dims[i];
    DimSpec spec;
    std::string dimWhat = what + " dimension " + std::to_string(i);
    if (d.factor() < 0 || d.factor() > (int64_t{1} << 40))
      return invalidArgument(dimWhat + " has factor " +
                             std::to_string(d.factor()));
    spec.factor = d.factor() == 0 ? 1 : d.factor();
    switch (d.kind_case()) {
    case plan::Dim::kSize:
      if (d.size() < 0 || d.size() > (int64_t{1} << 48))
        return invalidArgument(dimWhat + " has size " +
                               std::to_string(d.size()));
      spec.size = d.size();
      break;
    case plan::Dim::kSymbol:
      if (d.symbol().empty())
        return invalidArgument(dimWhat + " has an empty symbol");
      spec.symbol = internSymbol(d.symbol());
      break;
    default:
      return invalidArgument(dimWhat + " has neither a size nor a symbol");
    }
    out.push_back(spec);
  }
  return out;
}

Status ProgramBuilder::buildSlots(const plan::RankProgram &rp) {
  if (rp.slots_size() > (1 << 24))
    return invalidArgument("too many slots (" +
                           std::to_string(rp.slots_size()) + ")");
  program_->slots.resize(rp.slots_size());
  for (int i = 0; i < rp.slots_size(); ++i) {
    const plan::Slot &s = rp.slots(i);
    std::string what = "slot " + std::to_string(i) + " '" + s.name() + "'";
    SlotInfo &info = program_->slots[i];
    info.name = s.name().empty() ? "%" + std::to_string(i) : s.name();
    EMBER_ASSIGN_OR_RETURN(info.dtype, convertDType(s.dtype(), what));
    EMBER_ASSIGN_OR_RETURN(std::vector<DimSpec> dims,
                           convertDims(s.shape(), what));
    info.rank = static_cast<int>(dims.size());
    for (size_t d = 0; d < dims.size(); ++d)
      info.dims[d] = dims[d];
  }
  program_->constants.resize(rp.slots_size());
  return Status::ok();
}

Status ProgramBuilder::checkSlotIndex(int64_t slot,
                                      const std::string &what) const {
  if (slot < 0 || slot >= static_cast<int64_t>(program_->slots.size()))
    return invalidArgument(what + " refers to slot " + std::to_string(slot) +
                           ", but the program has " +
                           std::to_string(program_->slots.size()) + " slots");
  return Status::ok();
}

Status ProgramBuilder::define(int slot, SlotInfo::Kind kind, int instruction,
                              const std::string &what) {
  EMBER_RETURN_IF_ERROR(checkSlotIndex(slot, what));
  SlotInfo &info = program_->slots[slot];
  if (info.kind != SlotInfo::Kind::kUndefined)
    return invalidArgument(
        what + " defines " + program_->describeSlot(slot) +
        ", which is already defined (slots are assigned once)");
  info.kind = kind;
  info.definedBy = instruction;
  return Status::ok();
}

Status ProgramBuilder::checkSameTypeAsSlot(DType dtype,
                                           const std::vector<DimSpec> &dims,
                                           int slot,
                                           const std::string &what) const {
  const SlotInfo &info = program_->slots[slot];
  bool same = info.dtype == dtype && info.rank == static_cast<int>(dims.size());
  for (int i = 0; same && i < info.rank; ++i)
    same = info.dims[i].symbol == dims[i].symbol &&
           info.dims[i].size == dims[i].size &&
           info.dims[i].factor == dims[i].factor;
  if (!same)
    return invalidArgument(what + " is declared " +
                           std::string(dtypeName(dtype)) + dimsToString(dims) +
                           " but its " + program_->describeSlot(slot) + " is " +
                           std::string(dtypeName(info.dtype)) +
                           program_->describeDims(info));
  return Status::ok();
}

Status ProgramBuilder::buildSignature(const plan::RankProgram &rp) {
  const plan::Signature &sig = plan_.signature();
  if (sig.inputs_size() != rp.input_slots_size())
    return invalidArgument("the signature has " +
                           std::to_string(sig.inputs_size()) +
                           " dense inputs but the program binds " +
                           std::to_string(rp.input_slots_size()));
  if (sig.kjt_inputs_size() != rp.kjt_input_slots_size())
    return invalidArgument("the signature has " +
                           std::to_string(sig.kjt_inputs_size()) +
                           " KJT inputs but the program binds " +
                           std::to_string(rp.kjt_input_slots_size()));
  auto checkName = [&](const std::string &name,
                       const std::string &what) -> Status {
    if (name.empty())
      return invalidArgument(what + " has no name");
    if (!ioNames_.insert(name).second)
      return invalidArgument(what + ": the name '" + name + "' is used twice");
    return Status::ok();
  };
  for (int i = 0; i < sig.inputs_size(); ++i) {
    const plan::TensorSpec &spec = sig.inputs(i);
    std::string what = "input " + std::to_string(i) + " '" + spec.name() + "'";
    EMBER_RETURN_IF_ERROR(checkName(spec.name(), what));
    EMBER_ASSIGN_OR_RETURN(DType dtype, convertDType(spec.dtype(), what));
    EMBER_ASSIGN_OR_RETURN(std::vector<DimSpec> dims,
                           convertDims(spec.shape(), what));
    int slot = rp.input_slots(i);
    EMBER_RETURN_IF_ERROR(define(slot, SlotInfo::Kind::kInput, -1, what));
    EMBER_RETURN_IF_ERROR(checkSameTypeAsSlot(dtype, dims, slot, what));
    program_->inputs.push_back({spec.name(), slot});
    TensorInfo ti{spec.name(), dtype, /*dims=*/{}, /*bagOffsets=*/"",
                  /*includeLastOffset=*/false};
    for (const DimSpec &d : dims) {
      std::string s = dimsToString({d});
      ti.dims.push_back(s.substr(1, s.size() - 2));
    }
    ti.bagOffsets = spec.bag_offsets();
    ti.includeLastOffset = spec.include_last_offset();
    program_->signature.inputs.push_back(std::move(ti));
  }
  if (!sig.batch_symbol().empty())
    program_->signature.batchSymbol = sig.batch_symbol();
  for (const TensorInfo &ti : program_->signature.inputs) {
    if (ti.bagOffsets.empty())
      continue;
    auto offsets = std::find_if(
        program_->signature.inputs.begin(), program_->signature.inputs.end(),
        [&](const TensorInfo &o) { return o.name == ti.bagOffsets; });
    if (offsets == program_->signature.inputs.end() ||
        !offsets->bagOffsets.empty() || offsets->dims.size() != 1 ||
        ti.dims.empty())
      return invalidArgument("input '" + ti.name + "': bag_offsets names '" +
                             ti.bagOffsets +
                             "', which is not a 1-D offsets input of the "
                             "signature");
  }
  for (int i = 0; i < sig.kjt_inputs_size(); ++i) {
    const plan::KjtSpec &spec = sig.kjt_inputs(i);
    const plan::KjtSlots &slots = rp.kjt_input_slots(i);
    std::string what =
        "KJT input " + std::to_string(i) + " '" + spec.name() + "'";
    EMBER_RETURN_IF_ERROR(checkName(spec.name(), what));
    if (spec.keys_size() == 0)
      return invalidArgument(what + " has no keys");
    std::set<std::string> keys;
    for (const std::string &k : spec.keys())
      if (k.empty() || !keys.insert(k).second)
        return invalidArgument(what + ": key '" + k + "' is empty or repeated");
    EMBER_ASSIGN_OR_RETURN(DType valuesType,
                           convertDType(spec.values_dtype(), what + " values"));
    EMBER_ASSIGN_OR_RETURN(DType lengthsType, convertDType(spec.lengths_dtype(),
                                                           what + " lengths"));
    for (DType t : {valuesType, lengthsType})
      if (t != DType::kInt32 && t != DType::kInt64)
        return invalidArgument(
            what + ": values and lengths must be int32 or int64, not " +
            std::string(dtypeName(t)));
    KjtInputBinding b;
    b.name = spec.name();
    b.keys.assign(spec.keys().begin(), spec.keys().end());
    b.batchSymbol =
        internSymbol(spec.batch_symbol().empty() ? "B" : spec.batch_symbol());
    b.valuesSlot = slots.values();
    b.lengthsSlot = slots.lengths();
    b.weightsSlot = slots.weights();
    EMBER_RETURN_IF_ERROR(
        define(b.valuesSlot, SlotInfo::Kind::kInput, -1, what + " values"));
    EMBER_RETURN_IF_ERROR(
        define(b.lengthsSlot, SlotInfo::Kind::kInput, -1, what + " lengths"));
    const SlotInfo &values = program_->slots[b.valuesSlot];
    const SlotInfo &lengths = program_->slots[b.lengthsSlot];
    if (values.dtype != valuesType || values.rank != 1)
      return invalidArgument(
          what + ": values " + program_->describeSlot(b.valuesSlot) +
          " must be " + std::string(dtypeName(valuesType)) + " of rank 1");
    int64_t numKeys = spec.keys_size();
    if (lengths.dtype != lengthsType || lengths.rank != 1 ||
        lengths.dims[0].symbol != b.batchSymbol ||
        lengths.dims[0].factor != numKeys)
      return invalidArgument(
          what + ": lengths " + program_->describeSlot(b.lengthsSlot) +
          " must be " + std::string(dtypeName(lengthsType)) + "[" +
          std::to_string(numKeys) + "*" + program_->symbols[b.batchSymbol] +
          "], not " + std::string(dtypeName(lengths.dtype)) +
          program_->describeDims(lengths));
    if (spec.has_weights() != (b.weightsSlot >= 0))
      return invalidArgument(
          what + (spec.has_weights()
                      ? " has weights but no weights slot"
                      : " has a weights slot but has_weights is false"));
    if (b.weightsSlot >= 0) {
      EMBER_RETURN_IF_ERROR(
          define(b.weightsSlot, SlotInfo::Kind::kInput, -1, what + " weights"));
      const SlotInfo &w = program_->slots[b.weightsSlot];
      if (w.dtype != DType::kFloat32 || w.rank != 1)
        return invalidArgument(what + ": weights " +
                               program_->describeSlot(b.weightsSlot) +
                               " must be float32 of rank 1");
    }
    program_->signature.kjtInputs.push_back({b.name, b.keys, valuesType,
                                             lengthsType, spec.has_weights(),
                                             program_->symbols[b.batchSymbol]});
    program_->kjtInputs.push_back(std::move(b));
  }
  return Status::ok();
}

/// The XXH64 of every weights file against the plan's, streamed in chunks
/// (progress on stderr: "verifying weights"); the pages of each chunk are
/// dropped from this process once hashed, so verifying a file larger than
/// memory does not hold it (later reads map them again from the page cache).
static Status verifyWeightChecksums(
    const plan::RankProgram &rp,
    const std::vector<std::shared_ptr<MappedFile>> &files) {
  constexpr size_t kChunk = size_t{64} << 20;
  uint64_t total = 0;
  for (const auto &file : files)
    total += file->size();
  progress::Phase phase("verifying weights", total, progress::Unit::Bytes);
  for (size_t f = 0; f < files.size(); ++f) {
    const MappedFile &file = *files[f];
    XxHash64 hasher;
    for (size_t at = 0; at < file.size(); at += kChunk) {
      size_t n = std::min(kChunk, file.size() - at);
      hasher.update(file.data() + at, n);
      file.dropPages(at, n);
      phase.advance(n);
    }
    uint64_t h = hasher.digest();
    const plan::WeightFile &wf = rp.weight_files(static_cast<int>(f));
    if (h != wf.xxhash64())
      return dataLoss("weights file " + std::to_string(f) + " '" + wf.path() +
                      "' has checksum " + hex64(h) + " but the plan expects " +
                      hex64(wf.xxhash64()) + " (corrupt, or from another plan?)");
  }
  return Status::ok();
}

Status ProgramBuilder::buildConstants(const plan::RankProgram &rp) {
  // Weights files: relative paths, declared size and checksum.
  std::vector<std::shared_ptr<MappedFile>> files;
  for (int f = 0; f < rp.weight_files_size(); ++f) {
    const plan::WeightFile &wf = rp.weight_files(f);
    std::string what =
        "weights file " + std::to_string(f) + " '" + wf.path() + "'";
    if (wf.path().empty() || wf.path()[0] == '/' ||
        wf.path().find("..") != std::string::npos)
      return invalidArgument(what + ": the path must be relative to the plan's "
                                    "directory and must not contain '..'");
    std::string fullPath = planDir_ + "/" + wf.path();
    auto mapped = MappedFile::open(fullPath);
    if (!mapped)
      return mapped.status().withContext(what);
    std::shared_ptr<MappedFile> file = *mapped;
    if (file->size() != wf.size())
      return dataLoss(what + " is " + std::to_string(file->size()) +
                      " bytes but the plan expects " +
                      std::to_string(wf.size()) +
                      " (truncated, or from another plan?)");
    files.push_back(file);
  }
  if (options_.verifyChecksums)
    EMBER_RETURN_IF_ERROR(verifyWeightChecksums(rp, files));
  for (int c = 0; c < rp.constants_size(); ++c) {
    const plan::Constant &k = rp.constants(c);
    std::string what = "constant " + std::to_string(c);
    EMBER_RETURN_IF_ERROR(checkSlotIndex(k.slot(), what));
    what += " (" + program_->describeSlot(k.slot()) + ")";
    EMBER_RETURN_IF_ERROR(
        define(k.slot(), SlotInfo::Kind::kConstant, -1, what));
    const SlotInfo &slot = program_->slots[k.slot()];
    if (k.file() < 0 || k.file() >= static_cast<int>(files.size()))
      return invalidArgument(what + " refers to weights file " +
                             std::to_string(k.file()) + " of " +
                             std::to_string(files.size()));
    Shape shape;
    int64_t dims[Shape::kMaxRank];
    unsigned __int128 bytes = dtypeSize(slot.dtype);
    for (int d = 0; d < slot.rank; ++d) {
      if (slot.dims[d].isSymbolic())
        return invalidArgument(what + " has a symbolic shape " +
                               program_->describeDims(slot) +
                               "; constants need static shapes");
      dims[d] = slot.dims[d].size;
      bytes *= static_cast<uint64_t>(dims[d]);
      if (bytes > (static_cast<unsigned __int128>(1) << 62))
        return invalidArgument(what + ": shape " +
                               program_->describeDims(slot) + " is too large");
    }
    EMBER_ASSIGN_OR_RETURN(shape, Shape::fromDims(dims, slot.rank));
    if (static_cast<uint64_t>(bytes) != k.nbytes())
      return invalidArgument(
          what + " has nbytes " + std::to_string(k.nbytes()) + " but " +
          std::string(dtypeName(slot.dtype)) + shape.toString() + " needs " +
          std::to_string(static_cast<uint64_t>(bytes)));
    if (k.offset() % kWeightAlignment != 0)
      return invalidArgument(
          what + " starts at offset " + std::to_string(k.offset()) +
          ", not a multiple of " + std::to_string(kWeightAlignment));
    const MappedFile &file = *files[k.file()];
    if (k.offset() > file.size() || k.nbytes() > file.size() - k.offset())
      return dataLoss(what + " spans bytes [" + std::to_string(k.offset()) +
                      ", " + std::to_string(k.offset() + k.nbytes()) +
                      ") past the end of '" + file.path() + "' (" +
                      std::to_string(file.size()) + " bytes)");
    void *data = const_cast<unsigned char *>(file.data()) + k.offset();
    std::shared_ptr<void> owner(files[k.file()], files[k.file()].get());
    program_->constants[k.slot()] =
        Tensor::view(owner, data, slot.dtype, shape);
  }
  // Large constants into huge-page memory when asked (weight_memory.h).
  EMBER_ASSIGN_OR_RETURN(
      WeightPlacement placement,
      placeWeights(options_.weightMemory, program_->constants, files));
  if (options_.weightMemory != WeightMemory::kMmap && !progress::isQuiet())
    std::fprintf(stderr, "ember: %s\n", placement.summary().c_str());
  program_->files = std::move(files);
  return Status::ok();
}

Result<Attributes> convertAttributes(
    const google::protobuf::RepeatedPtrField<plan::Attribute> &attrs) {
  Attributes out;
  for (int i = 0; i < attrs.size(); ++i) {
    const plan::Attribute &a = attrs[i];
    if (a.name().empty())
      return invalidArgument("attribute " + std::to_string(i) + " has no name");
    if (out.has(a.name()))
      return invalidArgument("attribute '" + a.name() + "' is given twice");
    switch (a.value_case()) {
    case plan::Attribute::kI:
      out.set(a.name(), a.i());
      break;
    case plan::Attribute::kF:
      out.set(a.name(), a.f());
      break;
    case plan::Attribute::kS:
      out.set(a.name(), a.s());
      break;
    case plan::Attribute::kInts:
      out.set(a.name(), std::vector<int64_t>(a.ints().values().begin(),
                                             a.ints().values().end()));
      break;
    case plan::Attribute::kFloats:
      out.set(a.name(), std::vector<double>(a.floats().values().begin(),
                                            a.floats().values().end()));
      break;
    case plan::Attribute::kStrings:
      out.set(a.name(), std::vector<std::string>(a.strings().values().begin(),
                                                 a.strings().values().end()));
      break;
    default:
      return invalidArgument("attribute '" + a.name() + "' has no value");
    }
  }
  return out;
}

Status ProgramBuilder::buildInstruction(const plan::RankProgram &rp, int index,
                                        std::vector<char> &recordedEvents) {
  const plan::Instruction &in = rp.instructions(index);
  InstructionInfo info;
  info.kernelName = in.kernel();
  info.name = in.name();
  info.location =
      "instruction " + std::to_string(index) + " '" + in.kernel() + "'";
  if (!in.name().empty())
    info.location += " (" + in.name() + ")";
  auto fail = [&](Status s) { return s.withContext(info.location); };

  info.kernel = kernels_.find(in.kernel());
  if (in.kernel().empty())
    return fail(invalidArgument("no kernel name"));
  if (!info.kernel) {
    std::string known;
    for (const std::string &n : kernels_.names())
      known += (known.empty() ? "" : ", ") + n;
    return fail(notFound("unknown kernel '" + in.kernel() +
                         "'; this build has: " +
                         (known.empty() ? std::string("(none)") : known)));
  }
  const KernelDef &def = *info.kernel;
  int ni = in.inputs_size(), no = in.outputs_size();
  if (ni < def.minInputs || ni > def.maxInputs)
    return fail(invalidArgument(
        "kernel '" + def.name + "' takes " + std::to_string(def.minInputs) +
        " to " + std::to_string(def.maxInputs) + " inputs, the plan gives " +
        std::to_string(ni)));
  if (no < def.minOutputs || no > def.maxOutputs)
    return fail(invalidArgument(
        "kernel '" + def.name + "' produces " + std::to_string(def.minOutputs) +
        " to " + std::to_string(def.maxOutputs) + " outputs, the plan gives " +
        std::to_string(no)));
  auto attrs = convertAttributes(in.attrs());
  if (!attrs)
    return fail(attrs.status());
  info.attrs = std::move(*attrs);
  // The kernel contract's attributes (kinds, required ones, defaults filled
  // in), then the kernel's own checks.
  Status s = prepareKernelAttributes(def, info.attrs, ni, no);
  if (!s.isOk())
    return fail(s);
  for (int i = 0; i < ni; ++i) {
    int slot = in.inputs(i);
    if (slot == -1) {
      info.inputs.push_back(-1);
      continue;
    }
    std::string what = "input " + std::to_string(i);
    EMBER_RETURN_IF_ERROR(fail(checkSlotIndex(slot, what)));
    if (program_->slots[slot].kind == SlotInfo::Kind::kUndefined)
      return fail(invalidArgument(what + " reads " +
                                  program_->describeSlot(slot) +
                                  " before any instruction defines it"));
    info.inputs.push_back(slot);
  }
  for (int i = 0; i < no; ++i) {
    int slot = in.outputs(i);
    if (slot == -1) {
      // An optional output left out (the weights of an unweighted KJT): the
      // kernel must not produce it (checked when it runs).
      info.outputs.push_back(-1);
      continue;
    }
    EMBER_RETURN_IF_ERROR(fail(define(slot, SlotInfo::Kind::kInstruction, index,
                                      "output " + std::to_string(i))));
    info.outputs.push_back(slot);
  }
  int numStreams = rp.num_streams() == 0 ? 1 : rp.num_streams();
  if (in.stream() < 0 || in.stream() >= numStreams)
    return fail(invalidArgument("stream " + std::to_string(in.stream()) +
                                " is not one of the program's " +
                                std::to_string(numStreams) + " streams"));
  info.stream = in.stream();
  for (int e : in.wait_events()) {
    if (e < 0 || e >= rp.num_events())
      return fail(invalidArgument("waits for event " + std::to_string(e) +
                                  " of " + std::to_string(rp.num_events())));
    if (!recordedEvents[e])
      return fail(invalidArgument("waits for event " + std::to_string(e) +
                                  ", which no earlier instruction records"));
  }
  for (int e : in.record_events()) {
    if (e < 0 || e >= rp.num_events())
      return fail(invalidArgument("records event " + std::to_string(e) +
                                  " of " + std::to_string(rp.num_events())));
    recordedEvents[e] = 1;
  }
  info.waitEvents.assign(in.wait_events().begin(), in.wait_events().end());
  info.inputDistribution = in.input_distribution();
  info.recordEvents.assign(in.record_events().begin(),
                           in.record_events().end());
  if (in.collective() < 0 || in.collective() > plan_.collectives_size())
    return fail(invalidArgument("refers to collective " +
                                std::to_string(in.collective() - 1) + " of " +
                                std::to_string(plan_.collectives_size())));
  EMBER_RETURN_IF_ERROR(fail(checkCollectiveUse(def, in, info)));
  program_->instructions.push_back(std::move(info));
  return Status::ok();
}

Status ProgramBuilder::checkCollectiveUse(const KernelDef &def,
                                          const plan::Instruction &in,
                                          InstructionInfo &info) {
  if (def.collectiveKind == 0) {
    if (in.collective() != 0)
      return invalidArgument("kernel '" + def.name +
                             "' is not a collective but refers to collective " +
                             std::to_string(in.collective() - 1));
    return Status::ok();
  }
  auto kindName = [](int kind) {
    return plan::CollectiveDescriptor::Kind_Name(
        static_cast<plan::CollectiveDescriptor::Kind>(kind));
  };
  if (in.collective() == 0)
    return invalidArgument("kernel '" + def.name +
                           "' is a collective and needs a descriptor of kind " +
                           kindName(def.collectiveKind) +
                           " (Instruction.collective = 1 + its index in "
                           "Plan.collectives)");
  int index = in.collective() - 1;
  const CollectiveInfo &c = program_->collectives[index];
  std::string what =
      "collective " + std::to_string(index) + " '" + c.name + "'";
  if (static_cast<int>(c.kind) != def.collectiveKind)
    return invalidArgument("kernel '" + def.name +
                           "' needs a collective of kind " +
                           kindName(def.collectiveKind) + " but " + what +
                           " is " + kindName(static_cast<int>(c.kind)));
  if (c.position < 0) {
    std::string ranks;
    for (int r : c.groupRanks)
      ranks += (ranks.empty() ? "" : ", ") + std::to_string(r);
    return invalidArgument("rank " + std::to_string(options_.rank) + " runs " +
                           what + " but is not in its group (" + ranks + ")");
  }
  if (def.validateGroup) {
    Status s =
        def.validateGroup(info.attrs, static_cast<int>(c.groupRanks.size()));
    if (!s.isOk())
      return s.withContext(what);
  }
  info.collective = index;
  return Status::ok();
}

Status ProgramBuilder::buildInstructions(const plan::RankProgram &rp) {
  if (rp.num_streams() < 0 || rp.num_streams() > 1024)
    return invalidArgument("num_streams " + std::to_string(rp.num_streams()) +
                           " is out of range");
  if (rp.num_events() < 0 || rp.num_events() > (1 << 20))
    return invalidArgument("num_events " + std::to_string(rp.num_events()) +
                           " is out of range");
  program_->numStreams = rp.num_streams() == 0 ? 1 : rp.num_streams();
  program_->numEvents = rp.num_events();
  std::vector<char> recorded(rp.num_events(), 0);
  for (int i = 0; i < rp.instructions_size(); ++i)
    EMBER_RETURN_IF_ERROR(buildInstruction(rp, i, recorded));
  return Status::ok();
}

Status ProgramBuilder::buildOutputs(const plan::RankProgram &rp) {
  const plan::Signature &sig = plan_.signature();
  if (sig.outputs_size() == 0)
    return invalidArgument("the signature has no outputs");
  if (sig.outputs_size() != rp.output_slots_size())
    return invalidArgument("the signature has " +
                           std::to_string(sig.outputs_size()) +
                           " outputs but the program binds " +
                           std::to_string(rp.output_slots_size()));
  std::set<std::string> names;
  for (int i = 0; i < sig.outputs_size(); ++i) {
    const plan::TensorSpec &spec = sig.outputs(i);
    std::string what = "output " + std::to_string(i) + " '" + spec.name() + "'";
    if (spec.name().empty() || !names.insert(spec.name()).second)
      return invalidArgument(what + " has an empty or repeated name");
    EMBER_ASSIGN_OR_RETURN(DType dtype, convertDType(spec.dtype(), what));
    EMBER_ASSIGN_OR_RETURN(std::vector<DimSpec> dims,
                           convertDims(spec.shape(), what));
    int slot = rp.output_slots(i);
    EMBER_RETURN_IF_ERROR(checkSlotIndex(slot, what));
    if (program_->slots[slot].kind == SlotInfo::Kind::kUndefined)
      return invalidArgument(what + ": " + program_->describeSlot(slot) +
                             " is never produced");
    EMBER_RETURN_IF_ERROR(checkSameTypeAsSlot(dtype, dims, slot, what));
    program_->slots[slot].isOutput = true;
    program_->outputs.push_back({spec.name(), slot});
    TensorInfo ti{spec.name(), dtype, /*dims=*/{}, /*bagOffsets=*/"",
                  /*includeLastOffset=*/false};
    for (const DimSpec &d : dims) {
      std::string s = dimsToString({d});
      ti.dims.push_back(s.substr(1, s.size() - 2));
    }
    program_->signature.outputs.push_back(std::move(ti));
  }
  return Status::ok();
}

std::string limitName(int64_t limit) {
  return std::to_string(limit) +
         " bytes (SessionOptions.maxTensorBytes, EMBER_MAX_TENSOR_BYTES)";
}

/// What a run would allocate because the plan says so: every slot whose
/// static dims alone need more than the limit (constants excepted: they are
/// views of the weights files), and the static arena. Refused here, before
/// anything is allocated.
Status ProgramBuilder::checkDeclaredSizes() const {
  const int64_t limit = options_.maxTensorBytes;
  if (program_->staticArenaBytes > limit)
    return invalidArgument("the static arena (arena_bytes) is " +
                           std::to_string(program_->staticArenaBytes) +
                           " bytes, more than the limit of " +
                           limitName(limit));
  for (size_t s = 0; s < program_->slots.size(); ++s) {
    const SlotInfo &info = program_->slots[s];
    if (info.kind == SlotInfo::Kind::kConstant)
      continue;
    bool empty = false;
    for (int d = 0; d < info.rank; ++d)
      empty = empty || (!info.dims[d].isSymbolic() && info.dims[d].size == 0);
    unsigned __int128 bytes = dtypeSize(info.dtype);
    bool tooLarge = false;
    for (int d = 0; d < info.rank && !empty && !tooLarge; ++d) {
      if (info.dims[d].isSymbolic())
        continue; // its symbol's value comes at run time
      // Each size is at most 2^48 (convertDims): no overflow before the check.
      bytes *= static_cast<uint64_t>(info.dims[d].size);
      tooLarge = bytes > static_cast<unsigned __int128>(limit);
    }
    if (tooLarge)
      return invalidArgument(program_->describeSlot(static_cast<int>(s)) +
                             " is " + std::string(dtypeName(info.dtype)) +
                             program_->describeDims(info) +
                             ", more than the limit of " + limitName(limit));
  }
  return Status::ok();
}

void ProgramBuilder::computeLiveness() {
  std::vector<int> lastUse(program_->slots.size(), -1);
  for (int i = 0; i < static_cast<int>(program_->instructions.size()); ++i) {
    const InstructionInfo &in = program_->instructions[i];
    for (int s : in.inputs)
      if (s >= 0)
        lastUse[s] = i;
    for (int s : in.outputs)
      if (s >= 0)
        lastUse[s] = std::max(lastUse[s], i); // unused results die at once
  }
  for (size_t s = 0; s < program_->slots.size(); ++s) {
    const SlotInfo &info = program_->slots[s];
    if (info.isOutput || lastUse[s] < 0 ||
        info.kind == SlotInfo::Kind::kConstant)
      continue;
    program_->instructions[lastUse[s]].releaseAfter.push_back(
        static_cast<int>(s));
  }
}

Result<std::shared_ptr<const Program>> ProgramBuilder::build() {
  EMBER_RETURN_IF_ERROR(checkHeader());
  EMBER_RETURN_IF_ERROR(checkTarget());
  EMBER_RETURN_IF_ERROR(checkCollectives());
  const plan::RankProgram &rp = plan_.programs(options_.rank);
  program_->rank = options_.rank;
  program_->worldSize = plan_.programs_size();
  program_->maxTensorBytes = options_.maxTensorBytes;
  std::string rankContext =
      "rank " + std::to_string(options_.rank) + " program";
  auto inRank = [&](Status s) {
    return s.isOk() ? s : s.withContext(rankContext);
  };
  EMBER_RETURN_IF_ERROR(inRank(buildSlots(rp)));
  EMBER_RETURN_IF_ERROR(buildSymbolBounds());
  EMBER_RETURN_IF_ERROR(inRank(buildSignature(rp)));
  EMBER_RETURN_IF_ERROR(inRank(buildConstants(rp)));
  EMBER_RETURN_IF_ERROR(inRank(buildInstructions(rp)));
  EMBER_RETURN_IF_ERROR(inRank(buildOutputs(rp)));
  computeLiveness();
  EMBER_RETURN_IF_ERROR(inRank(validateMemoryPlan(rp, *program_)));
  EMBER_RETURN_IF_ERROR(inRank(checkDeclaredSizes()));
  // Cross-batch pipelining (executor/pipeline_stages.h) issues the marked
  // collectives of the next batch early: every rank must mark the same
  // number, or the ranks would pair different collectives.
  auto markedCollectives = [](const plan::RankProgram &program) {
    int count = 0;
    for (const plan::Instruction &in : program.instructions())
      count += in.input_distribution() && in.collective() > 0;
    return count;
  };
  const int mine = markedCollectives(rp);
  for (int r = 0; r < plan_.programs_size(); ++r) {
    int theirs = markedCollectives(plan_.programs(r));
    if (theirs != mine)
      return invalidArgument(
          rankContext + " marks " + std::to_string(mine) +
          " collective(s) as its input distribution, rank " +
          std::to_string(r) + " program " + std::to_string(theirs) +
          ": every rank must mark the same collectives (recompile the plan)");
  }
  return std::shared_ptr<const Program>(program_);
}

} // namespace

Result<std::shared_ptr<const Program>>
loadProgram(const std::string &planPath, const LoadOptions &options,
            const KernelRegistry &kernels) {
  // Read errors name the file already ("'x.plan' does not exist").
  EMBER_ASSIGN_OR_RETURN(std::string bytes,
                         readSmallFile(planPath, kMaxPlanBytes));
  auto proto = parsePlan(planPath, bytes);
  if (!proto)
    return proto.status().withContext("plan '" + planPath + "'");
  ProgramBuilder builder(*proto, directoryOf(planPath), options, kernels);
  auto program = builder.build();
  if (!program)
    return program.status().withContext("plan '" + planPath + "'");
  return program;
}

} // namespace ember

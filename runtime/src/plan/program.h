//===- program.h - A loaded, validated rank program -------------*- C++ -*-===//
//
// What the loader turns a plan into and the executor runs: plain C++ data,
// no protobuf types. Everything here was validated at load time (slot
// indices, SSA order, kernels and their attributes, constants), so the
// executor only checks what depends on run-time inputs.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_PLAN_PROGRAM_H
#define EMBER_PLAN_PROGRAM_H

#include "comm/collective_info.h"
#include "ember/dtype.h"
#include "ember/session.h"
#include "ember/tensor.h"
#include "kernels/attributes.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ember {

struct KernelDef;

/// One dimension of a slot: a fixed size, or factor * symbol.
struct DimSpec {
  int64_t size = 0;
  int symbol = -1; // index into Program::symbols, or -1 for a fixed size
  int64_t factor = 1;
  bool isSymbolic() const { return symbol >= 0; }
};

struct SlotInfo {
  std::string name;
  DType dtype = DType::kFloat32;
  int rank = 0;
  std::array<DimSpec, Shape::kMaxRank> dims{};
  enum class Kind {
    kUndefined,
    kInput,
    kConstant,
    kInstruction
  } kind = Kind::kUndefined;
  int definedBy = -1; // instruction index for kInstruction
  bool isOutput = false;
  /// The compiler's memory plan: the slot lives at this byte offset of the
  /// run's static arena, which holds `arenaCapacity` bytes for it (its size
  /// at the symbols' bounds). -1: allocated from the dynamic arena.
  int64_t arenaOffset = -1;
  int64_t arenaCapacity = 0;
};

struct InstructionInfo {
  const KernelDef *kernel = nullptr;
  std::string kernelName;
  std::string name;        // source location from the plan
  std::vector<int> inputs; // slot indices; -1 = absent optional input
  std::vector<int> outputs;
  Attributes attrs;
  int stream = 0;
  std::vector<int> waitEvents;   // events recorded earlier, awaited first
  std::vector<int> recordEvents; // recorded when this instruction is issued
  int collective = -1;           // index into Program::collectives, or -1
  bool inputDistribution = false; // pipeline stage A (pipeline_stages.h)
  std::vector<int> releaseAfter; // slots whose last use is this instruction
  std::string location;          // "instruction 3 'linear' (bottom_mlp.0)"
};

struct DenseInputBinding {
  std::string name;
  int slot = -1;
};

struct KjtInputBinding {
  std::string name;
  std::vector<std::string> keys;
  int valuesSlot = -1, lengthsSlot = -1, weightsSlot = -1;
  int batchSymbol = -1; // the symbol bound to the batch size
};

struct OutputBinding {
  std::string name;
  int slot = -1;
};

/// Keeps a read-only mmap of a weights file alive.
class MappedFile;

struct Program {
  int rank = 0;
  int worldSize = 1;
  std::vector<std::string> symbols;
  /// Per symbol: its upper bound from the plan (--max-batch), or -1.
  std::vector<int64_t> symbolMax;
  /// Bytes of the static arena (RankProgram.arena_bytes); 0 = none.
  int64_t staticArenaBytes = 0;
  /// The largest buffer a run may allocate (SessionOptions::maxTensorBytes).
  int64_t maxTensorBytes = int64_t{1} << 36;
  /// RankProgram.num_streams (at least 1) and num_events.
  int numStreams = 1;
  int numEvents = 0;
  std::vector<SlotInfo> slots;
  std::vector<InstructionInfo> instructions;
  std::vector<DenseInputBinding> inputs;
  std::vector<KjtInputBinding> kjtInputs;
  std::vector<OutputBinding> outputs;
  /// Every CollectiveDescriptor of the plan, seen from this rank (position
  /// -1 where this rank is not in the group).
  std::vector<CollectiveInfo> collectives;
  /// One per slot; defined for constant slots (views of mapped files).
  std::vector<Tensor> constants;
  std::vector<std::shared_ptr<MappedFile>> files;
  ModelSignature signature;

  /// "slot 4 'dense'".
  std::string describeSlot(int slot) const;
  /// "[B, 13]" with symbol names.
  std::string describeDims(const SlotInfo &slot) const;
};

} // namespace ember

#endif // EMBER_PLAN_PROGRAM_H

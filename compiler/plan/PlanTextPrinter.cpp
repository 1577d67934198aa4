//===- PlanTextPrinter.cpp - A plan as text to read and FileCheck ---------===//
#include "plan/PlanTextPrinter.h"

#include "llvm/Support/raw_ostream.h"

#include <map>

namespace mlir::ember::plan_emitter {
namespace {

const char *dtypeName(pb::DataType t) {
  switch (t) {
  case pb::FLOAT32:
    return "f32";
  case pb::FLOAT16:
    return "f16";
  case pb::BFLOAT16:
    return "bf16";
  case pb::FLOAT64:
    return "f64";
  case pb::INT8:
    return "i8";
  case pb::UINT8:
    return "u8";
  case pb::INT32:
    return "i32";
  case pb::INT64:
    return "i64";
  case pb::BOOL:
    return "bool";
  default:
    return "?";
  }
}

const char *collectiveKindName(pb::CollectiveDescriptor::Kind kind) {
  switch (kind) {
  case pb::CollectiveDescriptor::ALL_TO_ALL:
    return "all_to_all";
  case pb::CollectiveDescriptor::KJT_ALL_TO_ALL:
    return "kjt_all_to_all";
  case pb::CollectiveDescriptor::REDUCE_SCATTER:
    return "reduce_scatter";
  case pb::CollectiveDescriptor::ALL_GATHER:
    return "all_gather";
  case pb::CollectiveDescriptor::ALL_REDUCE:
    return "all_reduce";
  default:
    return "?";
  }
}

template <typename Dims>
void printType(llvm::raw_ostream &os, pb::DataType dtype, const Dims &shape) {
  os << dtypeName(dtype) << "[";
  bool first = true;
  for (const pb::Dim &d : shape) {
    if (!first)
      os << ", ";
    first = false;
    if (d.kind_case() == pb::Dim::kSymbol) {
      if (d.factor() > 1)
        os << d.factor() << "*";
      os << d.symbol();
    } else {
      os << d.size();
    }
  }
  os << "]";
}

template <typename List>
void printList(llvm::raw_ostream &os, const List &values, bool quote) {
  os << "[";
  bool first = true;
  for (const auto &v : values) {
    if (!first)
      os << ", ";
    first = false;
    if (quote)
      os << "\"" << v << "\"";
    else
      os << v;
  }
  os << "]";
}

void printAttribute(llvm::raw_ostream &os, const pb::Attribute &a) {
  os << a.name() << " = ";
  switch (a.value_case()) {
  case pb::Attribute::kI:
    os << a.i();
    break;
  case pb::Attribute::kF:
    os << a.f();
    break;
  case pb::Attribute::kS:
    os << "\"" << a.s() << "\"";
    break;
  case pb::Attribute::kInts:
    printList(os, a.ints().values(), false);
    break;
  case pb::Attribute::kFloats:
    printList(os, a.floats().values(), false);
    break;
  case pb::Attribute::kStrings:
    printList(os, a.strings().values(), true);
    break;
  default:
    os << "?";
  }
}

void printSlotType(llvm::raw_ostream &os, const pb::RankProgram &program,
                   int slot) {
  if (slot < 0 || slot >= program.slots_size()) {
    os << "?";
    return;
  }
  const pb::Slot &s = program.slots(slot);
  printType(os, s.dtype(), s.shape());
  if (s.has_arena_offset())
    os << " @" << s.arena_offset();
}

void printProgram(llvm::raw_ostream &os, const pb::Plan &plan,
                  const pb::RankProgram &program,
                  const std::vector<PendingConstant> &constants) {
  os << "rank " << program.rank() << ": " << program.slots_size() << " slots";
  if (program.arena_bytes() > 0)
    os << ", arena " << program.arena_bytes() << " bytes";
  if (program.num_streams() > 1)
    os << ", " << program.num_streams() << " streams, " << program.num_events()
       << " events";
  os << "\n";
  const pb::Signature &sig = plan.signature();
  for (int i = 0; i < program.input_slots_size() && i < sig.inputs_size(); ++i) {
    os << "  input %" << program.input_slots(i) << " \"" << sig.inputs(i).name()
       << "\": ";
    printSlotType(os, program, program.input_slots(i));
    os << "\n";
  }
  for (int i = 0;
       i < program.kjt_input_slots_size() && i < sig.kjt_inputs_size(); ++i) {
    const pb::KjtSlots &k = program.kjt_input_slots(i);
    os << "  input kjt \"" << sig.kjt_inputs(i).name() << "\": values %"
       << k.values() << ", lengths %" << k.lengths();
    if (k.weights() >= 0)
      os << ", weights %" << k.weights();
    os << "\n";
  }
  for (const PendingConstant &c : constants) {
    os << "  const %" << c.slot << " \"";
    if (c.slot >= 0 && c.slot < program.slots_size())
      os << program.slots(c.slot).name();
    os << "\": ";
    printSlotType(os, program, c.slot);
    os << " (" << c.size() << " bytes)\n";
  }
  for (const pb::Instruction &instr : program.instructions()) {
    os << "  ";
    for (int i = 0; i < instr.outputs_size(); ++i) {
      os << (i ? ", " : "");
      if (instr.outputs(i) < 0) {
        os << "-"; // an optional output left out
        continue;
      }
      os << "%" << instr.outputs(i) << ": ";
      printSlotType(os, program, instr.outputs(i));
    }
    if (instr.outputs_size() > 0)
      os << " = ";
    os << instr.kernel() << "(";
    for (int i = 0; i < instr.inputs_size(); ++i) {
      os << (i ? ", " : "");
      if (instr.inputs(i) < 0)
        os << "-";
      else
        os << "%" << instr.inputs(i);
    }
    os << ")";
    if (instr.attrs_size() > 0) {
      os << " {";
      for (int i = 0; i < instr.attrs_size(); ++i) {
        os << (i ? ", " : "");
        printAttribute(os, instr.attrs(i));
      }
      os << "}";
    }
    if (instr.collective() > 0)
      os << " collective " << instr.collective() - 1;
    if (instr.stream() > 0)
      os << " stream " << instr.stream();
    if (instr.wait_events_size() > 0) {
      os << " wait ";
      printList(os, instr.wait_events(), false);
    }
    if (instr.record_events_size() > 0) {
      os << " record ";
      printList(os, instr.record_events(), false);
    }
    if (instr.input_distribution())
      os << " input_distribution";
    if (!instr.name().empty())
      os << "  // " << instr.name();
    os << "\n";
  }
  for (int i = 0; i < program.output_slots_size() && i < sig.outputs_size();
       ++i)
    os << "  output \"" << sig.outputs(i).name() << "\" = %"
       << program.output_slots(i) << "\n";
}

} // namespace

std::string
printPlanText(const pb::Plan &plan,
              const std::vector<std::vector<PendingConstant>> &constants) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "plan target "
     << (plan.target() == pb::TARGET_CUDA ? "cuda" : "cpu") << ", world size "
     << std::max(1, plan.world_size()) << "\n";
  for (const pb::SymbolBound &b : plan.symbol_bounds())
    os << "bound " << b.symbol() << " <= " << b.max() << "\n";
  const pb::Signature &sig = plan.signature();
  for (const pb::TensorSpec &in : sig.inputs()) {
    os << "input \"" << in.name() << "\": ";
    printType(os, in.dtype(), in.shape());
    if (!in.bag_offsets().empty())
      os << " bags of \"" << in.bag_offsets() << "\"";
    os << "\n";
  }
  for (const pb::KjtSpec &k : sig.kjt_inputs()) {
    os << "input kjt \"" << k.name() << "\": keys ";
    printList(os, k.keys(), true);
    os << ", values " << dtypeName(k.values_dtype()) << ", lengths "
       << dtypeName(k.lengths_dtype()) << (k.has_weights() ? ", weighted" : "")
       << ", batch " << (k.batch_symbol().empty() ? "B" : k.batch_symbol())
       << "\n";
  }
  for (const pb::TensorSpec &out : sig.outputs()) {
    os << "output \"" << out.name() << "\": ";
    printType(os, out.dtype(), out.shape());
    os << "\n";
  }
  for (int i = 0; i < plan.collectives_size(); ++i) {
    const pb::CollectiveDescriptor &c = plan.collectives(i);
    os << "collective " << i << ": " << collectiveKindName(c.kind())
       << " ranks ";
    printList(os, c.group_ranks(), false);
    if (!c.name().empty())
      os << "  // " << c.name();
    os << "\n";
  }
  static const std::vector<PendingConstant> none;
  for (int r = 0; r < plan.programs_size(); ++r)
    printProgram(os, plan, plan.programs(r),
                 r < static_cast<int>(constants.size()) ? constants[r] : none);
  return text;
}

} // namespace mlir::ember::plan_emitter

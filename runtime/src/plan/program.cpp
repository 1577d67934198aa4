//===- program.cpp - A loaded, validated rank program ---------------------===//
#include "plan/program.h"

namespace ember {

std::string Program::describeSlot(int slot) const {
  if (slot < 0 || slot >= static_cast<int>(slots.size()))
    return "slot " + std::to_string(slot);
  return "slot " + std::to_string(slot) + " '" + slots[slot].name + "'";
}

std::string Program::describeDims(const SlotInfo &slot) const {
  std::string s = "[";
  for (int i = 0; i < slot.rank; ++i) {
    if (i)
      s += ", ";
    const DimSpec &d = slot.dims[i];
    if (!d.isSymbolic())
      s += std::to_string(d.size);
    else if (d.factor != 1)
      s += std::to_string(d.factor) + "*" + symbols[d.symbol];
    else
      s += symbols[d.symbol];
  }
  return s + "]";
}

} // namespace ember

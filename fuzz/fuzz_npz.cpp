//===- fuzz_npz.cpp - Fuzzing the .npz reader -----------------------------===//
//
// Input: the bytes of an .npz (zip) archive. parseNpz must return the
// entries or a Status, never crash, hang, or allocate much more than the
// archive could hold (declared sizes are not trusted); what it returns must
// write and read back unchanged.
//
//===----------------------------------------------------------------------===//
#include "fuzz_support.h"
#include "io/npy.h"

using namespace ember;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  auto entries = npy::parseNpz(bytes, "fuzz input");
  if (!entries) {
    EMBER_FUZZ_CHECK(!entries.status().message().empty(), "an empty message");
    return 0;
  }
  for (const auto &[name, tensor] : *entries) {
    auto encoded = npy::encodeNpy(tensor);
    EMBER_FUZZ_CHECK(encoded.isOk(), encoded.status().toString());
    auto again = npy::parseNpy(encoded->data(), encoded->size(), name);
    EMBER_FUZZ_CHECK(again.isOk(), again.status().toString());
    EMBER_FUZZ_CHECK(again->shape() == tensor.shape(), name);
  }
  return 0;
}

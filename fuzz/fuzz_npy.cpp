//===- fuzz_npy.cpp - Fuzzing the .npy reader -----------------------------===//
//
// Input: the bytes of an .npy file. parseNpy must return a tensor or a
// Status, never crash or allocate more than the data it describes; a tensor
// it accepts must encode again to an .npy that parses to the same tensor.
//
//===----------------------------------------------------------------------===//
#include "fuzz_support.h"
#include "io/npy.h"

using namespace ember;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  auto tensor = npy::parseNpy(data, size, "fuzz input");
  if (!tensor) {
    EMBER_FUZZ_CHECK(!tensor.status().message().empty(), "an empty message");
    return 0;
  }
  EMBER_FUZZ_CHECK(tensor->nbytes() <= size, "more bytes than the input");
  auto encoded = npy::encodeNpy(*tensor);
  EMBER_FUZZ_CHECK(encoded.isOk(), encoded.status().toString());
  auto again = npy::parseNpy(encoded->data(), encoded->size(), "re-encoded");
  EMBER_FUZZ_CHECK(again.isOk(), again.status().toString());
  EMBER_FUZZ_CHECK(again->dtype() == tensor->dtype() &&
                       again->shape() == tensor->shape(),
                   again->describe() + " vs " + tensor->describe());
  EMBER_FUZZ_CHECK(
      tensor->nbytes() == 0 ||
          std::memcmp(again->data(), tensor->data(), tensor->nbytes()) == 0,
      "the data changed in a round trip");
  return 0;
}

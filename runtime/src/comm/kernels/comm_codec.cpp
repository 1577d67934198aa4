//===- comm_codec.cpp - 16-bit wire formats for float32 collectives -------===//
#include "comm/kernels/comm_codec.h"

#include "ember/dtype.h"

namespace ember::collective {

Result<CommCodec> commCodec(const Attributes &attrs) {
  EMBER_ASSIGN_OR_RETURN(std::string name, attrs.getString("comm_dtype"));
  if (name == "float32")
    return CommCodec::kNone;
  if (name == "float16")
    return CommCodec::kFloat16;
  if (name == "bfloat16")
    return CommCodec::kBFloat16;
  return invalidArgument("attribute 'comm_dtype' must be \"float32\", "
                         "\"float16\" or \"bfloat16\", not \"" +
                         name + "\"");
}

const char *commCodecName(CommCodec codec) {
  switch (codec) {
  case CommCodec::kFloat16:
    return "float16";
  case CommCodec::kBFloat16:
    return "bfloat16";
  default:
    return "float32";
  }
}

void encodeWire(CommCodec codec, const float *in, uint16_t *out, int64_t n) {
  if (codec == CommCodec::kFloat16)
    for (int64_t i = 0; i < n; ++i)
      out[i] = floatToHalf(in[i]);
  else
    for (int64_t i = 0; i < n; ++i)
      out[i] = floatToBFloat16(in[i]);
}

float decodeWire(CommCodec codec, uint16_t v) {
  return codec == CommCodec::kFloat16 ? halfToFloat(v) : bfloat16ToFloat(v);
}

} // namespace ember::collective

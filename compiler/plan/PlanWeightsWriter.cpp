//===- PlanWeightsWriter.cpp - Constants streamed into weights files ------===//
#include "plan/PlanWeightsWriter.h"

#include "passes/WeightData.h"

#include <algorithm>
#include <cstring>

namespace mlir::ember::plan_emitter {

namespace {

bool allZero(const char *data, uint64_t size) {
  static const char zeros[4096] = {};
  for (uint64_t done = 0; done < size;) {
    uint64_t n = std::min<uint64_t>(sizeof(zeros), size - done);
    if (std::memcmp(data + done, zeros, n) != 0)
      return false;
    done += n;
  }
  return true;
}

} // namespace

uint64_t ConstantStreamer::append(const PendingConstant &constant) {
  uint64_t offset = file_.beginTensor();
  if (constant.size() == 0)
    return offset;
  if (constant.rows == 1 || constant.rowStride == constant.rowBytes)
    appendRange(constant.source, constant.size());
  else if (constant.rowStride == 0)
    appendSplat(constant);
  else
    appendWindow(constant);
  return offset;
}

void ConstantStreamer::appendChunk(const char *data, uint64_t size) {
  // Zero blocks of 1 MiB become holes (consecutive data blocks are written
  // with one call).
  constexpr uint64_t kBlock = uint64_t(1) << 20;
  uint64_t pending = 0; // data bytes not written yet, ending at `done`
  for (uint64_t done = 0; done < size;) {
    uint64_t n = std::min(kBlock, size - done);
    if (allZero(data + done, n)) {
      file_.appendBytes(data + done - pending, pending);
      pending = 0;
      file_.appendZeros(n);
    } else {
      pending += n;
    }
    done += n;
  }
  file_.appendBytes(data + size - pending, pending);
}

void ConstantStreamer::appendRange(const char *data, uint64_t size) {
  for (uint64_t done = 0; done < size;) {
    WeightExtent extent = weightExtentAt(data + done, size - done);
    if (extent.hole) {
      file_.appendZeros(extent.bytes);
      advance(extent.bytes);
      done += extent.bytes;
      continue;
    }
    uint64_t n = std::min(extent.bytes, kWeightsChunkBytes);
    appendChunk(data + done, n);
    // The pages of a mapped source are back in the file: drop them.
    releaseMappedPages(data + done, n);
    advance(n);
    done += n;
  }
}

void ConstantStreamer::appendSplat(const PendingConstant &constant) {
  const uint64_t element = constant.rowBytes;
  if (allZero(constant.source, element)) {
    file_.appendZeros(constant.size());
    advance(constant.size());
    return;
  }
  uint64_t perChunk = std::max<uint64_t>(1, kWeightsChunkBytes / element);
  perChunk = std::min(perChunk, constant.rows);
  buffer_.resize(perChunk * element);
  for (uint64_t i = 0; i < perChunk; ++i)
    std::memcpy(buffer_.data() + i * element, constant.source, element);
  for (uint64_t done = 0; done < constant.rows;) {
    uint64_t n = std::min(perChunk, constant.rows - done);
    file_.appendBytes(buffer_.data(), n * element);
    advance(n * element);
    done += n;
  }
}

void ConstantStreamer::appendWindow(const PendingConstant &constant) {
  // Rows are gathered into the buffer a chunk at a time; a run of rows
  // whose span in the source is a hole is written as one.
  uint64_t perChunk =
      std::max<uint64_t>(1, kWeightsChunkBytes / constant.rowBytes);
  for (uint64_t row = 0; row < constant.rows;) {
    uint64_t n = std::min(perChunk, constant.rows - row);
    const char *first = constant.source + row * constant.rowStride;
    uint64_t span = (n - 1) * constant.rowStride + constant.rowBytes;
    WeightExtent extent = weightExtentAt(first, span);
    if (extent.hole && extent.bytes == span) {
      file_.appendZeros(n * constant.rowBytes);
      advance(n * constant.rowBytes);
      row += n;
      continue;
    }
    buffer_.resize(n * constant.rowBytes);
    for (uint64_t r = 0; r < n; ++r)
      std::memcpy(buffer_.data() + r * constant.rowBytes,
                  first + r * constant.rowStride, constant.rowBytes);
    appendChunk(buffer_.data(), buffer_.size());
    releaseMappedPages(first, span);
    advance(n * constant.rowBytes);
    row += n;
  }
}

} // namespace mlir::ember::plan_emitter

//===- plan_writer.h - Writing plans and weight files -----------*- C++ -*-===//
//
// Used by the compiler's plan emitter and by test helpers. Part of the
// ember_plan_proto target, which depends on protobuf only, so errors are
// reported as bool + message rather than ember::Status.
//
//   WeightsFileWriter w;
//   if (!w.open(dir + "/model.rank0.weights", &err)) ...
//   uint64_t offset = w.append(table.data(), table.size() * 4);
//   if (!w.finish(program.add_weight_files(), "model.rank0.weights", &err)) ...
//   if (!writePlanFile(plan, dir + "/model.plan", &err)) ...
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_PLAN_PLAN_WRITER_H
#define EMBER_PLAN_PLAN_WRITER_H

#include "plan/ember_plan.pb.h"
#include "plan/xxhash64.h"

#include <cstdint>
#include <cstdio>
#include <string>

namespace ember {

/// Writes a raw weights file: each appended tensor starts at a multiple of
/// kWeightAlignment (zero padding between). The file is written to a
/// temporary name and renamed by finish(), so a failed write leaves nothing.
class WeightsFileWriter {
public:
  WeightsFileWriter() = default;
  ~WeightsFileWriter();
  WeightsFileWriter(const WeightsFileWriter &) = delete;
  WeightsFileWriter &operator=(const WeightsFileWriter &) = delete;

  bool open(const std::string &path, std::string *error);
  /// Appends nbytes at the next aligned offset and returns that offset.
  /// Write errors are reported by finish().
  uint64_t append(const void *data, uint64_t nbytes);
  /// Flushes, renames into place and fills `out` (path = relativePath, size,
  /// xxhash64).
  bool finish(plan::WeightFile *out, const std::string &relativePath,
              std::string *error);

private:
  void writeBytes(const void *data, uint64_t nbytes);

  std::FILE *file_ = nullptr;
  std::string path_, tempPath_;
  uint64_t size_ = 0;
  bool failed_ = false;
  XxHash64 hash_;
};

/// Writes `plan` atomically: protobuf text format when the path ends in
/// ".txt" or ".pbtxt", binary otherwise. Sets format_version (if 0) and the
/// end marker.
bool writePlanFile(plan::Plan plan, const std::string &path,
                   std::string *error);

} // namespace ember

#endif // EMBER_PLAN_PLAN_WRITER_H

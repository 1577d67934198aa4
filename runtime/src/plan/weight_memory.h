//===- weight_memory.h - Where a session keeps its weights ------*- C++ -*-===//
//
// Constants are views of the mapped weights files (zero-copy, "mmap"). File
// mappings get 4 KiB pages, so random lookups in a large table pay a TLB
// miss (a page walk, two-dimensional under a VM) on nearly every row.
// "huge_pages" copies every constant of at least 2 MiB into fresh anonymous
// memory, 2 MiB aligned, with madvise(MADV_HUGEPAGE), where transparent huge
// pages back it; the file's pages are then dropped from the process.
// "auto" does that when transparent huge pages are enabled (always or
// madvise) and keeps the mapping otherwise. When they are off ("never"),
// huge_pages falls back to the mapping and says so.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_PLAN_WEIGHT_MEMORY_H
#define EMBER_PLAN_WEIGHT_MEMORY_H

#include "ember/status.h"
#include "ember/tensor.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ember {

class MappedFile;

enum class WeightMemory { kMmap, kHugePages, kAuto };

/// "mmap", "huge_pages" or "auto"; anything else is an InvalidArgument
/// naming the value and the accepted ones.
Result<WeightMemory> parseWeightMemory(std::string_view name);
const char *weightMemoryName(WeightMemory mode);

/// Constants smaller than this stay mapped (one huge page).
constexpr size_t kHugePageBytes = size_t{2} << 20;

/// The selected mode of transparent huge pages ("always", "madvise" or
/// "never": the bracketed word) read from `sysfsPath`; an error when the
/// file cannot be read or has no bracketed word.
Result<std::string> readTransparentHugePageMode(const std::string &sysfsPath);

/// /sys/kernel/mm/transparent_hugepage/enabled, or EMBER_THP_SYSFS_PATH when
/// set (tests point it at a file that says "never").
std::string transparentHugePageSysfsPath();

/// What placeWeights did (ember-run prints it; the Python API returns it).
struct WeightPlacement {
  WeightMemory requested = WeightMemory::kMmap;
  bool hugePages = false;   // constants were copied into huge-page memory
  std::string fallback;     // why not, when huge pages were asked for
  std::string mappedBecause; // why nothing was copied, when not a fallback
  int64_t tablesCopied = 0; // constants copied
  uint64_t bytesCopied = 0;
  double seconds = 0; // time spent copying
  /// The process's AnonHugePages (/proc/self/smaps_rollup) after copying:
  /// how much of the copies (and anything else) the kernel backed with
  /// huge pages; -1 when unknown.
  int64_t anonHugePagesBytes = -1;
  std::string summary() const;
};

/// Applies `mode` to `constants` (one per slot, views of `files`; undefined
/// tensors are skipped): with huge pages, every constant of at least
/// kHugePageBytes is copied, the view replaced and the file's pages of the
/// copied range dropped. Fails only when memory for a copy cannot be had
/// (ResourceExhausted naming the constant's size).
Result<WeightPlacement>
placeWeights(WeightMemory mode, std::vector<Tensor> &constants,
             const std::vector<std::shared_ptr<MappedFile>> &files);

} // namespace ember

#endif // EMBER_PLAN_WEIGHT_MEMORY_H

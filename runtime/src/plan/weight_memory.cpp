//===- weight_memory.cpp - Where a session keeps its weights --------------===//
#include "plan/weight_memory.h"

#include "plan/mapped_file.h"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/mman.h>

namespace ember {

Result<WeightMemory> parseWeightMemory(std::string_view name) {
  if (name == "mmap")
    return WeightMemory::kMmap;
  if (name == "huge_pages")
    return WeightMemory::kHugePages;
  if (name == "auto")
    return WeightMemory::kAuto;
  return invalidArgument("weight memory '" + std::string(name) +
                         "' is not one of mmap, huge_pages, auto");
}

const char *weightMemoryName(WeightMemory mode) {
  switch (mode) {
  case WeightMemory::kMmap:
    return "mmap";
  case WeightMemory::kHugePages:
    return "huge_pages";
  case WeightMemory::kAuto:
    return "auto";
  }
  return "?";
}

Result<std::string> readTransparentHugePageMode(const std::string &sysfsPath) {
  std::ifstream in(sysfsPath);
  std::string text;
  if (!in || !std::getline(in, text))
    return notFound("cannot read " + sysfsPath);
  size_t open = text.find('['), close = text.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open)
    return invalidArgument(sysfsPath + " says '" + text +
                           "', with no [selected] mode");
  return text.substr(open + 1, close - open - 1);
}

std::string transparentHugePageSysfsPath() {
  const char *env = std::getenv("EMBER_THP_SYSFS_PATH");
  return env && *env ? env : "/sys/kernel/mm/transparent_hugepage/enabled";
}

namespace {

int64_t anonHugePagesBytes() {
  std::ifstream in("/proc/self/smaps_rollup");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("AnonHugePages:", 0) == 0) {
      std::istringstream fields(line.substr(14));
      int64_t kib = -1;
      fields >> kib;
      return kib < 0 ? -1 : kib * 1024;
    }
  return -1;
}

std::string megabytes(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MB", bytes / 1e6);
  return text;
}

/// `bytes` of anonymous memory starting on a 2 MiB boundary, advised to be
/// backed by huge pages; the returned owner unmaps it.
Result<std::shared_ptr<void>> allocateHugePageMemory(size_t bytes,
                                                     void **aligned) {
  size_t mapped = bytes + kHugePageBytes; // room to align the start
  void *p = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return resourceExhausted("cannot map " + std::to_string(mapped) +
                             " bytes of anonymous memory for weights: " +
                             std::strerror(errno));
  auto start = reinterpret_cast<uintptr_t>(p);
  *aligned = reinterpret_cast<void *>((start + kHugePageBytes - 1) &
                                      ~uintptr_t{kHugePageBytes - 1});
  // Advice: without it (or when refused) the copy is still correct.
  ::madvise(*aligned, bytes, MADV_HUGEPAGE);
  return std::shared_ptr<void>(p, [mapped](void *q) { ::munmap(q, mapped); });
}

} // namespace

std::string WeightPlacement::summary() const {
  std::string s = std::string("weight memory ") + weightMemoryName(requested);
  if (!fallback.empty())
    return s + ": " + fallback + "; weights stay mapped from the file";
  if (!hugePages)
    return s + ": weights mapped from the file (zero-copy" +
           (mappedBecause.empty() ? "" : ": " + mappedBecause) + ")";
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.2f s", this->seconds);
  s += ": " + std::to_string(tablesCopied) + " constant(s) of " +
       megabytes(bytesCopied) + " copied into huge-page memory in " + seconds;
  if (anonHugePagesBytes >= 0)
    s += " (AnonHugePages now " + megabytes(anonHugePagesBytes) + ")";
  return s;
}

Result<WeightPlacement>
placeWeights(WeightMemory mode, std::vector<Tensor> &constants,
             const std::vector<std::shared_ptr<MappedFile>> &files) {
  WeightPlacement placement;
  placement.requested = mode;
  if (mode == WeightMemory::kMmap)
    return placement;
  const std::string path = transparentHugePageSysfsPath();
  auto thp = readTransparentHugePageMode(path);
  if (!thp.isOk() || *thp == "never") {
    if (mode == WeightMemory::kHugePages)
      placement.fallback =
          thp.isOk() ? "transparent huge pages are off (" + path +
                           " selects never)"
                     : "transparent huge pages unavailable (" +
                           thp.status().message() + ")";
    else if (mode == WeightMemory::kAuto)
      placement.mappedBecause = "transparent huge pages are off";
    return placement;
  }
  auto start = std::chrono::steady_clock::now();
  for (size_t slot = 0; slot < constants.size(); ++slot) {
    Tensor &t = constants[slot];
    if (!t.defined() || t.nbytes() < kHugePageBytes)
      continue;
    void *data = nullptr;
    auto owner = allocateHugePageMemory(t.nbytes(), &data);
    if (!owner.isOk())
      return owner.status().withContext("constant slot " +
                                        std::to_string(slot));
    std::memcpy(data, t.data(), t.nbytes());
    const auto *src = static_cast<const unsigned char *>(t.data());
    for (const auto &file : files)
      if (src >= file->data() && src < file->data() + file->size())
        file->dropPages(static_cast<size_t>(src - file->data()), t.nbytes());
    placement.bytesCopied += t.nbytes();
    ++placement.tablesCopied;
    t = Tensor::view(*owner, data, t.dtype(), t.shape());
  }
  placement.hugePages = placement.tablesCopied > 0;
  if (!placement.hugePages)
    placement.mappedBecause = "no constant of 2 MiB or more";
  placement.seconds = std::chrono::duration<double>(
                          std::chrono::steady_clock::now() - start)
                          .count();
  placement.anonHugePagesBytes = anonHugePagesBytes();
  return placement;
}

} // namespace ember

//===- mapped_file.h - Read-only memory-mapped files ------------*- C++ -*-===//
#ifndef EMBER_PLAN_MAPPED_FILE_H
#define EMBER_PLAN_MAPPED_FILE_H

#include "ember/status.h"

#include <cstddef>
#include <memory>
#include <string>

namespace ember {

/// A whole file mapped read-only (MAP_PRIVATE); unmapped on destruction.
class MappedFile {
public:
  static Result<std::shared_ptr<MappedFile>> open(const std::string &path);
  ~MappedFile();
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;

  const unsigned char *data() const { return data_; }
  size_t size() const { return size_; }
  const std::string &path() const { return path_; }
  /// Drops bytes [offset, offset + length) from this process's memory
  /// (madvise MADV_DONTNEED on the whole pages inside): the mapping stays
  /// valid and later reads fault them in again (from the page cache).
  void dropPages(size_t offset, size_t length) const;

private:
  MappedFile() = default;
  std::string path_;
  unsigned char *data_ = nullptr;
  size_t size_ = 0;
};

/// Reads a whole (small) file into memory, refusing files over maxBytes.
Result<std::string> readSmallFile(const std::string &path, size_t maxBytes);

} // namespace ember

#endif // EMBER_PLAN_MAPPED_FILE_H

//===- mapped_file.cpp - Read-only memory-mapped files --------------------===//
#include "plan/mapped_file.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ember {

namespace {
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0)
      ::close(fd);
  }
};

Status openRegularFile(const std::string &path, Fd &fd, struct stat &st) {
  fd.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd.fd < 0) {
    int err = errno;
    if (err == ENOENT)
      return notFound("'" + path + "' does not exist");
    return invalidArgument("cannot open '" + path + "': " + std::strerror(err));
  }
  if (::fstat(fd.fd, &st) != 0)
    return invalidArgument("cannot stat '" + path +
                           "': " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return invalidArgument("'" + path + "' is not a regular file");
  return Status::ok();
}
} // namespace

Result<std::shared_ptr<MappedFile>> MappedFile::open(const std::string &path) {
  Fd fd;
  struct stat st;
  EMBER_RETURN_IF_ERROR(openRegularFile(path, fd, st));
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = path;
  file->size_ = static_cast<size_t>(st.st_size);
  if (file->size_ == 0)
    return file; // nothing to map
  void *p = ::mmap(nullptr, file->size_, PROT_READ, MAP_PRIVATE, fd.fd, 0);
  if (p == MAP_FAILED)
    return resourceExhausted("cannot mmap '" + path + "' (" +
                             std::to_string(file->size_) +
                             " bytes): " + std::strerror(errno));
  file->data_ = static_cast<unsigned char *>(p);
  return file;
}

void MappedFile::dropPages(size_t offset, size_t length) const {
  if (!data_ || offset >= size_)
    return;
  length = std::min(length, size_ - offset);
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  size_t begin = (offset + page - 1) / page * page;
  size_t end = offset + length == size_ ? size_ : (offset + length) / page * page;
  if (end > begin)
    ::madvise(data_ + begin, end - begin, MADV_DONTNEED); // advice only
}

MappedFile::~MappedFile() {
  if (data_)
    ::munmap(data_, size_);
}

Result<std::string> readSmallFile(const std::string &path, size_t maxBytes) {
  Fd fd;
  struct stat st;
  EMBER_RETURN_IF_ERROR(openRegularFile(path, fd, st));
  if (static_cast<uint64_t>(st.st_size) > maxBytes)
    return invalidArgument("'" + path + "' is " + std::to_string(st.st_size) +
                           " bytes, more than the limit of " +
                           std::to_string(maxBytes));
  std::string bytes(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::read(fd.fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return dataLoss(
          "cannot read '" + path +
          "': " + (n < 0 ? std::strerror(errno) : "unexpected end of file"));
    done += static_cast<size_t>(n);
  }
  return bytes;
}

} // namespace ember

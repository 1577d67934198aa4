//===- plan_writer.cpp - Writing plans and weight files -------------------===//
#include "plan/plan_writer.h"
#include "plan/plan_format.h"

#include <google/protobuf/text_format.h>

#include <cerrno>
#include <cstring>
#include <unistd.h>

namespace ember {

namespace {
bool endsWith(const std::string &s, const char *suffix) {
  size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

std::string tempPathFor(const std::string &path) {
  return path + ".tmp." + std::to_string(::getpid());
}

bool writeWholeFile(const std::string &path, const std::string &bytes,
                    std::string *error) {
  std::string temp = tempPathFor(path);
  std::FILE *f = std::fopen(temp.c_str(), "wb");
  if (!f) {
    *error = "cannot create '" + temp + "': " + std::strerror(errno);
    return false;
  }
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(temp.c_str(), path.c_str()) != 0) {
    *error = "cannot write '" + path + "': " + std::strerror(errno);
    std::remove(temp.c_str());
    return false;
  }
  return true;
}
} // namespace

WeightsFileWriter::~WeightsFileWriter() {
  if (file_) {
    std::fclose(file_);
    std::remove(tempPath_.c_str());
  }
}

bool WeightsFileWriter::open(const std::string &path, std::string *error) {
  path_ = path;
  tempPath_ = tempPathFor(path);
  file_ = std::fopen(tempPath_.c_str(), "wb");
  if (!file_) {
    *error = "cannot create '" + tempPath_ + "': " + std::strerror(errno);
    return false;
  }
  return true;
}

void WeightsFileWriter::writeBytes(const void *data, uint64_t nbytes) {
  if (!file_ || failed_ || nbytes == 0)
    return;
  if (std::fwrite(data, 1, nbytes, file_) != nbytes)
    failed_ = true;
  hash_.update(data, nbytes);
  size_ += nbytes;
}

uint64_t WeightsFileWriter::append(const void *data, uint64_t nbytes) {
  static const char zeros[kWeightAlignment] = {};
  uint64_t pad =
      (kWeightAlignment - size_ % kWeightAlignment) % kWeightAlignment;
  writeBytes(zeros, pad);
  uint64_t offset = size_;
  writeBytes(data, nbytes);
  return offset;
}

bool WeightsFileWriter::finish(plan::WeightFile *out,
                               const std::string &relativePath,
                               std::string *error) {
  if (!file_) {
    *error = "weights file was not opened";
    return false;
  }
  bool ok = !failed_;
  ok = (std::fclose(file_) == 0) && ok;
  file_ = nullptr;
  if (!ok || std::rename(tempPath_.c_str(), path_.c_str()) != 0) {
    *error = "cannot write '" + path_ + "': " + std::strerror(errno);
    std::remove(tempPath_.c_str());
    return false;
  }
  out->set_path(relativePath);
  out->set_size(size_);
  out->set_xxhash64(hash_.digest());
  return true;
}

bool writePlanFile(plan::Plan plan, const std::string &path,
                   std::string *error) {
  if (plan.format_version() == 0)
    plan.set_format_version(kPlanFormatVersion);
  plan.set_end_marker(kPlanEndMarker);
  std::string bytes;
  if (endsWith(path, ".txt") || endsWith(path, ".pbtxt")) {
    if (!google::protobuf::TextFormat::PrintToString(plan, &bytes)) {
      *error = "cannot print the plan as text";
      return false;
    }
  } else if (!plan.SerializeToString(&bytes)) {
    *error = "cannot serialize the plan (larger than 2 GiB?)";
    return false;
  }
  return writeWholeFile(path, bytes, error);
}

} // namespace ember

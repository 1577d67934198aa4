//===- plan_writer.cpp - Writing plans and weight files -------------------===//
#include "plan/plan_writer.h"
#include "plan/plan_format.h"

#include <google/protobuf/text_format.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace ember {

namespace {
bool endsWith(const std::string &s, const char *suffix) {
  size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

} // namespace

bool WeightsFileWriter::open(const std::string &path, std::string *error,
                             FileTransaction *transaction) {
  transaction_ = transaction;
  size_ = 0;
  hash_ = XxHash64();
  return file_.open(path, error);
}

void WeightsFileWriter::writeBytes(const void *data, uint64_t nbytes) {
  if (nbytes == 0)
    return;
  file_.write(data, nbytes);
  hash_.update(data, nbytes);
  size_ += nbytes;
}

uint64_t WeightsFileWriter::beginTensor() {
  static const char zeros[kWeightAlignment] = {};
  uint64_t pad =
      (kWeightAlignment - size_ % kWeightAlignment) % kWeightAlignment;
  writeBytes(zeros, pad);
  return size_;
}

uint64_t WeightsFileWriter::append(const void *data, uint64_t nbytes) {
  uint64_t offset = beginTensor();
  writeBytes(data, nbytes);
  return offset;
}

void WeightsFileWriter::appendBytes(const void *data, uint64_t nbytes) {
  writeBytes(data, nbytes);
}

void WeightsFileWriter::appendZeros(uint64_t nbytes) {
  static const std::vector<char> zeros(size_t(1) << 20);
  file_.writeHole(nbytes);
  for (uint64_t done = 0; done < nbytes;) {
    uint64_t n = std::min<uint64_t>(zeros.size(), nbytes - done);
    hash_.update(zeros.data(), n);
    done += n;
  }
  size_ += nbytes;
}

bool WeightsFileWriter::finish(plan::WeightFile *out,
                               const std::string &relativePath,
                               std::string *error) {
  if (!file_.isOpen()) {
    *error = "weights file was not opened";
    return false;
  }
  if (transaction_) {
    if (!file_.finish(error))
      return false;
    transaction_->add(std::move(file_));
  } else if (!file_.commit(error)) {
    return false;
  }
  out->set_path(relativePath);
  out->set_size(size_);
  out->set_xxhash64(hash_.digest());
  return true;
}

bool writePlanFile(plan::Plan plan, const std::string &path, std::string *error,
                   FileTransaction *transaction) {
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
  if (!transaction)
    return writeFileAtomically(path, bytes, error);
  AtomicFile file;
  if (!file.open(path, error)) {
    transaction->discard();
    return false;
  }
  file.write(bytes.data(), bytes.size());
  transaction->add(std::move(file));
  return transaction->commit(error);
}

} // namespace ember

//===- tensor.cpp - Runtime tensors ---------------------------------------===//
#include "ember/tensor.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace ember {

Shape::Shape(std::initializer_list<int64_t> dims) {
  assert(dims.size() <= static_cast<size_t>(kMaxRank) && "rank too large");
  for (int64_t d : dims)
    dims_[rank_++] = d;
}

Result<Shape> Shape::fromDims(const int64_t *dims, size_t rank) {
  if (rank > static_cast<size_t>(kMaxRank))
    return invalidArgument("rank " + std::to_string(rank) +
                           " exceeds the maximum of " + std::to_string(kMaxRank));
  Shape shape;
  for (size_t i = 0; i < rank; ++i) {
    if (dims[i] < 0)
      return invalidArgument("negative dimension " + std::to_string(dims[i]) +
                             " at position " + std::to_string(i));
    shape.dims_[shape.rank_++] = dims[i];
  }
  if (!shape.valid())
    return resourceExhausted("shape " + shape.toString() +
                             " is too large: more than 2^60 elements "
                             "(zeros aside)");
  return shape;
}

bool Shape::valid() const {
  if (rank_ < 0 || rank_ > kMaxRank)
    return false;
  // Zeros are skipped: the product of any subset of the dims (an empty
  // tensor's leading dims, say) then fits too.
  unsigned __int128 n = 1;
  for (int i = 0; i < rank_; ++i) {
    if (dims_[i] < 0)
      return false;
    if (dims_[i] == 0)
      continue;
    // n <= 2^60 and a dim < 2^63: no overflow of 128 bits.
    n *= static_cast<uint64_t>(dims_[i]);
    if (n > static_cast<unsigned __int128>(kMaxElements))
      return false;
  }
  return true;
}

int64_t Shape::numel() const {
  // Unsigned: a shape that is not valid() gives a wrong count, not undefined
  // behaviour; every shape that reaches a kernel has been checked.
  uint64_t n = 1;
  for (int i = 0; i < rank_; ++i)
    n *= static_cast<uint64_t>(dims_[i]);
  return static_cast<int64_t>(n);
}

std::string Shape::toString() const {
  std::string s = "[";
  for (int i = 0; i < rank_; ++i) {
    if (i)
      s += ", ";
    s += std::to_string(dims_[i]);
  }
  return s + "]";
}

bool Shape::operator==(const Shape &other) const {
  if (rank_ != other.rank_)
    return false;
  for (int i = 0; i < rank_; ++i)
    if (dims_[i] != other.dims_[i])
      return false;
  return true;
}

/// Overflow-checked byte size of a tensor.
static Result<size_t> checkedBytes(DType dtype, const Shape &shape) {
  unsigned __int128 bytes = dtypeSize(dtype);
  for (int64_t d : shape) {
    if (d < 0)
      return invalidArgument("negative dimension in shape " + shape.toString());
    bytes *= static_cast<uint64_t>(d);
    if (bytes > (static_cast<unsigned __int128>(1) << 62))
      return resourceExhausted("tensor " + std::string(dtypeName(dtype)) +
                               shape.toString() + " is too large");
  }
  return static_cast<size_t>(bytes);
}

Result<Tensor> Tensor::allocate(DType dtype, const Shape &shape) {
  EMBER_ASSIGN_OR_RETURN(size_t bytes, checkedBytes(dtype, shape));
  size_t rounded = (bytes + 63) / 64 * 64;
  void *p = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
  if (!p)
    return resourceExhausted("cannot allocate " + std::to_string(bytes) +
                             " bytes for " + std::string(dtypeName(dtype)) +
                             shape.toString());
  Tensor t;
  t.owner_ = std::shared_ptr<void>(p, [](void *q) { std::free(q); });
  t.data_ = p;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.isDefined_ = true;
  return t;
}

Result<Tensor> Tensor::zeros(DType dtype, const Shape &shape) {
  EMBER_ASSIGN_OR_RETURN(Tensor t, allocate(dtype, shape));
  std::memset(t.data_, 0, t.nbytes());
  return t;
}

Tensor Tensor::view(void *data, DType dtype, const Shape &shape) {
  Tensor t;
  t.data_ = data;
  t.dtype_ = dtype;
  t.shape_ = shape;
  t.isDefined_ = true;
  return t;
}

Tensor Tensor::view(std::shared_ptr<void> owner, void *data, DType dtype,
                    const Shape &shape) {
  Tensor t = view(data, dtype, shape);
  t.owner_ = std::move(owner);
  return t;
}

Result<Tensor> Tensor::reshaped(const Shape &shape) const {
  if (shape.numel() != numel())
    return invalidArgument("cannot reshape " + describe() + " to " +
                           shape.toString() + ": element counts differ");
  Tensor t = *this;
  t.shape_ = shape;
  return t;
}

Result<Tensor> Tensor::clone() const {
  EMBER_ASSIGN_OR_RETURN(Tensor t, allocate(dtype_, shape_));
  if (nbytes())
    std::memcpy(t.data_, data_, nbytes());
  return t;
}

std::string Tensor::describe() const {
  if (!isDefined_)
    return "undefined";
  return std::string(dtypeName(dtype_)) + shape_.toString();
}

} // namespace ember

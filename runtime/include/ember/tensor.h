//===- tensor.h - Runtime tensors -------------------------------*- C++ -*-===//
//
// ember::Tensor is a dense, C-ordered, strided-free n-d array: a dtype, a shape
// of at most kMaxRank dims kept inline (no heap allocation), and a data
// pointer that either owns its memory (shared, reference counted) or views
// memory owned by someone else (a user buffer, an arena, an mmap-ed weight
// file). Copying a Tensor copies the handle, not the data.
//
//===----------------------------------------------------------------------===//
#ifndef EMBER_TENSOR_H
#define EMBER_TENSOR_H

#include "ember/dtype.h"
#include "ember/status.h"

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>

namespace ember {

/// A shape of up to kMaxRank dims stored inline.
class Shape {
public:
  static constexpr int kMaxRank = 8;
  /// The most elements a shape may hold (so that its byte size fits 64 bits).
  static constexpr int64_t kMaxElements = int64_t{1} << 60;

  Shape() = default;
  Shape(std::initializer_list<int64_t> dims);
  /// Fails when dims.size() > kMaxRank, a dim is negative, or the non-zero
  /// dims hold more than kMaxElements elements (so that the product of any
  /// of the dims fits 64 bits, bytes included).
  static Result<Shape> fromDims(const int64_t *dims, size_t rank);
  /// Whether fromDims would accept these dims (run inputs are checked with
  /// it: a shape built from an initializer list is not).
  bool valid() const;

  int rank() const { return rank_; }
  int64_t operator[](int i) const { return dims_[i]; }
  int64_t &operator[](int i) { return dims_[i]; }
  const int64_t *begin() const { return dims_.data(); }
  const int64_t *end() const { return dims_.data() + rank_; }
  /// Product of the dims (1 for rank 0).
  int64_t numel() const;
  /// "[2, 3, 4]".
  std::string toString() const;
  bool operator==(const Shape &other) const;
  bool operator!=(const Shape &other) const { return !(*this == other); }

private:
  std::array<int64_t, kMaxRank> dims_{};
  int rank_ = 0;
};

class Tensor {
public:
  /// An undefined tensor (defined() is false).
  Tensor() = default;

  /// Allocates an owning, 64-byte aligned, uninitialized tensor.
  static Result<Tensor> allocate(DType dtype, const Shape &shape);
  /// Allocates an owning tensor filled with zeros.
  static Result<Tensor> zeros(DType dtype, const Shape &shape);
  /// Views memory owned by the caller, which must outlive every use of the
  /// view. No copy is made.
  static Tensor view(void *data, DType dtype, const Shape &shape);
  static Tensor view(const void *data, DType dtype, const Shape &shape) {
    return view(const_cast<void *>(data), dtype, shape);
  }
  /// Views memory kept alive by `owner` (e.g. an mmap-ed file).
  static Tensor view(std::shared_ptr<void> owner, void *data, DType dtype,
                     const Shape &shape);

  bool defined() const { return isDefined_; }
  DType dtype() const { return dtype_; }
  const Shape &shape() const { return shape_; }
  int rank() const { return shape_.rank(); }
  int64_t dim(int i) const { return shape_[i]; }
  int64_t numel() const { return shape_.numel(); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * dtypeSize(dtype_); }

  void *data() { return data_; }
  const void *data() const { return data_; }
  template <typename T> T *data() { return static_cast<T *>(data_); }
  template <typename T> const T *data() const { return static_cast<const T *>(data_); }

  /// The same data seen with another shape of the same numel.
  Result<Tensor> reshaped(const Shape &shape) const;
  /// A deep copy into newly allocated memory.
  Result<Tensor> clone() const;
  /// "float32[2, 3]".
  std::string describe() const;

private:
  std::shared_ptr<void> owner_;
  void *data_ = nullptr;
  DType dtype_ = DType::kFloat32;
  Shape shape_;
  bool isDefined_ = false;
};

} // namespace ember

#endif // EMBER_TENSOR_H

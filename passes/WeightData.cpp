//===- WeightData.cpp - The bytes of weight constants, mapped or not ------===//
#include "passes/WeightData.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace mlir::ember {

namespace {

/// Every live mapping by its first byte, for releaseMappedPages and for
/// views that must keep their file's mapping alive.
struct MappingRegistry {
  std::mutex mutex;
  std::map<uintptr_t, std::pair<uint64_t, std::weak_ptr<MappedWeightFile>>>
      byStart;

  static MappingRegistry &get() {
    static MappingRegistry *registry = new MappingRegistry();
    return *registry;
  }
  /// The mapping holding [p, p + n), or null.
  std::shared_ptr<MappedWeightFile> find(const char *p, uint64_t n) {
    std::lock_guard<std::mutex> lock(mutex);
    auto address = reinterpret_cast<uintptr_t>(p);
    auto it = byStart.upper_bound(address);
    if (it == byStart.begin())
      return nullptr;
    --it;
    if (address - it->first > it->second.first ||
        n > it->second.first - (address - it->first))
      return nullptr;
    return it->second.second.lock();
  }
};

std::string errnoText(int err) { return std::strerror(err); }

} // namespace

std::shared_ptr<MappedWeightFile> MappedWeightFile::open(llvm::StringRef path,
                                                         std::string *error) {
  std::string name = path.str();
  int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = errnoText(errno);
    return nullptr;
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *error = S_ISREG(st.st_mode) ? errnoText(errno) : "not a regular file";
    ::close(fd);
    return nullptr;
  }
  std::shared_ptr<MappedWeightFile> file(new MappedWeightFile());
  file->path_ = name;
  file->size_ = static_cast<uint64_t>(st.st_size);
  if (file->size_ > 0) {
    void *p = ::mmap(nullptr, file->size_, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
      *error = "cannot map it: " + errnoText(errno);
      ::close(fd);
      return nullptr;
    }
    file->data_ = static_cast<const char *>(p);
    MappingRegistry &registry = MappingRegistry::get();
    std::lock_guard<std::mutex> lock(registry.mutex);
    registry.byStart[reinterpret_cast<uintptr_t>(p)] = {file->size_, file};
  }
  file->fd_ = fd;
  return file;
}

MappedWeightFile::~MappedWeightFile() {
  if (fd_ >= 0)
    ::close(fd_);
  if (!data_)
    return;
  {
    MappingRegistry &registry = MappingRegistry::get();
    std::lock_guard<std::mutex> lock(registry.mutex);
    registry.byStart.erase(reinterpret_cast<uintptr_t>(data_));
  }
  ::munmap(const_cast<char *>(data_), size_);
}

WeightExtent weightExtentAt(const char *data, uint64_t size) {
  WeightExtent extent{false, size};
  std::shared_ptr<MappedWeightFile> file =
      MappingRegistry::get().find(data, size);
  if (!file || size == 0)
    return extent;
  off_t at = static_cast<off_t>(data - file->data());
  off_t end = at + static_cast<off_t>(size);
  off_t nextData = ::lseek(file->fd(), at, SEEK_DATA);
  if (nextData < 0) // ENXIO: no data after `at`; anything else: say data
    return errno == ENXIO ? WeightExtent{true, size} : extent;
  if (nextData > at)
    return WeightExtent{true,
                        static_cast<uint64_t>(std::min(nextData, end) - at)};
  off_t nextHole = ::lseek(file->fd(), at, SEEK_HOLE);
  if (nextHole > at)
    extent.bytes = static_cast<uint64_t>(std::min(nextHole, end) - at);
  return extent;
}

namespace {

DenseResourceElementsAttr blobAttr(ShapedType type, llvm::StringRef name,
                                   std::shared_ptr<MappedWeightFile> file,
                                   const char *data, uint64_t size) {
  uint64_t elementBytes =
      std::max<uint64_t>(1, type.getElementTypeBitWidth() / 8);
  AsmResourceBlob blob(
      llvm::ArrayRef<char>(data, size), elementBytes,
      [file = std::move(file)](void *, size_t, size_t) mutable {
        file.reset();
      },
      /*dataIsMutable=*/false);
  return DenseResourceElementsAttr::get(type, name, std::move(blob));
}

uint64_t bytesOfType(ShapedType type) {
  return static_cast<uint64_t>(type.getNumElements()) *
         (type.getElementTypeBitWidth() / 8);
}

} // namespace

DenseResourceElementsAttr mappedWeights(ShapedType type, llvm::StringRef name,
                                        std::shared_ptr<MappedWeightFile> file,
                                        uint64_t offset) {
  const char *data = file->data() + offset;
  return blobAttr(type, name, std::move(file), data, bytesOfType(type));
}

DenseResourceElementsAttr viewOfMappedWeights(DenseResourceElementsAttr attr,
                                              ShapedType type,
                                              uint64_t byteOffset) {
  if (byteOffset == 0 && bytesOfType(type) == bytesOfType(attr.getType()))
    return DenseResourceElementsAttr::get(type, attr.getRawHandle());
  AsmResourceBlob *parent = attr.getRawHandle().getBlob();
  if (!parent)
    return {};
  llvm::ArrayRef<char> bytes = parent->getData();
  uint64_t size = bytesOfType(type);
  if (byteOffset > bytes.size() || size > bytes.size() - byteOffset)
    return {};
  const char *data = bytes.data() + byteOffset;
  // The view holds the file's mapping too (the parent blob may go first).
  std::shared_ptr<MappedWeightFile> file =
      MappingRegistry::get().find(data, size);
  if (!file)
    return {};
  return blobAttr(type, attr.getRawHandle().getKey(), std::move(file), data,
                  size);
}

Value sliceOfMappedWeights(OpBuilder &b, Location loc,
                           DenseResourceElementsAttr weights, int64_t row0,
                           int64_t rows, int64_t col0, int64_t cols) {
  auto type = cast<ShapedType>(weights.getType());
  int64_t width = type.getDimSize(1);
  uint64_t elementBytes = type.getElementTypeBitWidth() / 8;
  if (col0 == 0 && cols == width)
    if (DenseResourceElementsAttr view = viewOfMappedWeights(
            weights,
            RankedTensorType::get({rows, width}, type.getElementType()),
            static_cast<uint64_t>(row0 * width) * elementBytes))
      return arith::ConstantOp::create(b, loc, view);
  Value whole = arith::ConstantOp::create(b, loc, weights);
  SmallVector<OpFoldResult> offsets = {b.getIndexAttr(row0),
                                       b.getIndexAttr(col0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(rows),
                                     b.getIndexAttr(cols)};
  SmallVector<OpFoldResult> strides = {b.getIndexAttr(1), b.getIndexAttr(1)};
  return tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get({rows, cols}, type.getElementType()), whole,
      offsets, sizes, strides);
}

std::optional<WeightBytes> weightBytesOf(ElementsAttr attr) {
  auto type = dyn_cast<ShapedType>(attr.getType());
  if (!type || !type.hasStaticShape() || type.getElementType().isInteger(1) ||
      !type.getElementType().isIntOrFloat() ||
      type.getElementTypeBitWidth() % 8 != 0)
    return std::nullopt;
  WeightBytes out;
  out.elementBytes = type.getElementTypeBitWidth() / 8;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    out.data = dense.getRawData();
    out.splat = dense.isSplat();
    if (!out.splat && out.data.size() != bytesOfType(type))
      return std::nullopt;
    return out;
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob || blob->getData().size() != bytesOfType(type))
      return std::nullopt;
    out.data = blob->getData();
    return out;
  }
  return std::nullopt;
}

bool isMappedWeights(ElementsAttr attr) {
  auto resource = dyn_cast<DenseResourceElementsAttr>(attr);
  if (!resource)
    return false;
  AsmResourceBlob *blob = resource.getRawHandle().getBlob();
  return blob && MappingRegistry::get().find(blob->getData().data(),
                                             blob->getData().size());
}

void releaseMappedPages(const char *data, uint64_t size) {
  static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  auto begin = reinterpret_cast<uintptr_t>(data);
  uintptr_t first = (begin + page - 1) / page * page;
  uintptr_t last = (begin + size) / page * page;
  if (last <= first)
    return;
  if (!MappingRegistry::get().find(reinterpret_cast<const char *>(first),
                                   last - first))
    return;
  ::madvise(reinterpret_cast<void *>(first), last - first, MADV_DONTNEED);
}

} // namespace mlir::ember

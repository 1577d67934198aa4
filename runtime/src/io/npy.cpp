//===- npy.cpp - NumPy .npy files -----------------------------------------===//
#include "io/npy.h"
#include "io/atomic_file.h"

#include "io/read_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace ember::npy {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
constexpr size_t kMaxNpyBytes = size_t{1} << 40;

struct Descr {
  const char *text;
  DType dtype;
};
// '|' descriptors are byte-order free; multi-byte types must be '<'.
constexpr Descr kDescrs[] = {
    {"<f4", DType::kFloat32}, {"<f2", DType::kFloat16},
    {"<f8", DType::kFloat64}, {"<i4", DType::kInt32},
    {"<i8", DType::kInt64},   {"|i1", DType::kInt8},
    {"|u1", DType::kUInt8},   {"|b1", DType::kBool},
};

/// A tiny parser for the Python dict literal of an .npy header, e.g.
/// {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : s_(text) {}

  Status parse(std::string &descr, bool &fortran, std::vector<int64_t> &shape) {
    bool haveDescr = false, haveFortran = false, haveShape = false;
    skipSpace();
    if (!eat('{'))
      return error("the header is not a dict");
    for (;;) {
      skipSpace();
      if (eat('}'))
        break;
      std::string key;
      EMBER_RETURN_IF_ERROR(parseString(key));
      skipSpace();
      if (!eat(':'))
        return error("expected ':' after '" + key + "'");
      skipSpace();
      if (key == "descr") {
        EMBER_RETURN_IF_ERROR(parseString(descr));
        haveDescr = true;
      } else if (key == "fortran_order") {
        if (s_.substr(pos_, 4) == "True") {
          fortran = true;
          pos_ += 4;
        } else if (s_.substr(pos_, 5) == "False") {
          fortran = false;
          pos_ += 5;
        } else {
          return error("fortran_order is not True or False");
        }
        haveFortran = true;
      } else if (key == "shape") {
        EMBER_RETURN_IF_ERROR(parseShape(shape));
        haveShape = true;
      } else {
        return error("unexpected key '" + key + "'");
      }
      skipSpace();
      if (eat(','))
        continue;
      skipSpace();
      if (eat('}'))
        break;
      return error("expected ',' or '}'");
    }
    if (!haveDescr || !haveFortran || !haveShape)
      return error("the header lacks descr, fortran_order or shape");
    return Status::ok();
  }

private:
  Status error(const std::string &m) const {
    return dataLoss("bad .npy header: " + m);
  }
  void skipSpace() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\n' || s_[pos_] == '\t'))
      ++pos_;
  }
  bool eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  Status parseString(std::string &out) {
    if (pos_ >= s_.size() || (s_[pos_] != '\'' && s_[pos_] != '"'))
      return error("expected a quoted string");
    char q = s_[pos_++];
    size_t end = s_.find(q, pos_);
    if (end == std::string_view::npos)
      return error("unterminated string");
    out = std::string(s_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return Status::ok();
  }
  Status parseShape(std::vector<int64_t> &shape) {
    if (!eat('('))
      return error("shape is not a tuple");
    for (;;) {
      skipSpace();
      if (eat(')'))
        return Status::ok();
      int64_t v = 0;
      size_t start = pos_;
      while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') {
        if (v > (int64_t{1} << 50))
          return error("a dimension is too large");
        v = v * 10 + (s_[pos_++] - '0');
      }
      if (pos_ == start)
        return error("a dimension is not a number");
      if (pos_ < s_.size() && s_[pos_] == 'L')
        ++pos_;
      shape.push_back(v);
      skipSpace();
      if (eat(','))
        continue;
      skipSpace();
      if (eat(')'))
        return Status::ok();
      return error("expected ',' or ')' in shape");
    }
  }

  std::string_view s_;
  size_t pos_ = 0;
};

uint32_t readLE(const unsigned char *p, int n) {
  uint32_t v = 0;
  for (int i = n - 1; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

} // namespace

Result<Tensor> parseNpy(const void *data, size_t size,
                        const std::string &what) {
  auto fail = [&](const std::string &m) { return dataLoss(what + ": " + m); };
  const unsigned char *p = static_cast<const unsigned char *>(data);
  if (size < kMagicSize + 4 || std::memcmp(p, kMagic, kMagicSize) != 0)
    return fail("not an .npy file (bad magic)");
  int major = p[6];
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = readLE(p + 8, 2);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12)
      return fail("truncated .npy header");
    headerLen = readLE(p + 8, 4);
    headerStart = 12;
  } else {
    return fail("unsupported .npy format version " + std::to_string(major));
  }
  if (headerLen > size - headerStart)
    return fail("truncated .npy header");
  std::string descr;
  bool fortran = false;
  std::vector<int64_t> dims;
  Status s = HeaderParser(std::string_view(
                              reinterpret_cast<const char *>(p + headerStart),
                              headerLen))
                 .parse(descr, fortran, dims);
  if (!s.isOk())
    return s.withContext(what);
  if (fortran)
    return invalidArgument(what +
                           ": Fortran-order arrays are not supported; "
                           "save a C-contiguous array (np.ascontiguousarray)");
  const Descr *found = nullptr;
  for (const Descr &d : kDescrs) {
    // '=' (native) is little-endian on every machine Ember runs on.
    if (descr == d.text || (descr.size() == 3 && descr[0] == '=' &&
                            descr.substr(1) == std::string(d.text + 1)))
      found = &d;
  }
  if (!found)
    return invalidArgument(
        what + ": unsupported dtype '" + descr +
        "' (supported: float32, float16, float64, int8, uint8, "
        "int32, int64, bool; little-endian)");
  // The declared size first: nothing is allocated for what only the header
  // says (the data must be there, below).
  unsigned __int128 bytes = dtypeSize(found->dtype);
  bool empty = false;
  for (int64_t d : dims)
    empty = empty || d == 0;
  for (int64_t d : dims) {
    if (empty)
      break;
    bytes *= static_cast<uint64_t>(d);
    if (bytes > kMaxNpyBytes)
      return fail("the array is too large: its shape needs more than 2^40 "
                  "bytes");
  }
  if (empty)
    bytes = 0;
  auto shape = Shape::fromDims(dims.data(), dims.size());
  if (!shape)
    return shape.status().withContext(what);
  size_t dataStart = headerStart + headerLen;
  if (static_cast<size_t>(bytes) != size - dataStart)
    return fail(
        "the data is " + std::to_string(size - dataStart) + " bytes but " +
        std::string(dtypeName(found->dtype)) + shape->toString() + " needs " +
        std::to_string(static_cast<size_t>(bytes)) + " (truncated file?)");
  EMBER_ASSIGN_OR_RETURN(Tensor t, Tensor::allocate(found->dtype, *shape));
  if (t.nbytes())
    std::memcpy(t.data(), p + dataStart, t.nbytes());
  if (found->dtype == DType::kBool)
    for (size_t i = 0; i < t.nbytes(); ++i)
      if (t.data<uint8_t>()[i] > 1)
        return fail("a bool element is neither 0 nor 1");
  return t;
}

Result<Tensor> readNpy(const std::string &path) {
  EMBER_ASSIGN_OR_RETURN(std::string bytes, readWholeFile(path));
  return parseNpy(bytes.data(), bytes.size(), "'" + path + "'");
}

Result<std::string> encodeNpy(const Tensor &tensor) {
  const char *descr = nullptr;
  for (const Descr &d : kDescrs)
    if (d.dtype == tensor.dtype())
      descr = d.text;
  if (!descr)
    return invalidArgument("cannot write " + tensor.describe() + " as .npy");
  std::string shape = "(";
  for (int i = 0; i < tensor.rank(); ++i)
    shape += std::to_string(tensor.dim(i)) +
             (tensor.rank() == 1 ? "," : (i + 1 < tensor.rank() ? ", " : ""));
  shape += ")";
  std::string header = "{'descr': '" + std::string(descr) +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad with spaces so that the data starts at a multiple of 64, newline last.
  size_t total = kMagicSize + 4 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, kMagicSize);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.append(static_cast<const char *>(tensor.data()), tensor.nbytes());
  return out;
}

Status writeFileAtomic(const std::string &path, const std::string &bytes) {
  std::string error;
  if (!writeFileAtomically(path, bytes, &error))
    // Name the file asked for when the error names only its directory or
    // temporary.
    return invalidArgument(error.find(path) == std::string::npos
                               ? "cannot write '" + path + "': " + error
                               : error);
  return Status::ok();
}

Status writeNpy(const std::string &path, const Tensor &tensor) {
  EMBER_ASSIGN_OR_RETURN(std::string bytes, encodeNpy(tensor));
  return writeFileAtomic(path, bytes);
}

} // namespace ember::npy

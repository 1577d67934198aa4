//===- npz.cpp - NumPy .npz files (zip archives of .npy) ------------------===//
#include "io/npy.h"
#include "io/read_file.h"

#include <zlib.h>

#include <cstring>

namespace ember::npy {

namespace {

constexpr uint32_t kLocalHeaderSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEndSig = 0x06054b50;
constexpr uint32_t kZip64EndSig = 0x06064b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;

/// Bounds-checked little-endian reads over the archive bytes.
class Reader {
public:
  Reader(const std::string &bytes) : b_(bytes) {}
  bool has(uint64_t offset, uint64_t n) const {
    return offset <= b_.size() && n <= b_.size() - offset;
  }
  uint64_t get(uint64_t offset, int n) const {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i)
      v = (v << 8) | static_cast<unsigned char>(b_[offset + i]);
    return v;
  }
  const char *at(uint64_t offset) const { return b_.data() + offset; }
  uint64_t size() const { return b_.size(); }

private:
  const std::string &b_;
};

struct Entry {
  std::string name;
  uint16_t method = 0;
  uint32_t crc = 0;
  uint64_t compressedSize = 0, size = 0, localOffset = 0;
};

Status inflateRaw(const char *in, uint64_t inSize, std::string &out,
                  const std::string &what) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK)
    return internalError("zlib inflateInit2 failed");
  zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(in));
  zs.avail_in = static_cast<uInt>(inSize);
  zs.next_out = reinterpret_cast<Bytef *>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = inflate(&zs, Z_FINISH);
  uint64_t produced = zs.total_out;
  inflateEnd(&zs);
  if (rc != Z_STREAM_END || produced != out.size())
    return dataLoss(what + ": corrupt deflate data");
  return Status::ok();
}

} // namespace

Result<std::vector<NamedTensor>> readNpz(const std::string &path) {
  EMBER_ASSIGN_OR_RETURN(std::string bytes, readWholeFile(path));
  std::string file = "'" + path + "'";
  auto fail = [&](const std::string &m) { return dataLoss(file + ": " + m); };
  Reader r(bytes);
  // End of central directory: 22 bytes + up to 64 KiB of comment.
  if (r.size() < 22)
    return fail("not a zip archive (too short)");
  int64_t eocd = -1;
  uint64_t lowest = r.size() > 22 + 65535 ? r.size() - 22 - 65535 : 0;
  for (uint64_t pos = r.size() - 22 + 1; pos-- > lowest;)
    if (r.get(pos, 4) == kEndSig) {
      eocd = static_cast<int64_t>(pos);
      break;
    }
  if (eocd < 0)
    return fail("not a zip archive (no end of central directory)");
  uint64_t count = r.get(eocd + 10, 2);
  uint64_t cdOffset = r.get(eocd + 16, 4);
  if (count == 0xffff || cdOffset == 0xffffffff) {
    if (eocd < 20 || r.get(eocd - 20, 4) != kZip64LocatorSig)
      return fail("zip64 archive without a zip64 locator");
    uint64_t z64 = r.get(eocd - 20 + 8, 8);
    if (!r.has(z64, 56) || r.get(z64, 4) != kZip64EndSig)
      return fail("bad zip64 end of central directory");
    count = r.get(z64 + 32, 8);
    cdOffset = r.get(z64 + 48, 8);
  }
  if (count > (1u << 20))
    return fail("too many entries");
  std::vector<Entry> entries;
  uint64_t pos = cdOffset;
  for (uint64_t i = 0; i < count; ++i) {
    if (!r.has(pos, 46) || r.get(pos, 4) != kCentralSig)
      return fail("corrupt central directory");
    Entry e;
    uint16_t flags = static_cast<uint16_t>(r.get(pos + 8, 2));
    e.method = static_cast<uint16_t>(r.get(pos + 10, 2));
    e.crc = static_cast<uint32_t>(r.get(pos + 16, 4));
    e.compressedSize = r.get(pos + 20, 4);
    e.size = r.get(pos + 24, 4);
    uint64_t nameLen = r.get(pos + 28, 2), extraLen = r.get(pos + 30, 2),
             commentLen = r.get(pos + 32, 2);
    e.localOffset = r.get(pos + 42, 4);
    if (!r.has(pos + 46, nameLen + extraLen + commentLen))
      return fail("corrupt central directory");
    e.name.assign(r.at(pos + 46), nameLen);
    if (flags & 1)
      return fail("entry '" + e.name + "' is encrypted");
    // Zip64 extra field: the 64-bit values of the fields saturated above.
    uint64_t x = pos + 46 + nameLen, xEnd = x + extraLen;
    while (x + 4 <= xEnd) {
      uint64_t id = r.get(x, 2), len = r.get(x + 2, 2);
      if (x + 4 + len > xEnd)
        return fail("corrupt extra field of '" + e.name + "'");
      if (id == 1) {
        uint64_t f = x + 4, fEnd = f + len;
        auto take = [&](uint64_t &field) -> bool {
          if (field != 0xffffffff)
            return true;
          if (f + 8 > fEnd)
            return false;
          field = r.get(f, 8);
          f += 8;
          return true;
        };
        if (!take(e.size) || !take(e.compressedSize) || !take(e.localOffset))
          return fail("corrupt zip64 field of '" + e.name + "'");
      }
      x += 4 + len;
    }
    entries.push_back(std::move(e));
    pos += 46 + nameLen + extraLen + commentLen;
  }

  std::vector<NamedTensor> out;
  for (const Entry &e : entries) {
    std::string what = file + " entry '" + e.name + "'";
    if (!r.has(e.localOffset, 30) || r.get(e.localOffset, 4) != kLocalHeaderSig)
      return dataLoss(what + ": bad local header");
    uint64_t dataStart = e.localOffset + 30 + r.get(e.localOffset + 26, 2) +
                         r.get(e.localOffset + 28, 2);
    if (!r.has(dataStart, e.compressedSize))
      return dataLoss(what + ": truncated");
    if (e.size > (uint64_t{1} << 40))
      return dataLoss(what + ": too large");
    std::string data;
    if (e.method == 0) {
      if (e.size != e.compressedSize)
        return dataLoss(what + ": inconsistent sizes");
      data.assign(r.at(dataStart), e.size);
    } else if (e.method == 8) {
      data.assign(e.size, '\0');
      EMBER_RETURN_IF_ERROR(
          inflateRaw(r.at(dataStart), e.compressedSize, data, what));
    } else {
      return invalidArgument(what + ": unsupported compression method " +
                             std::to_string(e.method) +
                             " (stored and deflate work)");
    }
    uLong crc = crc32(0L, Z_NULL, 0);
    crc =
        crc32_z(crc, reinterpret_cast<const Bytef *>(data.data()), data.size());
    if (static_cast<uint32_t>(crc) != e.crc)
      return dataLoss(what + ": CRC mismatch");
    std::string name = e.name;
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npy") == 0)
      name.resize(name.size() - 4);
    EMBER_ASSIGN_OR_RETURN(Tensor t, parseNpy(data.data(), data.size(), what));
    out.emplace_back(std::move(name), std::move(t));
  }
  return out;
}

Status writeNpz(const std::string &path,
                const std::vector<NamedTensor> &entries) {
  std::string zip, central;
  auto put = [](std::string &s, uint64_t v, int n) {
    for (int i = 0; i < n; ++i)
      s += static_cast<char>((v >> (8 * i)) & 0xff);
  };
  for (const NamedTensor &entry : entries) {
    EMBER_ASSIGN_OR_RETURN(std::string npy, encodeNpy(entry.second));
    std::string name = entry.first + ".npy";
    if (npy.size() >= 0xffffffffULL || zip.size() >= 0xffffffffULL)
      return invalidArgument("writeNpz: archives over 4 GiB are not supported");
    uint32_t crc = static_cast<uint32_t>(
        crc32_z(crc32(0L, Z_NULL, 0),
                reinterpret_cast<const Bytef *>(npy.data()), npy.size()));
    uint64_t offset = zip.size();
    put(zip, kLocalHeaderSig, 4);
    put(zip, 20, 2); // version needed
    put(zip, 0, 2);  // flags
    put(zip, 0, 2);  // stored
    put(zip, 0, 4);  // time, date
    put(zip, crc, 4);
    put(zip, npy.size(), 4);
    put(zip, npy.size(), 4);
    put(zip, name.size(), 2);
    put(zip, 0, 2);
    zip += name;
    zip += npy;
    put(central, kCentralSig, 4);
    put(central, 20, 2);
    put(central, 20, 2);
    put(central, 0, 2);
    put(central, 0, 2);
    put(central, 0, 4);
    put(central, crc, 4);
    put(central, npy.size(), 4);
    put(central, npy.size(), 4);
    put(central, name.size(), 2);
    put(central, 0, 2); // extra
    put(central, 0, 2); // comment
    put(central, 0, 2); // disk
    put(central, 0, 2); // internal attributes
    put(central, 0, 4); // external attributes
    put(central, offset, 4);
    central += name;
  }
  uint64_t cdOffset = zip.size();
  zip += central;
  put(zip, kEndSig, 4);
  put(zip, 0, 4);
  put(zip, entries.size(), 2);
  put(zip, entries.size(), 2);
  put(zip, central.size(), 4);
  put(zip, cdOffset, 4);
  put(zip, 0, 2);
  return writeFileAtomic(path, zip);
}

} // namespace ember::npy

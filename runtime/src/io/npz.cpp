//===- npz.cpp - NumPy .npz files (zip archives of .npy) ------------------===//
#include "io/npy.h"
#include "io/read_file.h"

#include <zlib.h>

#include <algorithm>
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

/// Deflate expands at most 1032:1 (258-byte matches in 2-bit codes); an
/// entry declaring more than this from its compressed bytes is corrupt.
constexpr uint64_t kMaxDeflateRatio = 1032;

/// Inflates `in` into `out`, which grows with the data actually produced
/// (never to more than `declared` bytes): a header's declared size is not
/// trusted with an allocation.
Status inflateRaw(const char *in, uint64_t inSize, uint64_t declared,
                  std::string &out, const std::string &what) {
  z_stream zs;
  std::memset(&zs, 0, sizeof(zs));
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK)
    return internalError("zlib inflateInit2 failed");
  struct End {
    z_stream *zs;
    ~End() { inflateEnd(zs); }
  } end{&zs};
  out.clear();
  constexpr uInt kMaxIn = 1u << 30;
  char chunk[64 * 1024];
  uint64_t consumed = 0;
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    if (zs.avail_in == 0 && consumed < inSize) {
      uint64_t n = inSize - consumed < kMaxIn ? inSize - consumed : kMaxIn;
      zs.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(in + consumed));
      zs.avail_in = static_cast<uInt>(n);
      consumed += n;
    }
    zs.next_out = reinterpret_cast<Bytef *>(chunk);
    zs.avail_out = sizeof(chunk);
    rc = inflate(&zs, Z_NO_FLUSH);
    size_t produced = sizeof(chunk) - zs.avail_out;
    if (produced > declared - out.size())
      return dataLoss(what + ": the deflate data holds more than the " +
                      std::to_string(declared) + " bytes the archive declares");
    out.append(chunk, produced);
    if (rc == Z_STREAM_END)
      break;
    if (rc != Z_OK || (produced == 0 && zs.avail_in == 0 && consumed == inSize))
      return dataLoss(what + ": corrupt or truncated deflate data");
  }
  if (out.size() != declared)
    return dataLoss(
        what + ": the deflate data holds " + std::to_string(out.size()) +
        " bytes but the archive declares " + std::to_string(declared));
  return Status::ok();
}

} // namespace

Result<std::vector<NamedTensor>> readNpz(const std::string &path) {
  EMBER_ASSIGN_OR_RETURN(std::string bytes, readWholeFile(path));
  return parseNpz(bytes, "'" + path + "'");
}

Result<std::vector<NamedTensor>> parseNpz(const std::string &bytes,
                                          const std::string &file) {
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

  // Entries must not share bytes: every entry's data is then its own, and
  // what the archive decodes to is bounded by its size (stored) or 1032
  // times it (deflated), whatever the headers declare.
  std::vector<std::pair<uint64_t, uint64_t>> spans; // [local header, data end)
  std::vector<uint64_t> dataStarts;
  for (const Entry &e : entries) {
    std::string what = file + " entry '" + e.name + "'";
    if (!r.has(e.localOffset, 30) || r.get(e.localOffset, 4) != kLocalHeaderSig)
      return dataLoss(what + ": bad local header");
    uint64_t dataStart = e.localOffset + 30 + r.get(e.localOffset + 26, 2) +
                         r.get(e.localOffset + 28, 2);
    if (!r.has(dataStart, e.compressedSize))
      return dataLoss(what + ": truncated");
    spans.emplace_back(e.localOffset, dataStart + e.compressedSize);
    dataStarts.push_back(dataStart);
  }
  {
    std::vector<std::pair<uint64_t, uint64_t>> sorted = spans;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 1; i < sorted.size(); ++i)
      if (sorted[i].first < sorted[i - 1].second)
        return fail("entries overlap (bytes [" +
                    std::to_string(sorted[i].first) + ", " +
                    std::to_string(sorted[i - 1].second) +
                    ") belong to two of them)");
  }

  std::vector<NamedTensor> out;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry &e = entries[i];
    std::string what = file + " entry '" + e.name + "'";
    uint64_t dataStart = dataStarts[i];
    if (e.size > (uint64_t{1} << 40))
      return dataLoss(what + ": too large");
    std::string data;
    if (e.method == 0) {
      if (e.size != e.compressedSize)
        return dataLoss(what + ": inconsistent sizes");
      data.assign(r.at(dataStart), e.size);
    } else if (e.method == 8) {
      if (e.size / kMaxDeflateRatio > e.compressedSize)
        return dataLoss(what + " declares " + std::to_string(e.size) +
                        " bytes from " + std::to_string(e.compressedSize) +
                        " compressed bytes, more than deflate can produce");
      EMBER_RETURN_IF_ERROR(
          inflateRaw(r.at(dataStart), e.compressedSize, e.size, data, what));
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

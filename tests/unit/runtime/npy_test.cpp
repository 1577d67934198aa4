//===- npy_test.cpp - .npy / .npz reading and writing ---------------------===//
#include "io/npy.h"
#include "support/expect_status.h"
#include "support/file_bytes.h"
#include "support/temp_dir.h"

#include <gtest/gtest.h>

#include <cstring>
#include <zlib.h>

using namespace ember;
using namespace ember::testing;

namespace {

/// An .npy with a hand-written header of the given format version.
std::string makeNpy(int version, const std::string &dict,
                    const std::string &data) {
  std::string header = dict;
  size_t prefix = version == 1 ? 10 : 12;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(version);
  out += '\0';
  uint32_t len = static_cast<uint32_t>(header.size());
  out.append(reinterpret_cast<const char *>(&len), version == 1 ? 2 : 4);
  return out + header + data;
}

TEST(Npy, RoundTripsEveryDType) {
  TempDir dir;
  std::vector<uint8_t> raw(24);
  for (size_t i = 0; i < raw.size(); ++i)
    raw[i] = static_cast<uint8_t>(i % 2); // valid bools too
  for (DType dtype :
       {DType::kFloat32, DType::kFloat16, DType::kFloat64, DType::kInt32,
        DType::kInt64, DType::kInt8, DType::kUInt8, DType::kBool}) {
    int64_t n = static_cast<int64_t>(raw.size() / dtypeSize(dtype));
    for (Shape shape : {Shape({n}), Shape({1, n}), Shape({n, 1, 1})}) {
      Tensor t = Tensor::view(raw.data(), dtype, shape);
      std::string path = dir.file("t.npy");
      ASSERT_TRUE(npy::writeNpy(path, t).isOk());
      auto back = npy::readNpy(path);
      ASSERT_TRUE(back.isOk()) << back.status().toString();
      EXPECT_EQ(back->dtype(), dtype);
      EXPECT_EQ(back->shape(), shape);
      EXPECT_EQ(std::memcmp(back->data(), raw.data(), t.nbytes()), 0);
    }
  }
  // Scalars and empty arrays.
  float scalar = 2.5f;
  ASSERT_TRUE(npy::writeNpy(dir.file("s.npy"),
                            Tensor::view(&scalar, DType::kFloat32, Shape()))
                  .isOk());
  auto s = npy::readNpy(dir.file("s.npy"));
  ASSERT_TRUE(s.isOk());
  EXPECT_EQ(s->rank(), 0);
  EXPECT_EQ(s->data<float>()[0], 2.5f);
  ASSERT_TRUE(npy::writeNpy(dir.file("e.npy"),
                            Tensor::view(&scalar, DType::kInt64, {0, 3}))
                  .isOk());
  auto e = npy::readNpy(dir.file("e.npy"));
  ASSERT_TRUE(e.isOk());
  EXPECT_EQ(e->shape(), Shape({0, 3}));
}

TEST(Npy, ReadsVersionTwoAndThreeHeaders) {
  float data[2] = {1.0f, -2.0f};
  std::string bytes(reinterpret_cast<char *>(data), 8);
  for (int version : {1, 2, 3}) {
    std::string file = makeNpy(
        version, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
        bytes);
    auto t =
        npy::parseNpy(file.data(), file.size(), "v" + std::to_string(version));
    ASSERT_TRUE(t.isOk()) << t.status().toString();
    EXPECT_EQ(t->data<float>()[1], -2.0f);
  }
}

TEST(Npy, RejectsBadFiles) {
  std::string eight(8, '\0');
  auto parse = [](const std::string &f) {
    return npy::parseNpy(f.data(), f.size(), "x.npy").status();
  };
  EXPECT_ERROR(parse("hello world, not numpy"), StatusCode::kDataLoss,
               "x.npy: not an .npy file (bad magic)");
  EXPECT_ERROR(
      parse(makeNpy(1,
                    "{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }",
                    eight)),
      StatusCode::kInvalidArgument, "Fortran-order");
  EXPECT_ERROR(
      parse(makeNpy(1,
                    "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }",
                    eight)),
      StatusCode::kInvalidArgument, "unsupported dtype '>f4'");
  EXPECT_ERROR(
      parse(makeNpy(1,
                    "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }",
                    eight)),
      StatusCode::kInvalidArgument, "unsupported dtype '<c8'");
  EXPECT_ERROR(
      parse(makeNpy(1,
                    "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
                    eight)),
      StatusCode::kDataLoss, "the data is 8 bytes but float32[3] needs 12");
  EXPECT_ERROR(parse(makeNpy(1, "{'descr': '<f4', 'shape': (2,), }", eight)),
               StatusCode::kDataLoss, "lacks descr, fortran_order or shape");
  EXPECT_ERROR(
      parse(makeNpy(
          1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }",
          eight)),
      StatusCode::kDataLoss, "not a number");
  EXPECT_ERROR(parse(makeNpy(9, "{}", "")), StatusCode::kDataLoss,
               "format version 9");
  std::string huge = makeNpy(1,
                             "{'descr': '<f8', 'fortran_order': False, "
                             "'shape': (99999999999, 99999999999), }",
                             "");
  EXPECT_ERROR(parse(huge), StatusCode::kDataLoss, "too large");
  std::string truncatedHeader =
      makeNpy(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
              eight)
          .substr(0, 20);
  EXPECT_ERROR(parse(truncatedHeader), StatusCode::kDataLoss,
               "truncated .npy header");
  uint8_t badBool[2] = {1, 7};
  EXPECT_ERROR(
      parse(makeNpy(1,
                    "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }",
                    std::string(reinterpret_cast<char *>(badBool), 2))),
      StatusCode::kDataLoss, "neither 0 nor 1");
  EXPECT_ERROR(npy::readNpy("/nonexistent/x.npy").status(),
               StatusCode::kNotFound, "does not exist");
}

TEST(Npz, RoundTripAndDeflatedEntries) {
  TempDir dir;
  std::vector<int64_t> ids = {3, 1, 4, 1, 5};
  std::vector<float> x = {1, 2, 3, 4};
  std::string path = dir.file("a.npz");
  ASSERT_TRUE(
      npy::writeNpz(path,
                    {{"ids", Tensor::view(ids.data(), DType::kInt64, {5})},
                     {"x.y", Tensor::view(x.data(), DType::kFloat32, {2, 2})}})
          .isOk());
  auto entries = npy::readNpz(path);
  ASSERT_TRUE(entries.isOk()) << entries.status().toString();
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[0].first, "ids");
  EXPECT_EQ((*entries)[1].first, "x.y");
  EXPECT_EQ((*entries)[0].second.data<int64_t>()[4], 5);
  EXPECT_EQ((*entries)[1].second.shape(), Shape({2, 2}));

  // A deflated archive (what np.savez_compressed writes), built here.
  auto npyBytes = npy::encodeNpy(Tensor::view(x.data(), DType::kFloat32, {4}));
  ASSERT_TRUE(npyBytes.isOk());
  std::string deflated(compressBound(npyBytes->size()) + 64, '\0');
  z_stream zs{};
  ASSERT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY),
            Z_OK);
  zs.next_in = reinterpret_cast<Bytef *>(npyBytes->data());
  zs.avail_in = static_cast<uInt>(npyBytes->size());
  zs.next_out = reinterpret_cast<Bytef *>(deflated.data());
  zs.avail_out = static_cast<uInt>(deflated.size());
  ASSERT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  deflated.resize(zs.total_out);
  deflateEnd(&zs);
  uint32_t crc = static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef *>(npyBytes->data()),
            static_cast<uInt>(npyBytes->size())));
  auto le = [](std::string &s, uint64_t v, int n) {
    for (int i = 0; i < n; ++i)
      s += static_cast<char>((v >> (8 * i)) & 0xff);
  };
  std::string name = "z.npy", zip, cd;
  // What the local and the central header say alike: flags 0, method 8
  // (deflate), time and date 0, CRC, sizes, name length, no extra field.
  auto entryFields = [&](std::string &s) {
    le(s, 0, 2);
    le(s, 8, 2);
    le(s, 0, 4);
    le(s, crc, 4);
    le(s, deflated.size(), 4);
    le(s, npyBytes->size(), 4);
    le(s, name.size(), 2);
    le(s, 0, 2);
  };
  le(zip, 0x04034b50, 4); // local header, version needed 2.0
  le(zip, 20, 2);
  entryFields(zip);
  zip += name + deflated;
  le(cd, 0x02014b50, 4); // central header, made by and needed 2.0
  le(cd, 20, 2);
  le(cd, 20, 2);
  entryFields(cd);
  le(cd, 0, 2); // comment length
  le(cd, 0, 2); // disk
  le(cd, 0, 2); // internal attributes
  le(cd, 0, 4); // external attributes
  le(cd, 0, 4); // offset of the local header
  cd += name;
  std::string archive = zip + cd;
  le(archive, 0x06054b50, 4);
  le(archive, 0, 4);
  le(archive, 1, 2);
  le(archive, 1, 2);
  le(archive, cd.size(), 4);
  le(archive, zip.size(), 4);
  le(archive, 0, 2);
  writeFileBytes(dir.file("z.npz"), archive);
  auto z = npy::readNpz(dir.file("z.npz"));
  ASSERT_TRUE(z.isOk()) << z.status().toString();
  ASSERT_EQ(z->size(), 1u);
  EXPECT_EQ((*z)[0].first, "z");
  EXPECT_EQ((*z)[0].second.data<float>()[3], 4.0f);

  // Corruptions: a flipped data byte (CRC), a cut archive, random bytes.
  std::string bad = archive;
  bad[40] ^= 0x55;
  writeFileBytes(dir.file("bad.npz"), bad);
  EXPECT_FALSE(npy::readNpz(dir.file("bad.npz")).isOk());
  writeFileBytes(dir.file("cut.npz"), archive.substr(0, archive.size() - 30));
  EXPECT_ERROR(npy::readNpz(dir.file("cut.npz")).status(),
               StatusCode::kDataLoss, "cut.npz");
  std::string stored = readFileBytes(path);
  stored[100] ^= 0x01; // inside the first entry's data
  writeFileBytes(dir.file("crc.npz"), stored);
  EXPECT_ERROR(npy::readNpz(dir.file("crc.npz")).status(),
               StatusCode::kDataLoss, "CRC mismatch");
  writeFileBytes(dir.file("junk.npz"), std::string(300, 'j'));
  EXPECT_ERROR(npy::readNpz(dir.file("junk.npz")).status(),
               StatusCode::kDataLoss, "not a zip archive");
}

TEST(Npy, FailedWritesLeaveNothing) {
  float x = 1;
  Status s = npy::writeNpy("/nonexistent_dir/x.npy",
                           Tensor::view(&x, DType::kFloat32, {1}));
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("/nonexistent_dir/x.npy"), std::string::npos);
}

} // namespace

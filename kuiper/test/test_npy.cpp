// Core tests of the .npy reader and writer, against files NumPy itself wrote.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>

#include "kuiper/error.hpp"
#include "kuiper/npy.hpp"
#include "test_files.hpp"

namespace kuiper {
namespace {

const std::string kNpyData = std::string(KUIPER_SOURCE_DIR) + "/kuiper/test/data/npy/";
const std::string kScratch = test::BinaryDir() + "/npy_test_";

TEST(Npy, ReadsFloat32WrittenByNumpy) {
  // np.arange(6, dtype=np.float32).reshape(2, 3)
  const NpyArray a = LoadNpy(kNpyData + "arange_2x3_f4.npy");
  EXPECT_EQ(a.shape, std::vector<int64_t>({2, 3}));
  EXPECT_EQ(a.data, std::vector<float>({0, 1, 2, 3, 4, 5}));
}

TEST(Npy, ConvertsFloat64AndInt64) {
  // np.array([[0.5, -1.25]]) and np.array([[7, -3]]) (int64)
  EXPECT_EQ(LoadNpy(kNpyData + "f8.npy").data, std::vector<float>({0.5f, -1.25f}));
  EXPECT_EQ(LoadNpy(kNpyData + "i8.npy").data, std::vector<float>({7, -3}));
}

TEST(Npy, RoundTripsThroughSave) {
  NpyArray a{{2, 1, 3}, {1, 2, 3, 4, 5, 6}};
  SaveNpy(kScratch + "roundtrip.npy", a);
  const NpyArray b = LoadNpy(kScratch + "roundtrip.npy");
  EXPECT_EQ(b.shape, a.shape);
  EXPECT_EQ(b.data, a.data);
}

TEST(Npy, SavesOneDimensionalShapeAsPythonTuple) {
  SaveNpy(kScratch + "one_d.npy", NpyArray{{3}, {1, 2, 3}});
  std::ifstream file(kScratch + "one_d.npy", std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(file)), {});
  EXPECT_NE(text.find("'shape': (3,)"), std::string::npos);
  EXPECT_EQ((text.find('\n') + 1) % 64, 0u) << "data starts on a 64-byte boundary";
}

TEST(Npy, BatchSplitsTheFirstDimensionRowMajor) {
  const NpyArray a{{2, 2, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}};
  const auto batch = NpyToBatch(a);
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch[1]->raw_shapes(), std::vector<uint32_t>({2, 3}));
  EXPECT_EQ(batch[1]->at(0, 1, 0), 9.f);
  const NpyArray back = BatchToNpy(batch);
  EXPECT_EQ(back.shape, a.shape);
  EXPECT_EQ(back.data, a.data);
}

TEST(Npy, BatchOfOneDimensionalItems) {
  const auto batch = NpyToBatch(NpyArray{{3, 2}, {1, 2, 3, 4, 5, 6}});
  ASSERT_EQ(batch.size(), 3u);
  EXPECT_EQ(batch[2]->raw_shapes(), std::vector<uint32_t>({2}));
  EXPECT_EQ(batch[2]->values(), std::vector<float>({5, 6}));
}

TEST(Npy, ParsesBytesInMemoryLikeTheFile) {
  std::ifstream file(kNpyData + "arange_2x3_f4.npy", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const NpyArray array = ParseNpy(bytes, "arange");
  EXPECT_EQ(array.shape, std::vector<int64_t>({2, 3}));
  EXPECT_EQ(array.data, std::vector<float>({0, 1, 2, 3, 4, 5}));
}

TEST(Npy, RankOneOrNineIsNotABatch) {
  EXPECT_THROW(NpyToBatch(NpyArray{{3}, {1, 2, 3}}), ShapeError);
  EXPECT_THROW(NpyToBatch(NpyArray{{1, 1, 1, 1, 1, 1, 1, 1, 1}, {1}}), ShapeError);
}

// A 5-D array is a batch of 4-D items, each read in C order.
TEST(Npy, FiveDArraySplitsIntoFourDItems) {
  std::vector<float> data(2 * 3 * 1 * 2 * 2);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  const std::vector<sftensor> batch = NpyToBatch(NpyArray{{2, 3, 1, 2, 2}, data});
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch[1]->raw_shapes(), std::vector<uint32_t>({3, 1, 2, 2}));
  EXPECT_EQ(batch[1]->values(), std::vector<float>(data.begin() + 12, data.end()));
  EXPECT_EQ(BatchToNpy(batch).shape, std::vector<int64_t>({2, 3, 1, 2, 2}));
}

void ExpectParseError(const std::string& bytes, const std::string& expected_words) {
  // Named after the test: ctest runs the tests of this file in parallel.
  const std::string path =
      kScratch + ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".npy";
  std::ofstream(path, std::ios::binary) << bytes;
  try {
    LoadNpy(path);
    FAIL() << "expected ParseError mentioning: " << expected_words;
  } catch (const ParseError& e) {
    EXPECT_NE(std::string(e.what()).find(expected_words), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

std::string Header(const std::string& dict) {
  std::string h = dict + "\n";
  return std::string("\x93NUMPY\x01\x00", 8) + char(h.size() & 0xff) + char(h.size() >> 8) + h;
}

// Integer dtypes keep their exact values in `ints` (an ONNX Slice's end of
// INT64_MAX), and the float copy in `data`.
TEST(NpyIntegers, ReadsEverySignedAndUnsignedWidthExactly) {
  const std::string i1 = Header("{'descr': '|i1', 'fortran_order': False, 'shape': (2,), }") +
                         std::string("\xff\x7f", 2);
  EXPECT_EQ(ParseNpy(i1, "i1").ints, (std::vector<int64_t>{-1, 127}));
  const std::string u2 = Header("{'descr': '<u2', 'fortran_order': False, 'shape': (1,), }") +
                         std::string("\xff\xff", 2);
  EXPECT_EQ(ParseNpy(u2, "u2").ints, (std::vector<int64_t>{65535}));
  const std::string i8 = Header("{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }") +
                         std::string("\xff\xff\xff\xff\xff\xff\xff\x7f", 8);
  const NpyArray big = ParseNpy(i8, "i8");
  EXPECT_TRUE(big.integer);
  EXPECT_EQ(big.ints, (std::vector<int64_t>{std::numeric_limits<int64_t>::max()}));
  const std::string u8 = Header("{'descr': '<u8', 'fortran_order': False, 'shape': (1,), }") +
                         std::string("\x05\0\0\0\0\0\0\0", 8);
  EXPECT_EQ(ParseNpy(u8, "u8").data, (std::vector<float>{5}));
}

TEST(NpyIntegers, Uint64BeyondInt64IsAParseError) {
  ExpectParseError(
      Header("{'descr': '<u8', 'fortran_order': False, 'shape': (1,), }") + std::string(8, '\xff'),
      "int64");
}

TEST(NpyIntegers, ExactInFloatUpToTwoToThe24) {
  NpyArray a;
  a.shape = {2};
  a.integer = true;
  a.ints = {16777216, -16777216};
  EXPECT_NO_THROW(CheckExactInFloat(a, "x"));
  a.ints = {0, 16777217};
  try {
    CheckExactInFloat(a, "the_input");
    FAIL() << "2^24 + 1 has no exact float32";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("the_input"), std::string::npos) << e.what();
  }
}

TEST(NpyErrors, MissingFile) { EXPECT_THROW(LoadNpy(kNpyData + "absent.npy"), ParseError); }
TEST(NpyErrors, BadMagic) { ExpectParseError("PK\x03\x04 not numpy", "magic"); }
TEST(NpyErrors, HeaderCutOff) {
  ExpectParseError(std::string("\x93NUMPY\x01\x00\xff\x00{'descr'", 17), "cut off");
}
TEST(NpyErrors, FortranOrder) {
  ExpectParseError(
      Header("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }") + std::string(4, '\0'),
      "Fortran");
}
TEST(NpyErrors, BigEndian) {
  ExpectParseError(
      Header("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }") + std::string(4, '\0'),
      "big-endian");
}
TEST(NpyErrors, UnsupportedDtype) {
  ExpectParseError(Header("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }"), "dtype");
}
TEST(NpyErrors, TooLittleData) {
  ExpectParseError(
      Header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }") + std::string(8, '\0'),
      "needs 24 bytes");
}
// 45000 characters of shape overflowed the stack of std::regex (found by fuzz/npy_fuzzer.cpp).
TEST(NpyErrors, HeaderLongerThanNumpysLimitIsRefusedBeforeMatching) {
  ExpectParseError(Header("{'descr': '<f4', 'fortran_order': False, 'shape': (" +
                          std::string(45000, '1') + "), }"),
                   "more than NumPy's own limit of 10000");
}
TEST(NpyErrors, ParseNpyNamesTheGivenName) {
  try {
    ParseNpy("not numpy", "input #2");
    FAIL() << "expected ParseError";
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("input #2: not a usable .npy file", 0), 0) << e.what();
  }
}
TEST(NpyErrors, ShapeOverflowIsRefusedBeforeAllocating) {
  ExpectParseError(
      Header("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }"),
      "2^31");
}

}  // namespace
}  // namespace kuiper

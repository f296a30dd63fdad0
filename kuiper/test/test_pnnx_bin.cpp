// Specification of the PNNX weights reader and of attribute data: LoadBin on
// every kind of zip PNNX and other writers produce, the exact ParseError for
// each kind of bad archive, and the conversion of every data type to float.
//
// Plain and deflated archives are written here with libzip. Zip64 archives are
// committed (kuiper/test/data/pnnx/make_zip64_fixtures.py), because libzip
// writes zip64 only for sizes that need it. All archives hold the attributes of
// linear.pnnx.param: @bias=(2)f32 and @weight=(2,3)f32.
#include <gtest/gtest.h>
#include <zip.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>

#include "kuiper/error.hpp"
#include "kuiper/pnnx.hpp"
#include "test_files.hpp"

namespace kuiper::pnnx {
namespace {

const std::string kBinDataDir = KUIPER_SOURCE_DIR "/kuiper/test/data/pnnx/";
const std::string kLinearParam = kBinDataDir + "linear.pnnx.param";
const std::vector<float> kWeight = {1, 2, 3, 4, 5, 6};
const std::vector<float> kBias = {-1, 0.5};

template <typename T>
std::vector<char> Bytes(const std::vector<T>& values) {
  std::vector<char> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// A path named after the running test, under the build directory, so that two
// builds running the tests at once never share it.
std::string TestFile(std::string_view suffix) {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const auto dir = std::filesystem::path(test::BinaryDir()) / "test_tmp" / "pnnx";
  std::filesystem::create_directories(dir);
  return (dir / (std::string(test->test_suite_name()) + "." + test->name() + std::string(suffix)))
      .string();
}

struct Entry {
  std::string name;
  std::vector<char> data;
};

// Writes `entries` to a new zip with libzip, every entry compressed by `method`.
std::string WriteZip(const std::vector<Entry>& entries, zip_int32_t method = ZIP_CM_STORE) {
  const std::string path = TestFile(".pnnx.bin");
  int code = 0;
  zip_t* zip = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
  EXPECT_NE(zip, nullptr) << "libzip error " << code;
  for (const Entry& entry : entries) {
    zip_source_t* source = zip_source_buffer(zip, entry.data.data(), entry.data.size(), 0);
    const zip_int64_t index = zip_file_add(zip, entry.name.c_str(), source, 0);
    EXPECT_GE(index, 0) << zip_strerror(zip);
    EXPECT_EQ(zip_set_file_compression(zip, index, method, 0), 0);
  }
  EXPECT_EQ(zip_close(zip), 0);  // writes the archive and frees `zip`
  return path;
}

std::vector<Entry> LinearEntries() {
  return {{"linear.weight", Bytes(kWeight)}, {"linear.bias", Bytes(kBias)}};
}

std::vector<char> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string WriteFile(const std::vector<char>& bytes) {
  const std::string path = TestFile(".pnnx.bin");
  std::ofstream(path, std::ios::binary)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

// The message of the ParseError LoadBin throws for linear.pnnx.param and `bin`.
std::string LoadLinearError(const std::string& bin) {
  Graph graph = LoadParam(kLinearParam);
  try {
    LoadBin(graph, bin);
  } catch (const ParseError& e) {
    return e.what();
  }
  ADD_FAILURE() << "LoadBin(\"" << bin << "\") did not throw ParseError";
  return "";
}

const Attribute& Attr(const Graph& graph, const std::string& key) {
  return graph.operators.at(1).attrs.at(key);
}

std::string Where(const std::string& bin, const std::string& key) {
  return bin + ": entry 'linear." + key + "' (attribute @" + key +
         " of operator 'linear' on param line 4)";
}

// ---------------------------------------------------------------------------
// Archives that load

TEST(PnnxBin, LoadsStoredArchive) {
  const Graph graph = Load(kLinearParam, WriteZip(LinearEntries(), ZIP_CM_STORE));
  EXPECT_EQ(Attr(graph, "weight").ToFloat(), kWeight);
  EXPECT_EQ(Attr(graph, "bias").ToFloat(), kBias);
}

TEST(PnnxBin, LoadsDeflatedArchive) {
  const std::vector<float> zeros(64, 0.f);  // compressible, so libzip keeps deflate
  const std::string bin = WriteZip(
      {{"linear.weight", Bytes(kWeight)}, {"linear.bias", Bytes(kBias)}, {"padding", Bytes(zeros)}},
      ZIP_CM_DEFLATE);
  {
    int code = 0;
    zip_t* zip = zip_open(bin.c_str(), ZIP_RDONLY, &code);
    ASSERT_NE(zip, nullptr);
    zip_stat_t stat;
    ASSERT_EQ(zip_stat(zip, "linear.weight", 0, &stat), 0);
    EXPECT_EQ(stat.comp_method, ZIP_CM_DEFLATE);
    zip_discard(zip);
  }
  const Graph graph = Load(kLinearParam, bin);
  EXPECT_EQ(Attr(graph, "weight").ToFloat(), kWeight);
  EXPECT_EQ(Attr(graph, "bias").ToFloat(), kBias);
}

// The layout of current PNNX: zip64 extra fields and a zip64 end record.
TEST(PnnxBin, LoadsPnnxZip64Archive) {
  const Graph graph = Load(kLinearParam, kBinDataDir + "pnnx_zip64.pnnx.bin");
  EXPECT_EQ(Attr(graph, "weight").ToFloat(), kWeight);
  EXPECT_EQ(Attr(graph, "bias").ToFloat(), kBias);
}

TEST(PnnxBin, LoadsPythonZip64Archive) {
  const Graph graph = Load(kLinearParam, kBinDataDir + "python_zip64.pnnx.bin");
  EXPECT_EQ(Attr(graph, "weight").ToFloat(), kWeight);
  EXPECT_EQ(Attr(graph, "bias").ToFloat(), kBias);
}

TEST(PnnxBin, KeepsRawLittleEndianBytes) {
  const Graph graph = Load(kLinearParam, WriteZip(LinearEntries()));
  EXPECT_EQ(Attr(graph, "bias").data, Bytes(kBias));
}

TEST(PnnxBin, IgnoresEntriesNoAttributeAsksFor) {
  std::vector<Entry> entries = LinearEntries();
  entries.push_back({"linear.unused", {'x'}});
  const Graph graph = Load(kLinearParam, WriteZip(entries));
  EXPECT_EQ(Attr(graph, "weight").ToFloat(), kWeight);
}

TEST(PnnxBin, EmptyAttributeReadsEmptyEntry) {
  Graph graph;
  graph.operators.push_back(Operator{.name = "op"});
  graph.operators[0].attrs["none"] = Attribute{.type = DataType::kF32, .shape = {0, 3}};
  LoadBin(graph, WriteZip({{"op.none", {}}}));
  EXPECT_TRUE(graph.operators[0].attrs["none"].data.empty());
}

TEST(PnnxBin, FailedLoadLeavesTheGraphUnchanged) {
  Graph graph = LoadParam(kLinearParam);
  // bias is read first (attributes are kept sorted by name), then weight fails.
  EXPECT_THROW(LoadBin(graph, WriteZip({{"linear.bias", Bytes(kBias)}})), ParseError);
  EXPECT_TRUE(Attr(graph, "bias").data.empty());
}

// ---------------------------------------------------------------------------
// Bad archives: each gets a ParseError naming the file and the entry.

TEST(PnnxBinError, MissingFile) {
  const std::string bin = kBinDataDir + "no_such_file.pnnx.bin";
  EXPECT_EQ(LoadLinearError(bin),
            bin + ": cannot open PNNX bin file as a zip archive: No such file");
}

TEST(PnnxBinError, NotAZip) {
  const std::string bin = WriteFile({'7', '7', '6', '7', '5', '1', '7', '\n'});
  EXPECT_EQ(LoadLinearError(bin),
            bin + ": cannot open PNNX bin file as a zip archive: Not a zip archive");
}

TEST(PnnxBinError, TruncatedZip) {
  std::vector<char> bytes = ReadFile(WriteZip(LinearEntries()));
  ASSERT_GT(bytes.size(), 30u);
  bytes.resize(bytes.size() - 30);  // cuts into the end-of-central-directory record
  const std::string bin = WriteFile(bytes);
  EXPECT_EQ(LoadLinearError(bin),
            bin + ": cannot open PNNX bin file as a zip archive: Not a zip archive");
}

TEST(PnnxBinError, LocalHeaderDisagreesWithCentralDirectory) {
  std::vector<char> bytes = ReadFile(WriteZip(LinearEntries()));
  bytes[30] = 'L';  // first letter of the first entry's name in its local header
  const std::string bin = WriteFile(bytes);
  EXPECT_EQ(LoadLinearError(bin),
            bin + ": cannot open PNNX bin file as a zip archive: Zip archive inconsistent");
}

TEST(PnnxBinError, DataFailsCrcCheck) {
  std::vector<char> bytes =
      ReadFile(WriteZip({{"linear.weight", Bytes(kWeight)}, {"linear.bias", Bytes(kBias)}}));
  // The first entry's data starts after the 30-byte local header and its name.
  bytes[30 + std::strlen("linear.weight")] ^= 0x01;
  const std::string bin = WriteFile(bytes);
  EXPECT_EQ(LoadLinearError(bin), Where(bin, "weight") + ": cannot read: CRC error");
}

TEST(PnnxBinError, MissingEntry) {
  const std::string bin = WriteZip({{"linear.weight", Bytes(kWeight)}});
  EXPECT_EQ(LoadLinearError(bin), Where(bin, "bias") + ": missing from the archive");
}

TEST(PnnxBinError, EntrySmallerThanShape) {
  const std::string bin =
      WriteZip({{"linear.weight", Bytes(std::vector<float>(5))}, {"linear.bias", Bytes(kBias)}});
  EXPECT_EQ(LoadLinearError(bin), Where(bin, "weight") + ": holds 20 bytes, but (2,3)f32 needs 24");
}

TEST(PnnxBinError, EntryLargerThanShape) {
  const std::string bin =
      WriteZip({{"linear.weight", Bytes(kWeight)}, {"linear.bias", Bytes(kWeight)}});
  EXPECT_EQ(LoadLinearError(bin), Where(bin, "bias") + ": holds 24 bytes, but (2)f32 needs 8");
}

// LoadParam already refuses such shapes; LoadBin checks again for graphs built in code.
TEST(PnnxBinError, ShapeOverTwoToThe31ElementsIsRefusedBeforeReading) {
  Graph graph;
  graph.operators.push_back(Operator{.name = "op", .line = 3});
  graph.operators[0].attrs["w"] = Attribute{.type = DataType::kF32, .shape = {65536, 65536}};
  const std::string bin = WriteZip({{"op.w", {}}});
  try {
    LoadBin(graph, bin);
    FAIL() << "no ParseError";
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()),
              bin +
                  ": entry 'op.w' (attribute @w of operator 'op' on param line 3): cannot "
                  "hold (65536,65536)f32: a data type and at most 2^31 elements are expected");
  }
}

// ---------------------------------------------------------------------------
// Data types, and float32 attribute data as floats

Attribute MakeAttribute(DataType type, std::vector<char> data) {
  return Attribute{.type = type, .shape = {}, .data = std::move(data)};
}

TEST(PnnxDataType, SizesInBytes) {
  EXPECT_EQ(DataTypeSize(DataType::kNull), 0u);
  EXPECT_EQ(DataTypeSize(DataType::kF32), 4u);
  EXPECT_EQ(DataTypeSize(DataType::kF64), 8u);
  EXPECT_EQ(DataTypeSize(DataType::kF16), 2u);
  EXPECT_EQ(DataTypeSize(DataType::kI64), 8u);
  EXPECT_EQ(DataTypeSize(DataType::kI32), 4u);
  EXPECT_EQ(DataTypeSize(DataType::kI16), 2u);
  EXPECT_EQ(DataTypeSize(DataType::kI8), 1u);
  EXPECT_EQ(DataTypeSize(DataType::kU8), 1u);
  EXPECT_EQ(DataTypeSize(DataType::kBool), 1u);
}

TEST(PnnxDataType, NamesAsInFiles) {
  EXPECT_EQ(DataTypeName(DataType::kF16), "f16");
  EXPECT_EQ(DataTypeName(DataType::kBool), "bool");
  EXPECT_EQ(DataTypeName(DataType::kNull), "null");
}

TEST(PnnxAttribute, F32ToFloat) {
  EXPECT_EQ(MakeAttribute(DataType::kF32, Bytes<float>({1.5f, -2.f})).ToFloat(),
            std::vector<float>({1.5f, -2.f}));
}

TEST(PnnxAttribute, OtherTypesAreNotFloatWeights) {
  // Converting f64, f16 and the integer types is the graph loader's job
  // (RuntimeGraph::InitGraphAttrs): ToFloat refuses them rather than guess.
  EXPECT_THROW(MakeAttribute(DataType::kF64, Bytes<double>({0.25})).ToFloat(), ParseError);
  EXPECT_THROW(MakeAttribute(DataType::kF16, Bytes<uint16_t>({0x3C00})).ToFloat(), ParseError);
  EXPECT_THROW(MakeAttribute(DataType::kI64, Bytes<int64_t>({-3})).ToFloat(), ParseError);
}

TEST(PnnxAttribute, EmptyDataToNoFloats) {
  EXPECT_TRUE(MakeAttribute(DataType::kF32, {}).ToFloat().empty());
}

TEST(PnnxAttribute, NullTypeThrows) {
  EXPECT_THROW(MakeAttribute(DataType::kNull, {1, 2}).ToFloat(), ParseError);
}

TEST(PnnxAttribute, PartialElementThrows) {
  try {
    MakeAttribute(DataType::kF32, {1, 2, 3, 4, 5}).ToFloat();
    FAIL() << "no ParseError";
  } catch (const ParseError& e) {
    EXPECT_EQ(std::string(e.what()),
              "attribute data of 5 bytes is not a whole number of f32 elements");
  }
}

}  // namespace
}  // namespace kuiper::pnnx

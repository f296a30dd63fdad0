// The memory limit (kuiper/memory_limit.hpp): a model or input whose declared
// shapes need more than the limit is refused with a ResourceError naming the
// file or operand and the limit, before anything is allocated for it; one just
// within the limit loads. Sizes are counted by hand from the files.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "kuiper/error.hpp"
#include "kuiper/graph.hpp"
#include "kuiper/memory_limit.hpp"
#include "kuiper/npy.hpp"
#include "kuiper/pnnx.hpp"
#include "test_files.hpp"

namespace kuiper {
namespace {

const std::string kLimits = KUIPER_SOURCE_DIR "/kuiper/test/data/limits/";
const std::string kPnnx = KUIPER_SOURCE_DIR "/kuiper/test/data/pnnx/";

// A scratch file named after the running test, under the build directory.
std::string ScratchFile(const std::string& suffix) {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const auto dir = std::filesystem::path(test::BinaryDir()) / "test_tmp" / "limits";
  std::filesystem::create_directories(dir);
  return (dir / (std::string(test->name()) + suffix)).string();
}

std::string WriteScratch(const std::string& suffix, const std::string& bytes) {
  const std::string path = ScratchFile(suffix);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// A .npy (format 1.0) holding only a header: no data follows.
std::string NpyHeaderOnly(const std::string& dict) {
  const std::string header = dict + "\n";
  return std::string("\x93NUMPY\x01\x00", 8) + char(header.size() & 0xff) +
         char(header.size() >> 8) + header;
}

// A zip archive with no entries: just the 22-byte end of central directory.
const std::string kEmptyZip = std::string("PK\x05\x06", 4) + std::string(18, '\0');

// The message of the ResourceError `load` throws, or "" (a test failure) if none.
template <typename Load>
std::string ResourceErrorOf(Load load) {
  try {
    load();
  } catch (const ResourceError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ResourceError";
  return "";
}

void ExpectMentions(const std::string& message, const std::string& words) {
  EXPECT_NE(message.find(words), std::string::npos) << message;
}

TEST(MemoryLimit, DefaultIsFourGiB) {
  EXPECT_EQ(kDefaultMemoryLimit, uint64_t{4} * 1024 * 1024 * 1024);
  EXPECT_EQ(MemoryLimit(), kDefaultMemoryLimit);
}

TEST(MemoryLimit, ScopeSetsTheLimitAndRestoresIt) {
  {
    const MemoryLimitScope limit(12345);
    EXPECT_EQ(MemoryLimit(), 12345u);
  }
  EXPECT_EQ(MemoryLimit(), kDefaultMemoryLimit);
}

TEST(MemoryLimit, SaturatingMultiplyStopsAtTheLargestValue) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(SaturatingMultiply(uint64_t{1} << 32, uint64_t{1} << 31), uint64_t{1} << 63);
  EXPECT_EQ(SaturatingMultiply(uint64_t{1} << 32, uint64_t{1} << 32), kMax);
  EXPECT_EQ(SaturatingMultiply(0, kMax), 0u);
  EXPECT_EQ(SaturatingMultiply(kMax, 1), kMax);
}

TEST(MemoryLimit, CheckMemoryAcceptsTheLimitItselfAndNamesBothSizesAbove) {
  const MemoryLimitScope limit(1000);
  EXPECT_NO_THROW(CheckMemory(1000, "exactly the limit"));
  const std::string message = ResourceErrorOf([] { CheckMemory(1001, "the thing"); });
  EXPECT_EQ(message,
            "the thing would take 1001 bytes (0.00 GiB), more than the memory limit of 1000 bytes "
            "(0.00 GiB)");
}

// ---- PNNX operands: every annotated operand at the batch, before allocation ----

// relu_2x3x4x5: operands 0 (input) and 1 (relu's output) are (2,3,4,5)f32,
// 2 * 3 * 4 * 5 * 4 = 480 bytes each, 960 bytes for both; no weights.
TEST(MemoryLimitGraph, ModelExactlyAtTheLimitBuilds) {
  const MemoryLimitScope limit(960);
  RuntimeGraph graph(kLimits + "relu_2x3x4x5.pnnx.param", "");
  graph.InitTopology();
  EXPECT_NO_THROW(graph.Build());
}

TEST(MemoryLimitGraph, OneByteLessNamesTheOperandThatCrossesIt) {
  const MemoryLimitScope limit(959);
  RuntimeGraph graph(kLimits + "relu_2x3x4x5.pnnx.param", "");
  graph.InitTopology();
  const std::string message = ResourceErrorOf([&] { graph.Build(); });
  ExpectMentions(message, kLimits + "relu_2x3x4x5.pnnx.param: at batch 2");
  ExpectMentions(message, "operand '1' (2,3,4,5), output of 'relu' (nn.ReLU)");
  ExpectMentions(message, "would take 960 bytes");
  ExpectMentions(message, "memory limit of 959 bytes");
}

TEST(MemoryLimitGraph, ALargerBatchInForwardIsCheckedBeforeAllocating) {
  const MemoryLimitScope limit(960);
  RuntimeGraph graph(kLimits + "relu_2x3x4x5.pnnx.param", "");
  graph.InitTopology();
  graph.Build();
  // Batch 3: 3 * 60 * 4 = 720 bytes per operand, 1440 for both.
  std::vector<sftensor> batch;
  for (int i = 0; i < 3; ++i) batch.push_back(TensorCreate({3, 4, 5}));
  const std::string message = ResourceErrorOf([&] { graph.Forward(batch); });
  ExpectMentions(message, "at batch 3");
  ExpectMentions(message, "would take 1440 bytes");
}

// A batch of `n` items of relu_2x3x4x5's input shape, each filled with `value`.
std::vector<sftensor> ReluBatch(int n, float value) {
  std::vector<sftensor> batch;
  for (int i = 0; i < n; ++i) {
    batch.push_back(TensorCreate({3, 4, 5}));
    batch.back()->Fill(value);
  }
  return batch;
}

TEST(MemoryLimitGraph, ARefusedLargerBatchLeavesTheGraphsBuffersAsTheyWere) {
  const MemoryLimitScope limit(960);
  RuntimeGraph graph(kLimits + "relu_2x3x4x5.pnnx.param", "");
  graph.InitTopology();
  graph.Build();
  graph.Forward(ReluBatch(2, 1.f));
  const std::vector<sftensor> inputs = graph.input_operators()[0]->output_operand->datas;
  const std::vector<sftensor> outputs = graph.FindOperator("relu")->output_operand->datas;
  EXPECT_THROW(graph.Forward(ReluBatch(3, 1.f)), ResourceError);
  EXPECT_EQ(graph.input_operators()[0]->output_operand->datas, inputs);
  EXPECT_EQ(graph.FindOperator("relu")->output_operand->datas, outputs);
}

TEST(MemoryLimitGraph, AfterARefusedLargerBatchTheOldBatchStillRuns) {
  const MemoryLimitScope limit(960);
  RuntimeGraph graph(kLimits + "relu_2x3x4x5.pnnx.param", "");
  graph.InitTopology();
  graph.Build();
  EXPECT_THROW(graph.Forward(ReluBatch(3, 1.f)), ResourceError);
  const std::vector<sftensor> out = graph.Forward(ReluBatch(2, -2.f));
  ASSERT_EQ(out.size(), 2u);
  for (const sftensor& item : out) EXPECT_EQ(item->values(), std::vector<float>(60, 0.f));
}

// (1,3,100000,100000)f32 is 120,000,000,000 bytes: the default limit refuses
// the input operand itself.
TEST(MemoryLimitGraph, HugeAnnotatedOperandIsRefusedByTheDefaultLimit) {
  RuntimeGraph graph(kLimits + "huge_input.pnnx.param", "");
  graph.InitTopology();
  const std::string message = ResourceErrorOf([&] { graph.Build(); });
  ExpectMentions(message, "operand '0' (1,3,100000,100000), output of 'input' (pnnx.Input)");
  ExpectMentions(message, "would take 120000000000 bytes");
  ExpectMentions(message, "memory limit of 4294967296 bytes");
}

// ---- PNNX attributes: the weights in the .bin, before reading an entry ----

// linear.pnnx.param: @bias=(2)f32 (8 bytes) then @weight=(2,3)f32 (24 bytes).
// The .pnnx.param (299 bytes) is read before the limit is lowered: only the
// weights count here.
TEST(MemoryLimitBin, WeightsExactlyAtTheLimitLoad) {
  pnnx::Graph graph = pnnx::LoadParam(kPnnx + "linear.pnnx.param");
  const MemoryLimitScope limit(32);
  pnnx::LoadBin(graph, kPnnx + "pnnx_zip64.pnnx.bin");
  EXPECT_EQ(graph.operators.at(1).attrs.at("weight").data.size(), 24u);
}

TEST(MemoryLimitBin, OneByteLessNamesTheEntryThatCrossesIt) {
  pnnx::Graph graph = pnnx::LoadParam(kPnnx + "linear.pnnx.param");
  const MemoryLimitScope limit(31);
  const std::string bin = kPnnx + "pnnx_zip64.pnnx.bin";
  const std::string message = ResourceErrorOf([&] { pnnx::LoadBin(graph, bin); });
  ExpectMentions(message, bin + ": entry 'linear.weight'");
  ExpectMentions(message, "would take 32 bytes");
  ExpectMentions(message, "memory limit of 31 bytes");
}

// @weight=(40000,30000)f32 is 4,800,000,000 bytes; the archive is empty, so
// reaching "missing from the archive" would mean the check came too late.
TEST(MemoryLimitBin, HugeDeclaredWeightIsRefusedBeforeLookingForIt) {
  pnnx::Graph graph = pnnx::LoadParam(kLimits + "huge_weight.pnnx.param");
  const std::string bin = WriteScratch(".pnnx.bin", kEmptyZip);
  const std::string message = ResourceErrorOf([&] { pnnx::LoadBin(graph, bin); });
  ExpectMentions(message, "entry 'linear.weight'");
  ExpectMentions(message, "would take 4800000000 bytes");
  ExpectMentions(message, "memory limit of 4294967296 bytes");
}

// ---- .pnnx.param: the file's size, before it is read ----

// linear.pnnx.param is 299 bytes.
TEST(MemoryLimitParam, FileExactlyAtTheLimitLoads) {
  const std::string path = kPnnx + "linear.pnnx.param";
  ASSERT_EQ(std::filesystem::file_size(path), 299u);
  const MemoryLimitScope limit(299);
  EXPECT_EQ(pnnx::LoadParam(path).operators.size(), 3u);
}

TEST(MemoryLimitParam, FileOneByteOverTheLimitIsRefusedBeforeReading) {
  const std::string path = kPnnx + "linear.pnnx.param";
  const MemoryLimitScope limit(298);
  EXPECT_EQ(ResourceErrorOf([&] { pnnx::LoadParam(path); }),
            path +
                ": reading the whole file would take 299 bytes (0.00 GiB), more than the "
                "memory limit of 298 bytes (0.00 GiB)");
}

// ---- .npy: the file's size and its values as float32 ----

// (40000, 40000) float32 is 6,400,000,000 bytes, in a file of a few dozen bytes.
TEST(MemoryLimitNpy, HugeDeclaredShapeIsRefusedBeforeAllocating) {
  const std::string path = WriteScratch(
      ".npy", NpyHeaderOnly("{'descr': '<f4', 'fortran_order': False, 'shape': (40000, 40000), }"));
  const std::string message = ResourceErrorOf([&] { LoadNpy(path); });
  ExpectMentions(message, path + ": shape (40000, 40000) as float32 would take 6400000000 bytes");
  ExpectMentions(message, "memory limit of 4294967296 bytes");
}

// arange_2x3_f4.npy: a 128-byte header and 24 bytes of data, 152 bytes in all.
TEST(MemoryLimitNpy, FileExactlyAtTheLimitLoads) {
  const std::string path = KUIPER_SOURCE_DIR "/kuiper/test/data/npy/arange_2x3_f4.npy";
  ASSERT_EQ(std::filesystem::file_size(path), 152u);
  const MemoryLimitScope limit(152);
  EXPECT_EQ(LoadNpy(path).data.size(), 6u);
}

TEST(MemoryLimitNpy, FileOneByteOverTheLimitIsRefusedBeforeReading) {
  const std::string path = KUIPER_SOURCE_DIR "/kuiper/test/data/npy/arange_2x3_f4.npy";
  const MemoryLimitScope limit(151);
  const std::string message = ResourceErrorOf([&] { LoadNpy(path); });
  ExpectMentions(message, path + ": reading the whole file would take 152 bytes");
}

}  // namespace
}  // namespace kuiper

// The memory limit on ONNX files: ReadOnnxModel refuses a file larger than the
// limit before reading it, and graph inputs or constants whose declared shapes
// need more than the limit (as float32, what the importer makes of them) before
// converting them, with a ResourceError naming the file, the value and the limit.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kuiper/error.hpp"
#include "kuiper/memory_limit.hpp"
#include "onnx_test_util.hpp"
#include "test_files.hpp"

namespace kuiper {
namespace {

using testing::FloatTensor;
using testing::OneNodeModel;

std::string Save(const onnx::ModelProto& model) {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const auto dir = std::filesystem::path(test::BinaryDir()) / "test_tmp" / "onnx_limits";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / (std::string(test->name()) + ".onnx")).string();
  std::ofstream out(path, std::ios::binary);
  model.SerializeToOstream(&out);
  return path;
}

std::string ResourceErrorOf(const std::string& path) {
  try {
    ReadOnnxModel(path);
  } catch (const ResourceError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ResourceError for " << path;
  return "";
}

void ExpectMentions(const std::string& message, const std::string& words) {
  EXPECT_NE(message.find(words), std::string::npos) << message;
}

// (1,3,100000,100000) float32: 120,000,000,000 bytes.
TEST(OnnxMemoryLimit, HugeGraphInputIsRefused) {
  OneNodeModel m("Relu", 13);
  m.Input("x", {1, 3, 100000, 100000}).Output("y", {1, 3, 100000, 100000});
  const std::string path = Save(m.model);
  const std::string message = ResourceErrorOf(path);
  ExpectMentions(message, path + ": the inputs and constants up to 'x' (1,3,100000,100000)");
  ExpectMentions(message, "would take 120000000000 bytes");
  ExpectMentions(message, "memory limit of 4294967296 bytes");
}

// An initializer that declares (40000,30000) without holding the data:
// 4 * 16 bytes of input and 4,800,000,000 of constant.
TEST(OnnxMemoryLimit, HugeDeclaredInitializerIsRefused) {
  OneNodeModel m("Add", 13);
  m.Input("x", {1, 4}).Constant(FloatTensor("w", {40000, 30000}, {})).Output("y", {1, 4});
  const std::string message = ResourceErrorOf(Save(m.model));
  ExpectMentions(message, "up to 'w' (40000,30000) as float32 would take 4800000016 bytes");
}

// Expand of a constant row to a declared (100000,100000,3), 32 bytes per value
// while folded: LoadOnnx adds the file to the folding's message.
TEST(OnnxMemoryLimit, HugeFoldedConstantIsRefusedNamingTheFileAndTheNode) {
  OneNodeModel m("Expand", 13);
  onnx::TensorProto shape;
  shape.set_name("shape");
  shape.set_data_type(onnx::TensorProto::INT64);
  shape.add_dims(3);
  for (int64_t d : {100000, 100000, 3}) shape.add_int64_data(d);
  m.Constant(FloatTensor("row", {3}, {1, 2, 3})).Constant(shape).Output("c", {100000, 100000, 3});
  const std::string path = Save(m.model);
  try {
    LoadOnnx(path);
    ADD_FAILURE() << "no ResourceError";
  } catch (const ResourceError& e) {
    EXPECT_EQ(std::string(e.what()),
              path +
                  ": node 'the_node' (Expand): the folded constants up to 'c' "
                  "(100000,100000,3) would take 960000000000 bytes (894.07 GiB), more than "
                  "the memory limit of 4294967296 bytes (4.00 GiB)");
  }
}

// The message of the ConversionError ParseOnnxModel throws for `model`, or "".
std::string ParseConversionErrorOf(const onnx::ModelProto& model) {
  try {
    ParseOnnxModel(model.SerializeAsString(), "negative.onnx");
  } catch (const ConversionError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ConversionError";
  return "";
}

// Counted as 0, a negative dim hid the rest of the shape from the check.
TEST(OnnxMemoryLimit, GraphInputWithANegativeDimIsAConversionError) {
  OneNodeModel m("Relu", 13);
  m.Input("x", {1, -3, 100000, 100000}).Output("y", {1, 3, 100000, 100000});
  EXPECT_EQ(ParseConversionErrorOf(m.model),
            "negative.onnx: 'x' declares the shape (1,-3,100000,100000), with a negative dim");
}

TEST(OnnxMemoryLimit, InitializerWithANegativeDimIsAConversionError) {
  OneNodeModel m("Add", 13);
  m.Input("x", {1, 4}).Constant(FloatTensor("w", {-1, 40000, 30000}, {})).Output("y", {1, 4});
  EXPECT_EQ(ParseConversionErrorOf(m.model),
            "negative.onnx: 'w' declares the shape (-1,40000,30000), with a negative dim");
}

TEST(OnnxMemoryLimit, FileExactlyAtTheLimitLoads) {
  OneNodeModel m("Add", 13);
  m.Input("x", {1, 4}).Constant(FloatTensor("w", {1, 4}, {1, 2, 3, 4})).Output("y", {1, 4});
  const std::string path = Save(m.model);
  const MemoryLimitScope limit(std::filesystem::file_size(path));
  EXPECT_NO_THROW(ReadOnnxModel(path));
}

TEST(OnnxMemoryLimit, FileOneByteOverTheLimitIsRefusedBeforeReading) {
  OneNodeModel m("Add", 13);
  m.Input("x", {1, 4}).Constant(FloatTensor("w", {1, 4}, {1, 2, 3, 4})).Output("y", {1, 4});
  const std::string path = Save(m.model);
  const MemoryLimitScope limit(std::filesystem::file_size(path) - 1);
  ExpectMentions(ResourceErrorOf(path), path + ": reading the whole file would take");
}

}  // namespace
}  // namespace kuiper

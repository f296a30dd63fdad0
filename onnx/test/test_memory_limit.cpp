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

namespace kuiper {
namespace {

using testing::FloatTensor;
using testing::OneNodeModel;

std::string Save(const onnx::ModelProto& model) {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const auto dir = std::filesystem::path(KUIPER_BINARY_DIR) / "test_tmp" / "onnx_limits";
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

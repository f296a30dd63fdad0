// Inputs as the model declares them (ArrayToInput / OutputToArray, io/npy.hpp):
// what `kuiper run` does with each .npy array. A value without a batch axis
// (an ONNX graph converted as one item) takes exactly its declared shape; a
// batched one takes any batch and the annotated other dimensions.
#include <gtest/gtest.h>

#include "kuiper/error.hpp"
#include "kuiper/npy.hpp"
#include "kuiper/runtime.hpp"

namespace kuiper {
namespace {

NpyArray Array(std::vector<int64_t> shape) {
  NpyArray array;
  array.shape = std::move(shape);
  int64_t count = 1;
  for (int64_t d : array.shape) count *= d;
  for (int64_t i = 0; i < count; ++i) array.data.push_back(static_cast<float>(i));
  return array;
}

// The operand an ONNX value of shape `declared` becomes in single-item mode, as
// the importer makes it: engine (1, declared...), a scalar (1,1).
RuntimeOperand Unbatched(std::vector<int> declared) {
  RuntimeOperand operand;
  operand.name = "a";
  operand.shapes = {1};
  operand.shapes.insert(operand.shapes.end(), declared.begin(), declared.end());
  if (operand.shapes.size() == 1) operand.shapes.push_back(1);  // a scalar: one value
  operand.unbatched_shape = std::move(declared);
  return operand;
}

TEST(DeclaredInputs, AnUnbatchedInputIsOneItemOfItsFullShape) {
  const std::vector<sftensor> batch = ArrayToInput(Array({3, 4}), Unbatched({3, 4}), "a");
  ASSERT_EQ(batch.size(), 1u) << "a (3,4) array is one item, not 3 rows (see docs/onnx.md §2)";
  EXPECT_EQ(batch[0]->raw_shapes(), (std::vector<uint32_t>{3, 4}));
  EXPECT_EQ(batch[0]->at(0, 2, 1), 9.f);  // row 2, column 1 of 0..11 row-major
}

TEST(DeclaredInputs, AnUnbatchedInputOfAnotherShapeNamesBothShapes) {
  try {
    ArrayToInput(Array({4, 3}), Unbatched({3, 4}), "a (a.npy)");
    FAIL() << "expected ShapeError";
  } catch (const ShapeError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("a (a.npy)"), std::string::npos) << what;
    EXPECT_NE(what.find("(3,4)"), std::string::npos) << what;
    EXPECT_NE(what.find("(4,3)"), std::string::npos) << what;
  }
}

TEST(DeclaredInputs, AOneDimensionalInputIsNotABatch) {
  const std::vector<sftensor> batch = ArrayToInput(Array({5}), Unbatched({5}), "x");
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0]->raw_shapes(), (std::vector<uint32_t>{5}));
}

TEST(DeclaredInputs, ABatchedInputTakesAnyBatch) {
  RuntimeOperand operand;
  operand.shapes = {1, 2, 3};  // as PNNX annotates it: batch 1 of (2,3)
  const std::vector<sftensor> batch = ArrayToInput(Array({4, 2, 3}), operand, "in");
  ASSERT_EQ(batch.size(), 4u);
  EXPECT_EQ(batch[3]->at(0, 1, 2), 23.f);  // the last value of 0..23
}

TEST(DeclaredInputs, ABatchedInputChecksTheOtherDimensions) {
  RuntimeOperand operand;
  operand.shapes = {1, 2, 3};
  EXPECT_THROW(ArrayToInput(Array({1, 3, 2}), operand, "in"), ShapeError);
  EXPECT_THROW(ArrayToInput(Array({2, 3}), operand, "in"), ShapeError) << "rank 2 for rank 3";
}

TEST(DeclaredInputs, AnUnknownDimensionMatchesAnySize) {
  RuntimeOperand operand;
  operand.shapes = {-1, 3, -1};
  EXPECT_EQ(ArrayToInput(Array({2, 3, 7}), operand, "in").size(), 2u);
}

TEST(DeclaredOutputs, AnUnbatchedOutputLosesTheEnginesItemAxis) {
  sftensor item = TensorCreate({3, 3});
  item->Fill(std::vector<float>(9, 1.f), /*row_major=*/true);
  const NpyArray array = OutputToArray({item}, Unbatched({3, 3}));
  EXPECT_EQ(array.shape, (std::vector<int64_t>{3, 3})) << "not (1,3,3)";
}

TEST(DeclaredOutputs, AScalarOutputIsAZeroDimensionalArray) {
  sftensor item = TensorCreate({1});
  item->Fill(std::vector<float>{7.f}, /*row_major=*/true);
  const NpyArray array = OutputToArray({item}, Unbatched({}));
  EXPECT_TRUE(array.shape.empty());
  EXPECT_EQ(array.data, (std::vector<float>{7.f}));
}

TEST(DeclaredOutputs, ABatchedOutputKeepsTheBatchAxis) {
  RuntimeOperand operand;
  operand.shapes = {1, 3};
  const NpyArray array = OutputToArray({TensorCreate({3}), TensorCreate({3})}, operand);
  EXPECT_EQ(array.shape, (std::vector<int64_t>{2, 3}));
}

}  // namespace
}  // namespace kuiper

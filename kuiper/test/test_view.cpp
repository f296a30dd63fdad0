// Tensor.view / Tensor.reshape: row-major reshapes with the batch as dimension 0.
#include <gtest/gtest.h>

#include <numeric>

#include "kuiper/layer.hpp"

namespace kuiper {
namespace {

std::unique_ptr<Layer> CreateView(const std::vector<int>& shape,
                                  const std::string& type = "Tensor.view") {
  RuntimeOperator op;
  op.type = type;
  op.name = "view";
  op.params["shape"] = shape;
  return LayerRegisterer::CreateLayer(op);
}

sftensor IotaTensor(const std::vector<uint32_t>& shape) {
  sftensor t = TensorCreate(shape);
  std::vector<float> values(t->size());
  std::iota(values.begin(), values.end(), 0.f);
  t->Fill(values, /*row_major=*/true);
  return t;
}

TEST(View, FlattensAnItemInRowMajorOrder) {
  auto layer = CreateView({1, -1});
  const sftensor input = IotaTensor({2, 3, 4});
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(layer->Forward({input}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->raw_shapes(), std::vector<uint32_t>({24}));
  EXPECT_EQ(outputs[0]->values(true), input->values(true));
}

TEST(View, ResolvesMinusOneInsideTheItem) {
  auto layer = CreateView({1, 4, -1});
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(layer->Forward({IotaTensor({2, 3, 4})}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->raw_shapes(), std::vector<uint32_t>({4, 6}));
  // Row-major: row 1 of (4, 6) holds elements 6..11.
  EXPECT_EQ(outputs[0]->at(0, 1, 0), 6.f);
  EXPECT_EQ(outputs[0]->at(0, 3, 5), 23.f);
}

TEST(View, SplitsAVectorIntoThreeDimensions) {
  auto layer = CreateView({1, 2, 3, 2}, "Tensor.reshape");
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(layer->Forward({IotaTensor({12})}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->raw_shapes(), std::vector<uint32_t>({2, 3, 2}));
  EXPECT_EQ(outputs[0]->at(1, 0, 1), 7.f);  // (1*3 + 0)*2 + 1
}

TEST(View, MinusOneBatchTakesEveryItem) {
  auto layer = CreateView({-1, 6});
  std::vector<sftensor> outputs(3);
  ASSERT_EQ(layer->Forward({IotaTensor({2, 3}), IotaTensor({3, 2}), IotaTensor({6})}, outputs),
            InferStatus::kInferSuccess);
  for (const sftensor& out : outputs) {
    EXPECT_EQ(out->raw_shapes(), std::vector<uint32_t>({6}));
    EXPECT_EQ(out->values(), std::vector<float>({0, 1, 2, 3, 4, 5}));
  }
}

TEST(View, LeavesInputUnchanged) {
  auto layer = CreateView({1, -1});
  const sftensor input = IotaTensor({2, 2, 2});
  std::vector<sftensor> outputs(1);
  ASSERT_EQ(layer->Forward({input}, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(input->raw_shapes(), std::vector<uint32_t>({2, 2, 2}));
  EXPECT_NE(outputs[0], input);
}

TEST(View, ElementCountMismatchIsAShapeError) {
  auto layer = CreateView({1, 5, -1});
  std::vector<sftensor> outputs(1);
  EXPECT_EQ(layer->Forward({IotaTensor({2, 3, 4})}, outputs), InferStatus::kInferFailedShapeError);
  auto fixed = CreateView({1, 5, 5});
  EXPECT_EQ(fixed->Forward({IotaTensor({2, 3, 4})}, outputs), InferStatus::kInferFailedShapeError);
}

TEST(View, BatchDimensionMustMatchTheBatch) {
  auto layer = CreateView({1, -1});
  std::vector<sftensor> outputs(2);
  EXPECT_EQ(layer->Forward({IotaTensor({4}), IotaTensor({4})}, outputs),
            InferStatus::kInferFailedShapeError);
}

TEST(View, InputChecksAreReported) {
  auto layer = CreateView({1, -1});
  std::vector<sftensor> outputs(1), none;
  EXPECT_EQ(layer->Forward({}, outputs), InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(layer->Forward({nullptr}, outputs), InferStatus::kInferFailedInputEmpty);
  EXPECT_EQ(layer->Forward({IotaTensor({4})}, none), InferStatus::kInferFailedOutputEmpty);
  EXPECT_EQ(layer->Forward({IotaTensor({4}), IotaTensor({4})}, outputs),
            InferStatus::kInferFailedInputOutSizeMatchError);
}

TEST(View, ShapesItCannotHonourAreRejectedAtCreation) {
  EXPECT_THROW(CreateView({-1}), LayerError);                         // no item dimensions
  EXPECT_THROW(CreateView({1, 2, 1, 1, 1, 1, 1, 1, 5}), LayerError);  // 8-D items
  EXPECT_THROW(CreateView({1, -1, -1}), LayerError);                  // two unknowns
  EXPECT_THROW(CreateView({1, 0, 4}), LayerError);                    // zero size
  EXPECT_THROW(CreateView({1, -2}), LayerError);                      // negative size
  RuntimeOperator op;
  op.type = "Tensor.view";
  op.name = "view";
  EXPECT_THROW(LayerRegisterer::CreateLayer(op), LayerError);  // missing shape
}

}  // namespace
}  // namespace kuiper

// nn.Linear against PyTorch (kuiper/test/data/layers/make_conv_pool.py).
// Forward calls lab course1's Axby.
#include <gtest/gtest.h>

#include "../conv_pool_test_util.hpp"
#include "kuiper/error.hpp"

namespace kuiper {
namespace {

using test::ConvPoolData;
using test::Expected;
using test::FloatAttribute;
using test::MakeOperator;
using test::MaxAbsDiff;
using test::NpyAttribute;
using test::RunOnCase;

RuntimeOperator Linear(const std::string& case_name, int in, int out, bool bias) {
  std::map<std::string, RuntimeAttribute> attrs{
      {"weight", NpyAttribute(LoadNpy(ConvPoolData(case_name, "weight")))}};
  if (bias) attrs["bias"] = NpyAttribute(LoadNpy(ConvPoolData(case_name, "bias")));
  return MakeOperator("nn.Linear", {{"in_features", in}, {"out_features", out}, {"bias", bias}},
                      attrs);
}

RuntimeOperator SomeLinear() { return Linear("linear_1d", 8, 5, true); }

TEST(Linear, VectorItemsMatchPyTorch) {
  InferStatus status;
  const auto outputs = RunOnCase(SomeLinear(), "linear_1d", &status);
  ASSERT_EQ(status, InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->raw_shapes(), std::vector<uint32_t>({5}));
  EXPECT_LE(MaxAbsDiff(outputs, Expected("linear_1d")), 1e-4f);
}

TEST(Linear, MatrixItemsWithoutBiasMatchPyTorch) {
  InferStatus status;
  const auto outputs =
      RunOnCase(Linear("linear_2d_nobias", 8, 6, false), "linear_2d_nobias", &status);
  ASSERT_EQ(status, InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->raw_shapes(), std::vector<uint32_t>({4, 6}));
  EXPECT_LE(MaxAbsDiff(outputs, Expected("linear_2d_nobias")), 1e-4f);
}

TEST(Linear, HandChecked) {
  RuntimeOperator op = MakeOperator(
      "nn.Linear", {{"in_features", 2}, {"out_features", 2}, {"bias", true}},
      {{"weight", FloatAttribute({2, 2}, {1, 2, 3, 4})}, {"bias", FloatAttribute({2}, {10, 20})}});
  auto layer = LayerRegisterer::CreateLayer(op);
  std::vector<sftensor> inputs{TensorCreate({2})}, outputs(1);
  inputs[0]->Fill({1, 1});
  ASSERT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->values(), std::vector<float>({13, 27}));
}

TEST(Linear, WeightOfWrongShapeIsRejected) {
  RuntimeOperator op = SomeLinear();
  op.params["in_features"] = 7;
  EXPECT_THROW(LayerRegisterer::CreateLayer(op), LayerError);
}

TEST(Linear, MissingWeightIsRejected) {
  RuntimeOperator op = SomeLinear();
  op.attribute.erase("weight");
  EXPECT_THROW(LayerRegisterer::CreateLayer(op), LayerError);
}

TEST(Linear, MissingBiasIsRejected) {
  RuntimeOperator op = SomeLinear();
  op.attribute.erase("bias");
  EXPECT_THROW(LayerRegisterer::CreateLayer(op), LayerError);
}

TEST(Linear, WrongFeatureCountIsShapeError) {
  auto layer = LayerRegisterer::CreateLayer(SomeLinear());
  std::vector<sftensor> inputs{TensorCreate({7})}, outputs(1);
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedShapeError);
}

TEST(Linear, EmptyInputBatch) {
  auto layer = LayerRegisterer::CreateLayer(SomeLinear());
  std::vector<sftensor> inputs, outputs(1);
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedInputEmpty);
}

TEST(Linear, NullInputTensor) {
  auto layer = LayerRegisterer::CreateLayer(SomeLinear());
  std::vector<sftensor> inputs{nullptr}, outputs(1);
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedInputEmpty);
}

TEST(Linear, NoOutputSlots) {
  auto layer = LayerRegisterer::CreateLayer(SomeLinear());
  std::vector<sftensor> inputs{TensorCreate({8})}, outputs;
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedOutputEmpty);
}

TEST(Linear, BatchSizesDiffer) {
  auto layer = LayerRegisterer::CreateLayer(SomeLinear());
  std::vector<sftensor> inputs{TensorCreate({8})}, outputs(2);
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedInputOutSizeMatchError);
}

}  // namespace
}  // namespace kuiper

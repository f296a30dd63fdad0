// nn.BatchNorm2d (inference form) against PyTorch
// (kuiper/test/data/layers/make_conv_pool.py) and its creation and input checks.
#include <gtest/gtest.h>

#include "conv_pool_test_util.hpp"
#include "kuiper/error.hpp"

namespace kuiper {
namespace {

using test::Batch;
using test::ConvPoolData;
using test::Expected;
using test::MakeOperator;
using test::MaxAbsDiff;
using test::NpyAttribute;
using test::RunOnCase;

RuntimeOperator BatchNorm(const std::string& case_name, int features, float eps, bool affine) {
  std::map<std::string, RuntimeAttribute> attrs;
  std::vector<std::string> keys = {"running_mean", "running_var"};
  if (affine) keys.insert(keys.end(), {"weight", "bias"});
  for (const std::string& key : keys) {
    attrs[key] = NpyAttribute(LoadNpy(ConvPoolData(case_name, key)));
  }
  return MakeOperator("nn.BatchNorm2d",
                      {{"num_features", features}, {"eps", eps}, {"affine", affine}}, attrs);
}

RuntimeOperator SomeBatchNorm() { return BatchNorm("batchnorm_affine", 4, 1e-3f, true); }

TEST(BatchNorm, AffineMatchesPyTorch) {
  InferStatus status;
  const auto outputs = RunOnCase(SomeBatchNorm(), "batchnorm_affine", &status);
  ASSERT_EQ(status, InferStatus::kInferSuccess);
  EXPECT_LE(MaxAbsDiff(outputs, Expected("batchnorm_affine")), 1e-4f);
}

TEST(BatchNorm, WithoutAffineMatchesPyTorch) {
  InferStatus status;
  const auto outputs =
      RunOnCase(BatchNorm("batchnorm_plain", 3, 1e-5f, false), "batchnorm_plain", &status);
  ASSERT_EQ(status, InferStatus::kInferSuccess);
  EXPECT_LE(MaxAbsDiff(outputs, Expected("batchnorm_plain")), 1e-4f);
}

TEST(BatchNorm, MissingRunningVarIsRejected) {
  RuntimeOperator op = SomeBatchNorm();
  op.attribute.erase("running_var");
  EXPECT_THROW(LayerRegisterer::CreateLayer(op), LayerError);
}

TEST(BatchNorm, StatisticsOfAnotherSizeAreRejected) {
  RuntimeOperator op = SomeBatchNorm();
  op.params["num_features"] = 5;
  EXPECT_THROW(LayerRegisterer::CreateLayer(op), LayerError);
}

TEST(BatchNorm, WrongChannelCountIsChannelError) {
  auto layer = LayerRegisterer::CreateLayer(SomeBatchNorm());
  std::vector<sftensor> inputs = Batch(1, 3, 2, 2), outputs(1);
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedChannelParameterError);
}

TEST(BatchNorm, TwoDimensionalInputIsShapeError) {
  auto layer = LayerRegisterer::CreateLayer(SomeBatchNorm());
  std::vector<sftensor> inputs{TensorCreate({4, 4})}, outputs(1);
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedShapeError);
}

TEST(BatchNorm, EmptyInputBatch) {
  auto layer = LayerRegisterer::CreateLayer(SomeBatchNorm());
  std::vector<sftensor> inputs, outputs(1);
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedInputEmpty);
}

TEST(BatchNorm, NullInputTensor) {
  auto layer = LayerRegisterer::CreateLayer(SomeBatchNorm());
  std::vector<sftensor> inputs{nullptr}, outputs(1);
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedInputEmpty);
}

TEST(BatchNorm, NoOutputSlots) {
  auto layer = LayerRegisterer::CreateLayer(SomeBatchNorm());
  std::vector<sftensor> inputs = Batch(1, 4, 2, 2), outputs;
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedOutputEmpty);
}

TEST(BatchNorm, BatchSizesDiffer) {
  auto layer = LayerRegisterer::CreateLayer(SomeBatchNorm());
  std::vector<sftensor> inputs = Batch(2, 4, 2, 2), outputs(1);
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedInputOutSizeMatchError);
}

TEST(BatchNorm, InputIsNotModified) {
  auto layer = LayerRegisterer::CreateLayer(SomeBatchNorm());
  std::vector<sftensor> inputs = Batch(1, 4, 3, 3), outputs(1);
  const sftensor before = TensorClone(inputs[0]);
  ASSERT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferSuccess);
  EXPECT_TRUE(TensorIsSame(inputs[0], before, 0.f));
}

}  // namespace
}  // namespace kuiper

// nn.AvgPool2d and nn.AdaptiveAvgPool2d / F.adaptive_avg_pool2d: against
// PyTorch (kuiper/test/data/layers/make_conv_pool.py) and hand-checked cases.
#include <gtest/gtest.h>

#include "conv_pool_test_util.hpp"
#include "kuiper/error.hpp"
#include "kuiper/layers/pooling.hpp"

namespace kuiper {
namespace {

using test::Batch;
using test::Expected;
using test::MakeOperator;
using test::MaxAbsDiff;
using test::RunOnCase;

RuntimeOperator AvgPool(std::vector<int> kernel, std::vector<int> stride, std::vector<int> padding,
                        bool ceil_mode, bool count_include_pad) {
  return MakeOperator("nn.AvgPool2d", {{"kernel_size", kernel},
                                       {"stride", stride},
                                       {"padding", padding},
                                       {"ceil_mode", ceil_mode},
                                       {"count_include_pad", count_include_pad},
                                       {"divisor_override", std::monostate{}}});
}

void ExpectMatchesPyTorch(const RuntimeOperator& op, const std::string& case_name) {
  InferStatus status;
  const std::vector<sftensor> outputs = RunOnCase(op, case_name, &status);
  ASSERT_EQ(status, InferStatus::kInferSuccess);
  EXPECT_LE(MaxAbsDiff(outputs, Expected(case_name)), 1e-4f);
}

TEST(PoolOutputSize, CeilModeDropsAWindowStartingInTheRightPadding) {
  EXPECT_EQ(PoolOutputSize(5, 2, 2, 1, 1, false), 3u);
  EXPECT_EQ(PoolOutputSize(5, 2, 2, 1, 1, true), 3u);  // a 4th window would start at 6 >= 5 + 1
  EXPECT_EQ(PoolOutputSize(7, 3, 2, 1, 1, true), 4u);
  EXPECT_EQ(PoolOutputSize(8, 3, 2, 1, 1, false), 4u);
  EXPECT_EQ(PoolOutputSize(8, 3, 2, 1, 1, true), 5u);
  EXPECT_EQ(PoolOutputSize(2, 3, 1, 0, 1, false), 0u);
}

TEST(AvgPool, CeilModeExcludingPaddingMatchesPyTorch) {
  ExpectMatchesPyTorch(AvgPool({3, 3}, {2, 2}, {1, 1}, true, false), "avgpool_ceil_exclude_pad");
}

TEST(AvgPool, CeilModeIncludingPaddingMatchesPyTorch) {
  ExpectMatchesPyTorch(AvgPool({3, 3}, {2, 2}, {1, 1}, true, true), "avgpool_ceil_include_pad");
}

TEST(AvgPool, RectangularWindowsMatchPyTorch) {
  ExpectMatchesPyTorch(AvgPool({3, 2}, {2, 3}, {1, 0}, false, true), "avgpool_rect");
}

TEST(AvgPool, HandCheckedTwoByTwo) {
  std::unique_ptr<Layer> layer =
      LayerRegisterer::CreateLayer(AvgPool({2, 2}, {2, 2}, {0, 0}, false, true));
  std::vector<sftensor> inputs{TensorCreate(1, 2, 4)}, outputs(1);
  inputs[0]->Fill({1, 2, 3, 4, 5, 6, 7, 8});
  ASSERT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->values(), std::vector<float>({3.5f, 5.5f}));
}

TEST(AvgPool, DivisorOverrideIsRejected) {
  RuntimeOperator op = AvgPool({2, 2}, {2, 2}, {0, 0}, false, true);
  op.params["divisor_override"] = 3;
  EXPECT_THROW(LayerRegisterer::CreateLayer(op), LayerError);
}

TEST(AvgPool, PaddingOverHalfTheKernelIsRejected) {
  EXPECT_THROW(LayerRegisterer::CreateLayer(AvgPool({2, 2}, {2, 2}, {2, 2}, false, true)),
               LayerError);
}

TEST(AvgPool, MissingKernelSizeIsRejected) {
  RuntimeOperator op = AvgPool({2, 2}, {2, 2}, {0, 0}, false, true);
  op.params.erase("kernel_size");
  EXPECT_THROW(LayerRegisterer::CreateLayer(op), LayerError);
}

TEST(AvgPool, InputSmallerThanKernelIsShapeError) {
  std::unique_ptr<Layer> layer =
      LayerRegisterer::CreateLayer(AvgPool({3, 3}, {1, 1}, {0, 0}, false, true));
  std::vector<sftensor> inputs = Batch(1, 2, 2, 5), outputs(1);
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedShapeError);
}

TEST(AvgPool, TwoDimensionalInputIsShapeError) {
  std::unique_ptr<Layer> layer =
      LayerRegisterer::CreateLayer(AvgPool({1, 1}, {1, 1}, {0, 0}, false, true));
  std::vector<sftensor> inputs{TensorCreate({4, 4})}, outputs(1);
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedShapeError);
}

RuntimeOperator Adaptive(std::vector<int> size, const std::string& type = "nn.AdaptiveAvgPool2d") {
  return MakeOperator(type, {{"output_size", size}});
}

TEST(AdaptiveAvgPool, UnevenWindowsMatchPyTorch) {
  ExpectMatchesPyTorch(Adaptive({3, 4}), "adaptive_3x4");
}

TEST(AdaptiveAvgPool, GlobalAverageMatchesPyTorch) {
  ExpectMatchesPyTorch(Adaptive({1, 1}), "adaptive_1x1");
}

TEST(AdaptiveAvgPool, OutputLargerThanInputMatchesPyTorch) {
  ExpectMatchesPyTorch(Adaptive({8, 3}), "adaptive_grow");
}

TEST(AdaptiveAvgPool, FunctionalAliasIsRegistered) {
  ExpectMatchesPyTorch(Adaptive({3, 4}, "F.adaptive_avg_pool2d"), "adaptive_3x4");
}

TEST(AdaptiveAvgPool, SingleIntOutputSizeMeansSquare) {
  RuntimeOperator op = MakeOperator("nn.AdaptiveAvgPool2d", {{"output_size", 1}});
  std::unique_ptr<Layer> layer = LayerRegisterer::CreateLayer(op);
  std::vector<sftensor> inputs{TensorCreate(1, 2, 2)}, outputs(1);
  inputs[0]->Fill({1, 2, 3, 6});
  ASSERT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->raw_shapes(), std::vector<uint32_t>({1, 1, 1}));
  EXPECT_EQ(outputs[0]->values(), std::vector<float>({3}));
}

TEST(AdaptiveAvgPool, ZeroOutputSizeIsRejected) {
  EXPECT_THROW(LayerRegisterer::CreateLayer(Adaptive({0, 2})), LayerError);
}

TEST(AdaptiveAvgPool, TwoDimensionalInputIsShapeError) {
  std::unique_ptr<Layer> layer = LayerRegisterer::CreateLayer(Adaptive({1, 1}));
  std::vector<sftensor> inputs{TensorCreate({4, 4})}, outputs(1);
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedShapeError);
}

// The checks every one-operand layer makes, on both pooling layers.
class PoolingChecks : public testing::TestWithParam<std::string> {};

RuntimeOperator Some(const std::string& type) {
  return type == "nn.AvgPool2d" ? AvgPool({2, 2}, {2, 2}, {0, 0}, false, true) : Adaptive({2, 2});
}

TEST_P(PoolingChecks, EmptyInputBatch) {
  std::unique_ptr<Layer> layer = LayerRegisterer::CreateLayer(Some(GetParam()));
  std::vector<sftensor> inputs, outputs(1);
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedInputEmpty);
}

TEST_P(PoolingChecks, NullOrEmptyInputTensor) {
  std::unique_ptr<Layer> layer = LayerRegisterer::CreateLayer(Some(GetParam()));
  std::vector<sftensor> inputs{nullptr}, outputs(1);
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedInputEmpty);
  inputs = {std::make_shared<ftensor>()};
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedInputEmpty);
}

TEST_P(PoolingChecks, NoOutputSlots) {
  std::unique_ptr<Layer> layer = LayerRegisterer::CreateLayer(Some(GetParam()));
  std::vector<sftensor> inputs = Batch(1, 2, 4, 4), outputs;
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedOutputEmpty);
}

TEST_P(PoolingChecks, BatchSizesDiffer) {
  std::unique_ptr<Layer> layer = LayerRegisterer::CreateLayer(Some(GetParam()));
  std::vector<sftensor> inputs = Batch(2, 2, 4, 4), outputs(3);
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedInputOutSizeMatchError);
}

INSTANTIATE_TEST_SUITE_P(Layers, PoolingChecks,
                         testing::Values("nn.AvgPool2d", "nn.AdaptiveAvgPool2d"),
                         [](const auto& info) { return info.param.substr(3); });

}  // namespace
}  // namespace kuiper

// nn.Conv2d through the layer registry: creation checks, input checks, a
// PyTorch reference, and the tiny_groupconv fixture through RuntimeGraph.
// Forward calls lab course6's ComputeGroups.
#include <gtest/gtest.h>

#include "../conv_pool_test_util.hpp"
#include "kuiper/error.hpp"
#include "kuiper/graph.hpp"
#include "kuiper/layers/convolution.hpp"

namespace kuiper {
namespace {

using test::Batch;
using test::ConvPoolData;
using test::Expected;
using test::FloatAttribute;
using test::MakeOperator;
using test::MaxAbsDiff;
using test::NpyAttribute;
using test::RunOnCase;

// Conv2d(4, 6, (3,5), stride=(2,1), padding=(1,2), dilation=(1,2), groups=2), as in the script.
RuntimeOperator GroupedConv() {
  return MakeOperator("nn.Conv2d",
                      {{"in_channels", 4},
                       {"out_channels", 6},
                       {"kernel_size", std::vector<int>{3, 5}},
                       {"stride", std::vector<int>{2, 1}},
                       {"padding", std::vector<int>{1, 2}},
                       {"dilation", std::vector<int>{1, 2}},
                       {"groups", 2},
                       {"bias", true},
                       {"padding_mode", std::string("zeros")}},
                      {{"weight", NpyAttribute(LoadNpy(ConvPoolData("conv_grouped", "weight")))},
                       {"bias", NpyAttribute(LoadNpy(ConvPoolData("conv_grouped", "bias")))}});
}

TEST(Conv2d, GroupedStridedDilatedMatchesPyTorch) {
  InferStatus status;
  const auto outputs = RunOnCase(GroupedConv(), "conv_grouped", &status);
  ASSERT_EQ(status, InferStatus::kInferSuccess);
  EXPECT_LE(MaxAbsDiff(outputs, Expected("conv_grouped")), 1e-4f);
}

TEST(Conv2d, TinyGroupConvFixtureMatchesPyTorchThroughRuntimeGraph) {
  const std::string base = std::string(KUIPER_SOURCE_DIR) + "/models/fixtures/tiny_groupconv";
  RuntimeGraph graph(base + ".pnnx.param", base + ".pnnx.bin");
  graph.Build();
  const auto outputs = graph.Forward(NpyToBatch(LoadNpy(base + ".input.npy")));
  EXPECT_LE(MaxAbsDiff(outputs, NpyToBatch(LoadNpy(base + ".output.npy"))), 1e-4f);
}

TEST(Conv2d, BatchOfThreeMatchesItemByItem) {
  auto layer = LayerRegisterer::CreateLayer(GroupedConv());
  std::vector<sftensor> inputs = Batch(3, 4, 9, 7), outputs(3);
  ASSERT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferSuccess);
  for (size_t n = 0; n < 3; ++n) {
    std::vector<sftensor> one{inputs[n]}, out(1);
    ASSERT_EQ(layer->Forward(one, out), InferStatus::kInferSuccess);
    EXPECT_TRUE(TensorIsSame(out[0], outputs[n], 0.f)) << "item " << n;
  }
}

// A 3x3 stride-1 layer with 16 and 24 channels per group takes the core's
// Winograd route (GroupKernels, the default); made after
// SetWinogradAllowed(false), im2col + GEMM. Both through ComputeGroups, batch 3
// (items in parallel), odd sizes, bias and a fused ReLU: the same outputs up
// to float32 rounding (2e-6 of the largest value; see kuiper/test/test_winograd.cpp).
TEST(Conv2d, WinogradRouteGivesTheIm2ColRoutesOutput) {
  ConvParams p;
  p.in_channels = 32, p.out_channels = 48, p.groups = 2;
  p.kernel_h = p.kernel_w = 3;
  p.padding_h = p.padding_w = 1;
  std::vector<float> weight(48 * 16 * 9), bias(48);
  for (size_t i = 0; i < weight.size(); ++i) weight[i] = float((i * 37) % 23) / 23 - 0.5f;
  for (size_t o = 0; o < bias.size(); ++o) bias[o] = 0.1f * (float(o) - 24);
  const bool allowed = WinogradAllowed();
  SetWinogradAllowed(true);
  ConvolutionLayer winograd("winograd", p, weight, bias);
  SetWinogradAllowed(false);
  ConvolutionLayer im2col("im2col", p, weight, bias);
  SetWinogradAllowed(allowed);
  ASSERT_TRUE(winograd.FuseActivation(Activation::kRelu));
  ASSERT_TRUE(im2col.FuseActivation(Activation::kRelu));
  std::vector<sftensor> inputs = Batch(3, 32, 13, 10), got(3), want(3);
  ASSERT_EQ(winograd.Forward(inputs, got), InferStatus::kInferSuccess);
  ASSERT_EQ(im2col.Forward(inputs, want), InferStatus::kInferSuccess);
  float scale = 1;
  for (const sftensor& t : want) scale = std::max(scale, arma::abs(t->data()).max());
  EXPECT_LE(MaxAbsDiff(got, want), 2e-6f * scale);
}

// A stride-2 layer declared with few output positions keeps its kernels for
// the core's direct route (GroupKernels); declared without a size, for
// im2col + GEMM. Both through ComputeGroups, 2 groups of 32 output channels,
// batch 3 (items in parallel), bias and a fused SiLU: the same outputs up to
// float32 rounding (see kuiper/test/test_direct_conv.cpp).
TEST(Conv2d, DirectRouteGivesTheIm2ColRoutesOutput) {
  ConvParams p;
  p.in_channels = 40, p.out_channels = 64, p.groups = 2;
  p.kernel_h = p.kernel_w = 3;
  p.stride_h = p.stride_w = 2;
  p.padding_h = p.padding_w = 1;
  std::vector<float> weight(64 * 20 * 9), bias(64);
  for (size_t i = 0; i < weight.size(); ++i) weight[i] = float((i * 37) % 23) / 23 - 0.5f;
  for (size_t o = 0; o < bias.size(); ++o) bias[o] = 0.1f * (float(o) - 32);
  const bool allowed = DirectAllowed();
  SetDirectAllowed(true);
  ConvolutionLayer direct("direct", p, weight, bias, 7 * 5);
  ConvolutionLayer im2col("im2col", p, weight, bias);
  SetDirectAllowed(allowed);
  ASSERT_TRUE(direct.FuseActivation(Activation::kSilu));
  ASSERT_TRUE(im2col.FuseActivation(Activation::kSilu));
  std::vector<sftensor> inputs = Batch(3, 40, 13, 10), got(3), want(3);
  ASSERT_EQ(direct.Forward(inputs, got), InferStatus::kInferSuccess);
  ASSERT_EQ(im2col.Forward(inputs, want), InferStatus::kInferSuccess);
  ASSERT_EQ(got[0]->raw_shapes(), std::vector<uint32_t>({64, 7, 5}));
  float scale = 1;
  for (const sftensor& t : want) scale = std::max(scale, arma::abs(t->data()).max());
  EXPECT_LE(MaxAbsDiff(got, want), 2e-6f * scale);
}

TEST(Conv2d, SingleIntParametersMeanSquare) {
  RuntimeOperator op = GroupedConv();
  op.params["kernel_size"] = 3;
  op.params["dilation"] = 1;
  op.params["stride"] = 1;
  op.params["padding"] = 1;
  op.attribute["weight"] = FloatAttribute({6, 2, 3, 3}, std::vector<float>(6 * 2 * 9, 1.f));
  auto layer = LayerRegisterer::CreateLayer(op);
  std::vector<sftensor> inputs = Batch(1, 4, 5, 5), outputs(1);
  ASSERT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferSuccess);
  EXPECT_EQ(outputs[0]->raw_shapes(), std::vector<uint32_t>({6, 5, 5}));
}

TEST(Conv2d, OtherPaddingModeIsRejected) {
  RuntimeOperator op = GroupedConv();
  op.params["padding_mode"] = std::string("reflect");
  EXPECT_THROW(LayerRegisterer::CreateLayer(op), LayerError);
}

TEST(Conv2d, MissingWeightIsRejectedNamingTheOperator) {
  RuntimeOperator op = GroupedConv();
  op.attribute.erase("weight");
  try {
    LayerRegisterer::CreateLayer(op);
    FAIL() << "no LayerError";
  } catch (const LayerError& error) {
    EXPECT_NE(std::string(error.what()).find("op_under_test"), std::string::npos) << error.what();
  }
}

TEST(Conv2d, WeightNotMatchingGroupsIsRejectedNamingTheOperator) {
  RuntimeOperator op = GroupedConv();
  op.params["groups"] = 1;  // the weight is (6, 2, 3, 5): in_channels / groups must be 2
  try {
    LayerRegisterer::CreateLayer(op);
    FAIL() << "no LayerError";
  } catch (const LayerError& error) {
    EXPECT_NE(std::string(error.what()).find("op_under_test"), std::string::npos) << error.what();
  }
}

TEST(Conv2d, WeightNotMatchingInChannelsIsRejected) {
  RuntimeOperator op = GroupedConv();
  op.params["in_channels"] = 6;
  EXPECT_THROW(LayerRegisterer::CreateLayer(op), LayerError);
}

TEST(Conv2d, GroupsNotDividingChannelsIsRejected) {
  RuntimeOperator op = GroupedConv();
  op.params["groups"] = 4;  // does not divide out_channels = 6
  EXPECT_THROW(LayerRegisterer::CreateLayer(op), LayerError);
}

TEST(Conv2d, MissingBiasIsRejected) {
  RuntimeOperator op = GroupedConv();
  op.attribute.erase("bias");
  EXPECT_THROW(LayerRegisterer::CreateLayer(op), LayerError);
}

TEST(Conv2d, BiasOfWrongSizeIsRejected) {
  RuntimeOperator op = GroupedConv();
  op.attribute["bias"] = FloatAttribute({5}, std::vector<float>(5));
  EXPECT_THROW(LayerRegisterer::CreateLayer(op), LayerError);
}

TEST(Conv2d, ZeroStrideIsRejected) {
  RuntimeOperator op = GroupedConv();
  op.params["stride"] = std::vector<int>{0, 1};
  EXPECT_THROW(LayerRegisterer::CreateLayer(op), LayerError);
}

TEST(Conv2d, EmptyInputBatch) {
  auto layer = LayerRegisterer::CreateLayer(GroupedConv());
  std::vector<sftensor> inputs, outputs(1);
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedInputEmpty);
}

TEST(Conv2d, NullInputTensor) {
  auto layer = LayerRegisterer::CreateLayer(GroupedConv());
  std::vector<sftensor> inputs{nullptr}, outputs(1);
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedInputEmpty);
}

TEST(Conv2d, NoOutputSlots) {
  auto layer = LayerRegisterer::CreateLayer(GroupedConv());
  std::vector<sftensor> inputs = Batch(1, 4, 9, 9), outputs;
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedOutputEmpty);
}

TEST(Conv2d, BatchSizesDiffer) {
  auto layer = LayerRegisterer::CreateLayer(GroupedConv());
  std::vector<sftensor> inputs = Batch(2, 4, 9, 9), outputs(1);
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedInputOutSizeMatchError);
}

TEST(Conv2d, WrongChannelCountIsChannelError) {
  auto layer = LayerRegisterer::CreateLayer(GroupedConv());
  std::vector<sftensor> inputs = Batch(1, 3, 9, 9), outputs(1);
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedChannelParameterError);
}

TEST(Conv2d, InputSmallerThanDilatedKernelIsShapeError) {
  auto layer = LayerRegisterer::CreateLayer(GroupedConv());  // width span 9, padding 2
  std::vector<sftensor> inputs = Batch(1, 4, 9, 4), outputs(1);
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedShapeError);
}

TEST(Conv2d, TwoDimensionalInputIsShapeError) {
  auto layer = LayerRegisterer::CreateLayer(GroupedConv());
  std::vector<sftensor> inputs{TensorCreate({9, 9})}, outputs(1);
  EXPECT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferFailedShapeError);
}

TEST(Conv2d, InputIsNotModified) {
  auto layer = LayerRegisterer::CreateLayer(GroupedConv());
  std::vector<sftensor> inputs = Batch(2, 4, 9, 9), outputs(2);
  const sftensor before = TensorClone(inputs[1]);
  ASSERT_EQ(layer->Forward(inputs, outputs), InferStatus::kInferSuccess);
  EXPECT_TRUE(TensorIsSame(inputs[1], before, 0.f));
}

}  // namespace
}  // namespace kuiper

// nn.Conv2d through the layer registry: creation checks, input checks, a
// PyTorch reference, and the tiny_groupconv fixture through RuntimeGraph.
// Forward calls lab course6's ComputeGroups.
#include <gtest/gtest.h>

#include <set>

#include "../conv_pool_test_util.hpp"
#include "../op_test.hpp"
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
using test::OpTestExtra;
using test::OpTestReport;
using test::RunOnCase;
using test::SeededItems;
using test::TestOperator;

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

// The convolution by its definition, summed in double: the reference every
// route is checked against. `weight` is PyTorch's (out, in / groups, kh, kw).
sftensor DefinitionConv2d(const ftensor& input, const ConvParams& p,
                          const std::vector<float>& weight, const std::vector<float>& bias) {
  const uint32_t out_h =
      ConvOutputSize(input.rows(), p.kernel_h, p.stride_h, p.padding_h, p.dilation_h);
  const uint32_t out_w =
      ConvOutputSize(input.cols(), p.kernel_w, p.stride_w, p.padding_w, p.dilation_w);
  const uint32_t in_per_group = p.in_channels / p.groups;
  const uint32_t out_per_group = p.out_channels / p.groups;
  sftensor expected = TensorCreate(p.out_channels, out_h, out_w);
  for (uint32_t o = 0; o < p.out_channels; ++o) {
    const uint32_t first_in = o / out_per_group * in_per_group;
    for (uint32_t y = 0; y < out_h; ++y) {
      for (uint32_t x = 0; x < out_w; ++x) {
        double sum = bias.empty() ? 0 : bias[o];
        for (uint32_t c = 0; c < in_per_group; ++c) {
          for (uint32_t i = 0; i < p.kernel_h; ++i) {
            for (uint32_t j = 0; j < p.kernel_w; ++j) {
              const int64_t iy = int64_t{y} * p.stride_h + i * p.dilation_h - p.padding_h;
              const int64_t ix = int64_t{x} * p.stride_w + j * p.dilation_w - p.padding_w;
              if (iy < 0 || ix < 0 || iy >= input.rows() || ix >= input.cols()) continue;
              const size_t w = ((size_t{o} * in_per_group + c) * p.kernel_h + i) * p.kernel_w + j;
              sum += double{weight[w]} * input.at(first_in + c, iy, ix);
            }
          }
        }
        expected->at(o, y, x) = static_cast<float>(sum);
      }
    }
  }
  return expected;
}

// `p` as nn.Conv2d's parameters and attributes, with `weight` and `bias`.
std::map<std::string, RuntimeParameter> ConvOperatorParams(const ConvParams& p) {
  return {{"in_channels", int(p.in_channels)},
          {"out_channels", int(p.out_channels)},
          {"kernel_size", std::vector<int>{int(p.kernel_h), int(p.kernel_w)}},
          {"stride", std::vector<int>{int(p.stride_h), int(p.stride_w)}},
          {"padding", std::vector<int>{int(p.padding_h), int(p.padding_w)}},
          {"dilation", std::vector<int>{int(p.dilation_h), int(p.dilation_w)}},
          {"groups", int(p.groups)},
          {"bias", true}};
}

// Every route and mode of the op-test harness (op_test.hpp) against the
// definition: odd sizes, bias, 2 groups, batches of 1 and 3 (items in
// parallel), and a fused or separate activation, all within float32
// rounding (2e-6 of the largest output; see kuiper/test/test_winograd.cpp and
// test_direct_conv.cpp). Returns what the harness ran.
OpTestReport ExpectConvMatchesTheDefinition(const ConvParams& p, uint32_t h, uint32_t w,
                                            Activation activation) {
  std::vector<float> weight(size_t{p.out_channels} * p.in_channels / p.groups * p.kernel_h *
                            p.kernel_w),
      bias(p.out_channels);
  for (size_t i = 0; i < weight.size(); ++i) weight[i] = float((i * 37) % 23) / 23 - 0.5f;
  for (size_t o = 0; o < bias.size(); ++o) bias[o] = 0.1f * (float(o) - p.out_channels / 2.f);
  const std::vector<sftensor> items = SeededItems({p.in_channels, h, w}, 1);
  const auto reference = [&](const std::vector<sftensor>& item) {
    return std::vector<sftensor>{DefinitionConv2d(*item[0], p, weight, bias)};
  };
  float scale = 1;
  for (const sftensor& item : items) {
    const std::vector<float> values = reference({item})[0]->values();
    scale = std::max(scale, *std::max_element(values.begin(), values.end()));
  }
  const int kh = int(p.kernel_h), kw = int(p.kernel_w);
  OpTestExtra extra;
  extra.activation = activation;
  return TestOperator(
      "nn.Conv2d", ConvOperatorParams(p),
      {{"weight",
        FloatAttribute({int(p.out_channels), int(p.in_channels / p.groups), kh, kw}, weight)},
       {"bias", FloatAttribute({int(p.out_channels)}, bias)}},
      {items}, reference, 2e-6f * scale, extra);
}

// 3x3 stride 1 with 16 and 24 channels per group: the core's Winograd route
// by default, im2col + GEMM (the lab's ComputeGroups and FillBlock) with it off.
TEST(Conv2d, WinogradShapeMatchesTheDefinitionOnEveryRoute) {
  ConvParams p;
  p.in_channels = 32, p.out_channels = 48, p.groups = 2;
  p.kernel_h = p.kernel_w = 3;
  p.padding_h = p.padding_w = 1;
  const OpTestReport report = ExpectConvMatchesTheDefinition(p, 13, 10, Activation::kRelu);
  EXPECT_EQ(report.routes, (std::set<ConvRoute>{ConvRoute::kIm2Col, ConvRoute::kWinograd}));
  EXPECT_TRUE(report.fused) << "the ReLU was never fused into the convolution";
}

// Stride 2, 2 groups of 32 output channels, 7x5 output positions as the graph
// declares them: the core's direct route where the CPU has AVX-512, im2col +
// GEMM with it off (or without AVX-512); a SiLU after it.
TEST(Conv2d, DirectShapeMatchesTheDefinitionOnEveryRoute) {
  ConvParams p;
  p.in_channels = 40, p.out_channels = 64, p.groups = 2;
  p.kernel_h = p.kernel_w = 3;
  p.stride_h = p.stride_w = 2;
  p.padding_h = p.padding_w = 1;
  const OpTestReport report = ExpectConvMatchesTheDefinition(p, 13, 10, Activation::kSilu);
  std::set<ConvRoute> routes{ConvRoute::kIm2Col};
  if (DirectKernels::Fast()) routes.insert(ConvRoute::kDirect);
  EXPECT_EQ(report.routes, routes);
  EXPECT_TRUE(report.fused) << "the SiLU was never fused into the convolution";
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

// course6_conv: ConvolutionLayer::ComputeGroups against a direct convolution
// (seven nested loops over batch, output channel, output row and column,
// input channel of the group, kernel row and kernel column).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

#include "activation_reference.hpp"
#include "kuiper/error.hpp"
#include "kuiper/layers/convolution.hpp"

namespace kuiper {
namespace {

struct Case {
  ConvParams params;
  uint32_t height = 1, width = 1, batch = 1;
  bool bias = false;
  Activation activation = Activation::kNone;  // fused into the layer (README §3.7)
};

std::string DescribeCase(const Case& c) {
  const ConvParams& p = c.params;
  std::ostringstream out;
  out << "in=" << p.in_channels << " out=" << p.out_channels << " k=" << p.kernel_h << "x"
      << p.kernel_w << " stride=" << p.stride_h << "x" << p.stride_w << " pad=" << p.padding_h
      << "x" << p.padding_w << " dilation=" << p.dilation_h << "x" << p.dilation_w
      << " groups=" << p.groups << " input=" << c.height << "x" << c.width << " batch=" << c.batch
      << " bias=" << c.bias << " activation="
      << (c.activation == Activation::kRelu   ? "relu"
          : c.activation == Activation::kSilu ? "silu"
                                              : "none");
  return out.str();
}

// weight is row-major (out, in/groups, kh, kw), as PyTorch stores it; the
// activation is applied after the bias, as a convolution followed by
// nn.ReLU / nn.SiLU computes it.
std::vector<ftensor> DirectConvolution(const std::vector<ftensor>& batch, const ConvParams& p,
                                       const std::vector<float>& weight,
                                       const std::vector<float>& bias,
                                       Activation activation = Activation::kNone) {
  const uint32_t out_h =
      ConvOutputSize(batch[0].rows(), p.kernel_h, p.stride_h, p.padding_h, p.dilation_h);
  const uint32_t out_w =
      ConvOutputSize(batch[0].cols(), p.kernel_w, p.stride_w, p.padding_w, p.dilation_w);
  const uint32_t in_g = p.in_channels / p.groups, out_g = p.out_channels / p.groups;
  std::vector<ftensor> result;
  for (const ftensor& input : batch) {
    ftensor out(p.out_channels, out_h, out_w);
    for (uint32_t o = 0; o < p.out_channels; ++o) {
      const uint32_t group = o / out_g;
      for (uint32_t y = 0; y < out_h; ++y) {
        for (uint32_t x = 0; x < out_w; ++x) {
          double sum = bias.empty() ? 0.0 : bias[o];
          for (uint32_t c = 0; c < in_g; ++c) {
            for (uint32_t i = 0; i < p.kernel_h; ++i) {
              for (uint32_t j = 0; j < p.kernel_w; ++j) {
                const int64_t iy = int64_t(y) * p.stride_h - p.padding_h + i * p.dilation_h;
                const int64_t ix = int64_t(x) * p.stride_w - p.padding_w + j * p.dilation_w;
                if (iy < 0 || ix < 0 || iy >= input.rows() || ix >= input.cols()) continue;
                const float w = weight[((o * in_g + c) * p.kernel_h + i) * p.kernel_w + j];
                sum += double(w) * input.at(group * in_g + c, iy, ix);
              }
            }
          }
          out.at(o, y, x) = float(ReferenceActivate(sum, activation));
        }
      }
    }
    result.push_back(out);
  }
  return result;
}

std::vector<float> RandomValues(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> value(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = value(rng);
  return v;
}

// Case `index` of the sweep: each index fixes one combination of kernel,
// stride, padding, dilation, groups, bias and batch; the seed picks the sizes.
Case SweepCase(int index) {
  static const uint32_t kKernels[] = {1, 3, 5, 7};
  static const uint32_t kPaddings[] = {0, 1, 3};
  static const uint32_t kGroupChoices[] = {1, 2, 4, 0};  // 0: depthwise
  std::mt19937 rng(1000 + index);
  Case c;
  ConvParams& p = c.params;
  p.kernel_h = kKernels[index % 4];
  p.kernel_w = index % 5 == 0 ? kKernels[(index + 1) % 4] : p.kernel_h;  // some non-square
  p.stride_h = p.stride_w = 1 + (index / 4) % 2;
  p.padding_h = p.padding_w = kPaddings[index % 3];
  p.dilation_h = p.dilation_w = 1 + (index / 8) % 2;
  const uint32_t groups = kGroupChoices[(index / 2) % 4];
  std::uniform_int_distribution<uint32_t> multiple(1, 3);
  if (groups == 0) {  // depthwise: one input channel per group
    p.in_channels = p.groups = 2 + multiple(rng) * 2;
    p.out_channels = p.in_channels * multiple(rng);
  } else {
    p.groups = groups;
    p.in_channels = groups * multiple(rng);
    p.out_channels = groups * multiple(rng);
  }
  c.bias = index % 2 == 1;
  static const Activation kActivations[] = {Activation::kNone, Activation::kRelu,
                                            Activation::kSilu};
  c.activation = kActivations[index % 3];
  c.batch = (index / 3) % 2 == 0 ? 1 : 3;
  // Odd sizes, at least large enough for one output position.
  const uint32_t span_h = p.dilation_h * (p.kernel_h - 1) + 1;
  const uint32_t span_w = p.dilation_w * (p.kernel_w - 1) + 1;
  std::uniform_int_distribution<uint32_t> extra(0, 6);
  c.height = std::max<int>(1, int(span_h) - 2 * int(p.padding_h)) + extra(rng);
  c.width = std::max<int>(1, int(span_w) - 2 * int(p.padding_w)) + extra(rng);
  c.height |= 1;
  c.width |= 1;
  return c;
}

class ConvolutionSweep : public testing::TestWithParam<int> {};

TEST_P(ConvolutionSweep, MatchesDirectConvolution) {
  const Case c = SweepCase(GetParam());
  const ConvParams& p = c.params;
  SCOPED_TRACE(DescribeCase(c));
  std::mt19937 rng(GetParam());
  const std::vector<float> weight = RandomValues(
      size_t(p.out_channels) * p.in_channels / p.groups * p.kernel_h * p.kernel_w, rng);
  const std::vector<float> bias = c.bias ? RandomValues(p.out_channels, rng) : std::vector<float>{};
  std::vector<ftensor> batch;
  std::vector<sftensor> inputs, outputs(c.batch);
  for (uint32_t n = 0; n < c.batch; ++n) {
    inputs.push_back(std::make_shared<ftensor>(p.in_channels, c.height, c.width));
    inputs.back()->Fill(RandomValues(inputs.back()->size(), rng));
    batch.push_back(*inputs.back());
  }
  ConvolutionLayer layer("conv", p, weight, bias);
  if (c.activation != Activation::kNone) ASSERT_TRUE(layer.FuseActivation(c.activation));
  ASSERT_EQ(layer.Forward(inputs, outputs), InferStatus::kInferSuccess);
  const std::vector<ftensor> expected = DirectConvolution(batch, p, weight, bias, c.activation);
  for (uint32_t n = 0; n < c.batch; ++n) {
    ASSERT_EQ(outputs[n]->shapes(), expected[n].shapes()) << "item " << n;
    const float diff = arma::abs(outputs[n]->data() - expected[n].data()).max();
    EXPECT_LE(diff, 1e-4f) << "item " << n << ": max |output - direct convolution| (README §3.6-§3.7)";
  }
}

INSTANTIATE_TEST_SUITE_P(Seeded, ConvolutionSweep, testing::Range(0, 64));

// The smallest hand-checked case: a 2x2 all-ones kernel over a counting 3x3
// image sums each 2x2 window.
TEST(ComputeGroups, HandCheckedWindowSums) {
  ConvParams p;
  p.kernel_h = p.kernel_w = 2;
  ConvolutionLayer layer("conv", p, {1, 1, 1, 1}, {});
  ftensor input(1, 3, 3), output(1, 2, 2);
  input.Fill({1, 2, 3, 4, 5, 6, 7, 8, 9});
  layer.ComputeGroups(input, output);
  EXPECT_EQ(output.values(), std::vector<float>({12, 16, 24, 28}))
      << "expected the four 2x2 window sums (README §3.3, the first example)";
}

TEST(ComputeGroups, AddsBiasPerOutputChannel) {
  ConvParams p;
  p.out_channels = 2;
  ConvolutionLayer layer("conv", p, {1, 2}, {10, 20});
  ftensor input(1, 1, 2), output(2, 1, 2);
  input.Fill({1, 2});
  layer.ComputeGroups(input, output);
  EXPECT_EQ(output.values(), std::vector<float>({11, 12, 22, 24}))
      << "expected bias[o] added to every position of output channel o (README §3.7)";
}

// Two groups with identity 1x1 kernels: output channel k sees only its own
// group's input channels, so channels 0 and 1 never mix.
TEST(ComputeGroups, GroupsDoNotMixChannels) {
  ConvParams p;
  p.in_channels = p.out_channels = p.groups = 2;
  ConvolutionLayer layer("conv", p, {3, 5}, {});
  ftensor input(2, 1, 1), output(2, 1, 1);
  input.Fill({1, 2});
  layer.ComputeGroups(input, output);
  EXPECT_EQ(output.values(), std::vector<float>({3, 10}))
      << "expected each group to read only its own input channels (README §3.6)";
}

TEST(ComputeGroups, OverwritesPreviousOutput) {
  ConvParams p;
  ConvolutionLayer layer("conv", p, {2}, {});
  ftensor input(1, 1, 2), output(1, 1, 2);
  input.Fill({1, 2});
  output.Fill(100.f);
  layer.ComputeGroups(input, output);
  EXPECT_EQ(output.values(), std::vector<float>({2, 4}))
      << "expected every output element overwritten, not added to (README §3.7)";
}

// A layer with two groups, a bias and a fused activation, on values chosen so
// that both signs occur before the activation.
struct FusedCase {
  ConvParams params;
  std::vector<float> weight, bias;
  ftensor input{4, 5, 6};
};

FusedCase TwoGroupsWithBias() {
  FusedCase c;
  ConvParams& p = c.params;
  p.in_channels = 4, p.out_channels = 6, p.groups = 2;
  p.kernel_h = 3, p.kernel_w = 2, p.padding_h = p.padding_w = 1, p.stride_w = 2;
  std::mt19937 rng(7);
  c.weight = RandomValues(6 * 2 * 3 * 2, rng);
  c.bias = RandomValues(6, rng);
  c.input.Fill(RandomValues(c.input.size(), rng));
  return c;
}

void ExpectFusedActivation(Activation activation) {
  const FusedCase c = TwoGroupsWithBias();
  ConvolutionLayer layer("conv", c.params, c.weight, c.bias);
  ASSERT_TRUE(layer.FuseActivation(activation));
  const ftensor reference = DirectConvolution({c.input}, c.params, c.weight, c.bias, activation)[0];
  const ftensor plain = DirectConvolution({c.input}, c.params, c.weight, c.bias)[0];
  ASSERT_LT(plain.data().min(), -0.1f) << "the case needs negative sums to be a test";
  ftensor output(reference.channels(), reference.rows(), reference.cols());
  layer.ComputeGroups(c.input, output);
  const float diff = arma::abs(output.data() - reference.data()).max();
  EXPECT_LE(diff, 1e-5f) << "expected the activation applied to (convolution + bias) of every "
                            "output element: the layer's activation_ is set (README §3.7, the "
                            "epilogue); max difference from the direct convolution "
                         << diff;
}

TEST(ComputeGroups, AppliesTheFusedRelu) { ExpectFusedActivation(Activation::kRelu); }

TEST(ComputeGroups, AppliesTheFusedSilu) { ExpectFusedActivation(Activation::kSilu); }

// relu(x + b), not relu(x) + b: a window summing to -1 with bias 2 gives 1.
TEST(ComputeGroups, FusedActivationComesAfterTheBias) {
  ConvParams p;
  p.out_channels = 2;
  ConvolutionLayer layer("conv", p, {1, -1}, {2, -2});
  ASSERT_TRUE(layer.FuseActivation(Activation::kRelu));
  ftensor input(1, 1, 2), output(2, 1, 2);
  input.Fill({-1, 3});
  layer.ComputeGroups(input, output);
  // Channel 0: -1 + 2 = 1, 3 + 2 = 5; channel 1: 1 - 2 = -1 -> 0, -3 - 2 -> 0.
  EXPECT_EQ(output.values(), std::vector<float>({1, 5, 0, 0}))
      << "expected relu(conv + bias) per element (README §3.7, the epilogue)";
}

// Each group reads its own bias entries: group 1's output channels get
// bias[3..6), not bias[0..3).
TEST(ComputeGroups, EachGroupAddsItsOwnBias) {
  ConvParams p;
  p.in_channels = 2, p.out_channels = 6, p.groups = 2;
  ConvolutionLayer layer("conv", p, {1, 1, 1, 1, 1, 1}, {10, 20, 30, 40, 50, 60});
  ftensor input(2, 1, 1), output(6, 1, 1);
  input.Fill({1, 2});
  layer.ComputeGroups(input, output);
  EXPECT_EQ(output.values(), std::vector<float>({11, 21, 31, 42, 52, 62}))
      << "expected group g's output channel o to add bias[g * out/groups + o] (README §3.6)";
}

// groups must divide both channel counts; the layer's constructor refuses
// anything else (that check is core), so ComputeGroups can rely on
// in_channels / groups and out_channels / groups being exact. The nearest
// valid grouping must then compute.
TEST(ComputeGroups, GroupsThatDoNotDivideAreRefused) {
  ConvParams p;
  p.in_channels = 6, p.out_channels = 4, p.groups = 3;  // 3 does not divide 4
  EXPECT_THROW(ConvolutionLayer("conv", p, std::vector<float>(4 * 2, 1.f), {}), LayerError)
      << "README §3.6: groups must divide in_channels and out_channels";
  p.in_channels = 4, p.out_channels = 6;  // 3 does not divide 4
  EXPECT_THROW(ConvolutionLayer("conv", p, std::vector<float>(6, 1.f), {}), LayerError);
  p.in_channels = 6, p.out_channels = 4, p.groups = 2;  // divides both: 3 in, 2 out per group
  ConvolutionLayer layer("conv", p, {1, 1, 1, 2, 2, 2, 1, 0, 0, 0, 0, 1}, {});
  ftensor input(6, 1, 1), output(4, 1, 1);
  input.Fill({1, 2, 3, 4, 5, 6});
  layer.ComputeGroups(input, output);
  // Group 0 sums channels 0-2 (6), doubled (12); group 1 takes channel 3 (4) and channel 5 (6).
  EXPECT_EQ(output.values(), std::vector<float>({6, 12, 4, 6}))
      << "expected 3 input and 2 output channels per group (README §3.6)";
}

}  // namespace
}  // namespace kuiper

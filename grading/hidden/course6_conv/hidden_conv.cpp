// course6_conv hidden tests (instructor tree only): geometries the public tests
// do not reach. The unfolding against the index formula of README §3, element
// by element; the layer against a direct convolution summed in double. Each
// test names, in grading/wrong/course6_conv/*/WRONG.md, the wrong solution
// that passes every public test and fails it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <vector>

#include "activation_reference.hpp"
#include "kuiper/layers/convolution.hpp"

namespace kuiper {
namespace {

struct Geometry {
  uint32_t kh, kw, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w;
};

ConvParams MakeParams(const Geometry& g, uint32_t in_channels, uint32_t out_channels,
                      uint32_t groups) {
  ConvParams p;
  p.in_channels = in_channels, p.out_channels = out_channels, p.groups = groups;
  p.kernel_h = g.kh, p.kernel_w = g.kw, p.stride_h = g.stride_h, p.stride_w = g.stride_w;
  p.padding_h = g.pad_h, p.padding_w = g.pad_w, p.dilation_h = g.dil_h, p.dilation_w = g.dil_w;
  return p;
}

std::string Describe(const ConvParams& p, const ftensor& input) {
  std::ostringstream out;
  out << "input " << input.channels() << "x" << input.rows() << "x" << input.cols() << ", "
      << p.in_channels << "->" << p.out_channels << " in " << p.groups << " group(s), kernel "
      << p.kernel_h << "x" << p.kernel_w << ", stride " << p.stride_h << "x" << p.stride_w
      << ", padding " << p.padding_h << "x" << p.padding_w << ", dilation " << p.dilation_h << "x"
      << p.dilation_w;
  return out.str();
}

// Element (row, column) of the im2col matrix of channels [0, ...), README §3.
float FormulaElement(const ftensor& input, const ConvParams& p, uint32_t out_h, uint64_t row,
                     uint64_t column) {
  const uint64_t c = column / (p.kernel_h * p.kernel_w);
  const uint64_t i = column / p.kernel_w % p.kernel_h, j = column % p.kernel_w;
  const int64_t oy = row % out_h, ox = row / out_h;
  const int64_t y = oy * p.stride_h + int64_t(i * p.dilation_h) - p.padding_h;
  const int64_t x = ox * p.stride_w + int64_t(j * p.dilation_w) - p.padding_w;
  if (y < 0 || x < 0 || y >= input.rows() || x >= input.cols()) return 0.f;
  return input.at(c, y, x);
}

// The whole matrix with FillBlock, one block per output column and one
// straddling two, against the formula.
testing::AssertionResult UnfoldMatchesFormula(const ftensor& input, const ConvParams& p) {
  const uint32_t out_h =
      ConvOutputSize(input.rows(), p.kernel_h, p.stride_h, p.padding_h, p.dilation_h);
  const uint32_t out_w =
      ConvOutputSize(input.cols(), p.kernel_w, p.stride_w, p.padding_w, p.dilation_w);
  if (out_h == 0 || out_w == 0) return testing::AssertionFailure() << "no output: a bad case";
  const Im2ColMatrix matrix(input, 0, input.channels(), p, out_h, out_w);
  const uint64_t m = uint64_t{out_h} * out_w,
                 k = uint64_t{input.channels()} * p.kernel_h * p.kernel_w;
  std::vector<std::pair<uint64_t, uint64_t>> blocks;  // (first row, rows)
  for (uint64_t first = 0; first < m; first += out_h) blocks.emplace_back(first, out_h);
  if (out_w > 1) blocks.emplace_back(out_h / 2, out_h);  // starts and ends mid column
  for (const auto& [first, rows] : blocks) {
    std::vector<float> block(rows * k, -777.f);
    matrix.FillBlock(first, rows, 0, k, block.data());
    for (uint64_t col = 0; col < k; ++col) {
      for (uint64_t r = 0; r < rows; ++r) {
        const float want = FormulaElement(input, p, out_h, first + r, col);
        const float got = block[col * rows + r];
        if (got != want) {
          return testing::AssertionFailure()
                 << Describe(p, input) << ": matrix row " << first + r << " (oy "
                 << (first + r) % out_h << ", ox " << (first + r) / out_h << "), column " << col
                 << ": expected " << want << ", got " << got;
        }
      }
    }
  }
  return testing::AssertionSuccess();
}

ftensor RandomInput(uint32_t channels, uint32_t rows, uint32_t cols, std::mt19937& rng) {
  std::uniform_real_distribution<float> value(-1.f, 1.f);
  ftensor input(channels, rows, cols);
  std::vector<float> values(input.size());
  for (float& v : values) v = value(rng);
  input.Fill(values);
  return input;
}

std::vector<float> RandomVector(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> value(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = value(rng);
  return v;
}

// The layer (ComputeGroups on whichever route the core picks for the shape)
// against seven loops in double, bias and activation after the sum.
testing::AssertionResult LayerMatchesDirect(const ConvParams& p, uint32_t height, uint32_t width,
                                            bool bias, Activation activation, uint32_t seed) {
  std::mt19937 rng(seed);
  const uint32_t in_g = p.in_channels / p.groups, out_g = p.out_channels / p.groups;
  const std::vector<float> weight =
      RandomVector(size_t{p.out_channels} * in_g * p.kernel_h * p.kernel_w, rng);
  const std::vector<float> biases = bias ? RandomVector(p.out_channels, rng) : std::vector<float>{};
  const ftensor input = RandomInput(p.in_channels, height, width, rng);
  const uint32_t out_h = ConvOutputSize(height, p.kernel_h, p.stride_h, p.padding_h, p.dilation_h);
  const uint32_t out_w = ConvOutputSize(width, p.kernel_w, p.stride_w, p.padding_w, p.dilation_w);
  ConvolutionLayer layer("hidden", p, weight, biases, uint64_t{out_h} * out_w);
  if (activation != Activation::kNone && !layer.FuseActivation(activation)) {
    return testing::AssertionFailure() << "the layer refused the activation";
  }
  ftensor output(p.out_channels, out_h, out_w);
  output.Fill(1e6f);  // every element must be overwritten
  layer.ComputeGroups(input, output);
  for (uint32_t o = 0; o < p.out_channels; ++o) {
    const uint32_t g = o / out_g;
    for (uint32_t y = 0; y < out_h; ++y) {
      for (uint32_t x = 0; x < out_w; ++x) {
        double sum = bias ? biases[o] : 0.0;
        for (uint32_t c = 0; c < in_g; ++c) {
          for (uint32_t i = 0; i < p.kernel_h; ++i) {
            for (uint32_t j = 0; j < p.kernel_w; ++j) {
              const int64_t iy = int64_t(y) * p.stride_h + int64_t(i) * p.dilation_h - p.padding_h;
              const int64_t ix = int64_t(x) * p.stride_w + int64_t(j) * p.dilation_w - p.padding_w;
              if (iy < 0 || ix < 0 || iy >= height || ix >= width) continue;
              sum += double(weight[((size_t{o} * in_g + c) * p.kernel_h + i) * p.kernel_w + j]) *
                     input.at(g * in_g + c, iy, ix);
            }
          }
        }
        const double want = ReferenceActivate(sum, activation);
        const double diff = std::abs(output.at(o, y, x) - want);
        if (!(diff <= 1e-4 * std::max(1.0, std::abs(want)))) {
          return testing::AssertionFailure()
                 << Describe(p, input) << ": output channel " << o << " at (" << y << ", " << x
                 << "): expected " << want << ", got " << output.at(o, y, x);
        }
      }
    }
  }
  return testing::AssertionSuccess();
}

// Kernel row 2 of a dilation-3 kernel with padding 3 starts at input row 3:
// exactly the bottom edge of a 3-row image, so it reads only padding; the
// rows have stride 4 (the public tests stop at 3), the columns stride 2.
TEST(HiddenUnfold, TapStartingAtTheBottomEdgeWithStrideFourReadsZeros) {
  std::mt19937 rng(11);
  const ftensor input = RandomInput(2, 3, 5, rng);
  const ConvParams p = MakeParams({3, 3, 4, 2, 3, 1, 3, 1}, 2, 2, 1);
  EXPECT_TRUE(UnfoldMatchesFormula(input, p));
}

// A 9-row kernel (larger than any kernel of the models), dilated, on an odd map.
TEST(HiddenUnfold, NineByThreeKernelDilatedMatchesTheFormula) {
  std::mt19937 rng(12);
  const ftensor input = RandomInput(2, 21, 9, rng);
  const ConvParams p = MakeParams({9, 3, 1, 2, 4, 1, 2, 1}, 2, 2, 1);
  EXPECT_TRUE(UnfoldMatchesFormula(input, p));
}

// Stride 4 over a 2x2 kernel (rows dilated by 4: the second tap lands on the
// bottom edge; columns: the stride skips input columns), 2 groups of 2 output
// channels, bias and SiLU.
TEST(HiddenLayer, StrideFourLargerThanTheKernelWithGroupsBiasAndSilu) {
  const ConvParams p = MakeParams({2, 2, 4, 4, 1, 1, 4, 1}, 4, 4, 2);
  EXPECT_TRUE(LayerMatchesDirect(p, 3, 11, true, Activation::kSilu, 21));
}

// 16 -> 16, 3x3, stride 1, odd 9x7 map: the shape of the core's Winograd
// route, whose kernels_[g] holds no plain matrix.
TEST(HiddenLayer, SixteenChannelThreeByThreeOnAnOddMapWithBiasAndRelu) {
  const ConvParams p = MakeParams({3, 3, 1, 1, 1, 1, 1, 1}, 16, 16, 1);
  EXPECT_TRUE(LayerMatchesDirect(p, 9, 7, true, Activation::kRelu, 22));
}

// 2 groups of 8 -> 16 channels, 5x5 stride 2: where the CPU has AVX-512 the
// shape of the core's direct route (packed kernels, no plain matrix).
TEST(HiddenLayer, GroupsOfSixteenOutputChannelsFiveByFiveStrideTwoNoBias) {
  const ConvParams p = MakeParams({5, 5, 2, 2, 2, 2, 1, 1}, 16, 32, 2);
  EXPECT_TRUE(LayerMatchesDirect(p, 13, 11, false, Activation::kSilu, 23));
}

// AlexNet's stem: 11x11, stride 4, padding 2 on 3x67x67 (a 224 image's
// geometry, cropped), 3 -> 8 channels, bias, no activation.
TEST(HiddenLayer, ElevenByElevenStrideFourStemWithBias) {
  const ConvParams p = MakeParams({11, 11, 4, 4, 2, 2, 1, 1}, 3, 8, 1);
  EXPECT_TRUE(LayerMatchesDirect(p, 67, 67, true, Activation::kNone, 24));
}

}  // namespace
}  // namespace kuiper

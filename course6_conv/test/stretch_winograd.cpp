// course6 stretch task: Winograd F(2x2, 3x3) (src/stretch_winograd.cpp)
// against the im2col product and a direct convolution in double (README §10.1).
#include <gtest/gtest.h>

#include <random>

#include "kuiper/error.hpp"
#include "kuiper/layers/convolution.hpp"

namespace kuiper {

// Defined in src/stretch_winograd.cpp (see its comment).
arma::fmat WinogradF2x2_3x3(const ftensor& input, const ConvParams& params,
                            const arma::fmat& kernels);

namespace {

ConvParams ThreeByThree(uint32_t padding_h, uint32_t padding_w) {
  ConvParams p;
  p.kernel_h = p.kernel_w = 3;
  p.padding_h = padding_h, p.padding_w = padding_w;
  return p;
}

// The convolution straight from its definition, in double, in the layout of
// the im2col product: row oy + ox * out_h, column o.
arma::mat Direct(const ftensor& input, const ConvParams& p, const arma::fmat& kernels) {
  // A 3x3 window at stride 1 fits (size + 2 * padding - 2) times along each axis.
  const uint32_t out_h = input.rows() + 2 * p.padding_h - 2;
  const uint32_t out_w = input.cols() + 2 * p.padding_w - 2;
  arma::mat result(uint64_t{out_h} * out_w, kernels.n_cols, arma::fill::zeros);
  for (uint32_t o = 0; o < kernels.n_cols; ++o) {
    for (uint32_t oy = 0; oy < out_h; ++oy) {
      for (uint32_t ox = 0; ox < out_w; ++ox) {
        double sum = 0;
        for (uint32_t c = 0; c < input.channels(); ++c) {
          for (int i = 0; i < 3; ++i) {
            for (int j = 0; j < 3; ++j) {
              const int64_t y = int64_t{oy} + i - p.padding_h, x = int64_t{ox} + j - p.padding_w;
              if (y < 0 || x < 0 || y >= input.rows() || x >= input.cols()) continue;
              sum += double(kernels(c * 9 + i * 3 + j, o)) * input.at(c, y, x);
            }
          }
        }
        result(oy + uint64_t{ox} * out_h, o) = sum;
      }
    }
  }
  return result;
}

TEST(Winograd, OneTileOfOnesSumsEachWindow) {
  ftensor input(1, 4, 4);
  input.Fill(1.f);
  const arma::fmat kernels(9, 1, arma::fill::ones);
  const arma::fmat result = WinogradF2x2_3x3(input, ThreeByThree(0, 0), kernels);
  ASSERT_EQ(result.n_rows, 4u);
  ASSERT_EQ(result.n_cols, 1u);
  EXPECT_TRUE(
      arma::approx_equal(result, arma::fmat(4, 1, arma::fill::value(9.f)), "absdiff", 1e-6f))
      << result << "expected every 3x3 window of ones to sum to 9 (README §10.1)";
}

// Odd output sizes end in half tiles; padding differs per axis; 3 channels,
// 4 output channels. The result must be the im2col product the engine computes.
TEST(Winograd, MatchesTheIm2ColProductOnOddPaddedInputs) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> value(-1.f, 1.f);
  ftensor input(3, 9, 6);
  std::vector<float> values(input.size());
  for (float& v : values) v = value(rng);
  input.Fill(values);
  arma::fmat kernels(27, 4);
  kernels.imbue([&] { return value(rng); });
  const ConvParams p = ThreeByThree(1, 0);
  const uint32_t out_h = ConvOutputSize(9, 3, 1, 1, 1), out_w = ConvOutputSize(6, 3, 1, 0, 1);
  ASSERT_EQ(out_h, 9u);  // odd: the last tile row is half a tile
  ASSERT_EQ(out_w, 4u);
  const arma::fmat winograd = WinogradF2x2_3x3(input, p, kernels);
  const arma::fmat im2col = Im2Col(input, 0, 3, p, out_h, out_w).ToMatrix() * kernels;
  ASSERT_EQ(winograd.n_rows, im2col.n_rows);
  ASSERT_EQ(winograd.n_cols, im2col.n_cols);
  EXPECT_LE(arma::abs(winograd - im2col).max(), 1e-5f)
      << "Winograd and im2col disagree (README §10.1: tiles, half tiles and padding)";
  const arma::mat direct = Direct(input, p, kernels);
  EXPECT_LE(arma::abs(arma::conv_to<arma::mat>::from(winograd) - direct).max(), 1e-5)
      << "expected the direct convolution";
}

TEST(Winograd, PaddingOfTwoAndOddWidthMatchTheDirectConvolution) {
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> value(-1.f, 1.f);
  ftensor input(2, 5, 7);
  std::vector<float> values(input.size());
  for (float& v : values) v = value(rng);
  input.Fill(values);
  arma::fmat kernels(18, 3);
  kernels.imbue([&] { return value(rng); });
  const ConvParams p = ThreeByThree(2, 2);  // 7x9 output, windows reaching past both edges
  const arma::fmat winograd = WinogradF2x2_3x3(input, p, kernels);
  const arma::mat direct = Direct(input, p, kernels);
  ASSERT_EQ(winograd.n_rows, direct.n_rows);
  EXPECT_LE(arma::abs(arma::conv_to<arma::mat>::from(winograd) - direct).max(), 1e-5)
      << "expected the direct convolution (README §10.1)";
}

TEST(Winograd, RefusesWhatFTwoByTwoThreeByThreeCannotCompute) {
  ftensor input(1, 6, 6);
  input.Fill(1.f);
  const arma::fmat kernels(9, 1, arma::fill::ones);
  ConvParams p = ThreeByThree(0, 0);
  p.stride_h = 2;
  EXPECT_THROW(WinogradF2x2_3x3(input, p, kernels), ShapeError) << "stride 2 (README §10.1)";
  p = ThreeByThree(0, 0);
  p.dilation_w = 2;
  EXPECT_THROW(WinogradF2x2_3x3(input, p, kernels), ShapeError) << "dilation 2";
  p = ThreeByThree(0, 0);
  p.kernel_h = p.kernel_w = 5;
  EXPECT_THROW(WinogradF2x2_3x3(input, p, arma::fmat(25, 1)), ShapeError) << "a 5x5 kernel";
  EXPECT_THROW(WinogradF2x2_3x3(input, ThreeByThree(0, 0), arma::fmat(18, 1)), ShapeError)
      << "18 weights per output channel for a 1-channel input";
}

}  // namespace
}  // namespace kuiper

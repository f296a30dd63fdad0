// ConvOutputSize, Im2ColMatrix's in-place route and MultiplyInto: the core
// half of the convolution. Unfolding an im2col matrix (FillBlock, and so
// ToMatrix and MultiplyInto on anything but a 1x1 kernel) is lab course6's
// code: those tests are in course6_conv/test/test_im2col_unfold.cpp, and these
// never call it, so that they pass in the student build.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "activation_reference.hpp"
#include "kuiper/error.hpp"
#include "kuiper/layers/convolution.hpp"

namespace kuiper {
namespace {

TEST(ConvOutputSize, FollowsPyTorchFormula) {
  EXPECT_EQ(ConvOutputSize(224, 7, 2, 3, 1), 112u);  // ResNet18 stem
  EXPECT_EQ(ConvOutputSize(56, 3, 1, 1, 1), 56u);
  EXPECT_EQ(ConvOutputSize(9, 3, 2, 2, 2), 5u);   // floor((9 + 4 - 4 - 1) / 2) + 1
  EXPECT_EQ(ConvOutputSize(10, 3, 3, 0, 1), 3u);  // floor rounds the last partial window away
}

TEST(ConvOutputSize, IsZeroWhenTheKernelDoesNotFit) {
  EXPECT_EQ(ConvOutputSize(4, 5, 1, 0, 1), 0u);
  EXPECT_EQ(ConvOutputSize(4, 3, 1, 0, 2), 0u);  // dilated span 5
  EXPECT_EQ(ConvOutputSize(4, 5, 1, 1, 1), 2u);  // padding makes it fit
}

TEST(Im2Col, OneByOneKernelReadsTheInputInPlace) {
  ftensor input(3, 2, 2);
  input.Fill({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  ConvParams p;
  const Im2ColMatrix columns = Im2Col(input, 1, 2, p, 2, 2);
  EXPECT_EQ(columns.InPlace(), input.slice(1).memptr());  // no copy
  // Channel 1 is rows (5 6) (7 8): positions (0,0), (1,0), (0,1), (1,1) read 5, 7, 6, 8.
  const arma::fmat expected = {{5, 9}, {7, 11}, {6, 10}, {8, 12}};
  EXPECT_TRUE(arma::approx_equal(columns.ToMatrix(), expected, "absdiff", 0.f));
}

TEST(Im2Col, OnlyAnUnpaddedUnitStrideOneByOneKernelIsInPlace) {
  ftensor input(2, 4, 4);
  ConvParams p;
  p.stride_h = 2;
  EXPECT_EQ(Im2Col(input, 0, 2, p, 2, 4).InPlace(), nullptr);
  p.stride_h = 1, p.padding_w = 1;
  EXPECT_EQ(Im2Col(input, 0, 2, p, 4, 6).InPlace(), nullptr);
}

// columns * kernels by the definition, in double.
std::vector<double> NaiveProduct(const arma::fmat& columns, const arma::fmat& kernels) {
  std::vector<double> product(columns.n_rows * kernels.n_cols, 0.0);
  for (uint32_t c = 0; c < kernels.n_cols; ++c) {
    for (uint32_t r = 0; r < columns.n_rows; ++r) {
      for (uint32_t k = 0; k < columns.n_cols; ++k) {
        product[r + c * columns.n_rows] += double(columns(r, k)) * kernels(k, c);
      }
    }
  }
  return product;
}

// A 1x1 kernel over 128 channels of 80x80: 6400 positions of 128 taps, about
// 1024 rows per block, so MultiplyInto multiplies block by block (on up to 3
// threads), straight from the input (no FillBlock).
TEST(MultiplyInto, OneByOneKernelMultipliesTheInputBlockByBlockWithItsEpilogue) {
  ftensor input(128, 80, 80);
  input.Rand();
  const Im2ColMatrix columns = Im2Col(input, 0, 128, ConvParams{}, 80, 80);
  ASSERT_NE(columns.InPlace(), nullptr);
  const arma::fmat whole = columns.ToMatrix();
  arma::fmat kernels(128, 5, arma::fill::randu);
  kernels -= 0.5f;  // products of both signs, so ReLU has work to do
  const std::vector<float> bias = {0.5f, -1.f, 0.f, 2.f, -0.25f};
  const std::vector<double> plain = NaiveProduct(whole, kernels);
  for (const Activation activation : {Activation::kNone, Activation::kRelu, Activation::kSilu}) {
    std::vector<float> product(6400 * 5, -1.f);
    MultiplyInto(columns, kernels, product.data(), {bias.data(), activation});
    for (size_t i = 0; i < plain.size(); ++i) {
      const double v = plain[i] + bias[i / 6400];
      const double expected = ReferenceActivate(v, activation);
      ASSERT_NEAR(product[i], expected, 1e-4) << "element " << i;
    }
  }
}

TEST(MultiplyInto, PlainMatrixEpilogueAddsEachColumnsBiasThenActivates) {
  arma::fmat a(300, 36, arma::fill::randu), kernels(36, 5, arma::fill::randu);
  kernels -= 0.5f;
  const std::vector<float> bias = {0.5f, -1.f, 0.f, 2.f, -0.25f};
  const std::vector<double> plain = NaiveProduct(a, kernels);
  for (const Activation activation : {Activation::kNone, Activation::kRelu, Activation::kSilu}) {
    std::vector<float> product(300 * 5, -1.f);
    MultiplyInto(a, kernels, product.data(), {bias.data(), activation});
    for (size_t i = 0; i < plain.size(); ++i) {
      const double v = plain[i] + bias[i / 300];
      const double expected = ReferenceActivate(v, activation);
      ASSERT_NEAR(product[i], expected, 1e-4) << "element " << i;
    }
  }
}

TEST(MultiplyInto, FewRowsAreSplitByColumns) {
  // 7x7 positions and 300 output channels, as in ResNet18's last stage.
  arma::fmat a(49, 20, arma::fill::randu), b(20, 300, arma::fill::randu);
  std::vector<float> product(49 * 300, -1.f);
  MultiplyInto(a, b, product.data());
  const std::vector<double> expected = NaiveProduct(a, b);
  for (size_t i = 0; i < product.size(); ++i) {
    ASSERT_NEAR(product[i], expected[i], 1e-4) << "element " << i;
  }
}

TEST(MultiplyInto, WritesTheProductColumnMajor) {
  arma::fmat a(37, 11, arma::fill::randu), b(11, 5, arma::fill::randu);
  std::vector<float> product(37 * 5, -1.f);
  MultiplyInto(a, b, product.data());
  for (uint32_t r = 0; r < 37; ++r) {
    for (uint32_t c = 0; c < 5; ++c) {
      double sum = 0;  // the dot product, term by term
      for (uint32_t k = 0; k < 11; ++k) sum += double(a(r, k)) * b(k, c);
      EXPECT_NEAR(product[r + c * 37], sum, 1e-5) << "row " << r << " column " << c;
    }
  }
}

TEST(MultiplyInto, MismatchedInnerSizesThrow) {
  arma::fmat a(4, 3), b(2, 5);
  std::vector<float> product(20);
  EXPECT_THROW(MultiplyInto(a, b, product.data()), ShapeError);
}

TEST(Im2Col, ChannelRangeOutsideInputThrows) {
  ftensor input(2, 3, 3);
  ConvParams p;
  EXPECT_THROW(Im2Col(input, 1, 2, p, 3, 3), ShapeError);
}

}  // namespace
}  // namespace kuiper

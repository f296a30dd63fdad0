// Im2Col and ConvOutputSize: the core half of the convolution (lab course6
// writes the GEMM on top of them).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

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

// The element Im2Col must place at (row, column), straight from its definition.
float Expected(const ftensor& input, uint32_t first, const ConvParams& p, uint32_t out_h,
               uint32_t row, uint32_t column) {
  const uint32_t c = column / (p.kernel_h * p.kernel_w);
  const uint32_t i = column / p.kernel_w % p.kernel_h, j = column % p.kernel_w;
  const uint32_t oy = row % out_h, ox = row / out_h;
  const int64_t y = int64_t(oy) * p.stride_h + i * p.dilation_h - p.padding_h;
  const int64_t x = int64_t(ox) * p.stride_w + j * p.dilation_w - p.padding_w;
  if (y < 0 || x < 0 || y >= input.rows() || x >= input.cols()) return 0.f;
  return input.at(first + c, y, x);
}

TEST(Im2Col, HandCheckedTwoByTwoKernel) {
  ftensor input(1, 3, 3);
  input.Fill({1, 2, 3, 4, 5, 6, 7, 8, 9});
  ConvParams p;
  p.kernel_h = p.kernel_w = 2;
  const arma::fmat columns = Im2Col(input, 0, 1, p, 2, 2).ToMatrix();
  // Rows are positions (0,0), (1,0), (0,1), (1,1); columns are taps (0,0), (0,1), (1,0), (1,1).
  const arma::fmat expected = {{1, 2, 4, 5}, {4, 5, 7, 8}, {2, 3, 5, 6}, {5, 6, 8, 9}};
  EXPECT_TRUE(arma::approx_equal(columns, expected, "absdiff", 0.f));
}

TEST(Im2Col, PaddingReadsAsZeros) {
  ftensor input(1, 1, 1);
  input.Fill(5.f);
  ConvParams p;
  p.kernel_h = p.kernel_w = 3;
  p.padding_h = p.padding_w = 1;
  const arma::fmat columns = Im2Col(input, 0, 1, p, 1, 1).ToMatrix();
  ASSERT_EQ(columns.n_rows, 1u);
  ASSERT_EQ(columns.n_cols, 9u);
  EXPECT_EQ(arma::accu(columns), 5.f);
  EXPECT_EQ(columns(0, 4), 5.f);  // only the centre tap sees the image
}

TEST(Im2Col, RandomGeometriesMatchDefinition) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<uint32_t> small(1, 3), size(5, 12), pad(0, 2);
  for (int trial = 0; trial < 40; ++trial) {
    ConvParams p;
    p.kernel_h = small(rng), p.kernel_w = small(rng);
    p.stride_h = small(rng), p.stride_w = small(rng);
    p.dilation_h = small(rng), p.dilation_w = small(rng);
    p.padding_h = pad(rng), p.padding_w = pad(rng);
    ftensor input(4, size(rng), size(rng));
    input.Rand();
    const uint32_t out_h =
        ConvOutputSize(input.rows(), p.kernel_h, p.stride_h, p.padding_h, p.dilation_h);
    const uint32_t out_w =
        ConvOutputSize(input.cols(), p.kernel_w, p.stride_w, p.padding_w, p.dilation_w);
    if (out_h == 0 || out_w == 0) continue;
    const uint32_t first = trial % 3, channels = 1 + trial % 2;
    const arma::fmat columns = Im2Col(input, first, channels, p, out_h, out_w).ToMatrix();
    ASSERT_EQ(columns.n_rows, out_h * out_w) << "trial " << trial;
    ASSERT_EQ(columns.n_cols, channels * p.kernel_h * p.kernel_w) << "trial " << trial;
    for (uint32_t r = 0; r < columns.n_rows; ++r) {
      for (uint32_t k = 0; k < columns.n_cols; ++k) {
        ASSERT_EQ(columns(r, k), Expected(input, first, p, out_h, r, k))
            << "trial " << trial << " row " << r << " column " << k;
      }
    }
  }
}

TEST(Im2Col, StridedRowsSkipPaddingAtBothEnds) {
  // 1 channel, 5 rows x 1 column holding 1..5; a 3x1 kernel, stride 2, padding 2
  // rows: out_h = floor((5 + 4 - 3) / 2) + 1 = 4, windows start at rows -2, 0, 2, 4.
  ftensor input(1, 5, 1);
  input.Fill({1, 2, 3, 4, 5});
  ConvParams p;
  p.kernel_h = 3, p.stride_h = 2, p.padding_h = 2;
  const arma::fmat columns = Im2Col(input, 0, 1, p, 4, 1).ToMatrix();
  const arma::fmat expected = {{0, 0, 1}, {1, 2, 3}, {3, 4, 5}, {5, 0, 0}};
  EXPECT_TRUE(arma::approx_equal(columns, expected, "absdiff", 0.f)) << columns;
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

TEST(Im2Col, FillBlockWritesRowsThatSpanSeveralOutputColumns) {
  // 7 x 5 output positions; rows 3..20 start inside output column 0 and end inside column 4.
  ftensor input(2, 9, 7);
  input.Rand();
  ConvParams p;
  p.kernel_h = p.kernel_w = 3;
  p.padding_h = 1, p.stride_w = 2, p.dilation_h = 2;
  const uint32_t out_h = ConvOutputSize(9, 3, 1, 1, 2), out_w = ConvOutputSize(7, 3, 2, 0, 1);
  ASSERT_EQ(out_h, 7u);
  ASSERT_EQ(out_w, 3u);
  const Im2ColMatrix columns = Im2Col(input, 0, 2, p, out_h, out_w);
  const uint64_t first_row = 3, rows = 16, first_col = 4, last_col = 13;
  std::vector<float> block(rows * (last_col - first_col), -1.f);
  columns.FillBlock(first_row, rows, first_col, last_col, block.data());
  for (uint64_t col = first_col; col < last_col; ++col) {
    for (uint64_t r = 0; r < rows; ++r) {
      ASSERT_EQ(block[(col - first_col) * rows + r],
                Expected(input, 0, p, out_h, first_row + r, col))
          << "row " << first_row + r << " column " << col;
    }
  }
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

// A 3x3 kernel with padding 1: over 4 channels of 80x80, 6400 positions of 36
// taps, which MultiplyInto unfolds in many blocks.
ConvParams SamePadded3x3() {
  ConvParams p;
  p.kernel_h = p.kernel_w = 3;
  p.padding_h = p.padding_w = 1;
  return p;
}

TEST(MultiplyInto, LargeImageIsUnfoldedBlockByBlock) {
  ftensor input(4, 80, 80);
  input.Rand();
  const Im2ColMatrix columns = Im2Col(input, 0, 4, SamePadded3x3(), 80, 80);
  const arma::fmat kernels(36, 5, arma::fill::randu);
  std::vector<float> product(6400 * 5, -1.f);
  MultiplyInto(columns, kernels, product.data());
  const std::vector<double> expected = NaiveProduct(columns.ToMatrix(), kernels);
  for (size_t i = 0; i < product.size(); ++i) {
    ASSERT_NEAR(product[i], expected[i], 1e-4) << "element " << i;
  }
}

TEST(MultiplyInto, EpilogueAddsEachColumnsBiasThenActivates) {
  // Both ways MultiplyInto runs: a plain matrix (row parts), and an im2col
  // matrix large enough to be unfolded block by block.
  ftensor input(4, 80, 80);
  input.Rand();
  const Im2ColMatrix columns = Im2Col(input, 0, 4, SamePadded3x3(), 80, 80);
  const arma::fmat whole = columns.ToMatrix();
  arma::fmat kernels(36, 5, arma::fill::randu);
  kernels -= 0.5f;  // products of both signs, so ReLU has work to do
  const std::vector<float> bias = {0.5f, -1.f, 0.f, 2.f, -0.25f};
  const std::vector<double> plain = NaiveProduct(whole, kernels);
  for (const Activation activation : {Activation::kNone, Activation::kRelu, Activation::kSilu}) {
    std::vector<float> blocked(6400 * 5, -1.f), rows(6400 * 5, -1.f);
    MultiplyInto(columns, kernels, blocked.data(), {bias.data(), activation});
    MultiplyInto(whole, kernels, rows.data(), {bias.data(), activation});
    for (size_t i = 0; i < plain.size(); ++i) {
      const double v = plain[i] + bias[i / 6400];
      const double expected = activation == Activation::kRelu   ? std::max(v, 0.0)
                              : activation == Activation::kSilu ? v / (1.0 + std::exp(-v))
                                                                : v;
      ASSERT_NEAR(blocked[i], expected, 1e-4) << "element " << i;
      ASSERT_NEAR(rows[i], expected, 1e-4) << "element " << i;
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

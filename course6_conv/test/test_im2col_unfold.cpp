// course6_conv, part 1: Im2ColMatrix::FillBlock (src/im2col_unfold.cpp), the
// im2col unfolding, against a reference written straight from the index
// formula of README §3.3, element by element; then fed through the core's GEMM.
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

// The element at (row, column) of the im2col matrix of channels
// [first, ...) of `input`, from README §3.3: row = oy + ox * out_h,
// column = (c * kh + i) * kw + j, input coordinate
// (oy * stride + i * dilation - padding, ox * stride + j * dilation - padding),
// zero outside the image.
float Expected(const ftensor& input, uint32_t first, const ConvParams& p, uint32_t out_h,
               uint64_t row, uint64_t column) {
  const uint64_t c = column / (p.kernel_h * p.kernel_w);
  const uint64_t i = column / p.kernel_w % p.kernel_h, j = column % p.kernel_w;
  const uint64_t oy = row % out_h, ox = row / out_h;
  const int64_t y = int64_t(oy * p.stride_h + i * p.dilation_h) - p.padding_h;
  const int64_t x = int64_t(ox * p.stride_w + j * p.dilation_w) - p.padding_w;
  if (y < 0 || x < 0 || y >= input.rows() || x >= input.cols()) return 0.f;
  return input.at(first + c, y, x);
}

std::string DescribeUnfold(const ConvParams& p, const ftensor& input, uint32_t out_h,
                           uint32_t out_w) {
  std::ostringstream out;
  out << "input " << input.channels() << "x" << input.rows() << "x" << input.cols() << ", kernel "
      << p.kernel_h << "x" << p.kernel_w << ", stride " << p.stride_h << "x" << p.stride_w
      << ", padding " << p.padding_h << "x" << p.padding_w << ", dilation " << p.dilation_h << "x"
      << p.dilation_w << ", output " << out_h << "x" << out_w;
  return out.str();
}

// Fills rows [first_row, first_row + rows) of columns [first_col, last_col)
// with FillBlock into a buffer pre-filled with a sentinel, and checks every
// element against Expected and that nothing outside the block was touched.
testing::AssertionResult BlockMatches(const ftensor& input, uint32_t first, uint32_t channels,
                                      const ConvParams& p, uint64_t first_row, uint64_t rows,
                                      uint64_t first_col, uint64_t last_col) {
  const uint32_t out_h =
      ConvOutputSize(input.rows(), p.kernel_h, p.stride_h, p.padding_h, p.dilation_h);
  const uint32_t out_w =
      ConvOutputSize(input.cols(), p.kernel_w, p.stride_w, p.padding_w, p.dilation_w);
  const Im2ColMatrix matrix(input, first, channels, p, out_h, out_w);
  constexpr float kSentinel = -777.f;  // not a value of the inputs, not zero
  constexpr size_t kGuard = 16;
  const size_t size = rows * (last_col - first_col);
  std::vector<float> buffer(size + 2 * kGuard, kSentinel);
  matrix.FillBlock(first_row, rows, first_col, last_col, buffer.data() + kGuard);
  const std::string where = DescribeUnfold(p, input, out_h, out_w) + ", FillBlock(first_row " +
                            std::to_string(first_row) + ", rows " + std::to_string(rows) +
                            ", columns " + std::to_string(first_col) + ".." +
                            std::to_string(last_col) + ")";
  for (size_t g = 0; g < kGuard; ++g) {
    if (buffer[g] != kSentinel || buffer[kGuard + size + g] != kSentinel) {
      return testing::AssertionFailure()
             << where << ": wrote outside the block of " << rows << " x " << last_col - first_col
             << " floats (README §3.5: a block is `rows` floats per column)";
    }
  }
  for (uint64_t col = first_col; col < last_col; ++col) {
    for (uint64_t r = 0; r < rows; ++r) {
      const float got = buffer[kGuard + (col - first_col) * rows + r];
      const float want = Expected(input, first, p, out_h, first_row + r, col);
      if (got != want) {
        const uint64_t row = first_row + r;
        return testing::AssertionFailure()
               << where << ": at matrix row " << row << " (output position oy=" << row % out_h
               << ", ox=" << row / out_h << "), column " << col
               << " (tap c=" << col / (p.kernel_h * p.kernel_w)
               << ", i=" << col / p.kernel_w % p.kernel_h << ", j=" << col % p.kernel_w
               << "): expected " << want << ", got " << got
               << (got == kSentinel ? " (never written)" : "")
               << "; see README §3.3 (the index formula) and §3.5 (blocks)";
      }
    }
  }
  return testing::AssertionSuccess();
}

ftensor Counting(uint32_t channels, uint32_t rows, uint32_t cols) {
  ftensor input(channels, rows, cols);
  std::vector<float> values(input.size());
  for (size_t n = 0; n < values.size(); ++n) values[n] = float(n + 1);
  input.Fill(values);  // row-major: channel 0 reads 1, 2, 3, ... along its first row
  return input;
}

TEST(Im2ColUnfold, HandCheckedTwoByTwoKernel) {
  const ftensor input = Counting(1, 3, 3);
  ConvParams p;
  p.kernel_h = p.kernel_w = 2;
  const arma::fmat columns = Im2Col(input, 0, 1, p, 2, 2).ToMatrix();
  // Rows are positions (0,0), (1,0), (0,1), (1,1); columns are taps (0,0), (0,1), (1,0), (1,1).
  const arma::fmat expected = {{1, 2, 4, 5}, {4, 5, 7, 8}, {2, 3, 5, 6}, {5, 6, 8, 9}};
  EXPECT_TRUE(arma::approx_equal(columns, expected, "absdiff", 0.f))
      << "got\n"
      << columns << "see README §3.3 (the first example)";
}

// README §3.4's worked example: a 3x4 image 1..12, a 2x2 kernel, stride 2,
// padding 1: a 2x3 output, so the row order (oy + ox * out_h) matters.
TEST(Im2ColUnfold, WorkedExampleOfTheHandout) {
  const ftensor input = Counting(1, 3, 4);
  ConvParams p;
  p.kernel_h = p.kernel_w = 2;
  p.stride_h = p.stride_w = 2;
  p.padding_h = p.padding_w = 1;
  ASSERT_EQ(ConvOutputSize(3, 2, 2, 1, 1), 2u);
  ASSERT_EQ(ConvOutputSize(4, 2, 2, 1, 1), 3u);
  const arma::fmat columns = Im2Col(input, 0, 1, p, 2, 3).ToMatrix();
  const arma::fmat expected = {{0, 0, 0, 1},   {0, 5, 0, 9}, {0, 0, 2, 3},
                               {6, 7, 10, 11}, {0, 0, 4, 0}, {8, 0, 12, 0}};
  EXPECT_TRUE(arma::approx_equal(columns, expected, "absdiff", 0.f))
      << "got\n"
      << columns << "expected the table of README §3.4 (worked example)";
}

TEST(Im2ColUnfold, PaddingReadsAsZeros) {
  ftensor input(1, 1, 1);
  input.Fill(5.f);
  ConvParams p;
  p.kernel_h = p.kernel_w = 3;
  p.padding_h = p.padding_w = 1;
  const arma::fmat columns = Im2Col(input, 0, 1, p, 1, 1).ToMatrix();
  ASSERT_EQ(columns.n_rows, 1u);
  ASSERT_EQ(columns.n_cols, 9u);
  const arma::fmat expected = {{0, 0, 0, 0, 5, 0, 0, 0, 0}};
  EXPECT_TRUE(arma::approx_equal(columns, expected, "absdiff", 0.f))
      << "got " << columns << "only the centre tap sees the image (README §3.3, zero outside)";
}

TEST(Im2ColUnfold, StridedRowsSkipPaddingAtBothEnds) {
  // 1 channel, 5 rows x 1 column holding 1..5; a 3x1 kernel, stride 2, padding 2
  // rows: out_h = floor((5 + 4 - 3) / 2) + 1 = 4, windows start at rows -2, 0, 2, 4.
  const ftensor input = Counting(1, 5, 1);
  ConvParams p;
  p.kernel_h = 3, p.stride_h = 2, p.padding_h = 2;
  const arma::fmat columns = Im2Col(input, 0, 1, p, 4, 1).ToMatrix();
  const arma::fmat expected = {{0, 0, 1}, {1, 2, 3}, {3, 4, 5}, {5, 0, 0}};
  EXPECT_TRUE(arma::approx_equal(columns, expected, "absdiff", 0.f))
      << "got\n"
      << columns << "see README §3.3 (stride and padding in the input coordinate)";
}

// With stride 1 and padding >= the kernel's reach, each tap's column holds
// every input pixel exactly once, the rest zeros: the sum of the matrix is
// (taps) x (sum of the image), whatever the order. Windows entirely in the
// padding (the corners) are rows of zeros.
TEST(Im2ColUnfold, PaddingWiderThanTheKernelReachGivesZeroWindows) {
  const ftensor input = Counting(1, 2, 3);  // sum 21
  ConvParams p;
  p.kernel_h = p.kernel_w = 2;
  p.padding_h = p.padding_w = 3;
  const uint32_t out_h = ConvOutputSize(2, 2, 1, 3, 1), out_w = ConvOutputSize(3, 2, 1, 3, 1);
  ASSERT_EQ(out_h, 7u);
  ASSERT_EQ(out_w, 8u);
  const arma::fmat columns = Im2Col(input, 0, 1, p, out_h, out_w).ToMatrix();
  EXPECT_EQ(arma::accu(columns), 4 * 21.f) << "see README §3.3 (zero outside the image)";
  EXPECT_EQ(arma::accu(arma::abs(columns.row(0))), 0.f) << "position (0,0) lies in the padding";
  EXPECT_EQ(arma::accu(arma::abs(columns.row(out_h * out_w - 1))), 0.f)
      << "the last position lies in the padding";
  EXPECT_TRUE(BlockMatches(input, 0, 1, p, 0, out_h * out_w, 0, 4));
}

// Random geometries (strides and dilations 1..3, paddings up to 4, odd and
// non-square sizes, a channel range that does not start at 0), whole matrix.
TEST(Im2ColUnfold, RandomGeometriesMatchTheIndexFormula) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<uint32_t> small(1, 3), size(3, 12), pad(0, 4);
  int checked = 0;
  for (int trial = 0; trial < 60; ++trial) {
    ConvParams p;
    p.kernel_h = small(rng), p.kernel_w = small(rng);
    p.stride_h = small(rng), p.stride_w = small(rng);
    p.dilation_h = small(rng), p.dilation_w = small(rng);
    p.padding_h = pad(rng), p.padding_w = pad(rng);
    ftensor input(4, size(rng), size(rng));
    input.Rand();
    input.data() += 1.f;  // no zeros in the image: a missing write cannot look right
    const uint32_t out_h =
        ConvOutputSize(input.rows(), p.kernel_h, p.stride_h, p.padding_h, p.dilation_h);
    const uint32_t out_w =
        ConvOutputSize(input.cols(), p.kernel_w, p.stride_w, p.padding_w, p.dilation_w);
    if (out_h == 0 || out_w == 0) continue;
    const uint32_t first = trial % 3, channels = 1 + trial % 2;
    ASSERT_TRUE(BlockMatches(input, first, channels, p, 0, uint64_t{out_h} * out_w, 0,
                             uint64_t{channels} * p.kernel_h * p.kernel_w))
        << "trial " << trial;
    ++checked;
  }
  EXPECT_GT(checked, 40);
}

// MultiplyInto asks for blocks of rows that start and end anywhere, and
// ToMatrix for single columns: README §3.5.
TEST(Im2ColUnfold, BlocksStartingAndEndingMidColumn) {
  struct Geometry {
    uint32_t kh, kw, stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, height, width;
  };
  const Geometry geometries[] = {
      {3, 3, 1, 1, 1, 1, 1, 1, 9, 7},    // the common 3x3 "same" convolution, non-square
      {3, 3, 2, 2, 1, 1, 1, 1, 11, 9},   // downsampling, stride 2
      {3, 2, 3, 3, 2, 1, 1, 1, 13, 10},  // stride 3, non-square kernel
      {3, 3, 1, 2, 1, 0, 2, 1, 9, 7},    // dilation 2 in one axis, strides differ
      {2, 2, 1, 1, 3, 4, 1, 1, 5, 3},    // padding wider than the kernel reaches
      {5, 3, 2, 1, 2, 1, 2, 3, 15, 11},  // everything at once
  };
  for (const Geometry& g : geometries) {
    ConvParams p;
    p.kernel_h = g.kh, p.kernel_w = g.kw, p.stride_h = g.stride_h, p.stride_w = g.stride_w;
    p.padding_h = g.pad_h, p.padding_w = g.pad_w, p.dilation_h = g.dil_h, p.dilation_w = g.dil_w;
    ftensor input(3, g.height, g.width);
    input.Rand();
    input.data() += 1.f;
    const uint64_t out_h =
        ConvOutputSize(g.height, p.kernel_h, p.stride_h, p.padding_h, p.dilation_h);
    const uint64_t out_w =
        ConvOutputSize(g.width, p.kernel_w, p.stride_w, p.padding_w, p.dilation_w);
    ASSERT_GT(out_h, 2u);
    ASSERT_GT(out_w, 2u);
    const uint64_t n = out_h * out_w, taps = uint64_t{2} * p.kernel_h * p.kernel_w;
    struct Block {
      uint64_t first_row, rows, first_col, last_col;
    };
    const Block blocks[] = {
        {out_h / 2, out_h, 0, taps},             // starts and ends mid output column
        {1, n - 2, 3, taps - 1},                 // all but the ends, some columns
        {out_h - 1, out_h + 2, taps / 2, taps},  // 1 row, a whole output column, 1 row
        {n - 1, 1, 0, taps},                     // the last row alone
        {out_h * 2, out_h, 1, 2},                // exactly one output column, one tap
        {2, 3 * out_h - 1, 0, taps},             // across four output columns
    };
    for (const Block& b : blocks) {
      EXPECT_TRUE(BlockMatches(input, 1, 2, p, b.first_row, b.rows, b.first_col, b.last_col));
    }
  }
}

// The im2col matrix times the kernels by the definition, in double.
std::vector<double> NaiveProduct(const ftensor& input, uint32_t channels, const ConvParams& p,
                                 uint32_t out_h, uint32_t out_w, const arma::fmat& kernels) {
  const uint64_t n = uint64_t{out_h} * out_w;
  std::vector<double> product(n * kernels.n_cols, 0.0);
  for (uint32_t c = 0; c < kernels.n_cols; ++c) {
    for (uint64_t r = 0; r < n; ++r) {
      for (uint32_t k = 0; k < uint32_t{channels} * p.kernel_h * p.kernel_w; ++k) {
        product[r + c * n] += double(Expected(input, 0, p, out_h, r, k)) * kernels(k, c);
      }
    }
  }
  return product;
}

// 16 channels of 80x80 under a padded 3x3 kernel: 6400 positions of 144 taps,
// which MultiplyInto unfolds with FillBlock in blocks of ~900 rows, each
// multiplied at once, with the bias and activation applied per block.
TEST(Im2ColUnfold, FeedsTheCoreGemmBlockByBlock) {
  ftensor input(16, 80, 80);
  input.Rand();
  ConvParams p;
  p.kernel_h = p.kernel_w = 3;
  p.padding_h = p.padding_w = 1;
  const Im2ColMatrix columns = Im2Col(input, 0, 16, p, 80, 80);
  arma::fmat kernels(144, 3, arma::fill::randu);
  kernels -= 0.5f;  // products of both signs, so ReLU has work to do
  const std::vector<float> bias = {0.5f, -1.f, 0.25f};
  const std::vector<double> plain = NaiveProduct(input, 16, p, 80, 80, kernels);
  for (const Activation activation : {Activation::kNone, Activation::kRelu, Activation::kSilu}) {
    std::vector<float> product(6400 * 3, -1.f);
    MultiplyInto(columns, kernels, product.data(), {bias.data(), activation});
    for (size_t i = 0; i < plain.size(); ++i) {
      const double v = plain[i] + bias[i / 6400];
      const double expected = ReferenceActivate(v, activation);
      ASSERT_NEAR(product[i], expected, 1e-4)
          << "element " << i << " (position " << i % 6400 << ", channel " << i / 6400
          << "), activation " << int(activation) << "; see README §3.5 (blocks) and §3.7";
    }
  }
}

}  // namespace
}  // namespace kuiper

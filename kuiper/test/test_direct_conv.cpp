// The direct route of MultiplyInto (kuiper/src/layer/direct_conv.cpp): the
// product a * kernels of any im2col matrix, computed from the input itself
// with packed kernels (no lab code runs: these pass in the student build).
// References are convolutions in double, written out here.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <ostream>
#include <random>
#include <vector>

#include "activation_reference.hpp"
#include "error_measures.hpp"
#include "kuiper/error.hpp"
#include "kuiper/layers/convolution.hpp"

namespace kuiper {
namespace {

struct DirectCase {
  uint32_t in_c, out_c, h, w, kh, kw, stride, pad, dilation;
};

// How ctest names each case, e.g. 512to64_3x3_s1_p1_d1_at7x7.
void PrintTo(const DirectCase& c, std::ostream* os) {
  *os << c.in_c << "to" << c.out_c << "_" << c.kh << "x" << c.kw << "_s" << c.stride << "_p"
      << c.pad << "_d" << c.dilation << "_at" << c.h << "x" << c.w;
}

ConvParams Params(const DirectCase& tc) {
  ConvParams p;
  p.in_channels = tc.in_c, p.out_channels = tc.out_c;
  p.kernel_h = tc.kh, p.kernel_w = tc.kw;
  p.stride_h = p.stride_w = tc.stride;
  p.padding_h = p.padding_w = tc.pad;
  p.dilation_h = p.dilation_w = tc.dilation;
  return p;
}

// (in_c kh kw) x out_c, kernel o in column o, taps in im2col's order.
arma::fmat RandomKernels(const DirectCase& tc, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.f, 1.f);
  arma::fmat kernels(tc.in_c * tc.kh * tc.kw, tc.out_c);
  const float scale = 1.f / std::sqrt(float(kernels.n_rows));
  kernels.imbue([&] { return normal(rng) * scale; });
  return kernels;
}

// out(o, y, x) = sum over c, i, j of in(c0 + c, y s + i d - pad, x s + j d - pad)
// * kernel o's tap (c, i, j), in double; column-major (y + x * out_h) per channel.
std::vector<double> Reference(const ftensor& input, uint32_t c0, const arma::fmat& kernels,
                              const DirectCase& tc, uint32_t out_h, uint32_t out_w) {
  std::vector<double> out(size_t{tc.out_c} * out_h * out_w, 0.0);
  for (uint32_t o = 0; o < tc.out_c; ++o) {
    for (uint32_t x = 0; x < out_w; ++x) {
      for (uint32_t y = 0; y < out_h; ++y) {
        double sum = 0;
        for (uint32_t c = 0; c < tc.in_c; ++c) {
          for (uint32_t i = 0; i < tc.kh; ++i) {
            for (uint32_t j = 0; j < tc.kw; ++j) {
              const int64_t iy = int64_t{y} * tc.stride + i * tc.dilation - tc.pad;
              const int64_t ix = int64_t{x} * tc.stride + j * tc.dilation - tc.pad;
              if (iy < 0 || ix < 0 || iy >= input.rows() || ix >= input.cols()) continue;
              sum += double(input.at(c0 + c, iy, ix)) * kernels((c * tc.kh + i) * tc.kw + j, o);
            }
          }
        }
        out[(size_t{o} * out_w + x) * out_h + y] = sum;
      }
    }
  }
  return out;
}

// Float32 rounding only; a wrong tap, position or channel is off by far more.
constexpr double kTolerance = 2e-6;

class DirectGeometries : public ::testing::TestWithParam<DirectCase> {};

TEST_P(DirectGeometries, MatchesTheReferenceConvolution) {
  const DirectCase& tc = GetParam();
  std::mt19937 rng(tc.in_c * 131 + tc.out_c * 17 + tc.h * 7 + tc.w + tc.kh + tc.stride);
  ftensor input(tc.in_c, tc.h, tc.w);
  input.Rand();
  const arma::fmat kernels = RandomKernels(tc, rng);
  const ConvParams p = Params(tc);
  const uint32_t out_h = ConvOutputSize(tc.h, tc.kh, tc.stride, tc.pad, tc.dilation);
  const uint32_t out_w = ConvOutputSize(tc.w, tc.kw, tc.stride, tc.pad, tc.dilation);
  ASSERT_GT(out_h * out_w, 0u);
  std::vector<float> product(size_t{tc.out_c} * out_h * out_w, NAN);
  DirectMultiplyInto(Im2Col(input, 0, tc.in_c, p, out_h, out_w), DirectKernels(kernels),
                     product.data());
  EXPECT_LE(RelativeError(product, Reference(input, 0, kernels, tc, out_h, out_w)), kTolerance)
      << "every output position of every output channel, borders included";
}

// The kernel's edges (direct_conv.cpp): register tiles of 4 x 16 output
// channels and 6 positions (8 for 3 x 16, 12 for 2 x 16, 24 for 16), or
// column tiles, partial sums of at most 64 taps in whole channels, ranges
// of whole output columns.
INSTANTIATE_TEST_SUITE_P(
    Shapes, DirectGeometries,
    ::testing::Values(DirectCase{512, 64, 7, 7, 3, 3, 1, 1, 1},   // 49 positions: 8 tiles + 1
                      DirectCase{40, 80, 9, 5, 3, 3, 2, 1, 1},    // 64 + 16 channels; 360 taps
                      DirectCase{8, 48, 13, 11, 3, 3, 1, 1, 1},   // one block of 3 x 16
                      DirectCase{8, 32, 17, 3, 3, 3, 1, 1, 1},    // 2 x 16: tiles of 12
                      DirectCase{8, 16, 30, 2, 3, 3, 1, 1, 1},    // 16: tiles of 24
                      DirectCase{3, 64, 40, 38, 7, 7, 2, 3, 1},   // a stem: 49 taps per channel
                      DirectCase{3, 32, 22, 22, 6, 6, 2, 2, 1},   // YOLOv5's 6x6 stem
                      DirectCase{64, 64, 28, 28, 1, 1, 2, 0, 1},  // 1x1 stride 2, no padding
                      DirectCase{16, 64, 90, 90, 3, 3, 1, 1, 1},  // 8100 positions: many ranges
                      DirectCase{16, 16, 9, 11, 3, 1, 1, 1, 1},   // a 3x1 kernel
                      DirectCase{16, 16, 12, 12, 3, 3, 1, 2, 2},  // dilation 2
                      DirectCase{16, 16, 10, 10, 3, 3, 3, 0, 1},  // stride 3
                      DirectCase{16, 32, 1, 1, 3, 3, 1, 1, 1},    // one output, all padding
                      DirectCase{32, 16, 2, 3, 5, 5, 1, 3, 1},    // padding past the kernel's reach
                      // Output columns of 48 rows or more: column tiles of 8 channels and
                      // 1-3 registers of 16 rows, the last register partly masked.
                      DirectCase{3, 32, 130, 9, 6, 6, 2, 2, 1},     // 65 rows: 48 + 17
                      DirectCase{16, 48, 100, 5, 3, 3, 1, 1, 1},    // 100 rows: 32 + 32 + 36
                      DirectCase{40, 80, 96, 4, 3, 3, 2, 1, 1},     // 48 rows; 360 taps; 64 + 16
                      DirectCase{8, 16, 160, 3, 3, 3, 3, 1, 2},     // stride 3, dilation 2
                      DirectCase{8, 16, 100, 3, 5, 5, 2, 6, 1},     // all-padding columns
                      DirectCase{16, 16, 100, 4, 1, 1, 2, 0, 1}));  // 1x1 stride 2

TEST(DirectConv, ReadsTheGroupsChannelsOnly) {
  const DirectCase tc{16, 32, 9, 10, 3, 3, 2, 1, 1};
  std::mt19937 rng(5);
  ftensor input(48, tc.h, tc.w);
  input.Rand();
  const arma::fmat kernels = RandomKernels(tc, rng);
  std::vector<float> product(32 * 5 * 5, NAN);
  DirectMultiplyInto(Im2Col(input, 16, 16, Params(tc), 5, 5), DirectKernels(kernels),
                     product.data());
  EXPECT_LE(RelativeError(product, Reference(input, 16, kernels, tc, 5, 5)), kTolerance)
      << "Im2Col(input, 16, 16, ...) is channels 16..31";
}

TEST(DirectConv, AppliesTheEpilogueAfterTheBias) {
  // Register tiles (8 x 7 outputs) and column tiles (50 x 3).
  for (const DirectCase tc :
       {DirectCase{24, 80, 8, 7, 3, 3, 1, 1, 1}, DirectCase{24, 80, 50, 3, 3, 3, 1, 1, 1}}) {
    std::mt19937 rng(11);
    ftensor input(tc.in_c, tc.h, tc.w);
    input.Rand();
    input.Transform([](float v) { return v - 0.5f; });  // outputs of both signs
    const arma::fmat kernels = RandomKernels(tc, rng);
    std::vector<float> bias(tc.out_c);
    for (size_t o = 0; o < bias.size(); ++o) bias[o] = 0.05f * (float(o) - 40);
    const std::vector<double> conv = Reference(input, 0, kernels, tc, tc.h, tc.w);
    for (const Activation activation : {Activation::kNone, Activation::kRelu, Activation::kSilu}) {
      std::vector<float> product(conv.size(), NAN);
      DirectMultiplyInto(Im2Col(input, 0, tc.in_c, Params(tc), tc.h, tc.w), DirectKernels(kernels),
                         product.data(), {bias.data(), activation});
      std::vector<double> expected(conv.size());
      for (size_t i = 0; i < conv.size(); ++i) {
        expected[i] = ReferenceActivate(conv[i] + bias[i / (tc.h * tc.w)], activation);
      }
      EXPECT_LE(RelativeError(product, expected), kTolerance)
          << tc.h << "x" << tc.w << ", activation " << int(activation)
          << ": activation(conv + bias[o])";
    }
  }
}

TEST(DirectConv, SameInsideAParallelRegion) {
  // A batch item runs all its tasks on one thread: the same sums in the same order.
  const DirectCase tc{32, 64, 20, 20, 3, 3, 2, 1, 1};
  std::mt19937 rng(3);
  ftensor input(tc.in_c, tc.h, tc.w);
  input.Rand();
  const DirectKernels kernels(RandomKernels(tc, rng));
  const Im2ColMatrix a = Im2Col(input, 0, tc.in_c, Params(tc), 10, 10);
  std::vector<float> outside(64 * 10 * 10), inside(64 * 10 * 10);
  DirectMultiplyInto(a, kernels, outside.data());
#pragma omp parallel num_threads(2)
  {
#pragma omp single
    DirectMultiplyInto(a, kernels, inside.data());
  }
  EXPECT_EQ(inside, outside);
}

// Partial sums of at most 64 taps in whole channels (63 here) added to
// running sums, as the im2col route's GEMM sums parts of 64 products
// (im2col.cpp): ResNet18's 512-channel layer rounds about as much as on the
// im2col route, within 1.1x (measured: rms 1.86e-7 against 1.79e-7; with
// partial sums of 288 taps 2.2e-7, 1.2x), on the inputs a layer meets after
// a ReLU.
TEST(DirectConv, RoundsAboutAsMuchAsTheIm2ColGemm) {
  const DirectCase tc{512, 64, 7, 7, 3, 3, 1, 1, 1};
  std::mt19937 rng(21);
  std::normal_distribution<float> normal(0.f, 1.f);
  ftensor input(tc.in_c, tc.h, tc.w);
  input.Transform([&](float) { return std::max(0.f, normal(rng)); });
  const arma::fmat kernels = RandomKernels(tc, rng);
  const std::vector<double> reference = Reference(input, 0, kernels, tc, 7, 7);
  arma::fmat unfolded(49, 9 * tc.in_c, arma::fill::zeros);  // im2col, by hand (no lab code)
  for (uint32_t c = 0; c < tc.in_c; ++c) {
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) {
        for (uint32_t x = 0; x < 7; ++x) {
          for (uint32_t y = 0; y < 7; ++y) {
            const int64_t iy = int64_t{y} + i - 1, ix = int64_t{x} + j - 1;
            if (iy < 0 || ix < 0 || iy >= 7 || ix >= 7) continue;
            unfolded(y + x * 7, c * 9 + i * 3 + j) = input.at(c, iy, ix);
          }
        }
      }
    }
  }
  arma::fmat im2col(49, tc.out_c);
  MultiplyInto(unfolded, kernels, im2col.memptr());
  std::vector<float> direct(reference.size(), NAN);
  DirectMultiplyInto(Im2Col(input, 0, tc.in_c, Params(tc), 7, 7), DirectKernels(kernels),
                     direct.data());
  const double im2col_error = RmsError(im2col.memptr(), reference);
  EXPECT_LE(RmsError(direct.data(), reference), 1.1 * im2col_error)
      << "im2col's rms error " << im2col_error;
}

TEST(DirectKernels, PacksEachBlockTapByTap) {
  // 80 output channels: a block of 64, then one of 16. In a block starting at
  // output channel o0 with `width` channels, tap r's weight for channel o0 + o
  // is at o0 * rows + r * width + o (convolution.hpp, DirectKernels).
  const DirectCase tc{3, 80, 0, 0, 3, 3, 1, 1, 1};
  std::mt19937 rng(8);
  const arma::fmat kernels = RandomKernels(tc, rng);
  const DirectKernels packed(kernels);
  ASSERT_EQ(packed.block_out(), 64u);
  for (uint64_t o = 0; o < 80; ++o) {
    const uint64_t o0 = o < 64 ? 0 : 64, width = o < 64 ? 64 : 16;
    for (uint64_t r = 0; r < 27; ++r) {
      ASSERT_EQ(packed.data()[o0 * 27 + r * width + (o - o0)], kernels(r, o))
          << "tap " << r << ", output channel " << o;
    }
  }
  EXPECT_TRUE(arma::all(arma::vectorise(packed.Matrix() == kernels)))
      << "Matrix() unpacks to exactly the matrix it was made from";
}

TEST(DirectConv, RefusesAnotherKernelSize) {
  const DirectCase tc{16, 16, 8, 8, 3, 3, 1, 1, 1};
  std::mt19937 rng(1);
  const DirectKernels kernels(RandomKernels(tc, rng));
  ftensor input(16, 8, 8);
  std::vector<float> product(16 * 8 * 8);
  EXPECT_THROW(DirectMultiplyInto(Im2Col(input, 0, 8, Params(tc), 8, 8), kernels, product.data()),
               ShapeError)
      << "8 input channels for kernels of 16";
  EXPECT_THROW(DirectKernels(arma::fmat(9, 24, arma::fill::zeros)), ShapeError)
      << "24 output channels: not whole registers of 16";
}

TEST(GroupKernels, TakesDirectForSmallOutputsOrFewChannels) {
  RuntimeOptions options;
  const auto route = [&options](uint32_t in_c, uint32_t out_c, uint32_t k, uint32_t stride,
                                uint64_t positions) {
    const ConvParams p = Params({in_c, out_c, 0, 0, k, k, stride, k / 2, 1});
    return GroupKernels(arma::fmat(in_c * k * k, out_c, arma::fill::zeros), p, positions, options)
        .direct();
  };
  // Only where the CPU has the AVX-512 the kernel is written for.
  const bool fast = DirectKernels::Fast();
  EXPECT_EQ(route(256, 512, 3, 2, 49), fast) << "ResNet18's layer4, stride 2";
  EXPECT_EQ(route(256, 512, 1, 2, 49), fast) << "1x1 stride 2";
  EXPECT_EQ(route(128, 256, 3, 2, 256), fast) << "256 positions";
  EXPECT_FALSE(route(128, 256, 3, 2, 257)) << "257 positions: im2col";
  EXPECT_FALSE(route(256, 512, 3, 2, 0)) << "size not declared: im2col";
  EXPECT_EQ(route(32, 64, 3, 2, 160 * 160), fast) << "64 output channels: direct at any size";
  EXPECT_EQ(route(3, 32, 6, 2, 320 * 320), fast) << "YOLOv5s's stem";
  EXPECT_EQ(route(3, 64, 7, 2, 0), fast) << "64 output channels, size not declared";
  EXPECT_EQ(route(64, 128, 3, 2, 80 * 80), fast) << "128 output channels: direct at any size";
  EXPECT_FALSE(route(128, 144, 3, 2, 257)) << "144 output channels at 257 positions: im2col";
  EXPECT_FALSE(route(64, 128, 1, 2, 28 * 28)) << "a 1x1 kernel only for small outputs";
  EXPECT_EQ(route(64, 128, 1, 2, 256), fast) << "a 1x1 kernel at 256 positions";
  EXPECT_FALSE(route(64, 64, 3, 1, 49)) << "Winograd's layers stay on Winograd";
  EXPECT_FALSE(route(512, 512, 3, 1, 49)) << "ResNet18's 512-channel 3x3 stride 1: Winograd's";
  EXPECT_FALSE(route(512, 512, 1, 1, 49)) << "1x1 stride 1: the input is the matrix";
  EXPECT_FALSE(route(512, 72, 3, 1, 49)) << "72 output channels: not whole registers";
  options.winograd_conv = false;
  EXPECT_FALSE(route(64, 64, 3, 1, 49))
      << "Winograd's layers go back to im2col when it is off, not to the direct route";
  EXPECT_EQ(route(256, 512, 3, 2, 49), fast) << "the direct route's own layers do not depend on it";
  options.winograd_conv = true;
  options.direct_conv = false;
  EXPECT_FALSE(route(256, 512, 3, 2, 49)) << "RuntimeOptions::direct_conv off";
}

TEST(GroupKernels, DirectKeepsOneFormOnly) {
  const GroupKernels kernels(arma::fmat(9 * 512, 64, arma::fill::ones),
                             Params({512, 64, 0, 0, 3, 3, 2, 1, 1}), 49);
  if (!DirectKernels::Fast()) {
    EXPECT_FALSE(kernels.direct()) << "no AVX-512: the im2col route's matrix";
    return;
  }
  ASSERT_TRUE(kernels.direct());
  EXPECT_TRUE(kernels.matrix().is_empty()) << "the GEMM matrix is not kept beside the packed one";
}

}  // namespace
}  // namespace kuiper

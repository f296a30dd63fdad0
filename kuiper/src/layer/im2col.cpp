// The core half of the convolution: ConvOutputSize, the Im2ColMatrix
// description and MultiplyInto, the GEMM that consumes it. Lab course6 writes
// the unfolding itself (Im2ColMatrix::FillBlock, course6_conv/src/im2col_unfold.cpp)
// and combines these per group (ConvolutionLayer::ComputeGroups).
#include <fmt/format.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <string_view>

#include "kuiper/error.hpp"
#include "kuiper/layers/convolution.hpp"
#include "kuiper/parallel.hpp"

namespace kuiper {

uint32_t ConvOutputSize(uint32_t in, uint32_t kernel, uint32_t stride, uint32_t padding,
                        uint32_t dilation) {
  // 64-bit, so that large paddings or dilations cannot wrap around.
  const int64_t span = int64_t{dilation} * (int64_t{kernel} - 1) + 1;
  const int64_t room = int64_t{in} + 2 * int64_t{padding} - span;
  if (kernel == 0 || stride == 0 || dilation == 0 || room < 0) return 0;
  return static_cast<uint32_t>(room / stride + 1);
}

namespace {

// C (column-major, leading dimension ldc) = A (m x k, leading dimension lda)
// times b, one GEMM; then the epilogue on those m x n values while they are
// in the cache.
//
// The GEMM is oneDNN's, not OpenBLAS's: oneDNN generates its kernels for the
// CPU it runs on (AVX-512 where there is AVX-512), while Debian 12's OpenBLAS
// (0.3.21) predates the newest CPUs, and the course's machines pin it to its
// AVX2 (Haswell) kernels with OPENBLAS_CORETYPE, where oneDNN doubled the
// convolutions' speed (docs/performance.md#onednn). It is the
// library PyTorch's own convolutions use. It runs on the calling thread: the
// engine's loops (parallel.hpp) keep oneDNN's OpenMP to one thread.
// dnnl_sgemm is row-major: column-major C = A * B is row-major C' = B' * A'.
//
// The inner dimension goes to oneDNN kGemmDepth at a time, each part after
// the first with beta = 1: oneDNN sums a call's products from zero in
// registers and then adds them to C, so every output is a sum of partial sums
// of 64 products. In one call its running sums span 256 products, and a float
// sum's rounding grows with the terms added to one running sum: YOLOv5s's 1x1
// layers of 512 channels and its 3x3 layers of 128 and more rounded more than
// PyTorch's float32 convolutions (docs/performance.md#fidelity). Each part
// reads and writes C once more, a block that is in the cache.
constexpr int64_t kGemmDepth = 64;
void Gemm(const float* a, int64_t m, int64_t lda, const arma::fmat& b, float* c, int64_t ldc,
          const Epilogue& epilogue) {
  const int64_t k = b.n_rows, n = b.n_cols;
  const int64_t ldb = std::max<int64_t>(k, 1);
  for (int64_t k0 = 0; k0 == 0 || k0 < k; k0 += kGemmDepth) {
    dnnl_sgemm('N', 'N', n, m, std::min(kGemmDepth, k - k0), 1.f, b.memptr() + k0, ldb,
               a + k0 * lda, lda, k0 == 0 ? 0.f : 1.f, c, ldc);
  }
  if (!epilogue.bias && epilogue.activation == Activation::kNone) return;
  for (int64_t col = 0; col < n; ++col) {
    const float bias = epilogue.bias ? epilogue.bias[col] : 0.f;
    AddBiasAndActivate(c + col * ldc, m, bias, epilogue.activation);
  }
}

// oneDNN's AVX-512 GEMM kernel computes 48 output positions (rows of a) at a
// time; a product with a few positions more runs them through a slow
// remainder path, slower than the 48 and the rest as two products. So
// products are cut at multiples of 48 rows (docs/performance.md#gemm-rows).
constexpr int64_t kGemmRows = 48;

// a (m x b.n_rows at `a`, column-major) * b into `product`, too small a
// product to cut into blocks of rows: shared among the threads by output
// columns (b's columns), in whole units of 16 (a vector of the GEMM kernel).
// The rows past the last multiple of 48 are a second GEMM (see kGemmRows).
void WholeGemm(const float* a, int64_t m, const arma::fmat& b, float* product,
               const Epilogue& epilogue) {
  const int64_t whole = m > kGemmRows ? m / kGemmRows * kGemmRows : m;
  const int64_t n = b.n_cols, units = (n + 15) / 16;
  const bool worth_splitting = m * n * static_cast<int64_t>(b.n_rows) >= (int64_t{1} << 18);
  ParallelRanges(units, worth_splitting ? MaxThreads() : 1, [&](int64_t begin, int64_t end, int) {
    const int64_t first = begin * 16, cols = std::min(end * 16, n) - first;
    // A view of b's columns first .. first + cols, which are contiguous.
    const arma::fmat part(const_cast<float*>(b.colptr(first)), b.n_rows, cols,
                          /*copy_aux_mem=*/false, /*strict=*/true);
    Epilogue mine = epilogue;
    if (mine.bias) mine.bias += first;
    Gemm(a, whole, m, part, product + first * m, m, mine);
    if (whole < m) Gemm(a + whole, m - whole, m, part, product + first * m + whole, m, mine);
  });
}

void CheckInnerSizes(uint64_t a_rows, uint64_t a_cols, const arma::fmat& b) {
  if (a_cols != b.n_rows) {
    throw ShapeError(fmt::format("MultiplyInto: ({}x{}) * ({}x{}) do not fit", a_rows, a_cols,
                                 b.n_rows, b.n_cols));
  }
}

}  // namespace

Im2ColMatrix::Im2ColMatrix(const ftensor& input, uint32_t first_channel, uint32_t channels,
                           const ConvParams& params, uint32_t out_h, uint32_t out_w)
    : input_(input),
      first_channel_(first_channel),
      channels_(channels),
      params_(params),
      out_h_(out_h),
      out_w_(out_w) {
  if (uint64_t{first_channel} + channels > input.channels()) {
    throw ShapeError(fmt::format("Im2Col: channels {}..{} asked of a tensor with {} channels",
                                 first_channel, uint64_t{first_channel} + channels,
                                 input.channels()));
  }
}

const float* Im2ColMatrix::InPlace() const {
  const ConvParams& p = params_;
  const bool identity = p.kernel_h == 1 && p.kernel_w == 1 && p.stride_h == 1 && p.stride_w == 1 &&
                        p.padding_h == 0 && p.padding_w == 0 && out_h_ == input_.rows() &&
                        out_w_ == input_.cols();
  // Channel slices are contiguous in the cube: (H*W) x channels column-major.
  return identity && channels_ > 0 ? input_.slice(first_channel_).memptr() : nullptr;
}

arma::fmat Im2ColMatrix::ToMatrix() const {
  const int64_t rows = n_rows(), cols = n_cols();
  // A 1x1 kernel's matrix is the input itself (the route that never calls FillBlock).
  if (const float* in_place = InPlace()) return arma::fmat(in_place, rows, cols);
  arma::fmat matrix(rows, cols, arma::fill::none);  // every element is written below
  // Every column is independent: share them out among the threads.
  ParallelFor(
      cols, [&](int64_t col) { FillBlock(0, rows, col, col + 1, matrix.colptr(col)); },
      rows * cols >= (1 << 15));
  return matrix;
}

void MultiplyInto(const arma::fmat& a, const arma::fmat& b, float* product,
                  const Epilogue& epilogue) {
  CheckInnerSizes(a.n_rows, a.n_cols, b);
  if (a.n_rows == 0 || b.n_cols == 0) return;  // an empty product: nothing to write
  WholeGemm(a.memptr(), a.n_rows, b, product, epilogue);
}

void MultiplyInto(const Im2ColMatrix& a, const arma::fmat& b, float* product,
                  const Epilogue& epilogue) {
  CheckInnerSizes(a.n_rows(), a.n_cols(), b);
  const int64_t m = a.n_rows(), k = a.n_cols();
  if (m == 0 || b.n_cols == 0) return;
  const float* in_place = a.InPlace();
  // About 512 KB of rows per block (a block and the packed kernels stay in
  // L2), but at least 256 rows for the GEMM to run at speed. The block count is
  // a multiple of the thread count so every thread gets the same share, and
  // blocks are whole units of 48 rows (kGemmRows) but for the last.
  const int threads = MaxThreads();
  const int64_t target_rows = std::max<int64_t>(256, (int64_t{1} << 17) / std::max<int64_t>(k, 1));
  int64_t blocks = (m + target_rows - 1) / target_rows;
  if (blocks < 2 * threads) {
    if (in_place) return WholeGemm(in_place, m, b, product, epilogue);
    return WholeGemm(a.ToMatrix().memptr(), m, b, product, epilogue);
  }
  blocks = (blocks + threads - 1) / threads * threads;
  const int64_t units = (m + kGemmRows - 1) / kGemmRows;
  const int64_t max_rows = (units + blocks - 1) / blocks * kGemmRows;
  // One buffer per thread, allocated before the loop.
  const auto buffers =
      std::make_unique_for_overwrite<float[]>(in_place ? 0 : threads * max_rows * k);
  ParallelRanges(blocks, blocks, [&](int64_t t, int64_t, int slot) {
    const int64_t first = std::min(m, units * t / blocks * kGemmRows);
    const int64_t rows = std::min(m, units * (t + 1) / blocks * kGemmRows) - first;
    if (rows <= 0) return;  // more blocks than 48-row units
    if (in_place) {         // a 1x1 kernel: the block is rows of the input itself
      Gemm(in_place + first, rows, m, b, product + first, m, epilogue);
      return;
    }
    float* buffer = buffers.get() + slot * max_rows * k;
    a.FillBlock(first, rows, 0, k, buffer);
    Gemm(buffer, rows, rows, b, product + first, m, epilogue);
  });
}

GroupKernels::GroupKernels(arma::fmat matrix, const ConvParams& p, uint64_t expected_positions,
                           const RuntimeOptions& options) {
  const uint32_t in_per_group = p.in_channels / p.groups, out_per_group = p.out_channels / p.groups;
  // Each switch governs its own layers: with Winograd off, Winograd's layers
  // go back to im2col, not to the direct route.
  const bool winograd_shape = p.kernel_h == 3 && p.kernel_w == 3 && p.stride_h == 1 &&
                              p.stride_w == 1 && p.dilation_h == 1 && p.dilation_w == 1 &&
                              in_per_group >= 16 && out_per_group >= 16 &&
                              uint64_t{in_per_group} * out_per_group <= kWinogradMaxChannels &&
                              matrix.n_rows == 9 * in_per_group;
  // F(4x4) only up to 256 x 256: at 512 x 512 (7x7) it was slower than the direct
  // route, which F(2x2) beats (docs/performance.md#winograd-f4).
  const bool f4 = options.winograd_f4 && uint64_t{in_per_group} * out_per_group <= 256 * 256;
  const bool one_by_one = p.kernel_h == 1 && p.kernel_w == 1;
  const bool direct_size = (out_per_group <= kDirectAnySizeChannels && !one_by_one) ||
                           (expected_positions > 0 && expected_positions <= kDirectMaxPositions);
  if (options.winograd_conv && winograd_shape) {
    winograd_ = std::make_shared<const WinogradKernels>(matrix, f4 ? 4 : 2);
  } else if (options.direct_conv && DirectKernels::Fast() && !winograd_shape &&
             DirectKernels::Fits(out_per_group) && direct_size &&
             !(one_by_one && p.stride_h == 1 && p.stride_w == 1)) {
    direct_ = std::make_shared<const DirectKernels>(std::move(matrix));
  } else {
    matrix_ = std::move(matrix);
  }
}

void MultiplyInto(const Im2ColMatrix& a, const GroupKernels& b, float* product,
                  const Epilogue& epilogue) {
  if (b.winograd()) return WinogradMultiplyInto(a, b.winograd_kernels(), product, epilogue);
  if (b.direct()) return DirectMultiplyInto(a, b.direct_kernels(), product, epilogue);
  MultiplyInto(a, b.matrix(), product, epilogue);
}

}  // namespace kuiper

// The core half of the convolution: ConvOutputSize, Im2Col and MultiplyInto.
// Lab course6 (ConvolutionLayer::ComputeGroups) combines them per group.
#include <cblas.h>
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>

#include "kuiper/blas_threads.hpp"
#include "kuiper/error.hpp"
#include "kuiper/layers/convolution.hpp"

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

// Column `tap` of the im2col matrix: tap (c, i, j) at every output position.
void FillTapColumn(const arma::fmat& channel, const ConvParams& p, uint32_t i, uint32_t j,
                   uint32_t out_h, uint32_t out_w, float* column) {
  const int64_t in_h = channel.n_rows, in_w = channel.n_cols;
  const int64_t y0 = int64_t{i} * p.dilation_h - p.padding_h;
  // The output rows whose input row y0 + oy * stride_h lies inside the image:
  // oy in [oy_begin, oy_end). Outside them the tap reads padding (zero).
  const int64_t stride_h = p.stride_h;
  const int64_t oy_begin = std::clamp<int64_t>((-y0 + stride_h - 1) / stride_h, 0, out_h);
  const int64_t oy_end = std::clamp<int64_t>((in_h - y0 + stride_h - 1) / stride_h, oy_begin, out_h);
  for (uint32_t ox = 0; ox < out_w; ++ox, column += out_h) {
    const int64_t x = int64_t{ox} * p.stride_w + int64_t{j} * p.dilation_w - p.padding_w;
    if (x < 0 || x >= in_w) {
      std::fill(column, column + out_h, 0.f);
      continue;
    }
    const float* source = channel.colptr(x);
    std::fill(column, column + oy_begin, 0.f);
    if (stride_h == 1) {
      std::copy(source + y0 + oy_begin, source + y0 + oy_end, column + oy_begin);
    } else {
      for (int64_t oy = oy_begin; oy < oy_end; ++oy) column[oy] = source[y0 + oy * stride_h];
    }
    std::fill(column + oy_end, column + out_h, 0.f);
  }
}

}  // namespace

arma::fmat Im2Col(const ftensor& input, uint32_t first_channel, uint32_t channels,
                  const ConvParams& p, uint32_t out_h, uint32_t out_w) {
  if (uint64_t{first_channel} + channels > input.channels()) {
    throw ShapeError(fmt::format("Im2Col: channels {}..{} asked of a tensor with {} channels",
                                 first_channel, uint64_t{first_channel} + channels,
                                 input.channels()));
  }
  const uint32_t kh = p.kernel_h, kw = p.kernel_w;
  const bool identity = kh == 1 && kw == 1 && p.stride_h == 1 && p.stride_w == 1 &&
                        p.padding_h == 0 && p.padding_w == 0 && out_h == input.rows() &&
                        out_w == input.cols();
  if (identity) {
    // Channel slices are contiguous in the cube: (H*W) x channels column-major
    // is exactly their memory. Armadillo only reads through this alias.
    float* first = const_cast<float*>(input.slice(first_channel).memptr());
    return arma::fmat(first, uint64_t{out_h} * out_w, channels, /*copy_aux_mem=*/false,
                      /*strict=*/true);
  }
  const uint64_t positions = uint64_t{out_h} * out_w;
  const int taps = static_cast<int>(channels * kh * kw);
  arma::fmat columns(positions, taps, arma::fill::none);  // every element is written below
  // Every column is independent: share them out among the threads.
#pragma omp parallel for schedule(static) if (positions * taps >= (1u << 15))
  for (int tap = 0; tap < taps; ++tap) {
    const uint32_t c = tap / (kh * kw), i = tap / kw % kh, j = tap % kw;
    FillTapColumn(input.slice(first_channel + c), p, i, j, out_h, out_w, columns.colptr(tap));
  }
  return columns;
}

void MultiplyInto(const arma::fmat& a, const arma::fmat& b, float* product) {
  if (a.n_cols != b.n_rows) {
    throw ShapeError(fmt::format("MultiplyInto: ({}x{}) * ({}x{}) do not fit", a.n_rows,
                                 a.n_cols, b.n_rows, b.n_cols));
  }
  if (a.n_rows == 0 || b.n_cols == 0) return;  // an empty product: nothing to write
  const BlasThreadScope single_threaded_blas(1);
  // Part t is rows [first, last) of the product: a's rows times all of b, one
  // single-threaded sgemm on a's memory in place (leading dimension a.n_rows),
  // so each thread packs only its own share of the big operand. The split
  // depends only on the thread count, not on whether this call runs inside a
  // parallel region (where the parts run one after the other): an image gives
  // bit-identical results alone and inside a batch.
  const int m = static_cast<int>(a.n_rows), n = static_cast<int>(b.n_cols);
  const int k = static_cast<int>(a.n_cols);
  const int parts = std::min(omp_get_max_threads(), m);
#pragma omp parallel for schedule(static) num_threads(parts)
  for (int t = 0; t < parts; ++t) {
    const int first = static_cast<int64_t>(m) * t / parts;
    const int last = static_cast<int64_t>(m) * (t + 1) / parts;
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, last - first, n, k, 1.f,
                a.memptr() + first, m, b.memptr(), std::max(k, 1), 0.f, product + first, m);
  }
}

}  // namespace kuiper

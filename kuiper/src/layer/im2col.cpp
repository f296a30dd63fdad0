#include <fmt/format.h>

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

arma::fmat Im2Col(const ftensor& input, uint32_t first_channel, uint32_t channels,
                  const ConvParams& params, uint32_t out_h, uint32_t out_w) {
  if (uint64_t{first_channel} + channels > input.channels()) {
    throw ShapeError(fmt::format("Im2Col: channels {}..{} asked of a tensor with {} channels",
                                 first_channel, uint64_t{first_channel} + channels,
                                 input.channels()));
  }
  const uint32_t kh = params.kernel_h, kw = params.kernel_w;
  const int64_t in_h = input.rows(), in_w = input.cols();
  const uint64_t rows = uint64_t{channels} * kh * kw;
  arma::fmat columns(rows, uint64_t{out_h} * out_w);
  // One output column ox at a time: its out_h matrix columns (a block of
  // rows * out_h floats, small enough to stay in cache) are filled tap by tap,
  // each tap reading one input column in order.
  for (uint32_t ox = 0; ox < out_w; ++ox) {
    float* block = columns.colptr(uint64_t{ox} * out_h);
    for (uint32_t c = 0; c < channels; ++c) {
      const arma::fmat& channel = input.slice(first_channel + c);
      for (uint32_t i = 0; i < kh; ++i) {
        const int64_t y0 = int64_t{i} * params.dilation_h - params.padding_h;
        for (uint32_t j = 0; j < kw; ++j) {
          float* tap = block + (uint64_t{c} * kh + i) * kw + j;
          const int64_t x =
              int64_t{ox} * params.stride_w + int64_t{j} * params.dilation_w - params.padding_w;
          const bool column_inside = x >= 0 && x < in_w;
          const float* source = column_inside ? channel.colptr(x) : nullptr;
          for (uint32_t oy = 0; oy < out_h; ++oy, tap += rows) {
            const int64_t y = y0 + int64_t{oy} * params.stride_h;
            *tap = column_inside && y >= 0 && y < in_h ? source[y] : 0.f;
          }
        }
      }
    }
  }
  return columns;
}

}  // namespace kuiper

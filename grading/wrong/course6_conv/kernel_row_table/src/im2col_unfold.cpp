// Lab course6_conv, part 1: the im2col unfolding (course6_conv/README.md §3.3-§3.5).
//
// An Im2ColMatrix (kuiper/include/kuiper/layers/convolution.hpp) describes the
// im2col matrix of one group without storing it. The core writes it through
// the function below: MultiplyInto asks for a block of a few hundred rows at
// a time and multiplies it by the kernels while it is in the cache;
// ToMatrix asks for one whole column at a time. By default the core's
// Winograd and direct routes take most convolutions of ResNet18 and YOLOv5s
// and never call it (README §8 lists the layers that do); `kuiper bench MODEL
// --conv-route im2col` sends every convolution through it.
#include <algorithm>
#include <array>
#include <tuple>
#include <utility>
#include <cstdint>

#include "kuiper/error.hpp"
#include "kuiper/layers/convolution.hpp"

namespace kuiper {
namespace {

// Helpers of your own, if you want any (README §5, Hint 5).
// ---- your code begins ----
// One tap (i, j) of one input channel, with everything that needs a division
// worked out once: which input pixels that tap reads for each output position.
struct Tap {
  const float* channel = nullptr;  // the input channel, column-major in_h x in_w
  int64_t in_h = 0, in_w = 0;
  int64_t y0 = 0;            // output row oy reads input row y0 + oy * stride_h,
  int64_t x0 = 0;            // output column ox reads input column x0 + ox * stride_w;
  int64_t inside_begin = 0;  // the row is inside the image for oy in
  int64_t inside_end = 0;    // [inside_begin, inside_end), padding (zero) elsewhere
};

Tap MakeTap(const arma::fmat& channel, const ConvParams& p, uint32_t i, uint32_t j,
            uint32_t out_h) {
  Tap tap;
  tap.channel = channel.memptr();
  tap.in_h = static_cast<int64_t>(channel.n_rows);
  tap.in_w = static_cast<int64_t>(channel.n_cols);
  tap.y0 = int64_t{i} * p.dilation_h - p.padding_h;
  tap.x0 = int64_t{j} * p.dilation_w - p.padding_w;
  // 0 <= y0 + oy * stride < in_h  <=>  ceil(-y0 / stride) <= oy < ceil((in_h - y0) / stride).
  const int64_t stride = p.stride_h;
  tap.inside_begin = std::clamp<int64_t>((-tap.y0 + stride - 1) / stride, 0, out_h);
  tap.inside_end =
      std::clamp<int64_t>((tap.in_h - tap.y0 + stride - 1) / stride, tap.inside_begin, out_h);
  return tap;
}

// Output rows oy in [oy_first, oy_last) of output column ox, for one tap: a
// run of consecutive elements of an im2col column, written to `run`. Zeros
// above and below the image, a strided copy of one input column in between.
void FillTapRun(const Tap& tap, const ConvParams& p, uint32_t ox, int64_t oy_first, int64_t oy_last,
                float* run) {
  const int64_t x = tap.x0 + int64_t{ox} * p.stride_w;
  if (x < 0 || x >= tap.in_w) {  // the whole run is in the left or right padding
    std::fill(run, run + (oy_last - oy_first), 0.f);
    return;
  }
  const int64_t begin = std::clamp(tap.inside_begin, oy_first, oy_last);
  const int64_t end = std::clamp(tap.inside_end, begin, oy_last);
  const float* source = tap.channel + x * tap.in_h + tap.y0;  // source[oy * stride_h]
  float* out = run - oy_first;                                // out[oy] is output row oy
  std::fill(out + oy_first, out + begin, 0.f);
  if (p.stride_h == 1) {
    std::copy(source + begin, source + end, out + begin);
  } else if (p.stride_h == 2) {
    // The downsampling convolutions' stride, written out so that the compiler
    // knows it and vectorizes the copy (a variable stride copies one by one).
    const float* from = source + begin * 2;
    float* to = out + begin;
    for (int64_t n = 0; n < end - begin; ++n) to[n] = from[2 * n];
  } else {
    for (int64_t oy = begin; oy < end; ++oy) out[oy] = source[oy * p.stride_h];
  }
  std::fill(out + end, out + oy_last, 0.f);
}
// ---- your code ends ----

}  // namespace

void Im2ColMatrix::FillBlock(uint64_t first_row, uint64_t rows, uint64_t first_col,
                             uint64_t last_col, float* block) const {
  // TODO(course6): write the part of the im2col matrix that lies in rows
  // [first_row, first_row + rows) and columns [first_col, last_col) into
  // `block`, column after column, each column `rows` floats long. Every
  // element must be written: the caller reuses the buffer without clearing it.
  // Which input pixel (or padding zero) belongs at (row, column) is the index
  // formula you derive in README §3.3; the members you need are input_,
  // first_channel_, params_ and out_h_ (out_w_ and channels_ only bound the
  // matrix). A block may start and end in the middle of an output column:
  // README §3.5 works through one. Make it correct first, then make it fast
  // (README §4 step 3, Hint 5): the division-free, copy-by-runs version keeps the
  // engine at full speed.
  // ---- your code begins ----
  const uint32_t kh = params_.kernel_h, kw = params_.kernel_w;
  const uint64_t end_row = first_row + rows;
  // The inside rows depend only on the kernel row i: work them out once per
  // row, in a table as large as the models' largest kernel (7x7).
  std::array<std::pair<int64_t, int64_t>, 7> inside;
  for (uint32_t i = 0; i < kh; ++i) {
    const Tap tap = MakeTap(input_.slice(first_channel_), params_, i, 0, out_h_);
    inside.at(i) = {tap.inside_begin, tap.inside_end};
  }
  for (uint64_t col = first_col; col < last_col; ++col, block += rows) {
    const uint32_t c = col / (kh * kw), i = col / kw % kh, j = col % kw;
    Tap tap = MakeTap(input_.slice(first_channel_ + c), params_, i, j, out_h_);
    std::tie(tap.inside_begin, tap.inside_end) = inside.at(i);
    // The block's rows run down output column ox = row / out_h, then the next.
    float* run = block;
    uint32_t ox = first_row / out_h_, oy = first_row % out_h_;
    for (uint64_t row = first_row; row < end_row; ++ox, oy = 0) {
      const uint64_t length = std::min<uint64_t>(out_h_ - oy, end_row - row);
      FillTapRun(tap, params_, ox, oy, oy + length, run);
      run += length;
      row += length;
    }
  }
  // ---- your code ends ----
}

}  // namespace kuiper

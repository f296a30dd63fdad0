// nn.MaxPool2d and F.max_pool2d. The border is handled by clamping each
// window to the input: a tap in the padding would hold -infinity, which no
// maximum picks, so leaving it out gives the same result without the padded
// copy of every channel that lab course2's Tensor::Padding used to make here
// (docs/performance.md#layer-kernels). The lab's Padding is no longer on the
// pooling path; course2_padding/README.md says so.
#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <limits>
#include <utility>
#include <vector>

#include "conv_pool_common.hpp"
#include "kuiper/error.hpp"
#include "kuiper/layers/pooling.hpp"
#include "kuiper/parallel.hpp"

namespace kuiper {

uint32_t PoolOutputSize(uint32_t in, uint32_t kernel, uint32_t stride, uint32_t padding,
                        uint32_t dilation, bool ceil_mode) {
  const int64_t room = int64_t{in} + 2 * int64_t{padding} - int64_t{dilation} * (kernel - 1) - 1;
  if (kernel == 0 || stride == 0 || dilation == 0 || room < 0) return 0;
  int64_t out = (room + (ceil_mode ? stride - 1 : 0)) / stride + 1;
  if (ceil_mode && (out - 1) * stride >= int64_t{in} + padding) --out;
  return static_cast<uint32_t>(out);
}

namespace {

// best[i] = the maximum of x[i * stride + t * step] over the window's taps
// t < taps, for i < n: one pass that reads each tap and writes each result
// once, kept in a register in between. It replaced a pass per tap, each
// reading back what the one before had just stored, which stalled on that
// load (docs/performance.md#layer-kernels). The common strides are constants
// so that the loop vectorizes, and so are the common tap counts (kTaps > 0;
// 0: `taps` of them), so that the taps unroll. The indices are size_t: with uint32_t,
// 2 * i could wrap, and GCC left the stride-2 loop scalar.
template <size_t kTaps>
[[gnu::always_inline]] inline void WindowMaxOf(float* best, const float* x, size_t n, size_t stride,
                                               size_t taps, size_t step) {
  const size_t count = kTaps > 0 ? kTaps : taps;
  if (stride == 1) {
#pragma omp simd
    for (size_t i = 0; i < n; ++i) {
      float m = x[i];
#pragma GCC unroll 8
      for (size_t t = 1; t < count; ++t) m = std::max(m, x[i + t * step]);
      best[i] = m;
    }
  } else if (stride == 2) {
#pragma omp simd
    for (size_t i = 0; i < n; ++i) {
      float m = x[2 * i];
#pragma GCC unroll 8
      for (size_t t = 1; t < count; ++t) m = std::max(m, x[2 * i + t * step]);
      best[i] = m;
    }
  } else {
    for (size_t i = 0; i < n; ++i) {
      float m = x[i * stride];
      for (size_t t = 1; t < count; ++t) m = std::max(m, x[i * stride + t * step]);
      best[i] = m;
    }
  }
}

[[gnu::target_clones("default", "avx2", "avx512f")]] void WindowMax(float* best, const float* x,
                                                                    size_t n, size_t stride,
                                                                    size_t taps, size_t step) {
  switch (taps) {  // the common windows: 2x2, 3x3 (ResNet18), 5x5 (YOLOv5s)
    case 2:
      return WindowMaxOf<2>(best, x, n, stride, taps, step);
    case 3:
      return WindowMaxOf<3>(best, x, n, stride, taps, step);
    case 5:
      return WindowMaxOf<5>(best, x, n, stride, taps, step);
    default:
      return WindowMaxOf<0>(best, x, n, stride, taps, step);
  }
}

class MaxPoolingLayer : public Layer {
 public:
  MaxPoolingLayer(std::string name, std::array<uint32_t, 2> kernel, std::array<uint32_t, 2> stride,
                  std::array<uint32_t, 2> padding, std::array<uint32_t, 2> dilation, bool ceil_mode)
      : Layer(std::move(name)),
        kernel_(kernel),
        stride_(stride),
        padding_(padding),
        dilation_(dilation),
        ceil_mode_(ceil_mode) {}

  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    if (const InferStatus status = CheckOneOperand(inputs, outputs);
        status != InferStatus::kInferSuccess) {
      return status;
    }
    for (size_t n = 0; n < inputs.size(); ++n) {
      const ftensor& input = *inputs[n];
      if (input.raw_shapes().size() != 3) return InferStatus::kInferFailedShapeError;
      const uint32_t out_h = PoolOutputSize(input.rows(), kernel_[0], stride_[0], padding_[0],
                                            dilation_[0], ceil_mode_);
      const uint32_t out_w = PoolOutputSize(input.cols(), kernel_[1], stride_[1], padding_[1],
                                            dilation_[1], ceil_mode_);
      if (out_h == 0 || out_w == 0) return InferStatus::kInferFailedShapeError;
      EnsureOutput(outputs[n], {input.channels(), out_h, out_w});
      Pool(input, *outputs[n]);
    }
    return InferStatus::kInferSuccess;
  }

 private:
  // The taps [first, last) of a window that starts at `start` (in input
  // coordinates, negative in the padding) and lie inside [0, size): the
  // window clamped to the input. Empty (first >= last) when every tap is in
  // the padding, which dilation allows; that window's maximum is -infinity.
  static std::pair<int64_t, int64_t> InsideTaps(int64_t start, int64_t size, uint32_t kernel,
                                                uint32_t dilation) {
    const int64_t first = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
    const int64_t last =
        start > size - 1 ? 0 : std::min<int64_t>(kernel, (size - 1 - start) / dilation + 1);
    return {first, last};
  }

  // Output (oy, ox) of one channel: the maximum over the window at
  // (oy * stride_h - pad_h, ox * stride_w - pad_w) of `in` (rows x cols,
  // column-major), clamped to the input. Separably, per output column: first
  // the maximum across the window's columns for every input row (contiguous
  // in memory), into `across`, then down each window's rows of that: two
  // passes (WindowMax), each reading the taps along one axis, instead of one
  // pass per tap. Windows wholly inside the input take WindowMax's unrolled
  // forms; only the few output rows whose windows cross the top or bottom
  // edge are clamped one at a time.
  void PoolChannel(const float* in, uint32_t rows, uint32_t cols, float* out, uint32_t out_rows,
                   uint32_t out_cols, float* across) const {
    constexpr float kLowest = -std::numeric_limits<float>::infinity();
    const int64_t h = rows, w = cols;
    const uint32_t kh = kernel_[0], sh = stride_[0], ph = padding_[0], dh = dilation_[0];
    // Output rows [inner_begin, inner_end) have every window row inside the input.
    const int64_t inner_begin = std::min<int64_t>(out_rows, (ph + sh - 1) / sh);
    const int64_t last_start = h - 1 - int64_t{dh} * (kh - 1) + ph;  // of a window's top row
    const int64_t inner_end =
        std::clamp<int64_t>(last_start < 0 ? 0 : last_start / sh + 1, inner_begin, out_rows);
    for (uint32_t ox = 0; ox < out_cols; ++ox) {
      const int64_t start = int64_t{ox} * stride_[1] - padding_[1];
      const auto [first, last] = InsideTaps(start, w, kernel_[1], dilation_[1]);
      if (first >= last) {
        std::fill(across, across + h, kLowest);
      } else {
        WindowMax(across, in + (start + first * dilation_[1]) * h, h, 1, last - first,
                  size_t{dilation_[1]} * h);
      }
      float* column = out + size_t{ox} * out_rows;
      if (inner_end > inner_begin) {
        WindowMax(column + inner_begin, across + (inner_begin * sh - ph), inner_end - inner_begin,
                  sh, kh, dh);
      }
      const auto clamped = [&](int64_t oy) {
        const int64_t top = oy * sh - ph;
        const auto [t0, t1] = InsideTaps(top, h, kh, dh);
        float m = kLowest;
        for (int64_t t = t0; t < t1; ++t) m = std::max(m, across[top + t * dh]);
        column[oy] = m;
      };
      for (int64_t oy = 0; oy < inner_begin; ++oy) clamped(oy);
      for (int64_t oy = inner_end; oy < out_rows; ++oy) clamped(oy);
    }
  }

  void Pool(const ftensor& input, ftensor& output) const {
    const uint32_t rows = input.rows(), cols = input.cols();
    // Channel by channel, straight from the input (which other layers may
    // read too, so it is never modified), with one `across` row buffer per
    // thread.
    ParallelRanges(input.channels(), MaxThreads(), [&](int64_t begin, int64_t end, int) {
      std::vector<float> across(rows);
      for (int64_t c = begin; c < end; ++c) {
        PoolChannel(input.slice(c).memptr(), rows, cols, output.slice(c).memptr(), output.rows(),
                    output.cols(), across.data());
      }
    });
  }

  std::array<uint32_t, 2> kernel_, stride_, padding_, dilation_;
  bool ceil_mode_;
};

std::unique_ptr<Layer> CreateMaxPooling(const RuntimeOperator& op) {
  if (ReadBoolOr(op, "return_indices", false)) {
    throw LayerError(
        fmt::format("operator '{}' ({}): return_indices=True is not supported", op.name, op.type));
  }
  const auto kernel = ReadPair(op, "kernel_size", 1);
  const auto stride = ReadPairOr(op, "stride", 1, kernel);
  const auto padding = ReadPairOr(op, "padding", 0, {0, 0});
  const auto dilation = ReadPairOr(op, "dilation", 1, {1, 1});
  for (int axis = 0; axis < 2; ++axis) {
    // PyTorch's own limit: a window never lies wholly in the padding.
    if (padding[axis] > (dilation[axis] * (kernel[axis] - 1) + 1) / 2) {
      throw LayerError(
          fmt::format("operator '{}' ({}): padding {} is more than half the dilated kernel size {}",
                      op.name, op.type, padding[axis], dilation[axis] * (kernel[axis] - 1) + 1));
    }
  }
  return std::make_unique<MaxPoolingLayer>(op.name, kernel, stride, padding, dilation,
                                           ReadBoolOr(op, "ceil_mode", false));
}

const LayerRegistererWrapper kMaxPoolingRegistration({"nn.MaxPool2d", "F.max_pool2d"},
                                                     CreateMaxPooling);

}  // namespace
}  // namespace kuiper

// nn.MaxPool2d and F.max_pool2d. The padding comes from lab course2's
// Tensor::Padding with -infinity, which no window maximum can pick.
#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <limits>
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
  // The rows (or columns) the windows span beyond the input and its padding:
  // in ceil mode the last window may hang over the bottom or right edge.
  static uint32_t Overhang(uint32_t in, uint32_t out, uint32_t kernel, uint32_t stride,
                           uint32_t padding, uint32_t dilation) {
    const int64_t needed = int64_t{out - 1} * stride + int64_t{dilation} * (kernel - 1) + 1;
    return static_cast<uint32_t>(std::max<int64_t>(0, needed - (int64_t{in} + 2 * padding)));
  }

  // Output (oy, ox) of one channel: the maximum over the window at
  // (oy * stride_h, ox * stride_w) of `in`, already padded. Separably, per
  // output column: first the maximum across the window's columns for every
  // row the windows span (contiguous in memory), then down each window's
  // rows of that: two passes (WindowMax), each reading the taps along one
  // axis, instead of one pass per tap.
  void PoolChannel(const arma::fmat& in, arma::fmat& out) const {
    const uint32_t rows = out.n_rows;
    const uint32_t span = (rows - 1) * stride_[0] + (kernel_[0] - 1) * dilation_[0] + 1;
    std::vector<float> across(span);
    for (uint32_t ox = 0; ox < out.n_cols; ++ox) {
      WindowMax(across.data(), in.colptr(ox * stride_[1]), span, 1, kernel_[1],
                size_t{dilation_[1]} * in.n_rows);
      WindowMax(out.colptr(ox), across.data(), rows, stride_[0], kernel_[0], dilation_[0]);
    }
  }

  void Pool(const ftensor& input, ftensor& output) const {
    const uint32_t extra_h =
        Overhang(input.rows(), output.rows(), kernel_[0], stride_[0], padding_[0], dilation_[0]);
    const uint32_t extra_w =
        Overhang(input.cols(), output.cols(), kernel_[1], stride_[1], padding_[1], dilation_[1]);
    const bool pad = padding_[0] || padding_[1] || extra_h || extra_w;
    const std::vector<uint32_t> pads = {padding_[0], padding_[0] + extra_h, padding_[1],
                                        padding_[1] + extra_w};
    // Channel by channel: a padded copy of one channel (the input may be read
    // by other layers too) is still in the cache when its windows read it.
    ParallelFor(input.channels(), [&](int64_t c) {
      if (!pad) {
        PoolChannel(input.slice(c), output.slice(c));
        return;
      }
      ftensor channel(1, input.rows(), input.cols());
      channel.slice(0) = input.slice(c);
      channel.Padding(pads, -std::numeric_limits<float>::infinity());
      PoolChannel(channel.slice(0), output.slice(c));
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

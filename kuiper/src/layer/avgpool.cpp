// nn.AvgPool2d. The windows are clipped to the input instead of padded, since
// count_include_pad decides whether the padding counts in the divisor.
#include <fmt/format.h>

#include <algorithm>

#include "conv_pool_common.hpp"
#include "kuiper/error.hpp"
#include "kuiper/layers/pooling.hpp"
#include "kuiper/parallel.hpp"

namespace kuiper {
namespace {

class AvgPoolingLayer : public Layer {
 public:
  AvgPoolingLayer(std::string name, std::array<uint32_t, 2> kernel, std::array<uint32_t, 2> stride,
                  std::array<uint32_t, 2> padding, bool ceil_mode, bool count_include_pad)
      : Layer(std::move(name)),
        kernel_(kernel),
        stride_(stride),
        padding_(padding),
        ceil_mode_(ceil_mode),
        count_include_pad_(count_include_pad) {}

  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    if (const InferStatus status = CheckOneOperand(inputs, outputs);
        status != InferStatus::kInferSuccess) {
      return status;
    }
    for (size_t n = 0; n < inputs.size(); ++n) {
      const ftensor& input = *inputs[n];
      if (input.raw_shapes().size() != 3) return InferStatus::kInferFailedShapeError;
      const uint32_t out_h =
          PoolOutputSize(input.rows(), kernel_[0], stride_[0], padding_[0], 1, ceil_mode_);
      const uint32_t out_w =
          PoolOutputSize(input.cols(), kernel_[1], stride_[1], padding_[1], 1, ceil_mode_);
      if (out_h == 0 || out_w == 0) return InferStatus::kInferFailedShapeError;
      EnsureOutput(outputs[n], {input.channels(), out_h, out_w});
      Pool(input, *outputs[n]);
    }
    return InferStatus::kInferSuccess;
  }

 private:
  // A window along one axis, as PyTorch computes it: [begin, end) inside the
  // input, and `size`, its length counting the padding it covers.
  struct Span {
    int64_t begin, end, size;
  };
  static Span Window(uint32_t o, uint32_t in, uint32_t kernel, uint32_t stride, uint32_t pad) {
    int64_t begin = int64_t{o} * stride - pad;
    int64_t end = std::min<int64_t>(begin + kernel, int64_t{in} + pad);
    const int64_t size = end - begin;
    return {std::max<int64_t>(begin, 0), std::min<int64_t>(end, in), size};
  }

  void Pool(const ftensor& input, ftensor& output) const {
    const uint32_t out_h = output.rows(), out_w = output.cols();
    ParallelFor(input.channels(), [&](int64_t c) {
      const arma::fmat& in = input.slice(c);
      arma::fmat& out = output.slice(c);
      for (uint32_t ox = 0; ox < out_w; ++ox) {
        const Span w = Window(ox, input.cols(), kernel_[1], stride_[1], padding_[1]);
        for (uint32_t oy = 0; oy < out_h; ++oy) {
          const Span h = Window(oy, input.rows(), kernel_[0], stride_[0], padding_[0]);
          if (h.begin >= h.end || w.begin >= w.end) {
            out.at(oy, ox) = 0.f;  // a ceil-mode window wholly in the padding
            continue;
          }
          const float sum = arma::accu(in.submat(h.begin, w.begin, h.end - 1, w.end - 1));
          const int64_t count =
              count_include_pad_ ? h.size * w.size : (h.end - h.begin) * (w.end - w.begin);
          out.at(oy, ox) = sum / static_cast<float>(count);
        }
      }
    });
  }

  std::array<uint32_t, 2> kernel_, stride_, padding_;
  bool ceil_mode_, count_include_pad_;
};

std::unique_ptr<Layer> CreateAvgPooling(const RuntimeOperator& op) {
  if (op.has_param("divisor_override") &&
      !std::holds_alternative<std::monostate>(op.params.at("divisor_override"))) {
    throw LayerError(
        fmt::format("operator '{}' ({}): divisor_override is not supported", op.name, op.type));
  }
  const auto kernel = ReadPair(op, "kernel_size", 1);
  const auto stride = ReadPairOr(op, "stride", 1, kernel);
  const auto padding = ReadPairOr(op, "padding", 0, {0, 0});
  for (int axis = 0; axis < 2; ++axis) {
    if (padding[axis] > kernel[axis] / 2) {  // PyTorch's limit too
      throw LayerError(
          fmt::format("operator '{}' ({}): padding {} is more than half the kernel "
                      "size {}",
                      op.name, op.type, padding[axis], kernel[axis]));
    }
  }
  return std::make_unique<AvgPoolingLayer>(op.name, kernel, stride, padding,
                                           ReadBoolOr(op, "ceil_mode", false),
                                           ReadBoolOr(op, "count_include_pad", true));
}

const LayerRegistererWrapper kAvgPoolingRegistration({"nn.AvgPool2d"}, CreateAvgPooling);

}  // namespace
}  // namespace kuiper

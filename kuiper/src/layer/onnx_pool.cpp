// kuiper.Pool: ONNX's MaxPool and AveragePool in the forms PyTorch's
// nn.MaxPool2d / nn.AvgPool2d cannot express, as the ONNX importer emits them
// (it keeps the nn.* layers for the forms they can):
//   mode               max | avg
//   kernel_size        1 or 2 values: 1-D or 2-D pooling over the last dims
//   stride, dilation   as many values (default 1)
//   pads               begin values then end values (ONNX's order), so
//                      asymmetric padding (auto_pad SAME_UPPER/SAME_LOWER,
//                      resolved by the importer) and padding larger than half
//                      the kernel (PyTorch's limit) are allowed; a window
//                      wholly in the padding gives -inf (max) or 0 (avg)
//   ceil_mode          output = ceil or floor((in + pb + pe - dk) / s) + 1,
//                      dk = dilation * (kernel - 1) + 1 (OnnxPoolOutputSize)
//   count_include_pad  avg: the divisor counts the window's positions inside
//                      [-pb, in + pe) instead of those inside the input
// Every dimension before the pooled ones is a plane pooled alone (C, or N,C
// when the engine holds the whole graph as one item). A simple loop over
// row-major values: the speed of ResNet's pooling is nn.MaxPool2d's.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "conv_pool_common.hpp"
#include "kuiper/error.hpp"
#include "kuiper/layer.hpp"
#include "kuiper/layers/pooling.hpp"

namespace kuiper {

int64_t OnnxPoolOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad_begin,
                           int64_t pad_end, int64_t dilation, bool ceil_mode) {
  const int64_t room = in + pad_begin + pad_end - dilation * (kernel - 1) - 1;
  if (stride < 1 || room < 0) return 0;
  return (ceil_mode ? (room + stride - 1) / stride : room / stride) + 1;
}

namespace {

class OnnxPoolLayer : public Layer {
 public:
  OnnxPoolLayer(std::string name, bool max, std::vector<int> kernel, std::vector<int> stride,
                std::vector<int> dilation, std::vector<int> pads, bool ceil_mode,
                bool count_include_pad)
      : Layer(std::move(name)),
        max_(max),
        kernel_(std::move(kernel)),
        stride_(std::move(stride)),
        dilation_(std::move(dilation)),
        pads_(std::move(pads)),
        ceil_mode_(ceil_mode),
        count_include_pad_(count_include_pad) {}

  // The output length along pooled axis `a` for an input of length `in`, 0
  // when no window fits.
  int64_t OutputSize(size_t a, int64_t in) const {
    return OnnxPoolOutputSize(in, kernel_[a], stride_[a], pads_[a], pads_[a + kernel_.size()],
                              dilation_[a], ceil_mode_);
  }

  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    if (const InferStatus status = CheckOneOperand(inputs, outputs);
        status != InferStatus::kInferSuccess) {
      return status;
    }
    const size_t spatial = kernel_.size();
    for (size_t n = 0; n < inputs.size(); ++n) {
      const std::vector<uint32_t>& in_shape = inputs[n]->raw_shapes();
      if (in_shape.size() <= spatial) return InferStatus::kInferFailedShapeError;
      std::vector<uint32_t> out_shape = in_shape;
      const size_t lead = in_shape.size() - spatial;
      for (size_t a = 0; a < spatial; ++a) {
        const int64_t out = OutputSize(a, in_shape[lead + a]);
        if (out <= 0) return InferStatus::kInferFailedShapeError;
        out_shape[lead + a] = static_cast<uint32_t>(out);
      }
      EnsureOutput(outputs[n], out_shape);
      outputs[n]->Fill(Pool(inputs[n]->values(/*row_major=*/true), in_shape, out_shape),
                       /*row_major=*/true);
    }
    return InferStatus::kInferSuccess;
  }

 private:
  // The pooled values of every plane, row-major. A 1-D pooling is a 2-D one
  // over a height of 1 with kernel 1, no padding.
  std::vector<float> Pool(const std::vector<float>& in, const std::vector<uint32_t>& in_shape,
                          const std::vector<uint32_t>& out_shape) const {
    const bool two = kernel_.size() == 2;
    const size_t lead = in_shape.size() - kernel_.size();
    size_t planes = 1;
    for (size_t d = 0; d < lead; ++d) planes *= in_shape[d];
    const int64_t ih = two ? in_shape[lead] : 1, iw = in_shape.back();
    const int64_t oh = two ? out_shape[lead] : 1, ow = out_shape.back();
    const size_t s = kernel_.size();
    // Per axis (h, w): kernel, stride, dilation, pad begin, pad end.
    const int64_t kh = two ? kernel_[0] : 1, kw = kernel_.back();
    const int64_t sh = two ? stride_[0] : 1, sw = stride_.back();
    const int64_t dh = two ? dilation_[0] : 1, dw = dilation_.back();
    const int64_t ph = two ? pads_[0] : 0, pw = pads_[s - 1];
    const int64_t eh = two ? pads_[s] : 0, ew = pads_[2 * s - 1];
    std::vector<float> out(planes * oh * ow);
    for (size_t p = 0; p < planes; ++p) {
      const float* plane = in.data() + p * ih * iw;
      float* result = out.data() + p * oh * ow;
      for (int64_t oy = 0; oy < oh; ++oy) {
        for (int64_t ox = 0; ox < ow; ++ox) {
          float best = -std::numeric_limits<float>::infinity();
          double sum = 0;
          int64_t inside = 0, padded = 0;
          for (int64_t i = 0; i < kh; ++i) {
            const int64_t y = oy * sh - ph + i * dh;
            for (int64_t j = 0; j < kw; ++j) {
              const int64_t x = ox * sw - pw + j * dw;
              if (y >= -ph && y < ih + eh && x >= -pw && x < iw + ew) ++padded;
              if (y < 0 || y >= ih || x < 0 || x >= iw) continue;
              const float v = plane[y * iw + x];
              ++inside;
              sum += v;
              best = std::max(best, v);
            }
          }
          float value = best;
          if (!max_) {
            const int64_t count = count_include_pad_ ? padded : inside;
            value = count > 0 ? static_cast<float>(sum / static_cast<double>(count)) : 0.f;
          }
          result[oy * ow + ox] = value;
        }
      }
    }
    return out;
  }

  bool max_;
  std::vector<int> kernel_, stride_, dilation_, pads_;
  bool ceil_mode_, count_include_pad_;
};

// A list parameter of `size` values, each at least `minimum`; `fallback`
// (repeated) when absent.
std::vector<int> OnnxPoolInts(const RuntimeOperator& op, const std::string& key, size_t size,
                              int minimum, int fallback) {
  if (!op.has_param(key)) return std::vector<int>(size, fallback);
  const std::vector<int> values = op.param<std::vector<int>>(key);
  const bool ok = values.size() == size &&
                  std::all_of(values.begin(), values.end(), [&](int v) { return v >= minimum; });
  if (!ok) {
    throw LayerError(fmt::format("operator '{}' ({}): {}={} must be {} values of at least {}",
                                 op.name, op.type, key, ShapeText(values), size, minimum));
  }
  return values;
}

std::unique_ptr<Layer> CreateOnnxPool(const RuntimeOperator& op) {
  const std::string mode = op.param<std::string>("mode");
  if (mode != "max" && mode != "avg") {
    throw LayerError(
        fmt::format("operator '{}' ({}): mode '{}' is not max or avg", op.name, op.type, mode));
  }
  const std::vector<int> kernel = op.param<std::vector<int>>("kernel_size");
  if (kernel.empty() || kernel.size() > 2) {
    throw LayerError(fmt::format(
        "operator '{}' ({}): kernel_size={} pools {} dimensions; 1-D and 2-D pooling are "
        "supported",
        op.name, op.type, ShapeText(kernel), kernel.size()));
  }
  const size_t s = kernel.size();
  OnnxPoolInts(op, "kernel_size", s, 1, 1);
  return std::make_unique<OnnxPoolLayer>(
      op.name, mode == "max", kernel, OnnxPoolInts(op, "stride", s, 1, 1),
      OnnxPoolInts(op, "dilation", s, 1, 1), OnnxPoolInts(op, "pads", 2 * s, 0, 0),
      ReadBoolOr(op, "ceil_mode", false), ReadBoolOr(op, "count_include_pad", false));
}

const LayerRegistererWrapper kOnnxPoolRegistration({"kuiper.Pool"}, CreateOnnxPool);

}  // namespace
}  // namespace kuiper

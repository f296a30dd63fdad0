// nn.ConvTranspose1d / 2d / 3d: the transposed ("fractionally strided")
// convolution, the gradient of a convolution with respect to its input. Each
// input element scatters x * W[c, m, q] to output position
// p * stride + q * dilation - padding; positions outside [0, size) are cut.
// Weight (in_channels, out_channels / groups, k...) as PyTorch keeps it.
//
// Output size: stride * (in - 1) + dilation * (k - 1) + 1 - 2 * padding +
// output_padding, as in PyTorch. ONNX's asymmetric pads are expressed with
// padding = the pad at the start and output_padding adjusted to the output
// size (so here it may be negative or reach the stride, unlike in PyTorch).
//
// A direct loop over (input element, kernel tap): clear rather than fast; the
// models this engine runs use it rarely.
#include <fmt/format.h>

#include "row_major_item.hpp"

namespace kuiper {
namespace {

class ConvTransposeLayer : public RowMajorItemLayer {
 public:
  ConvTransposeLayer(int in_channels, int out_channels, int groups, std::vector<int> kernel,
                     std::vector<int> stride, std::vector<int> padding,
                     std::vector<int> output_padding, std::vector<int> dilation,
                     std::vector<float> weight, std::vector<float> bias)
      : RowMajorItemLayer("ConvTranspose"),
        in_channels_(in_channels),
        out_channels_(out_channels),
        groups_(groups),
        kernel_(std::move(kernel)),
        stride_(std::move(stride)),
        padding_(std::move(padding)),
        output_padding_(std::move(output_padding)),
        dilation_(std::move(dilation)),
        weight_(std::move(weight)),
        bias_(std::move(bias)) {}

 protected:
  bool Compute(const std::vector<uint32_t>& shape, const std::vector<float>& in,
               std::vector<uint32_t>& out_shape, std::vector<float>& out) const override {
    const size_t dims = kernel_.size();
    if (shape.size() != dims + 1 || static_cast<int>(shape[0]) != in_channels_) return false;
    out_shape = {static_cast<uint32_t>(out_channels_)};
    uint64_t in_plane = 1, out_plane = 1, taps = 1;
    for (size_t d = 0; d < dims; ++d) {
      const int64_t size = int64_t{stride_[d]} * (shape[d + 1] - 1) +
                           int64_t{dilation_[d]} * (kernel_[d] - 1) + 1 - 2 * int64_t{padding_[d]} +
                           output_padding_[d];
      if (size < 1) return false;
      out_shape.push_back(static_cast<uint32_t>(size));
      in_plane *= shape[d + 1];
      out_plane *= static_cast<uint64_t>(size);
      taps *= kernel_[d];
    }
    out.assign(out_plane * out_channels_, 0.f);
    const int in_per_group = in_channels_ / groups_, out_per_group = out_channels_ / groups_;
    std::vector<uint32_t> p(dims), q(dims);
    for (int c = 0; c < in_channels_; ++c) {
      const int g = c / in_per_group;
      std::fill(p.begin(), p.end(), 0);
      for (uint64_t pi = 0; pi < in_plane; ++pi) {
        const float x = in[c * in_plane + pi];
        std::fill(q.begin(), q.end(), 0);
        for (uint64_t qi = 0; qi < taps; ++qi) {
          // Output offset of tap q from input position p, or skip when outside.
          int64_t offset = 0;
          bool inside = true;
          for (size_t d = 0; d < dims && inside; ++d) {
            const int64_t o =
                int64_t{p[d]} * stride_[d] + int64_t{q[d]} * dilation_[d] - padding_[d];
            inside = o >= 0 && o < out_shape[d + 1];
            offset = offset * out_shape[d + 1] + o;
          }
          if (inside) {
            for (int m = 0; m < out_per_group; ++m) {
              const float w = weight_[(uint64_t(c) * out_per_group + m) * taps + qi];
              out[(uint64_t(g) * out_per_group + m) * out_plane + offset] += x * w;
            }
          }
          for (size_t d = dims; d-- > 0;) {  // next tap, last dimension fastest
            if (++q[d] < static_cast<uint32_t>(kernel_[d])) break;
            q[d] = 0;
          }
        }
        for (size_t d = dims; d-- > 0;) {  // next input position
          if (++p[d] < shape[d + 1]) break;
          p[d] = 0;
        }
      }
    }
    if (!bias_.empty()) {
      for (int m = 0; m < out_channels_; ++m) {
        for (uint64_t e = 0; e < out_plane; ++e) out[m * out_plane + e] += bias_[m];
      }
    }
    return true;
  }

 private:
  int in_channels_, out_channels_, groups_;
  std::vector<int> kernel_, stride_, padding_, output_padding_, dilation_;
  std::vector<float> weight_, bias_;
};

std::unique_ptr<Layer> CreateConvTranspose(const RuntimeOperator& op) {
  const size_t dims = op.type == "nn.ConvTranspose1d" ? 1 : op.type == "nn.ConvTranspose2d" ? 2 : 3;
  const auto fail = [&](const std::string& why) {
    return LayerError(fmt::format("operator '{}' ({}): {}", op.name, op.type, why));
  };
  const auto list = [&](const std::string& key, int fallback) {
    std::vector<int> values = IntListParam(op, key, std::vector<int>(dims, fallback));
    if (values.size() == 1) values.assign(dims, values[0]);
    if (values.size() != dims) {
      throw fail(fmt::format("{} has {} values, expected {}", key, values.size(), dims));
    }
    return values;
  };
  const std::vector<int> kernel = list("kernel_size", 1), stride = list("stride", 1),
                         padding = list("padding", 0), output_padding = list("output_padding", 0),
                         dilation = list("dilation", 1);
  const int in_channels = op.param<int>("in_channels"),
            out_channels = op.param<int>("out_channels");
  const int groups = op.has_param("groups") ? op.param<int>("groups") : 1;
  if (groups < 1 || in_channels % groups != 0 || out_channels % groups != 0) {
    throw fail(fmt::format("groups={} must divide in_channels={} and out_channels={}", groups,
                           in_channels, out_channels));
  }
  for (size_t d = 0; d < dims; ++d) {
    if (kernel[d] < 1 || stride[d] < 1 || dilation[d] < 1) {
      throw fail("kernel_size, stride and dilation must be at least 1");
    }
  }
  const RuntimeAttribute& weight = op.attr("weight");
  std::vector<int> expected = {in_channels, out_channels / groups};
  expected.insert(expected.end(), kernel.begin(), kernel.end());
  if (weight.shape != expected) {
    throw fail(fmt::format("weight has shape {}, expected {}", ShapeText(weight.shape),
                           ShapeText(expected)));
  }
  std::vector<float> bias;
  if (BoolParamOr(op, "bias", false)) {
    bias = op.attr("bias").ToFloat();
    if (static_cast<int>(bias.size()) != out_channels) {
      throw fail(fmt::format("bias has {} values, expected {}", bias.size(), out_channels));
    }
  }
  return std::make_unique<ConvTransposeLayer>(in_channels, out_channels, groups, kernel, stride,
                                              padding, output_padding, dilation, weight.ToFloat(),
                                              bias);
}

LayerRegistererWrapper kConvTransposeRegistration({"nn.ConvTranspose1d", "nn.ConvTranspose2d",
                                                   "nn.ConvTranspose3d"},
                                                  CreateConvTranspose);

}  // namespace
}  // namespace kuiper

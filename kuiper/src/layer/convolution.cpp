// nn.Conv2d: checks, creation and threading. The arithmetic is Im2Col
// (im2col.cpp) plus lab course6's ConvolutionLayer::ComputeGroups.
#include "kuiper/layers/convolution.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "conv_pool_common.hpp"
#include "kuiper/error.hpp"
#include "kuiper/parallel.hpp"

namespace kuiper {

ConvolutionLayer::ConvolutionLayer(std::string name, const ConvParams& params,
                                   const std::vector<float>& weight, std::vector<float> bias,
                                   uint64_t expected_positions, const RuntimeOptions& options)
    : Layer(std::move(name)), params_(params), bias_(std::move(bias)) {
  const ConvParams& p = params_;
  if (p.in_channels == 0 || p.out_channels == 0 || p.groups == 0 || p.in_channels % p.groups != 0 ||
      p.out_channels % p.groups != 0) {
    throw LayerError(
        fmt::format("convolution '{}': groups={} must divide in_channels={} and out_channels={}",
                    layer_name_, p.groups, p.in_channels, p.out_channels));
  }
  if (p.kernel_h == 0 || p.kernel_w == 0 || p.stride_h == 0 || p.stride_w == 0 ||
      p.dilation_h == 0 || p.dilation_w == 0) {
    throw LayerError(
        fmt::format("convolution '{}': kernel, stride and dilation must be positive", layer_name_));
  }
  const uint32_t out_per_group = p.out_channels / p.groups;
  const uint64_t kernel_size = uint64_t{p.in_channels / p.groups} * p.kernel_h * p.kernel_w;
  if (weight.size() != kernel_size * p.out_channels) {
    throw LayerError(
        fmt::format("convolution '{}': weight has {} values, expected {} ({}x{}x{}x{})",
                    layer_name_, weight.size(), kernel_size * p.out_channels, p.out_channels,
                    p.in_channels / p.groups, p.kernel_h, p.kernel_w));
  }
  if (!bias_.empty() && bias_.size() != p.out_channels) {
    throw LayerError(fmt::format("convolution '{}': bias has {} values, expected {}", layer_name_,
                                 bias_.size(), p.out_channels));
  }
  // The row-major (out_per_group x kernel_size) block of a group, read by
  // column-major Armadillo, is kernel_size x out_per_group with one kernel per
  // column: the right-hand side of columns * kernels, as it is.
  for (uint32_t g = 0; g < p.groups; ++g) {
    const float* block = weight.data() + g * out_per_group * kernel_size;
    kernels_.emplace_back(arma::fmat(block, kernel_size, out_per_group), params_,
                          expected_positions, options);
  }
}

const char* ConvRouteName(ConvRoute route) {
  switch (route) {
    case ConvRoute::kInPlace:
      return "in-place";
    case ConvRoute::kIm2Col:
      return "im2col";
    case ConvRoute::kWinograd:
      return "winograd";
    case ConvRoute::kDirect:
      return "direct";
  }
  return "?";
}

ConvRoute ConvolutionLayer::route() const {
  // Every group's kernels were made by the same rule, so group 0 speaks for all.
  const GroupKernels& kernels = kernels_.front();
  if (kernels.winograd()) return ConvRoute::kWinograd;
  if (kernels.direct()) return ConvRoute::kDirect;
  // Im2ColMatrix::InPlace's test without an input: the output then has the input's size.
  const ConvParams& p = params_;
  const bool in_place = p.kernel_h == 1 && p.kernel_w == 1 && p.stride_h == 1 && p.stride_w == 1 &&
                        p.padding_h == 0 && p.padding_w == 0;
  return in_place ? ConvRoute::kInPlace : ConvRoute::kIm2Col;
}

uint32_t ConvolutionLayer::winograd_tile() const {
  const GroupKernels& kernels = kernels_.front();
  return kernels.winograd() ? kernels.winograd_kernels().tile() : 0;
}

InferStatus ConvolutionLayer::Forward(const std::vector<sftensor>& inputs,
                                      std::vector<sftensor>& outputs) {
  if (const InferStatus status = CheckOneOperand(inputs, outputs);
      status != InferStatus::kInferSuccess) {
    return status;
  }
  const ConvParams& p = params_;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ftensor& input = *inputs[i];
    if (input.raw_shapes().size() != 3) return InferStatus::kInferFailedShapeError;
    if (input.channels() != p.in_channels) return InferStatus::kInferFailedChannelParameterError;
    const uint32_t out_h =
        ConvOutputSize(input.rows(), p.kernel_h, p.stride_h, p.padding_h, p.dilation_h);
    const uint32_t out_w =
        ConvOutputSize(input.cols(), p.kernel_w, p.stride_w, p.padding_w, p.dilation_w);
    if (out_h == 0 || out_w == 0) return InferStatus::kInferFailedShapeError;
    EnsureOutput(outputs[i], {p.out_channels, out_h, out_w});
  }
  const int batch = static_cast<int>(inputs.size());
  if (batch == 1) {
    // One item: Im2Col and MultiplyInto share their work among the threads.
    ComputeGroups(*inputs[0], *outputs[0]);
    return InferStatus::kInferSuccess;
  }
  // Several items: one per thread; inside, everything runs on that thread.
  ParallelForEach(batch, [&](int64_t i) { ComputeGroups(*inputs[i], *outputs[i]); });
  return InferStatus::kInferSuccess;
}

bool ConvolutionLayer::FuseActivation(Activation activation) {
  if (activation == Activation::kNone || activation_ != Activation::kNone) return false;
  activation_ = activation;
  return true;
}

std::unique_ptr<Layer> CreateConvolution(const RuntimeOperator& op) {
  const auto fail = [&op](const std::string& what) {
    return LayerError(fmt::format("operator '{}' ({}): {}", op.name, op.type, what));
  };
  if (op.has_param("padding_mode") && op.param<std::string>("padding_mode") != "zeros") {
    throw fail(fmt::format("padding_mode={} is not supported, only zeros",
                           op.param<std::string>("padding_mode")));
  }
  ConvParams p;
  const int in_channels = op.param<int>("in_channels");
  const int out_channels = op.param<int>("out_channels");
  const int groups = op.has_param("groups") ? op.param<int>("groups") : 1;
  if (in_channels <= 0 || out_channels <= 0 || groups <= 0 || in_channels % groups != 0 ||
      out_channels % groups != 0) {
    throw fail(fmt::format("groups={} must divide in_channels={} and out_channels={}", groups,
                           in_channels, out_channels));
  }
  p.in_channels = in_channels;
  p.out_channels = out_channels;
  p.groups = groups;
  const auto kernel = ReadPair(op, "kernel_size", 1);
  const auto stride = ReadPair(op, "stride", 1);
  const auto padding = ReadPair(op, "padding", 0);
  const auto dilation = ReadPair(op, "dilation", 1);
  p.kernel_h = kernel[0], p.kernel_w = kernel[1];
  p.stride_h = stride[0], p.stride_w = stride[1];
  p.padding_h = padding[0], p.padding_w = padding[1];
  p.dilation_h = dilation[0], p.dilation_w = dilation[1];

  const RuntimeAttribute& weight = op.attr("weight");
  const std::vector<int> expected = {out_channels, in_channels / groups, int(p.kernel_h),
                                     int(p.kernel_w)};
  if (weight.shape != expected) {
    throw fail(
        fmt::format("weight has shape {}, expected {} from out_channels, "
                    "in_channels/groups and kernel_size",
                    ShapeText(weight.shape), ShapeText(expected)));
  }
  std::vector<float> bias;
  if (op.param<bool>("bias")) {
    const RuntimeAttribute& bias_attr = op.attr("bias");
    if (bias_attr.shape != std::vector<int>{out_channels}) {
      throw fail(fmt::format("bias has shape {}, expected ({})", ShapeText(bias_attr.shape),
                             out_channels));
    }
    bias = bias_attr.ToFloat();
  }
  // The input size the model file declares (N, C, H, W), if it does.
  uint64_t expected_positions = 0;
  if (!op.input_operands.empty() && op.input_operands[0]->shapes.size() == 4) {
    const std::vector<int>& in = op.input_operands[0]->shapes;
    if (in[2] > 0 && in[3] > 0) {
      expected_positions =
          uint64_t{ConvOutputSize(in[2], p.kernel_h, p.stride_h, p.padding_h, p.dilation_h)} *
          ConvOutputSize(in[3], p.kernel_w, p.stride_w, p.padding_w, p.dilation_w);
    }
  }
  return std::make_unique<ConvolutionLayer>(op.name, p, weight.ToFloat(), std::move(bias),
                                            expected_positions, op.options);
}

namespace {
const LayerRegistererWrapper kConvolutionRegistration({"nn.Conv2d"}, CreateConvolution);
}  // namespace

}  // namespace kuiper

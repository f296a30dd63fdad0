// Convolutions and batch normalisation: Conv (nn.Conv2d), ConvTranspose
// (nn.ConvTranspose1d/2d/3d) and BatchNormalization (nn.BatchNorm2d, or the
// batch statistics composed of torch.mean and expressions in training mode).
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "lowering_registry.hpp"

namespace kuiper::onnx_import {
namespace {

// ONNX's (begin..., end...) pads as symmetric (h, w) padding, or false.
bool SymmetricPads(const std::vector<int64_t>& pads, std::vector<int>& padding) {
  if (pads.empty()) {
    padding = {0, 0};
    return true;
  }
  if (pads.size() != 4 || pads[0] != pads[2] || pads[1] != pads[3]) return false;
  padding = {static_cast<int>(pads[0]), static_cast<int>(pads[1])};
  return true;
}

void LowerConv(Context& ctx, const onnx::NodeProto& node) {
  const onnx::TensorProto& weight = ctx.RequireConstant(node, 1);
  const Shape w(weight.dims().begin(), weight.dims().end());
  if (w.size() != 4 || ctx.ShapeOf(node, node.input(0)).size() != 4) {
    ctx.Fail(node, "only 2-D convolution (4-D input and weight) is supported");
  }
  const std::string auto_pad = AttributeString(node, "auto_pad", "NOTSET");
  std::vector<int64_t> pads = AttributeInts(node, "pads", {});
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    // As for pooling (ConvertPool): out = ceil(in / stride), the odd pad at
    // the end (UPPER) or the start (LOWER); nn.Conv2d takes it when even.
    const Shape& in = ctx.ShapeOf(node, node.input(0));
    const std::vector<int64_t> strides = AttributeInts(node, "strides", {1, 1});
    const std::vector<int64_t> dilations = AttributeInts(node, "dilations", {1, 1});
    if (strides.size() != 2 || dilations.size() != 2)
      ctx.Fail(node, "strides and dilations need 2");
    pads.assign(4, 0);
    for (int a = 0; a < 2; ++a) {
      const int64_t out = (in[2 + a] + strides[a] - 1) / strides[a];
      const int64_t span = dilations[a] * (w[2 + a] - 1) + 1;
      const int64_t total = std::max<int64_t>(0, (out - 1) * strides[a] + span - in[2 + a]);
      pads[a] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[a + 2] = total - pads[a];
    }
  } else if (auto_pad != "NOTSET" && auto_pad != "VALID") {
    ctx.Fail(node,
             fmt::format("auto_pad={} is not NOTSET, VALID, SAME_UPPER or SAME_LOWER", auto_pad));
  }
  std::vector<int> padding;
  if (!SymmetricPads(pads, padding)) {
    ctx.Fail(node, fmt::format("asymmetric pads {} are not supported", ShapeText(pads)));
  }
  const std::vector<int64_t> kernel = AttributeInts(node, "kernel_shape", {w[2], w[3]});
  if (kernel != std::vector<int64_t>{w[2], w[3]}) ctx.Fail(node, "kernel_shape differs from W");
  const int64_t group = AttributeInt(node, "group", 1);
  const bool has_bias = ctx.HasInput(node, 2);
  const int input = ctx.Input(node, 0);
  pnnx::Operator& op = ctx.Emit("nn.Conv2d", ctx.NodeName(node), {input}, ctx.Output(node));
  op.params["bias"] = BoolParam(has_bias);
  op.params["dilation"] = IntsParam(ToInts(AttributeInts(node, "dilations", {1, 1})));
  op.params["groups"] = IntParam(static_cast<int>(group));
  op.params["in_channels"] = IntParam(static_cast<int>(w[1] * group));
  op.params["kernel_size"] = IntsParam(ToInts(kernel));
  op.params["out_channels"] = IntParam(static_cast<int>(w[0]));
  op.params["padding"] = IntsParam(padding);
  op.params["padding_mode"] = StringParam("zeros");
  op.params["stride"] = IntsParam(ToInts(AttributeInts(node, "strides", {1, 1})));
  op.attrs["weight"] = FloatAttribute(ToInts(w), OnnxTensorFloats(weight));
  if (has_bias) {
    const onnx::TensorProto& bias = ctx.RequireConstant(node, 2);
    op.attrs["bias"] = FloatAttribute({static_cast<int>(w[0])}, OnnxTensorFloats(bias));
  }
}

// ConvTranspose (1-D to 3-D): nn.ConvTranspose1d/2d/3d. The output size is
// the inferred one (ONNX shape inference applies output_shape, output_padding
// and auto_pad); the pad at the start of each axis is `pads`, or, when the
// output size was given (output_shape, SAME_UPPER/LOWER), derived from it as
// the ONNX spec says. The layer's output_padding then makes up the size.
void LowerConvTranspose(Context& ctx, const onnx::NodeProto& node) {
  const Shape& in = ctx.ShapeOf(node, node.input(0));
  const Shape& out = ctx.ShapeOf(node, node.output(0));
  const onnx::TensorProto& weight = ctx.RequireConstant(node, 1);
  const Shape w(weight.dims().begin(), weight.dims().end());
  const size_t dims = in.size() - 2;
  if (in.size() < 3 || in.size() > 5 || w.size() != in.size() || out.size() != in.size()) {
    ctx.Fail(node,
             fmt::format("needs (N, C, 1 to 3 spatial dims) input and weight of the same rank; "
                         "input {}, weight {}",
                         ShapeText(in), ShapeText(w)));
  }
  if (!ctx.batch_mode()) ctx.Fail(node, "needs dimension 0 to be the batch (N, C, spatial...)");
  const int64_t group = AttributeInt(node, "group", 1);
  if (group < 1 || in[1] != w[0] || in[1] % group != 0) {
    ctx.Fail(node,
             fmt::format("input channels {} must equal W's dimension 0 ({}) and be a multiple "
                         "of group={}",
                         in[1], w[0], group));
  }
  const std::vector<int64_t> ones(dims, 1), zeros(dims, 0);
  const std::vector<int64_t> kernel(w.begin() + 2, w.end());
  const std::vector<int64_t> strides = AttributeInts(node, "strides", ones);
  const std::vector<int64_t> dilations = AttributeInts(node, "dilations", ones);
  const std::vector<int64_t> output_padding = AttributeInts(node, "output_padding", zeros);
  std::vector<int64_t> pads = AttributeInts(node, "pads", std::vector<int64_t>(2 * dims, 0));
  if (strides.size() != dims || dilations.size() != dims || output_padding.size() != dims ||
      pads.size() != 2 * dims) {
    ctx.Fail(node, "strides, dilations, output_padding or pads do not match the spatial rank");
  }
  const std::string auto_pad = AttributeString(node, "auto_pad", "NOTSET");
  const bool size_given = FindAttribute(node, "output_shape") != nullptr ||
                          auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER";
  std::vector<int> padding, extra;
  for (size_t d = 0; d < dims; ++d) {
    const int64_t full = strides[d] * (in[d + 2] - 1) + dilations[d] * (kernel[d] - 1) + 1;
    int64_t begin = pads[d];
    if (size_given) {
      // An output larger than the full scatter is padded at the end (as ONNX
      // Runtime does: the total padding is never negative).
      const int64_t total = std::max<int64_t>(0, full + output_padding[d] - out[d + 2]);
      begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    }
    padding.push_back(static_cast<int>(begin));
    extra.push_back(static_cast<int>(out[d + 2] - (full - 2 * begin)));
  }
  const bool has_bias = ctx.HasInput(node, 2);
  const int input = ctx.Input(node, 0);
  pnnx::Operator& op = ctx.Emit(fmt::format("nn.ConvTranspose{}d", dims), ctx.NodeName(node),
                                {input}, ctx.Output(node));
  op.params["bias"] = BoolParam(has_bias);
  op.params["dilation"] = IntsParam(ToInts(dilations));
  op.params["groups"] = IntParam(static_cast<int>(group));
  op.params["in_channels"] = IntParam(static_cast<int>(w[0]));
  op.params["kernel_size"] = IntsParam(ToInts(kernel));
  op.params["out_channels"] = IntParam(static_cast<int>(w[1] * group));
  op.params["output_padding"] = IntsParam(extra);
  op.params["padding"] = IntsParam(padding);
  op.params["stride"] = IntsParam(ToInts(strides));
  std::vector<int> wshape = ToInts(w);
  op.attrs["weight"] = FloatAttribute(wshape, OnnxTensorFloats(weight));
  if (has_bias) {
    op.attrs["bias"] = FloatAttribute({static_cast<int>(w[1] * group)},
                                      OnnxTensorFloats(ctx.RequireConstant(node, 2)));
  }
}

// BatchNormalization with training_mode=1 (opset 14+), as ONNX defines it:
// the batch's own statistics normalise X, and the running statistics are
// blended with them,
//   m = mean of X over every axis but 1, v = mean of (X - m)^2 (biased),
//   Y = (X - m) / sqrt(v + epsilon) * scale + B,
//   running_mean = mean * momentum + m * (1 - momentum), likewise running_var.
// Composed of torch.mean and pnnx.Expression; the statistics span the batch,
// so the graph is one item (§2). scale, B, mean and var must be constants.
void LowerBatchNormTraining(Context& ctx, const onnx::NodeProto& node) {
  if (ctx.batch_mode()) ctx.FailBatch(node, "training mode averages over the batch");
  const Shape& x = ctx.ShapeOf(node, node.input(0));
  const int64_t channels = x[1];
  const float epsilon = ctx.FloatAttributeChecked(node, "epsilon", 1e-5f);
  const float momentum = ctx.FloatAttributeChecked(node, "momentum", 0.9f);
  std::vector<std::vector<float>> params;  // scale, B, mean, var
  for (int k = 1; k <= 4; ++k) {
    params.push_back(ConstantAsFloats(ctx.RequireConstant(node, k)));
    if (static_cast<int64_t>(params.back().size()) != channels) {
      ctx.Fail(node, fmt::format("input {} has {} values, expected C={}", k, params.back().size(),
                                 channels));
    }
  }
  const std::string name = ctx.NodeName(node);
  const int c = static_cast<int>(channels);
  // A per-channel constant shaped (C,1,1) to broadcast over an item (N,C,H,W).
  const auto channel_constant = [&](const std::string& suffix, const std::vector<float>& values) {
    const int operand = ctx.NewOperand(name + suffix, {1, c, 1, 1});
    ctx.Emit("pnnx.Attribute", name + suffix, {}, operand).attrs["data"] =
        FloatAttribute({c, 1, 1}, values);
    return operand;
  };
  const Shape stat_shape = {1, channels, 1, 1};
  const auto mean_over_all_but_channels = [&](const std::string& suffix, int input) {
    const int out = ctx.NewOperand(name + suffix, ctx.EngineShape(stat_shape));
    pnnx::Operator& op = ctx.Emit("torch.mean", name + suffix, {input}, out);
    op.params["dim"] = IntsParam({1, 3, 4});  // single-item mode: ONNX axes 0, 2, 3
    op.params["keepdim"] = BoolParam(true);
    return out;
  };
  const int input = ctx.Input(node, 0);
  const int mean = mean_over_all_but_channels("_batch_mean", input);
  const int centred = ctx.NewOperand(name + "_centred", ctx.EngineShape(x));
  ctx.Emit("pnnx.Expression", name + "_centred", {input, mean}, centred).params["expr"] =
      StringParam("sub(@0,@1)");
  const int squared = ctx.NewOperand(name + "_squared", ctx.EngineShape(x));
  ctx.Emit("pnnx.Expression", name + "_squared", {centred}, squared).params["expr"] =
      StringParam("mul(@0,@0)");
  const int var = mean_over_all_but_channels("_batch_var", squared);
  const int scale = channel_constant("_scale", params[0]);
  const int bias = channel_constant("_bias", params[1]);
  ctx.Emit("pnnx.Expression", name, {centred, var, scale, bias}, ctx.Output(node, 0))
      .params["expr"] =
      StringParam(fmt::format("add(mul(div(@0,sqrt(add(@1,{:.8e}))),@2),@3)", epsilon));
  // The running statistics, (C): blended, then reshaped from (1,C,1,1).
  for (int k = 1; k <= 2 && k < node.output_size(); ++k) {
    if (node.output(k).empty() || !ctx.IsUsed(node.output(k))) continue;
    const int stat = k == 1 ? mean : var;
    const int running = channel_constant(k == 1 ? "_running_mean" : "_running_var", params[1 + k]);
    const int blended =
        ctx.NewOperand(name + (k == 1 ? "_mean_out" : "_var_out"), ctx.EngineShape(stat_shape));
    ctx.Emit("pnnx.Expression", name + (k == 1 ? "_mean_out" : "_var_out"), {running, stat},
             blended)
        .params["expr"] =
        StringParam(fmt::format("add(mul(@0,{:.8e}),mul(@1,{:.8e}))", momentum, 1.f - momentum));
    ctx.EmitReshapeTo(name + (k == 1 ? "_mean_reshape" : "_var_reshape"), blended, {channels},
                      ctx.Output(node, k));
  }
}

void LowerBatchNormalization(Context& ctx, const onnx::NodeProto& node) {
  if (ctx.ShapeOf(node, node.input(0)).size() != 4) ctx.Fail(node, "only 4-D (N,C,H,W) input");
  if (AttributeInt(node, "training_mode", 0) != 0) {
    LowerBatchNormTraining(ctx, node);
    return;
  }
  for (int k = 1; k < node.output_size(); ++k) {
    if (ctx.IsUsed(node.output(k)))
      ctx.Fail(node, "the running statistics outputs are not supported");
  }
  const int64_t channels = ctx.ShapeOf(node, node.input(0))[1];
  const char* keys[] = {"weight", "bias", "running_mean", "running_var"};
  std::map<std::string, pnnx::Attribute> attrs;
  for (int k = 1; k <= 4; ++k) {
    const std::vector<float> values = OnnxTensorFloats(ctx.RequireConstant(node, k));
    if (static_cast<int64_t>(values.size()) != channels) {
      ctx.Fail(node,
               fmt::format("input {} has {} values, expected C={}", k, values.size(), channels));
    }
    attrs[keys[k - 1]] = FloatAttribute({static_cast<int>(channels)}, values);
  }
  pnnx::Operator& op = ctx.EmitUnary(node, "nn.BatchNorm2d");
  op.params["affine"] = BoolParam(true);
  op.params["eps"] = FloatParam(AttributeFloat(node, "epsilon", 1e-5f));
  op.params["num_features"] = IntParam(static_cast<int>(channels));
  op.attrs = std::move(attrs);
}

}  // namespace

KUIPER_ONNX_LOWERING_CONSTANTS(
    LowerConv, ConstantInputs({1, 2}),
    "2-D (4-D input and W); W and B constant; symmetric pads after auto_pad", "Conv");
KUIPER_ONNX_LOWERING_CONSTANTS(LowerConvTranspose, ConstantInputs({1, 2}),
                               "1-D to 3-D; W and B constant", "ConvTranspose");
KUIPER_ONNX_LOWERING_CONSTANTS(
    LowerBatchNormalization, ConstantInputs({1, 2, 3, 4}),
    "4-D input; scale, B, mean, var constant; training mode as one batch item",
    "BatchNormalization");

}  // namespace kuiper::onnx_import

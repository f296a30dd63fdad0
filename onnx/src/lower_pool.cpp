// Pooling: MaxPool and AveragePool (1-D and 2-D, every auto_pad, asymmetric
// pads), GlobalAveragePool and GlobalMaxPool. The forms PyTorch's layers take
// become nn.MaxPool2d / nn.AvgPool2d, which ResNet's speed depends on; the
// others kuiper.Pool (kuiper/src/layer/onnx_pool.cpp).
#include <algorithm>

#include "lowering_registry.hpp"

namespace kuiper::onnx_import {
namespace {

// PyTorch's pooled length (nn.MaxPool2d / nn.AvgPool2d: a ceil-mode window
// must start inside the input or its left padding).
int64_t TorchPoolSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation,
                      bool ceil_mode) {
  const int64_t room = in + 2 * pad - dilation * (kernel - 1) - 1;
  if (room < 0) return 0;
  int64_t out = (room + (ceil_mode ? stride - 1 : 0)) / stride + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// MaxPool and AveragePool. auto_pad becomes explicit pads here: SAME_UPPER
// and SAME_LOWER pad (out - 1) * stride + dilated kernel - in in total, with
// out = ceil(in / stride), the odd one at the end (UPPER) or at the start
// (LOWER). The forms nn.MaxPool2d / nn.AvgPool2d take (2-D, symmetric pads
// within PyTorch's half-kernel limit, the same output size) become those
// layers, which ResNet's speed depends on; the others (1-D, asymmetric or
// larger pads, ONNX's ceil-mode sizes) kuiper.Pool (kuiper/src/layer/onnx_pool.cpp).
void LowerPool(Context& ctx, const onnx::NodeProto& node) {
  const bool max = node.op_type() == "MaxPool";
  if (max && node.output_size() > 1 && ctx.IsUsed(node.output(1))) {
    ctx.Fail(node, "the Indices output is not supported");
  }
  const std::vector<int64_t> kernel = AttributeInts(node, "kernel_shape", {});
  const size_t n = kernel.size();
  if (n == 0) ctx.Fail(node, "kernel_shape is missing");
  if (n > 2) {
    ctx.Fail(node, fmt::format("{}-D pooling (kernel_shape {}) is not supported; 1-D and 2-D are",
                               n, ShapeText(kernel)));
  }
  const Shape& in = ctx.ShapeOf(node, node.input(0));
  const Shape& out = ctx.ShapeOf(node, node.output(0));
  if (in.size() != n + 2 || out.size() != n + 2) {
    ctx.Fail(node, fmt::format("input {} is not (N, C, {} spatial dims) for kernel_shape {}",
                               ShapeText(in), n, ShapeText(kernel)));
  }
  const auto per_axis = [&](const std::string& name, size_t size, int64_t least) {
    const std::vector<int64_t> values =
        AttributeInts(node, name, std::vector<int64_t>(size, name == "pads" ? 0 : 1));
    if (values.size() != size) {
      ctx.Fail(node, fmt::format("{} has {} values, expected {}", name, values.size(), size));
    }
    for (int64_t v : values) {
      if (v < least)
        ctx.Fail(node, fmt::format("{} holds {}, expected at least {}", name, v, least));
    }
    return values;
  };
  const std::vector<int64_t> strides = per_axis("strides", n, 1);
  const std::vector<int64_t> dilations = per_axis("dilations", n, 1);
  std::vector<int64_t> pads = per_axis("pads", 2 * n, 0);
  const std::string auto_pad = AttributeString(node, "auto_pad", "NOTSET");
  if (auto_pad == "VALID") {
    pads.assign(2 * n, 0);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t a = 0; a < n; ++a) {
      const int64_t spatial = in[2 + a];
      const int64_t target = (spatial + strides[a] - 1) / strides[a];
      const int64_t span = dilations[a] * (kernel[a] - 1) + 1;
      const int64_t total = std::max<int64_t>(0, (target - 1) * strides[a] + span - spatial);
      const int64_t small = total / 2;
      pads[a] = auto_pad == "SAME_UPPER" ? small : total - small;
      pads[a + n] = total - pads[a];
    }
  } else if (auto_pad != "NOTSET") {
    ctx.Fail(node,
             fmt::format("auto_pad={} is not NOTSET, VALID, SAME_UPPER or SAME_LOWER", auto_pad));
  }
  const bool ceil_mode = AttributeInt(node, "ceil_mode", 0) != 0;
  const bool count_include_pad = AttributeInt(node, "count_include_pad", 0) != 0;
  // ONNX's pooled length, checked against the inferred output shape.
  for (size_t a = 0; a < n; ++a) {
    const int64_t span = dilations[a] * (kernel[a] - 1) + 1;
    const int64_t room = in[2 + a] + pads[a] + pads[a + n] - span;
    const int64_t size =
        room < 0 ? 0 : (ceil_mode ? (room + strides[a] - 1) / strides[a] : room / strides[a]) + 1;
    if (size < 1 || size != out[2 + a]) {
      ctx.Fail(node,
               fmt::format("pooled size {} along spatial axis {} differs from the output shape "
                           "{}",
                           size, a, ShapeText(out)));
    }
  }
  bool torch_form = n == 2 && (max || dilations == std::vector<int64_t>{1, 1});
  for (size_t a = 0; torch_form && a < n; ++a) {
    const int64_t span = dilations[a] * (kernel[a] - 1) + 1;
    torch_form = pads[a] == pads[a + n] && pads[a] <= (max ? span / 2 : kernel[a] / 2) &&
                 TorchPoolSize(in[2 + a], kernel[a], strides[a], pads[a], dilations[a],
                               ceil_mode) == out[2 + a];
  }
  std::map<std::string, pnnx::Parameter> params;
  params["kernel_size"] = IntsParam(ToInts(kernel));
  params["stride"] = IntsParam(ToInts(strides));
  params["ceil_mode"] = BoolParam(ceil_mode);
  if (torch_form) {
    params["padding"] = IntsParam({static_cast<int>(pads[0]), static_cast<int>(pads[1])});
    if (max) {
      params["dilation"] = IntsParam(ToInts(dilations));
      params["return_indices"] = BoolParam(false);
      ctx.EmitUnary(node, "nn.MaxPool2d").params = params;
    } else {
      params["count_include_pad"] = BoolParam(count_include_pad);
      params["divisor_override"] = pnnx::Parameter{};
      ctx.EmitUnary(node, "nn.AvgPool2d").params = params;
    }
    return;
  }
  params["mode"] = StringParam(max ? "max" : "avg");
  params["dilation"] = IntsParam(ToInts(dilations));
  params["pads"] = IntsParam(ToInts(pads));
  params["count_include_pad"] = BoolParam(count_include_pad);
  ctx.EmitUnary(node, "kuiper.Pool").params = params;
}

void LowerGlobalAveragePool(Context& ctx, const onnx::NodeProto& node) {
  if (ctx.ShapeOf(node, node.input(0)).size() != 4) ctx.Fail(node, "only 4-D (N,C,H,W) input");
  ctx.EmitUnary(node, "nn.AdaptiveAvgPool2d").params["output_size"] = IntsParam({1, 1});
}

// GlobalMaxPool: the maximum over every spatial dimension (2..), kept as 1s.
void LowerGlobalMaxPool(Context& ctx, const onnx::NodeProto& node) {
  const size_t rank = ctx.ShapeOf(node, node.input(0)).size();
  if (rank < 3) ctx.Fail(node, fmt::format("needs an (N, C, spatial...) input, has rank {}", rank));
  std::vector<int64_t> axes;
  for (size_t d = 2; d < rank; ++d) axes.push_back(static_cast<int64_t>(d));
  pnnx::Operator& op = ctx.EmitUnary(node, "torch.amax");
  op.params["dim"] = IntsParam(ctx.EngineAxes(node, axes, rank));
  op.params["keepdim"] = BoolParam(true);
}

}  // namespace

KUIPER_ONNX_LOWERING(LowerPool,
                     "1-D and 2-D; any auto_pad, pads, dilations, ceil_mode; no Indices output",
                     "MaxPool", "AveragePool");
KUIPER_ONNX_LOWERING(LowerGlobalAveragePool, "4-D (N,C,H,W) input", "GlobalAveragePool");
KUIPER_ONNX_LOWERING(LowerGlobalMaxPool, "at least one spatial dimension", "GlobalMaxPool");

}  // namespace kuiper::onnx_import

// Pooling: MaxPool and AveragePool (1-D and 2-D, every auto_pad, asymmetric
// pads), GlobalAveragePool and GlobalMaxPool. The forms PyTorch's layers take
// become nn.MaxPool2d / nn.AvgPool2d, which ResNet's speed depends on; the
// others kuiper.Pool (kuiper/src/layer/onnx_pool.cpp).
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>

#include "kuiper/layers/pooling.hpp"
#include "lowering_registry.hpp"

namespace kuiper::onnx_import {
namespace {

// Whether an ONNX size fits the engine's pooling layers' arguments.
bool FitsLayer(int64_t value) {
  return value >= 0 && value <= std::numeric_limits<uint32_t>::max();
}

// A pooling node's attributes with ONNX's defaults, auto_pad made explicit
// pads: SAME_UPPER and SAME_LOWER pad (out - 1) * stride + dilated kernel - in
// in total, with out = ceil(in / stride), the odd one at the end (UPPER) or at
// the start (LOWER).
struct Pooling {
  std::vector<int64_t> kernel, strides, dilations, pads;  // pads: begins, then ends
  bool ceil_mode = false, count_include_pad = false;
  Shape in, out;
};

Pooling ReadPooling(Context& ctx, const onnx::NodeProto& node) {
  Pooling p;
  if (node.op_type() == "MaxPool" && node.output_size() > 1 && ctx.IsUsed(node.output(1))) {
    ctx.Fail(node, "the Indices output is not supported");
  }
  p.kernel = AttributeInts(node, "kernel_shape", {});
  const size_t n = p.kernel.size();
  if (n == 0) ctx.Fail(node, "kernel_shape is missing");
  if (n > 2) {
    ctx.Fail(node, fmt::format("{}-D pooling (kernel_shape {}) is not supported; 1-D and 2-D are",
                               n, ShapeText(p.kernel)));
  }
  p.in = ctx.ShapeOf(node, node.input(0));
  p.out = ctx.ShapeOf(node, node.output(0));
  if (p.in.size() != n + 2 || p.out.size() != n + 2) {
    ctx.Fail(node, fmt::format("input {} is not (N, C, {} spatial dims) for kernel_shape {}",
                               ShapeText(p.in), n, ShapeText(p.kernel)));
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
  p.strides = per_axis("strides", n, 1);
  p.dilations = per_axis("dilations", n, 1);
  p.pads = per_axis("pads", 2 * n, 0);
  const std::string auto_pad = AttributeString(node, "auto_pad", "NOTSET");
  if (auto_pad == "VALID") {
    p.pads.assign(2 * n, 0);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t a = 0; a < n; ++a) {
      const int64_t spatial = p.in[2 + a];
      const int64_t target = (spatial + p.strides[a] - 1) / p.strides[a];
      const int64_t span = p.dilations[a] * (p.kernel[a] - 1) + 1;
      const int64_t total = std::max<int64_t>(0, (target - 1) * p.strides[a] + span - spatial);
      const int64_t small = total / 2;
      p.pads[a] = auto_pad == "SAME_UPPER" ? small : total - small;
      p.pads[a + n] = total - p.pads[a];
    }
  } else if (auto_pad != "NOTSET") {
    ctx.Fail(node,
             fmt::format("auto_pad={} is not NOTSET, VALID, SAME_UPPER or SAME_LOWER", auto_pad));
  }
  p.ceil_mode = AttributeInt(node, "ceil_mode", 0) != 0;
  p.count_include_pad = AttributeInt(node, "count_include_pad", 0) != 0;
  // ONNX's pooled length, checked against the inferred output shape.
  for (size_t a = 0; a < n; ++a) {
    const int64_t size = OnnxPoolOutputSize(p.in[2 + a], p.kernel[a], p.strides[a], p.pads[a],
                                            p.pads[a + n], p.dilations[a], p.ceil_mode);
    if (size < 1 || size != p.out[2 + a]) {
      ctx.Fail(node,
               fmt::format("pooled size {} along spatial axis {} differs from the output shape "
                           "{}",
                           size, a, ShapeText(p.out)));
    }
  }
  return p;
}

// The forms nn.MaxPool2d / nn.AvgPool2d take: 2-D, symmetric pads within
// PyTorch's half-kernel limit, the same output size.
bool TorchForm(const Pooling& p, bool max) {
  const size_t n = p.kernel.size();
  bool torch_form = n == 2 && (max || p.dilations == std::vector<int64_t>{1, 1});
  for (size_t a = 0; torch_form && a < n; ++a) {
    const int64_t span = p.dilations[a] * (p.kernel[a] - 1) + 1;
    const int64_t values[] = {p.in[2 + a], p.kernel[a], p.strides[a], p.pads[a], p.dilations[a]};
    // The pooled length is then PyTorch's, which the layers compute (pooling.hpp).
    torch_form = p.pads[a] == p.pads[a + n] && p.pads[a] <= (max ? span / 2 : p.kernel[a] / 2) &&
                 std::all_of(std::begin(values), std::end(values), FitsLayer) &&
                 PoolOutputSize(p.in[2 + a], p.kernel[a], p.strides[a], p.pads[a], p.dilations[a],
                                p.ceil_mode) == p.out[2 + a];
  }
  return torch_form;
}

// MaxPool and AveragePool. The forms PyTorch's layers take become those
// layers, which ResNet's speed depends on; the others (1-D, asymmetric or
// larger pads, ONNX's ceil-mode sizes) kuiper.Pool (kuiper/src/layer/onnx_pool.cpp).
void LowerPool(Context& ctx, const onnx::NodeProto& node) {
  const bool max = node.op_type() == "MaxPool";
  const Pooling p = ReadPooling(ctx, node);
  std::map<std::string, pnnx::Parameter> params;
  params["kernel_size"] = IntsParam(ToInts(p.kernel));
  params["stride"] = IntsParam(ToInts(p.strides));
  params["ceil_mode"] = BoolParam(p.ceil_mode);
  if (TorchForm(p, max)) {
    params["padding"] = IntsParam({static_cast<int>(p.pads[0]), static_cast<int>(p.pads[1])});
    if (max) {
      params["dilation"] = IntsParam(ToInts(p.dilations));
      params["return_indices"] = BoolParam(false);
      ctx.EmitUnary(node, "nn.MaxPool2d").params = params;
    } else {
      params["count_include_pad"] = BoolParam(p.count_include_pad);
      params["divisor_override"] = pnnx::Parameter{};
      ctx.EmitUnary(node, "nn.AvgPool2d").params = params;
    }
    return;
  }
  params["mode"] = StringParam(max ? "max" : "avg");
  params["dilation"] = IntsParam(ToInts(p.dilations));
  params["pads"] = IntsParam(ToInts(p.pads));
  params["count_include_pad"] = BoolParam(p.count_include_pad);
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

// The clamps: Clip (nn.ReLU6 and nn.ReLU for PyTorch's bounds, else
// torch.clamp) and HardSigmoid (nn.Hardsigmoid for PyTorch's parameters,
// else an expression and torch.clamp). Relu, Sigmoid and HardSwish are rows of
// the table of unary functions (kuiper/unary_ops.def, lower_elementwise.cpp).
#include <cmath>
#include <limits>

#include "lowering_registry.hpp"

namespace kuiper::onnx_import {
namespace {

pnnx::Operator& EmitClamp(Context& ctx, const std::string& name, int input, int output, float lo,
                          float hi) {
  pnnx::Operator& op = ctx.Emit("torch.clamp", name, {input}, output);
  op.params["min"] = std::isinf(lo) && lo < 0 ? pnnx::Parameter{} : FloatParam(lo);
  op.params["max"] = std::isinf(hi) && hi > 0 ? pnnx::Parameter{} : FloatParam(hi);
  return op;
}

// Clip(x, min, max) = min(max(x, min), max). Opset 6..10 keeps the bounds in
// attributes, opset 11+ in the optional inputs 1 and 2 (an empty name: absent),
// which must be constant scalars here. PyTorch's ReLU6 and ReLU become the
// engine's fixed layers; any other bounds torch.clamp.
void LowerClip(Context& ctx, const onnx::NodeProto& node) {
  constexpr float kInfinity = std::numeric_limits<float>::infinity();
  float lo = -kInfinity, hi = kInfinity;
  if (ctx.opset() < 11) {
    if (node.input_size() != 1) {
      ctx.Fail(node, fmt::format("opset {} Clip takes 1 input (min and max are attributes), has {}",
                                 ctx.opset(), node.input_size()));
    }
    lo = ctx.FloatAttributeChecked(node, "min", lo);
    hi = ctx.FloatAttributeChecked(node, "max", hi);
  } else {
    for (const char* name : {"min", "max"}) {
      if (FindAttribute(node, name)) {
        ctx.Fail(node, fmt::format("opset {} Clip takes '{}' as an input (1: min, 2: max), not as "
                                   "an attribute",
                                   ctx.opset(), name));
      }
    }
    if (node.input_size() > 3) {
      ctx.Fail(node,
               fmt::format("takes at most 3 inputs (input, min, max), has {}", node.input_size()));
    }
    for (int k = 1; k <= 2; ++k) {
      if (!ctx.HasInput(node, k)) continue;
      const onnx::TensorProto& bound = ctx.RequireConstant(node, k);
      if (bound.dims_size() != 0) {
        ctx.Fail(node, fmt::format("{} must be a scalar, has shape {}", k == 1 ? "min" : "max",
                                   ShapeText(Shape(bound.dims().begin(), bound.dims().end()))));
      }
      const float value = ConstantAsFloats(bound).at(0);
      if (std::isnan(value)) ctx.Fail(node, fmt::format("{} is NaN", k == 1 ? "min" : "max"));
      (k == 1 ? lo : hi) = value;
    }
  }
  if (lo == 0 && hi == 6) {
    ctx.EmitUnary(node, "nn.ReLU6");
  } else if (lo == 0 && hi == kInfinity) {
    ctx.EmitUnary(node, "nn.ReLU");
  } else {
    const int input = ctx.Input(node, 0);
    EmitClamp(ctx, ctx.NodeName(node), input, ctx.Output(node), lo, hi);
  }
}

// HardSigmoid(x) = max(0, min(1, alpha*x + beta)), ONNX's defaults alpha=0.2,
// beta=0.5. PyTorch's Hardsigmoid exports alpha=1/6 (as a float) and beta=0.5:
// that is the engine's nn.Hardsigmoid, relu6(x + 3) / 6, equal up to rounding.
// Other parameters become an expression alpha*x + beta, then torch.clamp to [0,1].
void LowerHardSigmoid(Context& ctx, const onnx::NodeProto& node) {
  if (node.input_size() != 1)
    ctx.Fail(node, fmt::format("needs 1 input, has {}", node.input_size()));
  const float alpha = ctx.FloatAttributeChecked(node, "alpha", 0.2f);
  const float beta = ctx.FloatAttributeChecked(node, "beta", 0.5f);
  if (std::isinf(alpha) || std::isinf(beta)) ctx.Fail(node, "alpha and beta must be finite");
  if (alpha == 1.f / 6.f && beta == 0.5f) {
    ctx.EmitUnary(node, "nn.Hardsigmoid");
    return;
  }
  const int input = ctx.Input(node, 0);
  const std::string name = ctx.NodeName(node);
  const int affine = ctx.NewOperand(node.output(0) + "_affine",
                                    ctx.EngineShape(ctx.ShapeOf(node, node.output(0))));
  // 9 significant digits: every float reads back as itself.
  ctx.Emit("pnnx.Expression", name + "_affine", {input}, affine).params["expr"] =
      StringParam(fmt::format("add(mul(@0,{:.8e}),{:.8e})", alpha, beta));
  EmitClamp(ctx, name, affine, ctx.Output(node), 0.f, 1.f);
}

}  // namespace

KUIPER_ONNX_LOWERING_CONSTANTS(
    LowerClip, ConstantInputs({1, 2}),
    "min and max constant scalars (attributes before opset 11); (0, 6) is nn.ReLU6", "Clip");
KUIPER_ONNX_LOWERING(LowerHardSigmoid,
                     "finite alpha and beta; PyTorch's (1/6, 0.5) is nn.Hardsigmoid",
                     "HardSigmoid");

}  // namespace kuiper::onnx_import

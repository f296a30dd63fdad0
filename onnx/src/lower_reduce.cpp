// Reductions along axes: Reduce* (any axes, keepdims, noop_with_empty_axes,
// axes as attribute or input), ArgMax/ArgMin, Softmax/LogSoftmax/Hardmax (any
// axis; before opset 13 the input is coerced to 2-D at `axis`) and CumSum, as
// torch.sum, torch.amax, torch.argmax, F.log_softmax, torch.cumsum, ...
// (kuiper/src/layer/reduce.cpp and axis_ops.cpp).
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>

#include "lowering_registry.hpp"

namespace kuiper::onnx_import {
namespace {

// x.mean([2, 3]) of N x C x H x W: nn.AdaptiveAvgPool2d to (1,1), then,
// without keepdims, Tensor.reshape to (N, C).
void LowerGlobalMean(Context& ctx, const onnx::NodeProto& node, bool keepdims) {
  const Shape& in = ctx.ShapeOf(node, node.input(0));
  if (keepdims) {
    ctx.EmitUnary(node, "nn.AdaptiveAvgPool2d").params["output_size"] = IntsParam({1, 1});
    return;
  }
  const int input = ctx.Input(node, 0);
  const int pooled =
      ctx.NewOperand(node.output(0) + "_pooled", ctx.EngineShape({in[0], in[1], 1, 1}));
  ctx.Emit("nn.AdaptiveAvgPool2d", ctx.NodeName(node) + "_pool", {input}, pooled)
      .params["output_size"] = IntsParam({1, 1});
  ctx.EmitReshapeTo(ctx.NodeName(node), pooled, ctx.ShapeOf(node, node.output(0)),
                    ctx.Output(node));
}

// ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare. The axes are
// an attribute, or (ReduceSum from opset 13, the others from 18) the
// optional input 1; none means every axis, unless noop_with_empty_axes.
// ReduceMean over H and W of N x C x H x W stays global average pooling (the
// fast path of ResNet-style heads; in batch mode, where the items are C x H x W).
void LowerReduce(Context& ctx, const onnx::NodeProto& node) {
  const std::string& type = node.op_type();
  const Shape& in = ctx.ShapeOf(node, node.input(0));
  const size_t rank = in.size();
  std::vector<int64_t> axes = AttributeInts(node, "axes", {});
  if (ctx.HasInput(node, 1)) axes = ctx.ConstantInts(node, 1);
  const bool keepdims = AttributeInt(node, "keepdims", 1) != 0;
  if (axes.empty()) {
    if (AttributeInt(node, "noop_with_empty_axes", 0) != 0) {
      ctx.EmitUnary(node, "pnnx.Expression").params["expr"] = StringParam("@0");
      return;
    }
    axes.resize(rank);
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (rank == 0) ctx.Fail(node, "the input is a scalar, which has no axis to reduce");
  std::vector<int64_t> sorted;
  for (int64_t axis : axes) {
    if (axis < -static_cast<int64_t>(rank) || axis >= static_cast<int64_t>(rank)) {
      ctx.Fail(node, fmt::format("axis {} is out of range for rank {}", axis, rank));
    }
    sorted.push_back(axis < 0 ? axis + static_cast<int64_t>(rank) : axis);
  }
  std::sort(sorted.begin(), sorted.end());
  if (type == "ReduceMean" && ctx.batch_mode() && rank == 4 &&
      sorted == std::vector<int64_t>{2, 3}) {
    LowerGlobalMean(ctx, node, keepdims);
    return;
  }
  const std::vector<int> dims = ctx.EngineAxes(node, axes, rank);
  static const std::map<std::string, std::string> types = {{"ReduceSum", "torch.sum"},
                                                           {"ReduceMean", "torch.mean"},
                                                           {"ReduceMax", "torch.amax"},
                                                           {"ReduceMin", "torch.amin"},
                                                           {"ReduceProd", "torch.prod"},
                                                           {"ReduceL1", "torch.norm"},
                                                           {"ReduceL2", "torch.norm"},
                                                           {"ReduceLogSum", "torch.sum"},
                                                           {"ReduceLogSumExp", "torch.logsumexp"},
                                                           {"ReduceSumSquare", "torch.sum"}};
  const std::string name = ctx.NodeName(node);
  int input = ctx.Input(node, 0);
  if (type == "ReduceSumSquare") {  // sum of x*x
    const int squared = ctx.NewOperand(node.output(0) + "_squared", ctx.EngineShape(in));
    ctx.Emit("pnnx.Expression", name + "_square", {input}, squared).params["expr"] =
        StringParam("mul(@0,@0)");
    input = squared;
  }
  int output = -1, summed = -1;
  if (type == "ReduceLogSum") {  // log of the sum
    summed =
        ctx.NewOperand(node.output(0) + "_sum", ctx.EngineShape(ctx.ShapeOf(node, node.output(0))));
    output = summed;
  } else {
    output = ctx.Output(node);
  }
  pnnx::Operator& op =
      ctx.Emit(types.at(type), name + (summed >= 0 ? "_sum" : ""), {input}, output);
  op.params["dim"] = IntsParam(dims);
  op.params["keepdim"] = BoolParam(keepdims);
  if (type == "ReduceL1" || type == "ReduceL2")
    op.params["p"] = IntParam(type == "ReduceL1" ? 1 : 2);
  if (summed >= 0) {
    ctx.Emit("pnnx.Expression", name, {summed}, ctx.Output(node)).params["expr"] =
        StringParam("log(@0)");
  }
}

// ArgMax/ArgMin (axis default 0, keepdims default 1, select_last_index from
// opset 12): the int64 index travels as a float.
void LowerArgExtreme(Context& ctx, const onnx::NodeProto& node) {
  const size_t rank = ctx.ShapeOf(node, node.input(0)).size();
  const int dim = ctx.EngineAxis(node, AttributeInt(node, "axis", 0), rank);
  const int input = ctx.Input(node, 0);
  pnnx::Operator& op = ctx.Emit(node.op_type() == "ArgMax" ? "torch.argmax" : "torch.argmin",
                                ctx.NodeName(node), {input}, ctx.OutputAsFloat(node, 0));
  op.params["dim"] = IntParam(dim);
  op.params["keepdim"] = BoolParam(AttributeInt(node, "keepdims", 1) != 0);
  op.params["select_last_index"] = BoolParam(AttributeInt(node, "select_last_index", 0) != 0);
}

// Softmax, LogSoftmax and Hardmax. From opset 13 they act along `axis`
// (default -1). Before, the input is coerced to 2-D at `axis` (default 1):
// (product of the dims before it, product of the rest), the operation runs
// along the second, and the result takes the input's shape again; that is
// one reshape, the operation along the last engine dim, one reshape back.
void LowerSoftmaxLike(Context& ctx, const onnx::NodeProto& node) {
  static const std::map<std::string, std::string> types = {
      {"Softmax", "nn.Softmax"}, {"LogSoftmax", "F.log_softmax"}, {"Hardmax", "kuiper.Hardmax"}};
  const std::string& type = types.at(node.op_type());
  const Shape& shape = ctx.ShapeOf(node, node.input(0));
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0) ctx.Fail(node, "the input is a scalar");
  int64_t axis = AttributeInt(node, "axis", ctx.opset() >= 13 ? -1 : 1);
  if (axis < -rank || axis >= rank) {
    ctx.Fail(node, fmt::format("axis {} is out of range for rank {}", axis, rank));
  }
  if (axis < 0) axis += rank;
  bool one_axis = ctx.opset() >= 13;
  if (!one_axis) {  // the coerced 2-D form is one axis when the dims after it are 1s
    one_axis = true;
    for (int64_t d = axis + 1; d < rank; ++d) one_axis = one_axis && shape[d] == 1;
  }
  if (one_axis) {
    ctx.EmitUnary(node, type).params["dim"] = IntParam(ctx.EngineAxis(node, axis, shape.size()));
    return;
  }
  if (ctx.batch_mode() && axis == 0) ctx.FailBatch(node, "coerces the whole batch to one row");
  const int64_t rows = Product(shape, 0, axis);
  const int64_t cols = Product(shape, axis, shape.size());
  // (rows, cols) as an ONNX shape; in batch mode rows starts with the batch.
  const Shape flat = ctx.batch_mode() ? Shape{shape[0], rows / shape[0], cols} : Shape{rows, cols};
  const std::string name = ctx.NodeName(node);
  const int input = ctx.Input(node, 0);
  const int flat_in = ctx.NewOperand(node.output(0) + "_2d", ctx.EngineShape(flat));
  ctx.EmitReshapeTo(name + "_2d", input, flat, flat_in);
  const int flat_out = ctx.NewOperand(node.output(0) + "_2d_out", ctx.EngineShape(flat));
  ctx.Emit(type, name, {flat_in}, flat_out).params["dim"] = IntParam(-1);
  ctx.EmitReshapeTo(name + "_back", flat_out, shape, ctx.Output(node));
}

// CumSum(x, axis) with ONNX's exclusive and reverse.
void LowerCumSum(Context& ctx, const onnx::NodeProto& node) {
  const Shape& in = ctx.ShapeOf(node, node.input(0));
  const std::vector<int64_t> axis = ctx.ConstantInts(node, 1);
  if (axis.size() != 1) ctx.Fail(node, "axis (input 1) must be one value");
  pnnx::Operator& op = ctx.EmitUnary(node, "torch.cumsum");
  op.params["dim"] = IntParam(ctx.EngineAxis(node, axis[0], in.size()));
  op.params["exclusive"] = BoolParam(AttributeInt(node, "exclusive", 0) != 0);
  op.params["reverse"] = BoolParam(AttributeInt(node, "reverse", 0) != 0);
}

}  // namespace

KUIPER_ONNX_LOWERING_CONSTANTS(LowerReduce, ConstantInputs({1}),
                               "axes constant; in batch mode not over dim 0 (else one item)",
                               "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd",
                               "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                               "ReduceSumSquare");
KUIPER_ONNX_LOWERING(LowerArgExtreme, "any axis; select_last_index", "ArgMax", "ArgMin");
KUIPER_ONNX_LOWERING(LowerSoftmaxLike, "any axis (2-D coercion before opset 13)", "Softmax",
                     "LogSoftmax", "Hardmax");
KUIPER_ONNX_LOWERING_CONSTANTS(LowerCumSum, ConstantInputs({1}),
                               "constant axis; exclusive, reverse", "CumSum");

}  // namespace kuiper::onnx_import

// Indexing: Gather (indices constant or computed at run time) as
// torch.index_select, GatherElements as torch.gather.
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>

#include "lowering_registry.hpp"

namespace kuiper::onnx_import {
namespace {

// Gather(data, indices, axis): the indices, known at load time (a parameter)
// or computed (a second operand), are flattened into one torch.index_select,
// whose result takes the output's shape (data.shape[:axis] + indices.shape +
// data.shape[axis+1:]) by a reshape.
void LowerGather(Context& ctx, const onnx::NodeProto& node) {
  const Shape& data = ctx.ShapeOf(node, node.input(0));
  const int64_t axis_attr = AttributeInt(node, "axis", 0);
  const int dim = ctx.EngineAxis(node, axis_attr, data.size());
  const int64_t axis = axis_attr < 0 ? axis_attr + static_cast<int64_t>(data.size()) : axis_attr;
  if (!ctx.HasInput(node, 1)) ctx.Fail(node, "input 1 (the indices) is missing");
  if (!ctx.Constant(node.input(1))) {
    // Indices computed at run time: flattened to 1-D, the second operand of
    // torch.index_select. They index the whole value, so the graph is one
    // item (in batch mode item n of the indices would meet item n of the data).
    if (ctx.batch_mode())
      ctx.FailBatch(node, "indices computed at run time index across the batch");
    const Shape& index_shape = ctx.ShapeOf(node, node.input(1));
    const int64_t count = Product(index_shape, 0, index_shape.size());
    if (count == 0) ctx.Fail(node, "no indices: an empty result is not an engine tensor");
    const std::string name = ctx.NodeName(node);
    const int index = ctx.Input(node, 1);
    const int flat = ctx.NewOperand(node.output(0) + "_index", ctx.EngineShape({count}));
    ctx.EmitReshapeTo(name + "_index", index, {count}, flat);
    Shape selected = data;
    selected[axis] = count;
    const int picked = ctx.NewOperand(node.output(0) + "_picked", ctx.EngineShape(selected));
    ctx.Emit("torch.index_select", name + "_select", {ctx.Input(node, 0), flat}, picked)
        .params["dim"] = IntParam(dim);
    ctx.EmitReshapeTo(name, picked, ctx.ShapeOf(node, node.output(0)), ctx.Output(node));
    return;
  }
  const std::vector<int64_t> indices = ctx.ConstantInts(node, 1);
  if (indices.empty()) ctx.Fail(node, "no indices: an empty result is not an engine tensor");
  for (int64_t index : indices) {
    if (index < -data[axis] || index >= data[axis]) {
      ctx.Fail(node, fmt::format("index {} is out of range for axis {} of size {}", index, axis,
                                 data[axis]));
    }
  }
  const Shape& out = ctx.ShapeOf(node, node.output(0));
  Shape selected = data;
  selected[axis] = static_cast<int64_t>(indices.size());
  const int input = ctx.Input(node, 0);
  const bool direct = selected == out;
  const int picked = direct ? ctx.Output(node)
                            : ctx.NewOperand(node.output(0) + "_picked", ctx.EngineShape(selected));
  pnnx::Operator& op = ctx.Emit("torch.index_select",
                                ctx.NodeName(node) + (direct ? "" : "_select"), {input}, picked);
  op.params["dim"] = IntParam(dim);
  op.params["index"] = IntsParam(ToInts(indices));
  if (!direct) ctx.EmitReshapeTo(ctx.NodeName(node), picked, out, ctx.Output(node));
}

// GatherElements(data, indices, axis): torch.gather with the indices known at
// load time. Indices differ per batch item, so in batch mode the batch must
// be 1 (else the graph converts again as one item).
void LowerGatherElements(Context& ctx, const onnx::NodeProto& node) {
  const Shape& data = ctx.ShapeOf(node, node.input(0));
  const int dim = ctx.EngineAxis(node, AttributeInt(node, "axis", 0), data.size());
  if (!ctx.HasInput(node, 1)) ctx.Fail(node, "input 1 (the indices) is missing");
  if (!ctx.Constant(node.input(1))) {
    // Indices computed at run time: the second operand of torch.gather. Item
    // n of the indices picks from item n of the data, as ONNX does for any
    // axis but 0 (EngineAxis sends that one to single-item mode).
    const Shape& index_shape = ctx.ShapeOf(node, node.input(1));
    if (index_shape.size() != data.size()) {
      ctx.Fail(node, fmt::format("indices of shape {} and data of shape {} differ in rank",
                                 ShapeText(index_shape), ShapeText(data)));
    }
    if (ctx.batch_mode() && index_shape[0] != data[0]) {
      ctx.FailBatch(node, "its indices differ from the data along the batch");
    }
    const int x = ctx.Input(node, 0);
    ctx.Emit("torch.gather", ctx.NodeName(node), {x, ctx.Input(node, 1)}, ctx.Output(node))
        .params["dim"] = IntParam(dim);
    return;
  }
  const onnx::TensorProto& tensor = ctx.RequireConstant(node, 1);
  Shape shape(tensor.dims().begin(), tensor.dims().end());
  if (shape.size() != data.size()) {
    ctx.Fail(node, fmt::format("indices of shape {} and data of shape {} differ in rank",
                               ShapeText(shape), ShapeText(data)));
  }
  if (ctx.batch_mode()) {
    if (shape[0] != 1 || data[0] != 1) ctx.FailBatch(node, "its indices differ along the batch");
    shape.erase(shape.begin());
  }
  const std::vector<int64_t> indices = ctx.ConstantInts(node, 1);
  if (indices.empty()) ctx.Fail(node, "no indices: an empty result is not an engine tensor");
  pnnx::Operator& op = ctx.EmitUnary(node, "torch.gather");
  op.params["dim"] = IntParam(dim);
  op.params["index"] = IntsParam(ToInts(indices));
  op.params["index_shape"] = IntsParam(ToInts(shape));
}

}  // namespace

KUIPER_ONNX_LOWERING(LowerGather, "indices constant or computed; in batch mode not along dim 0",
                     "Gather");
KUIPER_ONNX_LOWERING(LowerGatherElements, "indices constant; in batch mode batch 1",
                     "GatherElements");

}  // namespace kuiper::onnx_import

// Operators that move values without computing new ones: Reshape (Flatten,
// Squeeze, Unsqueeze), Concat, Split, Transpose, Slice, Expand, Tile, Pad,
// Trilu, DepthToSpace/SpaceToDepth, Size, and the constant generators (Range,
// ConstantOfShape, Shape), which are folded at load time. Each becomes
// ordinary engine operators of PyTorch/PNNX types (Tensor.reshape, torch.cat,
// torch.permute, Tensor.slice, Tensor.expand, Tensor.repeat, F.pad, ...).
//
// An operator acting on ONNX dimension 0 cannot run in batch mode, where that
// dimension is the engine's batch: EngineAxis (and the checks here) raise
// BatchAxisError, and Run() converts the graph again as one batch item.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <numeric>

#include "kuiper/memory_limit.hpp"
#include "lowering_registry.hpp"

namespace kuiper::onnx_import {
namespace {

// Flatten and Reshape: the target is the inferred output shape, so ONNX's 0
// and -1 entries are already resolved. Row-major data does not move, so in
// batch mode, where every value starts with the batch, each item reshapes alone.
void LowerReshape(Context& ctx, const onnx::NodeProto& node) {
  std::vector<int> shape = ctx.EngineShape(ctx.ShapeOf(node, node.output(0)));
  // A scalar output in batch mode has no batch dimension (found by fuzz/onnx_fuzzer.cpp,
  // OnnxMalformedNode.FlattenDeclaredToGiveAScalarStopsTheConversion).
  if (shape.empty()) ctx.Fail(node, "the output is a scalar, without the batch dimension");
  if (shape.size() > kMaxTensorRank + 1)
    ctx.Fail(node, fmt::format("output shape {} has more than {} item dimensions",
                               ShapeText(ctx.ShapeOf(node, node.output(0))), kMaxTensorRank));
  shape[0] = -1;
  ctx.EmitUnary(node, "Tensor.reshape").params["shape"] = IntsParam(shape);
  // A model may declare any shape: a reshape that cannot hold its input's
  // values is refused here (after the output's own checks), naming the node, rather
  // than when it runs.
  const auto values = [](const Shape& s) {
    uint64_t count = 1;
    for (int64_t d : s)
      count = SaturatingMultiply(count, static_cast<uint64_t>(std::max<int64_t>(d, 0)));
    return count;
  };
  const Shape& in = ctx.ShapeOf(node, node.input(0));
  const Shape& out = ctx.ShapeOf(node, node.output(0));
  if (values(in) != values(out)) {
    ctx.Fail(node,
             fmt::format("its input {} cannot take the shape {}", ShapeText(in), ShapeText(out)));
  }
}

void LowerConcat(Context& ctx, const onnx::NodeProto& node) {
  const size_t rank = ctx.ShapeOf(node, node.output(0)).size();
  const int dim = ctx.EngineAxis(node, AttributeInt(node, "axis", 0), rank);
  std::vector<int> inputs;
  for (int k = 0; k < node.input_size(); ++k) inputs.push_back(ctx.Input(node, k));
  ctx.Emit("torch.cat", ctx.NodeName(node), inputs, ctx.Output(node)).params["dim"] = IntParam(dim);
}

// Split (every opset): one torch.split with k outputs. The piece sizes come
// from the outputs' shapes, which ONNX's shape inference has derived from
// whichever form the model uses (the `split` attribute before opset 13, the
// `split` input from 13, `num_outputs` from 18, or equal parts), so one rule
// covers them all. An empty piece cannot be an engine tensor and is refused.
void LowerSplit(Context& ctx, const onnx::NodeProto& node) {
  const Shape& shape = ctx.ShapeOf(node, node.input(0));
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t axis = AttributeInt(node, "axis", 0);
  const int dim = ctx.EngineAxis(node, axis, shape.size());
  if (axis < 0) axis += rank;
  std::vector<int> sizes;
  for (int j = 0; j < node.output_size(); ++j) {
    if (node.output(j).empty()) ctx.Fail(node, fmt::format("output {} has no name", j));
    const Shape& piece = ctx.ShapeOf(node, node.output(j));
    if (static_cast<int64_t>(piece.size()) != rank || piece[axis] < 1) {
      ctx.Fail(node, fmt::format("output {} has shape {}: an empty piece or another rank than the "
                                 "input's {}",
                                 j, ShapeText(piece), ShapeText(shape)));
    }
    sizes.push_back(static_cast<int>(piece[axis]));
  }
  const int input = ctx.Input(node, 0);
  std::vector<int> outputs;
  for (int j = 0; j < node.output_size(); ++j) outputs.push_back(ctx.Output(node, j));
  pnnx::Operator& op = ctx.Emit("torch.split", ctx.NodeName(node), {input}, -1);
  op.outputs = outputs;
  for (int output : outputs) {
    ctx.graph().operands[output].producer = static_cast<int>(ctx.graph().operators.size()) - 1;
  }
  op.params["dim"] = IntParam(dim);
  op.params["split_size_or_sections"] = IntsParam(sizes);
}

void LowerTranspose(Context& ctx, const onnx::NodeProto& node) {
  const size_t rank = ctx.ShapeOf(node, node.input(0)).size();
  std::vector<int64_t> reversed(rank);
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  const std::vector<int64_t> perm = AttributeInts(node, "perm", reversed);
  std::vector<int> dims;
  if (ctx.batch_mode()) {
    if (perm.empty() || perm[0] != 0) ctx.FailBatch(node, "moves dimension 0, the engine's batch");
    dims = ToInts(perm);
  } else {
    dims.push_back(0);
    for (int64_t d : perm) dims.push_back(static_cast<int>(d + 1));
  }
  ctx.EmitUnary(node, "torch.permute").params["dims"] = IntsParam(dims);
}

// Slice (opset 10+: inputs data, starts, ends, axes, steps; before: attributes
// starts, ends, axes) with constant bounds: one operator per axis (dim counted
// with the batch as 0; start and end clamped to the axis as ONNX does, end
// exclusive). A positive step is a Tensor.slice. A negative step walks the
// axis backwards, start, start+step, ... while > end, which PyTorch's slice
// cannot do: it becomes torch.index_select with those indices, written out.
void LowerSlice(Context& ctx, const onnx::NodeProto& node) {
  const Shape& in = ctx.ShapeOf(node, node.input(0));
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset() < 10) {
    starts = AttributeInts(node, "starts", {});
    ends = AttributeInts(node, "ends", {});
    axes = AttributeInts(node, "axes", {});
  } else {
    starts = OnnxTensorInts(ctx.RequireConstant(node, 1));
    ends = OnnxTensorInts(ctx.RequireConstant(node, 2));
    if (ctx.HasInput(node, 3)) axes = OnnxTensorInts(ctx.RequireConstant(node, 3));
    if (ctx.HasInput(node, 4)) steps = OnnxTensorInts(ctx.RequireConstant(node, 4));
  }
  if (axes.empty()) {
    for (size_t a = 0; a < starts.size(); ++a) axes.push_back(static_cast<int64_t>(a));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (starts.size() != ends.size() || axes.size() != starts.size() ||
      steps.size() != starts.size()) {
    ctx.Fail(node, fmt::format("starts, ends, axes and steps hold {}, {}, {} and {} values",
                               starts.size(), ends.size(), axes.size(), steps.size()));
  }
  int current = ctx.Input(node, 0);
  Shape shape = in;
  for (size_t k = 0; k < axes.size(); ++k) {
    if (steps[k] == 0) ctx.Fail(node, fmt::format("step 0 on axis {}", axes[k]));
    const int dim = ctx.EngineAxis(node, axes[k], in.size());
    const int64_t axis = axes[k] < 0 ? axes[k] + rank : axes[k];
    const int64_t size = shape[axis];
    int64_t start = starts[k] < 0 ? starts[k] + size : starts[k];
    int64_t end = ends[k] < 0 ? ends[k] + size : ends[k];
    // ONNX's clamping: [0, size] for a positive step; for a negative one,
    // start to [0, size-1] and end to [-1, size-1] (-1: through element 0).
    // An INT64_MIN end ("to the front") stays below -1 after adding size.
    if (steps[k] > 0) {
      start = std::clamp<int64_t>(start, 0, size);
      end = std::clamp<int64_t>(end, 0, size);
      // (end - start - 1) / step + 1 elements: no overflow for any positive step.
      shape[axis] = end > start ? (end - start - 1) / steps[k] + 1 : 0;
    } else {
      start = std::clamp<int64_t>(start, 0, size - 1);
      end = std::clamp<int64_t>(end, -1, size - 1);
      // -step may overflow for INT64_MIN: count with the step as unsigned.
      const uint64_t back = 0 - static_cast<uint64_t>(steps[k]);
      const uint64_t span = start > end ? static_cast<uint64_t>(start - end - 1) : 0;
      shape[axis] = start > end ? static_cast<int64_t>(span / back) + 1 : 0;
    }
    if (shape[axis] == 0) {
      ctx.Fail(node, fmt::format("the slice of axis {} is empty (start {}, end {}, step {} on size "
                                 "{}); engine tensors are never empty",
                                 axes[k], starts[k], ends[k], steps[k], size));
    }
    const bool last = k + 1 == axes.size();
    const std::string part = fmt::format("{}_{}", node.output(0), k);
    const int output = last ? ctx.Output(node) : ctx.NewOperand(part, ctx.EngineShape(shape));
    const std::string name = last ? ctx.NodeName(node) : part;
    if (steps[k] > 0) {
      pnnx::Operator& op = ctx.Emit("Tensor.slice", name, {current}, output);
      op.params["dim"] = IntParam(dim);
      op.params["start"] = IntParam(static_cast<int>(start));
      op.params["end"] = IntParam(static_cast<int>(end));
      // A step beyond the axis takes the first element alone.
      op.params["step"] = IntParam(static_cast<int>(std::min(steps[k], size)));
    } else {
      std::vector<int> index;
      for (int64_t j = 0; j < shape[axis]; ++j) {
        index.push_back(static_cast<int>(start + j * std::max(steps[k], -size)));
      }
      pnnx::Operator& op = ctx.Emit("torch.index_select", name, {current}, output);
      op.params["dim"] = IntParam(dim);
      op.params["index"] = IntsParam(index);
    }
    current = output;
  }
  if (ctx.ShapeOf(node, node.output(0)) != shape) {
    ctx.Fail(node, fmt::format("the slice gives {}, the node declares {}", ShapeText(shape),
                               ShapeText(ctx.ShapeOf(node, node.output(0)))));
  }
}

// Expand: NumPy broadcasting to the inferred output shape. In batch mode the
// input must have the output's rank (a lower rank would align its first
// dimension with another one than the batch), and a scalar has no batch.
void LowerExpand(Context& ctx, const onnx::NodeProto& node) {
  const Shape& in = ctx.ShapeOf(node, node.input(0));
  const Shape& out = ctx.ShapeOf(node, node.output(0));
  if (ctx.batch_mode() && (out.empty() || in.size() != out.size() || in[0] != out[0])) {
    ctx.FailBatch(node, "broadcasts along dimension 0, the engine's batch");
  }
  std::vector<int> target = ctx.EngineShape(out);
  target[0] = -1;
  ctx.EmitUnary(node, "Tensor.expand").params["shape"] = IntsParam(target);
}

// Tile(input, repeats): Tensor.repeat; in batch mode repeats[0] must be 1.
void LowerTile(Context& ctx, const onnx::NodeProto& node) {
  const Shape& in = ctx.ShapeOf(node, node.input(0));
  const std::vector<int64_t> repeats = ctx.ConstantInts(node, 1);
  if (repeats.size() != in.size()) {
    ctx.Fail(node, fmt::format("repeats has {} values for an input of rank {}", repeats.size(),
                               in.size()));
  }
  for (size_t d = 0; d < repeats.size(); ++d) {
    if (repeats[d] < 1 ||
        repeats[d] > std::numeric_limits<int32_t>::max() / std::max<int64_t>(in[d], 1)) {
      ctx.Fail(node, fmt::format("repeats {} must be at least 1 and keep every dimension of {} "
                                 "below 2^31",
                                 ShapeText(repeats), ShapeText(in)));
    }
  }
  std::vector<int> sizes = {1};
  for (size_t d = 0; d < repeats.size(); ++d) {
    if (ctx.batch_mode() && d == 0) {
      if (repeats[0] != 1) ctx.FailBatch(node, "repeats dimension 0, the engine's batch");
      continue;
    }
    sizes.push_back(static_cast<int>(repeats[d]));
  }
  ctx.EmitUnary(node, "Tensor.repeat").params["sizes"] = IntsParam(sizes);
}

// Pad: pads (begin of every axis, then end of every axis; negative crops) as
// an attribute before opset 11, as input 1 from 11 (with constant_value as
// input 2 and, from 18, the axes the pads refer to as input 3). F.pad takes
// them in PyTorch's order, last dimension first.
void LowerPad(Context& ctx, const onnx::NodeProto& node) {
  const Shape& in = ctx.ShapeOf(node, node.input(0));
  const size_t rank = in.size();
  std::string mode = AttributeString(node, "mode", "constant");
  static const std::map<std::string, std::string> modes = {{"constant", "constant"},
                                                           {"reflect", "reflect"},
                                                           {"edge", "replicate"},
                                                           {"wrap", "circular"}};
  if (!modes.count(mode)) ctx.Fail(node, fmt::format("mode '{}' is not supported", mode));
  std::vector<int64_t> pads;
  float value = 0.f;
  if (ctx.opset() < 11) {
    pads = AttributeInts(node, ctx.opset() < 2 ? "paddings" : "pads", {});
    value = AttributeFloat(node, "value", 0.f);
  } else {
    pads = ctx.ConstantInts(node, 1);
    if (ctx.HasInput(node, 2)) {
      const onnx::TensorProto& v = ctx.RequireConstant(node, 2);
      value = v.data_type() == onnx::TensorProto::FLOAT
                  ? OnnxTensorFloats(v).at(0)
                  : static_cast<float>(ctx.ConstantInts(node, 2).at(0));
    }
  }
  std::vector<int64_t> axes(rank);
  std::iota(axes.begin(), axes.end(), 0);
  if (ctx.HasInput(node, 3)) axes = ctx.ConstantInts(node, 3);
  if (pads.size() != 2 * axes.size()) {
    ctx.Fail(node, fmt::format("pads has {} values, expected {} (2 per axis)", pads.size(),
                               2 * axes.size()));
  }
  std::vector<int64_t> begin(rank, 0), end(rank, 0);
  for (size_t j = 0; j < axes.size(); ++j) {
    int64_t axis = axes[j];
    if (axis < -static_cast<int64_t>(rank) || axis >= static_cast<int64_t>(rank)) {
      ctx.Fail(node, fmt::format("axis {} is out of range for rank {}", axis, rank));
    }
    if (axis < 0) axis += static_cast<int64_t>(rank);
    begin[axis] = pads[j];
    end[axis] = pads[j + axes.size()];
  }
  for (size_t d = 0; d < rank; ++d) {
    const int64_t size = in[d] + begin[d] + end[d];
    if (std::abs(begin[d]) > std::numeric_limits<int32_t>::max() ||
        std::abs(end[d]) > std::numeric_limits<int32_t>::max() || size < 1 ||
        size > std::numeric_limits<int32_t>::max()) {
      ctx.Fail(node, fmt::format("pads {} give axis {} of {} the size {}: not 1 to 2^31-1",
                                 ShapeText(pads), d, ShapeText(in), size));
    }
  }
  if (begin[0] != 0 || end[0] != 0) {
    if (ctx.batch_mode()) ctx.FailBatch(node, "pads dimension 0, the engine's batch");
  }
  std::vector<int> pad;  // last dimension first, down to the first one padded
  const size_t first = ctx.batch_mode() ? 1 : 0;
  for (size_t d = rank; d-- > first;) {
    pad.push_back(static_cast<int>(begin[d]));
    pad.push_back(static_cast<int>(end[d]));
  }
  while (pad.size() > 2 && pad[pad.size() - 1] == 0 && pad[pad.size() - 2] == 0) {
    pad.resize(pad.size() - 2);
  }
  pnnx::Operator& op = ctx.EmitUnary(node, "F.pad");
  op.params["pad"] = IntsParam(pad);
  op.params["mode"] = StringParam(modes.at(mode));
  op.params["value"] = FloatParam(value);
}

// Trilu(input, k): torch.triu / torch.tril over the last two dimensions,
// which in batch mode must both lie in the item.
void LowerTrilu(Context& ctx, const onnx::NodeProto& node) {
  const Shape& in = ctx.ShapeOf(node, node.input(0));
  if (in.size() < 2) ctx.Fail(node, fmt::format("needs at least 2 dimensions, has {}", in.size()));
  if (ctx.batch_mode() && in.size() < 3) ctx.FailBatch(node, "its rows are the engine's batch");
  int64_t k = 0;
  if (ctx.HasInput(node, 1)) {
    const std::vector<int64_t> values = ctx.ConstantInts(node, 1);
    if (values.size() != 1) ctx.Fail(node, "k must be one value");
    k = values[0];
  }
  const bool upper = AttributeInt(node, "upper", 1) != 0;
  k = std::clamp<int64_t>(k, -(int64_t{1} << 30), int64_t{1} << 30);
  ctx.EmitUnary(node, upper ? "torch.triu" : "torch.tril").params["diagonal"] =
      IntParam(static_cast<int>(k));
}

// DepthToSpace (DCR or CRD) and SpaceToDepth as reshape to 6-D, permute,
// reshape back, as ONNX defines them.
void LowerDepthSpace(Context& ctx, const onnx::NodeProto& node) {
  const Shape& in = ctx.ShapeOf(node, node.input(0));
  if (in.size() != 4) ctx.Fail(node, "only 4-D (N,C,H,W) input");
  const int64_t b = AttributeInt(node, "blocksize", 0);
  // Bounded by the dims first, so that b * b cannot overflow.
  if (b < 1 || b > std::max({in[1], in[2], in[3]})) {
    ctx.Fail(node,
             fmt::format("blocksize {} must be at least 1 and fit the input {}", b, ShapeText(in)));
  }
  const int64_t n = in[0], c = in[1], h = in[2], w = in[3];
  Shape six;
  std::vector<int64_t> perm;
  if (node.op_type() == "DepthToSpace") {
    if (c % (b * b) != 0) ctx.Fail(node, "C is not a multiple of blocksize^2");
    if (AttributeString(node, "mode", "DCR") == "CRD") {
      six = {n, c / (b * b), b, b, h, w};
      perm = {0, 1, 4, 2, 5, 3};
    } else {
      six = {n, b, b, c / (b * b), h, w};
      perm = {0, 3, 4, 1, 5, 2};
    }
  } else {
    if (h % b != 0 || w % b != 0) ctx.Fail(node, "H or W is not a multiple of blocksize");
    six = {n, c, h / b, b, w / b, b};
    perm = {0, 3, 5, 1, 2, 4};
  }
  Shape permuted(6);
  for (size_t d = 0; d < 6; ++d) permuted[d] = six[perm[d]];
  const std::string name = ctx.NodeName(node);
  const int input = ctx.Input(node, 0);
  const int reshaped = ctx.NewOperand(node.output(0) + "_6d", ctx.EngineShape(six));
  ctx.EmitReshapeTo(name + "_6d", input, six, reshaped);
  const int moved = ctx.NewOperand(node.output(0) + "_permuted", ctx.EngineShape(permuted));
  std::vector<int> dims;
  if (!ctx.batch_mode()) dims.push_back(0);
  for (int64_t d : perm) dims.push_back(static_cast<int>(ctx.batch_mode() ? d : d + 1));
  ctx.Emit("torch.permute", name + "_permute", {reshaped}, moved).params["dims"] = IntsParam(dims);
  ctx.EmitReshapeTo(name, moved, ctx.ShapeOf(node, node.output(0)), ctx.Output(node));
}

// Size: the element count, torch.numel of the whole value, which must then
// be one batch item (a scalar output sends the graph to single-item mode).
void LowerSize(Context& ctx, const onnx::NodeProto& node) {
  if (ctx.batch_mode()) ctx.FailBatch(node, "counts the elements of the whole batch");
  const int input = ctx.Input(node, 0);
  ctx.Emit("torch.numel", ctx.NodeName(node), {input}, ctx.OutputAsFloat(node, 0));
}

// Range or ConstantOfShape that FoldGenerator could not fold: an input is
// computed at run time. Its output's shape would depend on it.
void LowerGenerator(Context& ctx, const onnx::NodeProto& node) {
  for (int k = 0; k < node.input_size(); ++k) {
    if (!ctx.HasInput(node, k) || ctx.Constant(node.input(k))) continue;
    ctx.RequireConstant(node, k);  // a graph input: bound from its value, or named
  }
  ctx.Fail(node,
           "is folded at load time only, from constant inputs: the values of its inputs "
           "decide its output's shape, which the engine fixes when it builds the graph");
}

// Shape that FoldShapeArithmetic could not fold: its input's shape is known
// only at run time (a symbolic batch, docs/onnx.md §2).
void LowerShape(Context& ctx, const onnx::NodeProto& node) {
  ctx.Fail(node, fmt::format("the shape of '{}' is known only at run time (a symbolic batch); the "
                             "engine folds Shape at load time",
                             node.input(0)));
}

// Constant nodes are folded when the shapes are collected: each reader
// takes the value where it uses it.
void LowerConstant(Context&, const onnx::NodeProto&) {}

}  // namespace

KUIPER_ONNX_LOWERING(LowerReshape, "the inferred output shape; in batch mode dim 0 stays",
                     "Reshape", "Flatten", "Squeeze", "Unsqueeze");
KUIPER_ONNX_LOWERING(LowerConcat, "in batch mode not along dim 0", "Concat");
KUIPER_ONNX_LOWERING(LowerSplit, "every form of the split sizes; no empty piece", "Split");
KUIPER_ONNX_LOWERING(LowerTranspose, "in batch mode perm[0] = 0", "Transpose");
KUIPER_ONNX_LOWERING_CONSTANTS(LowerSlice, ConstantInputs({1, 2, 3, 4}),
                               "constant starts, ends, axes, steps (negative steps too)", "Slice");
KUIPER_ONNX_LOWERING(LowerExpand, "constant shape; in batch mode the input has the output's rank",
                     "Expand");
KUIPER_ONNX_LOWERING_CONSTANTS(LowerTile, ConstantInputs({1}),
                               "constant repeats; in batch mode repeats[0] = 1", "Tile");
KUIPER_ONNX_LOWERING_CONSTANTS(LowerPad, ConstantInputs({1, 2, 3}),
                               "constant pads and value; constant, reflect, edge, wrap", "Pad");
KUIPER_ONNX_LOWERING_CONSTANTS(LowerTrilu, ConstantInputs({1}),
                               "constant k; the last two dims within the item", "Trilu");
KUIPER_ONNX_LOWERING(LowerDepthSpace, "4-D input; DCR and CRD", "DepthToSpace", "SpaceToDepth");
KUIPER_ONNX_LOWERING(LowerSize, "one batch item", "Size");
KUIPER_ONNX_LOWERING_CONSTANTS(LowerGenerator, ConstantInputs({0, 1, 2}),
                               "constant inputs: folded at load time", "Range", "ConstantOfShape");
KUIPER_ONNX_LOWERING(LowerShape, "a shape fixed at load time: folded", "Shape");
KUIPER_ONNX_LOWERING(LowerConstant, "a tensor or numbers: folded", "Constant");

}  // namespace kuiper::onnx_import

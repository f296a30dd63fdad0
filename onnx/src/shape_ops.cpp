// Node converters for reductions, axis and shape operators:
// Reduce* (any axes, keepdims, noop_with_empty_axes, axes as attribute or
// input), ArgMax/ArgMin, Softmax/LogSoftmax/Hardmax (any axis; before opset
// 13 the input is coerced to 2-D at `axis`), Squeeze/Unsqueeze, Gather,
// Expand, Tile, Pad, Trilu, CumSum, DepthToSpace/SpaceToDepth and
// GlobalMaxPool. Each becomes ordinary engine operators of PyTorch/PNNX
// types (kuiper/src/layer/reduce.cpp and axis_ops.cpp): torch.sum, torch.amax,
// torch.argmax, F.log_softmax, torch.cumsum, torch.triu, torch.index_select,
// Tensor.expand, Tensor.repeat, F.pad, ...
//
// An operator acting on ONNX dimension 0 cannot run in batch mode, where that
// dimension is the engine's batch: EngineAxis (and the checks here) raise
// BatchAxisError, and Run() converts the graph again as one batch item.
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <numeric>

#include "converter.hpp"

namespace kuiper::onnx_import {

namespace {

std::vector<int> ShapeOpsInts(const std::vector<int64_t>& values) {
  return {values.begin(), values.end()};
}

int64_t ShapeOpsProduct(const Shape& shape, size_t begin, size_t end) {
  int64_t product = 1;
  for (size_t d = begin; d < end; ++d) product *= shape[d];
  return product;
}

}  // namespace

int Converter::OutputAsFloat(const onnx::NodeProto& node, int output) {
  const std::string& name = node.output(output);
  const int operand = NewOperand(name, EngineShape(ShapeOf(node, name)));
  operand_of_[name] = operand;
  return operand;
}

std::vector<int64_t> Converter::ConstantInts(const onnx::NodeProto& node, int input) const {
  const onnx::TensorProto& tensor = RequireConstant(node, input);
  if (tensor.data_type() == onnx::TensorProto::FLOAT) {
    std::vector<int64_t> values;
    for (float v : OnnxTensorFloats(tensor)) values.push_back(static_cast<int64_t>(v));
    return values;
  }
  try {
    return OnnxTensorInts(tensor);
  } catch (const ConversionError& e) {
    Fail(node, fmt::format("input {}: {}", input, e.what()));
  }
}

// Engine dims of ONNX `axes` of a rank-`rank` value, sorted, each once.
std::vector<int> Converter::EngineAxes(const onnx::NodeProto& node,
                                       const std::vector<int64_t>& axes, size_t rank) const {
  std::vector<int> dims;
  for (int64_t axis : axes) dims.push_back(EngineAxis(node, axis, rank));
  std::sort(dims.begin(), dims.end());
  if (std::adjacent_find(dims.begin(), dims.end()) != dims.end()) {
    Fail(node, fmt::format("axes ({}) name a dimension twice", fmt::join(axes, ",")));
  }
  return dims;
}

// Emits Tensor.reshape of operand `input` to the engine shape of ONNX `shape`
// (the batch left to the engine: -1) into `output`.
pnnx::Operator& Converter::EmitReshapeTo(const std::string& name, int input, const Shape& shape,
                                         int output) {
  std::vector<int> target = EngineShape(shape);
  target[0] = -1;
  pnnx::Operator& op = Emit("Tensor.reshape", name, {input}, output);
  op.params["shape"] = IntsParam(target);
  return op;
}

// ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare. The axes are
// an attribute, or (ReduceSum from opset 13, the others from 18) the
// optional input 1; none means every axis, unless noop_with_empty_axes.
// ReduceMean over H and W of N x C x H x W stays global average pooling (the
// fast path of ResNet-style heads; in batch mode, where the items are C x H x W).
void Converter::ConvertReduce(const onnx::NodeProto& node) {
  const std::string& type = node.op_type();
  const Shape& in = ShapeOf(node, node.input(0));
  const size_t rank = in.size();
  std::vector<int64_t> axes = AttributeInts(node, "axes", {});
  if (HasInput(node, 1)) axes = ConstantInts(node, 1);
  const bool keepdims = AttributeInt(node, "keepdims", 1) != 0;
  if (axes.empty()) {
    if (AttributeInt(node, "noop_with_empty_axes", 0) != 0) {
      EmitUnary(node, "pnnx.Expression").params["expr"] = StringParam("@0");
      return;
    }
    axes.resize(rank);
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (rank == 0) Fail(node, "the input is a scalar, which has no axis to reduce");
  std::vector<int64_t> sorted;
  for (int64_t axis : axes) {
    if (axis < -static_cast<int64_t>(rank) || axis >= static_cast<int64_t>(rank)) {
      Fail(node, fmt::format("axis {} is out of range for rank {}", axis, rank));
    }
    sorted.push_back(axis < 0 ? axis + static_cast<int64_t>(rank) : axis);
  }
  std::sort(sorted.begin(), sorted.end());
  if (type == "ReduceMean" && batch_mode_ && rank == 4 && sorted == std::vector<int64_t>{2, 3}) {
    ConvertGlobalMean(node, keepdims);
    return;
  }
  const std::vector<int> dims = EngineAxes(node, axes, rank);
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
  const std::string name = NodeName(node);
  int input = Input(node, 0);
  if (type == "ReduceSumSquare") {  // sum of x*x
    const int squared = NewOperand(node.output(0) + "_squared", EngineShape(in));
    Emit("pnnx.Expression", name + "_square", {input}, squared).params["expr"] =
        StringParam("mul(@0,@0)");
    input = squared;
  }
  int output = -1, summed = -1;
  if (type == "ReduceLogSum") {  // log of the sum
    summed = NewOperand(node.output(0) + "_sum", EngineShape(ShapeOf(node, node.output(0))));
    output = summed;
  } else {
    output = Output(node);
  }
  pnnx::Operator& op = Emit(types.at(type), name + (summed >= 0 ? "_sum" : ""), {input}, output);
  op.params["dim"] = IntsParam(dims);
  op.params["keepdim"] = BoolParam(keepdims);
  if (type == "ReduceL1" || type == "ReduceL2")
    op.params["p"] = IntParam(type == "ReduceL1" ? 1 : 2);
  if (summed >= 0) {
    Emit("pnnx.Expression", name, {summed}, Output(node)).params["expr"] = StringParam("log(@0)");
  }
}

// x.mean([2, 3]) of N x C x H x W: nn.AdaptiveAvgPool2d to (1,1), then,
// without keepdims, Tensor.reshape to (N, C).
void Converter::ConvertGlobalMean(const onnx::NodeProto& node, bool keepdims) {
  const Shape& in = ShapeOf(node, node.input(0));
  if (keepdims) {
    EmitUnary(node, "nn.AdaptiveAvgPool2d").params["output_size"] = IntsParam({1, 1});
    return;
  }
  const int input = Input(node, 0);
  const int pooled = NewOperand(node.output(0) + "_pooled", EngineShape({in[0], in[1], 1, 1}));
  Emit("nn.AdaptiveAvgPool2d", NodeName(node) + "_pool", {input}, pooled).params["output_size"] =
      IntsParam({1, 1});
  EmitReshapeTo(NodeName(node), pooled, ShapeOf(node, node.output(0)), Output(node));
}

// GlobalMaxPool: the maximum over every spatial dimension (2..), kept as 1s.
void Converter::ConvertGlobalMaxPool(const onnx::NodeProto& node) {
  const size_t rank = ShapeOf(node, node.input(0)).size();
  if (rank < 3) Fail(node, fmt::format("needs an (N, C, spatial...) input, has rank {}", rank));
  std::vector<int64_t> axes;
  for (size_t d = 2; d < rank; ++d) axes.push_back(static_cast<int64_t>(d));
  pnnx::Operator& op = EmitUnary(node, "torch.amax");
  op.params["dim"] = IntsParam(EngineAxes(node, axes, rank));
  op.params["keepdim"] = BoolParam(true);
}

// ArgMax/ArgMin (axis default 0, keepdims default 1, select_last_index from
// opset 12): the int64 index travels as a float.
void Converter::ConvertArgExtreme(const onnx::NodeProto& node) {
  const size_t rank = ShapeOf(node, node.input(0)).size();
  const int dim = EngineAxis(node, AttributeInt(node, "axis", 0), rank);
  const int input = Input(node, 0);
  pnnx::Operator& op = Emit(node.op_type() == "ArgMax" ? "torch.argmax" : "torch.argmin",
                            NodeName(node), {input}, OutputAsFloat(node, 0));
  op.params["dim"] = IntParam(dim);
  op.params["keepdim"] = BoolParam(AttributeInt(node, "keepdims", 1) != 0);
  op.params["select_last_index"] = BoolParam(AttributeInt(node, "select_last_index", 0) != 0);
}

// Softmax, LogSoftmax and Hardmax. From opset 13 they act along `axis`
// (default -1). Before, the input is coerced to 2-D at `axis` (default 1):
// (product of the dims before it, product of the rest), the operation runs
// along the second, and the result takes the input's shape again; that is
// one reshape, the operation along the last engine dim, one reshape back.
void Converter::ConvertSoftmaxLike(const onnx::NodeProto& node) {
  static const std::map<std::string, std::string> types = {
      {"Softmax", "nn.Softmax"}, {"LogSoftmax", "F.log_softmax"}, {"Hardmax", "kuiper.Hardmax"}};
  const std::string& type = types.at(node.op_type());
  const Shape& shape = ShapeOf(node, node.input(0));
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (rank == 0) Fail(node, "the input is a scalar");
  int64_t axis = AttributeInt(node, "axis", opset_ >= 13 ? -1 : 1);
  if (axis < -rank || axis >= rank) {
    Fail(node, fmt::format("axis {} is out of range for rank {}", axis, rank));
  }
  if (axis < 0) axis += rank;
  bool one_axis = opset_ >= 13;
  if (!one_axis) {  // the coerced 2-D form is one axis when the dims after it are 1s
    one_axis = true;
    for (int64_t d = axis + 1; d < rank; ++d) one_axis = one_axis && shape[d] == 1;
  }
  if (one_axis) {
    EmitUnary(node, type).params["dim"] = IntParam(EngineAxis(node, axis, shape.size()));
    return;
  }
  if (batch_mode_ && axis == 0) FailBatch(node, "coerces the whole batch to one row");
  const int64_t rows = ShapeOpsProduct(shape, 0, axis);
  const int64_t cols = ShapeOpsProduct(shape, axis, shape.size());
  // (rows, cols) as an ONNX shape; in batch mode rows starts with the batch.
  const Shape flat = batch_mode_ ? Shape{shape[0], rows / shape[0], cols} : Shape{rows, cols};
  const std::string name = NodeName(node);
  const int input = Input(node, 0);
  const int flat_in = NewOperand(node.output(0) + "_2d", EngineShape(flat));
  EmitReshapeTo(name + "_2d", input, flat, flat_in);
  const int flat_out = NewOperand(node.output(0) + "_2d_out", EngineShape(flat));
  Emit(type, name, {flat_in}, flat_out).params["dim"] = IntParam(-1);
  EmitReshapeTo(name + "_back", flat_out, shape, Output(node));
}

// Gather(data, indices, axis): the indices, known at load time (a parameter)
// or computed (a second operand), are flattened into one torch.index_select,
// whose result takes the output's shape (data.shape[:axis] + indices.shape +
// data.shape[axis+1:]) by a reshape.
void Converter::ConvertGather(const onnx::NodeProto& node) {
  const Shape& data = ShapeOf(node, node.input(0));
  const int64_t axis_attr = AttributeInt(node, "axis", 0);
  const int dim = EngineAxis(node, axis_attr, data.size());
  const int64_t axis = axis_attr < 0 ? axis_attr + static_cast<int64_t>(data.size()) : axis_attr;
  if (!HasInput(node, 1)) Fail(node, "input 1 (the indices) is missing");
  if (!Constant(node.input(1))) {
    // Indices computed at run time: flattened to 1-D, the second operand of
    // torch.index_select. They index the whole value, so the graph is one
    // item (in batch mode item n of the indices would meet item n of the data).
    if (batch_mode_) FailBatch(node, "indices computed at run time index across the batch");
    const Shape& index_shape = ShapeOf(node, node.input(1));
    const int64_t count = ShapeOpsProduct(index_shape, 0, index_shape.size());
    if (count == 0) Fail(node, "no indices: an empty result is not an engine tensor");
    const std::string name = NodeName(node);
    const int index = Input(node, 1);
    const int flat = NewOperand(node.output(0) + "_index", EngineShape({count}));
    EmitReshapeTo(name + "_index", index, {count}, flat);
    Shape selected = data;
    selected[axis] = count;
    const int picked = NewOperand(node.output(0) + "_picked", EngineShape(selected));
    Emit("torch.index_select", name + "_select", {Input(node, 0), flat}, picked).params["dim"] =
        IntParam(dim);
    EmitReshapeTo(name, picked, ShapeOf(node, node.output(0)), Output(node));
    return;
  }
  const std::vector<int64_t> indices = ConstantInts(node, 1);
  if (indices.empty()) Fail(node, "no indices: an empty result is not an engine tensor");
  for (int64_t index : indices) {
    if (index < -data[axis] || index >= data[axis]) {
      Fail(node,
           fmt::format("index {} is out of range for axis {} of size {}", index, axis, data[axis]));
    }
  }
  const Shape& out = ShapeOf(node, node.output(0));
  Shape selected = data;
  selected[axis] = static_cast<int64_t>(indices.size());
  const int input = Input(node, 0);
  const bool direct = selected == out;
  const int picked =
      direct ? Output(node) : NewOperand(node.output(0) + "_picked", EngineShape(selected));
  pnnx::Operator& op =
      Emit("torch.index_select", NodeName(node) + (direct ? "" : "_select"), {input}, picked);
  op.params["dim"] = IntParam(dim);
  op.params["index"] = IntsParam(ShapeOpsInts(indices));
  if (!direct) EmitReshapeTo(NodeName(node), picked, out, Output(node));
}

// Expand: NumPy broadcasting to the inferred output shape. In batch mode the
// input must have the output's rank (a lower rank would align its first
// dimension with another one than the batch).
void Converter::ConvertExpand(const onnx::NodeProto& node) {
  const Shape& in = ShapeOf(node, node.input(0));
  const Shape& out = ShapeOf(node, node.output(0));
  if (batch_mode_ && (in.size() != out.size() || in[0] != out[0])) {
    FailBatch(node, "broadcasts along dimension 0, the engine's batch");
  }
  std::vector<int> target = EngineShape(out);
  target[0] = -1;
  EmitUnary(node, "Tensor.expand").params["shape"] = IntsParam(target);
}

// Tile(input, repeats): Tensor.repeat; in batch mode repeats[0] must be 1.
void Converter::ConvertTile(const onnx::NodeProto& node) {
  const Shape& in = ShapeOf(node, node.input(0));
  const std::vector<int64_t> repeats = ConstantInts(node, 1);
  if (repeats.size() != in.size()) {
    Fail(node,
         fmt::format("repeats has {} values for an input of rank {}", repeats.size(), in.size()));
  }
  for (size_t d = 0; d < repeats.size(); ++d) {
    if (repeats[d] < 1 ||
        repeats[d] > std::numeric_limits<int32_t>::max() / std::max<int64_t>(in[d], 1)) {
      Fail(node, fmt::format("repeats ({}) must be at least 1 and keep every dimension of {} "
                             "below 2^31",
                             fmt::join(repeats, ","), ShapeText(in)));
    }
  }
  std::vector<int> sizes = {1};
  for (size_t d = 0; d < repeats.size(); ++d) {
    if (batch_mode_ && d == 0) {
      if (repeats[0] != 1) FailBatch(node, "repeats dimension 0, the engine's batch");
      continue;
    }
    sizes.push_back(static_cast<int>(repeats[d]));
  }
  EmitUnary(node, "Tensor.repeat").params["sizes"] = IntsParam(sizes);
}

// Pad: pads (begin of every axis, then end of every axis; negative crops) as
// an attribute before opset 11, as input 1 from 11 (with constant_value as
// input 2 and, from 18, the axes the pads refer to as input 3). F.pad takes
// them in PyTorch's order, last dimension first.
void Converter::ConvertPad(const onnx::NodeProto& node) {
  const Shape& in = ShapeOf(node, node.input(0));
  const size_t rank = in.size();
  std::string mode = AttributeString(node, "mode", "constant");
  static const std::map<std::string, std::string> modes = {{"constant", "constant"},
                                                           {"reflect", "reflect"},
                                                           {"edge", "replicate"},
                                                           {"wrap", "circular"}};
  if (!modes.count(mode)) Fail(node, fmt::format("mode '{}' is not supported", mode));
  std::vector<int64_t> pads;
  float value = 0.f;
  if (opset_ < 11) {
    pads = AttributeInts(node, opset_ < 2 ? "paddings" : "pads", {});
    value = AttributeFloat(node, "value", 0.f);
  } else {
    pads = ConstantInts(node, 1);
    if (HasInput(node, 2)) {
      const onnx::TensorProto& v = RequireConstant(node, 2);
      value = v.data_type() == onnx::TensorProto::FLOAT
                  ? OnnxTensorFloats(v).at(0)
                  : static_cast<float>(ConstantInts(node, 2).at(0));
    }
  }
  std::vector<int64_t> axes(rank);
  std::iota(axes.begin(), axes.end(), 0);
  if (HasInput(node, 3)) axes = ConstantInts(node, 3);
  if (pads.size() != 2 * axes.size()) {
    Fail(node,
         fmt::format("pads has {} values, expected {} (2 per axis)", pads.size(), 2 * axes.size()));
  }
  std::vector<int64_t> begin(rank, 0), end(rank, 0);
  for (size_t j = 0; j < axes.size(); ++j) {
    int64_t axis = axes[j];
    if (axis < -static_cast<int64_t>(rank) || axis >= static_cast<int64_t>(rank)) {
      Fail(node, fmt::format("axis {} is out of range for rank {}", axis, rank));
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
      Fail(node, fmt::format("pads ({}) give axis {} of {} the size {}: not 1 to 2^31-1",
                             fmt::join(pads, ","), d, ShapeText(in), size));
    }
  }
  if (begin[0] != 0 || end[0] != 0) {
    if (batch_mode_) FailBatch(node, "pads dimension 0, the engine's batch");
  }
  std::vector<int> pad;  // last dimension first, down to the first one padded
  const size_t first = batch_mode_ ? 1 : 0;
  for (size_t d = rank; d-- > first;) {
    pad.push_back(static_cast<int>(begin[d]));
    pad.push_back(static_cast<int>(end[d]));
  }
  while (pad.size() > 2 && pad[pad.size() - 1] == 0 && pad[pad.size() - 2] == 0) {
    pad.resize(pad.size() - 2);
  }
  pnnx::Operator& op = EmitUnary(node, "F.pad");
  op.params["pad"] = IntsParam(pad);
  op.params["mode"] = StringParam(modes.at(mode));
  op.params["value"] = FloatParam(value);
}

// Trilu(input, k): torch.triu / torch.tril over the last two dimensions,
// which in batch mode must both lie in the item.
void Converter::ConvertTrilu(const onnx::NodeProto& node) {
  const Shape& in = ShapeOf(node, node.input(0));
  if (in.size() < 2) Fail(node, fmt::format("needs at least 2 dimensions, has {}", in.size()));
  if (batch_mode_ && in.size() < 3) FailBatch(node, "its rows are the engine's batch");
  int64_t k = 0;
  if (HasInput(node, 1)) {
    const std::vector<int64_t> values = ConstantInts(node, 1);
    if (values.size() != 1) Fail(node, "k must be one value");
    k = values[0];
  }
  const bool upper = AttributeInt(node, "upper", 1) != 0;
  k = std::clamp<int64_t>(k, -(int64_t{1} << 30), int64_t{1} << 30);
  EmitUnary(node, upper ? "torch.triu" : "torch.tril").params["diagonal"] =
      IntParam(static_cast<int>(k));
}

// CumSum(x, axis) with ONNX's exclusive and reverse.
void Converter::ConvertCumSum(const onnx::NodeProto& node) {
  const Shape& in = ShapeOf(node, node.input(0));
  const std::vector<int64_t> axis = ConstantInts(node, 1);
  if (axis.size() != 1) Fail(node, "axis (input 1) must be one value");
  pnnx::Operator& op = EmitUnary(node, "torch.cumsum");
  op.params["dim"] = IntParam(EngineAxis(node, axis[0], in.size()));
  op.params["exclusive"] = BoolParam(AttributeInt(node, "exclusive", 0) != 0);
  op.params["reverse"] = BoolParam(AttributeInt(node, "reverse", 0) != 0);
}

// DepthToSpace (DCR or CRD) and SpaceToDepth as reshape to 6-D, permute,
// reshape back, as ONNX defines them.
void Converter::ConvertDepthSpace(const onnx::NodeProto& node) {
  const Shape& in = ShapeOf(node, node.input(0));
  if (in.size() != 4) Fail(node, "only 4-D (N,C,H,W) input");
  const int64_t b = AttributeInt(node, "blocksize", 0);
  // Bounded by the dims first, so that b * b cannot overflow.
  if (b < 1 || b > std::max({in[1], in[2], in[3]})) {
    Fail(node,
         fmt::format("blocksize {} must be at least 1 and fit the input {}", b, ShapeText(in)));
  }
  const int64_t n = in[0], c = in[1], h = in[2], w = in[3];
  Shape six;
  std::vector<int64_t> perm;
  if (node.op_type() == "DepthToSpace") {
    if (c % (b * b) != 0) Fail(node, "C is not a multiple of blocksize^2");
    if (AttributeString(node, "mode", "DCR") == "CRD") {
      six = {n, c / (b * b), b, b, h, w};
      perm = {0, 1, 4, 2, 5, 3};
    } else {
      six = {n, b, b, c / (b * b), h, w};
      perm = {0, 3, 4, 1, 5, 2};
    }
  } else {
    if (h % b != 0 || w % b != 0) Fail(node, "H or W is not a multiple of blocksize");
    six = {n, c, h / b, b, w / b, b};
    perm = {0, 3, 5, 1, 2, 4};
  }
  Shape permuted(6);
  for (size_t d = 0; d < 6; ++d) permuted[d] = six[perm[d]];
  const std::string name = NodeName(node);
  const int input = Input(node, 0);
  const int reshaped = NewOperand(node.output(0) + "_6d", EngineShape(six));
  EmitReshapeTo(name + "_6d", input, six, reshaped);
  const int moved = NewOperand(node.output(0) + "_permuted", EngineShape(permuted));
  std::vector<int> dims;
  if (!batch_mode_) dims.push_back(0);
  for (int64_t d : perm) dims.push_back(static_cast<int>(batch_mode_ ? d : d + 1));
  Emit("torch.permute", name + "_permute", {reshaped}, moved).params["dims"] = IntsParam(dims);
  EmitReshapeTo(name, moved, ShapeOf(node, node.output(0)), Output(node));
}

// ConvTranspose (1-D to 3-D): nn.ConvTranspose1d/2d/3d. The output size is
// the inferred one (ONNX shape inference applies output_shape, output_padding
// and auto_pad); the pad at the start of each axis is `pads`, or, when the
// output size was given (output_shape, SAME_UPPER/LOWER), derived from it as
// the ONNX spec says. The layer's output_padding then makes up the size.
void Converter::ConvertConvTranspose(const onnx::NodeProto& node) {
  const Shape& in = ShapeOf(node, node.input(0));
  const Shape& out = ShapeOf(node, node.output(0));
  const onnx::TensorProto& weight = RequireConstant(node, 1);
  const Shape w(weight.dims().begin(), weight.dims().end());
  const size_t dims = in.size() - 2;
  if (in.size() < 3 || in.size() > 5 || w.size() != in.size() || out.size() != in.size()) {
    Fail(node, fmt::format("needs (N, C, 1 to 3 spatial dims) input and weight of the same rank; "
                           "input {}, weight {}",
                           ShapeText(in), ShapeText(w)));
  }
  if (!batch_mode_) Fail(node, "needs dimension 0 to be the batch (N, C, spatial...)");
  const int64_t group = AttributeInt(node, "group", 1);
  if (group < 1 || in[1] != w[0] || in[1] % group != 0) {
    Fail(node, fmt::format("input channels {} must equal W's dimension 0 ({}) and be a multiple "
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
    Fail(node, "strides, dilations, output_padding or pads do not match the spatial rank");
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
  const bool has_bias = HasInput(node, 2);
  const int input = Input(node, 0);
  pnnx::Operator& op =
      Emit(fmt::format("nn.ConvTranspose{}d", dims), NodeName(node), {input}, Output(node));
  op.params["bias"] = BoolParam(has_bias);
  op.params["dilation"] = IntsParam(ShapeOpsInts(dilations));
  op.params["groups"] = IntParam(static_cast<int>(group));
  op.params["in_channels"] = IntParam(static_cast<int>(w[0]));
  op.params["kernel_size"] = IntsParam(ShapeOpsInts(kernel));
  op.params["out_channels"] = IntParam(static_cast<int>(w[1] * group));
  op.params["output_padding"] = IntsParam(extra);
  op.params["padding"] = IntsParam(padding);
  op.params["stride"] = IntsParam(ShapeOpsInts(strides));
  std::vector<int> wshape = ShapeOpsInts(w);
  op.attrs["weight"] = FloatAttribute(wshape, OnnxTensorFloats(weight));
  if (has_bias) {
    op.attrs["bias"] = FloatAttribute({static_cast<int>(w[1] * group)},
                                      OnnxTensorFloats(RequireConstant(node, 2)));
  }
}

// GatherElements(data, indices, axis): torch.gather with the indices known at
// load time. Indices differ per batch item, so in batch mode the batch must
// be 1 (else the graph converts again as one item).
void Converter::ConvertGatherElements(const onnx::NodeProto& node) {
  const Shape& data = ShapeOf(node, node.input(0));
  const int dim = EngineAxis(node, AttributeInt(node, "axis", 0), data.size());
  if (!HasInput(node, 1)) Fail(node, "input 1 (the indices) is missing");
  if (!Constant(node.input(1))) {
    // Indices computed at run time: the second operand of torch.gather. Item
    // n of the indices picks from item n of the data, as ONNX does for any
    // axis but 0 (EngineAxis sends that one to single-item mode).
    const Shape& index_shape = ShapeOf(node, node.input(1));
    if (index_shape.size() != data.size()) {
      Fail(node, fmt::format("indices of shape {} and data of shape {} differ in rank",
                             ShapeText(index_shape), ShapeText(data)));
    }
    if (batch_mode_ && index_shape[0] != data[0]) {
      FailBatch(node, "its indices differ from the data along the batch");
    }
    const int x = Input(node, 0);
    Emit("torch.gather", NodeName(node), {x, Input(node, 1)}, Output(node)).params["dim"] =
        IntParam(dim);
    return;
  }
  const onnx::TensorProto& tensor = RequireConstant(node, 1);
  Shape shape(tensor.dims().begin(), tensor.dims().end());
  if (shape.size() != data.size()) {
    Fail(node, fmt::format("indices of shape {} and data of shape {} differ in rank",
                           ShapeText(shape), ShapeText(data)));
  }
  if (batch_mode_) {
    if (shape[0] != 1 || data[0] != 1) FailBatch(node, "its indices differ along the batch");
    shape.erase(shape.begin());
  }
  const std::vector<int64_t> indices = ConstantInts(node, 1);
  if (indices.empty()) Fail(node, "no indices: an empty result is not an engine tensor");
  pnnx::Operator& op = EmitUnary(node, "torch.gather");
  op.params["dim"] = IntParam(dim);
  op.params["index"] = IntsParam(ShapeOpsInts(indices));
  op.params["index_shape"] = IntsParam(ShapeOpsInts(shape));
}

// Size: the element count, torch.numel of the whole value, which must then
// be one batch item (a scalar output sends the graph to single-item mode).
void Converter::ConvertSize(const onnx::NodeProto& node) {
  if (batch_mode_) FailBatch(node, "counts the elements of the whole batch");
  const int input = Input(node, 0);
  Emit("torch.numel", NodeName(node), {input}, OutputAsFloat(node, 0));
}

}  // namespace kuiper::onnx_import

// Constant folding: a node whose inputs are all constants and which only moves
// values (Reshape, Unsqueeze, Expand, Concat) or turns integers into floats
// (Cast) is evaluated once, here, and its output becomes a constant.
// torch.onnx.export leaves such chains behind for tensors it computes from
// shapes, such as YOLOv5's grid of cell indices (arange, meshgrid, stack):
// folded, the grid is one constant the Detect-head recognition can check.
#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>

#include "context.hpp"
#include "kuiper/memory_limit.hpp"

namespace kuiper::onnx_import {
namespace {

// Exact for any part of a shape ShapeProblem accepts.
int64_t Count(Shape::const_iterator begin, Shape::const_iterator end) {
  return std::accumulate(begin, end, int64_t{1}, std::multiplies<>());
}

// Why the folding cannot compute with `shape`, or "": a negative dim, or dims
// whose product does not fit in int64. A 0 counts as 1 here, because the
// index arithmetic multiplies parts of a shape, and the part after a 0 can
// overflow although the whole product is 0.
std::string ShapeProblem(const Shape& shape) {
  int64_t product = 1;
  for (int64_t dim : shape) {
    if (dim < 0) return fmt::format("shape {} has a negative dim", ShapeText(shape));
    if (dim > std::numeric_limits<int64_t>::max() / product) {
      return fmt::format("shape {} has more elements than an int64 counts", ShapeText(shape));
    }
    product *= std::max<int64_t>(dim, 1);
  }
  return "";
}

// Where an output element comes from: input `input`, row-major index `index`.
struct Source {
  int input;
  int64_t index;
};

// While a node is folded, each output element takes its Source, its gathered
// value and the value's copy in the folded tensor (int64 or float).
constexpr uint64_t kFoldBytesPerElement = sizeof(Source) + 2 * sizeof(int64_t);

// NumPy broadcasting of `in` to `out`: a dimension of size 1 repeats. Returns
// why `in` does not broadcast to `out`, or "" and the sources.
std::string ExpandSources(const Shape& in, const Shape& out, std::vector<Source>& sources) {
  if (in.size() > out.size()) return "the input has a higher rank than the output";
  const size_t lead = out.size() - in.size();
  for (size_t d = lead; d < out.size(); ++d) {
    if (in[d - lead] != 1 && in[d - lead] != out[d]) {
      return fmt::format("input shape {} does not broadcast to output shape {}", ShapeText(in),
                         ShapeText(out));
    }
  }
  sources.resize(Count(out.begin(), out.end()));
  for (size_t flat = 0; flat < sources.size(); ++flat) {
    int64_t rest = static_cast<int64_t>(flat), index = 0, stride = 1;
    for (size_t d = out.size(); d-- > lead;) {
      const int64_t i = rest % out[d];
      rest /= out[d];
      const int64_t size = in[d - lead];
      index += (size == 1 ? 0 : i) * stride;
      stride *= size;
    }
    sources[flat] = {0, index};
  }
  return "";
}

// Shapes `a` and `b` broadcast both ways (NumPy rules); none when they do not.
std::optional<Shape> Broadcast(Shape a, Shape b) {
  if (a.size() < b.size()) a.insert(a.begin(), b.size() - a.size(), 1);
  if (b.size() < a.size()) b.insert(b.begin(), a.size() - b.size(), 1);
  for (size_t d = 0; d < a.size(); ++d) {
    if (a[d] != b[d] && a[d] != 1 && b[d] != 1) return std::nullopt;
    a[d] = a[d] == 1 ? b[d] : a[d];
  }
  return a;
}

// The shape of a constant.
Shape DimsOf(const onnx::TensorProto& tensor) {
  return {tensor.dims().begin(), tensor.dims().end()};
}

// Concatenation along `axis`: for each index before the axis, every input's
// block in turn. Returns why `inputs` do not concatenate to `out`, or "" and
// the sources.
std::string ConcatSources(const std::vector<Shape>& inputs, int64_t axis, const Shape& out,
                          std::vector<Source>& sources) {
  const int64_t rank = static_cast<int64_t>(out.size());
  if (axis < -rank || axis >= rank) {
    return fmt::format("axis {} is out of range for rank {}", axis, rank);
  }
  if (axis < 0) axis += rank;
  int64_t along = 0;  // the inputs' sizes along the axis, added up
  for (const Shape& in : inputs) {
    bool fits = in.size() == out.size();
    for (int64_t d = 0; fits && d < rank; ++d) fits = d == axis || in[d] == out[d];
    if (!fits) {
      return fmt::format("input shape {} does not fit output shape {} along axis {}", ShapeText(in),
                         ShapeText(out), axis);
    }
    along += in[axis];
  }
  if (along != out[axis]) {
    return fmt::format("the inputs add up to {} along axis {}, the output has {}", along, axis,
                       out[axis]);
  }
  const int64_t outer = Count(out.begin(), out.begin() + axis);
  sources.reserve(Count(out.begin(), out.end()));
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t k = 0; k < inputs.size(); ++k) {
      const int64_t block = Count(inputs[k].begin() + axis, inputs[k].end());
      for (int64_t i = 0; i < block; ++i) sources.push_back({static_cast<int>(k), o * block + i});
    }
  }
  return "";
}

template <typename T>
std::vector<T> Gather(const std::vector<std::vector<T>>& inputs,
                      const std::vector<Source>& sources) {
  std::vector<T> out;
  out.reserve(sources.size());
  for (const Source& s : sources) out.push_back(inputs[s.input][s.index]);
  return out;
}

// An integer constant (int64 or int32), what shape arithmetic computes with.
bool IsIntConstant(const Context& ctx, const std::string& value) {
  const onnx::TensorProto* t = ctx.Constant(value);
  return t &&
         (t->data_type() == onnx::TensorProto::INT64 || t->data_type() == onnx::TensorProto::INT32);
}

// Gather from a 1-D integer constant.
bool FoldIntGather(const Context& ctx, const onnx::NodeProto& node, IntFold& fold) {
  if (node.input_size() != 2 || !IsIntConstant(ctx, node.input(0)) ||
      !IsIntConstant(ctx, node.input(1)))
    return false;
  const onnx::TensorProto& data = *ctx.Constant(node.input(0));
  if (data.dims_size() != 1) return false;
  const int64_t axis = AttributeInt(node, "axis", 0);
  if (axis != 0 && axis != -1) {
    ctx.Fail(node, fmt::format("axis {} is out of range for rank 1", axis));
  }
  const std::vector<int64_t> from = OnnxTensorInts(data);
  const onnx::TensorProto& indices = *ctx.Constant(node.input(1));
  for (int64_t index : OnnxTensorInts(indices)) {
    const int64_t size = static_cast<int64_t>(from.size());
    if (index < -size || index >= size) {
      ctx.Fail(node, fmt::format("index {} is out of range for {} values", index, size));
    }
    fold.values.push_back(from[index < 0 ? index + size : index]);
  }
  fold.shape.assign(indices.dims().begin(), indices.dims().end());
  return true;
}

// ConstantOfShape of an integer value.
bool FoldIntConstantOfShape(const Context& ctx, const onnx::NodeProto& node, IntFold& fold) {
  if (!IsIntConstant(ctx, node.input(0))) return false;
  const onnx::AttributeProto* value = FindAttribute(node, "value");
  int64_t fill = 0;  // ONNX's default: a float 0, the same number
  if (value) {
    const int t = value->t().data_type();
    if (t != onnx::TensorProto::INT64 && t != onnx::TensorProto::INT32) return false;
    const std::vector<int64_t> v = OnnxTensorInts(value->t());
    if (v.size() != 1) ctx.Fail(node, "the value must hold one number");
    fill = v[0];
  }
  fold.shape = OnnxTensorInts(*ctx.Constant(node.input(0)));
  if (const std::string problem = ShapeProblem(fold.shape); !problem.empty())
    ctx.Fail(node, problem);
  const int64_t count = Count(fold.shape.begin(), fold.shape.end());
  CheckMemory(SaturatingMultiply(count, kFoldBytesPerElement),
              fmt::format("node '{}' (ConstantOfShape) of shape {}", ctx.NodeName(node),
                          ShapeText(fold.shape)));
  fold.values.assign(count, fill);
  return true;
}

// Where of integer constants; the condition as a folded Equal leaves it:
// integers, 0 or not.
bool FoldIntWhere(const Context& ctx, const onnx::NodeProto& node, IntFold& fold) {
  if (node.input_size() != 3 || !IsIntConstant(ctx, node.input(0)) ||
      !IsIntConstant(ctx, node.input(1)) || !IsIntConstant(ctx, node.input(2))) {
    return false;
  }
  const std::vector<int64_t> c = OnnxTensorInts(*ctx.Constant(node.input(0)));
  const std::vector<int64_t> a = OnnxTensorInts(*ctx.Constant(node.input(1)));
  const std::vector<int64_t> b = OnnxTensorInts(*ctx.Constant(node.input(2)));
  // Equal sizes, or single values: what shape code uses.
  const size_t n = std::max({c.size(), a.size(), b.size()});
  for (size_t size : {c.size(), a.size(), b.size()}) {
    if (size != n && size != 1) return false;
  }
  for (size_t i = 0; i < n; ++i) {
    fold.values.push_back(c[c.size() == 1 ? 0 : i] ? a[a.size() == 1 ? 0 : i]
                                                   : b[b.size() == 1 ? 0 : i]);
  }
  for (int k = 0; k < 3; ++k) {
    const onnx::TensorProto& t = *ctx.Constant(node.input(k));
    const Shape dims(t.dims().begin(), t.dims().end());
    if (Count(dims.begin(), dims.end()) == static_cast<int64_t>(n)) {
      fold.shape = dims;
      break;
    }
  }
  return true;
}

// Integer Add, Sub, Mul, Div and Equal.
bool FoldIntArithmetic(const Context& ctx, const onnx::NodeProto& node, IntFold& fold) {
  const std::string& type = node.op_type();
  if (node.input_size() != 2 || !IsIntConstant(ctx, node.input(0)) ||
      !IsIntConstant(ctx, node.input(1)))
    return false;
  const std::vector<int64_t> a = OnnxTensorInts(*ctx.Constant(node.input(0)));
  const std::vector<int64_t> b = OnnxTensorInts(*ctx.Constant(node.input(1)));
  // Same shapes, or one side a single value (a scalar or (1)): what shape code uses.
  const onnx::TensorProto& wide = *ctx.Constant(node.input(a.size() >= b.size() ? 0 : 1));
  if (a.size() != b.size() && a.size() != 1 && b.size() != 1) return false;
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const int64_t x = a[a.size() == 1 ? 0 : i], y = b[b.size() == 1 ? 0 : i];
    if (type == "Equal") {  // a bool, held as 0 or 1
      fold.values.push_back(x == y ? 1 : 0);
      continue;
    }
    if (type == "Div" && y == 0) ctx.Fail(node, "integer division by zero");
    // ONNX's integer Div truncates, as C++ does. Any model may hold any
    // integers: an overflow stops the conversion instead of wrapping.
    int64_t z = 0;
    constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
    const bool overflow = type == "Add"   ? __builtin_add_overflow(x, y, &z)
                          : type == "Sub" ? __builtin_sub_overflow(x, y, &z)
                          : type == "Mul" ? __builtin_mul_overflow(x, y, &z)
                                          : (x == kMin && y == -1);
    if (overflow) ctx.Fail(node, fmt::format("{} {} {} overflows int64", x, type, y));
    fold.values.push_back(type == "Div" ? x / y : z);
  }
  fold.shape.assign(wide.dims().begin(), wide.dims().end());
  return true;
}

}  // namespace

// Shape arithmetic: Shape of a value whose shape is fixed, Gather from a 1-D
// integer constant, integer Add/Sub/Mul/Div/Equal and Where of constants, and
// ConstantOfShape of an integer value. torch.onnx.export writes
// `x.chunk(2, dim=1)` as Shape -> Gather -> Add -> Div -> Mul -> Slice bounds,
// and `t.expand(1, 3, ny, nx, 2)` as ConstantOfShape -> Mul -> Equal -> Where
// -> Expand (the -1 entries of a target shape). Returns whether `node` was folded.
bool Context::FoldShapeArithmetic(const onnx::NodeProto& node) {
  const std::string& type = node.op_type();
  if (node.output_size() != 1 || node.input_size() < 1) return false;
  IntFold fold;
  bool folded = false;
  if (type == "Shape") {
    folded = FoldShapeOf(node, fold);
  } else if (type == "Gather") {
    folded = FoldIntGather(*this, node, fold);
  } else if (type == "ConstantOfShape") {
    folded = FoldIntConstantOfShape(*this, node, fold);
  } else if (type == "Where") {
    folded = FoldIntWhere(*this, node, fold);
  } else if (type == "Add" || type == "Sub" || type == "Mul" || type == "Div" || type == "Equal") {
    folded = FoldIntArithmetic(*this, node, fold);
  }
  if (!folded) return false;
  onnx::TensorProto& tensor = folded_.emplace_back();
  tensor.set_name(node.output(0));
  tensor.set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : fold.shape) tensor.add_dims(d);
  for (int64_t v : fold.values) tensor.add_int64_data(v);
  constants_[node.output(0)] = &tensor;
  shapes_[node.output(0)] = fold.shape;
  elem_types_[node.output(0)] = onnx::TensorProto::INT64;
  absorbed_.insert(&node);
  return true;
}

// Shape of a value whose shape is fixed.
bool Context::FoldShapeOf(const onnx::NodeProto& node, IntFold& fold) const {
  // A symbolic batch was fixed at 1 only for inference: its shape is not a constant.
  const auto it = shapes_.find(node.input(0));
  if (it == shapes_.end() || !dynamic_input_.empty()) return false;
  const int64_t rank = static_cast<int64_t>(it->second.size());
  int64_t start = AttributeInt(node, "start", 0), end = AttributeInt(node, "end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  fold.values.assign(it->second.begin() + start, it->second.begin() + end);
  fold.shape = {static_cast<int64_t>(fold.values.size())};
  return true;
}

// Float Add/Sub/Mul/Div of two constants, with NumPy broadcasting: what
// torch.onnx.export leaves for `grid - 0.5` when the grid is computed from
// shapes (a later Ultralytics Detect head). Folded, the value is a constant,
// not a computed value without the batch dimension. Returns whether `node` was folded.
bool Context::FoldFloatArithmetic(const onnx::NodeProto& node) {
  static const std::set<std::string> arithmetic = {"Add", "Sub", "Mul", "Div"};
  if (!arithmetic.count(node.op_type()) || node.input_size() != 2 || node.output_size() != 1) {
    return false;
  }
  const onnx::TensorProto* a = Constant(node.input(0));
  const onnx::TensorProto* b = Constant(node.input(1));
  if (!a || !b || a->data_type() != onnx::TensorProto::FLOAT ||
      b->data_type() != onnx::TensorProto::FLOAT) {
    return false;
  }
  const Shape a_shape = DimsOf(*a), b_shape = DimsOf(*b);
  const std::optional<Shape> out = Broadcast(a_shape, b_shape);
  if (!out)
    Fail(node,
         fmt::format("shapes {} and {} do not broadcast", ShapeText(a_shape), ShapeText(b_shape)));
  const Shape& shape = *out;
  for (const Shape& s : {a_shape, b_shape, shape}) {
    if (const std::string problem = ShapeProblem(s); !problem.empty()) Fail(node, problem);
  }
  CheckMemory(
      SaturatingMultiply(Count(shape.begin(), shape.end()), kFoldBytesPerElement),
      fmt::format("node '{}' ({}) of shape {}", NodeName(node), node.op_type(), ShapeText(shape)));
  std::vector<Source> from_a, from_b;
  if (!ExpandSources(a_shape, shape, from_a).empty() ||
      !ExpandSources(b_shape, shape, from_b).empty()) {
    return false;
  }
  const std::vector<float> x = OnnxTensorFloats(*a), y = OnnxTensorFloats(*b);
  onnx::TensorProto& folded = folded_.emplace_back();
  folded.set_name(node.output(0));
  folded.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : shape) folded.add_dims(d);
  const std::string& type = node.op_type();
  for (size_t i = 0; i < from_a.size(); ++i) {
    const float p = x[from_a[i].index], q = y[from_b[i].index];
    folded.add_float_data(type == "Add"   ? p + q
                          : type == "Sub" ? p - q
                          : type == "Mul" ? p * q
                                          : p / q);
  }
  constants_[node.output(0)] = &folded;
  shapes_[node.output(0)] = shape;
  elem_types_[node.output(0)] = onnx::TensorProto::FLOAT;
  absorbed_.insert(&node);
  return true;
}

void Context::FoldConstants() {
  // Nodes that move or convert constant values without arithmetic.
  static const std::set<std::string> foldable = {"Cast", "Concat", "Expand", "Reshape",
                                                 "Unsqueeze"};
  uint64_t folded_bytes = 0;  // of the nodes folded so far, for the memory limit
  for (const onnx::NodeProto& node : model_.graph().node()) {
    const bool standard = node.domain().empty() || node.domain() == "ai.onnx";
    // Identity of a constant is that constant under another name: how
    // torch.onnx.export shares one initializer among several nodes.
    if (standard && node.op_type() == "Identity" && node.input_size() == 1 &&
        node.output_size() == 1 && Constant(node.input(0))) {
      const onnx::TensorProto* tensor = Constant(node.input(0));
      constants_[node.output(0)] = tensor;
      shapes_[node.output(0)] = Shape(tensor->dims().begin(), tensor->dims().end());
      elem_types_[node.output(0)] = tensor->data_type();
      absorbed_.insert(&node);
      continue;
    }
    if (standard && (FoldShapeArithmetic(node) || FoldFloatArithmetic(node) || FoldGenerator(node)))
      continue;
    if (standard && foldable.count(node.op_type()) && node.output_size() == 1) {
      FoldMovedValues(node, folded_bytes);
    }
  }
}

// Cast, Concat, Expand, Reshape or Unsqueeze of constants, when the output's
// shape is known: the values moved into a new constant. `folded_bytes` counts
// the constants folded so far, for the memory limit.
void Context::FoldMovedValues(const onnx::NodeProto& node, uint64_t& folded_bytes) {
  const std::string& output = node.output(0);
  const bool all_constant =
      node.input_size() > 0 && std::all_of(node.input().begin(), node.input().end(),
                                           [&](const std::string& in) { return Constant(in); });
  if (all_constant && node.op_type() == "Expand" && node.input_size() == 2 &&
      !shapes_.count(output)) {
    // Its target shape was folded just now, after shape inference ran.
    // ONNX Expand broadcasts the input and the target shape both ways.
    if (const auto shape =
            Broadcast(DimsOf(*Constant(node.input(0))), OnnxTensorInts(*Constant(node.input(1))))) {
      shapes_[output] = *shape;
    }
  }
  if (!all_constant || !shapes_.count(output)) return;
  const Shape& out_shape = shapes_.at(output);
  // Only Concat reads every input as data; the others' later inputs are arguments.
  const int data_inputs = node.op_type() == "Concat" ? node.input_size() : 1;
  // Integers (int64, int32) or floats, all data inputs of one kind.
  const auto kind = [&](int k) {
    const int type = Constant(node.input(k))->data_type();
    if (type == onnx::TensorProto::FLOAT) return 1;
    return type == onnx::TensorProto::INT64 || type == onnx::TensorProto::INT32 ? 2 : 0;
  };
  const bool is_float = kind(0) == 1;
  std::vector<Shape> shapes;
  for (int k = 0; k < data_inputs; ++k) {
    if (kind(k) != kind(0)) break;
    const onnx::TensorProto& t = *Constant(node.input(k));
    shapes.emplace_back(t.dims().begin(), t.dims().end());
  }
  const bool cast_to_float =
      AttributeInt(node, "to", onnx::TensorProto::FLOAT) == onnx::TensorProto::FLOAT;
  if (kind(0) == 0 || static_cast<int>(shapes.size()) != data_inputs ||
      (node.op_type() == "Cast" && !cast_to_float)) {
    return;
  }
  // The shapes are checked before any arithmetic on them, and the output's
  // size against the memory limit before it is allocated: a model may
  // declare any output shape (found by an audit of the importer).
  const auto check = [&](const Shape& shape) {
    if (const std::string problem = ShapeProblem(shape); !problem.empty()) Fail(node, problem);
  };
  for (const Shape& shape : shapes) check(shape);
  check(out_shape);
  const int64_t count = Count(out_shape.begin(), out_shape.end());
  const bool same_values = node.op_type() != "Concat" && node.op_type() != "Expand";
  if (same_values && Count(shapes[0].begin(), shapes[0].end()) != count) return;
  const uint64_t bytes = SaturatingMultiply(count, kFoldBytesPerElement);
  folded_bytes += std::min(bytes, std::numeric_limits<uint64_t>::max() - folded_bytes);
  CheckMemory(folded_bytes,
              fmt::format("node '{}' ({}): the folded constants up to '{}' {}", NodeName(node),
                          node.op_type(), output, ShapeText(out_shape)));

  StoreMovedValues(node, shapes, out_shape, is_float);
}

// The folded value of FoldMovedValues's `node`, from its data inputs of
// `shapes` (floats when `is_float`, else integers) to `out_shape`.
void Context::StoreMovedValues(const onnx::NodeProto& node, const std::vector<Shape>& shapes,
                               const Shape& out_shape, bool is_float) {
  const std::string& output = node.output(0);
  const int data_inputs = static_cast<int>(shapes.size());
  const int64_t count = Count(out_shape.begin(), out_shape.end());
  // The values first: TensorValues checks them against their dims, so the
  // sources below index within them.
  std::vector<std::vector<float>> floats;
  std::vector<std::vector<int64_t>> ints;
  for (int k = 0; k < data_inputs; ++k) {
    const onnx::TensorProto& t = *Constant(node.input(k));
    if (is_float) {
      floats.push_back(OnnxTensorFloats(t));
    } else {
      ints.push_back(OnnxTensorInts(t));
    }
  }
  std::vector<Source> sources;
  std::string problem;
  if (node.op_type() == "Concat") {
    problem = ConcatSources(shapes, AttributeInt(node, "axis", 0), out_shape, sources);
  } else if (node.op_type() == "Expand") {
    problem = ExpandSources(shapes[0], out_shape, sources);
  } else {  // Reshape, Unsqueeze, Cast: the same values, row-major order kept
    sources.resize(count);
    for (int64_t i = 0; i < count; ++i) sources[i] = {0, i};
  }
  if (!problem.empty()) Fail(node, problem);

  onnx::TensorProto& folded = folded_.emplace_back();
  folded.set_name(output);
  for (int64_t d : out_shape) folded.add_dims(d);
  if (is_float) {
    folded.set_data_type(onnx::TensorProto::FLOAT);
    for (float v : Gather(floats, sources)) folded.add_float_data(v);
  } else if (node.op_type() == "Cast") {
    folded.set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t v : Gather(ints, sources)) folded.add_float_data(static_cast<float>(v));
  } else {
    folded.set_data_type(onnx::TensorProto::INT64);
    for (int64_t v : Gather(ints, sources)) folded.add_int64_data(v);
  }
  constants_[output] = &folded;
  elem_types_[output] = folded.data_type();
  absorbed_.insert(&node);
}

}  // namespace kuiper::onnx_import

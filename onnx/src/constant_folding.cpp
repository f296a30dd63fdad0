// Constant folding: a node whose inputs are all constants and which only moves
// values (Reshape, Unsqueeze, Expand, Concat) or turns integers into floats
// (Cast) is evaluated once, here, and its output becomes a constant.
// torch.onnx.export leaves such chains behind for tensors it computes from
// shapes, such as YOLOv5's grid of cell indices (arange, meshgrid, stack):
// folded, the grid is one constant the Detect-head recognition can check.
#include <numeric>

#include "converter.hpp"

namespace kuiper::onnx_import {
namespace {

int64_t Count(Shape::const_iterator begin, Shape::const_iterator end) {
  return std::accumulate(begin, end, int64_t{1}, std::multiplies<>());
}

// Where an output element comes from: input `input`, row-major index `index`.
struct Source {
  int input;
  int64_t index;
};

// NumPy broadcasting of `in` to `out`: a dimension of size 1 repeats.
std::vector<Source> ExpandSources(const Shape& in, const Shape& out) {
  std::vector<Source> sources(Count(out.begin(), out.end()));
  const size_t lead = out.size() - in.size();
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
  return sources;
}

// Concatenation along `axis`: for each index before the axis, every input's
// block in turn.
std::vector<Source> ConcatSources(const std::vector<Shape>& inputs, size_t axis) {
  std::vector<Source> sources;
  const int64_t outer = Count(inputs[0].begin(), inputs[0].begin() + axis);
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t k = 0; k < inputs.size(); ++k) {
      const int64_t block = Count(inputs[k].begin() + axis, inputs[k].end());
      for (int64_t i = 0; i < block; ++i) sources.push_back({static_cast<int>(k), o * block + i});
    }
  }
  return sources;
}

template <typename T>
std::vector<T> Gather(const std::vector<std::vector<T>>& inputs,
                      const std::vector<Source>& sources) {
  std::vector<T> out;
  out.reserve(sources.size());
  for (const Source& s : sources) out.push_back(inputs[s.input][s.index]);
  return out;
}

}  // namespace

void Converter::FoldConstants() {
  static const std::set<std::string> foldable = {"Cast", "Concat", "Expand", "Reshape",
                                                 "Unsqueeze"};
  for (const onnx::NodeProto& node : model_.graph().node()) {
    const bool standard = node.domain().empty() || node.domain() == "ai.onnx";
    if (!standard || !foldable.count(node.op_type()) || node.output_size() != 1) continue;
    const std::string& output = node.output(0);
    const bool all_constant =
        node.input_size() > 0 && std::all_of(node.input().begin(), node.input().end(),
                                             [&](const std::string& in) { return Constant(in); });
    if (!all_constant || !shapes_.count(output)) continue;
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
      continue;
    }
    std::vector<Source> sources;
    if (node.op_type() == "Concat") {
      int64_t axis = AttributeInt(node, "axis", 0);
      if (axis < 0) axis += static_cast<int64_t>(out_shape.size());
      sources = ConcatSources(shapes, static_cast<size_t>(axis));
    } else if (node.op_type() == "Expand") {
      sources = ExpandSources(shapes[0], out_shape);
    } else {  // Reshape, Unsqueeze, Cast: the same values, row-major order kept
      sources.resize(Count(shapes[0].begin(), shapes[0].end()));
      for (size_t i = 0; i < sources.size(); ++i) sources[i] = {0, static_cast<int64_t>(i)};
    }
    if (static_cast<int64_t>(sources.size()) != Count(out_shape.begin(), out_shape.end())) continue;

    onnx::TensorProto& folded = folded_.emplace_back();
    folded.set_name(output);
    for (int64_t d : out_shape) folded.add_dims(d);
    if (is_float) {
      std::vector<std::vector<float>> values;
      for (int k = 0; k < data_inputs; ++k)
        values.push_back(OnnxTensorFloats(*Constant(node.input(k))));
      folded.set_data_type(onnx::TensorProto::FLOAT);
      for (float v : Gather(values, sources)) folded.add_float_data(v);
    } else {
      std::vector<std::vector<int64_t>> values;
      for (int k = 0; k < data_inputs; ++k)
        values.push_back(OnnxTensorInts(*Constant(node.input(k))));
      const std::vector<int64_t> gathered = Gather(values, sources);
      if (node.op_type() == "Cast") {
        folded.set_data_type(onnx::TensorProto::FLOAT);
        for (int64_t v : gathered) folded.add_float_data(static_cast<float>(v));
      } else {
        folded.set_data_type(onnx::TensorProto::INT64);
        for (int64_t v : gathered) folded.add_int64_data(v);
      }
    }
    constants_[output] = &folded;
    elem_types_[output] = folded.data_type();
    absorbed_.insert(&node);
  }
}

}  // namespace kuiper::onnx_import

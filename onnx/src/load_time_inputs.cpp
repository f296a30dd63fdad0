// The graph inputs the engine needs at load time, found on the ONNX graph
// before any conversion (load_time_inputs.hpp) and bound to their values.
#include "load_time_inputs.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <set>

#include "lowering_registry.hpp"

namespace kuiper::onnx_import {
namespace {

// The inputs whose values decide the shape of a node's output (ONNX's shape
// inference reads them as constants): an engine that fixes shapes when it
// builds the graph needs them at load time. (op type, first opset with the
// input form) -> input positions. They are ONNX's, not the importer's: an op
// without a lowering is listed too. The inputs lowerings read as constants
// for other reasons (weights, Clip's bounds) they declare where they register
// (lowering_registry.hpp).
const std::vector<int>& OnnxShapeInputs(const std::string& type, int64_t opset) {
  static const std::vector<int> kNone;
  struct Entry {
    int64_t since;
    std::vector<int> inputs;
  };
  static const std::map<std::string, Entry> kTable = {
      {"Reshape", {5, {1}}},         {"Expand", {8, {1}}},           {"Tile", {6, {1}}},
      {"Slice", {10, {1, 2, 3, 4}}}, {"Split", {13, {1}}},           {"Squeeze", {13, {1}}},
      {"Unsqueeze", {13, {1}}},      {"Pad", {11, {1, 3}}},          {"Resize", {10, {1, 2, 3}}},
      {"Upsample", {9, {1}}},        {"ConstantOfShape", {9, {0}}},  {"Range", {11, {0, 1, 2}}},
      {"TopK", {10, {1}}},           {"OneHot", {9, {1}}},           {"ReduceSum", {13, {1}}},
      {"ReduceMean", {18, {1}}},     {"ReduceMax", {18, {1}}},       {"ReduceMin", {18, {1}}},
      {"ReduceProd", {18, {1}}},     {"ReduceL1", {18, {1}}},        {"ReduceL2", {18, {1}}},
      {"ReduceLogSum", {18, {1}}},   {"ReduceLogSumExp", {18, {1}}}, {"ReduceSumSquare", {18, {1}}},
      {"CenterCropPad", {18, {1}}}};
  const auto it = kTable.find(type);
  return it != kTable.end() && opset >= it->second.since ? it->second.inputs : kNone;
}

// The value given for graph input `info` has the shape it declares.
void CheckBoundShape(const onnx::ValueInfoProto& info, const NpyArray& array) {
  const auto& type = info.type().tensor_type();
  if (!type.has_shape()) return;
  bool fits = type.shape().dim_size() == static_cast<int>(array.shape.size());
  for (int d = 0; fits && d < type.shape().dim_size(); ++d) {
    const auto& dim = type.shape().dim(d);
    fits = !dim.has_dim_value() || dim.dim_value() == array.shape[d];
  }
  if (fits) return;
  std::vector<std::string> dims;
  for (const auto& dim : type.shape().dim()) {
    dims.push_back(dim.has_dim_value() ? std::to_string(dim.dim_value()) : "?");
  }
  throw ConversionError(fmt::format(
      "graph input '{}' is bound at load time and declared ({}); its value has shape ({})",
      info.name(), fmt::join(dims, ","), fmt::join(array.shape, ",")));
}

// `array` as an initializer for graph input `info`, in the element type the
// model declares for it, checked against the declared shape. The type first:
// an input of a type the engine cannot carry is named for that (an unread
// CastLike `like` of bfloat16), whatever value was given.
onnx::TensorProto BoundTensor(const onnx::ValueInfoProto& info, const NpyArray& array) {
  const std::string& name = info.name();
  const auto& type = info.type().tensor_type();
  onnx::TensorProto tensor;
  tensor.set_name(name);
  for (int64_t d : array.shape) tensor.add_dims(d);
  const int elem = type.elem_type();
  tensor.set_data_type(elem);
  const auto integral = [&](size_t i) -> int64_t {
    if (array.integer) return array.ints[i];
    const float v = array.data[i];
    if (v != std::floor(v) || std::abs(v) > static_cast<float>(kMaxExactInt)) {
      throw ConversionError(fmt::format(
          "graph input '{}' is of an integer ONNX type ({}); its value holds {} (element {})", name,
          elem, v, i));
    }
    return static_cast<int64_t>(v);
  };
  const size_t count = array.data.size();
  switch (elem) {
    case onnx::TensorProto::FLOAT:
      CheckExactInFloat(array, name);
      for (float v : array.data) tensor.add_float_data(v);
      break;
    case onnx::TensorProto::DOUBLE:
      for (float v : array.data) tensor.add_double_data(v);
      break;
    case onnx::TensorProto::INT64:
      for (size_t i = 0; i < count; ++i) tensor.add_int64_data(integral(i));
      break;
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL:
      for (size_t i = 0; i < count; ++i) tensor.add_int32_data(static_cast<int32_t>(integral(i)));
      break;
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
      for (size_t i = 0; i < count; ++i) tensor.add_uint64_data(integral(i));
      break;
    default:
      throw ConversionError(fmt::format(
          "graph input '{}' is bound at load time but is of ONNX type {}, which cannot be bound",
          name, elem));
  }
  CheckBoundShape(info, array);
  return tensor;
}

// Makes graph input `name` an initializer holding its given value.
void BindInput(onnx::ModelProto& model, const std::string& name, const NpyArray& array) {
  auto& inputs = *model.mutable_graph()->mutable_input();
  for (int i = 0; i < inputs.size(); ++i) {
    if (inputs.Get(i).name() != name) continue;
    *model.mutable_graph()->add_initializer() = BoundTensor(inputs.Get(i), array);
    inputs.DeleteSubrange(i, 1);
    return;
  }
}

bool IsStandardDomain(const onnx::NodeProto& node) {
  return node.domain().empty() || node.domain() == "ai.onnx";
}

bool HasPosition(const std::vector<int>& positions, int k) {
  return std::find(positions.begin(), positions.end(), k) != positions.end();
}

// Whether a graph input (of `runtime`) has a symbolic batch, which
// Context::FixSymbolicBatch fixes at 1 for shape inference only: the Shape of
// any value is then known at run time alone and does not fold
// (Context::FoldShapeOf).
bool HasSymbolicBatch(const onnx::ModelProto& model, const std::set<std::string>& runtime) {
  for (const onnx::ValueInfoProto& info : model.graph().input()) {
    if (!runtime.count(info.name()) || !info.type().tensor_type().has_shape()) continue;
    const auto& dims = info.type().tensor_type().shape().dim();
    if (!dims.empty() && !dims[0].has_dim_value() &&
        std::all_of(dims.begin() + 1, dims.end(), [](const auto& d) { return d.has_dim_value(); }))
      return true;
  }
  return false;
}

// The ONNX graph read backwards, for the two walks below.
struct GraphIndex {
  explicit GraphIndex(const onnx::ModelProto& model);
  // Whether the walks follow `node`'s inputs back: not those of a Shape that
  // folds at load time, which reads its input's shape, never its values.
  bool Follows(const onnx::NodeProto& node) const {
    return !(shapes_fixed && node.op_type() == "Shape" && IsStandardDomain(node));
  }
  // Whether input `k` of `node` is read at load time rather than at run time:
  // a shape input, or one its lowering declares constant.
  bool LoadTimePosition(const onnx::NodeProto& node, int k) const {
    return HasPosition(ConstantInputsOf(node), k) ||
           (IsStandardDomain(node) && HasPosition(OnnxShapeInputs(node.op_type(), opset), k));
  }

  const onnx::GraphProto& graph;
  int64_t opset = 1;
  bool shapes_fixed = true;
  std::map<std::string, const onnx::NodeProto*> producer;  // of each node output
  std::set<std::string> constants;                         // initializers, Constant outputs
  std::set<std::string> runtime;                           // graph inputs, not initializers
};

GraphIndex::GraphIndex(const onnx::ModelProto& model) : graph(model.graph()) {
  for (const onnx::OperatorSetIdProto& set : model.opset_import()) {
    if (set.domain().empty() || set.domain() == "ai.onnx") opset = set.version();
  }
  for (const onnx::TensorProto& init : graph.initializer()) constants.insert(init.name());
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& output : node.output()) producer[output] = &node;
    if (node.op_type() == "Constant" && node.output_size() == 1) constants.insert(node.output(0));
  }
  for (const onnx::ValueInfoProto& info : graph.input()) {
    if (!constants.count(info.name())) runtime.insert(info.name());
  }
  shapes_fixed = !HasSymbolicBatch(model, runtime);
}

// The graph inputs `value` is computed from, nearest first: breadth first
// through every node before it, stopping at constants.
std::vector<std::string> InputsBehind(const GraphIndex& g, const std::string& value) {
  std::vector<std::string> found;
  std::set<std::string> seen;
  std::deque<std::string> queue = {value};
  while (!queue.empty()) {
    const std::string v = queue.front();
    queue.pop_front();
    if (v.empty() || !seen.insert(v).second || g.constants.count(v)) continue;
    if (g.runtime.count(v)) found.push_back(v);
    const auto it = g.producer.find(v);
    if (it == g.producer.end() || !g.Follows(*it->second)) continue;
    for (const std::string& in : it->second->input()) queue.push_back(in);
  }
  return found;
}

// The graph inputs whose values some node reads at run time on the way to a
// graph output. Any other graph input would be a pnnx.Input that no operator
// reads, which the engine refuses; it is read at load time or not at all.
std::set<std::string> InputsReadAtRunTime(const GraphIndex& g) {
  std::set<std::string> read, seen;
  std::vector<std::string> stack;
  for (const onnx::ValueInfoProto& info : g.graph.output()) stack.push_back(info.name());
  while (!stack.empty()) {
    const std::string v = stack.back();
    stack.pop_back();
    if (v.empty() || !seen.insert(v).second || g.constants.count(v)) continue;
    if (g.runtime.count(v)) read.insert(v);
    const auto it = g.producer.find(v);
    if (it == g.producer.end() || !g.Follows(*it->second)) continue;
    const onnx::NodeProto& node = *it->second;
    for (int k = 0; k < node.input_size(); ++k) {
      if (!g.LoadTimePosition(node, k)) stack.push_back(node.input(k));
    }
  }
  return read;
}

}  // namespace

LoadTimeBinding BindLoadTimeInputs(const onnx::ModelProto& model,
                                   const OnnxImportOptions& options) {
  LoadTimeBinding binding{model, {}, {}};
  const GraphIndex g(model);
  std::set<std::string> bound;
  // Binds graph input `name` when it has a value; false when it has none.
  const auto bind = [&](const std::string& name) {
    const auto value = options.input_values.find(name);
    if (value == options.input_values.end()) return false;
    if (bound.insert(name).second) BindInput(binding.model, name, value->second);
    return true;
  };
  for (const onnx::NodeProto& node : model.graph().node()) {
    if (!IsStandardDomain(node)) continue;
    // A shape input that is a graph input itself, which ONNX's shape
    // inference reads; a lowering that needs a computed one as a constant
    // declares it (below), which binds the graph inputs it is computed from.
    for (int k : OnnxShapeInputs(node.op_type(), g.opset)) {
      if (k >= node.input_size() || !g.runtime.count(node.input(k))) continue;
      if (!bind(node.input(k))) {
        binding.missing.push_back(fmt::format("'{}' (input {} of {} node '{}')", node.input(k), k,
                                              node.op_type(), node.name()));
      }
    }
    // A constant input computed from graph inputs folds once they are bound.
    for (int k : ConstantInputsOf(node)) {
      if (k >= node.input_size()) continue;
      for (const std::string& name : InputsBehind(g, node.input(k))) bind(name);
    }
  }
  const std::set<std::string> read = InputsReadAtRunTime(g);
  for (const std::string& name : g.runtime) {
    if (!read.count(name)) bind(name);
  }
  for (const std::string& name : OnnxGraphInputs(model)) {
    if (bound.count(name)) binding.bound.push_back(name);
  }
  return binding;
}

std::vector<std::string> GraphInputsBehind(const onnx::ModelProto& model, const std::string& value,
                                           bool shapes_fixed) {
  GraphIndex g(model);
  g.shapes_fixed = shapes_fixed;
  return InputsBehind(g, value);
}

}  // namespace kuiper::onnx_import

// The conversion context's helpers for lowerings: the values a node reads
// (shapes, constants, attributes), the engine operands and operators it
// writes, and the errors that name it.
#include "context.hpp"

#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "kuiper/memory_limit.hpp"
#include "load_time_inputs.hpp"

namespace kuiper::onnx_import {

namespace {

// Only the characters the PNNX text format and zip entry names take safely.
std::string Sanitize(const std::string& name) {
  std::string out;
  for (char c : name) {
    const bool ok =
        std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == ':';
    out += ok ? c : '_';
  }
  const size_t start = out.find_first_not_of('_');
  return start == std::string::npos ? "v" : out.substr(start);
}

}  // namespace

Context::Context(const onnx::ModelProto& model, const OnnxImportOptions& options)
    : model_(model), options_(options) {
  for (const onnx::OperatorSetIdProto& set : model_.opset_import()) {
    if (set.domain().empty() || set.domain() == "ai.onnx") opset_ = set.version();
  }
}

void Context::Fail(const onnx::NodeProto& node, const std::string& why) const {
  throw ConversionError(fmt::format("node '{}' ({}): {}", NodeName(node), node.op_type(), why));
}

void Context::FailBatch(const onnx::NodeProto& node, const std::string& why) const {
  throw BatchAxisError(fmt::format("node '{}' ({}): {}", NodeName(node), node.op_type(), why));
}

std::string Context::NodeName(const onnx::NodeProto& node) const {
  const auto it = node_names_.find(&node);
  if (it != node_names_.end()) return it->second;
  return node.name().empty() ? node.op_type() : node.name();
}

const Shape& Context::ShapeOf(const onnx::NodeProto& node, const std::string& value) const {
  const auto it = shapes_.find(value);
  if (it == shapes_.end()) {
    Fail(node, fmt::format("the shape of '{}' is unknown (ONNX shape inference could not fix "
                           "it)",
                           value));
  }
  return it->second;
}

const onnx::TensorProto* Context::Constant(const std::string& value) const {
  const auto it = constants_.find(value);
  return it == constants_.end() ? nullptr : it->second;
}

bool Context::HasInput(const onnx::NodeProto& node, int input) const {
  return node.input_size() > input && !node.input(input).empty();
}

const onnx::TensorProto& Context::RequireConstant(const onnx::NodeProto& node, int input) const {
  const onnx::TensorProto* tensor = HasInput(node, input) ? Constant(node.input(input)) : nullptr;
  if (tensor) return *tensor;
  const std::string why =
      fmt::format("input {} must be a constant (an initializer or a Constant node)", input);
  // A graph input, or a value computed from graph inputs alone (HannWindow's
  // expansion: Cast(size) -> Sub -> Range's limit), folds once they are bound:
  // the nearest unbound one is named.
  const std::vector<std::string> behind =
      HasInput(node, input)
          ? GraphInputsBehind(model_, node.input(input), /*shapes_fixed=*/dynamic_input_.empty())
          : std::vector<std::string>{};
  if (behind.empty()) Fail(node, why);
  const std::string& name = behind.front();
  const char* how = name == node.input(input) ? "" : "computed from ";
  if (options_.input_values.count(name)) {
    // BindLoadTimeInputs binds every graph input with a value behind a
    // declared constant input: this one was not declared.
    Fail(node, fmt::format("{}; it is {}graph input '{}', whose value was given but not bound: "
                           "the lowering of {} must declare input {} constant "
                           "(KUIPER_ONNX_LOWERING_CONSTANTS)",
                           why, how, name, node.op_type(), input));
  }
  Fail(node, fmt::format("{}; it is {}graph input '{}', which the engine needs at load time: give "
                         "its value (kuiper run: its .npy) to bind it",
                         why, how, name));
}

std::vector<int> Context::EngineShape(const Shape& shape) const {
  std::vector<int> engine(shape.begin(), shape.end());
  if (!batch_mode_) engine.insert(engine.begin(), 1);
  if (engine.size() == 1) engine.push_back(1);  // a scalar: one item of one element
  return engine;
}

int Context::EngineAxis(const onnx::NodeProto& node, int64_t axis, size_t rank) const {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    Fail(node, fmt::format("axis {} is out of range for rank {}", axis, r));
  if (axis < 0) axis += r;
  if (batch_mode_ && axis == 0) FailBatch(node, "acts on dimension 0, the engine's batch");
  return static_cast<int>(batch_mode_ ? axis : axis + 1);
}

std::string Context::UniqueName(const std::string& base, std::set<std::string>& taken) const {
  std::string name = Sanitize(base);
  for (int k = 1; taken.count(name); ++k) name = fmt::format("{}_{}", Sanitize(base), k);
  taken.insert(name);
  return name;
}

void Context::DeclareUnbatched(int operand, const Shape& shape) {
  if (batch_mode_) return;  // dimension 0 is the batch: the engine shape is the ONNX shape
  graph_.operands[operand].unbatched_shape = std::vector<int>(shape.begin(), shape.end());
}

int Context::NewOperand(const std::string& name, const std::vector<int>& engine_shape) {
  pnnx::Operand operand;
  operand.name = UniqueName(name, operand_names_);
  operand.type = pnnx::DataType::kF32;
  operand.shape = engine_shape;
  graph_.operands.push_back(std::move(operand));
  return static_cast<int>(graph_.operands.size()) - 1;
}

int Context::Output(const onnx::NodeProto& node, int output) {
  const std::string& name = node.output(output);
  const auto type = elem_types_.find(name);
  if (type != elem_types_.end() && !CarriedAsFloat(type->second)) {
    Fail(node, fmt::format("output '{}' is of ONNX type {}; the engine computes in float32 and "
                           "carries float64, integer and bool types as float32, not this one",
                           name, type->second));
  }
  const int operand = NewOperand(name, EngineShape(ShapeOf(node, name)));
  operand_of_[name] = operand;
  return operand;
}

pnnx::Operator& Context::Emit(const std::string& type, const std::string& name,
                              const std::vector<int>& inputs, int output) {
  pnnx::Operator op;
  op.type = type;
  op.name = UniqueName(name, op_names_);
  op.inputs = inputs;
  op.input_names.assign(inputs.size(), "");
  const int index = static_cast<int>(graph_.operators.size());
  for (int input : inputs) graph_.operands[input].consumers.push_back(index);
  if (output >= 0) {
    op.outputs = {output};
    graph_.operands[output].producer = index;
  }
  op.line = index + 3;
  graph_.operators.push_back(std::move(op));
  return graph_.operators.back();
}

int Context::Input(const onnx::NodeProto& node, int input) {
  if (!HasInput(node, input)) Fail(node, fmt::format("input {} is missing", input));
  const std::string& name = node.input(input);
  const auto it = operand_of_.find(name);
  if (it != operand_of_.end()) return it->second;
  const onnx::TensorProto* tensor = Constant(name);
  if (!tensor) Fail(node, fmt::format("input '{}' is produced by no earlier node", name));

  // A constant operand is the same for every batch item: in batch mode it
  // loses its dimension 0, which must then be 1 (broadcast over the batch).
  Shape shape(tensor->dims().begin(), tensor->dims().end());
  const size_t rank = node.output_size() > 0 && shapes_.count(node.output(0))
                          ? shapes_.at(node.output(0)).size()
                          : shape.size();
  if (batch_mode_ && !shape.empty() && shape.size() >= rank) {
    if (shape.size() > rank || shape[0] != 1) {
      FailBatch(node, fmt::format("constant '{}' of shape {} differs along the batch dimension",
                                  name, ShapeText(shape)));
    }
    shape.erase(shape.begin());
  }
  while (shape.size() > kMaxTensorRank && shape[0] == 1) shape.erase(shape.begin());
  if (shape.size() > kMaxTensorRank) {
    Fail(node, fmt::format("constant '{}' of shape {} has more than {} dimensions", name,
                           ShapeText(shape), kMaxTensorRank));
  }
  if (!CarriedAsFloat(tensor->data_type())) {
    Fail(node, fmt::format("constant '{}' is of ONNX type {}; the engine computes in float32 and "
                           "carries float64, integer and bool types as float32, not this one",
                           name, tensor->data_type()));
  }
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) {
    Fail(node, fmt::format("constant '{}' of shape {} holds no values; engine tensors are never "
                           "empty",
                           name, ShapeText(Shape(tensor->dims().begin(), tensor->dims().end()))));
  }
  if (shape.empty()) shape = {1};
  const std::string key = name + "@" + ShapeText(shape);
  const auto cached = operand_of_.find(key);
  if (cached != operand_of_.end()) return cached->second;
  std::vector<int> engine = {static_cast<int>(batch_)};
  engine.insert(engine.end(), shape.begin(), shape.end());
  const int operand = NewOperand(name, engine);
  pnnx::Operator& op = Emit("pnnx.Attribute", name, {}, operand);
  op.attrs["data"] = FloatAttribute(ToInts(shape), ConstantAsFloats(*tensor));
  operand_of_[key] = operand;
  return operand;
}

pnnx::Operator& Context::EmitUnary(const onnx::NodeProto& node, const std::string& type) {
  const int input = Input(node, 0);
  return Emit(type, NodeName(node), {input}, Output(node));
}

float Context::FloatAttributeChecked(const onnx::NodeProto& node, const std::string& name,
                                     float fallback) const {
  const onnx::AttributeProto* attr = FindAttribute(node, name);
  if (!attr) return fallback;
  if (attr->type() != onnx::AttributeProto::FLOAT) {
    Fail(node, fmt::format("attribute '{}' must be a float (ONNX attribute type {}), is type {}",
                           name, static_cast<int>(onnx::AttributeProto::FLOAT),
                           static_cast<int>(attr->type())));
  }
  if (std::isnan(attr->f())) Fail(node, fmt::format("attribute '{}' is NaN", name));
  return attr->f();
}

int Context::ElemType(const std::string& value) const {
  const auto it = elem_types_.find(value);
  return it == elem_types_.end() || it->second == onnx::TensorProto::UNDEFINED
             ? static_cast<int>(onnx::TensorProto::FLOAT)
             : it->second;
}

int Context::OutputAsFloat(const onnx::NodeProto& node, int output) {
  const std::string& name = node.output(output);
  const int operand = NewOperand(name, EngineShape(ShapeOf(node, name)));
  operand_of_[name] = operand;
  return operand;
}

std::vector<int64_t> Context::ConstantInts(const onnx::NodeProto& node, int input) const {
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
std::vector<int> Context::EngineAxes(const onnx::NodeProto& node, const std::vector<int64_t>& axes,
                                     size_t rank) const {
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
pnnx::Operator& Context::EmitReshapeTo(const std::string& name, int input, const Shape& shape,
                                       int output) {
  std::vector<int> target = EngineShape(shape);
  target[0] = -1;
  pnnx::Operator& op = Emit("Tensor.reshape", name, {input}, output);
  op.params["shape"] = IntsParam(target);
  return op;
}

bool Context::IsGraphOutput(const std::string& value) const {
  return std::any_of(model_.graph().output().begin(), model_.graph().output().end(),
                     [&](const onnx::ValueInfoProto& info) { return info.name() == value; });
}

}  // namespace kuiper::onnx_import

// The conversion of one model, in order: shapes inferred and constants
// collected, constants folded, the Detect heads and SiLUs found, the batch
// mode chosen, every node lowered (the lowering registered for its type,
// lowering_registry.hpp), and the operators that reach no output pruned.
#include <fmt/ranges.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <limits>
#include <map>

#include "context.hpp"
#include "lowering_registry.hpp"

namespace kuiper::onnx_import {

namespace {

// ONNX's shape inference reads constant inputs (Resize's scales, Reshape's
// shape, ...) with ParseData, which overflows on raw data that ends in a
// partial element (found by fuzz_onnx): refuse such a tensor before inference.
void CheckRawDataWhole(const onnx::TensorProto& tensor) {
  static const std::map<int, size_t> kElementBytes = {
      {onnx::TensorProto::FLOAT, 4},   {onnx::TensorProto::DOUBLE, 8},
      {onnx::TensorProto::INT32, 4},   {onnx::TensorProto::INT64, 8},
      {onnx::TensorProto::INT16, 2},   {onnx::TensorProto::UINT16, 2},
      {onnx::TensorProto::FLOAT16, 2}, {onnx::TensorProto::UINT32, 4},
      {onnx::TensorProto::UINT64, 8}};
  const auto size = kElementBytes.find(tensor.data_type());
  if (tensor.has_raw_data() && size != kElementBytes.end() &&
      tensor.raw_data().size() % size->second != 0) {
    throw ConversionError(
        fmt::format("tensor '{}' holds {} bytes of raw data, not a whole number of "
                    "{}-byte elements",
                    tensor.name(), tensor.raw_data().size(), size->second));
  }
}

}  // namespace

void Context::CheckSupported() const {
  std::map<std::string, std::vector<std::string>> missing;  // type -> node names
  for (const onnx::NodeProto& node : model_.graph().node()) {
    const bool standard = node.domain().empty() || node.domain() == "ai.onnx";
    if ((standard && Lowerings().count(node.op_type())) || absorbed_.count(&node)) continue;
    const std::string type = standard ? node.op_type() : node.domain() + "." + node.op_type();
    missing[type].push_back(NodeName(node));
  }
  if (missing.empty()) return;
  std::vector<std::string> items;
  for (const auto& [type, names] : missing) {
    items.push_back(fmt::format("{} (nodes {})", type, fmt::join(names, ", ")));
  }
  throw UnsupportedOperatorError(fmt::format("{} unsupported ONNX operator type(s): {}",
                                             missing.size(), fmt::join(items, "; ")));
}

// ONNX 1.12's Conv and pooling shape inference trusts its node: it takes a
// missing kernel_shape from W's dims and reads past its vectors when W's rank
// differs from X's, and divides by a stride of 0 (crashes in libonnx, found by
// fuzz/onnx_fuzzer.cpp). So kernel sizes, strides, dilations and group must be
// positive and pads non-negative, and a Conv gets kernel_shape from W (which
// must be a constant anyway), so that ONNX checks the ranks itself.
void Context::PrepareConvPoolInference(onnx::GraphProto& graph) const {
  std::map<std::string, const onnx::TensorProto*> constants;
  for (const onnx::TensorProto& init : graph.initializer()) constants[init.name()] = &init;
  for (const onnx::NodeProto& node : graph.node()) {
    const onnx::AttributeProto* value = FindAttribute(node, "value");
    if (node.op_type() == "Constant" && node.output_size() == 1 && value && value->has_t()) {
      constants[node.output(0)] = &value->t();
    }
  }
  for (onnx::NodeProto& node : *graph.mutable_node()) {
    const std::string& type = node.op_type();
    // DepthToSpace/SpaceToDepth inference divides by blocksize and by its
    // square (SIGFPE for 0, or for 2^32 whose square wraps to 0).
    if (type == "DepthToSpace" || type == "SpaceToDepth") {
      const int64_t b = AttributeInt(node, "blocksize", 0);
      if (b < 1 || b > std::numeric_limits<int32_t>::max()) {
        Fail(node, fmt::format("blocksize {} is out of range (1 to 2^31-1)", b));
      }
    }
    if (type != "Conv" && type != "MaxPool" && type != "AveragePool") continue;
    for (const std::string name : {"kernel_shape", "strides", "dilations", "pads"}) {
      const int64_t least = name == "pads" ? 0 : 1;
      for (int64_t v : AttributeInts(node, name, {})) {
        if (v < least) Fail(node, fmt::format("{} holds {}, expected at least {}", name, v, least));
      }
    }
    if (type == "Conv" && AttributeInt(node, "group", 1) < 1)
      Fail(node, "group must be at least 1");
    if (type != "Conv" || FindAttribute(node, "kernel_shape")) continue;
    const auto w = node.input_size() > 1 ? constants.find(node.input(1)) : constants.end();
    if (w == constants.end()) {
      // RequireConstant names the graph input W is (computed from), when it
      // is one without a value.
      if (node.input_size() > 1) RequireConstant(node, 1);
      Fail(node, "input 1 must be a constant (an initializer or a Constant node)");
    }
    onnx::AttributeProto* kernel = node.add_attribute();
    kernel->set_name("kernel_shape");
    kernel->set_type(onnx::AttributeProto::INTS);
    for (int d = 2; d < w->second->dims_size(); ++d) {
      if (w->second->dims(d) < 1) Fail(node, "W has a kernel dim below 1");
      kernel->add_ints(w->second->dims(d));
    }
  }
}

void Context::FixSymbolicBatch() {
  onnx::GraphProto& graph = *model_.mutable_graph();
  std::set<std::string> initializers;
  for (const onnx::TensorProto& init : graph.initializer()) initializers.insert(init.name());
  for (onnx::ValueInfoProto& info : *graph.mutable_input()) {
    if (initializers.count(info.name()) || !info.type().has_tensor_type() ||
        !info.type().tensor_type().has_shape()) {
      continue;
    }
    auto& dims = *info.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim();
    if (dims.empty() || dims[0].has_dim_value()) continue;
    // Any other symbolic dim leaves the input unknown: Run() names it.
    if (std::any_of(dims.begin() + 1, dims.end(), [](const auto& d) { return !d.has_dim_value(); }))
      continue;
    const std::string symbol = dims[0].dim_param();
    if (!dynamic_input_.empty() && (symbol.empty() || symbol != dynamic_symbol_)) {
      throw ConversionError(fmt::format(
          "graph inputs '{}' and '{}' both have a symbolic batch, under different names ('{}', "
          "'{}'): the engine runs one batch for every input",
          dynamic_input_, info.name(), dynamic_symbol_, symbol));
    }
    dynamic_input_ = info.name();
    dynamic_symbol_ = symbol;
    dims[0].set_dim_value(1);
  }
  if (dynamic_symbol_.empty()) return;
  const auto fix = [&](onnx::ValueInfoProto& info) {
    if (!info.type().has_tensor_type()) return;
    for (auto& dim : *info.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
      if (!dim.has_dim_value() && dim.dim_param() == dynamic_symbol_) dim.set_dim_value(1);
    }
  };
  for (onnx::ValueInfoProto& info : *graph.mutable_output()) fix(info);
  for (onnx::ValueInfoProto& info : *graph.mutable_value_info()) fix(info);
}

void Context::CollectShapes() {
  FixSymbolicBatch();
  for (const onnx::TensorProto& tensor : model_.graph().initializer()) CheckRawDataWhole(tensor);
  for (const onnx::NodeProto& node : model_.graph().node()) {
    for (const onnx::AttributeProto& attr : node.attribute()) {
      if (attr.has_t()) CheckRawDataWhole(attr.t());
    }
  }
  // ONNX's inference stops at the first disagreement with a declared shape;
  // then the declared shapes stand, and the node's own check (e.g. MatMul's
  // final_shape) reports it with the node's name.
  onnx::ModelProto inferred = model_;
  PrepareConvPoolInference(*inferred.mutable_graph());
  try {
    onnx::shape_inference::InferShapes(inferred);
    model_ = std::move(inferred);
  } catch (const std::exception&) {
  }
  const onnx::GraphProto& graph = model_.graph();
  const auto record = [&](const onnx::ValueInfoProto& info) {
    if (!info.type().has_tensor_type()) return;
    const onnx::TypeProto_Tensor& tensor = info.type().tensor_type();
    elem_types_[info.name()] = tensor.elem_type();
    if (!tensor.has_shape()) return;
    Shape shape;
    for (const onnx::TensorShapeProto_Dimension& dim : tensor.shape().dim()) {
      if (!dim.has_dim_value()) return;  // symbolic: unknown
      shape.push_back(dim.dim_value());
    }
    shapes_[info.name()] = shape;
  };
  for (const auto& info : graph.input()) record(info);
  for (const auto& info : graph.value_info()) record(info);
  for (const auto& info : graph.output()) record(info);
  for (const onnx::TensorProto& init : graph.initializer()) {
    constants_[init.name()] = &init;
    shapes_[init.name()] = Shape(init.dims().begin(), init.dims().end());
    elem_types_[init.name()] = init.data_type();
  }
  int index = 0;
  for (const onnx::NodeProto& node : graph.node()) {
    node_names_[&node] =
        node.name().empty() ? fmt::format("{}_{}", node.op_type(), index) : node.name();
    ++index;
    for (const std::string& input : node.input()) used_.insert(input);
    if (node.op_type() == "Constant" && node.output_size() == 1) {
      const onnx::AttributeProto* value = FindAttribute(node, "value");
      const onnx::TensorProto* tensor = value && value->has_t() ? &value->t() : nullptr;
      if (!tensor) tensor = ConstantNumbers(node);
      if (!tensor) {
        throw ConversionError(
            fmt::format("node '{}' (Constant): only a tensor 'value' or numbers (value_float, "
                        "value_floats, value_int, value_ints) are supported",
                        NodeName(node)));
      }
      constants_[node.output(0)] = tensor;
      shapes_[node.output(0)] = Shape(tensor->dims().begin(), tensor->dims().end());
      elem_types_[node.output(0)] = tensor->data_type();
    }
  }
  for (const auto& info : graph.output()) used_.insert(info.name());
}

// A Constant given as numbers (opset 12+: value_float, value_floats,
// value_int, value_ints) as the tensor ONNX defines it to be: a float or int64
// scalar, or a 1-D tensor. Kept with the folded values; null for other forms.
const onnx::TensorProto* Context::ConstantNumbers(const onnx::NodeProto& node) {
  if (node.attribute_size() != 1) return nullptr;
  const onnx::AttributeProto& attr = node.attribute(0);
  onnx::TensorProto tensor;
  tensor.set_name(node.output(0));
  if (attr.name() == "value_float") {
    tensor.set_data_type(onnx::TensorProto::FLOAT);
    tensor.add_float_data(attr.f());
  } else if (attr.name() == "value_int") {
    tensor.set_data_type(onnx::TensorProto::INT64);
    tensor.add_int64_data(attr.i());
  } else if (attr.name() == "value_floats") {
    tensor.set_data_type(onnx::TensorProto::FLOAT);
    for (float f : attr.floats()) tensor.add_float_data(f);
    tensor.add_dims(attr.floats_size());
  } else if (attr.name() == "value_ints") {
    tensor.set_data_type(onnx::TensorProto::INT64);
    for (int64_t i : attr.ints()) tensor.add_int64_data(i);
    tensor.add_dims(attr.ints_size());
  } else {
    return nullptr;
  }
  return &folded_.emplace_back(std::move(tensor));
}

// ONNX's shape inference cannot see through shape arithmetic (Shape -> Gather
// -> Div -> a Slice's ends): the values after it stay unknown. Once folded,
// the results are constants: inferring again, with them as initializers,
// fixes the shapes that were missing (and changes none that were known).
void Context::InferFoldedShapes() {
  if (folded_.empty()) return;
  onnx::ModelProto copy = model_;
  onnx::GraphProto& graph = *copy.mutable_graph();
  std::set<std::string> initializers, folded;
  for (const onnx::TensorProto& init : graph.initializer()) initializers.insert(init.name());
  for (const onnx::TensorProto& tensor : folded_) {
    folded.insert(tensor.name());
    if (!initializers.count(tensor.name())) *graph.add_initializer() = tensor;
  }
  google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
  for (const onnx::NodeProto& node : graph.node()) {
    if (node.output_size() == 1 && folded.count(node.output(0))) continue;
    *kept.Add() = node;
  }
  graph.mutable_node()->Swap(&kept);
  // The first inference wrote a symbolic dim ("unk__0") where it could not
  // know one, and ONNX keeps a declared symbol over the value it infers: such
  // value_info goes, so that the folded values decide.
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> known;
  for (const onnx::ValueInfoProto& info : graph.value_info()) {
    if (folded.count(info.name()) || !info.type().has_tensor_type()) continue;
    const auto& dims = info.type().tensor_type().shape().dim();
    if (std::all_of(dims.begin(), dims.end(), [](const auto& d) { return d.has_dim_value(); }))
      *known.Add() = info;
  }
  graph.mutable_value_info()->Swap(&known);
  try {
    PrepareConvPoolInference(graph);
    onnx::shape_inference::InferShapes(copy);
  } catch (const std::exception&) {
    return;  // the shapes known stand; a node missing one says so when converted
  }
  for (const auto& info : copy.graph().value_info()) {
    if (shapes_.count(info.name()) || !info.type().has_tensor_type()) continue;
    const onnx::TypeProto_Tensor& tensor = info.type().tensor_type();
    if (!tensor.has_shape()) continue;
    Shape shape;
    for (const onnx::TensorShapeProto_Dimension& dim : tensor.shape().dim()) {
      if (!dim.has_dim_value()) break;
      shape.push_back(dim.dim_value());
    }
    if (static_cast<int>(shape.size()) != tensor.shape().dim_size()) continue;
    shapes_[info.name()] = shape;
    elem_types_[info.name()] = tensor.elem_type();
  }
}

// Batch mode: every computed value has 2..kMaxTensorRank+1 dimensions and the
// same first one, which then is the engine's batch (N of NCHW).
bool Context::BatchModeFits(int64_t& batch) const {
  batch = -1;
  const auto fits = [&](const std::string& value) {
    const auto it = shapes_.find(value);
    if (it == shapes_.end() || it->second.size() < 2 || it->second.size() > kMaxTensorRank + 1) {
      return false;
    }
    if (batch < 0) batch = it->second[0];
    return it->second[0] == batch && batch > 0;
  };
  const onnx::GraphProto& graph = model_.graph();
  for (const auto& info : graph.input()) {
    if (!constants_.count(info.name()) && !fits(info.name())) return false;
  }
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& output : node.output()) {
      if (!output.empty() && IsUsed(output) && !Hidden(output) && !fits(output)) return false;
    }
    // A 2-D B of MatMul that is not a constant is one matrix, not a batch of rows.
    if (node.op_type() == "MatMul" && node.input_size() == 2 && !constants_.count(node.input(1))) {
      const auto it = shapes_.find(node.input(1));
      if (it != shapes_.end() && it->second.size() == 2) return false;
    }
  }
  return batch > 0;
}

// Single-item mode: the whole graph is one batch item, so every computed value
// must fit in the kMaxTensorRank dimensions of an item.
bool Context::SingleModeFits() const {
  for (const auto& [name, shape] : shapes_) {
    if (!Hidden(name) && shape.size() > kMaxTensorRank) return false;
  }
  return true;
}

pnnx::Graph Context::Run() {
  // Folding and the Detect heads first: the nodes they absorb (Expand, Slice,
  // ...) are not unsupported.
  CollectShapes();
  FoldConstants();
  InferFoldedShapes();
  FindDetectHeads();
  FindSilu();
  CheckSupported();
  for (const auto& info : model_.graph().input()) {
    if (constants_.count(info.name())) continue;
    if (!shapes_.count(info.name())) {
      throw ConversionError(
          fmt::format("graph input '{}' has no fixed shape: export the model "
                      "with static input sizes",
                      info.name()));
    }
  }
  // Every value known at load time (no graph input, or each one bound): the
  // graph is one item of constants, and what is not folded already the
  // engine computes from pnnx.Attribute operands at batch 1; a graph output
  // that is a constant is a pnnx.Attribute read by pnnx.Output.
  if (std::all_of(model_.graph().input().begin(), model_.graph().input().end(),
                  [&](const auto& info) { return constants_.count(info.name()) != 0; })) {
    return Convert(/*batch_mode=*/false, 1);
  }
  int64_t batch = 1;
  // Whether a node acts on the batch (an axis 0, a transpose moving it, a
  // constant differing along it) is known to its lowering alone, in about
  // twenty places (FailBatch); a check of its own beside each would be a
  // second copy of that arithmetic, free to drift from the first. So batch
  // mode is tried and, refused, the nodes are lowered once more as one item:
  // the retry repeats only the lowering, not inference or folding.
  if (BatchModeFits(batch)) {
    try {
      return Convert(/*batch_mode=*/true, batch);
    } catch (const BatchAxisError&) {
      if (!SingleModeFits()) throw;
    }
  }
  if (!SingleModeFits()) {
    // Errors of single nodes (a 5-D Upsample, ...) name the node: let them come first.
    Convert(/*batch_mode=*/true, batch > 0 ? batch : 1);
    for (const auto& [name, shape] : shapes_) {
      if (!Hidden(name) && shape.size() > kMaxTensorRank) {
        throw ConversionError(fmt::format(
            "value '{}' of shape {}: the engine takes the first dimension as the batch only "
            "when every value of the graph has 2 to {} dimensions and the same first one; "
            "otherwise the graph is one batch item and no value may have more than {} "
            "dimensions",
            name, ShapeText(shape), kMaxTensorRank + 1, kMaxTensorRank));
      }
    }
  }
  if (!dynamic_input_.empty()) {
    throw ConversionError(fmt::format(
        "graph input '{}' has a symbolic batch ('{}'), which the engine can follow only when "
        "every value of the graph starts with the batch (docs/onnx.md §2); export the model with "
        "a fixed batch",
        dynamic_input_, dynamic_symbol_));
  }
  return Convert(/*batch_mode=*/false, 1);
}

void Context::FindSilu() {
  std::map<std::string, const onnx::NodeProto*> producer;
  for (const onnx::NodeProto& node : model_.graph().node()) {
    for (const std::string& output : node.output()) producer[output] = &node;
  }
  for (const onnx::NodeProto& mul : model_.graph().node()) {
    if (mul.op_type() != "Mul" || mul.input_size() != 2 || mul.output_size() != 1 ||
        absorbed_.count(&mul) || !mul.domain().empty()) {
      continue;
    }
    for (int k = 0; k < 2; ++k) {
      const auto sigmoid = producer.find(mul.input(k));
      if (sigmoid == producer.end() || sigmoid->second->op_type() != "Sigmoid" ||
          sigmoid->second->input_size() != 1 || sigmoid->second->input(0) != mul.input(1 - k) ||
          absorbed_.count(sigmoid->second)) {
        continue;
      }
      silu_[&mul] = 1 - k;
      // The Sigmoid goes when this Mul is its only reader.
      if (readers_[mul.input(k)].size() == 1) absorbed_.insert(sigmoid->second);
      break;
    }
  }
}

pnnx::Graph Context::Convert(bool batch_mode, int64_t batch) {
  batch_mode_ = batch_mode;
  batch_ = batch;
  graph_ = pnnx::Graph();
  operand_of_.clear();
  op_names_.clear();
  operand_names_.clear();
  EmitGraphInputs();
  LowerNodes();
  EmitGraphOutputs();
  CheckGraphInputsRead();
  return Pruned();
}

void Context::EmitGraphInputs() {
  const onnx::GraphProto& graph = model_.graph();
  int input_index = 0;
  for (const auto& info : graph.input()) {
    if (constants_.count(info.name())) continue;
    // Integer and bool inputs travel as float32 (kuiper run checks that
    // each value is exact there); elem_types_ keeps their ONNX type for the
    // operators whose integer semantics differ from float's.
    if (!CarriedAsFloat(elem_types_[info.name()])) {
      throw ConversionError(
          fmt::format("graph input '{}' is of ONNX type {}; the engine computes in float32 and "
                      "carries float64, integer and bool types as float32, not this one",
                      info.name(), elem_types_[info.name()]));
    }
    const Shape& shape = shapes_.at(info.name());
    if (std::find(shape.begin(), shape.end(), 0) != shape.end()) {
      throw ConversionError(fmt::format(
          "graph input '{}' of shape {} holds no values; engine tensors are never empty",
          info.name(), ShapeText(shape)));
    }
    const int operand = NewOperand(info.name(), EngineShape(shape));
    operand_of_[info.name()] = operand;
    DeclareUnbatched(operand, shapes_.at(info.name()));
    Emit("pnnx.Input", fmt::format("pnnx_input_{}", input_index++), {}, operand);
  }
}

void Context::LowerNodes() {
  const onnx::GraphProto& graph = model_.graph();
  for (const onnx::NodeProto& node : graph.node()) {
    // Every converter reads input 0 and output 0 (found by fuzz/onnx_fuzzer.cpp).
    if (node.op_type() != "Constant" && (node.input_size() == 0 || node.output_size() == 0)) {
      Fail(node, "needs at least one input and one output");
    }
    if (const auto head = heads_.find(&node); head != heads_.end()) {
      EmitDetectHead(node, head->second);
      continue;
    }
    if (node.op_type() == "Constant" || absorbed_.count(&node)) continue;
    if (const auto silu = silu_.find(&node); silu != silu_.end()) {
      Emit("nn.SiLU", NodeName(node), {Input(node, silu->second)}, Output(node));
      continue;
    }
    Lowerings().at(node.op_type()).lower(*this, node);
  }
}

void Context::EmitGraphOutputs() {
  const onnx::GraphProto& graph = model_.graph();
  int output_index = 0;
  for (const auto& info : graph.output()) {
    onnx::NodeProto output;  // stands for the graph's end in messages and constants
    output.set_name(fmt::format("pnnx_output_{}", output_index));
    output.set_op_type("Output");
    output.add_input(info.name());
    output.add_output(info.name());
    node_names_[&output] = output.name();
    const int operand = Input(output, 0);
    node_names_.erase(&output);
    if (shapes_.count(info.name())) DeclareUnbatched(operand, shapes_.at(info.name()));
    Emit("pnnx.Output", fmt::format("pnnx_output_{}", output_index++), {operand}, -1);
  }
}

// A graph input that only folded nodes read (Shape of it, a graph output
// computed from its shape alone) would be a pnnx.Input nobody reads, which
// the engine refuses. BindLoadTimeInputs binds such an input when it has a
// value (the folding then reads the shape of the value given); one left here
// has none, or is read by a node the pre-pass takes for a run-time reader.
void Context::CheckGraphInputsRead() const {
  const onnx::GraphProto& graph = model_.graph();
  const std::vector<bool> live = Live();
  for (const auto& info : graph.input()) {
    if (constants_.count(info.name())) continue;
    const std::vector<int>& readers = graph_.operands[operand_of_.at(info.name())].consumers;
    if (std::any_of(readers.begin(), readers.end(), [&](int op) { return live[op]; })) continue;
    const std::string what = fmt::format(
        "graph input '{}' is read by no operator once the graph is folded (only its shape is "
        "used, fixed at load time)",
        info.name());
    if (options_.input_values.count(info.name())) {
      throw ConversionError(fmt::format(
          "{}; its value was given but not bound: load_time_inputs.cpp misses the node that "
          "reads it",
          what));
    }
    throw ConversionError(
        fmt::format("{}: give its value (kuiper run: its .npy) to bind it", what));
  }
}

// The operators whose result reaches a pnnx.Output, and the pnnx.Inputs.
std::vector<bool> Context::Live() const {
  std::vector<bool> live(graph_.operators.size(), false);
  std::vector<int> stack;
  for (size_t i = 0; i < graph_.operators.size(); ++i) {
    const std::string& type = graph_.operators[i].type;
    if (type == "pnnx.Output") stack.push_back(static_cast<int>(i));
  }
  while (!stack.empty()) {
    const int op = stack.back();
    stack.pop_back();
    if (live[op]) continue;
    live[op] = true;
    for (int input : graph_.operators[op].inputs) {
      const int producer = graph_.operands[input].producer;
      if (producer >= 0 && !live[producer]) stack.push_back(producer);
    }
  }
  for (size_t i = 0; i < graph_.operators.size(); ++i) {
    if (graph_.operators[i].type == "pnnx.Input") live[i] = true;
  }
  return live;
}

// Drops operators whose result reaches no pnnx.Output (an unused constant, a
// dead branch): the engine rejects operators whose output nobody reads.
pnnx::Graph Context::Pruned() const {
  const std::vector<bool> live = Live();
  pnnx::Graph out;
  std::map<int, int> remap;
  const auto operand = [&](int old) {
    const auto [it, fresh] = remap.emplace(old, static_cast<int>(out.operands.size()));
    if (fresh) {
      pnnx::Operand copy = graph_.operands[old];
      copy.producer = -1;
      copy.consumers.clear();
      out.operands.push_back(std::move(copy));
    }
    return it->second;
  };
  for (size_t i = 0; i < graph_.operators.size(); ++i) {
    if (!live[i]) continue;
    pnnx::Operator op = graph_.operators[i];
    const int index = static_cast<int>(out.operators.size());
    for (int& input : op.inputs) {
      input = operand(input);
      out.operands[input].consumers.push_back(index);
    }
    for (int& output : op.outputs) {
      output = operand(output);
      out.operands[output].producer = index;
    }
    op.line = index + 3;  // as if read from a .param file: magic, counts, then one per line
    out.operators.push_back(std::move(op));
  }
  return out;
}

}  // namespace kuiper::onnx_import

// The graph walk of the ONNX importer and the ordinary, one-to-one nodes.
// MatMul and Upsample/Resize, which need more than one engine operator or
// more care, are in lowering.cpp; what runs before the walk (constant folding,
// the YOLOv5 Detect head) in constant_folding.cpp and detect_head.cpp.
#include "converter.hpp"

#include <fmt/ranges.h>
#include <onnx/defs/tensor_proto_util.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>

#include "kuiper/memory_limit.hpp"

namespace kuiper::onnx_import {

// ---- small helpers ----

pnnx::Parameter IntParam(int value) {
  pnnx::Parameter p;
  p.type = pnnx::ParameterType::kInt;
  p.i = value;
  return p;
}

pnnx::Parameter BoolParam(bool value) {
  pnnx::Parameter p;
  p.type = pnnx::ParameterType::kBool;
  p.b = value;
  return p;
}

pnnx::Parameter FloatParam(float value) {
  pnnx::Parameter p;
  p.type = pnnx::ParameterType::kFloat;
  p.f = value;
  return p;
}

pnnx::Parameter StringParam(const std::string& value) {
  pnnx::Parameter p;
  p.type = pnnx::ParameterType::kString;
  p.s = value;
  return p;
}

pnnx::Parameter IntsParam(const std::vector<int>& values) {
  pnnx::Parameter p;
  p.type = pnnx::ParameterType::kIntArray;
  p.ai = values;
  return p;
}

pnnx::Parameter FloatsParam(const std::vector<float>& values) {
  pnnx::Parameter p;
  p.type = pnnx::ParameterType::kFloatArray;
  p.af = values;
  return p;
}

pnnx::Attribute FloatAttribute(const std::vector<int>& shape, const std::vector<float>& values) {
  pnnx::Attribute attr;
  attr.type = pnnx::DataType::kF32;
  attr.shape = shape;
  attr.data.resize(values.size() * sizeof(float));
  // memcpy from an empty vector's null data() is undefined even for 0 bytes.
  if (!values.empty()) std::memcpy(attr.data.data(), values.data(), attr.data.size());
  return attr;
}

const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, const std::string& name) {
  for (const onnx::AttributeProto& attr : node.attribute()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

int64_t AttributeInt(const onnx::NodeProto& node, const std::string& name, int64_t fallback) {
  const onnx::AttributeProto* attr = FindAttribute(node, name);
  return attr ? attr->i() : fallback;
}

float AttributeFloat(const onnx::NodeProto& node, const std::string& name, float fallback) {
  const onnx::AttributeProto* attr = FindAttribute(node, name);
  return attr ? attr->f() : fallback;
}

std::string AttributeString(const onnx::NodeProto& node, const std::string& name,
                            const std::string& fallback) {
  const onnx::AttributeProto* attr = FindAttribute(node, name);
  return attr ? attr->s() : fallback;
}

std::vector<int64_t> AttributeInts(const onnx::NodeProto& node, const std::string& name,
                                   const std::vector<int64_t>& fallback) {
  const onnx::AttributeProto* attr = FindAttribute(node, name);
  return attr ? std::vector<int64_t>(attr->ints().begin(), attr->ints().end()) : fallback;
}

template <typename T>
std::vector<T> TensorValues(const onnx::TensorProto& tensor) {
  if (tensor.has_data_location() && tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    throw ConversionError(fmt::format(
        "tensor '{}' keeps its data in an external file, which is not supported", tensor.name()));
  }
  const Shape dims(tensor.dims().begin(), tensor.dims().end());
  uint64_t count = 1;
  for (int64_t dim : dims) {
    if (dim < 0)
      throw ConversionError(fmt::format("tensor '{}' has a negative dim", tensor.name()));
    count = SaturatingMultiply(count, static_cast<uint64_t>(dim));
  }
  // Checked before ParseData, which copies all of raw_data into whole elements
  // only: a partial last element overflowed its buffer.
  const uint64_t bytes = SaturatingMultiply(count, sizeof(T));
  if (tensor.has_raw_data() && tensor.raw_data().size() != bytes) {
    throw ConversionError(fmt::format("tensor '{}' of shape {} holds {} bytes, expected {}",
                                      tensor.name(), ShapeText(dims), tensor.raw_data().size(),
                                      bytes));
  }
  std::vector<T> values;
  try {
    values = onnx::ParseData<T>(&tensor);
  } catch (const std::exception& e) {
    throw ConversionError(fmt::format("tensor '{}': {}", tensor.name(), e.what()));
  }
  if (values.size() != count) {
    throw ConversionError(fmt::format("tensor '{}' of shape {} holds {} values", tensor.name(),
                                      ShapeText(dims), values.size()));
  }
  return values;
}
template std::vector<float> TensorValues(const onnx::TensorProto&);
template std::vector<int64_t> TensorValues(const onnx::TensorProto&);
template std::vector<int32_t> TensorValues(const onnx::TensorProto&);
template std::vector<double> TensorValues(const onnx::TensorProto&);

bool ElemIsInteger(int elem_type) {
  switch (elem_type) {
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
      return true;
    default:
      return false;
  }
}

bool CarriedAsFloat(int elem_type) {
  return elem_type == onnx::TensorProto::FLOAT || elem_type == onnx::TensorProto::DOUBLE ||
         elem_type == onnx::TensorProto::BOOL || ElemIsInteger(elem_type);
}

std::vector<float> ConstantAsFloats(const onnx::TensorProto& tensor) {
  if (tensor.data_type() == onnx::TensorProto::FLOAT) return OnnxTensorFloats(tensor);
  if (!CarriedAsFloat(tensor.data_type())) {
    throw ConversionError(
        fmt::format("constant '{}' is of ONNX type {}; the engine computes in "
                    "float32 (and carries integers and bools as float32)",
                    tensor.name(), tensor.data_type()));
  }
  const NpyArray array = OnnxTensorToArray(tensor);
  for (size_t i = 0; i < array.ints.size(); ++i) {
    if (array.ints[i] > kMaxExactInt || array.ints[i] < -kMaxExactInt) {
      throw ConversionError(fmt::format(
          "constant '{}': integer value {} (element {}) is beyond 2^24, where float32 stops "
          "holding every integer exactly",
          tensor.name(), array.ints[i], i));
    }
  }
  return array.data;
}

std::vector<int64_t> OnnxTensorInts(const onnx::TensorProto& tensor) {
  switch (tensor.data_type()) {
    case onnx::TensorProto::INT64:
      return TensorValues<int64_t>(tensor);
    case onnx::TensorProto::INT32: {
      const std::vector<int32_t> values = TensorValues<int32_t>(tensor);
      return {values.begin(), values.end()};
    }
    default:
      throw ConversionError(fmt::format("tensor '{}' is of ONNX type {}, expected int64 or int32",
                                        tensor.name(), tensor.data_type()));
  }
}

std::string ShapeText(const Shape& shape) { return fmt::format("({})", fmt::join(shape, ",")); }

namespace {

std::vector<int> ToInts(const std::vector<int64_t>& values) {
  return {values.begin(), values.end()};
}

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

// ONNX's (begin..., end...) pads as symmetric (h, w) padding, or false.
bool SymmetricPads(const std::vector<int64_t>& pads, std::vector<int>& padding) {
  if (pads.empty()) {
    padding = {0, 0};
    return true;
  }
  if (pads.size() != 4 || pads[0] != pads[2] || pads[1] != pads[3]) return false;
  padding = {static_cast<int>(pads[0]), static_cast<int>(pads[1])};
  return true;
}

}  // namespace

// ---- the converter ----

Converter::Converter(const onnx::ModelProto& model, const OnnxImportOptions& options)
    : model_(model), options_(options) {
  for (const onnx::OperatorSetIdProto& set : model_.opset_import()) {
    if (set.domain().empty() || set.domain() == "ai.onnx") opset_ = set.version();
  }
}

const std::map<std::string, Converter::NodeConverter>& Converter::Table() {
  static const std::map<std::string, NodeConverter> table = {
      {"Conv", &Converter::ConvertConv},
      {"Relu", &Converter::ConvertActivation},
      {"Sigmoid", &Converter::ConvertActivation},
      {"HardSwish", &Converter::ConvertActivation},
      {"Add", &Converter::ConvertExpression},
      {"Sub", &Converter::ConvertExpression},
      {"Mul", &Converter::ConvertExpression},
      {"Pow", &Converter::ConvertExpression},
      {"Sin", &Converter::ConvertExpression},
      {"Neg", &Converter::ConvertExpression},
      {"Exp", &Converter::ConvertExpression},
      {"Log", &Converter::ConvertExpression},
      {"Sqrt", &Converter::ConvertExpression},
      {"Abs", &Converter::ConvertExpression},
      {"Identity", &Converter::ConvertIdentity},
      {"Clip", &Converter::ConvertClip},
      {"HardSigmoid", &Converter::ConvertHardSigmoid},
      {"MaxPool", &Converter::ConvertPool},
      {"AveragePool", &Converter::ConvertPool},
      {"GlobalAveragePool", &Converter::ConvertGlobalAveragePool},
      {"Slice", &Converter::ConvertSlice},
      {"Flatten", &Converter::ConvertReshape},
      {"Reshape", &Converter::ConvertReshape},
      {"Concat", &Converter::ConvertConcat},
      {"Split", &Converter::ConvertSplit},
      {"Transpose", &Converter::ConvertTranspose},
      {"Gemm", &Converter::ConvertGemm},
      {"BatchNormalization", &Converter::ConvertBatchNormalization},
      {"MatMul", &Converter::ConvertMatMul},
      {"Upsample", &Converter::ConvertUpsample},
      {"Resize", &Converter::ConvertResize},
      // reductions, axis and shape operators (shape_ops.cpp)
      {"ReduceMean", &Converter::ConvertReduce},
      {"ReduceSum", &Converter::ConvertReduce},
      {"ReduceMax", &Converter::ConvertReduce},
      {"ReduceMin", &Converter::ConvertReduce},
      {"ReduceProd", &Converter::ConvertReduce},
      {"ReduceL1", &Converter::ConvertReduce},
      {"ReduceL2", &Converter::ConvertReduce},
      {"ReduceLogSum", &Converter::ConvertReduce},
      {"ReduceLogSumExp", &Converter::ConvertReduce},
      {"ReduceSumSquare", &Converter::ConvertReduce},
      {"GlobalMaxPool", &Converter::ConvertGlobalMaxPool},
      {"ArgMax", &Converter::ConvertArgExtreme},
      {"ArgMin", &Converter::ConvertArgExtreme},
      {"Softmax", &Converter::ConvertSoftmaxLike},
      {"LogSoftmax", &Converter::ConvertSoftmaxLike},
      {"Hardmax", &Converter::ConvertSoftmaxLike},
      {"Squeeze", &Converter::ConvertReshape},
      {"Unsqueeze", &Converter::ConvertReshape},
      {"Gather", &Converter::ConvertGather},
      {"Expand", &Converter::ConvertExpand},
      {"Tile", &Converter::ConvertTile},
      {"Pad", &Converter::ConvertPad},
      {"Trilu", &Converter::ConvertTrilu},
      {"CumSum", &Converter::ConvertCumSum},
      {"DepthToSpace", &Converter::ConvertDepthSpace},
      {"SpaceToDepth", &Converter::ConvertDepthSpace},
      {"ConvTranspose", &Converter::ConvertConvTranspose},
      {"GatherElements", &Converter::ConvertGatherElements},
      {"Size", &Converter::ConvertSize},
      {"Constant", nullptr},  // folded: read where it is used
      // ---- element-wise nodes (elementwise_ops.cpp) ----
      {"Div", &Converter::ConvertElementwise},
      {"Tanh", &Converter::ConvertElementwise},
      {"Floor", &Converter::ConvertElementwise},
      {"Ceil", &Converter::ConvertElementwise},
      {"Round", &Converter::ConvertElementwise},
      {"Sign", &Converter::ConvertElementwise},
      {"Erf", &Converter::ConvertElementwise},
      {"Cos", &Converter::ConvertElementwise},
      {"Tan", &Converter::ConvertElementwise},
      {"Sinh", &Converter::ConvertElementwise},
      {"Cosh", &Converter::ConvertElementwise},
      {"Asin", &Converter::ConvertElementwise},
      {"Acos", &Converter::ConvertElementwise},
      {"Atan", &Converter::ConvertElementwise},
      {"Asinh", &Converter::ConvertElementwise},
      {"Acosh", &Converter::ConvertElementwise},
      {"Atanh", &Converter::ConvertElementwise},
      {"Reciprocal", &Converter::ConvertElementwise},
      {"Not", &Converter::ConvertElementwise},
      {"IsNaN", &Converter::ConvertElementwise},
      {"IsInf", &Converter::ConvertElementwise},
      {"Softplus", &Converter::ConvertElementwise},
      {"Softsign", &Converter::ConvertElementwise},
      {"Mish", &Converter::ConvertElementwise},
      {"Equal", &Converter::ConvertElementwise},
      {"Less", &Converter::ConvertElementwise},
      {"Greater", &Converter::ConvertElementwise},
      {"LessOrEqual", &Converter::ConvertElementwise},
      {"GreaterOrEqual", &Converter::ConvertElementwise},
      {"And", &Converter::ConvertElementwise},
      {"Or", &Converter::ConvertElementwise},
      {"Xor", &Converter::ConvertElementwise},
      {"Where", &Converter::ConvertElementwise},
      {"Sum", &Converter::ConvertElementwise},
      {"Mean", &Converter::ConvertElementwise},
      {"Max", &Converter::ConvertElementwise},
      {"Min", &Converter::ConvertElementwise},
      {"Mod", &Converter::ConvertElementwise},
      {"BitShift", &Converter::ConvertElementwise},
      {"PRelu", &Converter::ConvertElementwise},
      {"LeakyRelu", &Converter::ConvertElementwise},
      {"ThresholdedRelu", &Converter::ConvertElementwise},
      {"Elu", &Converter::ConvertElementwise},
      {"Celu", &Converter::ConvertElementwise},
      {"Selu", &Converter::ConvertElementwise},
      {"Shrink", &Converter::ConvertElementwise},
      {"Cast", &Converter::ConvertElementwise},
      {"CastLike", &Converter::ConvertElementwise},
      {"Dropout", &Converter::ConvertDropout},
      // ---- constant generators (constant_generators.cpp): folded, else an error ----
      {"Range", &Converter::ConvertGenerator},
      {"ConstantOfShape", &Converter::ConvertGenerator},
      {"Shape", &Converter::ConvertShape},
  };
  return table;
}

void Converter::CheckSupported() const {
  std::map<std::string, std::vector<std::string>> missing;  // type -> node names
  for (const onnx::NodeProto& node : model_.graph().node()) {
    const bool standard = node.domain().empty() || node.domain() == "ai.onnx";
    if ((standard && Table().count(node.op_type())) || absorbed_.count(&node)) continue;
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
void Converter::PrepareConvPoolInference(onnx::GraphProto& graph) const {
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
      // ConvertConv's own check names the input (and lets ConvertOnnx bind
      // a graph input from its given value).
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

void Converter::FixSymbolicBatch() {
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

// ONNX's shape inference reads constant inputs (Resize's scales, Reshape's
// shape, ...) with ParseData, which overflows on raw data that ends in a
// partial element (found by fuzz_onnx): refuse such a tensor before inference.
namespace {
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

void Converter::CollectShapes() {
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
const onnx::TensorProto* Converter::ConstantNumbers(const onnx::NodeProto& node) {
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
void Converter::InferFoldedShapes() {
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
bool Converter::BatchModeFits(int64_t& batch) const {
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
bool Converter::SingleModeFits() const {
  for (const auto& [name, shape] : shapes_) {
    if (!Hidden(name) && shape.size() > kMaxTensorRank) return false;
  }
  return true;
}

pnnx::Graph Converter::Run() {
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

void Converter::FindSilu() {
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

pnnx::Graph Converter::Convert(bool batch_mode, int64_t batch) {
  batch_mode_ = batch_mode;
  batch_ = batch;
  graph_ = pnnx::Graph();
  operand_of_.clear();
  op_names_.clear();
  operand_names_.clear();
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
    (this->*Table().at(node.op_type()))(node);
  }
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
  // A graph input that only folded nodes read (Shape of it, a graph output
  // computed from its shape alone) would be a pnnx.Input nobody reads, which
  // the engine refuses: its value is asked for and bound, as for an operator
  // that needs a constant (NeedsConstantError), and the folding then reads
  // the shape of the value given.
  const std::vector<bool> live = Live();
  for (const auto& info : graph.input()) {
    if (constants_.count(info.name())) continue;
    const std::vector<int>& readers = graph_.operands[operand_of_.at(info.name())].consumers;
    if (std::none_of(readers.begin(), readers.end(), [&](int op) { return live[op]; })) {
      throw NeedsConstantError(
          fmt::format("graph input '{}' is read by no operator once the graph is folded (only "
                      "its shape is used, fixed at load time): give its value (kuiper run: its "
                      ".npy) to bind it",
                      info.name()),
          info.name());
    }
  }
  return Pruned();
}

// The operators whose result reaches a pnnx.Output, and the pnnx.Inputs.
std::vector<bool> Converter::Live() const {
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
pnnx::Graph Converter::Pruned() const {
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

void Converter::Fail(const onnx::NodeProto& node, const std::string& why) const {
  throw ConversionError(fmt::format("node '{}' ({}): {}", NodeName(node), node.op_type(), why));
}

void Converter::FailBatch(const onnx::NodeProto& node, const std::string& why) const {
  throw BatchAxisError(fmt::format("node '{}' ({}): {}", NodeName(node), node.op_type(), why));
}

std::string Converter::NodeName(const onnx::NodeProto& node) const {
  const auto it = node_names_.find(&node);
  if (it != node_names_.end()) return it->second;
  return node.name().empty() ? node.op_type() : node.name();
}

const Shape& Converter::ShapeOf(const onnx::NodeProto& node, const std::string& value) const {
  const auto it = shapes_.find(value);
  if (it == shapes_.end()) {
    Fail(node, fmt::format("the shape of '{}' is unknown (ONNX shape inference could not fix "
                           "it)",
                           value));
  }
  return it->second;
}

const onnx::TensorProto* Converter::Constant(const std::string& value) const {
  const auto it = constants_.find(value);
  return it == constants_.end() ? nullptr : it->second;
}

bool Converter::HasInput(const onnx::NodeProto& node, int input) const {
  return node.input_size() > input && !node.input(input).empty();
}

const onnx::TensorProto& Converter::RequireConstant(const onnx::NodeProto& node, int input) const {
  const onnx::TensorProto* tensor = HasInput(node, input) ? Constant(node.input(input)) : nullptr;
  if (tensor) return *tensor;
  if (HasInput(node, input)) {
    const std::string& name = node.input(input);
    for (const onnx::ValueInfoProto& info : model_.graph().input()) {
      if (info.name() != name) continue;
      // A graph input: bound at load time when the user gives its value.
      throw NeedsConstantError(
          fmt::format("node '{}' ({}): input {} must be a constant (an initializer or a Constant "
                      "node); it is graph input '{}', which the engine needs at load time: give "
                      "its value (kuiper run: its .npy) to bind it",
                      NodeName(node), node.op_type(), input, name),
          name);
    }
  }
  if (HasInput(node, input)) {
    // A value computed from graph inputs alone (HannWindow's expansion:
    // Cast(size) -> Sub -> Range's limit) folds once they are bound: the
    // first unbound one is asked for.
    const std::string from = GraphInputBehind(node.input(input));
    if (!from.empty()) {
      throw NeedsConstantError(
          fmt::format("node '{}' ({}): input {} must be a constant (an initializer or a Constant "
                      "node); it is computed from graph input '{}', which the engine needs at "
                      "load time: give its value (kuiper run: its .npy) to bind it",
                      NodeName(node), node.op_type(), input, from),
          from);
    }
  }
  Fail(node, fmt::format("input {} must be a constant (an initializer or a Constant node)", input));
}

std::string Converter::GraphInputBehind(const std::string& value) const {
  std::map<std::string, const onnx::NodeProto*> producer;
  for (const onnx::NodeProto& node : model_.graph().node()) {
    for (const std::string& output : node.output()) producer[output] = &node;
  }
  std::set<std::string> runtime_inputs;
  for (const onnx::ValueInfoProto& info : model_.graph().input()) {
    if (!constants_.count(info.name())) runtime_inputs.insert(info.name());
  }
  std::set<std::string> seen;
  std::vector<std::string> stack = {value};
  while (!stack.empty()) {
    const std::string v = stack.back();
    stack.pop_back();
    if (v.empty() || !seen.insert(v).second || constants_.count(v)) continue;
    if (runtime_inputs.count(v)) return v;
    const auto it = producer.find(v);
    if (it == producer.end()) continue;
    for (const std::string& in : it->second->input()) stack.push_back(in);
  }
  return "";
}

std::vector<int> Converter::EngineShape(const Shape& shape) const {
  std::vector<int> engine(shape.begin(), shape.end());
  if (!batch_mode_) engine.insert(engine.begin(), 1);
  if (engine.size() == 1) engine.push_back(1);  // a scalar: one item of one element
  return engine;
}

int Converter::EngineAxis(const onnx::NodeProto& node, int64_t axis, size_t rank) const {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    Fail(node, fmt::format("axis {} is out of range for rank {}", axis, r));
  if (axis < 0) axis += r;
  if (batch_mode_ && axis == 0) FailBatch(node, "acts on dimension 0, the engine's batch");
  return static_cast<int>(batch_mode_ ? axis : axis + 1);
}

std::string Converter::UniqueName(const std::string& base, std::set<std::string>& taken) const {
  std::string name = Sanitize(base);
  for (int k = 1; taken.count(name); ++k) name = fmt::format("{}_{}", Sanitize(base), k);
  taken.insert(name);
  return name;
}

void Converter::DeclareUnbatched(int operand, const Shape& shape) {
  if (batch_mode_) return;  // dimension 0 is the batch: the engine shape is the ONNX shape
  graph_.operands[operand].unbatched_shape = std::vector<int>(shape.begin(), shape.end());
}

int Converter::NewOperand(const std::string& name, const std::vector<int>& engine_shape) {
  pnnx::Operand operand;
  operand.name = UniqueName(name, operand_names_);
  operand.type = pnnx::DataType::kF32;
  operand.shape = engine_shape;
  graph_.operands.push_back(std::move(operand));
  return static_cast<int>(graph_.operands.size()) - 1;
}

int Converter::Output(const onnx::NodeProto& node, int output) {
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

pnnx::Operator& Converter::Emit(const std::string& type, const std::string& name,
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

int Converter::Input(const onnx::NodeProto& node, int input) {
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

pnnx::Operator& Converter::EmitUnary(const onnx::NodeProto& node, const std::string& type) {
  const int input = Input(node, 0);
  return Emit(type, NodeName(node), {input}, Output(node));
}

// ---- ordinary nodes ----

void Converter::ConvertActivation(const onnx::NodeProto& node) {
  static const std::map<std::string, std::string> types = {
      {"Relu", "nn.ReLU"}, {"Sigmoid", "nn.Sigmoid"}, {"HardSwish", "nn.Hardswish"}};
  EmitUnary(node, types.at(node.op_type()));
}

// Identity of a constant was folded (FoldConstants: torch.onnx.export dedups
// equal initializers into Identity nodes, which then are weights, e.g. a Conv's
// bias). Identity of a computed value is the same operand under a second name,
// with no operator; only a graph output gets its own copy (pnnx.Output reads
// an operand of its own).
void Converter::ConvertIdentity(const onnx::NodeProto& node) {
  if (node.input_size() != 1 || node.output_size() != 1) {
    Fail(node, fmt::format("needs 1 input and 1 output, has {} and {}", node.input_size(),
                           node.output_size()));
  }
  const bool graph_output =
      std::any_of(model_.graph().output().begin(), model_.graph().output().end(),
                  [&](const onnx::ValueInfoProto& info) { return info.name() == node.output(0); });
  if (!graph_output) {
    operand_of_[node.output(0)] = Input(node, 0);
    return;
  }
  EmitUnary(node, "pnnx.Expression").params["expr"] = StringParam("@0");
}

float Converter::FloatAttributeChecked(const onnx::NodeProto& node, const std::string& name,
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

pnnx::Operator& Converter::EmitClamp(const std::string& name, int input, int output, float lo,
                                     float hi) {
  pnnx::Operator& op = Emit("torch.clamp", name, {input}, output);
  op.params["min"] = std::isinf(lo) && lo < 0 ? pnnx::Parameter{} : FloatParam(lo);
  op.params["max"] = std::isinf(hi) && hi > 0 ? pnnx::Parameter{} : FloatParam(hi);
  return op;
}

// Clip(x, min, max) = min(max(x, min), max). Opset 6..10 keeps the bounds in
// attributes, opset 11+ in the optional inputs 1 and 2 (an empty name: absent),
// which must be constant scalars here. PyTorch's ReLU6 and ReLU become the
// engine's fixed layers; any other bounds torch.clamp.
void Converter::ConvertClip(const onnx::NodeProto& node) {
  constexpr float kInfinity = std::numeric_limits<float>::infinity();
  float lo = -kInfinity, hi = kInfinity;
  if (opset_ < 11) {
    if (node.input_size() != 1) {
      Fail(node, fmt::format("opset {} Clip takes 1 input (min and max are attributes), has {}",
                             opset_, node.input_size()));
    }
    lo = FloatAttributeChecked(node, "min", lo);
    hi = FloatAttributeChecked(node, "max", hi);
  } else {
    for (const char* name : {"min", "max"}) {
      if (FindAttribute(node, name)) {
        Fail(node, fmt::format("opset {} Clip takes '{}' as an input (1: min, 2: max), not as "
                               "an attribute",
                               opset_, name));
      }
    }
    if (node.input_size() > 3) {
      Fail(node,
           fmt::format("takes at most 3 inputs (input, min, max), has {}", node.input_size()));
    }
    for (int k = 1; k <= 2; ++k) {
      if (!HasInput(node, k)) continue;
      const onnx::TensorProto& bound = RequireConstant(node, k);
      if (bound.dims_size() != 0) {
        Fail(node, fmt::format("{} must be a scalar, has shape {}", k == 1 ? "min" : "max",
                               ShapeText(Shape(bound.dims().begin(), bound.dims().end()))));
      }
      const float value = ConstantAsFloats(bound).at(0);
      if (std::isnan(value)) Fail(node, fmt::format("{} is NaN", k == 1 ? "min" : "max"));
      (k == 1 ? lo : hi) = value;
    }
  }
  if (lo == 0 && hi == 6) {
    EmitUnary(node, "nn.ReLU6");
  } else if (lo == 0 && hi == kInfinity) {
    EmitUnary(node, "nn.ReLU");
  } else {
    const int input = Input(node, 0);
    EmitClamp(NodeName(node), input, Output(node), lo, hi);
  }
}

// HardSigmoid(x) = max(0, min(1, alpha*x + beta)), ONNX's defaults alpha=0.2,
// beta=0.5. PyTorch's Hardsigmoid exports alpha=1/6 (as a float) and beta=0.5:
// that is the engine's nn.Hardsigmoid, relu6(x + 3) / 6, equal up to rounding.
// Other parameters become an expression alpha*x + beta, then torch.clamp to [0,1].
void Converter::ConvertHardSigmoid(const onnx::NodeProto& node) {
  if (node.input_size() != 1) Fail(node, fmt::format("needs 1 input, has {}", node.input_size()));
  const float alpha = FloatAttributeChecked(node, "alpha", 0.2f);
  const float beta = FloatAttributeChecked(node, "beta", 0.5f);
  if (std::isinf(alpha) || std::isinf(beta)) Fail(node, "alpha and beta must be finite");
  if (alpha == 1.f / 6.f && beta == 0.5f) {
    EmitUnary(node, "nn.Hardsigmoid");
    return;
  }
  const int input = Input(node, 0);
  const std::string name = NodeName(node);
  const int affine =
      NewOperand(node.output(0) + "_affine", EngineShape(ShapeOf(node, node.output(0))));
  // 9 significant digits: every float reads back as itself.
  Emit("pnnx.Expression", name + "_affine", {input}, affine).params["expr"] =
      StringParam(fmt::format("add(mul(@0,{:.8e}),{:.8e})", alpha, beta));
  EmitClamp(name, affine, Output(node), 0.f, 1.f);
}

void Converter::ConvertExpression(const onnx::NodeProto& node) {
  static const std::map<std::string, std::string> binary = {
      {"Add", "add"}, {"Sub", "sub"}, {"Mul", "mul"}, {"Pow", "pow"}};  // Div: elementwise_ops.cpp
  static const std::map<std::string, std::string> unary = {{"Sin", "sin"},   {"Neg", "neg"},
                                                           {"Exp", "exp"},   {"Log", "log"},
                                                           {"Sqrt", "sqrt"}, {"Abs", "abs"}};
  const std::string& type = node.op_type();
  const int arity = binary.count(type) ? 2 : 1;
  if (node.input_size() != arity) {
    Fail(node, fmt::format("needs {} input(s), has {}", arity, node.input_size()));
  }
  // Items broadcast among themselves: in batch mode a computed operand must
  // have the output's rank, or NumPy would align its batch with another dim.
  const size_t rank = ShapeOf(node, node.output(0)).size();
  for (int k = 0; k < arity; ++k) {
    if (batch_mode_ && !Constant(node.input(k)) && ShapeOf(node, node.input(k)).size() != rank) {
      FailBatch(node, "broadcasts a computed operand of lower rank over the batch dimension");
    }
  }
  std::vector<int> inputs;
  for (int k = 0; k < arity; ++k) inputs.push_back(Input(node, k));
  std::string expr = "@0";
  if (arity == 2) expr = fmt::format("{}(@0,@1)", binary.at(type));
  if (unary.count(type)) expr = fmt::format("{}(@0)", unary.at(type));
  pnnx::Operator& op = Emit("pnnx.Expression", NodeName(node), inputs, Output(node));
  op.params["expr"] = StringParam(expr);
}

void Converter::ConvertConv(const onnx::NodeProto& node) {
  const onnx::TensorProto& weight = RequireConstant(node, 1);
  const Shape w(weight.dims().begin(), weight.dims().end());
  if (w.size() != 4 || ShapeOf(node, node.input(0)).size() != 4) {
    Fail(node, "only 2-D convolution (4-D input and weight) is supported");
  }
  const std::string auto_pad = AttributeString(node, "auto_pad", "NOTSET");
  std::vector<int64_t> pads = AttributeInts(node, "pads", {});
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    // As for pooling (ConvertPool): out = ceil(in / stride), the odd pad at
    // the end (UPPER) or the start (LOWER); nn.Conv2d takes it when even.
    const Shape& in = ShapeOf(node, node.input(0));
    const std::vector<int64_t> strides = AttributeInts(node, "strides", {1, 1});
    const std::vector<int64_t> dilations = AttributeInts(node, "dilations", {1, 1});
    if (strides.size() != 2 || dilations.size() != 2) Fail(node, "strides and dilations need 2");
    pads.assign(4, 0);
    for (int a = 0; a < 2; ++a) {
      const int64_t out = (in[2 + a] + strides[a] - 1) / strides[a];
      const int64_t span = dilations[a] * (w[2 + a] - 1) + 1;
      const int64_t total = std::max<int64_t>(0, (out - 1) * strides[a] + span - in[2 + a]);
      pads[a] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[a + 2] = total - pads[a];
    }
  } else if (auto_pad != "NOTSET" && auto_pad != "VALID") {
    Fail(node, fmt::format("auto_pad={} is not NOTSET, VALID, SAME_UPPER or SAME_LOWER", auto_pad));
  }
  std::vector<int> padding;
  if (!SymmetricPads(pads, padding)) {
    Fail(node, fmt::format("asymmetric pads ({}) are not supported", fmt::join(pads, ",")));
  }
  const std::vector<int64_t> kernel = AttributeInts(node, "kernel_shape", {w[2], w[3]});
  if (kernel != std::vector<int64_t>{w[2], w[3]}) Fail(node, "kernel_shape differs from W");
  const int64_t group = AttributeInt(node, "group", 1);
  const bool has_bias = HasInput(node, 2);
  const int input = Input(node, 0);
  pnnx::Operator& op = Emit("nn.Conv2d", NodeName(node), {input}, Output(node));
  op.params["bias"] = BoolParam(has_bias);
  op.params["dilation"] = IntsParam(ToInts(AttributeInts(node, "dilations", {1, 1})));
  op.params["groups"] = IntParam(static_cast<int>(group));
  op.params["in_channels"] = IntParam(static_cast<int>(w[1] * group));
  op.params["kernel_size"] = IntsParam(ToInts(kernel));
  op.params["out_channels"] = IntParam(static_cast<int>(w[0]));
  op.params["padding"] = IntsParam(padding);
  op.params["padding_mode"] = StringParam("zeros");
  op.params["stride"] = IntsParam(ToInts(AttributeInts(node, "strides", {1, 1})));
  op.attrs["weight"] = FloatAttribute(ToInts(w), OnnxTensorFloats(weight));
  if (has_bias) {
    const onnx::TensorProto& bias = RequireConstant(node, 2);
    op.attrs["bias"] = FloatAttribute({static_cast<int>(w[0])}, OnnxTensorFloats(bias));
  }
}

namespace {

// PyTorch's pooled length (nn.MaxPool2d / nn.AvgPool2d: a ceil-mode window
// must start inside the input or its left padding).
int64_t TorchPoolSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation,
                      bool ceil_mode) {
  const int64_t room = in + 2 * pad - dilation * (kernel - 1) - 1;
  if (room < 0) return 0;
  int64_t out = (room + (ceil_mode ? stride - 1 : 0)) / stride + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

}  // namespace

// MaxPool and AveragePool. auto_pad becomes explicit pads here: SAME_UPPER
// and SAME_LOWER pad (out - 1) * stride + dilated kernel - in in total, with
// out = ceil(in / stride), the odd one at the end (UPPER) or at the start
// (LOWER). The forms nn.MaxPool2d / nn.AvgPool2d take (2-D, symmetric pads
// within PyTorch's half-kernel limit, the same output size) become those
// layers, which ResNet's speed depends on; the others (1-D, asymmetric or
// larger pads, ONNX's ceil-mode sizes) kuiper.Pool (kuiper/src/layer/onnx_pool.cpp).
void Converter::ConvertPool(const onnx::NodeProto& node) {
  const bool max = node.op_type() == "MaxPool";
  if (max && node.output_size() > 1 && IsUsed(node.output(1))) {
    Fail(node, "the Indices output is not supported");
  }
  const std::vector<int64_t> kernel = AttributeInts(node, "kernel_shape", {});
  const size_t n = kernel.size();
  if (n == 0) Fail(node, "kernel_shape is missing");
  if (n > 2) {
    Fail(node, fmt::format("{}-D pooling (kernel_shape {}) is not supported; 1-D and 2-D are", n,
                           ShapeText(kernel)));
  }
  const Shape& in = ShapeOf(node, node.input(0));
  const Shape& out = ShapeOf(node, node.output(0));
  if (in.size() != n + 2 || out.size() != n + 2) {
    Fail(node, fmt::format("input {} is not (N, C, {} spatial dims) for kernel_shape {}",
                           ShapeText(in), n, ShapeText(kernel)));
  }
  const auto per_axis = [&](const std::string& name, size_t size, int64_t least) {
    const std::vector<int64_t> values =
        AttributeInts(node, name, std::vector<int64_t>(size, name == "pads" ? 0 : 1));
    if (values.size() != size) {
      Fail(node, fmt::format("{} has {} values, expected {}", name, values.size(), size));
    }
    for (int64_t v : values) {
      if (v < least) Fail(node, fmt::format("{} holds {}, expected at least {}", name, v, least));
    }
    return values;
  };
  const std::vector<int64_t> strides = per_axis("strides", n, 1);
  const std::vector<int64_t> dilations = per_axis("dilations", n, 1);
  std::vector<int64_t> pads = per_axis("pads", 2 * n, 0);
  const std::string auto_pad = AttributeString(node, "auto_pad", "NOTSET");
  if (auto_pad == "VALID") {
    pads.assign(2 * n, 0);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t a = 0; a < n; ++a) {
      const int64_t spatial = in[2 + a];
      const int64_t target = (spatial + strides[a] - 1) / strides[a];
      const int64_t span = dilations[a] * (kernel[a] - 1) + 1;
      const int64_t total = std::max<int64_t>(0, (target - 1) * strides[a] + span - spatial);
      const int64_t small = total / 2;
      pads[a] = auto_pad == "SAME_UPPER" ? small : total - small;
      pads[a + n] = total - pads[a];
    }
  } else if (auto_pad != "NOTSET") {
    Fail(node, fmt::format("auto_pad={} is not NOTSET, VALID, SAME_UPPER or SAME_LOWER", auto_pad));
  }
  const bool ceil_mode = AttributeInt(node, "ceil_mode", 0) != 0;
  const bool count_include_pad = AttributeInt(node, "count_include_pad", 0) != 0;
  // ONNX's pooled length, checked against the inferred output shape.
  for (size_t a = 0; a < n; ++a) {
    const int64_t span = dilations[a] * (kernel[a] - 1) + 1;
    const int64_t room = in[2 + a] + pads[a] + pads[a + n] - span;
    const int64_t size =
        room < 0 ? 0 : (ceil_mode ? (room + strides[a] - 1) / strides[a] : room / strides[a]) + 1;
    if (size < 1 || size != out[2 + a]) {
      Fail(node, fmt::format("pooled size {} along spatial axis {} differs from the output shape "
                             "{}",
                             size, a, ShapeText(out)));
    }
  }
  bool torch_form = n == 2 && (max || dilations == std::vector<int64_t>{1, 1});
  for (size_t a = 0; torch_form && a < n; ++a) {
    const int64_t span = dilations[a] * (kernel[a] - 1) + 1;
    torch_form = pads[a] == pads[a + n] && pads[a] <= (max ? span / 2 : kernel[a] / 2) &&
                 TorchPoolSize(in[2 + a], kernel[a], strides[a], pads[a], dilations[a],
                               ceil_mode) == out[2 + a];
  }
  std::map<std::string, pnnx::Parameter> params;
  params["kernel_size"] = IntsParam(ToInts(kernel));
  params["stride"] = IntsParam(ToInts(strides));
  params["ceil_mode"] = BoolParam(ceil_mode);
  if (torch_form) {
    params["padding"] = IntsParam({static_cast<int>(pads[0]), static_cast<int>(pads[1])});
    if (max) {
      params["dilation"] = IntsParam(ToInts(dilations));
      params["return_indices"] = BoolParam(false);
      EmitUnary(node, "nn.MaxPool2d").params = params;
    } else {
      params["count_include_pad"] = BoolParam(count_include_pad);
      params["divisor_override"] = pnnx::Parameter{};
      EmitUnary(node, "nn.AvgPool2d").params = params;
    }
    return;
  }
  params["mode"] = StringParam(max ? "max" : "avg");
  params["dilation"] = IntsParam(ToInts(dilations));
  params["pads"] = IntsParam(ToInts(pads));
  params["count_include_pad"] = BoolParam(count_include_pad);
  EmitUnary(node, "kuiper.Pool").params = params;
}

void Converter::ConvertGlobalAveragePool(const onnx::NodeProto& node) {
  if (ShapeOf(node, node.input(0)).size() != 4) Fail(node, "only 4-D (N,C,H,W) input");
  EmitUnary(node, "nn.AdaptiveAvgPool2d").params["output_size"] = IntsParam({1, 1});
}

// Flatten and Reshape: the target is the inferred output shape, so ONNX's 0
// and -1 entries are already resolved. Row-major data does not move, so in
// batch mode, where every value starts with the batch, each item reshapes alone.
void Converter::ConvertReshape(const onnx::NodeProto& node) {
  std::vector<int> shape = EngineShape(ShapeOf(node, node.output(0)));
  // A scalar output in batch mode has no batch dimension (found by fuzz/onnx_fuzzer.cpp,
  // OnnxMalformedNode.FlattenDeclaredToGiveAScalarStopsTheConversion).
  if (shape.empty()) Fail(node, "the output is a scalar, without the batch dimension");
  if (shape.size() > kMaxTensorRank + 1)
    Fail(node, fmt::format("output shape {} has more than {} item dimensions",
                           ShapeText(ShapeOf(node, node.output(0))), kMaxTensorRank));
  shape[0] = -1;
  EmitUnary(node, "Tensor.reshape").params["shape"] = IntsParam(shape);
  // A model may declare any shape: a reshape that cannot hold its input's
  // values is refused here (after the output's own checks), naming the node, rather
  // than when it runs.
  const auto values = [](const Shape& s) {
    uint64_t count = 1;
    for (int64_t d : s)
      count = SaturatingMultiply(count, static_cast<uint64_t>(std::max<int64_t>(d, 0)));
    return count;
  };
  const Shape& in = ShapeOf(node, node.input(0));
  const Shape& out = ShapeOf(node, node.output(0));
  if (values(in) != values(out)) {
    Fail(node, fmt::format("its input {} cannot take the shape {}", ShapeText(in), ShapeText(out)));
  }
}

void Converter::ConvertConcat(const onnx::NodeProto& node) {
  const size_t rank = ShapeOf(node, node.output(0)).size();
  const int dim = EngineAxis(node, AttributeInt(node, "axis", 0), rank);
  std::vector<int> inputs;
  for (int k = 0; k < node.input_size(); ++k) inputs.push_back(Input(node, k));
  Emit("torch.cat", NodeName(node), inputs, Output(node)).params["dim"] = IntParam(dim);
}

// Split (every opset): one torch.split with k outputs. The piece sizes come
// from the outputs' shapes, which ONNX's shape inference has derived from
// whichever form the model uses (the `split` attribute before opset 13, the
// `split` input from 13, `num_outputs` from 18, or equal parts), so one rule
// covers them all. An empty piece cannot be an engine tensor and is refused.
void Converter::ConvertSplit(const onnx::NodeProto& node) {
  const Shape& shape = ShapeOf(node, node.input(0));
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t axis = AttributeInt(node, "axis", 0);
  const int dim = EngineAxis(node, axis, shape.size());
  if (axis < 0) axis += rank;
  std::vector<int> sizes;
  for (int j = 0; j < node.output_size(); ++j) {
    if (node.output(j).empty()) Fail(node, fmt::format("output {} has no name", j));
    const Shape& piece = ShapeOf(node, node.output(j));
    if (static_cast<int64_t>(piece.size()) != rank || piece[axis] < 1) {
      Fail(node, fmt::format("output {} has shape {}: an empty piece or another rank than the "
                             "input's {}",
                             j, ShapeText(piece), ShapeText(shape)));
    }
    sizes.push_back(static_cast<int>(piece[axis]));
  }
  const int input = Input(node, 0);
  std::vector<int> outputs;
  for (int j = 0; j < node.output_size(); ++j) outputs.push_back(Output(node, j));
  pnnx::Operator& op = Emit("torch.split", NodeName(node), {input}, -1);
  op.outputs = outputs;
  for (int output : outputs) {
    graph_.operands[output].producer = static_cast<int>(graph_.operators.size()) - 1;
  }
  op.params["dim"] = IntParam(dim);
  op.params["split_size_or_sections"] = IntsParam(sizes);
}

void Converter::ConvertTranspose(const onnx::NodeProto& node) {
  const size_t rank = ShapeOf(node, node.input(0)).size();
  std::vector<int64_t> reversed(rank);
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  const std::vector<int64_t> perm = AttributeInts(node, "perm", reversed);
  std::vector<int> dims;
  if (batch_mode_) {
    if (perm.empty() || perm[0] != 0) FailBatch(node, "moves dimension 0, the engine's batch");
    dims = ToInts(perm);
  } else {
    dims.push_back(0);
    for (int64_t d : perm) dims.push_back(static_cast<int>(d + 1));
  }
  EmitUnary(node, "torch.permute").params["dims"] = IntsParam(dims);
}

// Gemm: Y = alpha * A' * B' + beta * C, A' = A or A^T (transA), B' = B or
// B^T (transB). B must be a constant (weights; a graph input is bound at
// load time): nn.Linear with alpha folded into W. transA transposes A first
// (torch.permute), which moves the batch dimension: the graph then runs as
// one item. C of 1 or N values is nn.Linear's bias; any other shape that
// broadcasts to (M, N), such as a full (M, N) matrix, is added after it.
void Converter::ConvertGemm(const onnx::NodeProto& node) {
  const bool trans_a = AttributeInt(node, "transA", 0) != 0;
  const Shape& as = ShapeOf(node, node.input(0));
  if (as.size() != 2) Fail(node, fmt::format("A must be 2-D, has shape {}", ShapeText(as)));
  const onnx::TensorProto& b = RequireConstant(node, 1);
  const Shape bs(b.dims().begin(), b.dims().end());
  if (bs.size() != 2) Fail(node, "B must be 2-D");
  const bool trans_b = AttributeInt(node, "transB", 0) != 0;
  const float alpha = AttributeFloat(node, "alpha", 1.f);
  const float beta = AttributeFloat(node, "beta", 1.f);
  const int64_t k = trans_b ? bs[1] : bs[0];
  const int64_t n = trans_b ? bs[0] : bs[1];
  const int64_t m = trans_a ? as[1] : as[0];
  if ((trans_a ? as[0] : as[1]) != k) {
    Fail(node, fmt::format("A {} (transA={}) and B {} (transB={}) do not chain", ShapeText(as),
                           trans_a ? 1 : 0, ShapeText(bs), trans_b ? 1 : 0));
  }
  if (trans_a && batch_mode_) FailBatch(node, "transA=1 moves dimension 0, the engine's batch");
  // nn.Linear keeps W as (out, in) = (N, K): B itself when transB, else B^T.
  const std::vector<float> bv = ConstantAsFloats(b);
  std::vector<float> weight(bv.size());
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < k; ++j) {
      weight[i * k + j] = alpha * (trans_b ? bv[i * k + j] : bv[j * n + i]);
    }
  }
  std::vector<float> bias;
  bool matrix_c = false;
  if (HasInput(node, 2)) {
    const onnx::TensorProto& c = RequireConstant(node, 2);
    const Shape cs(c.dims().begin(), c.dims().end());
    const int64_t count = std::accumulate(cs.begin(), cs.end(), int64_t{1}, std::multiplies<>());
    const bool row = count == 1 || (count == n && (cs.size() < 2 || cs[cs.size() - 2] == 1));
    if (row) {
      const std::vector<float> cv = ConstantAsFloats(c);
      for (int64_t i = 0; i < n; ++i) bias.push_back(beta * cv[cv.size() == 1 ? 0 : i]);
    } else {
      const bool broadcasts = cs.size() <= 2 && (cs.back() == 1 || cs.back() == n) &&
                              (cs.size() < 2 || cs[0] == 1 || cs[0] == m);
      if (!broadcasts) {
        Fail(node, fmt::format("C of shape {} does not broadcast to (M, N) = ({},{})",
                               ShapeText(cs), m, n));
      }
      matrix_c = true;
    }
  }
  int a = Input(node, 0);
  if (trans_a) {
    const int transposed = NewOperand(node.output(0) + "_a_t", EngineShape({m, k}));
    Emit("torch.permute", NodeName(node) + "_transA", {a}, transposed).params["dims"] =
        IntsParam({0, 2, 1});
    a = transposed;
  }
  const int product =
      matrix_c ? NewOperand(node.output(0) + "_ab", EngineShape({m, n})) : Output(node);
  pnnx::Operator& op = Emit("nn.Linear", NodeName(node), {a}, product);
  op.params["bias"] = BoolParam(!bias.empty());
  op.params["in_features"] = IntParam(static_cast<int>(k));
  op.params["out_features"] = IntParam(static_cast<int>(n));
  op.attrs["weight"] = FloatAttribute({static_cast<int>(n), static_cast<int>(k)}, weight);
  if (!bias.empty()) op.attrs["bias"] = FloatAttribute({static_cast<int>(n)}, bias);
  if (matrix_c) {
    const int c = Input(node, 2);
    Emit("pnnx.Expression", NodeName(node) + "_c", {product, c}, Output(node)).params["expr"] =
        StringParam(fmt::format("add(@0,mul(@1,{:.8e}))", beta));
  }
}

void Converter::ConvertBatchNormalization(const onnx::NodeProto& node) {
  if (ShapeOf(node, node.input(0)).size() != 4) Fail(node, "only 4-D (N,C,H,W) input");
  if (AttributeInt(node, "training_mode", 0) != 0) {
    ConvertBatchNormTraining(node);
    return;
  }
  for (int k = 1; k < node.output_size(); ++k) {
    if (IsUsed(node.output(k))) Fail(node, "the running statistics outputs are not supported");
  }
  const int64_t channels = ShapeOf(node, node.input(0))[1];
  const char* keys[] = {"weight", "bias", "running_mean", "running_var"};
  std::map<std::string, pnnx::Attribute> attrs;
  for (int k = 1; k <= 4; ++k) {
    const std::vector<float> values = OnnxTensorFloats(RequireConstant(node, k));
    if (static_cast<int64_t>(values.size()) != channels) {
      Fail(node, fmt::format("input {} has {} values, expected C={}", k, values.size(), channels));
    }
    attrs[keys[k - 1]] = FloatAttribute({static_cast<int>(channels)}, values);
  }
  pnnx::Operator& op = EmitUnary(node, "nn.BatchNorm2d");
  op.params["affine"] = BoolParam(true);
  op.params["eps"] = FloatParam(AttributeFloat(node, "epsilon", 1e-5f));
  op.params["num_features"] = IntParam(static_cast<int>(channels));
  op.attrs = std::move(attrs);
}

// BatchNormalization with training_mode=1 (opset 14+), as ONNX defines it:
// the batch's own statistics normalise X, and the running statistics are
// blended with them,
//   m = mean of X over every axis but 1, v = mean of (X - m)^2 (biased),
//   Y = (X - m) / sqrt(v + epsilon) * scale + B,
//   running_mean = mean * momentum + m * (1 - momentum), likewise running_var.
// Composed of torch.mean and pnnx.Expression; the statistics span the batch,
// so the graph is one item (§2). scale, B, mean and var must be constants.
void Converter::ConvertBatchNormTraining(const onnx::NodeProto& node) {
  if (batch_mode_) FailBatch(node, "training mode averages over the batch");
  const Shape& x = ShapeOf(node, node.input(0));
  const int64_t channels = x[1];
  const float epsilon = FloatAttributeChecked(node, "epsilon", 1e-5f);
  const float momentum = FloatAttributeChecked(node, "momentum", 0.9f);
  std::vector<std::vector<float>> params;  // scale, B, mean, var
  for (int k = 1; k <= 4; ++k) {
    params.push_back(ConstantAsFloats(RequireConstant(node, k)));
    if (static_cast<int64_t>(params.back().size()) != channels) {
      Fail(node,
           fmt::format("input {} has {} values, expected C={}", k, params.back().size(), channels));
    }
  }
  const std::string name = NodeName(node);
  const int c = static_cast<int>(channels);
  // A per-channel constant shaped (C,1,1) to broadcast over an item (N,C,H,W).
  const auto channel_constant = [&](const std::string& suffix, const std::vector<float>& values) {
    const int operand = NewOperand(name + suffix, {1, c, 1, 1});
    Emit("pnnx.Attribute", name + suffix, {}, operand).attrs["data"] =
        FloatAttribute({c, 1, 1}, values);
    return operand;
  };
  const Shape stat_shape = {1, channels, 1, 1};
  const auto mean_over_all_but_channels = [&](const std::string& suffix, int input) {
    const int out = NewOperand(name + suffix, EngineShape(stat_shape));
    pnnx::Operator& op = Emit("torch.mean", name + suffix, {input}, out);
    op.params["dim"] = IntsParam({1, 3, 4});  // single-item mode: ONNX axes 0, 2, 3
    op.params["keepdim"] = BoolParam(true);
    return out;
  };
  const int input = Input(node, 0);
  const int mean = mean_over_all_but_channels("_batch_mean", input);
  const int centred = NewOperand(name + "_centred", EngineShape(x));
  Emit("pnnx.Expression", name + "_centred", {input, mean}, centred).params["expr"] =
      StringParam("sub(@0,@1)");
  const int squared = NewOperand(name + "_squared", EngineShape(x));
  Emit("pnnx.Expression", name + "_squared", {centred}, squared).params["expr"] =
      StringParam("mul(@0,@0)");
  const int var = mean_over_all_but_channels("_batch_var", squared);
  const int scale = channel_constant("_scale", params[0]);
  const int bias = channel_constant("_bias", params[1]);
  Emit("pnnx.Expression", name, {centred, var, scale, bias}, Output(node, 0)).params["expr"] =
      StringParam(fmt::format("add(mul(div(@0,sqrt(add(@1,{:.8e}))),@2),@3)", epsilon));
  // The running statistics, (C): blended, then reshaped from (1,C,1,1).
  for (int k = 1; k <= 2 && k < node.output_size(); ++k) {
    if (node.output(k).empty() || !IsUsed(node.output(k))) continue;
    const int stat = k == 1 ? mean : var;
    const int running = channel_constant(k == 1 ? "_running_mean" : "_running_var", params[1 + k]);
    const int blended =
        NewOperand(name + (k == 1 ? "_mean_out" : "_var_out"), EngineShape(stat_shape));
    Emit("pnnx.Expression", name + (k == 1 ? "_mean_out" : "_var_out"), {running, stat}, blended)
        .params["expr"] =
        StringParam(fmt::format("add(mul(@0,{:.8e}),mul(@1,{:.8e}))", momentum, 1.f - momentum));
    EmitReshapeTo(name + (k == 1 ? "_mean_reshape" : "_var_reshape"), blended, {channels},
                  Output(node, k));
  }
}

}  // namespace kuiper::onnx_import

// The importer's public entry points: reading a model, converting it, and
// moving tensors between ONNX's row-major data and the engine's batches.
#include "kuiper/onnx_import.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <numeric>
#include <set>

#include "context.hpp"
#include "kuiper/memory_limit.hpp"
#include "lowering_registry.hpp"

namespace kuiper {

std::vector<std::string> SupportedOnnxOperators() {
  std::vector<std::string> types;
  for (const auto& [type, entry] : onnx_import::Lowerings()) types.push_back(type);
  return types;  // std::map keeps them sorted
}

std::vector<OnnxOperatorInfo> OnnxOperators() {
  std::vector<OnnxOperatorInfo> operators;
  for (const auto& [type, entry] : onnx_import::Lowerings()) {
    operators.push_back({type, entry.constraints});
  }
  return operators;
}

namespace {

// The float32 values the graph inputs and constants (initializers, Constant
// nodes) declare, added up and checked against the memory limit before the
// converter copies any of them. A negative dim is an error of its own: counted
// as 0 it would hide the rest of the shape from the check.
void CheckDeclaredMemory(const onnx::GraphProto& graph, const std::string& name) {
  uint64_t total = 0;
  const auto add = [&](const std::string& value, const std::vector<int64_t>& dims) {
    uint64_t bytes = sizeof(float);
    for (int64_t dim : dims) {
      if (dim < 0) {
        throw ConversionError(fmt::format("{}: '{}' declares the shape ({}), with a negative dim",
                                          name, value, fmt::join(dims, ",")));
      }
      bytes = SaturatingMultiply(bytes, dim);
    }
    total += std::min(bytes, std::numeric_limits<uint64_t>::max() - total);  // saturating
    CheckMemory(total, fmt::format("{}: the inputs and constants up to '{}' ({}) as float32", name,
                                   value, fmt::join(dims, ",")));
  };
  std::set<std::string> initializers;  // older exporters list them as inputs too
  for (const onnx::TensorProto& initializer : graph.initializer()) {
    initializers.insert(initializer.name());
  }
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (initializers.count(input.name())) continue;
    std::vector<int64_t> dims;
    for (const auto& dim : input.type().tensor_type().shape().dim()) {
      dims.push_back(dim.dim_value());
    }
    add(input.name(), dims);
  }
  const auto add_tensor = [&](const onnx::TensorProto& tensor) {
    add(tensor.name(), {tensor.dims().begin(), tensor.dims().end()});
  };
  for (const onnx::TensorProto& initializer : graph.initializer()) add_tensor(initializer);
  for (const onnx::NodeProto& node : graph.node()) {
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.has_t()) add_tensor(attribute.t());
    }
  }
}

}  // namespace

onnx::ModelProto ReadOnnxModel(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ParseError(fmt::format("{}: cannot open the ONNX file", path));
  // The whole file is read into memory, so its size is checked first.
  std::error_code error;
  const uint64_t size = std::filesystem::file_size(path, error);
  if (!error) CheckMemory(size, fmt::format("{}: reading the whole file", path));
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return ParseOnnxModel(bytes, path);
}

onnx::ModelProto ParseOnnxModel(std::string_view bytes, const std::string& name) {
  onnx::ModelProto model;
  // Protobuf takes an int size; a larger file is no ModelProto it could read anyway.
  const bool fits = bytes.size() <= static_cast<size_t>(std::numeric_limits<int>::max());
  if (!fits || !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())) ||
      !model.has_graph()) {
    throw ParseError(fmt::format("{}: not an ONNX model (protobuf ModelProto)", name));
  }
  CheckDeclaredMemory(model.graph(), name);
  return model;
}

std::vector<std::string> OnnxGraphInputs(const onnx::ModelProto& model) {
  std::set<std::string> initializers;
  for (const onnx::TensorProto& init : model.graph().initializer())
    initializers.insert(init.name());
  std::vector<std::string> names;
  for (const onnx::ValueInfoProto& input : model.graph().input()) {
    if (!initializers.count(input.name())) names.push_back(input.name());
  }
  return names;
}

namespace {

// The inputs whose values decide the shape of a node's output (ONNX's shape
// inference reads them as constants): an engine that fixes shapes when it
// builds the graph needs them at load time. (op type, first opset with the
// input form) -> input positions. The inputs converters need as constants
// for other reasons (weights, Clip's bounds) are found when the converter
// asks for them (onnx_import::NeedsConstantError).
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

// `array` as an initializer for graph input `info`, in the element type the
// model declares for it, checked against the declared shape.
onnx::TensorProto BoundTensor(const onnx::ValueInfoProto& info, const NpyArray& array) {
  const std::string& name = info.name();
  const auto& type = info.type().tensor_type();
  if (type.has_shape()) {
    bool fits = type.shape().dim_size() == static_cast<int>(array.shape.size());
    for (int d = 0; fits && d < type.shape().dim_size(); ++d) {
      const auto& dim = type.shape().dim(d);
      fits = !dim.has_dim_value() || dim.dim_value() == array.shape[d];
    }
    if (!fits) {
      std::vector<std::string> dims;
      for (const auto& dim : type.shape().dim()) {
        dims.push_back(dim.has_dim_value() ? std::to_string(dim.dim_value()) : "?");
      }
      throw ConversionError(fmt::format(
          "graph input '{}' is bound at load time and declared ({}); its value has shape ({})",
          name, fmt::join(dims, ","), fmt::join(array.shape, ",")));
    }
  }
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

}  // namespace

pnnx::Graph ConvertOnnx(const onnx::ModelProto& model, const OnnxImportOptions& options,
                        std::vector<std::string>* bound_inputs) {
  if (bound_inputs) bound_inputs->clear();
  const std::vector<std::string> graph_inputs = OnnxGraphInputs(model);
  const std::set<std::string> runtime(graph_inputs.begin(), graph_inputs.end());
  int64_t opset = 1;
  for (const onnx::OperatorSetIdProto& set : model.opset_import()) {
    if (set.domain().empty() || set.domain() == "ai.onnx") opset = set.version();
  }
  std::set<std::string> bound;
  onnx::ModelProto specialised = model;
  const auto bind = [&](const std::string& name) {
    const auto value = options.input_values.find(name);
    if (!runtime.count(name) || bound.count(name) || value == options.input_values.end()) {
      return false;
    }
    BindInput(specialised, name, value->second);
    bound.insert(name);
    return true;
  };
  // Inputs that fix shapes first, so that ONNX's shape inference sees them.
  std::vector<std::string> missing;  // such inputs without a value: named if the import fails
  for (const onnx::NodeProto& node : model.graph().node()) {
    if (!node.domain().empty() && node.domain() != "ai.onnx") continue;
    for (int k : OnnxShapeInputs(node.op_type(), opset)) {
      if (k >= node.input_size() || node.input(k).empty()) continue;
      const std::string& name = node.input(k);
      if (!bind(name) && runtime.count(name) && !bound.count(name)) {
        missing.push_back(
            fmt::format("'{}' (input {} of {} node '{}')", name, k, node.op_type(), node.name()));
      }
    }
  }
  // Then each input a converter asks for as a constant, one at a time.
  pnnx::Graph graph;
  while (true) {
    try {
      graph = onnx_import::Context(specialised, options).Run();
      break;
    } catch (const onnx_import::NeedsConstantError& e) {
      if (!bind(e.value())) throw;
    } catch (const UnsupportedOperatorError&) {
      throw;
    } catch (const ConversionError& e) {
      if (missing.empty()) throw;
      throw ConversionError(fmt::format(
          "{} (graph input(s) {} decide output shapes, which the engine fixes at load time: give "
          "their values (kuiper run: their .npy) to bind them)",
          e.what(), fmt::join(missing, ", ")));
    }
  }
  if (bound_inputs) {
    for (const std::string& name : graph_inputs) {
      if (bound.count(name)) bound_inputs->push_back(name);
    }
  }
  return graph;
}

namespace {

// ConvertOnnx on a file, its errors prefixed with the file's name (the
// reader's own errors name it already).
pnnx::Graph ConvertOnnxFile(const std::string& onnx_path, const OnnxImportOptions& options = {},
                            std::vector<std::string>* bound_inputs = nullptr) {
  const onnx::ModelProto model = ReadOnnxModel(onnx_path);
  try {
    return ConvertOnnx(model, options, bound_inputs);
  } catch (const UnsupportedOperatorError& e) {
    throw UnsupportedOperatorError(fmt::format("{}: {}", onnx_path, e.what()));
  } catch (const ConversionError& e) {
    throw ConversionError(fmt::format("{}: {}", onnx_path, e.what()));
  } catch (const ResourceError& e) {
    throw ResourceError(fmt::format("{}: {}", onnx_path, e.what()));
  }
}

}  // namespace

std::unique_ptr<RuntimeGraph> LoadOnnx(const std::string& onnx_path,
                                       const OnnxImportOptions& options,
                                       std::vector<std::string>* bound_inputs) {
  return std::make_unique<RuntimeGraph>(ConvertOnnxFile(onnx_path, options, bound_inputs),
                                        onnx_path);
}

void ConvertOnnxToPnnx(const std::string& onnx_path, const std::string& param_path,
                       const std::string& bin_path, const OnnxImportOptions& options) {
  std::string bin = bin_path;
  if (bin.empty()) {
    const std::string suffix = ".param";
    const bool has_suffix =
        param_path.size() > suffix.size() &&
        param_path.compare(param_path.size() - suffix.size(), suffix.size(), suffix) == 0;
    bin = has_suffix ? param_path.substr(0, param_path.size() - suffix.size()) + ".bin"
                     : param_path + ".bin";
  }
  const pnnx::Graph graph = ConvertOnnxFile(onnx_path, options);
  pnnx::Save(graph, param_path, bin);
}

std::vector<float> OnnxTensorFloats(const onnx::TensorProto& tensor) {
  if (tensor.data_type() != onnx::TensorProto::FLOAT) {
    throw ConversionError(fmt::format("tensor '{}' is of ONNX type {}, expected float32",
                                      tensor.name(), tensor.data_type()));
  }
  return onnx_import::TensorValues<float>(tensor);
}

namespace {

// The values of an integer or bool type of at most 32 bits.
std::vector<int32_t> SmallIntValues(const onnx::TensorProto& tensor) {
  // ParseData reads these types from int32_data, or raw_data of their own width.
  std::vector<int32_t> values;
  if (tensor.has_raw_data()) {
    const std::string& raw = tensor.raw_data();
    const int type = tensor.data_type();
    const size_t width = type == onnx::TensorProto::INT32 ? 4
                         : (type == onnx::TensorProto::INT16 || type == onnx::TensorProto::UINT16)
                             ? 2
                             : 1;
    for (size_t i = 0; i + width <= raw.size(); i += width) {
      int64_t v = 0;
      if (type == onnx::TensorProto::INT32) {
        int32_t x;
        std::memcpy(&x, raw.data() + i, 4);
        v = x;
      } else if (type == onnx::TensorProto::INT16) {
        int16_t x;
        std::memcpy(&x, raw.data() + i, 2);
        v = x;
      } else if (type == onnx::TensorProto::UINT16) {
        uint16_t x;
        std::memcpy(&x, raw.data() + i, 2);
        v = x;
      } else if (type == onnx::TensorProto::INT8) {
        v = static_cast<int8_t>(raw[i]);
      } else {
        v = static_cast<uint8_t>(raw[i]);
      }
      values.push_back(static_cast<int32_t>(v));
    }
  } else {
    values.assign(tensor.int32_data().begin(), tensor.int32_data().end());
  }
  return values;
}

// The values of UINT32 or UINT64, each within int64.
std::vector<int64_t> UnsignedValues(const onnx::TensorProto& tensor) {
  std::vector<int64_t> ints;
  std::vector<uint64_t> values;
  if (tensor.has_raw_data()) {
    const std::string& raw = tensor.raw_data();
    const size_t width = tensor.data_type() == onnx::TensorProto::UINT32 ? 4 : 8;
    for (size_t i = 0; i + width <= raw.size(); i += width) {
      uint64_t v = 0;
      std::memcpy(&v, raw.data() + i, width);  // little-endian, as ONNX stores it
      values.push_back(v);
    }
  } else {
    values.assign(tensor.uint64_data().begin(), tensor.uint64_data().end());
  }
  for (uint64_t v : values) {
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      throw ConversionError(
          fmt::format("tensor '{}': uint64 value {} does not fit in int64", tensor.name(), v));
    }
    ints.push_back(static_cast<int64_t>(v));
  }
  return ints;
}

}  // namespace

NpyArray OnnxTensorToArray(const onnx::TensorProto& tensor) {
  NpyArray array;
  array.shape.assign(tensor.dims().begin(), tensor.dims().end());
  switch (tensor.data_type()) {
    case onnx::TensorProto::FLOAT:
      array.data = onnx_import::TensorValues<float>(tensor);
      return array;
    case onnx::TensorProto::DOUBLE: {
      const std::vector<double> values = onnx_import::TensorValues<double>(tensor);
      array.data.assign(values.begin(), values.end());
      return array;
    }
    case onnx::TensorProto::INT64:
      array.ints = onnx_import::TensorValues<int64_t>(tensor);
      break;
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::BOOL: {
      const std::vector<int32_t> values = SmallIntValues(tensor);
      array.ints.assign(values.begin(), values.end());
      break;
    }
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
      array.ints = UnsignedValues(tensor);
      break;
    default:
      throw ConversionError(
          fmt::format("tensor '{}' is of ONNX type {}, which is not a number "
                      "type the engine reads",
                      tensor.name(), tensor.data_type()));
  }
  array.integer = true;
  uint64_t count = 1;
  for (int64_t d : array.shape) count *= static_cast<uint64_t>(d);
  if (array.ints.size() != count) {
    throw ConversionError(fmt::format("tensor '{}' holds {} values, its dims {}", tensor.name(),
                                      array.ints.size(), count));
  }
  array.data.assign(array.ints.begin(), array.ints.end());
  return array;
}

std::vector<sftensor> ValuesToBatch(const std::vector<float>& values,
                                    const std::vector<int>& shape) {
  const std::vector<uint32_t> item = BatchItemShape(shape);
  const size_t item_size =
      std::accumulate(item.begin(), item.end(), size_t{1}, std::multiplies<>());
  if (values.size() != item_size * static_cast<size_t>(shape[0])) {
    throw ShapeError(fmt::format("{} values do not fill a batch of {} items of {}", values.size(),
                                 shape[0], item_size));
  }
  std::vector<sftensor> batch;
  for (int n = 0; n < shape[0]; ++n) {
    sftensor tensor = TensorCreate(item);
    tensor->Fill(
        std::vector<float>(values.begin() + n * item_size, values.begin() + (n + 1) * item_size),
        /*row_major=*/true);
    batch.push_back(std::move(tensor));
  }
  return batch;
}

std::vector<float> BatchToValues(const std::vector<sftensor>& batch) {
  std::vector<float> values;
  for (const sftensor& tensor : batch) {
    const std::vector<float> item = tensor->values(/*row_major=*/true);
    values.insert(values.end(), item.begin(), item.end());
  }
  return values;
}

}  // namespace kuiper

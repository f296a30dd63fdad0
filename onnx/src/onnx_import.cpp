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
#include "load_time_inputs.hpp"
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

pnnx::Graph ConvertOnnx(const onnx::ModelProto& model, const OnnxImportOptions& options,
                        std::vector<std::string>* bound_inputs) {
  if (bound_inputs) bound_inputs->clear();
  // Every input the engine needs at load time is bound first, so that one
  // conversion sees them all (ONNX's shape inference and folding included).
  const onnx_import::LoadTimeBinding binding = onnx_import::BindLoadTimeInputs(model, options);
  pnnx::Graph graph;
  try {
    graph = onnx_import::Context(binding.model, options).Run();
  } catch (const UnsupportedOperatorError&) {
    throw;
  } catch (const ConversionError& e) {
    // A shape input without a value leaves shapes unknown, which any node
    // after it may be the first to find: the message names the input too.
    if (binding.missing.empty()) throw;
    throw ConversionError(fmt::format(
        "{} (graph input(s) {} decide output shapes, which the engine fixes at load time: give "
        "their values (kuiper run: their .npy) to bind them)",
        e.what(), fmt::join(binding.missing, ", ")));
  }
  if (bound_inputs) *bound_inputs = binding.bound;
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

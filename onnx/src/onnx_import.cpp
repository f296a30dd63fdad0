// The importer's public entry points: reading a model, converting it, and
// moving tensors between ONNX's row-major data and the engine's batches.
#include "kuiper/onnx_import.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <numeric>
#include <set>

#include "converter.hpp"
#include "kuiper/memory_limit.hpp"

namespace kuiper {

std::vector<std::string> SupportedOnnxOperators() {
  std::vector<std::string> types;
  for (const auto& [type, converter] : onnx_import::Converter::Table()) types.push_back(type);
  return types;  // std::map keeps them sorted
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

pnnx::Graph ConvertOnnx(const onnx::ModelProto& model, const OnnxImportOptions& options) {
  return onnx_import::Converter(model, options).Run();
}

namespace {

// ConvertOnnx on a file, its errors prefixed with the file's name (the
// reader's own errors name it already).
pnnx::Graph ConvertOnnxFile(const std::string& onnx_path, const OnnxImportOptions& options = {}) {
  const onnx::ModelProto model = ReadOnnxModel(onnx_path);
  try {
    return ConvertOnnx(model, options);
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
                                       const OnnxImportOptions& options) {
  return std::make_unique<RuntimeGraph>(ConvertOnnxFile(onnx_path, options), onnx_path);
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

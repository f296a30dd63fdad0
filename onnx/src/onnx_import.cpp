// The importer's public entry points: reading a model, converting it, and
// moving tensors between ONNX's row-major data and the engine's batches.
#include "kuiper/onnx_import.hpp"

#include <fmt/format.h>
#include <onnx/defs/tensor_proto_util.h>

#include <fstream>
#include <numeric>

#include "converter.hpp"

namespace kuiper {

std::vector<std::string> SupportedOnnxOperators() {
  std::vector<std::string> types;
  for (const auto& [type, converter] : onnx_import::Converter::Table()) types.push_back(type);
  return types;  // std::map keeps them sorted
}

onnx::ModelProto ReadOnnxModel(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ParseError(fmt::format("{}: cannot open the ONNX file", path));
  onnx::ModelProto model;
  if (!model.ParseFromIstream(&in) || !model.has_graph()) {
    throw ParseError(fmt::format("{}: not an ONNX model (protobuf ModelProto)", path));
  }
  return model;
}

pnnx::Graph ConvertOnnx(const onnx::ModelProto& model) {
  return onnx_import::Converter(model).Run();
}

std::unique_ptr<RuntimeGraph> LoadOnnx(const std::string& onnx_path) {
  pnnx::Graph graph;
  try {
    graph = ConvertOnnx(ReadOnnxModel(onnx_path));
  } catch (const UnsupportedOperatorError& e) {
    throw UnsupportedOperatorError(fmt::format("{}: {}", onnx_path, e.what()));
  } catch (const ConversionError& e) {
    throw ConversionError(fmt::format("{}: {}", onnx_path, e.what()));
  }
  return std::make_unique<RuntimeGraph>(std::move(graph), onnx_path);
}

void ConvertOnnxToPnnx(const std::string& onnx_path, const std::string& param_path,
                       const std::string& bin_path) {
  std::string bin = bin_path;
  if (bin.empty()) {
    const std::string suffix = ".param";
    const bool has_suffix =
        param_path.size() > suffix.size() &&
        param_path.compare(param_path.size() - suffix.size(), suffix.size(), suffix) == 0;
    bin = has_suffix ? param_path.substr(0, param_path.size() - suffix.size()) + ".bin"
                     : param_path + ".bin";
  }
  pnnx::Graph graph;
  try {
    graph = ConvertOnnx(ReadOnnxModel(onnx_path));
  } catch (const ConversionError& e) {
    throw ConversionError(fmt::format("{}: {}", onnx_path, e.what()));
  }
  pnnx::Save(graph, param_path, bin);
}

std::vector<float> OnnxTensorFloats(const onnx::TensorProto& tensor) {
  if (tensor.data_type() != onnx::TensorProto::FLOAT) {
    throw ConversionError(fmt::format("tensor '{}' is of ONNX type {}, expected float32",
                                      tensor.name(), tensor.data_type()));
  }
  if (tensor.has_data_location() && tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    throw ConversionError(
        fmt::format("tensor '{}' keeps its data in an external file, which is "
                    "not supported",
                    tensor.name()));
  }
  return onnx::ParseData<float>(&tensor);
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

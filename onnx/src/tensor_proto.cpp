// The small helpers every part of the importer uses: PNNX parameter and
// attribute builders, ONNX attribute readers with ONNX's defaults, and the
// decoding of TensorProto values with the checks ONNX's ParseData leaves out.
#include <fmt/format.h>
#include <onnx/defs/tensor_proto_util.h>

#include <cstring>

#include "context.hpp"
#include "kuiper/memory_limit.hpp"

namespace kuiper::onnx_import {

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

// The core's form (kuiper/error.hpp), under the name the lowerings call.
std::string ShapeText(const Shape& shape) { return kuiper::ShapeText(shape); }

int64_t Product(const Shape& shape, size_t begin, size_t end) {
  int64_t product = 1;
  for (size_t d = begin; d < end; ++d) product *= shape[d];
  return product;
}

}  // namespace kuiper::onnx_import

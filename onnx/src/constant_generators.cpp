// Operators that make a tensor from numbers alone, folded at load time: Range
// (start, limit, delta) and ConstantOfShape (a shape, a fill value). Their
// output's shape depends on their inputs' values, which the engine fixes when
// it builds the graph, so such inputs are constants (initializers, or graph
// inputs bound from the values given, OnnxImportOptions) and the node's output
// is a constant too. The integer ConstantOfShape of shape arithmetic is folded
// by FoldShapeArithmetic (constant_folding.cpp); this file takes the rest.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "context.hpp"
#include "kuiper/memory_limit.hpp"

namespace kuiper::onnx_import {
namespace {

// Bytes a folded element costs while it is built (its value and its copy).
constexpr uint64_t kGeneratorBytesPerElement = 2 * sizeof(int64_t);

bool GeneratorIsFloat(int type) {
  return type == onnx::TensorProto::FLOAT || type == onnx::TensorProto::DOUBLE;
}

// The one number of a scalar (or one-element) constant, as a double, and
// whether it is an integer (then `exact` holds it without rounding).
struct GeneratorNumber {
  double value = 0;
  int64_t exact = 0;
  bool integer = false;
};

GeneratorNumber GeneratorScalar(const onnx::TensorProto& tensor, const std::string& what,
                                const std::function<void(const std::string&)>& fail) {
  const NpyArray array = OnnxTensorToArray(tensor);  // ConversionError for other types
  const size_t count = array.integer ? array.ints.size() : array.data.size();
  if (count != 1) fail(fmt::format("{} must hold one number, holds {}", what, count));
  GeneratorNumber number;
  number.integer = array.integer;
  if (array.integer) {
    number.exact = array.ints[0];
    number.value = static_cast<double>(array.ints[0]);
  } else if (tensor.data_type() == onnx::TensorProto::DOUBLE) {
    number.value = TensorValues<double>(tensor)[0];  // not rounded to float first
  } else {
    number.value = array.data[0];
  }
  return number;
}

// Range(start, limit, delta) of constant scalars as `folded`; false when an
// input is not a constant (then CheckSupported names the node).
bool FoldRange(const Context& ctx, const onnx::NodeProto& node, onnx::TensorProto& folded) {
  const auto fail = [&](const std::string& why) { ctx.Fail(node, why); };
  if (node.input_size() != 3) {
    ctx.Fail(node, fmt::format("needs 3 inputs (start, limit, delta), has {}", node.input_size()));
  }
  const onnx::TensorProto* tensors[3];
  for (int k = 0; k < 3; ++k) {
    tensors[k] = ctx.Constant(node.input(k));
    if (!tensors[k]) return false;  // CheckSupported names the node
  }
  const int elem = tensors[0]->data_type();
  const GeneratorNumber start = GeneratorScalar(*tensors[0], "start", fail);
  const GeneratorNumber limit = GeneratorScalar(*tensors[1], "limit", fail);
  const GeneratorNumber delta = GeneratorScalar(*tensors[2], "delta", fail);
  if (delta.value == 0) ctx.Fail(node, "delta is 0");
  if (!std::isfinite(start.value) || !std::isfinite(limit.value) || !std::isfinite(delta.value)) {
    ctx.Fail(node, "start, limit and delta must be finite");
  }
  // ONNX: max(ceil((limit - start) / delta), 0) elements, start + i * delta.
  double elements = 0;
  if (start.integer && limit.integer && delta.integer) {
    // Exact: the difference of two int64 fits in __int128.
    const __int128 span = static_cast<__int128>(limit.exact) - start.exact;
    const __int128 step = delta.exact;
    __int128 n = span / step;
    if (n * step != span && (span > 0) == (step > 0)) ++n;  // ceil of a positive quotient
    elements = n > 0 ? static_cast<double>(n) : 0;
  } else {
    elements = std::max(0.0, std::ceil((limit.value - start.value) / delta.value));
  }
  if (elements == 0) {
    ctx.Fail(node, fmt::format("the range from {} to {} by {} is empty; engine tensors are never "
                               "empty",
                               start.value, limit.value, delta.value));
  }
  if (elements > static_cast<double>(std::numeric_limits<int32_t>::max())) {
    ctx.Fail(node,
             fmt::format("the range holds {} elements, more than the engine indexes", elements));
  }
  const int64_t count = static_cast<int64_t>(elements);
  CheckMemory(SaturatingMultiply(count, kGeneratorBytesPerElement),
              fmt::format("node '{}' (Range) of {} elements", ctx.NodeName(node), count));
  if (GeneratorIsFloat(elem)) {
    folded.set_data_type(onnx::TensorProto::FLOAT);
    // As NumPy's arange (ONNX's reference): start + i * delta.
    for (int64_t i = 0; i < count; ++i) {
      folded.add_float_data(static_cast<float>(start.value + static_cast<double>(i) * delta.value));
    }
  } else {
    folded.set_data_type(onnx::TensorProto::INT64);
    // Every value lies between start and limit, but i * delta alone may
    // not fit in int64 (start near INT64_MIN, limit near INT64_MAX).
    for (int64_t i = 0; i < count; ++i) {
      folded.add_int64_data(
          static_cast<int64_t>(start.exact + static_cast<__int128>(i) * delta.exact));
    }
  }
  folded.add_dims(count);
  return true;
}

// ConstantOfShape of a constant shape as `folded`.
bool FoldConstantOfShape(const Context& ctx, const onnx::NodeProto& node,
                         onnx::TensorProto& folded) {
  const auto fail = [&](const std::string& why) { ctx.Fail(node, why); };
  const onnx::TensorProto* shape_tensor = ctx.Constant(node.input(0));
  if (!shape_tensor) return false;
  const Shape shape = OnnxTensorInts(*shape_tensor);
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) ctx.Fail(node, fmt::format("shape {} has a negative dim", ShapeText(shape)));
    if (d == 0) {
      ctx.Fail(node, fmt::format("shape {} holds no values; engine tensors are never empty",
                                 ShapeText(shape)));
    }
    count = static_cast<int64_t>(SaturatingMultiply(count, d));
  }
  CheckMemory(
      SaturatingMultiply(count, kGeneratorBytesPerElement),
      fmt::format("node '{}' (ConstantOfShape) of shape {}", ctx.NodeName(node), ShapeText(shape)));
  const onnx::AttributeProto* value = FindAttribute(node, "value");
  GeneratorNumber fill;  // ONNX's default: a float 0
  int elem = onnx::TensorProto::FLOAT;
  if (value) {
    if (!value->has_t()) ctx.Fail(node, "attribute 'value' must be a tensor");
    elem = value->t().data_type();
    fill = GeneratorScalar(value->t(), "attribute 'value'", fail);
  }
  if (fill.integer) {
    folded.set_data_type(onnx::TensorProto::INT64);
    for (int64_t i = 0; i < count; ++i) folded.add_int64_data(fill.exact);
  } else {
    if (!GeneratorIsFloat(elem)) return false;
    folded.set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t i = 0; i < count; ++i) folded.add_float_data(static_cast<float>(fill.value));
  }
  for (int64_t d : shape) folded.add_dims(d);
  return true;
}

}  // namespace

bool Context::FoldGenerator(const onnx::NodeProto& node) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") return false;
  const std::string& type = node.op_type();
  if ((type != "Range" && type != "ConstantOfShape") || node.output_size() != 1) return false;
  onnx::TensorProto folded;
  folded.set_name(node.output(0));
  const bool done =
      type == "Range" ? FoldRange(*this, node, folded) : FoldConstantOfShape(*this, node, folded);
  if (!done) return false;
  onnx::TensorProto& kept = folded_.emplace_back(std::move(folded));
  constants_[node.output(0)] = &kept;
  shapes_[node.output(0)] = Shape(kept.dims().begin(), kept.dims().end());
  elem_types_[node.output(0)] = kept.data_type();
  absorbed_.insert(&node);
  return true;
}

}  // namespace kuiper::onnx_import

// Builds small ONNX models in C++ and runs converted graphs, for the tests.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "kuiper/graph.hpp"
#include "kuiper/onnx_import.hpp"

namespace kuiper::testing {

inline onnx::ValueInfoProto ValueInfo(const std::string& name, const std::vector<int64_t>& shape) {
  onnx::ValueInfoProto info;
  info.set_name(name);
  auto* tensor = info.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : shape) tensor->mutable_shape()->add_dim()->set_dim_value(d);
  return info;
}

inline onnx::TensorProto FloatTensor(const std::string& name, const std::vector<int64_t>& shape,
                                     const std::vector<float>& values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : shape) t.add_dims(d);
  for (float v : values) t.add_float_data(v);
  return t;
}

// An input value for OnnxImportOptions::input_values: float32 `values` of `shape`.
inline NpyArray FloatArray(const std::vector<int64_t>& shape, const std::vector<float>& values) {
  NpyArray a;
  a.shape = shape;
  a.data = values;
  return a;
}

// Appends a node of `type` reading `inputs` and writing `output` to `graph`,
// named after its output (errors name the node).
inline onnx::NodeProto* AddNode(onnx::GraphProto* graph, const std::string& type,
                                const std::vector<std::string>& inputs, const std::string& output) {
  onnx::NodeProto* node = graph->add_node();
  node->set_op_type(type);
  node->set_name(output);
  for (const std::string& input : inputs) node->add_input(input);
  node->add_output(output);
  return node;
}

// A 1-D INT64 constant (shapes, axes, indices, Slice's starts/ends/steps).
inline onnx::TensorProto Ints(const std::string& name, const std::vector<int64_t>& values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::INT64);
  t.add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t.add_int64_data(v);
  return t;
}

// A model of one node; `inputs` are graph inputs, `constants` initializers.
struct OneNodeModel {
  onnx::ModelProto model;
  onnx::NodeProto* node = nullptr;

  OneNodeModel(const std::string& op_type, int opset) {
    model.set_ir_version(7);
    auto* set = model.add_opset_import();
    set->set_domain("");
    set->set_version(opset);
    node = model.mutable_graph()->add_node();
    node->set_op_type(op_type);
    node->set_name("the_node");
  }
  OneNodeModel& Input(const std::string& name, const std::vector<int64_t>& shape) {
    *model.mutable_graph()->add_input() = ValueInfo(name, shape);
    node->add_input(name);
    return *this;
  }
  OneNodeModel& Constant(const onnx::TensorProto& tensor) {
    *model.mutable_graph()->add_initializer() = tensor;
    node->add_input(tensor.name());
    return *this;
  }
  OneNodeModel& Output(const std::string& name, const std::vector<int64_t>& shape) {
    *model.mutable_graph()->add_output() = ValueInfo(name, shape);
    node->add_output(name);
    return *this;
  }
};

inline std::vector<float> Iota(size_t n, float start = 0.f, float step = 0.25f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i)
    v[i] = start + step * static_cast<float>(i % 23) - 0.01f * static_cast<float>(i);
  return v;
}

// Expects the conversion of a OneNodeModel to stop naming its node and saying `text`.
// 0, 1, ..., n-1.
inline std::vector<float> Range(int n) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return v;
}

// Sets attribute `name` of `node` to one integer, or to a list of them.
inline void SetInt(onnx::NodeProto* node, const std::string& name, int64_t value) {
  auto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INT);
  attr->set_i(value);
}

inline void SetInts(onnx::NodeProto* node, const std::string& name,
                    const std::vector<int64_t>& values) {
  auto* attr = node->add_attribute();
  attr->set_name(name);
  attr->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) attr->add_ints(v);
}

// ConvertOnnx(model) refuses the model with a message containing `text`
// (and `also`, when given).
inline void ExpectConversionErrorContaining(const onnx::ModelProto& model, const std::string& text,
                                            const std::string& also = "") {
  try {
    ConvertOnnx(model);
    FAIL() << "no error; expected one containing \"" << text << "\"";
  } catch (const ConversionError& e) {
    EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(also), std::string::npos) << e.what();
  }
}

// The refusal names the node "the_node" and says `text`.
inline void ExpectErrorNamingNode(const onnx::ModelProto& model, const std::string& text) {
  ExpectConversionErrorContaining(model, "the_node", text);
}

inline std::vector<std::string> OperatorTypes(const pnnx::Graph& graph) {
  std::vector<std::string> types;
  for (const auto& op : graph.operators) types.push_back(op.type);
  return types;
}

// Runs a converted graph on row-major inputs, one per graph input; returns the
// first output's row-major values.
inline std::vector<float> RunGraph(const pnnx::Graph& graph,
                                   const std::vector<std::vector<float>>& inputs) {
  RuntimeGraph runtime(graph, "test");
  runtime.Build();
  std::vector<std::vector<sftensor>> batches;
  for (size_t i = 0; i < inputs.size(); ++i) {
    batches.push_back(
        ValuesToBatch(inputs[i], runtime.input_operators()[i]->output_operand->shapes));
  }
  return BatchToValues(runtime.Forward(batches).at(0));
}

// Row-major matmul with NumPy broadcasting of the batch dimensions.
inline std::vector<float> NaiveMatmul(const std::vector<float>& a, const std::vector<int64_t>& as,
                                      const std::vector<float>& b, const std::vector<int64_t>& bs,
                                      const std::vector<int64_t>& ys) {
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  const size_t rank = ys.size();
  const int64_t total = std::accumulate(ys.begin(), ys.end() - 2, int64_t{1}, std::multiplies<>());
  std::vector<float> y;
  for (int64_t flat = 0; flat < total; ++flat) {
    // Index of this batch entry in y, then in a and b (broadcast dims read 0).
    std::vector<int64_t> index(rank - 2);
    int64_t rest = flat;
    for (size_t d = rank - 2; d-- > 0;) {
      index[d] = rest % ys[d];
      rest /= ys[d];
    }
    const auto offset = [&](const std::vector<int64_t>& s) {
      int64_t off = 0;
      const size_t lead = rank - s.size();
      for (size_t d = 0; d + 2 < s.size(); ++d) {
        off = off * s[d] + (s[d] == 1 ? 0 : index[d + lead]);
      }
      return off * s[s.size() - 2] * s.back();
    };
    const int64_t oa = offset(as), ob = offset(bs);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t p = 0; p < k; ++p) sum += a[oa + i * k + p] * b[ob + p * n + j];
        y.push_back(static_cast<float>(sum));
      }
    }
  }
  return y;
}

// The largest |a[i] - b[i]|, infinite when the sizes differ, when either side
// holds a NaN or when an infinity meets anything but the same infinity. (A
// NaN never compares, so std::max(diff, NaN) would keep `diff` and pass it.)
inline float MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  constexpr float kInfinity = std::numeric_limits<float>::infinity();
  if (a.size() != b.size()) return kInfinity;
  float diff = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) return kInfinity;
    if (a[i] != b[i]) diff = std::max(diff, std::abs(a[i] - b[i]));  // equal infinities match
  }
  return diff;
}

inline int64_t Count(const std::vector<int64_t>& s) {
  return std::accumulate(s.begin(), s.end(), int64_t{1}, std::multiplies<>());
}

}  // namespace kuiper::testing

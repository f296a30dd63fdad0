// Helpers for the convolution, pooling, linear and batch-norm layer tests:
// building an operator as the graph would, and reading the PyTorch references
// written by kuiper/test/data/layers/make_conv_pool.py.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kuiper/layer.hpp"
#include "kuiper/npy.hpp"
#include "kuiper/runtime.hpp"

namespace kuiper::test {

inline std::string ConvPoolData(const std::string& case_name, const std::string& array) {
  return std::string(KUIPER_SOURCE_DIR) + "/kuiper/test/data/layers/conv_pool/" + case_name + "." +
         array + ".npy";
}

inline RuntimeAttribute FloatAttribute(const std::vector<int>& shape,
                                       const std::vector<float>& values) {
  RuntimeAttribute attr;
  attr.type = pnnx::DataType::kF32;
  attr.shape = shape;
  // assign, not memcpy: memcpy from the null data() of no values is undefined.
  const auto* bytes = reinterpret_cast<const char*>(values.data());
  attr.data.assign(bytes, bytes + values.size() * sizeof(float));
  return attr;
}

inline RuntimeAttribute NpyAttribute(const NpyArray& array) {
  return FloatAttribute(std::vector<int>(array.shape.begin(), array.shape.end()), array.data);
}

inline RuntimeOperator MakeOperator(const std::string& type,
                                    std::map<std::string, RuntimeParameter> params,
                                    std::map<std::string, RuntimeAttribute> attrs = {}) {
  RuntimeOperator op;
  op.type = type;
  op.name = "op_under_test";
  op.params = std::move(params);
  op.attribute = std::move(attrs);
  return op;
}

// Largest |a - b| over two batches; +infinity when their shapes differ.
inline float MaxAbsDiff(const std::vector<sftensor>& a, const std::vector<sftensor>& b) {
  if (a.size() != b.size()) return INFINITY;
  float diff = 0;
  for (size_t n = 0; n < a.size(); ++n) {
    if (!a[n] || !b[n] || a[n]->raw_shapes() != b[n]->raw_shapes()) return INFINITY;
    diff = std::max(diff, arma::abs(a[n]->data() - b[n]->data()).max());
  }
  return diff;
}

// Runs the layer created for `op` on the case's input; returns the outputs.
inline std::vector<sftensor> RunOnCase(const RuntimeOperator& op, const std::string& case_name,
                                       InferStatus* status) {
  std::unique_ptr<Layer> layer = LayerRegisterer::CreateLayer(op);
  const std::vector<sftensor> inputs = NpyToBatch(LoadNpy(ConvPoolData(case_name, "input")));
  std::vector<sftensor> outputs(inputs.size());
  *status = layer->Forward(inputs, outputs);
  return outputs;
}

inline std::vector<sftensor> Expected(const std::string& case_name) {
  return NpyToBatch(LoadNpy(ConvPoolData(case_name, "output")));
}

// A batch of one-operand inputs for the status tests.
inline std::vector<sftensor> Batch(size_t n, uint32_t c, uint32_t h, uint32_t w) {
  std::vector<sftensor> batch;
  for (size_t i = 0; i < n; ++i) {
    batch.push_back(TensorCreate(c, h, w));
    batch.back()->Rand();
  }
  return batch;
}

}  // namespace kuiper::test

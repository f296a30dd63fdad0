// The base of the layers that compute each batch item from its row-major
// values and logical shape (reductions, argmax, cumsum, triu, index_select,
// expand, repeat, pad, ...): the input checks, the batch loop and the storage
// conversion are written once here, and a layer only maps (shape, values) to
// (shape, values). These layers are rarely on a model's hot path; clarity
// wins over the fcube-native speed of softmax.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kuiper/layers/elementwise.hpp"

namespace kuiper {

// Row-major position of dimension `dim` of `shape`: lines along it are
// `outer` blocks of `length` x `inner` elements, element (o, k, i) at
// (o * length + k) * inner + i.
struct RowMajorAxis {
  uint64_t outer = 1, length = 1, inner = 1;
};

inline RowMajorAxis LocateRowMajorAxis(const std::vector<uint32_t>& shape, size_t dim) {
  RowMajorAxis axis;
  for (size_t d = 0; d < dim; ++d) axis.outer *= shape[d];
  axis.length = shape[dim];
  for (size_t d = dim + 1; d < shape.size(); ++d) axis.inner *= shape[d];
  return axis;
}

// A dimension counted with the batch as dimension 0 (negative from the end of
// an operand of `item_rank` + 1 dimensions, as in PyTorch), as an item
// dimension; -1 when it is the batch or out of range.
inline int ItemDim(int dim, size_t item_rank) {
  const int rank = static_cast<int>(item_rank) + 1;
  if (dim < 0) dim += rank;
  return dim >= 1 && dim < rank ? dim - 1 : -1;
}

class RowMajorItemLayer : public Layer {
 public:
  using Layer::Layer;

  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    const InferStatus status = CheckOneToOne(inputs, outputs);
    if (status != InferStatus::kInferSuccess) return status;
    for (size_t i = 0; i < inputs.size(); ++i) {
      std::vector<uint32_t> shape;
      std::vector<float> values;
      if (!Compute(inputs[i]->raw_shapes(), inputs[i]->values(/*row_major=*/true), shape, values)) {
        return InferStatus::kInferFailedShapeError;
      }
      // An item reduced to no dimension is one element: the engine's scalar.
      if (shape.empty()) shape = {1};
      EnsureOutput(outputs[i], shape);
      outputs[i]->Fill(values, /*row_major=*/true);
    }
    return InferStatus::kInferSuccess;
  }

 protected:
  // The output item (shape and row-major values) of the item `in` of `shape`;
  // false when the item does not fit the layer's parameters.
  virtual bool Compute(const std::vector<uint32_t>& shape, const std::vector<float>& in,
                       std::vector<uint32_t>& out_shape, std::vector<float>& out) const = 0;
};

// The int-or-int-array parameter `key` of `op` as a list; `fallback` when absent.
inline std::vector<int> IntListParam(const RuntimeOperator& op, const std::string& key,
                                     const std::vector<int>& fallback) {
  const auto it = op.params.find(key);
  if (it == op.params.end() || std::holds_alternative<std::monostate>(it->second)) return fallback;
  if (const int* value = std::get_if<int>(&it->second)) return {*value};
  return op.param<std::vector<int>>(key);
}

// The bool parameter `key` of `op`; `fallback` when absent (an int is read as a bool).
inline bool BoolParamOr(const RuntimeOperator& op, const std::string& key, bool fallback) {
  const auto it = op.params.find(key);
  if (it == op.params.end()) return fallback;
  if (const int* value = std::get_if<int>(&it->second)) return *value != 0;
  return op.param<bool>(key);
}

}  // namespace kuiper

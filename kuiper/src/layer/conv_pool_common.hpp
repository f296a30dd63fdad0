// Shared by the convolution, pooling, linear and batch-norm layers: reading
// (height, width) parameters and the input checks every one-operand layer makes.
#pragma once

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <vector>

#include "kuiper/error.hpp"
#include "kuiper/layer.hpp"
#include "kuiper/layers/elementwise.hpp"

namespace kuiper {

// A (height, width) parameter such as kernel_size=(3,3); PyTorch also allows
// a single int (kernel_size=3) for both. Throws LayerError naming the operator
// unless it holds 1 or 2 values, each at least `minimum`.
inline std::array<uint32_t, 2> ReadPair(const RuntimeOperator& op, const std::string& key,
                                        int minimum) {
  std::vector<int> values;
  if (op.has_param(key) && std::holds_alternative<int>(op.params.at(key))) {
    values = {op.param<int>(key)};
  } else {
    values = op.param<std::vector<int>>(key);
  }
  if (values.size() == 1) values.push_back(values[0]);
  if (values.size() != 2 || values[0] < minimum || values[1] < minimum) {
    throw LayerError(fmt::format("operator '{}' ({}): {}={} must be 1 or 2 values of at least {}",
                                 op.name, op.type, key, ShapeText(values), minimum));
  }
  return {static_cast<uint32_t>(values[0]), static_cast<uint32_t>(values[1])};
}

// Like ReadPair, but a missing or None parameter (F.max_pool2d's stride=None)
// gives `fallback`.
inline std::array<uint32_t, 2> ReadPairOr(const RuntimeOperator& op, const std::string& key,
                                          int minimum, std::array<uint32_t, 2> fallback) {
  if (!op.has_param(key) || std::holds_alternative<std::monostate>(op.params.at(key))) {
    return fallback;
  }
  return ReadPair(op, key, minimum);
}

// A bool parameter that may be missing.
inline bool ReadBoolOr(const RuntimeOperator& op, const std::string& key, bool fallback) {
  return op.has_param(key) ? op.param<bool>(key) : fallback;
}

// The checks of a layer with one input operand and one output operand
// (elementwise.hpp's CheckOneToOne, under the name these layers call).
inline InferStatus CheckOneOperand(const std::vector<sftensor>& inputs,
                                   const std::vector<sftensor>& outputs) {
  return CheckOneToOne(inputs, outputs);
}

}  // namespace kuiper

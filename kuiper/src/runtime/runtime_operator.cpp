#include <fmt/format.h>

#include <cstdint>
#include <limits>

#include "kuiper/error.hpp"
#include "kuiper/layer.hpp"
#include "kuiper/memory_limit.hpp"
#include "kuiper/runtime.hpp"

namespace kuiper {

std::string ParameterTypeName(const RuntimeParameter& parameter) {
  static const char* const kNames[] = {"None",   "bool",      "int",         "float",
                                       "string", "int array", "float array", "string array"};
  return kNames[parameter.index()];
}

// Defined here, where Layer is complete, so unique_ptr<Layer> can be destroyed.
RuntimeOperator::RuntimeOperator() = default;
RuntimeOperator::~RuntimeOperator() = default;
RuntimeOperator::RuntimeOperator(RuntimeOperator&&) noexcept = default;
RuntimeOperator& RuntimeOperator::operator=(RuntimeOperator&&) noexcept = default;

const RuntimeAttribute& RuntimeOperator::attr(const std::string& key) const {
  const auto it = attribute.find(key);
  if (it == attribute.end()) {
    throw LayerError(fmt::format("operator '{}' ({}): attribute '{}' is missing", name, type, key));
  }
  // Layers read as many elements as the shape declares, so the data must hold
  // them all: a graph loaded without its .pnnx.bin has shapes but no data
  // (found by fuzz/pnnx_param_fuzzer.cpp once it ran Build).
  const RuntimeAttribute& attr = it->second;
  uint64_t bytes = pnnx::DataTypeSize(attr.type);
  for (int dim : attr.shape) {
    bytes = dim < 0 ? std::numeric_limits<uint64_t>::max() : SaturatingMultiply(bytes, dim);
  }
  if (attr.data.size() != bytes) {
    throw LayerError(
        fmt::format("operator '{}' ({}): attribute '{}' of shape {} {} holds {} "
                    "bytes, expected {} (is the .pnnx.bin loaded?)",
                    name, type, key, ShapeText(attr.shape), pnnx::DataTypeName(attr.type),
                    attr.data.size(), bytes));
  }
  return attr;
}

}  // namespace kuiper

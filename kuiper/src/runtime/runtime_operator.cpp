#include "kuiper/layer.hpp"
#include "kuiper/runtime.hpp"

namespace kuiper {

std::string ParameterTypeName(const RuntimeParameter& parameter) {
  static const char* const kNames[] = {"None",       "bool",        "int",
                                       "float",      "string",      "int array",
                                       "float array", "string array"};
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
    throw LayerError(fmt::format("operator '{}' ({}): attribute '{}' is missing", name, type,
                                 key));
  }
  return it->second;
}

}  // namespace kuiper

// Lab course3_graph: see course3_graph/README.md.
#include <fmt/format.h>

#include "kuiper/error.hpp"
#include "kuiper/graph.hpp"

namespace kuiper {

void RuntimeGraph::InitGraphParams(const std::map<std::string, pnnx::Parameter>& params,
                                   RuntimeOperator& op) {
  for (const auto& [name, parameter] : params) {
    // TODO(course3): store `parameter` in op.params[name] as the RuntimeParameter
    // holding the same value, of the same kind. pnnx::Parameter is a tagged
    // struct: `type` says which one of its members means something;
    // RuntimeParameter is a std::variant, which keeps that tag for you. Work out
    // which member goes with which ParameterType from the declarations in
    // kuiper/include/kuiper/pnnx.hpp and runtime.hpp (README §3.2 shows how, on
    // a smaller pair). A `type` outside the enum means a corrupt graph: throw a
    // ParseError that names the operator, the parameter and the number.
    // ---- your code begins ----
    switch (parameter.type) {
      case pnnx::ParameterType::kNull:
        op.params[name] = std::monostate{};
        break;
      case pnnx::ParameterType::kBool:
        op.params[name] = parameter.b;
        break;
      case pnnx::ParameterType::kInt:
        op.params[name] = parameter.i;
        break;
      case pnnx::ParameterType::kFloat:
        op.params[name] = parameter.f;
        break;
      case pnnx::ParameterType::kString:
        op.params[name] = parameter.s;
        break;
      case pnnx::ParameterType::kIntArray:
        op.params[name] = parameter.ai;
        break;
      case pnnx::ParameterType::kFloatArray:
        op.params[name] = parameter.af;
        break;
      case pnnx::ParameterType::kStringArray:
        op.params[name] = parameter.as;
        break;
      default:
        throw ParseError(fmt::format("operator '{}': parameter '{}' has unknown type {}", op.name,
                                     name, static_cast<int>(parameter.type)));
    }
    // ---- your code ends ----
  }
}

}  // namespace kuiper

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
    KUIPER_TODO("course3", "RuntimeGraph::InitGraphParams");
    // ---- your code ends ----
  }
}

}  // namespace kuiper

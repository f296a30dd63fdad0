// Lab course3_graph: see course3_graph/README.md.
#include <fmt/format.h>

#include "kuiper/error.hpp"
#include "kuiper/graph.hpp"

namespace kuiper {

void RuntimeGraph::InitGraphParams(const std::map<std::string, pnnx::Parameter>& params,
                                   RuntimeOperator& op) {
  for (const auto& [name, parameter] : params) {
    // TODO(course3): store `parameter` in op.params[name] as the RuntimeParameter
    // alternative that matches parameter.type:
    //   kNull -> std::monostate{}     kBool -> parameter.b    kInt -> parameter.i
    //   kFloat -> parameter.f         kString -> parameter.s  kIntArray -> parameter.ai
    //   kFloatArray -> parameter.af   kStringArray -> parameter.as
    // Any other type value: throw ParseError naming op.name and the parameter.
    // ---- your code begins ----
    KUIPER_TODO("course3", "RuntimeGraph::InitGraphParams");
    // ---- your code ends ----
  }
}

}  // namespace kuiper

// The PNNX side of the table of unary functions (kuiper/unary_ops.def): every
// PNNX type of an expression row runs as the expression layer with the row's
// formula, so a PNNX operator such as torch.abs and ONNX's Abs compute the
// same thing the same way. Layer rows are registered by their layers' files.
#include "kuiper/unary_ops.hpp"

#include <sstream>

#include "kuiper/layers/expression.hpp"

namespace kuiper {
namespace {

struct UnaryRow {
  const char* pnnx_types;
  const char* form;
};

constexpr UnaryRow kUnaryRows[] = {
#define KUIPER_UNARY(onnx_type, pnnx_types, form) {pnnx_types, form},
#include "kuiper/unary_ops.def"
#undef KUIPER_UNARY
};

bool RegisterUnaryExpressions() {
  for (const UnaryRow& row : kUnaryRows) {
    const std::string form = row.form;
    if (IsUnaryLayerForm(form)) continue;  // registered by the layer's own file
    std::istringstream types(row.pnnx_types);
    for (std::string type; types >> type;) {
      LayerRegisterer::RegisterCreator(type, [form](const RuntimeOperator&) {
        return std::make_unique<ExpressionLayer>(form, 1);
      });
    }
  }
  return true;
}

const bool kUnaryExpressionsRegistered = RegisterUnaryExpressions();

}  // namespace
}  // namespace kuiper

// The one rule both readers of the table of unary functions
// (kuiper/unary_ops.def) apply to a row's form: the PNNX side
// (kuiper/src/layer/unary_ops.cpp) and the ONNX importer
// (onnx/src/lower_elementwise.cpp) must never disagree on which rows are
// layers, or a function would run as a layer on one path and as an
// expression on the other.
#pragma once

#include <string_view>

namespace kuiper {

// Whether a row's form names an engine layer ("nn.ReLU") rather than an
// expression over the input @0 ("abs(@0)"): an expression always reads @0.
inline bool IsUnaryLayerForm(std::string_view form) {
  return form.find("@0") == std::string_view::npos;
}

}  // namespace kuiper

// The graph inputs the engine needs at load time (docs/onnx.md §7), found on
// the ONNX graph before it is converted and bound to the values the user gave
// (OnnxImportOptions::input_values), so that the conversion runs once, with
// every binding decided. Not public API.
#pragma once

#include <string>
#include <vector>

#include "kuiper/onnx_import.hpp"

namespace kuiper::onnx_import {

struct LoadTimeBinding {
  onnx::ModelProto model;          // the model with each bound input an initializer
  std::vector<std::string> bound;  // the bound inputs, in the order of the graph inputs
  // Inputs that decide an output's shape and have no value, each with the node
  // reading it: named when the conversion fails, whatever the error.
  std::vector<std::string> missing;
};

// Binds, from `options`, each graph input that has a value and
//   1. decides an output's shape (ONNX's shape inference reads it);
//   2. is read as a constant by a lowering (its declared constant inputs,
//      lowering_registry.hpp), or is one of the graph inputs such a constant
//      is computed from (HannWindow's Cast(size) -> Sub -> Range's limit);
//   3. is read by no node at run time: only its shape is used (Shape), or
//      nothing reaching a graph output reads it.
// Throws ConversionError when a value does not fit its input's declaration.
LoadTimeBinding BindLoadTimeInputs(const onnx::ModelProto& model, const OnnxImportOptions& options);

// The graph inputs of `model` (not initializers) that `value` is computed
// from, the nearest first; empty when it is a constant, or computed from
// constants and shapes alone. `shapes_fixed`: Shape folds at load time, so
// the walk does not go past it (false with a symbolic batch). The same walk
// as BindLoadTimeInputs's, so that an error names what binding would use.
std::vector<std::string> GraphInputsBehind(const onnx::ModelProto& model, const std::string& value,
                                           bool shapes_fixed);

}  // namespace kuiper::onnx_import

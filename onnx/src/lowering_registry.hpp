// The lowerings of the ONNX importer by op type: each lower_*.cpp defines
// free functions over the conversion context and registers them next to
// their definitions, the way the engine's layers register themselves
// (LayerRegistererWrapper). Not public API.
//
// The registrations are static objects of the kuiper_onnx library. It is a
// shared library, so every object file is linked whole and no registration
// can be dropped; were it made static, an object file that nothing else
// references would be left out of the link and its operators with it (the
// test LoweringRegistry.HoldsEveryOperatorOfTheImporter then fails).
#pragma once

#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "context.hpp"

namespace kuiper::onnx_import {

// Lowers one ONNX node into engine operators of the context's graph.
using Lowering = void (*)(Context& c, const onnx::NodeProto& node);

// Input positions of a node that its lowering reads as constants.
using ConstantInputs = std::vector<int>;

struct LoweringEntry {
  Lowering lower = nullptr;
  // What the lowering accepts, one line for `kuiper ops` and docs/operators.md.
  std::string constraints;
  // The inputs the lowering reads with RequireConstant or ConstantInts
  // (weights, bounds, axes). Declared, not discovered: the importer binds the
  // graph inputs behind them before it converts (load_time_inputs.cpp), so the
  // conversion runs once. A position the node does not have is ignored, so
  // one list serves every opset of the op.
  ConstantInputs constant_inputs;
};

// Every registered lowering by ONNX op type (default domain), sorted by type.
const std::map<std::string, LoweringEntry>& Lowerings();

// The constant inputs declared for `node`'s op type; none for an op type
// without a lowering or of another domain.
const ConstantInputs& ConstantInputsOf(const onnx::NodeProto& node);

// Registers `lower` for each of `types`; a type registered twice is a
// programming error, reported when the library loads.
class LoweringRegisterer {
 public:
  LoweringRegisterer(std::initializer_list<const char*> types, Lowering lower,
                     const std::string& constraints, ConstantInputs constant_inputs = {});
};

}  // namespace kuiper::onnx_import

#define KUIPER_ONNX_CONCAT_INNER(a, b) a##b
#define KUIPER_ONNX_CONCAT(a, b) KUIPER_ONNX_CONCAT_INNER(a, b)
// KUIPER_ONNX_LOWERING(LowerConv, "constraints", "Conv") registers LowerConv for
// op type Conv. __COUNTER__, not __LINE__: the library is a unity build, where
// two files' registrations may stand on the same line number of one unit.
#define KUIPER_ONNX_LOWERING(lower, constraints, ...)                        \
  static const ::kuiper::onnx_import::LoweringRegisterer KUIPER_ONNX_CONCAT( \
      kOnnxLowering, __COUNTER__)({__VA_ARGS__}, lower, constraints)
// KUIPER_ONNX_LOWERING_CONSTANTS(LowerConv, ConstantInputs({1, 2}), "constraints",
// "Conv") registers LowerConv and declares that it reads inputs 1 and 2 as
// constants. Every input a lowering passes to RequireConstant or ConstantInts
// must be declared: an undeclared one given as a graph input with a value
// stops the conversion saying so (Context::RequireConstant).
#define KUIPER_ONNX_LOWERING_CONSTANTS(lower, constant_inputs, constraints, ...) \
  static const ::kuiper::onnx_import::LoweringRegisterer KUIPER_ONNX_CONCAT(     \
      kOnnxLowering, __COUNTER__)({__VA_ARGS__}, lower, constraints, constant_inputs)

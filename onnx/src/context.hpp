// The conversion context of the ONNX importer: what every lowering
// (lower_*.cpp) and every pass before them (constant folding, the Detect head)
// shares. Not public API.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "kuiper/onnx_import.hpp"

namespace kuiper::onnx_import {

using Shape = std::vector<int64_t>;

// A node that batch mode (leading dimension = engine batch) cannot express,
// such as a transpose that moves dimension 0. The context then retries with
// the whole graph as one batch item, when every value fits in three dimensions.
class BatchAxisError : public ConversionError {
 public:
  using ConversionError::ConversionError;
};

// The ONNX integer element types (signed and unsigned, 8 to 64 bits).
bool ElemIsInteger(int elem_type);
// The ONNX element types the engine carries as float32: float itself, the
// integer and bool types, whose values are exact in float32 up to 2^24, and
// float64, rounded to float32 (the engine computes in float32: a float64
// model's results are float32-accurate, about 6e-8 relative per operation).
bool CarriedAsFloat(int elem_type);
// The values of a float, integer or bool constant as float32; an integer
// beyond +-2^24 stops the conversion naming the tensor.
std::vector<float> ConstantAsFloats(const onnx::TensorProto& tensor);

pnnx::Parameter IntParam(int value);
pnnx::Parameter BoolParam(bool value);
pnnx::Parameter FloatParam(float value);
pnnx::Parameter StringParam(const std::string& value);
pnnx::Parameter IntsParam(const std::vector<int>& values);
pnnx::Parameter FloatsParam(const std::vector<float>& values);
pnnx::Attribute FloatAttribute(const std::vector<int>& shape, const std::vector<float>& values);

// ONNX attributes of a node, with ONNX's defaults.
const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, const std::string& name);
int64_t AttributeInt(const onnx::NodeProto& node, const std::string& name, int64_t fallback);
float AttributeFloat(const onnx::NodeProto& node, const std::string& name, float fallback);
std::string AttributeString(const onnx::NodeProto& node, const std::string& name,
                            const std::string& fallback);
std::vector<int64_t> AttributeInts(const onnx::NodeProto& node, const std::string& name,
                                   const std::vector<int64_t>& fallback);

std::vector<int64_t> OnnxTensorInts(const onnx::TensorProto& tensor);
// ONNX's ParseData<T> (T = float, int64_t, int32_t) with the checks it leaves
// out: the values must fill the tensor's dims exactly (a short raw_data was
// read out of bounds by the converters; found by fuzz/onnx_fuzzer.cpp), and
// ParseData's own exceptions become ConversionError.
template <typename T>
std::vector<T> TensorValues(const onnx::TensorProto& tensor);
std::string ShapeText(const Shape& shape);
inline std::vector<int> ToInts(const std::vector<int64_t>& values) {
  return {values.begin(), values.end()};
}
// The product of dims [begin, end) of `shape`.
int64_t Product(const Shape& shape, size_t begin, size_t end);

// The state of one model's conversion and the helpers every lowering uses:
// the ONNX graph with its inferred shapes, elem types and constants, and the
// engine graph being built. Lowerings (lower_*.cpp) are free functions over
// it, found by op type in the registry (lowering_registry.hpp); the passes
// before them (constant folding, the Detect head, SiLU) are its own members.
// An integer value folded from shape arithmetic (constant_folding.cpp).
struct IntFold {
  std::vector<int64_t> values;
  Shape shape;
};

// One level of a YOLOv5 Detect head: its 1x1 convolution and the decoding
// after it, which become one models.yolo.Detect operator (detect_head.cpp).
struct DetectHead {
  const onnx::NodeProto* conv = nullptr;
  int64_t na = 0, no = 0;  // anchors, values per box (nc + 5)
  float stride = 0;
  std::vector<float> anchors;  // na pairs (w, h) in pixels
};

class Context {
 public:
  Context(const onnx::ModelProto& model, const OnnxImportOptions& options);
  pnnx::Graph Run();

  // ---- what a lowering reads ----
  [[noreturn]] void Fail(const onnx::NodeProto& node, const std::string& why) const;
  // A node that batch mode cannot express: Run() then converts the graph as one item.
  [[noreturn]] void FailBatch(const onnx::NodeProto& node, const std::string& why) const;
  std::string NodeName(const onnx::NodeProto& node) const;
  const Shape& ShapeOf(const onnx::NodeProto& node, const std::string& value) const;
  const onnx::TensorProto* Constant(const std::string& value) const;
  // Input `input` of `node` as a constant, or a ConversionError naming it and,
  // when it is (computed from) a graph input without a value, that input.
  // The lowering must declare `input` where it registers (lowering_registry.hpp).
  const onnx::TensorProto& RequireConstant(const onnx::NodeProto& node, int input) const;
  bool HasInput(const onnx::NodeProto& node, int input) const;
  bool IsUsed(const std::string& value) const { return used_.count(value) != 0; }
  bool IsGraphOutput(const std::string& value) const;
  // The elem type of a value (onnx::TensorProto::DataType), FLOAT when unknown.
  int ElemType(const std::string& value) const;
  // The float attribute `name` of `node`, or `fallback` when absent; an
  // attribute of another type or a NaN stops the conversion naming the node.
  float FloatAttributeChecked(const onnx::NodeProto& node, const std::string& name,
                              float fallback) const;
  // The integer values of constant input `input` (int64, int32, or float).
  std::vector<int64_t> ConstantInts(const onnx::NodeProto& node, int input) const;
  // Batch mode: ONNX dimension 0 is the engine's batch; else the graph is one item.
  bool batch_mode() const { return batch_mode_; }
  int64_t batch() const { return batch_; }  // the engine batch: N in batch mode, else 1
  int64_t opset() const { return opset_; }
  // The engine shape of an ONNX shape: itself in batch mode, (1, shape...) otherwise.
  std::vector<int> EngineShape(const Shape& shape) const;
  // An engine dimension (batch counted as 0) for ONNX `axis` of a rank-`rank` value.
  int EngineAxis(const onnx::NodeProto& node, int64_t axis, size_t rank) const;
  // Engine dims of ONNX `axes` of a rank-`rank` value, sorted, each once.
  std::vector<int> EngineAxes(const onnx::NodeProto& node, const std::vector<int64_t>& axes,
                              size_t rank) const;

  // ---- what a lowering writes ----
  // The operand for input `input` of `node`; a constant becomes a pnnx.Attribute.
  int Input(const onnx::NodeProto& node, int input);
  int NewOperand(const std::string& name, const std::vector<int>& engine_shape);
  // The operand of the node's output `output`, created with its engine shape.
  int Output(const onnx::NodeProto& node, int output = 0);
  // Output `output` of `node` as a float operand whatever its ONNX type (an
  // index, a count, a bool): the engine's integers and bools travel as floats.
  int OutputAsFloat(const onnx::NodeProto& node, int output);
  // ONNX value `value` is the engine operand `operand` (a copy without an operator).
  void Alias(const std::string& value, int operand) { operand_of_[value] = operand; }
  pnnx::Operator& Emit(const std::string& type, const std::string& name,
                       const std::vector<int>& inputs, int output);
  // Emits `type` on input 0 with output 0: the common one-to-one case.
  pnnx::Operator& EmitUnary(const onnx::NodeProto& node, const std::string& type);
  // Emits Tensor.reshape of operand `input` to the engine shape of ONNX `shape`
  // (the batch left to the engine: -1) into `output`.
  pnnx::Operator& EmitReshapeTo(const std::string& name, int input, const Shape& shape, int output);
  pnnx::Graph& graph() { return graph_; }

 private:
  void CheckSupported() const;
  void CollectShapes();
  const onnx::TensorProto* ConstantNumbers(const onnx::NodeProto& node);
  // A graph input whose dimension 0 is symbolic (dim_param, or no value) and
  // whose other dims are fixed gets batch 1 here, and so does every value
  // declaring the same symbol, before shape inference: in batch mode the
  // engine then runs the graph at the batch of the input it is given.
  void FixSymbolicBatch();
  void PrepareConvPoolInference(onnx::GraphProto& graph) const;
  bool BatchModeFits(int64_t& batch) const;
  bool SingleModeFits() const;
  pnnx::Graph Convert(bool batch_mode, int64_t batch);
  void EmitGraphInputs();
  void LowerNodes();
  void EmitGraphOutputs();
  void CheckGraphInputsRead() const;
  pnnx::Graph Pruned() const;
  std::vector<bool> Live() const;
  // In single-item mode, records on `operand` (a graph input or output) the
  // ONNX shape the model declares, which the engine holds as (1, shape...):
  // callers feed and read it without a batch axis (RuntimeOperand::unbatched_shape).
  void DeclareUnbatched(int operand, const Shape& shape);
  std::string UniqueName(const std::string& base, std::set<std::string>& taken) const;

  // ---- before conversion: constant folding (constant_folding.cpp) and the
  // YOLOv5 Detect head (detect_head.cpp) ----
  void FoldConstants();
  void FoldMovedValues(const onnx::NodeProto& node, uint64_t& folded_bytes);
  void StoreMovedValues(const onnx::NodeProto& node, const std::vector<Shape>& shapes,
                        const Shape& out_shape, bool is_float);
  void InferFoldedShapes();
  bool FoldShapeArithmetic(const onnx::NodeProto& node);
  bool FoldShapeOf(const onnx::NodeProto& node, IntFold& fold) const;
  bool FoldFloatArithmetic(const onnx::NodeProto& node);
  // Range and ConstantOfShape of constants (constant_generators.cpp).
  bool FoldGenerator(const onnx::NodeProto& node);
  void FindDetectHeads();
  // x * Sigmoid(x), how torch.onnx.export writes nn.SiLU, becomes one nn.SiLU:
  // fused into the convolution before it (RuntimeGraph::FuseActivations) and
  // computed in double precision (activation.cpp) instead of two rounded passes.
  void FindSilu();
  // Matches the head that the 5-D `reshape` starts, appending its nodes to
  // `nodes` (the last one computes the head's output); a difference throws a
  // ConversionError naming the node, and FindDetectHeads then leaves the nodes
  // to be converted one by one.
  DetectHead MatchDetectHead(const onnx::NodeProto& reshape,
                             std::vector<const onnx::NodeProto*>& nodes);
  void EmitDetectHead(const onnx::NodeProto& last, const DetectHead& head);
  // A value the engine never holds: a constant or a Detect head's inner value.
  bool Hidden(const std::string& value) const {
    return constants_.count(value) != 0 || internal_.count(value) != 0;
  }

  onnx::ModelProto model_;
  OnnxImportOptions options_;
  // The graph input and symbol FixSymbolicBatch fixed, "" when none.
  std::string dynamic_input_, dynamic_symbol_;
  int64_t opset_ = 1;
  std::map<std::string, const onnx::TensorProto*> constants_;
  std::map<std::string, Shape> shapes_;    // every value whose shape is known
  std::map<std::string, int> elem_types_;  // onnx::TensorProto::DataType of values
  std::set<std::string> used_;             // values read by a node or the graph
  std::map<const onnx::NodeProto*, std::string> node_names_;
  std::deque<onnx::TensorProto> folded_;                // values of folded nodes (stable addresses)
  std::set<const onnx::NodeProto*> absorbed_;           // folded, or part of a Detect head
  std::set<std::string> internal_;                      // values inside a Detect head
  std::map<const onnx::NodeProto*, DetectHead> heads_;  // by the node computing its output
  std::map<const onnx::NodeProto*, int> silu_;          // Mul node -> its input x
  // The nodes reading each value; a graph output counts as a null reader.
  std::map<std::string, std::vector<const onnx::NodeProto*>> readers_;

  // State of one conversion.
  bool batch_mode_ = true;
  int64_t batch_ = 1;
  pnnx::Graph graph_;
  std::map<std::string, int> operand_of_;  // ONNX value -> engine operand
  std::set<std::string> op_names_, operand_names_;
};

}  // namespace kuiper::onnx_import

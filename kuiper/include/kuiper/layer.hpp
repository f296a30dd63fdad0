// Layer: the computation behind an operator. The graph creates one layer per
// operator through LayerRegisterer, keyed by the operator's PNNX type.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kuiper/layers/activation.hpp"
#include "kuiper/runtime.hpp"
#include "kuiper/tensor.hpp"

namespace kuiper {

// What a layer's Forward reports. RuntimeGraph::Forward turns anything but
// kInferSuccess into a LayerError naming the operator.
enum class InferStatus {
  kInferSuccess = 0,
  kInferFailedInputEmpty,              // no input tensors, or an empty one
  kInferFailedOutputEmpty,             // no output slots
  kInferFailedInputOutSizeMatchError,  // input and output batch sizes differ
  kInferFailedBatchMatchError,         // several inputs with different batch sizes
  kInferFailedChannelParameterError,   // channels do not match the layer's parameters
  kInferFailedShapeError,              // a shape that does not fit the layer's parameters
};

const char* InferStatusName(InferStatus status);

class Layer {
 public:
  explicit Layer(std::string layer_name) : layer_name_(std::move(layer_name)) {}
  virtual ~Layer() = default;

  // Computes outputs from inputs. Inputs of several operands come one operand
  // after another: for operands A and B with batch n, {A0..An-1, B0..Bn-1}.
  // Outputs likewise: an operator with k output operands (torch.split,
  // torch.chunk, torch.tensor_split, ONNX Split) gets k*n slots, output 0's n
  // items first. A layer keeps the number of slots it is given. An output slot
  // may be null or have another shape: the layer then allocates it. A layer
  // never writes into its inputs, nor puts an input's tensor in an output
  // slot: the graph lets operands that are not live at once share memory
  // (graph.hpp, buffer_planning), and an output slot may hold memory that
  // an earlier operand of the same run used.
  virtual InferStatus Forward(const std::vector<sftensor>& inputs,
                              std::vector<sftensor>& outputs) = 0;

  // Runs the layer on its operator's input operands into its output operands
  // (every one of them, in the order of the operator's line).
  InferStatus Forward();

  // Asks the layer to apply `activation` to its own output from now on, so
  // that the activation operator after it can be skipped (RuntimeGraph::Build
  // fuses nn.Conv2d + nn.ReLU / nn.SiLU, and pnnx.Expression + either).
  // Returns false when it cannot.
  virtual bool FuseActivation(Activation) { return false; }

  const std::string& layer_name() const { return layer_name_; }
  void set_runtime_operator(RuntimeOperator* op) { runtime_operator_ = op; }

 protected:
  std::string layer_name_;
  RuntimeOperator* runtime_operator_ = nullptr;
};

// Makes `slot` a zero tensor of `shapes` unless it already has that shape.
void EnsureOutput(sftensor& slot, const std::vector<uint32_t>& shapes);

// Creates a layer from an operator's parameters and attributes. Throws
// LayerError (naming the operator) when they do not fit.
using LayerCreator = std::function<std::unique_ptr<Layer>(const RuntimeOperator&)>;

class LayerRegisterer {
 public:
  // Registers `creator` for a PNNX type such as "nn.ReLU".
  static void RegisterCreator(const std::string& type, LayerCreator creator);
  // The layer for `op`; throws LayerError naming the type and the operator
  // when no layer is registered for its type.
  static std::unique_ptr<Layer> CreateLayer(const RuntimeOperator& op);
  static bool HasCreator(const std::string& type);
  // Every registered PNNX type, sorted (`kuiper ops`, docs/operators.md).
  static std::vector<std::string> Types();
};

// Registers a layer at program start from the layer's own .cpp file:
//   LayerRegistererWrapper kReluRegistration({"nn.ReLU", "F.relu"}, CreateRelu);
struct LayerRegistererWrapper {
  LayerRegistererWrapper(const std::vector<std::string>& types, const LayerCreator& creator) {
    for (const auto& type : types) LayerRegisterer::RegisterCreator(type, creator);
  }
};

}  // namespace kuiper

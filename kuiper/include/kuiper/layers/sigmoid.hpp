// Lab course5_layers (course5_layers/src/sigmoid.cpp): the sigmoid function
// and the layer that applies it, registered as nn.Sigmoid and F.sigmoid.
#pragma once

#include <memory>
#include <vector>

#include "kuiper/layer.hpp"

namespace kuiper {

// 1 / (1 + e^-x). Depends on nothing else of the engine, so another layer can
// call it: the YOLOv5 Detect head does. SiLU does not: it computes its own
// e^-x in kuiper/src/layer/activation.cpp, in a form the compiler vectorises.
float Sigmoid(float x);

class SigmoidLayer : public Layer {
 public:
  SigmoidLayer() : Layer("Sigmoid") {}

  // outputs[i] = Sigmoid of every element of inputs[i]. Reports
  // kInferFailedInputEmpty (no inputs, or a null or empty one),
  // kInferFailedOutputEmpty (no output slots) or
  // kInferFailedInputOutSizeMatchError (batch sizes differ) and then leaves
  // the outputs alone. Never changes the inputs.
  InferStatus Forward(const std::vector<sftensor>& inputs, std::vector<sftensor>& outputs) override;

  // The creator registered for nn.Sigmoid and F.sigmoid (they take no parameters).
  static std::unique_ptr<Layer> Create(const RuntimeOperator& op);
};

}  // namespace kuiper

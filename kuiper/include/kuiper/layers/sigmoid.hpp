// Lab course5_layers (course5_layers/src/sigmoid.cpp): the sigmoid function
// and the layer that applies it, registered as nn.Sigmoid and F.sigmoid.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "kuiper/layer.hpp"

namespace kuiper {

// y[i] = 1 / (1 + e^-x[i]) for i < n, in a loop the compiler vectorises:
// exactly 0 and 1 at the ends, never NaN for a number. y may be x (in place);
// otherwise the two spans must not overlap. Depends on nothing else of the
// engine, so another layer can call it: the YOLOv5 Detect head does, once per
// column of logits. SiLU does not: it computes its own e^-x in
// kuiper/src/layer/activation.cpp, in double, to round once.
void Sigmoid(const float* x, float* y, size_t n);

class SigmoidLayer : public Layer {
 public:
  SigmoidLayer() : Layer("Sigmoid") {}

  // outputs[i] = the sigmoid of every element of inputs[i], the items on the
  // engine's threads (kuiper/parallel.hpp). Reports
  // kInferFailedInputEmpty (no inputs, or a null or empty one),
  // kInferFailedOutputEmpty (no output slots) or
  // kInferFailedInputOutSizeMatchError (batch sizes differ) and then leaves
  // the outputs alone. Never changes the inputs.
  InferStatus Forward(const std::vector<sftensor>& inputs, std::vector<sftensor>& outputs) override;

  // The creator registered for nn.Sigmoid and F.sigmoid (they take no parameters).
  static std::unique_ptr<Layer> Create(const RuntimeOperator& op);
};

}  // namespace kuiper

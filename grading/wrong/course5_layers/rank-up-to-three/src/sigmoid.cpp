// Lab course5_layers: see course5_layers/README.md.
#include "kuiper/layers/sigmoid.hpp"

#include <cmath>
#include <memory>

namespace kuiper {

float Sigmoid(float x) {
  // TODO(course5): the logistic function 1 / (1 + e^-x). It must give exactly
  // 0 and 1, never NaN, at the ends (x = -1000, +1000, -inf, +inf): pick the
  // form of the formula that does (README "The sigmoid and its ends").
  // ---- your code begins ----
  return 1.f / (1.f + std::exp(-x));
  // ---- your code ends ----
}

InferStatus SigmoidLayer::Forward(const std::vector<sftensor>& inputs,
                                  std::vector<sftensor>& outputs) {
  // TODO(course5): outputs[i] becomes the sigmoid of every element of
  // inputs[i], with the shape of inputs[i] (of any rank). A layer never
  // trusts its caller: first check the batch and answer with the status of
  // the README's table, in the table's order, before touching any output
  // (README "What Forward must check"). Reuse an output slot that already has
  // the right shape, never modify an input, and let the items run in parallel
  // without an exception escaping the parallel region (README "Computing a
  // batch").
  // ---- your code begins ----
  if (inputs.empty()) return InferStatus::kInferFailedInputEmpty;
  if (outputs.empty()) return InferStatus::kInferFailedOutputEmpty;
  if (inputs.size() != outputs.size()) return InferStatus::kInferFailedInputOutSizeMatchError;
  for (const sftensor& input : inputs) {
    if (!input || input->empty()) return InferStatus::kInferFailedInputEmpty;
  }
  // Allocation may throw, so it happens before the parallel loop.
  const int batch = static_cast<int>(inputs.size());
  // Wrong: the output shape is built for 1, 2 or 3 dimensions only; a larger
  // item becomes channels x rows x cols.
  for (int i = 0; i < batch; ++i) {
    const ftensor& in = *inputs[i];
    std::vector<uint32_t> shape = in.raw_shapes();
    if (shape.size() > 3) shape = {in.channels(), in.rows(), in.cols()};
    if (!outputs[i] || outputs[i]->raw_shapes() != shape) outputs[i] = TensorCreate(shape);
  }
#pragma omp parallel for
  for (int i = 0; i < batch; ++i) {
    const float* x = inputs[i]->raw_ptr();
    float* y = outputs[i]->raw_ptr();
    const uint32_t n = inputs[i]->size();
    for (uint32_t j = 0; j < n; ++j) y[j] = Sigmoid(x[j]);
  }
  return InferStatus::kInferSuccess;
  // ---- your code ends ----
}

std::unique_ptr<Layer> SigmoidLayer::Create([[maybe_unused]] const RuntimeOperator& op) {
  // TODO(course5): the creator: what the registry calls to turn an nn.Sigmoid
  // or F.sigmoid operator into a layer (README "The registry"). It owns no raw
  // pointer.
  // ---- your code begins ----
  return std::make_unique<SigmoidLayer>();
  // ---- your code ends ----
}

// TODO(course5): register the creator under both PNNX type names, so that
// RuntimeGraph::Build finds it for every nn.Sigmoid and F.sigmoid operator.
// The registration must happen before main() runs, without anyone calling a
// function of this file (README "The registry").
// ---- your code begins ----
namespace {

// A global object whose constructor registers: it runs before main().
LayerRegistererWrapper kSigmoidRegistration({"nn.Sigmoid", "F.sigmoid"}, SigmoidLayer::Create);

}  // namespace
// ---- your code ends ----

}  // namespace kuiper

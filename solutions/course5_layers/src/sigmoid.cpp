// Lab course5_layers: see course5_layers/README.md.
#include "kuiper/layers/sigmoid.hpp"

#include <cmath>
#include <memory>

namespace kuiper {

float Sigmoid(float x) {
  // TODO(course5): return 1 / (1 + e^-x) (std::exp). For very negative x,
  // e^-x overflows to infinity and the result correctly becomes 0.
  // ---- your code begins ----
  return 1.f / (1.f + std::exp(-x));
  // ---- your code ends ----
}

InferStatus SigmoidLayer::Forward(const std::vector<sftensor>& inputs,
                                  std::vector<sftensor>& outputs) {
  // TODO(course5): check, then compute, one batch item at a time.
  // 1. Return InferStatus::kInferFailedInputEmpty if `inputs` is empty,
  //    kInferFailedOutputEmpty if `outputs` is empty,
  //    kInferFailedInputOutSizeMatchError if their sizes differ, and
  //    kInferFailedInputEmpty if any input is null or empty(); check all of
  //    these before writing any output.
  // 2. For each i: EnsureOutput(outputs[i], inputs[i]->raw_shapes()), then
  //    write Sigmoid(x) of every element x of inputs[i] into outputs[i].
  //    Never change inputs[i]: another layer may read the same tensor.
  //    Hint: raw_ptr() and size(), or arma's .transform on a copy.
  // 3. Items are independent: `#pragma omp parallel for` over i (allocate in
  //    a first loop, compute in a second, so nothing inside the parallel
  //    loop can throw).
  // 4. Return InferStatus::kInferSuccess.
  // ---- your code begins ----
  if (inputs.empty()) return InferStatus::kInferFailedInputEmpty;
  if (outputs.empty()) return InferStatus::kInferFailedOutputEmpty;
  if (inputs.size() != outputs.size()) return InferStatus::kInferFailedInputOutSizeMatchError;
  for (const sftensor& input : inputs) {
    if (!input || input->empty()) return InferStatus::kInferFailedInputEmpty;
  }
  const int batch = static_cast<int>(inputs.size());
  for (int i = 0; i < batch; ++i) EnsureOutput(outputs[i], inputs[i]->raw_shapes());
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
  // TODO(course5): the creator the registry calls for an nn.Sigmoid operator.
  // Sigmoid has no parameters or weights to read from `op`: return a new
  // SigmoidLayer (std::make_unique, never a raw new).
  // ---- your code begins ----
  return std::make_unique<SigmoidLayer>();
  // ---- your code ends ----
}

namespace {

// Registration runs before main(): from then on RuntimeGraph::Build finds
// this creator for every operator of type nn.Sigmoid or F.sigmoid.
LayerRegistererWrapper kSigmoidRegistration({"nn.Sigmoid", "F.sigmoid"}, SigmoidLayer::Create);

}  // namespace
}  // namespace kuiper

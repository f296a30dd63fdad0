// Stretch task of course5_layers (optional, label course5_stretch): a layer
// with a parameter, nn.LeakyReLU. See course5_layers/README.md, "Stretch: a
// layer with a parameter". Compiled into the stretch test program only.
#include <memory>
#include <vector>

#include "kuiper/layer.hpp"
#include "kuiper/runtime.hpp"

namespace kuiper {

// TODO(course5 stretch): a layer computing y = x for x >= 0 and
// y = negative_slope * x for x < 0, with the checks of SigmoidLayer::Forward;
// its creator reads negative_slope from the operator; register it as
// nn.LeakyReLU and F.leaky_relu.
// ---- your code begins ----
class LeakyReluLayer : public Layer {
 public:
  explicit LeakyReluLayer(float negative_slope)
      : Layer("LeakyReLU"), negative_slope_(negative_slope) {}

  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
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
      for (uint32_t j = 0; j < n; ++j) y[j] = x[j] >= 0.f ? x[j] : negative_slope_ * x[j];
    }
    return InferStatus::kInferSuccess;
  }

  // Throws LayerError naming the operator when negative_slope is missing or
  // not a number (RuntimeOperator::param).
  static std::unique_ptr<Layer> Create(const RuntimeOperator& op) {
    return std::make_unique<LeakyReluLayer>(op.param<float>("negative_slope"));
  }

 private:
  float negative_slope_;
};

namespace {

LayerRegistererWrapper kLeakyReluRegistration({"nn.LeakyReLU", "F.leaky_relu"},
                                              LeakyReluLayer::Create);

}  // namespace
// ---- your code ends ----

}  // namespace kuiper

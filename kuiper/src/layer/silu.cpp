// SiLU (swish): y = x * sigmoid(x) = x / (1 + e^-x), the activation of every
// YOLOv5 conv block. std::exp, not a polynomial approximation: one measured
// (SIMD-friendly, within 1.4 ulp) was 5% faster on YOLOv5s but its rounding,
// compounded over 57 SiLU layers, moved the output 20-40% further from a
// float64 PyTorch run (models/README.md, "How close is close").
#include <cmath>

#include "kuiper/layers/elementwise.hpp"

namespace kuiper {
namespace {

class SiluLayer : public ElementwiseLayer {
 public:
  SiluLayer() : ElementwiseLayer("SiLU") {}

 protected:
  void Apply(const ftensor& input, ftensor& output) const override {
    MapElements(input, output, [](float x) { return x / (1.f + std::exp(-x)); });
  }
};

std::unique_ptr<Layer> CreateSilu(const RuntimeOperator&) { return std::make_unique<SiluLayer>(); }

LayerRegistererWrapper kSiluRegistration({"nn.SiLU", "F.silu"}, CreateSilu);

}  // namespace
}  // namespace kuiper

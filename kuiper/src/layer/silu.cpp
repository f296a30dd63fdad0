// SiLU (swish): y = x * sigmoid(x), the activation of every YOLOv5 conv block.
// The sigmoid is the one of lab course5_layers.
#include "kuiper/layers/elementwise.hpp"
#include "kuiper/layers/sigmoid.hpp"

namespace kuiper {
namespace {

class SiluLayer : public ElementwiseLayer {
 public:
  SiluLayer() : ElementwiseLayer("SiLU") {}

 protected:
  void Apply(const ftensor& input, ftensor& output) const override {
    MapElements(input, output, [](float x) { return x * Sigmoid(x); });
  }
};

std::unique_ptr<Layer> CreateSilu(const RuntimeOperator&) { return std::make_unique<SiluLayer>(); }

LayerRegistererWrapper kSiluRegistration({"nn.SiLU", "F.silu"}, CreateSilu);

}  // namespace
}  // namespace kuiper

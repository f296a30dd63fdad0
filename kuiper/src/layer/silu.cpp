// SiLU (swish): y = x * sigmoid(x) = x / (1 + e^-x), the activation of every
// YOLOv5 conv block. Not through lab course5's Sigmoid, on purpose: a call to
// std::exp per element cannot be vectorized, and at one exponential per
// element of every YOLOv5s convolution output it cost more than the
// convolutions (fast_exp.hpp). YOLOv5's head still runs on the lab's Sigmoid.
#include "kuiper/fast_exp.hpp"
#include "kuiper/layers/elementwise.hpp"

namespace kuiper {
namespace {

class SiluLayer : public ElementwiseLayer {
 public:
  SiluLayer() : ElementwiseLayer("SiLU") {}

 protected:
  void Apply(const ftensor& input, ftensor& output) const override {
    MapElements(input, output, [](float x) { return x / (1.f + FastExp(-x)); });
  }
};

std::unique_ptr<Layer> CreateSilu(const RuntimeOperator&) { return std::make_unique<SiluLayer>(); }

LayerRegistererWrapper kSiluRegistration({"nn.SiLU", "F.silu"}, CreateSilu);

}  // namespace
}  // namespace kuiper

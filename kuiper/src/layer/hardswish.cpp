// Hardswish: y = x * relu6(x + 3) / 6, as PyTorch defines it.
#include <algorithm>

#include "kuiper/layers/elementwise.hpp"

namespace kuiper {
namespace {

class HardswishLayer : public ElementwiseLayer {
 public:
  HardswishLayer() : ElementwiseLayer("Hardswish") {}

 protected:
  void Apply(const ftensor& input, ftensor& output) const override {
    MapElements(input, output,
                [](float x) { return x * std::min(std::max(x + 3.f, 0.f), 6.f) / 6.f; });
  }
};

std::unique_ptr<Layer> CreateHardswish(const RuntimeOperator&) {
  return std::make_unique<HardswishLayer>();
}

LayerRegistererWrapper kHardswishRegistration({"nn.Hardswish", "F.hardswish"}, CreateHardswish);

}  // namespace
}  // namespace kuiper

// Hardsigmoid: y = relu6(x + 3) / 6, as PyTorch defines it.
#include <algorithm>

#include "kuiper/layers/elementwise.hpp"

namespace kuiper {
namespace {

class HardsigmoidLayer : public ElementwiseLayer {
 public:
  HardsigmoidLayer() : ElementwiseLayer("Hardsigmoid") {}

 protected:
  void Apply(const ftensor& input, ftensor& output) const override {
    MapElements(input, output, [](float x) { return std::min(std::max(x + 3.f, 0.f), 6.f) / 6.f; });
  }
};

std::unique_ptr<Layer> CreateHardsigmoid(const RuntimeOperator&) {
  return std::make_unique<HardsigmoidLayer>();
}

LayerRegistererWrapper kHardsigmoidRegistration({"nn.Hardsigmoid", "F.hardsigmoid"},
                                                CreateHardsigmoid);

}  // namespace
}  // namespace kuiper

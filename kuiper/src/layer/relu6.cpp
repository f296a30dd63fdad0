// ReLU6: y = min(max(x, 0), 6).
#include <algorithm>

#include "kuiper/layers/elementwise.hpp"

namespace kuiper {
namespace {

class Relu6Layer : public ElementwiseLayer {
 public:
  Relu6Layer() : ElementwiseLayer("ReLU6") {}

 protected:
  void Apply(const ftensor& input, ftensor& output) const override {
    MapElements(input, output, [](float x) { return std::min(std::max(x, 0.f), 6.f); });
  }
};

std::unique_ptr<Layer> CreateRelu6(const RuntimeOperator&) {
  return std::make_unique<Relu6Layer>();
}

LayerRegistererWrapper kRelu6Registration({"nn.ReLU6", "F.relu6"}, CreateRelu6);

}  // namespace
}  // namespace kuiper

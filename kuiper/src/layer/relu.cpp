// ReLU: y = max(x, 0).
#include <algorithm>

#include "kuiper/layers/elementwise.hpp"

namespace kuiper {
namespace {

class ReluLayer : public ElementwiseLayer {
 public:
  ReluLayer() : ElementwiseLayer("ReLU") {}

 protected:
  void Apply(const ftensor& input, ftensor& output) const override {
    MapElements(input, output, [](float x) { return std::max(x, 0.f); });
  }
};

std::unique_ptr<Layer> CreateRelu(const RuntimeOperator&) { return std::make_unique<ReluLayer>(); }

LayerRegistererWrapper kReluRegistration({"nn.ReLU", "F.relu"}, CreateRelu);

}  // namespace
}  // namespace kuiper

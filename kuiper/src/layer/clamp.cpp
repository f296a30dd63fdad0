// torch.clamp: y = min(max(x, min), max), either bound optional (None or
// absent: no bound on that side), as PyTorch writes it to PNNX. The ONNX
// importer emits it for Clip and HardSigmoid bounds that no fixed activation
// (nn.ReLU, nn.ReLU6) covers. With min > max every value becomes max, as both
// torch.clamp and ONNX's Clip define it; a NaN stays NaN.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kuiper/layers/elementwise.hpp"

namespace kuiper {
namespace {

class ClampLayer : public ElementwiseLayer {
 public:
  ClampLayer(float lo, float hi) : ElementwiseLayer("Clamp"), lo_(lo), hi_(hi) {}

 protected:
  void Apply(const ftensor& input, ftensor& output) const override {
    const float lo = lo_, hi = hi_;
    // std::max(x, lo) returns x when x is NaN (NaN < lo is false), and so does std::min.
    MapElements(input, output, [lo, hi](float x) { return std::min(std::max(x, lo), hi); });
  }

 private:
  float lo_, hi_;
};

// The bound `key`: a number, or `fallback` for None or no parameter at all.
float Bound(const RuntimeOperator& op, const std::string& key, float fallback) {
  if (!op.has_param(key) || std::holds_alternative<std::monostate>(op.params.at(key))) {
    return fallback;
  }
  const float value = op.param<float>(key);
  if (std::isnan(value)) {
    throw LayerError(fmt::format("operator '{}' ({}): {} is NaN", op.name, op.type, key));
  }
  return value;
}

std::unique_ptr<Layer> CreateClamp(const RuntimeOperator& op) {
  constexpr float kInfinity = std::numeric_limits<float>::infinity();
  return std::make_unique<ClampLayer>(Bound(op, "min", -kInfinity), Bound(op, "max", kInfinity));
}

LayerRegistererWrapper kClampRegistration({"torch.clamp"}, CreateClamp);

}  // namespace
}  // namespace kuiper

// Tensor.view / Tensor.reshape: a new shape, read in row-major order as in
// PyTorch. `shape` includes the batch dimension and may hold one -1, whose
// size follows from the element count.
#include <fmt/format.h>

#include <algorithm>

#include "kuiper/error.hpp"
#include "kuiper/layers/elementwise.hpp"

namespace kuiper {
namespace {

class ViewLayer : public Layer {
 public:
  explicit ViewLayer(std::vector<int> shape) : Layer("View"), shape_(std::move(shape)) {}

  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    const InferStatus status = CheckOneToOne(inputs, outputs);
    if (status != InferStatus::kInferSuccess) return status;
    // The batch is the engine's, not the item's: shape[0] must agree with it.
    if (shape_[0] != -1 && shape_[0] != static_cast<int>(inputs.size())) {
      return InferStatus::kInferFailedShapeError;
    }
    std::vector<std::vector<uint32_t>> shapes;
    for (const sftensor& input : inputs) {
      std::vector<uint32_t> shape;
      if (!ItemShape(input->size(), shape)) return InferStatus::kInferFailedShapeError;
      shapes.push_back(std::move(shape));
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      sftensor output = TensorClone(inputs[i]);
      output->Reshape(shapes[i], /*row_major=*/true);
      outputs[i] = std::move(output);
    }
    return InferStatus::kInferSuccess;
  }

 private:
  // The item's new shape (shape_ without the batch), its -1 resolved; false
  // when the element count does not fit.
  bool ItemShape(uint32_t size, std::vector<uint32_t>& shape) const {
    uint64_t known = 1;
    int unknown = -1;
    for (size_t d = 1; d < shape_.size(); ++d) {
      if (shape_[d] == -1) {
        unknown = static_cast<int>(d) - 1;
      } else {
        known *= static_cast<uint64_t>(shape_[d]);
      }
    }
    if (unknown >= 0 ? size % known != 0 : known != size) return false;
    shape.clear();
    for (size_t d = 1; d < shape_.size(); ++d) {
      shape.push_back(shape_[d] == -1 ? static_cast<uint32_t>(size / known)
                                      : static_cast<uint32_t>(shape_[d]));
    }
    return true;
  }

  std::vector<int> shape_;
};

std::unique_ptr<Layer> CreateView(const RuntimeOperator& op) {
  const auto shape = op.param<std::vector<int>>("shape");
  const auto fail = [&](const std::string& why) {
    return LayerError(
        fmt::format("operator '{}' ({}): shape={} {}", op.name, op.type, ShapeText(shape), why));
  };
  if (shape.size() < 2 || shape.size() > kMaxTensorRank + 1) {
    throw fail(fmt::format("must hold the batch and 1 to {} item dimensions", kMaxTensorRank));
  }
  if (std::count(shape.begin(), shape.end(), -1) > 1) throw fail("holds more than one -1");
  if (std::any_of(shape.begin(), shape.end(), [](int d) { return d == 0 || d < -1; })) {
    throw fail("holds a size that is neither positive nor -1");
  }
  return std::make_unique<ViewLayer>(shape);
}

LayerRegistererWrapper kViewRegistration({"Tensor.view", "Tensor.reshape"}, CreateView);

}  // namespace
}  // namespace kuiper

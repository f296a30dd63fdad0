// torch.flatten / nn.Flatten: merges dimensions start_dim..end_dim, counted as
// PyTorch counts them, with the batch as dimension 0. The batch itself is
// never merged: each item is flattened on its own.
#include <fmt/format.h>

#include "kuiper/layers/elementwise.hpp"

namespace kuiper {
namespace {

class FlattenLayer : public Layer {
 public:
  FlattenLayer(int start_dim, int end_dim)
      : Layer("Flatten"), start_dim_(start_dim), end_dim_(end_dim) {}

  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    const InferStatus status = CheckOneToOne(inputs, outputs);
    if (status != InferStatus::kInferSuccess) return status;
    std::vector<std::vector<uint32_t>> shapes;
    for (const sftensor& input : inputs) {
      std::vector<uint32_t> shape;
      if (!FlattenedShape(input->raw_shapes(), shape)) return InferStatus::kInferFailedShapeError;
      shapes.push_back(std::move(shape));
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      sftensor output = TensorClone(inputs[i]);
      if (shapes[i].size() == 1) {
        output->Flatten(/*row_major=*/true);  // lab course2_padding
      } else {
        output->Reshape(shapes[i], /*row_major=*/true);
      }
      outputs[i] = std::move(output);
    }
    return InferStatus::kInferSuccess;
  }

 private:
  // The item shape after merging; false when the dimensions do not fit the
  // item's rank or would merge the batch.
  bool FlattenedShape(const std::vector<uint32_t>& item, std::vector<uint32_t>& shape) const {
    const int rank = static_cast<int>(item.size()) + 1;  // with the batch
    const int start = start_dim_ < 0 ? start_dim_ + rank : start_dim_;
    const int end = end_dim_ < 0 ? end_dim_ + rank : end_dim_;
    if (start < 1 || end < start || end >= rank) return false;
    // Item dimension d is dimension d + 1 with the batch.
    uint32_t merged = 1;
    for (int d = start; d <= end; ++d) merged *= item[d - 1];
    shape.assign(item.begin(), item.begin() + (start - 1));
    shape.push_back(merged);
    shape.insert(shape.end(), item.begin() + end, item.end());
    return true;
  }

  int start_dim_;
  int end_dim_;
};

std::unique_ptr<Layer> CreateFlatten(const RuntimeOperator& op) {
  const int start_dim = op.param<int>("start_dim");
  const int end_dim = op.param<int>("end_dim");
  if (start_dim == 0 || end_dim == 0) {
    throw LayerError(
        fmt::format("operator '{}' ({}): start_dim={} end_dim={} would merge the batch dimension",
                    op.name, op.type, start_dim, end_dim));
  }
  return std::make_unique<FlattenLayer>(start_dim, end_dim);
}

LayerRegistererWrapper kFlattenRegistration({"torch.flatten", "nn.Flatten"}, CreateFlatten);

}  // namespace
}  // namespace kuiper

// torch.squeeze / torch.unsqueeze: remove or insert dimensions of size 1.
// Row-major data does not move, so each is a reshape of every item. `dim`
// counts the batch as dimension 0 (negative from the end, as in PyTorch) and
// may not be the batch itself. As in PyTorch, squeezing a dimension whose
// size is not 1 leaves it, and torch.squeeze without `dim` removes every
// size-1 dimension (but the batch).
#include <fmt/format.h>

#include <algorithm>

#include "kuiper/error.hpp"
#include "kuiper/layers/elementwise.hpp"

namespace kuiper {
namespace {

class SqueezeLayer : public Layer {
 public:
  // dims empty: every size-1 dimension (torch.squeeze only).
  SqueezeLayer(std::string name, bool unsqueeze, std::vector<int> dims)
      : Layer(std::move(name)), unsqueeze_(unsqueeze), dims_(std::move(dims)) {}

  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    const InferStatus status = CheckOneToOne(inputs, outputs);
    if (status != InferStatus::kInferSuccess) return status;
    std::vector<std::vector<uint32_t>> shapes;
    for (const sftensor& input : inputs) {
      std::vector<uint32_t> shape = input->raw_shapes();
      if (!(unsqueeze_ ? Unsqueeze(shape) : Squeeze(shape))) {
        return InferStatus::kInferFailedShapeError;
      }
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
  // `item` with a 1 inserted at dims_[0]; false when it does not fit.
  bool Unsqueeze(std::vector<uint32_t>& item) const {
    const int rank = static_cast<int>(item.size()) + 2;  // of the output, with the batch
    const int dim = dims_[0] < 0 ? dims_[0] + rank : dims_[0];
    if (dim < 1 || dim >= rank || item.size() + 1 > kMaxTensorRank) return false;
    item.insert(item.begin() + (dim - 1), 1);
    return true;
  }

  // `item` without its size-1 dimensions among dims_ (all when empty); false
  // when a dim is out of range or nothing would be left of the item.
  bool Squeeze(std::vector<uint32_t>& item) const {
    const int rank = static_cast<int>(item.size()) + 1;  // with the batch
    std::vector<bool> drop(item.size(), dims_.empty());
    for (int d : dims_) {
      const int dim = d < 0 ? d + rank : d;
      if (dim < 1 || dim >= rank) return false;
      drop[dim - 1] = true;
    }
    std::vector<uint32_t> kept;
    for (size_t d = 0; d < item.size(); ++d) {
      if (!drop[d] || item[d] != 1) kept.push_back(item[d]);
    }
    if (kept.empty()) return false;  // a batch of scalars: no engine item holds one
    item = std::move(kept);
    return true;
  }

  bool unsqueeze_;
  std::vector<int> dims_;
};

// The `dim` parameter: an int or (for torch.squeeze) an int array; absent
// only where `optional`.
std::vector<int> Dims(const RuntimeOperator& op, bool optional) {
  const auto it = op.params.find("dim");
  std::vector<int> dims;
  if (it == op.params.end() && optional) return dims;
  if (it != op.params.end() && std::holds_alternative<std::vector<int>>(it->second)) {
    dims = std::get<std::vector<int>>(it->second);
  } else {
    dims = {op.param<int>("dim")};  // LayerError naming the operator otherwise
  }
  if (std::count(dims.begin(), dims.end(), 0) != 0) {
    throw LayerError(fmt::format("operator '{}' ({}): dim={} names the batch (0), which stays",
                                 op.name, op.type, ShapeText(dims)));
  }
  return dims;
}

std::unique_ptr<Layer> CreateSqueeze(const RuntimeOperator& op) {
  return std::make_unique<SqueezeLayer>(op.name, /*unsqueeze=*/false, Dims(op, true));
}

std::unique_ptr<Layer> CreateUnsqueeze(const RuntimeOperator& op) {
  std::vector<int> dims = Dims(op, false);
  if (dims.size() != 1) {
    throw LayerError(fmt::format("operator '{}' ({}): dim={} must be one dimension", op.name,
                                 op.type, ShapeText(dims)));
  }
  return std::make_unique<SqueezeLayer>(op.name, /*unsqueeze=*/true, std::move(dims));
}

const LayerRegistererWrapper kSqueezeRegistration({"torch.squeeze", "Tensor.squeeze"},
                                                  CreateSqueeze);
const LayerRegistererWrapper kUnsqueezeRegistration({"torch.unsqueeze", "Tensor.unsqueeze"},
                                                    CreateUnsqueeze);

}  // namespace
}  // namespace kuiper

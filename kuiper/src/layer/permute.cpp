// torch.permute / Tensor.permute: reorders the dimensions of every item.
// `dims` counts the batch as dimension 0 and must keep it first: items are
// permuted one by one, never mixed.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <numeric>

#include "kuiper/layers/elementwise.hpp"

namespace kuiper {
namespace {

class PermuteLayer : public Layer {
 public:
  PermuteLayer(std::string name, std::vector<int> dims)
      : Layer(std::move(name)), dims_(std::move(dims)) {}

  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    const InferStatus status = CheckOneToOne(inputs, outputs);
    if (status != InferStatus::kInferSuccess) return status;
    const size_t rank = dims_.size() - 1;  // of an item
    for (const sftensor& input : inputs) {
      if (input->raw_shapes().size() != rank) return InferStatus::kInferFailedShapeError;
    }
    for (size_t n = 0; n < inputs.size(); ++n) {
      const std::vector<uint32_t>& in_shape = inputs[n]->raw_shapes();
      std::vector<uint32_t> out_shape(rank);
      for (size_t d = 0; d < rank; ++d) out_shape[d] = in_shape[dims_[d + 1] - 1];
      // Row-major strides of the input, read in the output's dimension order.
      std::vector<uint64_t> in_stride(rank, 1);
      for (size_t d = rank - 1; d > 0; --d) in_stride[d - 1] = in_stride[d] * in_shape[d];
      std::vector<uint64_t> stride(rank);
      for (size_t d = 0; d < rank; ++d) stride[d] = in_stride[dims_[d + 1] - 1];

      const std::vector<float> in = inputs[n]->values(/*row_major=*/true);
      std::vector<float> out(in.size());
      std::vector<uint32_t> index(rank, 0);
      for (float& value : out) {
        uint64_t offset = 0;
        for (size_t d = 0; d < rank; ++d) offset += index[d] * stride[d];
        value = in[offset];
        for (size_t d = rank; d-- > 0;) {  // next output index, last dimension fastest
          if (++index[d] < out_shape[d]) break;
          index[d] = 0;
        }
      }
      EnsureOutput(outputs[n], out_shape);
      outputs[n]->Fill(out, /*row_major=*/true);
    }
    return InferStatus::kInferSuccess;
  }

 private:
  std::vector<int> dims_;
};

std::unique_ptr<Layer> CreatePermute(const RuntimeOperator& op) {
  std::vector<int> dims = op.param<std::vector<int>>("dims");
  const int rank = static_cast<int>(dims.size());
  for (int& d : dims) {
    if (d < 0) d += rank;  // PyTorch's negative dims count from the end
  }
  std::vector<int> sorted = dims;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> identity(rank);
  std::iota(identity.begin(), identity.end(), 0);
  if (rank < 2 || rank > static_cast<int>(kMaxTensorRank) + 1 || sorted != identity ||
      dims[0] != 0) {
    throw LayerError(
        fmt::format("operator '{}' ({}): dims=({}) must be a permutation of 0..{} "
                    "(2 to {} dimensions) that keeps the batch (0) first",
                    op.name, op.type, fmt::join(op.param<std::vector<int>>("dims"), ","), rank - 1,
                    kMaxTensorRank + 1));
  }
  return std::make_unique<PermuteLayer>(op.name, std::move(dims));
}

const LayerRegistererWrapper kPermuteRegistration({"torch.permute", "Tensor.permute"},
                                                  CreatePermute);

}  // namespace
}  // namespace kuiper

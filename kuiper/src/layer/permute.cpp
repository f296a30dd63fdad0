// torch.permute / Tensor.permute: reorders the dimensions of every item, and
// torch.transpose, which swaps two of them. `dims` counts the batch as
// dimension 0 and must keep it first: items are permuted one by one, never
// mixed.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "kuiper/error.hpp"
#include "kuiper/layers/elementwise.hpp"

namespace kuiper {
namespace {

// out = in with its item dimensions reordered: output dimension d is input
// dimension order[d] (0-based, without the batch).
void PermuteItem(const ftensor& input, const std::vector<size_t>& order, sftensor& output) {
  const size_t rank = order.size();
  const std::vector<uint32_t>& in_shape = input.raw_shapes();
  std::vector<uint32_t> out_shape(rank);
  for (size_t d = 0; d < rank; ++d) out_shape[d] = in_shape[order[d]];
  // Row-major strides of the input, read in the output's dimension order.
  std::vector<uint64_t> in_stride(rank, 1);
  for (size_t d = rank - 1; d > 0; --d) in_stride[d - 1] = in_stride[d] * in_shape[d];
  std::vector<uint64_t> stride(rank);
  for (size_t d = 0; d < rank; ++d) stride[d] = in_stride[order[d]];

  const std::vector<float> in = input.values(/*row_major=*/true);
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
  EnsureOutput(output, out_shape);
  output->Fill(out, /*row_major=*/true);
}

class PermuteLayer : public Layer {
 public:
  PermuteLayer(std::string name, std::vector<int> dims)
      : Layer(std::move(name)), dims_(std::move(dims)) {}

  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    const InferStatus status = CheckOneToOne(inputs, outputs);
    if (status != InferStatus::kInferSuccess) return status;
    std::vector<size_t> order;  // dims_ without the batch, counted within the item
    for (size_t d = 1; d < dims_.size(); ++d) order.push_back(dims_[d] - 1);
    for (const sftensor& input : inputs) {
      if (input->raw_shapes().size() != order.size()) return InferStatus::kInferFailedShapeError;
    }
    for (size_t n = 0; n < inputs.size(); ++n) PermuteItem(*inputs[n], order, outputs[n]);
    return InferStatus::kInferSuccess;
  }

 private:
  std::vector<int> dims_;
};

// torch.transpose(dim0, dim1): swaps two dimensions of an item of any rank
// (counted with the batch as 0, negative from the end, as in PyTorch).
class TransposeLayer : public Layer {
 public:
  TransposeLayer(std::string name, int dim0, int dim1)
      : Layer(std::move(name)), dim0_(dim0), dim1_(dim1) {}

  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    const InferStatus status = CheckOneToOne(inputs, outputs);
    if (status != InferStatus::kInferSuccess) return status;
    std::vector<std::vector<size_t>> orders;
    for (const sftensor& input : inputs) {
      const int rank = static_cast<int>(input->raw_shapes().size()) + 1;  // with the batch
      const int a = dim0_ < 0 ? dim0_ + rank : dim0_, b = dim1_ < 0 ? dim1_ + rank : dim1_;
      if (a < 1 || a >= rank || b < 1 || b >= rank) return InferStatus::kInferFailedShapeError;
      std::vector<size_t> order(rank - 1);
      std::iota(order.begin(), order.end(), 0);
      std::swap(order[a - 1], order[b - 1]);
      orders.push_back(std::move(order));
    }
    for (size_t n = 0; n < inputs.size(); ++n) PermuteItem(*inputs[n], orders[n], outputs[n]);
    return InferStatus::kInferSuccess;
  }

 private:
  int dim0_, dim1_;
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
        fmt::format("operator '{}' ({}): dims={} must be a permutation of 0..{} "
                    "(2 to {} dimensions) that keeps the batch (0) first",
                    op.name, op.type, ShapeText(op.param<std::vector<int>>("dims")), rank - 1,
                    kMaxTensorRank + 1));
  }
  return std::make_unique<PermuteLayer>(op.name, std::move(dims));
}

std::unique_ptr<Layer> CreateTranspose(const RuntimeOperator& op) {
  const int dim0 = op.param<int>("dim0"), dim1 = op.param<int>("dim1");
  if (dim0 == 0 || dim1 == 0) {
    throw LayerError(fmt::format(
        "operator '{}' ({}): dim0={} dim1={} would move the batch (0), which stays first", op.name,
        op.type, dim0, dim1));
  }
  return std::make_unique<TransposeLayer>(op.name, dim0, dim1);
}

const LayerRegistererWrapper kPermuteRegistration({"torch.permute", "Tensor.permute"},
                                                  CreatePermute);
const LayerRegistererWrapper kTransposeRegistration({"torch.transpose", "Tensor.transpose"},
                                                    CreateTranspose);

}  // namespace
}  // namespace kuiper

// torch.matmul on two operands, item by item: A (M,K) x B (K,N) -> (M,N), or
// stacks of matrices A (..,M,K) x B (..,K,N) -> (..,M,N) (any number of
// leading dimensions), where a side holding one matrix is broadcast against
// the other (the ONNX importer's batch_matmul).
#include <algorithm>

#include "two_operand_common.hpp"

namespace kuiper {
namespace {

class MatmulLayer : public TwoOperandLayer {
 public:
  using TwoOperandLayer::TwoOperandLayer;

 protected:
  InferStatus ForwardItem(const ftensor& a, const ftensor& b, sftensor& output) const override {
    const size_t rank_a = a.raw_shapes().size(), rank_b = b.raw_shapes().size();
    if (rank_a < 2 || rank_b < 2 || a.cols() != b.rows()) {
      return InferStatus::kInferFailedShapeError;
    }
    // The dimensions before the last two index the matrices; an N-D item
    // keeps them folded into its channels (tensor.hpp). One side's matrix is
    // broadcast when it has one; otherwise both must index them alike.
    const auto leading = [](const ftensor& t) {
      std::vector<uint32_t> dims(t.raw_shapes().begin(), t.raw_shapes().end() - 2);
      while (!dims.empty() && dims.front() == 1) dims.erase(dims.begin());
      return dims;
    };
    const uint32_t ca = a.channels(), cb = b.channels();
    if (ca != 1 && cb != 1 && leading(a) != leading(b)) return InferStatus::kInferFailedShapeError;
    const uint32_t channels = std::max(ca, cb);
    const ftensor& wider = cb > ca || (cb == ca && rank_b > rank_a) ? b : a;
    std::vector<uint32_t> shape(wider.raw_shapes().begin(), wider.raw_shapes().end() - 2);
    shape.push_back(a.rows());
    shape.push_back(b.cols());
    EnsureOutput(output, shape);
    for (uint32_t c = 0; c < channels; ++c) {
      output->slice(c) = a.slice(ca == 1 ? 0 : c) * b.slice(cb == 1 ? 0 : c);
    }
    return InferStatus::kInferSuccess;
  }
};

std::unique_ptr<Layer> CreateMatmul(const RuntimeOperator& op) {
  RequireTwoOperands(op, "A, B");
  return std::make_unique<MatmulLayer>(op.name);
}

const LayerRegistererWrapper kMatmulRegistration({"torch.matmul", "torch.bmm"}, CreateMatmul);

}  // namespace
}  // namespace kuiper

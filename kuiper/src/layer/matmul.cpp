// torch.matmul on two operands, item by item: A (M,K) x B (K,N) -> (M,N), or
// batches of matrices A (b,M,K) x B (b,K,N) -> (b,M,N), where a batch of one
// matrix is broadcast against the other side (the ONNX importer's batch_matmul).
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
    const uint32_t ca = a.channels(), cb = b.channels();
    if (ca != cb && ca != 1 && cb != 1) return InferStatus::kInferFailedShapeError;
    const uint32_t channels = std::max(ca, cb);
    if (rank_a == 2 && rank_b == 2) {
      EnsureOutput(output, {a.rows(), b.cols()});
    } else {
      EnsureOutput(output, {channels, a.rows(), b.cols()});
    }
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

// torch.matmul on two operands, item by item: A (M,K) x B (K,N) -> (M,N), or
// batches of matrices A (b,M,K) x B (b,K,N) -> (b,M,N), where a batch of one
// matrix is broadcast against the other side (the ONNX importer's batch_matmul).
#include <fmt/format.h>

#include <algorithm>

#include "kuiper/error.hpp"
#include "two_operand_common.hpp"

namespace kuiper {
namespace {

class MatmulLayer : public Layer {
 public:
  explicit MatmulLayer(std::string name) : Layer(std::move(name)) {}

  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    if (const InferStatus status = CheckTwoOperands(inputs, outputs);
        status != InferStatus::kInferSuccess) {
      return status;
    }
    const size_t batch = outputs.size();
    for (size_t n = 0; n < batch; ++n) {
      const ftensor& a = *inputs[n];
      const ftensor& b = *inputs[batch + n];
      const size_t rank_a = a.raw_shapes().size(), rank_b = b.raw_shapes().size();
      if (rank_a < 2 || rank_b < 2 || a.cols() != b.rows()) {
        return InferStatus::kInferFailedShapeError;
      }
      const uint32_t ca = a.channels(), cb = b.channels();
      if (ca != cb && ca != 1 && cb != 1) return InferStatus::kInferFailedShapeError;
      const uint32_t channels = std::max(ca, cb);
      if (rank_a == 2 && rank_b == 2) {
        EnsureOutput(outputs[n], {a.rows(), b.cols()});
      } else {
        EnsureOutput(outputs[n], {channels, a.rows(), b.cols()});
      }
      for (uint32_t c = 0; c < channels; ++c) {
        outputs[n]->slice(c) = a.slice(ca == 1 ? 0 : c) * b.slice(cb == 1 ? 0 : c);
      }
    }
    return InferStatus::kInferSuccess;
  }
};

std::unique_ptr<Layer> CreateMatmul(const RuntimeOperator& op) {
  if (op.input_operands.size() != 2) {
    throw LayerError(fmt::format("operator '{}' ({}): needs 2 inputs, has {}", op.name, op.type,
                                 op.input_operands.size()));
  }
  return std::make_unique<MatmulLayer>(op.name);
}

const LayerRegistererWrapper kMatmulRegistration({"torch.matmul", "torch.bmm"}, CreateMatmul);

}  // namespace
}  // namespace kuiper

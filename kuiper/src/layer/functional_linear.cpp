// F.linear with the weight as a second operand: y = x W^T on the last
// dimension, W (out_features, in_features) computed by the graph rather than
// stored (the ONNX importer's dense for a MatMul whose B is not a constant).
#include <fmt/format.h>

#include "kuiper/error.hpp"
#include "two_operand_common.hpp"

namespace kuiper {
namespace {

class FunctionalLinearLayer : public Layer {
 public:
  explicit FunctionalLinearLayer(std::string name) : Layer(std::move(name)) {}

  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    if (const InferStatus status = CheckTwoOperands(inputs, outputs);
        status != InferStatus::kInferSuccess) {
      return status;
    }
    const size_t batch = outputs.size();
    for (size_t n = 0; n < batch; ++n) {
      const ftensor& x = *inputs[n];
      const ftensor& w = *inputs[batch + n];
      if (w.raw_shapes().size() != 2 || x.cols() != w.cols()) {
        return InferStatus::kInferFailedShapeError;
      }
      std::vector<uint32_t> shape = x.raw_shapes();
      shape.back() = w.rows();
      EnsureOutput(outputs[n], shape);
      // A channel of x is (rows x in_features): rows of features, as in PyTorch.
      for (uint32_t c = 0; c < x.channels(); ++c) {
        outputs[n]->slice(c) = x.slice(c) * w.slice(0).t();
      }
    }
    return InferStatus::kInferSuccess;
  }
};

std::unique_ptr<Layer> CreateFunctionalLinear(const RuntimeOperator& op) {
  if (op.input_operands.size() != 2) {
    throw LayerError(
        fmt::format("operator '{}' ({}): needs 2 inputs (input, weight), has {}; "
                    "a bias operand is not supported",
                    op.name, op.type, op.input_operands.size()));
  }
  return std::make_unique<FunctionalLinearLayer>(op.name);
}

const LayerRegistererWrapper kFunctionalLinearRegistration({"F.linear"}, CreateFunctionalLinear);

}  // namespace
}  // namespace kuiper

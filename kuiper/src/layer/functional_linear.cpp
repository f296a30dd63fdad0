// F.linear with the weight as a second operand: y = x W^T on the last
// dimension, W (out_features, in_features) computed by the graph rather than
// stored (the ONNX importer's dense for a MatMul whose B is not a constant).
#include "two_operand_common.hpp"

namespace kuiper {
namespace {

class FunctionalLinearLayer : public TwoOperandLayer {
 public:
  using TwoOperandLayer::TwoOperandLayer;

 protected:
  InferStatus ForwardItem(const ftensor& x, const ftensor& w, sftensor& output) const override {
    if (w.raw_shapes().size() != 2 || x.cols() != w.cols()) {
      return InferStatus::kInferFailedShapeError;
    }
    std::vector<uint32_t> shape = x.raw_shapes();
    shape.back() = w.rows();
    EnsureOutput(output, shape);
    // A channel of x is (rows x in_features): rows of features, as in PyTorch.
    for (uint32_t c = 0; c < x.channels(); ++c) output->slice(c) = x.slice(c) * w.slice(0).t();
    return InferStatus::kInferSuccess;
  }
};

std::unique_ptr<Layer> CreateFunctionalLinear(const RuntimeOperator& op) {
  RequireTwoOperands(op, "input, weight; a bias operand is not supported");
  return std::make_unique<FunctionalLinearLayer>(op.name);
}

const LayerRegistererWrapper kFunctionalLinearRegistration({"F.linear"}, CreateFunctionalLinear);

}  // namespace
}  // namespace kuiper

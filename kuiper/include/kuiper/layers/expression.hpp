// pnnx.Expression: an element-wise expression of the operator's inputs,
// such as add(mul(@0,@1),@2); see kuiper/expression.hpp.
#pragma once

#include <string>
#include <vector>

#include "kuiper/expression.hpp"
#include "kuiper/layer.hpp"
#include "kuiper/layers/activation.hpp"

namespace kuiper {

class ExpressionLayer : public Layer {
 public:
  // Parses `expr` now, so a malformed one fails when the graph is built:
  // throws ParseError. input_count is the number of the operator's inputs.
  ExpressionLayer(std::string expr, int input_count);

  // inputs hold input_count operands of outputs.size() items each, one
  // operand after another. Reports kInferFailedInputEmpty /
  // kInferFailedOutputEmpty for nothing to read or write,
  // kInferFailedBatchMatchError when inputs do not split into input_count
  // equal batches, kInferFailedInputOutSizeMatchError when that batch is not
  // outputs.size(), and kInferFailedShapeError when shapes do not broadcast.
  InferStatus Forward(const std::vector<sftensor>& inputs, std::vector<sftensor>& outputs) override;

  // Applies `activation` to the result from now on (RuntimeGraph::Build fuses
  // the ReLU after a residual add into the add). Only one activation.
  bool FuseActivation(Activation activation) override;

  const std::vector<const TokenNode*>& reverse_polish() const { return rpn_; }

 private:
  ExpressionParser parser_;
  int input_count_;
  std::vector<const TokenNode*> rpn_;
  Activation activation_ = Activation::kNone;
};

}  // namespace kuiper

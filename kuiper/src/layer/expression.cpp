#include "kuiper/layers/expression.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "kuiper/layers/elementwise.hpp"

namespace kuiper {

ExpressionLayer::ExpressionLayer(std::string expr, int input_count)
    : Layer("Expression"), parser_(std::move(expr), input_count), input_count_(input_count) {
  rpn_ = parser_.ReversePolish();
}

InferStatus ExpressionLayer::Forward(const std::vector<sftensor>& inputs,
                                     std::vector<sftensor>& outputs) {
  if (const InferStatus status =
          CheckOperands(inputs, outputs, static_cast<size_t>(std::max(input_count_, 0)), 1);
      status != InferStatus::kInferSuccess) {
    return status;
  }
  const size_t batch = inputs.size() / input_count_;
  std::vector<std::vector<sftensor>> operands;
  for (int k = 0; k < input_count_; ++k) {
    operands.emplace_back(inputs.begin() + k * batch, inputs.begin() + (k + 1) * batch);
  }
  std::vector<sftensor> results;
  try {
    results = EvaluateReversePolish(rpn_, operands, batch, &outputs);  // into planned outputs
  } catch (const ShapeError&) {
    return InferStatus::kInferFailedShapeError;
  }
  // A bare @N or number is not computed, only passed on: copy it, so the
  // output never shares storage with an input.
  const bool passed_on = rpn_.size() == 1;
  for (size_t i = 0; i < batch; ++i) {
    outputs[i] = passed_on ? TensorClone(results[i]) : std::move(results[i]);
    if (activation_ != Activation::kNone) {
      AddBiasAndActivate(outputs[i]->raw_ptr(), outputs[i]->size(), 0.f, activation_);
    }
  }
  return InferStatus::kInferSuccess;
}

bool ExpressionLayer::FuseActivation(Activation activation) {
  if (activation == Activation::kNone || activation_ != Activation::kNone) return false;
  activation_ = activation;
  return true;
}

namespace {

std::unique_ptr<Layer> CreateExpression(const RuntimeOperator& op) {
  const std::string expr = op.param<std::string>("expr");
  try {
    return std::make_unique<ExpressionLayer>(expr, static_cast<int>(op.input_operands.size()));
  } catch (const ParseError& e) {
    throw ParseError(fmt::format("operator '{}' ({}): {}", op.name, op.type, e.what()));
  }
}

LayerRegistererWrapper kExpressionRegistration({"pnnx.Expression"}, CreateExpression);

}  // namespace
}  // namespace kuiper

// The base of the layers that combine two operands item by item (torch.matmul,
// F.linear): inputs arrive as {A0..An-1, B0..Bn-1} and item n of the output is
// computed from A_n and B_n alone.
#pragma once

#include <fmt/format.h>

#include <string>
#include <vector>

#include "kuiper/error.hpp"
#include "kuiper/layer.hpp"
#include "kuiper/layers/elementwise.hpp"

namespace kuiper {

class TwoOperandLayer : public Layer {
 public:
  using Layer::Layer;

  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    if (const InferStatus status = CheckOperands(inputs, outputs, 2, 1);
        status != InferStatus::kInferSuccess) {
      return status;
    }
    const size_t batch = outputs.size();
    for (size_t n = 0; n < batch; ++n) {
      const InferStatus status = ForwardItem(*inputs[n], *inputs[batch + n], outputs[n]);
      if (status != InferStatus::kInferSuccess) return status;
    }
    return InferStatus::kInferSuccess;
  }

 protected:
  // Computes one output item from a and b into `output` (allocated with
  // EnsureOutput), or reports kInferFailedShapeError when their shapes do not fit.
  virtual InferStatus ForwardItem(const ftensor& a, const ftensor& b, sftensor& output) const = 0;
};

// Creation check: the operator must have exactly the two operands `operands`
// names (e.g. "A, B"); throws LayerError naming the operator otherwise.
inline void RequireTwoOperands(const RuntimeOperator& op, const std::string& operands) {
  if (op.input_operands.size() != 2) {
    throw LayerError(fmt::format("operator '{}' ({}): needs 2 inputs ({}), has {}", op.name,
                                 op.type, operands, op.input_operands.size()));
  }
}

}  // namespace kuiper

// Input checks shared by the layers that combine two operands item by item
// (torch.matmul, F.linear): inputs arrive as {A0..An-1, B0..Bn-1}.
#pragma once

#include <vector>

#include "kuiper/layer.hpp"

namespace kuiper {

inline InferStatus CheckTwoOperands(const std::vector<sftensor>& inputs,
                                    const std::vector<sftensor>& outputs) {
  if (inputs.empty()) return InferStatus::kInferFailedInputEmpty;
  if (outputs.empty()) return InferStatus::kInferFailedOutputEmpty;
  if (inputs.size() % 2 != 0) return InferStatus::kInferFailedBatchMatchError;
  if (inputs.size() / 2 != outputs.size()) return InferStatus::kInferFailedInputOutSizeMatchError;
  for (const sftensor& input : inputs) {
    if (!input || input->empty()) return InferStatus::kInferFailedInputEmpty;
  }
  return InferStatus::kInferSuccess;
}

}  // namespace kuiper

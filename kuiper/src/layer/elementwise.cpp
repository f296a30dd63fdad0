#include "kuiper/layers/elementwise.hpp"

namespace kuiper {

InferStatus CheckOperands(const std::vector<sftensor>& inputs, const std::vector<sftensor>& outputs,
                          size_t input_operands, size_t output_operands) {
  if (inputs.empty()) return InferStatus::kInferFailedInputEmpty;
  if (outputs.empty()) return InferStatus::kInferFailedOutputEmpty;
  if (input_operands == 0 || inputs.size() % input_operands != 0) {
    return InferStatus::kInferFailedBatchMatchError;
  }
  if (outputs.size() != inputs.size() / input_operands * output_operands) {
    return InferStatus::kInferFailedInputOutSizeMatchError;
  }
  for (const sftensor& input : inputs) {
    if (!input || input->empty()) return InferStatus::kInferFailedInputEmpty;
  }
  return InferStatus::kInferSuccess;
}

InferStatus CheckOneToOne(const std::vector<sftensor>& inputs,
                          const std::vector<sftensor>& outputs) {
  return CheckOperands(inputs, outputs, 1, 1);
}

InferStatus ElementwiseLayer::Forward(const std::vector<sftensor>& inputs,
                                      std::vector<sftensor>& outputs) {
  const InferStatus status = CheckOneToOne(inputs, outputs);
  if (status != InferStatus::kInferSuccess) return status;
  const int batch = static_cast<int>(inputs.size());
  // Allocation touches shared_ptr slots only; done before the parallel loop.
  for (int i = 0; i < batch; ++i) EnsureOutput(outputs[i], inputs[i]->raw_shapes());
  if (batch == 1) {
    // Not a loop of one item: inside a loop's body, MapElements would run on
    // one thread.
    Apply(*inputs[0], *outputs[0]);
    return InferStatus::kInferSuccess;
  }
  ParallelForEach(batch, [&](int64_t i) { Apply(*inputs[i], *outputs[i]); });
  return InferStatus::kInferSuccess;
}

}  // namespace kuiper

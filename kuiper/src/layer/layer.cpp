#include "kuiper/layer.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

#include "kuiper/error.hpp"

namespace kuiper {

const char* InferStatusName(InferStatus status) {
  switch (status) {
    case InferStatus::kInferSuccess:
      return "success";
    case InferStatus::kInferFailedInputEmpty:
      return "input is empty";
    case InferStatus::kInferFailedOutputEmpty:
      return "output is empty";
    case InferStatus::kInferFailedInputOutSizeMatchError:
      return "input and output batch sizes differ";
    case InferStatus::kInferFailedBatchMatchError:
      return "inputs have different batch sizes";
    case InferStatus::kInferFailedChannelParameterError:
      return "channels do not match the layer's parameters";
    case InferStatus::kInferFailedShapeError:
      return "input shape does not fit the layer's parameters";
  }
  return "unknown status";
}

InferStatus Layer::Forward() {
  if (runtime_operator_ == nullptr) {
    throw LayerError(fmt::format("layer '{}' has no operator: set_runtime_operator was not called",
                                 layer_name_));
  }
  std::vector<sftensor> inputs;
  for (const RuntimeOperand* operand : runtime_operator_->input_operands) {
    inputs.insert(inputs.end(), operand->datas.begin(), operand->datas.end());
  }
  const std::vector<RuntimeOperand*>& operands = runtime_operator_->output_operands;
  if (operands.empty()) {
    throw LayerError(fmt::format("operator '{}' ({}) has no output operand to run into",
                                 runtime_operator_->name, runtime_operator_->type));
  }
  // One output: the layer writes straight into the operand's slots.
  if (operands.size() == 1) return Forward(inputs, operands[0]->datas);
  // Several: their slots one operand after another, like the inputs, then back.
  std::vector<sftensor> outputs;
  for (const RuntimeOperand* operand : operands) {
    outputs.insert(outputs.end(), operand->datas.begin(), operand->datas.end());
  }
  const InferStatus status = Forward(inputs, outputs);
  if (status != InferStatus::kInferSuccess) return status;
  size_t next = 0;
  for (RuntimeOperand* operand : operands) {
    if (outputs.size() < next + operand->datas.size()) {
      return InferStatus::kInferFailedOutputEmpty;  // the layer dropped slots
    }
    std::copy(outputs.begin() + next, outputs.begin() + next + operand->datas.size(),
              operand->datas.begin());
    next += operand->datas.size();
  }
  return next == outputs.size() ? status : InferStatus::kInferFailedInputOutSizeMatchError;
}

void EnsureOutput(sftensor& slot, const std::vector<uint32_t>& shapes) {
  if (!slot || slot->raw_shapes() != shapes) slot = TensorCreate(shapes);
}

namespace {

// A function-local static, so registrations from other files' static
// initialisers never run before the map exists.
std::map<std::string, LayerCreator>& Registry() {
  static std::map<std::string, LayerCreator> registry;
  return registry;
}

}  // namespace

void LayerRegisterer::RegisterCreator(const std::string& type, LayerCreator creator) {
  // Registrations run before main, where a throw ends the program with its
  // message: a broken registration is found at the first start, never later.
  if (!creator) throw LayerError(fmt::format("layer type '{}': the creator is empty", type));
  if (!Registry().emplace(type, std::move(creator)).second) {
    throw LayerError(fmt::format("layer type '{}' is registered twice", type));
  }
}

std::unique_ptr<Layer> LayerRegisterer::CreateLayer(const RuntimeOperator& op) {
  const auto it = Registry().find(op.type);
  if (it == Registry().end()) {
    throw LayerError(
        fmt::format("operator '{}': no layer is registered for type '{}'", op.name, op.type));
  }
  return it->second(op);
}

bool LayerRegisterer::HasCreator(const std::string& type) { return Registry().count(type) != 0; }

}  // namespace kuiper

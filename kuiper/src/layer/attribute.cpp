// pnnx.Attribute: a constant tensor (attribute `data`) with no input, and
// torch.tensor, the same written as a parameter (below). Every
// batch item gets the same tensor, shared: layers never modify their inputs.
// Its item shape is the output operand's shape without the batch when that
// has as many elements (our ONNX importer writes it so); otherwise, as in
// PNNX's own files where the operand is the bare attribute shape, it is the
// attribute's shape without leading 1s, at most kMaxTensorRank dimensions.
#include <fmt/format.h>

#include <numeric>

#include "kuiper/error.hpp"
#include "kuiper/graph.hpp"
#include "kuiper/layer.hpp"

namespace kuiper {
namespace {

class AttributeLayer : public Layer {
 public:
  AttributeLayer(std::string name, sftensor value)
      : Layer(std::move(name)), value_(std::move(value)) {}

  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    if (!inputs.empty()) return InferStatus::kInferFailedInputOutSizeMatchError;
    if (outputs.empty()) return InferStatus::kInferFailedOutputEmpty;
    for (sftensor& output : outputs) output = value_;
    return InferStatus::kInferSuccess;
  }

 private:
  sftensor value_;
};

// The item shape of a constant of `count` values declared `declared` (the
// data's own shape): the output operand's shape without the batch when it
// holds as many values, else `declared` without leading 1s.
std::vector<uint32_t> ConstantItemShape(const RuntimeOperator& op, const std::vector<int>& declared,
                                        size_t count) {
  std::vector<uint32_t> shape;
  if (op.output_operand) {
    try {
      shape = BatchItemShape(op.output_operand->shapes);
    } catch (const ShapeError&) {
      shape.clear();
    }
  }
  const auto elements = [](const std::vector<uint32_t>& s) {
    return std::accumulate(s.begin(), s.end(), uint64_t{1}, std::multiplies<>());
  };
  if (shape.empty() || elements(shape) != count) {
    shape.assign(declared.begin(), declared.end());
    while (shape.size() > 1 && shape.front() == 1) shape.erase(shape.begin());
    if (shape.empty()) shape = {1};
  }
  if (shape.size() > kMaxTensorRank || elements(shape) != count || count == 0) {
    throw LayerError(
        fmt::format("operator '{}' ({}): data of shape {} is not a batch item of 1 to {} "
                    "dimensions",
                    op.name, op.type, ShapeText(declared), kMaxTensorRank));
  }
  return shape;
}

std::unique_ptr<Layer> CreateAttribute(const RuntimeOperator& op) {
  const RuntimeAttribute& attr = op.attr("data");
  const std::vector<float> data = attr.ToFloat();
  sftensor value = TensorCreate(ConstantItemShape(op, attr.shape, data.size()));
  value->Fill(data, /*row_major=*/true);
  return std::make_unique<AttributeLayer>(op.name, std::move(value));
}

// torch.tensor(data): a constant written as the parameter `data` (a number or
// a list of numbers, as pnnx writes a traced Python constant), shaped like a
// pnnx.Attribute of that many values.
std::unique_ptr<Layer> CreateTensorConstant(const RuntimeOperator& op) {
  if (!op.input_operands.empty()) {
    throw LayerError(
        fmt::format("operator '{}' ({}): has {} inputs; only the constant form "
                    "torch.tensor(data=...) is supported",
                    op.name, op.type, op.input_operands.size()));
  }
  std::vector<float> data;
  std::vector<int> declared;  // a number has shape (), a list (n)
  const auto it = op.params.find("data");
  const auto* floats =
      it == op.params.end() ? nullptr : std::get_if<std::vector<float>>(&it->second);
  const auto* ints = it == op.params.end() ? nullptr : std::get_if<std::vector<int>>(&it->second);
  if (floats || ints) {
    data = floats ? *floats : std::vector<float>(ints->begin(), ints->end());
    declared = {static_cast<int>(data.size())};
  } else {
    data = {op.param<float>("data")};  // LayerError naming the operator if not a number
  }
  sftensor value = TensorCreate(ConstantItemShape(op, declared, data.size()));
  value->Fill(data, /*row_major=*/true);
  return std::make_unique<AttributeLayer>(op.name, std::move(value));
}

const LayerRegistererWrapper kAttributeRegistration({"pnnx.Attribute"}, CreateAttribute);
const LayerRegistererWrapper kTensorConstantRegistration({"torch.tensor"}, CreateTensorConstant);

}  // namespace
}  // namespace kuiper

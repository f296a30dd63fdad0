// pnnx.Attribute: a constant tensor (attribute `data`) with no input. Every
// batch item gets the same tensor, shared: layers never modify their inputs.
// Its item shape is the output operand's shape without the batch when that
// has as many elements (our ONNX importer writes it so); otherwise, as in
// PNNX's own files where the operand is the bare attribute shape, it is the
// attribute's shape without leading 1s, at most three dimensions.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <numeric>

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

std::unique_ptr<Layer> CreateAttribute(const RuntimeOperator& op) {
  const RuntimeAttribute& attr = op.attr("data");
  const std::vector<float> data = attr.ToFloat();
  std::vector<uint32_t> shape;
  if (op.output_operand) {
    try {
      shape = BatchItemShape(op.output_operand->shapes);
    } catch (const ShapeError&) {
      shape.clear();
    }
  }
  const auto count = [](const std::vector<uint32_t>& s) {
    return std::accumulate(s.begin(), s.end(), uint64_t{1}, std::multiplies<>());
  };
  if (shape.empty() || count(shape) != data.size()) {
    shape.assign(attr.shape.begin(), attr.shape.end());
    while (shape.size() > 1 && shape.front() == 1) shape.erase(shape.begin());
    if (shape.empty()) shape = {1};
  }
  if (shape.size() > 3 || count(shape) != data.size() || data.empty()) {
    throw LayerError(
        fmt::format("operator '{}' ({}): data of shape ({}) is not a 1-D, 2-D or "
                    "3-D batch item",
                    op.name, op.type, fmt::join(attr.shape, ",")));
  }
  sftensor value = TensorCreate(shape);
  value->Fill(data, /*row_major=*/true);
  return std::make_unique<AttributeLayer>(op.name, std::move(value));
}

const LayerRegistererWrapper kAttributeRegistration({"pnnx.Attribute"}, CreateAttribute);

}  // namespace
}  // namespace kuiper

// Tensor.slice: the elements start, start+step, ... (< end) of dimension `dim`,
// counted with the batch as 0 (negative counts from the end, as in PyTorch),
// as PNNX writes x[:, a:b:s]. The ONNX importer emits it for Slice. start and
// end must lie within the dimension (the importer clamps them), step > 0.
#include <fmt/format.h>

#include "item_axis.hpp"
#include "kuiper/layers/elementwise.hpp"

namespace kuiper {
namespace {

class SliceLayer : public Layer {
 public:
  SliceLayer(int dim, int start, int end, int step)
      : Layer("Slice"), dim_(dim), start_(start), end_(end), step_(step) {}

  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    const InferStatus status = CheckOneToOne(inputs, outputs);
    if (status != InferStatus::kInferSuccess) return status;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const std::vector<uint32_t>& raw = inputs[i]->raw_shapes();
      const int rank = static_cast<int>(raw.size());
      const int dim = dim_ < 0 ? dim_ + rank + 1 : dim_;
      if (dim < 1 || dim > rank) return InferStatus::kInferFailedShapeError;
      if (start_ < 0 || end_ > static_cast<int>(raw[dim - 1]) || start_ >= end_) {
        return InferStatus::kInferFailedShapeError;
      }
      std::vector<uint32_t> shape = raw;
      shape[dim - 1] = static_cast<uint32_t>((end_ - start_ + step_ - 1) / step_);
      EnsureOutput(outputs[i], shape);
      CopyAlongAxis(LocateAxis(raw, dim - 1), inputs[i]->data(), raw[dim - 1], start_, step_,
                    outputs[i]->data(), shape[dim - 1], 0, shape[dim - 1]);
    }
    return InferStatus::kInferSuccess;
  }

 private:
  int dim_, start_, end_, step_;
};

std::unique_ptr<Layer> CreateSlice(const RuntimeOperator& op) {
  const int dim = op.param<int>("dim"), start = op.param<int>("start");
  const int end = op.param<int>("end"), step = op.param<int>("step");
  const auto fail = [&](const std::string& why) {
    return LayerError(fmt::format("operator '{}' ({}): {}", op.name, op.type, why));
  };
  if (dim == 0) throw fail("dim=0 would slice the batch");
  if (step < 1) throw fail(fmt::format("step={} must be positive", step));
  if (start < 0 || end <= start) {
    throw fail(fmt::format("start={} end={} must satisfy 0 <= start < end", start, end));
  }
  return std::make_unique<SliceLayer>(dim, start, end, step);
}

LayerRegistererWrapper kSliceRegistration({"Tensor.slice"}, CreateSlice);

}  // namespace
}  // namespace kuiper

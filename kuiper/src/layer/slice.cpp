// Tensor.slice: the elements start, start+step, ... (< end) of dimension `dim`,
// counted with the batch as 0 (negative counts from the end, as in PyTorch),
// as PNNX writes x[:, a:b:s]. The ONNX importer emits it for Slice. start and
// end must lie within the dimension (the importer clamps them), step > 0.
#include <fmt/format.h>

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
      // The 3-D view {channels, rows, cols}: a 1-D item is {1, 1, n}, a 2-D one {1, rows, cols}.
      const int axis = dim - 1 + (3 - rank);
      const ftensor& in = *inputs[i];
      ftensor& out = *outputs[i];
      const uint32_t channels = out.channels(), rows = out.rows(), cols = out.cols();
      for (uint32_t c = 0; c < channels; ++c) {
        for (uint32_t r = 0; r < rows; ++r) {
          for (uint32_t k = 0; k < cols; ++k) {
            const uint32_t index[3] = {c, r, k};
            uint32_t from[3] = {c, r, k};
            from[axis] = static_cast<uint32_t>(start_) + index[axis] * static_cast<uint32_t>(step_);
            out.at(c, r, k) = in.at(from[0], from[1], from[2]);
          }
        }
      }
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

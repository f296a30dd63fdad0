// nn.Softmax / F.softmax along `dim` (counted with the batch as dimension 0):
// y = e^(x - max) / sum e^(x - max). Subtracting the maximum keeps e^ from
// overflowing and does not change the result.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kuiper/layers/elementwise.hpp"

namespace kuiper {
namespace {

class SoftmaxLayer : public Layer {
 public:
  explicit SoftmaxLayer(int dim) : Layer("Softmax"), dim_(dim) {}

  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    const InferStatus status = CheckOneToOne(inputs, outputs);
    if (status != InferStatus::kInferSuccess) return status;
    std::vector<int> axes;
    for (const sftensor& input : inputs) {
      const int rank = static_cast<int>(input->raw_shapes().size());
      const int dim = dim_ < 0 ? dim_ + rank + 1 : dim_;
      if (dim < 1 || dim > rank) return InferStatus::kInferFailedShapeError;
      axes.push_back(dim - 1 + (3 - rank));  // in the 3-D view {channels, rows, cols}
    }
    for (size_t i = 0; i < inputs.size(); ++i) EnsureOutput(outputs[i], inputs[i]->raw_shapes());
#pragma omp parallel for
    for (int i = 0; i < static_cast<int>(inputs.size()); ++i) {
      Softmax(*inputs[i], axes[i], *outputs[i]);
    }
    return InferStatus::kInferSuccess;
  }

 private:
  // Softmax of every line of `input` along `axis` of the 3-D view.
  static void Softmax(const ftensor& input, int axis, ftensor& output) {
    const uint32_t rows = input.rows(), cols = input.cols(), channels = input.channels();
    // Storage is channel by channel, each column-major: (r, c, ch) is at
    // r + c * rows + ch * rows * cols.
    const uint32_t extents[3] = {channels, rows, cols};
    const uint32_t strides[3] = {rows * cols, 1, rows};
    const uint32_t length = extents[axis], stride = strides[axis];
    const float* x = input.raw_ptr();
    float* y = output.raw_ptr();
    // Visit the first element of every line: the axis' own loop runs once.
    for (uint32_t ch = 0; ch < (axis == 0 ? 1 : channels); ++ch) {
      for (uint32_t c = 0; c < (axis == 2 ? 1 : cols); ++c) {
        for (uint32_t r = 0; r < (axis == 1 ? 1 : rows); ++r) {
          const uint32_t base = r + c * rows + ch * rows * cols;
          float max = x[base];
          for (uint32_t k = 1; k < length; ++k) max = std::max(max, x[base + k * stride]);
          float sum = 0;
          for (uint32_t k = 0; k < length; ++k) {
            const float e = std::exp(x[base + k * stride] - max);
            y[base + k * stride] = e;
            sum += e;
          }
          for (uint32_t k = 0; k < length; ++k) y[base + k * stride] /= sum;
        }
      }
    }
  }

  int dim_;
};

std::unique_ptr<Layer> CreateSoftmax(const RuntimeOperator& op) {
  const int dim = op.param<int>("dim");
  if (dim == 0) {
    throw LayerError(
        fmt::format("operator '{}' ({}): dim=0 would mix the items of a batch", op.name, op.type));
  }
  return std::make_unique<SoftmaxLayer>(dim);
}

LayerRegistererWrapper kSoftmaxRegistration({"nn.Softmax", "F.softmax"}, CreateSoftmax);

}  // namespace
}  // namespace kuiper

// nn.Softmax / F.softmax along `dim` (counted with the batch as dimension 0):
// y = e^(x - max) / sum e^(x - max). Subtracting the maximum keeps e^ from
// overflowing and does not change the result.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "item_axis.hpp"
#include "kuiper/layers/elementwise.hpp"
#include "kuiper/parallel.hpp"

namespace kuiper {
namespace {

class SoftmaxLayer : public Layer {
 public:
  explicit SoftmaxLayer(int dim) : Layer("Softmax"), dim_(dim) {}

  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    const InferStatus status = CheckOneToOne(inputs, outputs);
    if (status != InferStatus::kInferSuccess) return status;
    std::vector<ItemAxis> axes;
    for (const sftensor& input : inputs) {
      const int rank = static_cast<int>(input->raw_shapes().size());
      const int dim = dim_ < 0 ? dim_ + rank + 1 : dim_;
      if (dim < 1 || dim > rank) return InferStatus::kInferFailedShapeError;
      axes.push_back(LocateAxis(input->raw_shapes(), dim - 1));
    }
    for (size_t i = 0; i < inputs.size(); ++i) EnsureOutput(outputs[i], inputs[i]->raw_shapes());
    ParallelForEach(static_cast<int64_t>(inputs.size()),
                    [&](int64_t i) { Softmax(*inputs[i], axes[i], *outputs[i]); });
    return InferStatus::kInferSuccess;
  }

 private:
  // Softmax of every line of `input` along `axis` (item_axis.hpp).
  static void Softmax(const ftensor& input, const ItemAxis& axis, ftensor& output) {
    // In storage (rows fastest, then cols, then channels) the axis' index of
    // element e is (e / stride) % length: every dimension stored faster than
    // it spans `stride` elements together.
    const uint64_t plane = uint64_t{input.rows()} * input.cols();
    uint64_t stride = 1, length = input.rows();
    if (axis.where == ItemAxis::Where::kCols) {
      stride = input.rows();
      length = input.cols();
    } else if (axis.where == ItemAxis::Where::kChannels) {
      stride = plane * axis.inner;
      length = input.channels() / (axis.outer * axis.inner);
    }
    const float* x = input.raw_ptr();
    float* y = output.raw_ptr();
    // The first element of every line: index 0 along the axis.
    for (uint64_t block = 0; block < input.size(); block += stride * length) {
      for (uint64_t base = block; base < block + stride; ++base) {
        float max = x[base];
        for (uint64_t k = 1; k < length; ++k) max = std::max(max, x[base + k * stride]);
        float sum = 0;
        for (uint64_t k = 0; k < length; ++k) {
          const float e = std::exp(x[base + k * stride] - max);
          y[base + k * stride] = e;
          sum += e;
        }
        for (uint64_t k = 0; k < length; ++k) y[base + k * stride] /= sum;
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

// nn.AdaptiveAvgPool2d and F.adaptive_avg_pool2d: output cell i averages the
// input over [floor(i * in / out), ceil((i + 1) * in / out)), as PyTorch does.
#include <fmt/format.h>

#include "conv_pool_common.hpp"
#include "kuiper/error.hpp"
#include "kuiper/parallel.hpp"

namespace kuiper {
namespace {

class AdaptiveAvgPoolingLayer : public Layer {
 public:
  AdaptiveAvgPoolingLayer(std::string name, std::array<uint32_t, 2> output_size)
      : Layer(std::move(name)), output_size_(output_size) {}

  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    if (const InferStatus status = CheckOneOperand(inputs, outputs);
        status != InferStatus::kInferSuccess) {
      return status;
    }
    // Plain variables, not a structured binding: clang before 16 (the fuzz
    // preset's clang-14) cannot use bindings inside the OpenMP region below.
    const uint32_t out_h = output_size_[0], out_w = output_size_[1];
    for (size_t n = 0; n < inputs.size(); ++n) {
      const ftensor& input = *inputs[n];
      if (input.raw_shapes().size() != 3) return InferStatus::kInferFailedShapeError;
      EnsureOutput(outputs[n], {input.channels(), out_h, out_w});
      ftensor& output = *outputs[n];
      const uint64_t in_h = input.rows(), in_w = input.cols();
      ParallelFor(input.channels(), [&](int64_t c) {
        for (uint64_t ox = 0; ox < out_w; ++ox) {
          const uint64_t x0 = ox * in_w / out_w, x1 = ((ox + 1) * in_w + out_w - 1) / out_w;
          for (uint64_t oy = 0; oy < out_h; ++oy) {
            const uint64_t y0 = oy * in_h / out_h, y1 = ((oy + 1) * in_h + out_h - 1) / out_h;
            const float sum = arma::accu(input.slice(c).submat(y0, x0, y1 - 1, x1 - 1));
            output.at(c, oy, ox) = sum / static_cast<float>((y1 - y0) * (x1 - x0));
          }
        }
      });
    }
    return InferStatus::kInferSuccess;
  }

 private:
  std::array<uint32_t, 2> output_size_;
};

std::unique_ptr<Layer> CreateAdaptiveAvgPooling(const RuntimeOperator& op) {
  return std::make_unique<AdaptiveAvgPoolingLayer>(op.name, ReadPair(op, "output_size", 1));
}

const LayerRegistererWrapper kAdaptiveAvgPoolingRegistration({"nn.AdaptiveAvgPool2d",
                                                              "F.adaptive_avg_pool2d"},
                                                             CreateAdaptiveAvgPooling);

}  // namespace
}  // namespace kuiper

// nn.BatchNorm2d in inference form: per channel c,
//   y = (x - running_mean[c]) / sqrt(running_var[c] + eps) * weight[c] + bias[c],
// folded once into y = x * scale[c] + shift[c].
#include <fmt/format.h>

#include <cmath>

#include "conv_pool_common.hpp"
#include "kuiper/error.hpp"

namespace kuiper {
namespace {

class BatchNormLayer : public Layer {
 public:
  BatchNormLayer(std::string name, std::vector<float> scale, std::vector<float> shift)
      : Layer(std::move(name)), scale_(std::move(scale)), shift_(std::move(shift)) {}

  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    if (const InferStatus status = CheckOneOperand(inputs, outputs);
        status != InferStatus::kInferSuccess) {
      return status;
    }
    for (size_t n = 0; n < inputs.size(); ++n) {
      const ftensor& input = *inputs[n];
      if (input.raw_shapes().size() != 3) return InferStatus::kInferFailedShapeError;
      if (input.channels() != scale_.size()) {
        return InferStatus::kInferFailedChannelParameterError;
      }
      EnsureOutput(outputs[n], input.raw_shapes());
      for (uint32_t c = 0; c < input.channels(); ++c) {
        outputs[n]->slice(c) = input.slice(c) * scale_[c] + shift_[c];
      }
    }
    return InferStatus::kInferSuccess;
  }

 private:
  std::vector<float> scale_, shift_;
};

std::unique_ptr<Layer> CreateBatchNorm(const RuntimeOperator& op) {
  const int features = op.param<int>("num_features");
  const float eps = op.param<float>("eps");
  const bool affine = op.has_param("affine") ? op.param<bool>("affine") : true;
  if (features <= 0 || !(eps >= 0)) {
    throw LayerError(
        fmt::format("operator '{}' ({}): num_features={} must be positive and "
                    "eps={} not negative",
                    op.name, op.type, features, eps));
  }
  const auto per_channel = [&](const std::string& key) {
    const RuntimeAttribute& attr = op.attr(key);
    if (attr.shape != std::vector<int>{features}) {
      throw LayerError(fmt::format("operator '{}' ({}): {} has shape {}, expected ({})", op.name,
                                   op.type, key, ShapeText(attr.shape), features));
    }
    return attr.ToFloat();
  };
  const std::vector<float> mean = per_channel("running_mean");
  const std::vector<float> var = per_channel("running_var");
  std::vector<float> weight(features, 1.f), bias(features, 0.f);
  if (affine) {
    weight = per_channel("weight");
    bias = per_channel("bias");
  }
  std::vector<float> scale(features), shift(features);
  for (int c = 0; c < features; ++c) {
    scale[c] = weight[c] / std::sqrt(var[c] + eps);
    shift[c] = bias[c] - mean[c] * scale[c];
  }
  return std::make_unique<BatchNormLayer>(op.name, std::move(scale), std::move(shift));
}

const LayerRegistererWrapper kBatchNormRegistration({"nn.BatchNorm2d"}, CreateBatchNorm);

}  // namespace
}  // namespace kuiper

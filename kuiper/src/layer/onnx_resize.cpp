// kuiper.Resize: ONNX's Resize / Upsample on (N, C, H, W), as the ONNX
// importer emits it. Unlike nn.Upsample it names its coordinate mapping and
// nearest rounding, because ONNX's defaults are neither of PyTorch's:
//   mode             nearest | bilinear | bicubic
//   cubic_coeff_a    (bicubic, optional) the kernel's a, default -0.75
//   exclude_outside  (bicubic, optional) taps outside the input weigh 0
//   coordinate_mode  half_pixel | align_corners | asymmetric | pytorch_half_pixel |
//                    tf_half_pixel_for_nn
//   nearest_mode     floor | ceil | round_prefer_floor | round_prefer_ceil
//   size             (h,w) of the output
//   scale            (h,w) output pixels per input pixel, as ONNX's scales
#include <fmt/format.h>

#include <cmath>
#include <map>

#include "kuiper/layers/elementwise.hpp"
#include "kuiper/layers/resize.hpp"
#include "kuiper/parallel.hpp"

namespace kuiper {
namespace {

class OnnxResizeLayer : public Layer {
 public:
  OnnxResizeLayer(std::string name, ResizeMode mode, CoordinateMode coordinates,
                  NearestRounding rounding, std::vector<int> size, std::vector<float> scale,
                  CubicOptions cubic)
      : Layer(std::move(name)),
        mode_(mode),
        coordinates_(coordinates),
        rounding_(rounding),
        size_(std::move(size)),
        scale_(std::move(scale)),
        cubic_(cubic) {}

  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    const InferStatus status = CheckOneToOne(inputs, outputs);
    if (status != InferStatus::kInferSuccess) return status;
    for (const sftensor& input : inputs) {
      if (input->raw_shapes().size() != 3) return InferStatus::kInferFailedShapeError;
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      EnsureOutput(outputs[i], {inputs[i]->channels(), static_cast<uint32_t>(size_[0]),
                                static_cast<uint32_t>(size_[1])});
    }
    const auto resize = [&](size_t i) {
      Resize(*inputs[i], *outputs[i], mode_, coordinates_, 1.f / scale_[0], 1.f / scale_[1],
             rounding_, cubic_);
    };
    // As in nn.Upsample: one item shares its channels out in Resize.
    if (inputs.size() == 1) {
      resize(0);
      return InferStatus::kInferSuccess;
    }
    ParallelForEach(static_cast<int64_t>(inputs.size()), resize);
    return InferStatus::kInferSuccess;
  }

 private:
  ResizeMode mode_;
  CoordinateMode coordinates_;
  NearestRounding rounding_;
  std::vector<int> size_;
  std::vector<float> scale_;
  CubicOptions cubic_;
};

template <typename T>
T Lookup(const RuntimeOperator& op, const std::string& key, const std::map<std::string, T>& names) {
  const std::string value = op.param<std::string>(key);
  const auto it = names.find(value);
  if (it == names.end()) {
    throw LayerError(
        fmt::format("operator '{}' ({}): {}={} is not supported", op.name, op.type, key, value));
  }
  return it->second;
}

std::unique_ptr<Layer> CreateOnnxResize(const RuntimeOperator& op) {
  const ResizeMode mode = Lookup<ResizeMode>(op, "mode",
                                             {{"nearest", ResizeMode::kNearest},
                                              {"bilinear", ResizeMode::kBilinear},
                                              {"bicubic", ResizeMode::kBicubic}});
  const CoordinateMode coordinates =
      Lookup<CoordinateMode>(op, "coordinate_mode",
                             {{"half_pixel", CoordinateMode::kHalfPixel},
                              {"align_corners", CoordinateMode::kAlignCorners},
                              {"asymmetric", CoordinateMode::kAsymmetric},
                              {"pytorch_half_pixel", CoordinateMode::kPytorchHalfPixel},
                              {"tf_half_pixel_for_nn", CoordinateMode::kTfHalfPixelForNn}});
  const NearestRounding rounding =
      Lookup<NearestRounding>(op, "nearest_mode",
                              {{"floor", NearestRounding::kFloor},
                               {"ceil", NearestRounding::kCeil},
                               {"round_prefer_floor", NearestRounding::kRoundPreferFloor},
                               {"round_prefer_ceil", NearestRounding::kRoundPreferCeil}});
  const std::vector<int> size = op.param<std::vector<int>>("size");
  std::vector<float> scale;
  const RuntimeParameter& p = op.params.count("scale") ? op.params.at("scale") : RuntimeParameter{};
  if (const auto* v = std::get_if<std::vector<float>>(&p)) scale = *v;
  if (const auto* v = std::get_if<std::vector<int>>(&p)) scale.assign(v->begin(), v->end());
  if (size.size() != 2 || size[0] <= 0 || size[1] <= 0 || scale.size() != 2 || !(scale[0] > 0) ||
      !(scale[1] > 0)) {
    throw LayerError(
        fmt::format("operator '{}' ({}): size (h,w) must be positive integers and "
                    "scale (h,w) positive numbers",
                    op.name, op.type));
  }
  CubicOptions cubic;
  if (op.has_param("cubic_coeff_a")) cubic.a = op.param<float>("cubic_coeff_a");
  if (op.has_param("exclude_outside")) cubic.exclude_outside = op.param<bool>("exclude_outside");
  if (!std::isfinite(cubic.a)) {
    throw LayerError(
        fmt::format("operator '{}' ({}): cubic_coeff_a must be finite", op.name, op.type));
  }
  return std::make_unique<OnnxResizeLayer>(op.name, mode, coordinates, rounding, size, scale,
                                           cubic);
}

const LayerRegistererWrapper kOnnxResizeRegistration({"kuiper.Resize"}, CreateOnnxResize);

}  // namespace
}  // namespace kuiper

// nn.Upsample / F.interpolate on (N, C, H, W): modes nearest and bilinear,
// the output size given by `size` or by `scale_factor` (floor(in * scale)).
#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "kuiper/layers/elementwise.hpp"
#include "kuiper/layers/resize.hpp"
#include "kuiper/parallel.hpp"

namespace kuiper {
namespace {

class UpsampleLayer : public Layer {
 public:
  // Exactly one of `size` ({h, w}) and `scale` ({h, w}) is set.
  UpsampleLayer(ResizeMode mode, CoordinateMode coordinates,
                std::optional<std::vector<uint32_t>> size, std::optional<std::vector<float>> scale,
                bool recompute_scale)
      : Layer("Upsample"),
        mode_(mode),
        coordinates_(coordinates),
        size_(std::move(size)),
        scale_(std::move(scale)),
        recompute_scale_(recompute_scale) {}

  InferStatus Forward(const std::vector<sftensor>& inputs,
                      std::vector<sftensor>& outputs) override {
    const InferStatus status = CheckOneToOne(inputs, outputs);
    if (status != InferStatus::kInferSuccess) return status;
    for (const sftensor& input : inputs) {
      if (input->raw_shapes().size() != 3) return InferStatus::kInferFailedShapeError;
    }
    for (size_t i = 0; i < inputs.size(); ++i) {
      const uint32_t out_h = OutSize(inputs[i]->rows(), 0);
      const uint32_t out_w = OutSize(inputs[i]->cols(), 1);
      if (out_h == 0 || out_w == 0) return InferStatus::kInferFailedShapeError;
      EnsureOutput(outputs[i], {inputs[i]->channels(), out_h, out_w});
    }
    const auto resize = [&](size_t i) {
      const ftensor& input = *inputs[i];
      Resize(input, *outputs[i], mode_, coordinates_, Scale(input.rows(), outputs[i]->rows(), 0),
             Scale(input.cols(), outputs[i]->cols(), 1));
    };
    // A single item shares its channels out in Resize; several go one per
    // thread. (A parallel loop of one item would make Resize's loop a nested
    // team of new threads.)
    if (inputs.size() == 1) {
      resize(0);
      return InferStatus::kInferSuccess;
    }
    ParallelForEach(static_cast<int64_t>(inputs.size()), resize);
    return InferStatus::kInferSuccess;
  }

 private:
  uint32_t OutSize(uint32_t in, int axis) const {
    if (size_) return (*size_)[axis];
    return static_cast<uint32_t>(std::floor(static_cast<double>(in) * (*scale_)[axis]));
  }

  // Input pixels per output pixel. Like PyTorch, a given scale factor is used
  // as it is (unless recompute_scale_factor), not recomputed from the sizes.
  float Scale(uint32_t in, uint32_t out, int axis) const {
    if (scale_ && !recompute_scale_) return 1.f / (*scale_)[axis];
    return static_cast<float>(in) / static_cast<float>(out);
  }

  ResizeMode mode_;
  CoordinateMode coordinates_;
  std::optional<std::vector<uint32_t>> size_;
  std::optional<std::vector<float>> scale_;
  bool recompute_scale_;
};

bool IsNone(const RuntimeOperator& op, const std::string& key) {
  return !op.has_param(key) || std::holds_alternative<std::monostate>(op.params.at(key));
}

std::unique_ptr<Layer> CreateUpsample(const RuntimeOperator& op) {
  const auto fail = [&](const std::string& why) {
    return LayerError(fmt::format("operator '{}' ({}): {}", op.name, op.type, why));
  };
  const std::string mode_name = op.param<std::string>("mode");
  const bool align_corners = !IsNone(op, "align_corners") && op.param<bool>("align_corners");
  const bool recompute =
      !IsNone(op, "recompute_scale_factor") && op.param<bool>("recompute_scale_factor");
  ResizeMode mode;
  CoordinateMode coordinates;
  if (mode_name == "nearest") {
    if (align_corners) throw fail("mode=nearest does not take align_corners=True");
    mode = ResizeMode::kNearest;
    coordinates = CoordinateMode::kAsymmetric;
  } else if (mode_name == "bilinear") {
    mode = ResizeMode::kBilinear;
    coordinates = align_corners ? CoordinateMode::kAlignCorners : CoordinateMode::kHalfPixel;
  } else {
    throw fail(fmt::format("mode={} is not supported (nearest, bilinear)", mode_name));
  }

  std::optional<std::vector<uint32_t>> size;
  std::optional<std::vector<float>> scale;
  if (!IsNone(op, "size")) {
    const RuntimeParameter& p = op.params.at("size");
    std::vector<int> values;
    if (const auto* v = std::get_if<std::vector<int>>(&p)) values = *v;
    if (const auto* v = std::get_if<int>(&p)) values = {*v, *v};
    if (values.size() != 2 || values[0] <= 0 || values[1] <= 0) {
      throw fail("size must be two positive integers (h,w) or one");
    }
    size =
        std::vector<uint32_t>{static_cast<uint32_t>(values[0]), static_cast<uint32_t>(values[1])};
  }
  if (!IsNone(op, "scale_factor")) {
    const RuntimeParameter& p = op.params.at("scale_factor");
    std::vector<float> values;
    if (const auto* v = std::get_if<std::vector<float>>(&p)) values = *v;
    if (const auto* v = std::get_if<std::vector<int>>(&p)) values.assign(v->begin(), v->end());
    if (const auto* v = std::get_if<float>(&p)) values = {*v, *v};
    if (const auto* v = std::get_if<int>(&p)) values = {float(*v), float(*v)};
    if (values.size() != 2 || !(values[0] > 0) || !(values[1] > 0)) {
      throw fail("scale_factor must be two positive numbers (h,w) or one");
    }
    scale = values;
  }
  if (size.has_value() == scale.has_value()) {
    throw fail("exactly one of size and scale_factor must be given");
  }
  return std::make_unique<UpsampleLayer>(mode, coordinates, std::move(size), std::move(scale),
                                         recompute);
}

// F.upsample: F.interpolate's deprecated name, same arguments. The real pnnx
// (on libtorch 1.13) writes it for a traced F.interpolate(scale_factor=...,
// mode="bilinear"), e.g. tools/export_onnx_zoo.py's UNet.
LayerRegistererWrapper kUpsampleRegistration({"nn.Upsample", "F.interpolate", "F.upsample"},
                                             CreateUpsample);

}  // namespace
}  // namespace kuiper

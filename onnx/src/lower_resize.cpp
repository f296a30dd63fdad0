// Upsample and Resize onto the engine's kuiper.Resize (nearest, bilinear,
// bicubic; every coordinate mapping of ONNX but tf_crop_and_resize).
#include <fmt/ranges.h>

#include <cmath>
#include <limits>
#include <set>

#include "lowering_registry.hpp"

namespace kuiper::onnx_import {
namespace {

void EmitResize(Context& ctx, const onnx::NodeProto& node, const std::string& mode,
                const std::string& coordinate_mode, const std::string& nearest_mode, float scale_h,
                float scale_w, bool sizes_given, int64_t size_h, int64_t size_w) {
  static const std::set<std::string> coordinate_modes = {
      "half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn"};
  static const std::set<std::string> nearest_modes = {"floor", "ceil", "round_prefer_floor",
                                                      "round_prefer_ceil"};
  if (!coordinate_modes.count(coordinate_mode)) {
    ctx.Fail(node, fmt::format("coordinate_transformation_mode={} is not supported ({})",
                               coordinate_mode, fmt::join(coordinate_modes, ", ")));
  }
  if (mode == "nearest" && !nearest_modes.count(nearest_mode)) {
    ctx.Fail(node, fmt::format("nearest_mode={} is not supported", nearest_mode));
  }
  const Shape& x = ctx.ShapeOf(node, node.input(0));
  if (x.size() != 4) ctx.Fail(node, fmt::format("input {} is not 4-D (N,C,H,W)", ShapeText(x)));
  if (!(scale_h > 0) || !(scale_w > 0)) ctx.Fail(node, "scales must be positive");
  if (!sizes_given) {
    const double h = std::floor(static_cast<double>(x[2]) * scale_h);
    const double w = std::floor(static_cast<double>(x[3]) * scale_w);
    // Engine dims are int; a huge scale (or inf times a zero dim, NaN) gives no size at all.
    constexpr double kLargest = std::numeric_limits<int>::max();
    if (!(std::fabs(h) <= kLargest && std::fabs(w) <= kLargest)) {
      ctx.Fail(node, fmt::format("scales ({}, {}) on input {} give a size beyond {}", scale_h,
                                 scale_w, ShapeText(x), std::numeric_limits<int>::max()));
    }
    size_h = static_cast<int64_t>(h);
    size_w = static_cast<int64_t>(w);
  }
  const Shape resized = {x[0], x[1], size_h, size_w};
  const Shape& y = ctx.ShapeOf(node, node.output(0));
  if (resized != y) {
    ctx.Fail(node, fmt::format("the resized shape {} differs from the node's output shape {} "
                               "(scales on N or C are not supported)",
                               ShapeText(resized), ShapeText(y)));
  }
  // ONNX's align_corners divides by the unrounded resized length in·scale, not
  // by the output size: x_in = x_out·(in-1)/(in·scale-1). With scales given
  // that is the asymmetric mapping for the scale (in·scale-1)/(in-1)
  // (conformance: test_resize_downsample_scales_linear_align_corners).
  std::string coordinates = coordinate_mode;
  if (coordinate_mode == "align_corners" && !sizes_given) {
    const auto corner_scale = [](int64_t in, float scale) {
      const double resized = static_cast<double>(in) * scale;
      // One input pixel or one output pixel: every index maps to 0 anyway.
      return in > 1 && resized > 1 ? static_cast<float>((resized - 1) / (in - 1)) : 1.f;
    };
    coordinates = "asymmetric";
    scale_h = corner_scale(x[2], scale_h);
    scale_w = corner_scale(x[3], scale_w);
  }
  pnnx::Operator& op = ctx.EmitUnary(node, "kuiper.Resize");
  op.params["mode"] = StringParam(mode);
  op.params["coordinate_mode"] = StringParam(coordinates);
  op.params["nearest_mode"] = StringParam(nearest_mode);
  op.params["size"] = IntsParam({static_cast<int>(size_h), static_cast<int>(size_w)});
  op.params["scale"] = FloatsParam({scale_h, scale_w});
  if (mode == "bicubic") {
    const float a = ctx.FloatAttributeChecked(node, "cubic_coeff_a", -0.75f);
    if (!std::isfinite(a)) ctx.Fail(node, "cubic_coeff_a must be finite");
    op.params["cubic_coeff_a"] = FloatParam(a);
    op.params["exclude_outside"] = BoolParam(AttributeInt(node, "exclude_outside", 0) != 0);
  }
}

void LowerUpsample(Context& ctx, const onnx::NodeProto& node) {
  // Upsample-7 keeps its scales in an attribute; from opset 9 they are input 1.
  const onnx::AttributeProto* scales_attr = FindAttribute(node, "scales");
  const int expected = scales_attr ? 1 : 2;
  if (node.input_size() != expected) {
    ctx.Fail(node, fmt::format("Upsample needs {} input(s) ({}), has {}", expected,
                               scales_attr ? "X; scales as an attribute" : "X, scales",
                               node.input_size()));
  }
  const std::string mode = AttributeString(node, "mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "bilinear") {
    ctx.Fail(node, fmt::format("mode={} is not supported (nearest, linear)", mode));
  }
  const size_t rank = ctx.ShapeOf(node, node.input(0)).size();
  if (rank == 5) ctx.Fail(node, "a 5-D input (volumetric upsampling) is not supported");
  std::vector<float> scales;
  if (scales_attr) {
    scales.assign(scales_attr->floats().begin(), scales_attr->floats().end());
  } else {
    scales = OnnxTensorFloats(ctx.RequireConstant(node, 1));
  }
  if (scales.size() != rank) {
    ctx.Fail(node, fmt::format("has {} scales for a {}-D input", scales.size(), rank));
  }
  // ONNX's Upsample maps x_in = x_out / scale: the asymmetric mapping, floored.
  EmitResize(ctx, node, mode == "nearest" ? "nearest" : "bilinear", "asymmetric", "floor",
             scales.size() > 2 ? scales[2] : 1.f, scales.size() > 3 ? scales[3] : 1.f, false, 0, 0);
}

void LowerResize(Context& ctx, const onnx::NodeProto& node) {
  const std::string onnx_mode = AttributeString(node, "mode", "nearest");
  if (onnx_mode != "nearest" && onnx_mode != "linear" && onnx_mode != "cubic") {
    ctx.Fail(node, fmt::format("mode={} is not supported (nearest, linear, cubic)", onnx_mode));
  }
  const std::string mode = onnx_mode == "nearest"  ? "nearest"
                           : onnx_mode == "linear" ? "bilinear"
                                                   : "bicubic";
  const size_t rank = ctx.ShapeOf(node, node.input(0)).size();
  if (rank == 5) ctx.Fail(node, "a 5-D input (volumetric resize) is not supported");
  if (ctx.opset() < 11) {  // Resize-10: (X, scales) with Upsample's mapping
    if (node.input_size() != 2)
      ctx.Fail(node, fmt::format("needs 2 inputs, has {}", node.input_size()));
    const std::vector<float> scales = OnnxTensorFloats(ctx.RequireConstant(node, 1));
    if (scales.size() != 4) ctx.Fail(node, fmt::format("needs 4 scales, has {}", scales.size()));
    EmitResize(ctx, node, mode, "asymmetric", "floor", scales[2], scales[3], false, 0, 0);
    return;
  }
  if (FindAttribute(node, "axes") || FindAttribute(node, "antialias")) {
    ctx.Fail(node, "the axes and antialias attributes are not supported");
  }
  const std::string coordinates =
      AttributeString(node, "coordinate_transformation_mode", "half_pixel");
  const std::string nearest = AttributeString(node, "nearest_mode", "round_prefer_floor");
  // Inputs: X, roi, scales, sizes; an empty name marks an absent one, and an
  // empty scales tensor means "use sizes".
  std::vector<float> scales;
  if (ctx.HasInput(node, 2)) scales = OnnxTensorFloats(ctx.RequireConstant(node, 2));
  if (!scales.empty()) {
    if (scales.size() != 4) ctx.Fail(node, fmt::format("needs 4 scales, has {}", scales.size()));
    EmitResize(ctx, node, mode, coordinates, nearest, scales[2], scales[3], false, 0, 0);
    return;
  }
  if (!ctx.HasInput(node, 3)) ctx.Fail(node, "has neither scales nor sizes");
  const std::vector<int64_t> sizes = OnnxTensorInts(ctx.RequireConstant(node, 3));
  const Shape& x = ctx.ShapeOf(node, node.input(0));
  if (sizes.size() != 4 || x.size() != 4) ctx.Fail(node, "needs 4 sizes for a 4-D input");
  if (sizes[0] != x[0] || sizes[1] != x[1]) ctx.Fail(node, "resizes N or C, not only H and W");
  // With sizes, the coordinate mapping uses scale = out / in.
  EmitResize(ctx, node, mode, coordinates, nearest,
             static_cast<float>(sizes[2]) / static_cast<float>(x[2]),
             static_cast<float>(sizes[3]) / static_cast<float>(x[3]), true, sizes[2], sizes[3]);
}

}  // namespace

KUIPER_ONNX_LOWERING_CONSTANTS(LowerUpsample, ConstantInputs({1}),
                               "4-D input; scales constant, on H and W only", "Upsample");
// Resize-10's scales are input 1; from opset 11 roi, scales and sizes are 1..3.
KUIPER_ONNX_LOWERING_CONSTANTS(
    LowerResize, ConstantInputs({1, 2, 3}),
    "4-D input; scales or sizes constant, on H and W only; no axes, antialias", "Resize");

}  // namespace kuiper::onnx_import

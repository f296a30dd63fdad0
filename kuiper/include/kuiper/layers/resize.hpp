// Image resizing shared by nn.Upsample / F.interpolate and ONNX's Resize
// (onnx_resize.cpp): each output pixel is mapped back to a coordinate in the
// input and sampled there, by nearest neighbour, bilinearly or bicubically (ONNX's cubic).
#pragma once

#include <cstdint>

#include "kuiper/tensor.hpp"

namespace kuiper {

enum class ResizeMode { kNearest, kBilinear, kBicubic };

// ONNX's cubic mode: the four input pixels floor(x)-1 .. floor(x)+2 around
// the coordinate x, weighted by the cubic convolution kernel of parameter `a`
// (ONNX's cubic_coeff_a; -0.75 is PyTorch's bicubic, -0.5 Keys' original);
// indices outside the input read its edge pixel, or, with `exclude_outside`,
// get weight 0 and the other weights are scaled to add up to 1.
struct CubicOptions {
  float a = -0.75f;
  bool exclude_outside = false;
};

// How an output index maps to an input coordinate (the names are ONNX's
// coordinate_transformation_mode). `scale` is input pixels per output pixel.
enum class CoordinateMode {
  kHalfPixel,         // (dst + 0.5) * scale - 0.5: PyTorch's align_corners=False
  kAlignCorners,      // dst * (in - 1) / (out - 1): corner pixels map to corner pixels
  kAsymmetric,        // dst * scale: PyTorch's nearest
  kPytorchHalfPixel,  // ONNX: half-pixel, but 0 when the output has one pixel
  kTfHalfPixelForNn,  // ONNX: (dst + 0.5) * scale, TensorFlow's nearest (no -0.5)
};

// How nearest mode turns a coordinate into an index (ONNX's nearest_mode);
// PyTorch's nearest floors.
enum class NearestRounding { kFloor, kCeil, kRoundPreferFloor, kRoundPreferCeil };

// The input coordinate sampled for output index `dst` along one axis.
float SourceCoordinate(CoordinateMode mode, uint32_t dst, float scale, uint32_t in_size,
                       uint32_t out_size);

// Resizes every channel of the 3-D `input` into `output`, which already has
// the target rows and cols and input's channels. scale_h and scale_w are input
// pixels per output pixel (PyTorch: 1 / scale_factor when a scale factor is
// given, else in / out); kAlignCorners ignores them. Nearest takes the floor
// of the coordinate (or rounds it as `rounding` says); bilinear clamps it into the input and blends
// the four neighbours, as PyTorch does.
// Bicubic samples the coordinate unclamped, as ONNX does (`cubic`).
void Resize(const ftensor& input, ftensor& output, ResizeMode mode, CoordinateMode coordinates,
            float scale_h, float scale_w, NearestRounding rounding = NearestRounding::kFloor,
            CubicOptions cubic = {});

}  // namespace kuiper

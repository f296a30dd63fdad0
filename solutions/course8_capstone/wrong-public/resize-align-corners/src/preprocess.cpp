// Lab course8_capstone, part 1: the classifier's pre-processing (torchvision's
// ToTensor, Resize, Normalize). See course8_capstone/README.md.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "kuiper/error.hpp"
#include "kuiper/vision.hpp"

namespace kuiper {

sftensor ImageToChw(const std::vector<uint8_t>& hwc, uint32_t rows, uint32_t cols,
                    PixelOrder order) {
  // TODO(course8): the layout change HWC -> CHW. Byte (y, x, k) of the image sits at
  // hwc[(y * cols + x) * 3 + k]; plane c of the output is red, green, blue, whichever
  // byte k holds it (`order`), divided by 255. Refuse an empty image or a buffer of the
  // wrong size with ShapeError (README "From bytes to a tensor").
  // ---- your code begins ----
  if (rows == 0 || cols == 0 || hwc.size() != static_cast<size_t>(rows) * cols * 3) {
    throw ShapeError(fmt::format("an image of {}x{} pixels needs {} bytes, got {}", cols, rows,
                                 static_cast<size_t>(rows) * cols * 3, hwc.size()));
  }
  sftensor out = TensorCreate(3, rows, cols);
  for (uint32_t c = 0; c < 3; ++c) {
    const uint32_t k = order == PixelOrder::kRgb ? c : 2 - c;  // BGR keeps red last
    arma::fmat& plane = out->slice(c);
    for (uint32_t y = 0; y < rows; ++y) {
      for (uint32_t x = 0; x < cols; ++x) {
        plane(y, x) = hwc[(static_cast<size_t>(y) * cols + x) * 3 + k] / 255.f;
      }
    }
  }
  return out;
  // ---- your code ends ----
}

sftensor ResizeBilinear(const Tensor<float>& chw, uint32_t rows, uint32_t cols) {
  // TODO(course8): bilinear resize of every channel with half-pixel centres: output
  // pixel x samples the input at (x + 0.5) * in / out - 0.5, clamped to the image, and
  // mixes its two neighbours by the fractional part; likewise for y (README "Bilinear
  // resize"). Refuse a 0 target size with ShapeError.
  // ---- your code begins ----
  if (rows == 0 || cols == 0) {
    throw ShapeError(fmt::format("cannot resize to {}x{}", cols, rows));
  }
  // For one axis: the two source indices and the weight of the second one.
  struct Tap {
    uint32_t lo, hi;
    float w;
  };
  auto taps = [](uint32_t in, uint32_t out) {
    std::vector<Tap> t(out);
    for (uint32_t i = 0; i < out; ++i) {
      // In double, rounded to float once, as OpenCV does: the pixels the classifier was
      // trained on (models/shapes.py) come from cv2.resize.
      const auto src =
          static_cast<float>(out > 1 ? static_cast<double>(i) * (in - 1) / (out - 1) : 0.0);
      const auto lo = std::min(static_cast<uint32_t>(src), in - 1);
      t[i] = {lo, std::min(lo + 1, in - 1), lo + 1 < in ? src - static_cast<float>(lo) : 0.f};
    }
    return t;
  };
  const std::vector<Tap> ty = taps(chw.rows(), rows), tx = taps(chw.cols(), cols);
  sftensor out = TensorCreate(chw.channels(), rows, cols);
  for (uint32_t c = 0; c < chw.channels(); ++c) {
    const arma::fmat& in = chw.slice(c);
    arma::fmat& plane = out->slice(c);
    for (uint32_t y = 0; y < rows; ++y) {
      for (uint32_t x = 0; x < cols; ++x) {
        const Tap& a = ty[y];
        const Tap& b = tx[x];
        const float top = in(a.lo, b.lo) * (1 - b.w) + in(a.lo, b.hi) * b.w;
        const float bottom = in(a.hi, b.lo) * (1 - b.w) + in(a.hi, b.hi) * b.w;
        plane(y, x) = top * (1 - a.w) + bottom * a.w;
      }
    }
  }
  return out;
  // ---- your code ends ----
}

void Normalize(Tensor<float>& chw, const std::array<float, 3>& mean,
               const std::array<float, 3>& stddev) {
  // TODO(course8): channel c becomes (x - mean[c]) / stddev[c]; a tensor without 3
  // channels is a ShapeError (README "Normalisation").
  // ---- your code begins ----
  if (chw.channels() != 3) {
    throw ShapeError(fmt::format("normalising needs 3 channels, got {}", chw.channels()));
  }
  for (uint32_t c = 0; c < 3; ++c) chw.slice(c) = (chw.slice(c) - mean[c]) / stddev[c];
  // ---- your code ends ----
}

}  // namespace kuiper

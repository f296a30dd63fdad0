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
  KUIPER_TODO("course8", "ImageToChw");
  // ---- your code ends ----
}

sftensor ResizeBilinear(const Tensor<float>& chw, uint32_t rows, uint32_t cols) {
  // TODO(course8): bilinear resize of every channel with half-pixel centres: output
  // pixel x samples the input at (x + 0.5) * in / out - 0.5, clamped to the image, and
  // mixes its two neighbours by the fractional part; likewise for y (README "Bilinear
  // resize"). Refuse a 0 target size with ShapeError.
  // ---- your code begins ----
  KUIPER_TODO("course8", "ResizeBilinear");
  // ---- your code ends ----
}

void Normalize(Tensor<float>& chw, const std::array<float, 3>& mean,
               const std::array<float, 3>& stddev) {
  // TODO(course8): channel c becomes (x - mean[c]) / stddev[c]; a tensor without 3
  // channels is a ShapeError (README "Normalisation").
  // ---- your code begins ----
  KUIPER_TODO("course8", "Normalize");
  // ---- your code ends ----
}

}  // namespace kuiper

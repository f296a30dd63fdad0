// Stretch task of course2_padding (optional, label course2_stretch): padding
// that mirrors the border instead of filling a constant. See
// course2_padding/README.md §10.
#include <fmt/format.h>

#include "kuiper/error.hpp"
#include "kuiper/tensor.hpp"

namespace kuiper::stretch {

// Pads every channel of `input` by pads = {top, bottom, left, right} as
// torch.nn.functional.pad(mode="reflect") does: the new rows and columns
// mirror the tensor around its first and last row/column, which are not
// repeated. Returns a 3-D tensor {channels, rows + top + bottom, cols + left +
// right}. Throws ShapeError when pads does not hold 4 values, the tensor is
// empty, or a pad is not smaller than the size it mirrors (top and bottom
// must be < rows, left and right < cols).
ftensor PadReflect(const ftensor& input, const std::vector<uint32_t>& pads);

ftensor PadReflect(const ftensor& input, const std::vector<uint32_t>& pads) {
  // TODO(course2 stretch): README §10 derives where each new element is read
  // from (a reflection of the row and of the column index) and why a pad must
  // be smaller than the size it mirrors.
  // ---- your code begins ----
  if (pads.size() != 4) {
    throw ShapeError(fmt::format("PadReflect: expected 4 pads {{top, bottom, left, right}}, got {}",
                                 pads.size()));
  }
  if (input.empty()) throw ShapeError("PadReflect: the tensor is empty");
  const uint32_t top = pads[0], bottom = pads[1], left = pads[2], right = pads[3];
  const uint32_t rows = input.rows(), cols = input.cols();
  if (top >= rows || bottom >= rows || left >= cols || right >= cols) {
    throw ShapeError(
        fmt::format("PadReflect: pads {{{}, {}, {}, {}}} on {}x{} channels; reflect padding needs "
                    "top, bottom < rows and left, right < cols",
                    top, bottom, left, right, rows, cols));
  }
  // Index i of the padded axis reads index Reflect(i - pad) of the input:
  // -1 -> 1, -2 -> 2, ..., n -> n - 2, n + 1 -> n - 3.
  const auto reflect = [](int64_t i, int64_t n) -> uint32_t {
    if (i < 0) return static_cast<uint32_t>(-i);
    if (i >= n) return static_cast<uint32_t>(2 * (n - 1) - i);
    return static_cast<uint32_t>(i);
  };
  ftensor output(input.channels(), rows + top + bottom, cols + left + right);
  for (uint32_t c = 0; c < output.channels(); ++c) {
    for (uint32_t k = 0; k < output.cols(); ++k) {
      const uint32_t source_col = reflect(int64_t(k) - left, cols);
      for (uint32_t r = 0; r < output.rows(); ++r) {
        output.at(c, r, k) = input.at(c, reflect(int64_t(r) - top, rows), source_col);
      }
    }
  }
  return output;
  // ---- your code ends ----
}

}  // namespace kuiper::stretch
